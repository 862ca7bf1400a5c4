"""An N-link pendulum chain from URDF: µs per step and compile time against N for VPRK Lobatto-2
and -3 (cay, h = 0.01 up to 16 links and 0.01 · 16/N beyond), with the fitted exponents, and beside it the same URDF in pinocchio's
forward dynamics integrated by scipy's DOP853 (the wall time to reach liemech's joint-angle error
at T = 10, and the ratio).

Each link is a uniform rod (mass 1, length 0.5) on a hinge along x; the chain starts bent
(q_i = 0.3 (−1)^i) at rest. Compile time is the first call (tracing, compiling, the problem's
setup), with the disk cache of compiled code turned off; µs per step the median of three runs of 200 steps. Rows are measured one after another
in one process (this machine's speed drifts: compare within a row).

Run: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_multibody.py [N ...]
"""

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# No disk cache: with a warm one the "compile" column would time reading executables back (and
# the tracing, which grows with N) instead of compiling them.
os.environ["LIEMECH_CACHE_DIR"] = ""

import numpy as np  # noqa: E402
from numpy.typing import NDArray  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

import liemech as lm  # noqa: E402
from timing import exponent, step_times  # noqa: E402
from liemech.multibody import Model, from_urdf  # noqa: E402

STEPS, CALLS, T_PEER = 200, 3, 10.0


def step_size(n: int) -> float:
    """h = 0.01 up to 16 links, then 0.01 · 16/N: from 32 links on, the lowest links whip too fast
    for h = 0.01 (Newton finds no root there, even with a Jacobian at every iterate)."""
    return 0.01 * min(1.0, 16 / n)

PEER_sizes = (4, 8, 16, 32)


def chain_urdf(n: int) -> str:
    """The URDF of n rods hanging from hinges along x."""
    links = ["<link name='base'/>"]
    joints = []
    for i in range(n):
        links.append(f"<link name='rod{i}'><inertial><origin xyz='0 0 -0.25'/><mass value='1'/>"
                     f"<inertia ixx='0.0208333' iyy='0.0208333' izz='0.001' ixy='0' ixz='0' iyz='0'/></inertial></link>")
        parent = "base" if i == 0 else f"rod{i - 1}"
        z = 0.0 if i == 0 else -0.5
        # revolute, not continuous: pinocchio gives a continuous joint two positions (cos, sin)
        joints.append(f"<joint name='hinge{i}' type='revolute'><parent link='{parent}'/><child link='rod{i}'/>"
                      f"<origin xyz='0 0 {z}'/><axis xyz='1 0 0'/>"
                      f"<limit lower='-10' upper='10' effort='0' velocity='0'/></joint>")
    return f"<robot name='chain{n}'>{''.join(links)}{''.join(joints)}</robot>"


def initial(n: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    return np.where(np.arange(n) % 2 == 0, 0.3, -0.3), np.zeros(n)


def measure(model: Model, s: int) -> tuple[float, float]:
    """(compile time in s, median µs per step) of Lobatto-s."""
    started = time.perf_counter()
    problem = model.problem(*initial(len(model.joint_names)))
    setup = time.perf_counter() - started
    compiled, per_step = step_times(problem, lm.VPRK(lm.lobatto(s)), step_size(len(model.joint_names)), STEPS, CALLS)
    return setup + compiled, per_step


def peer(path: Path, model: Model) -> tuple[float, float, float]:
    """(liemech Lobatto-2 error at T = 10, its wall time, pinocchio + DOP853's wall time to reach
    that error): the cheapest tolerance whose error is no larger."""
    import pinocchio as pin  # type: ignore[import-untyped]

    robot = pin.buildModelFromUrdf(str(path))
    data = robot.createData()
    n = robot.nq
    q0, v0 = initial(n)

    def rhs(_: float, y: NDArray[np.float64]) -> Any:
        return np.concatenate([y[n:], pin.aba(robot, data, y[:n], y[n:], np.zeros(n))])

    def dop853(rtol: float) -> tuple[NDArray[np.float64], float]:
        started = time.perf_counter()
        sol = solve_ivp(rhs, (0.0, T_PEER), np.concatenate([q0, v0]), method="DOP853", rtol=rtol, atol=rtol)
        return sol.y[:n, -1], time.perf_counter() - started

    reference = dop853(1e-13)[0]
    problem = model.problem(q0, v0)
    method = lm.VPRK(lm.lobatto(2))
    h = step_size(n)
    lm.integrate(problem, method, h=h, n_steps=1)
    started = time.perf_counter()
    sol = lm.integrate(problem, method, h=h, t_final=T_PEER)
    ours = time.perf_counter() - started
    error = float(np.max(np.abs(model.joint_positions(sol)[-1] - reference)))
    for rtol in 10.0 ** -np.arange(3, 13):
        end, wall = dop853(float(rtol))
        if np.max(np.abs(end - reference)) <= error:
            return error, ours, wall
    return error, ours, float("nan")



def main() -> None:
    sizes = [int(n) for n in sys.argv[1:]] or [4, 8, 16, 32, 64, 128]
    print(f"N-link pendulum chain from URDF, VPRK cay, h = 0.01 · min(1, 16/N), {STEPS} steps, median of {CALLS}")
    print(f"{'N':>4}{'L2 µs/step':>12}{'compile s':>11}{'L3 µs/step':>12}{'compile s':>11}"
          f"{'L2 error T=10':>15}{'liemech s':>11}{'DOP853 s':>10}{'ratio':>7}")
    rows: dict[int, list[tuple[float, float]]] = {2: [], 3: []}
    with tempfile.TemporaryDirectory() as folder:
        for n in sizes:
            path = Path(folder) / f"chain{n}.urdf"
            path.write_text(chain_urdf(n))
            model = from_urdf(path)
            for s in (2, 3):
                rows[s].append(measure(model, s))
            (c2, t2), (c3, t3) = rows[2][-1], rows[3][-1]
            line = f"{n:>4}{t2:>12.0f}{c2:>11.2f}{t3:>12.0f}{c3:>11.2f}"
            if n in PEER_sizes:
                error, ours, theirs = peer(path, model)
                line += f"{error:>15.2e}{ours:>11.3f}{theirs:>10.3f}{ours / theirs:>7.2f}"
            print(line, flush=True)
    big = [k for k, n in enumerate(sizes) if n >= 8]
    if len(big) >= 2:
        for s in (2, 3):
            cost = exponent([sizes[k] for k in big], [rows[s][k][1] for k in big])
            growth = rows[s][big[-1]][0] / rows[s][big[0]][0]
            print(f"Lobatto-{s}: cost exponent {cost:.2f} (N = {sizes[big[0]]}…{sizes[big[-1]]}), compile time "
                  f"at N = {sizes[big[-1]]} is {growth:.2f}× that at N = {sizes[big[0]]}")


if __name__ == "__main__":
    main()
