"""Per-step cost of the compiled core, its compile time, and the cost against scipy's DOP853 at the
same energy error.

Prints three tables:
1. µs per step after compilation and the compile time, for VPRK Lobatto-2/3/4 (cay and exp) on the
   heavy top given by V alone, and one method on each of the other reference problems;
2. the compile time of the heavy top (Lobatto-3, cay) in a fresh process, which reads the
   persistent compilation cache this process filled;
3. for T = 100 on the heavy top: the wall time of the best Lobatto order and of DOP853 tuned to
   the same maximum energy error, and their ratio.

Run: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_core.py
"""

import os
import subprocess
import sys
import time
from typing import TypeVar

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

import liemech as lm  # noqa: E402
from liemech.groups.so3 import exp_matrix  # noqa: E402
from liemech.systems import (  # noqa: E402
    BallOnTurntable,
    ChaoticNonholonomic,
    ConstrainedHeavyTop,
    DoubleSphericalPendulum,
    FourParticles,
    HeavyTop,
    LagrangeTop,
    RollingDisc,
    VerticalDisc,
)

P = TypeVar("P")
TOP = HeavyTop()
E3 = np.array([0.0, 0.0, 1.0])


def top_from_potential_alone() -> lm.Problem[lm.Matrix]:
    """The README's heavy top: the user gives 𝕀 and V = mg e₃ᵀRχ, nothing else."""
    chi, mg = TOP.chi, TOP.mg
    system = lm.MechanicalSystem(lm.SO3(), inertia=TOP.inertia, potential=lambda R: mg * jnp.dot(R[2], chi))
    return lm.Problem(system, exp_matrix(TOP.rotation0), TOP.omega0)


def damped_top() -> lm.Problem[lm.Matrix]:
    """The heavy top with the body torque F = −0.4 Ω (an external force)."""
    return lm.Problem(TOP.system(), exp_matrix(TOP.rotation0), TOP.omega0, force=lambda R, omega, t: -0.4 * omega)


def timed(problem: lm.Problem[P], method: lm.Method, h: float, n_steps: int) -> tuple[float, float]:
    """(first call in s, µs per step of a second call of the same length)."""
    started = time.perf_counter()
    lm.integrate(problem, method, h=h, n_steps=n_steps)
    first = time.perf_counter() - started
    started = time.perf_counter()
    lm.integrate(problem, method, h=h, n_steps=n_steps)
    return first, 1e6 * (time.perf_counter() - started) / n_steps


def per_step_table() -> None:
    print(f"{'problem':<34} {'method':<38} {'first call s':>12} {'µs/step':>9}")
    cases: list[tuple[str, lm.Problem[object], lm.Method, float, int]] = []
    top = top_from_potential_alone()
    for s in (2, 3, 4):
        for kind in ("cay", "exp"):
            cases.append(("heavy top, V alone", top, lm.VPRK(lm.lobatto(s), kind), 0.01, 2000))  # type: ignore[arg-type]
    cases += [
        ("holonomic heavy top, SO(3)×R³", ConstrainedHeavyTop().problem(), lm.VPRK(lm.lobatto(3)), 0.01, 2000),  # type: ignore[list-item]
        ("vertical disc (SE(2), nonholonomic)", VerticalDisc().problem(), lm.VPRK(lm.lobatto(3)), 0.01, 2000),  # type: ignore[list-item]
        ("ball on a turntable", BallOnTurntable().problem(), lm.VPRK(lm.lobatto(3)), 0.01, 2000),  # type: ignore[list-item]
        ("four particles (EM)", FourParticles().problem(), lm.GGLEnergyMomentum(), 0.01, 2000),  # type: ignore[list-item]
        ("four particles (VI-A)", FourParticles().problem(), lm.GGLThetaA(), 0.01, 2000),  # type: ignore[list-item]
        ("double spherical pendulum (DG)", DoubleSphericalPendulum().problem(), lm.DiscreteGradientMultiplier(),
         0.001, 2000),  # type: ignore[list-item]
        ("Lagrange top (Simpson)", LagrangeTop().problem(), lm.SimpsonVI(), 0.01, 2000),  # type: ignore[list-item]
        ("rolling disc (holonomic + nonholonomic)", RollingDisc().steady(0.25, 1.5).problem(),  # type: ignore[list-item]
         lm.VPRK(lm.lobatto(2)), 0.01, 2000),
        ("rolling disc (holonomic + nonholonomic)", RollingDisc().steady(0.25, 1.5).problem(),  # type: ignore[list-item]
         lm.VPRK(lm.lobatto(3)), 0.01, 2000),
        ("heavy top with a damping torque", damped_top(), lm.VPRK(lm.lobatto(3)), 0.01, 2000),  # type: ignore[list-item]
        ("chaotic nonholonomic system (R⁷)", ChaoticNonholonomic().problem(3, 10),  # type: ignore[list-item]
         lm.VPRK(lm.lobatto(2)), 0.1, 2000),
    ]
    for name, problem, method, h, n in cases:
        first, per_step = timed(problem, method, h, n)
        print(f"{name:<34} {method.name:<38} {first:12.2f} {per_step:9.1f}")


def second_process_compile() -> None:
    code = ("import time; t = time.perf_counter(); import sys; sys.path.insert(0, 'benchmarks'); "
            "import liemech as lm; from bench_core import top_from_potential_alone; "
            "p = top_from_potential_alone(); t1 = time.perf_counter(); "
            "lm.integrate(p, lm.VPRK(lm.lobatto(3)), h=0.01, n_steps=1); "
            "print(f'{t1 - t:.2f} {time.perf_counter() - t1:.2f}')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    print(f"\nfresh process, heavy top Lobatto-3 cay: import and problem {out[0]} s, "
          f"first integrate (compile from the disk cache) {out[1]} s")


def energy_error(problem: lm.Problem[lm.Matrix], R: list[lm.Matrix] | lm.Matrix, mu: lm.Matrix) -> float:
    H = np.array([TOP.energy(r, m) for r, m in zip(R, mu)])
    return float(np.max(np.abs(H - TOP.energy(problem.g0, problem.mu0))))


def against_dop853() -> None:
    T = 100.0
    problem = top_from_potential_alone()
    print(f"\nT = {T:g} on the heavy top: wall time at matched maximum energy error")
    print(f"{'method':<34} {'h or rtol':>10} {'max |ΔE|':>10} {'wall s':>8} {'DOP853 s':>9} {'ratio':>6}")
    y0 = np.concatenate([problem.g0.ravel(), problem.mu0])
    for s, h in ((2, 0.01), (3, 0.05), (4, 0.1)):
        method = lm.VPRK(lm.lobatto(s))
        n = round(T / h)
        lm.integrate(problem, method, h=h, n_steps=n)  # compile
        started = time.perf_counter()
        sol = lm.integrate(problem, method, h=h, n_steps=n)
        wall = time.perf_counter() - started
        error = energy_error(problem, sol.g, sol.mu)
        rtol = 1e-3
        while True:
            started = time.perf_counter()
            ivp = solve_ivp(TOP.rhs, (0.0, T), y0, method="DOP853", rtol=rtol, atol=rtol * 1e-2, dense_output=False)
            ivp_wall = time.perf_counter() - started
            ivp_error = energy_error(problem, [y[:9].reshape(3, 3) for y in ivp.y.T], ivp.y[9:].T)
            if ivp_error <= error or rtol < 1e-13:
                break
            rtol /= 2.0
        print(f"{method.name:<34} {h:10.3g} {error:10.2e} {wall:8.3f} {ivp_wall:9.3f} {wall / ivp_wall:6.2f}")
        print(f"{'  DOP853':<34} {rtol:10.1e} {ivp_error:10.2e}")


if __name__ == "__main__":
    per_step_table()
    second_process_compile()
    against_dop853()
