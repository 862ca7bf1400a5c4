"""liemech's implicit step against a hand-compiled kernel of the same step (issue 31, item 2).

The kernel is VPRK with the Cayley retraction on SO(3) for the heavy top ℓ(R, ω) = ½ ωᵀ𝕀ω − mg e₃ᵀRχ
(``HeavyTop``'s data, as ``bench_core.py`` times it), written out with numba ``@njit`` (plain Python, very slow, if numba is
missing; numba is a benchmark-only dependency). It solves the equations liemech solves (Martín de
Diego & Sato Martín de Almagro 2018, Theorem 6.1, eqs. (26) and (28); see ``liemech.methods.vprk``)
with the same simplified Newton: the Jacobian once per step at the starting guess, here by forward
differences (liemech: forward-mode AD), the same stopping rule (‖r‖∞ ≤ 16 eps·max(1, ‖μ_k‖∞), or a
plateau below √eps·max(1, ‖μ_k‖∞), then one last update) and the same starting guess (the
extrapolation through the last solutions, ``liemech.solvers.starting_guess``). Before any timing the script checks that the kernel's nodes agree
with liemech's over 100 steps.

Prints µs per step of liemech's Lobatto-2/3/4 with cay and exp (``lm.integrate``, 10⁴ steps after a
compile run), with a fresh Jacobian per step as the kernel has and with Newton's factors carried
from step to step (``NewtonOptions(jacobian="carried")``), and of the kernel (Lobatto-2/3/4), interleaved in rounds with medians reported, the
ratios liemech/kernel and exp/cay, Newton's mean iterations per step, and the fixed cost of one
``lm.integrate`` call (a 1-step run).

Run: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_implicit_step.py [steps] [rounds]
"""

import functools
import importlib
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any, Final, TypeVar, cast

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from numpy.typing import NDArray  # noqa: E402

import liemech as lm  # noqa: E402
from bench_core import TOP, top_from_potential_alone  # noqa: E402
from liemech.groups.so3 import exp_matrix  # noqa: E402
from liemech.solvers.newton import EPS, NewtonOptions  # noqa: E402
from liemech.solvers.starting_guess import EXTRAPOLATION  # noqa: E402

F = TypeVar("F", bound=Callable[..., Any])

COMPILER: Final = "numba" if importlib.util.find_spec("numba") is not None else "plain Python (numba missing)"


def njit(fn: F) -> F:
    """numba's ``njit(cache=True)`` of ``fn``, typed as ``fn``; ``fn`` itself without numba."""
    if importlib.util.find_spec("numba") is None:
        return fn
    return cast(F, importlib.import_module("numba").njit(cache=True)(fn))


Array = NDArray[np.float64]
H_STEP: Final = 0.01
STAGES: Final = (2, 3, 4)
RETRACTIONS: Final[tuple[lm.RetractionKind, ...]] = ("cay", "exp")
NEWTON: Final = NewtonOptions()
JACOBIANS: Final = {"": NEWTON, ", carried": NewtonOptions(jacobian="carried")}
"""liemech's runs: a fresh Jacobian per step (as the kernel), and Newton's factors carried over."""


@njit
def _cross(a: Array, b: Array, out: Array) -> None:
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit
def _cayley(xi: Array, out: Array) -> float:
    """out = cay(ξ) = I + 4/(4+θ²)(ξ̂ + ½ξ̂²); returns c = 2/(4+θ²), with dτ(ξ) = c(2I − ξ̂)."""
    s = float(xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2])
    c = 2.0 / (4.0 + s)
    # ξ̂² = ξξᵀ − θ² I
    for i in range(3):
        for j in range(3):
            out[i, j] = c * xi[i] * xi[j] + (1.0 - c * s if i == j else 0.0)
    out[0, 1] -= 2.0 * c * xi[2]
    out[1, 0] += 2.0 * c * xi[2]
    out[0, 2] += 2.0 * c * xi[1]
    out[2, 0] -= 2.0 * c * xi[1]
    out[1, 2] -= 2.0 * c * xi[0]
    out[2, 1] += 2.0 * c * xi[0]
    return c


@njit
def _residual(x: Array, g: Array, mu: Array, h: float, A: Array, b: Array, C: Array, inertia: Array,
              chi: Array, mg: float, out: Array, mu_next: Array, T_xi: Array, work: Array) -> None:
    """The residual (26) at x = (H¹..Hˢ) into ``out``, μ_{k+1} of (28) into ``mu_next`` and cay(ξ)
    into ``T_xi`` (Martín de Diego & Sato Martín de Almagro 2018, Theorem 6.1), with
    dτ(ξ)ᵀμ = c(2μ + ξ×μ), ddτ(ξ, η)ᵀΠ = −c[ξ(η·Π) + η×(Π − ½ξ×Π + ¼ξ(ξ·Π))], Ad(τ(Ξ)⁻¹)ᵀf = τ(Ξ)f,
    f = mg Γ×χ, Γ = Rᵀe₃. ``work`` is scratch of shape (9 + s, 3), so that nothing is allocated."""
    s = b.shape[0]
    Xi, Gamma, f, eta, m, Pi, w, tmp, total = work[0], work[1], work[2], work[3], work[4], work[5], work[6], work[7], work[8]
    ND, T = work[9:], T_xi  # τ(Ξⁱ) in T_xi until τ(ξ) overwrites it
    total[:] = mu  # μ_k + h Σ b_j Ad(τ(Ξʲ)⁻¹)ᵀ fʲ
    for i in range(s):
        Hi = x[3 * i: 3 * i + 3]
        for k in range(3):
            acc = 0.0
            for j in range(s):
                acc += A[i, j] * x[3 * j + k]
            Xi[k] = h * acc
        c = _cayley(Xi, T)
        for k in range(3):  # Γ = (g T)ᵀ e₃
            Gamma[k] = g[2, 0] * T[0, k] + g[2, 1] * T[1, k] + g[2, 2] * T[2, k]
        _cross(Gamma, chi, f)
        f *= mg
        _cross(Xi, Hi, tmp)
        for k in range(3):
            eta[k] = c * (2.0 * Hi[k] - tmp[k])
        for k in range(3):
            m[k] = inertia[k, 0] * eta[0] + inertia[k, 1] * eta[1] + inertia[k, 2] * eta[2]
        _cross(Xi, m, tmp)
        for k in range(3):
            Pi[k] = c * (2.0 * m[k] + tmp[k])
        xi_pi = Xi[0] * Pi[0] + Xi[1] * Pi[1] + Xi[2] * Pi[2]
        h_pi = Hi[0] * Pi[0] + Hi[1] * Pi[1] + Hi[2] * Pi[2]
        _cross(Xi, Pi, tmp)
        for k in range(3):
            w[k] = Pi[k] - 0.5 * tmp[k] + 0.25 * Xi[k] * xi_pi
        _cross(Hi, w, tmp)
        for k in range(3):
            ND[i, k] = -c * (Xi[k] * h_pi + tmp[k])
        _cross(Xi, f, w)
        for k in range(3):
            ND[i, k] += c * (2.0 * f[k] + w[k])
            total[k] += h * b[i] * (T[k, 0] * f[0] + T[k, 1] * f[1] + T[k, 2] * f[2])
            out[3 * i + k] = Pi[k]
    for k in range(3):
        acc = 0.0
        for j in range(s):
            acc += b[j] * x[3 * j + k]
        Xi[k] = h * acc
    c = _cayley(Xi, T_xi)
    for k in range(3):
        mu_next[k] = T_xi[0, k] * total[0] + T_xi[1, k] * total[1] + T_xi[2, k] * total[2]
    _cross(Xi, mu_next, tmp)
    for i in range(s):
        for k in range(3):
            acc = 0.0
            for j in range(s):
                acc += C[i, j] * ND[j, k]
            out[3 * i + k] += h * acc - c * (2.0 * mu_next[k] + tmp[k])


@njit
def _lu_factor(J: Array, pivots: NDArray[np.int64]) -> None:
    """J ← L\\U in place, partial pivoting (row swaps in ``pivots``)."""
    n = J.shape[0]
    for k in range(n):
        p = k
        for i in range(k + 1, n):
            if abs(J[i, k]) > abs(J[p, k]):
                p = i
        pivots[k] = p
        if p != k:
            for j in range(n):
                J[k, j], J[p, j] = J[p, j], J[k, j]
        for i in range(k + 1, n):
            J[i, k] /= J[k, k]
            for j in range(k + 1, n):
                J[i, j] -= J[i, k] * J[k, j]


@njit
def _lu_solve(LU: Array, pivots: NDArray[np.int64], r: Array, out: Array) -> None:
    n = LU.shape[0]
    out[:] = r
    for k in range(n):
        p = pivots[k]
        if p != k:
            out[k], out[p] = out[p], out[k]
    for i in range(n):
        for j in range(i):
            out[i] -= LU[i, j] * out[j]
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            out[i] -= LU[i, j] * out[j]
        out[i] /= LU[i, i]


@njit
def kernel_run(g0: Array, mu0: Array, eta0: Array, h: float, n_steps: int, A: Array, b: Array, C: Array,
               inertia: Array, chi: Array, mg: float, max_iterations: int, roundoff_factor: float,
               eps: float, extrapolation: Array) -> tuple[Array, Array, NDArray[np.int64]]:
    """(R_k, μ_k, Newton iterations of step k) for k = 1..n_steps: VPRK with cay, simplified Newton
    from liemech's guess (first step: Hʲ = η₀, which counts as a solution; then the extrapolation
    of degree ≤ 3 whose prediction of the last solution from the ones before it missed least at
    its worst component), Jacobian by forward differences at the guess."""
    s = b.shape[0]
    n = 3 * s
    g, mu = g0.copy(), mu0.copy()
    guess = np.empty(n)
    for i in range(s):
        guess[3 * i: 3 * i + 3] = eta0
    solutions = np.empty((4, n))  # the last four solutions, newest first
    solutions[:] = guess
    known = 1
    gs, mus = np.empty((n_steps, 3, 3)), np.empty((n_steps, 3))
    iterations = np.zeros(n_steps, np.int64)
    J, pivots = np.empty((n, n)), np.empty(n, np.int64)
    r, r_moved, dx, x = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    mu_next, T_xi, work = np.empty(3), np.empty((3, 3)), np.empty((9 + s, 3))
    for step in range(n_steps):
        scale = max(1.0, np.max(np.abs(mu)))
        roundoff, plateau = roundoff_factor * eps * scale, np.sqrt(eps) * scale
        x[:] = guess
        _residual(x, g, mu, h, A, b, C, inertia, chi, mg, r, mu_next, T_xi, work)
        for k in range(n):
            delta = np.sqrt(eps) * max(1.0, abs(x[k]))
            x[k] += delta
            _residual(x, g, mu, h, A, b, C, inertia, chi, mg, r_moved, mu_next, T_xi, work)
            x[k] = guess[k]
            for i in range(n):
                J[i, k] = (r_moved[i] - r[i]) / delta
        _lu_factor(J, pivots)
        previous = np.inf
        for iteration in range(max_iterations + 1):
            if iteration > 0:
                _residual(x, g, mu, h, A, b, C, inertia, chi, mg, r, mu_next, T_xi, work)
            norm = np.max(np.abs(r))
            _lu_solve(J, pivots, r, dx)
            x -= dx
            iterations[step] += 1
            if norm <= roundoff or (norm >= previous and norm <= plateau):
                break
            previous = norm
        _residual(x, g, mu, h, A, b, C, inertia, chi, mg, r, mu_next, T_xi, work)
        g = g @ T_xi
        mu[:] = mu_next
        gs[step], mus[step] = g, mu
        closest, degree = np.inf, 0
        for p in range(known):
            miss = 0.0
            for i in range(n):
                predicted = 0.0
                for j in range(p + 1):
                    predicted += extrapolation[p, j] * solutions[j, i]
                miss = max(miss, abs(predicted - x[i]))
            if miss < closest:
                closest, degree = miss, p
        for i in range(n):
            guess[i] = extrapolation[degree, 0] * x[i]
            for j in range(degree):
                guess[i] += extrapolation[degree, j + 1] * solutions[j, i]
        solutions[1:] = solutions[:3].copy()
        solutions[0] = x
        known = min(known + 1, 4)
    return gs, mus, iterations


def run_kernel(stages: int, n_steps: int) -> tuple[Array, Array, NDArray[np.int64]]:
    """The kernel's run of Lobatto-``stages`` from the heavy top's initial data."""
    t = lm.lobatto(stages)
    A, b = np.asarray(t.A, float), np.asarray(t.b, float)
    C = (b[None, :] * A.T) / b[:, None]  # C_ij = b_j a_ji / b_i of (26)
    return kernel_run(exp_matrix(TOP.rotation0), TOP.inertia @ TOP.omega0, np.asarray(TOP.omega0, float), H_STEP,
                      n_steps, A, b, C, np.asarray(TOP.inertia, float), np.asarray(TOP.chi, float), float(TOP.mg),
                      NEWTON.max_iterations, NEWTON.roundoff_factor, EPS, EXTRAPOLATION)


def liemech_run(problem: lm.Problem[lm.Matrix], method: lm.Method) -> Callable[[int], object]:
    """n ↦ ``lm.integrate`` of ``method`` over n steps of ``H_STEP``."""
    return lambda n: lm.integrate(problem, method, h=H_STEP, n_steps=n)


def check_kernel(problem: lm.Problem[lm.Matrix], n_steps: int = 100, tolerance: float = 1e-12) -> None:
    """Raise unless the kernel's nodes agree with liemech's to ``tolerance`` over ``n_steps``."""
    for s in STAGES:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(s), "cay"), h=H_STEP, n_steps=n_steps)
        gs, mus, _ = run_kernel(s, n_steps)
        gap = max(float(np.max(np.abs(sol.g[1:] - gs))), float(np.max(np.abs(sol.mu[1:] - mus))))
        print(f"kernel vs liemech, Lobatto-{s} cay, {n_steps} steps: max |Δ(R, μ)| = {gap:.1e}")
        if not gap <= tolerance:
            raise RuntimeError(f"the kernel's Lobatto-{s} step leaves liemech's by {gap:.1e} > {tolerance:.0e}")


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    problem = top_from_potential_alone()  # 𝕀 and V = mg e₃ᵀRχ alone, as bench_core times it
    check_kernel(problem)
    runs: dict[str, Callable[[int], object]] = {}
    iterations: dict[str, float] = {}
    for s in STAGES:
        for suffix, newton in JACOBIANS.items():
            for kind in RETRACTIONS:
                name = f"liemech L{s} {kind}{suffix}"
                runs[name] = liemech_run(problem, lm.VPRK(lm.lobatto(s), kind, newton=newton))
                iterations[name] = cast(lm.Solution[Any], runs[name](steps)).stats.mean_iterations  # compiles
        name = f"kernel L{s} cay"
        runs[name] = functools.partial(run_kernel, s)
        iterations[name] = float(np.mean(run_kernel(s, steps)[2]))  # compiles
    per_step: dict[str, list[float]] = {name: [] for name in runs}
    one_step: list[float] = []
    one_step_method = lm.VPRK(lm.lobatto(3), "cay")
    for _ in range(rounds):
        for name, run in runs.items():
            started = time.perf_counter()
            run(steps)
            per_step[name].append(1e6 * (time.perf_counter() - started) / steps)
        started = time.perf_counter()
        lm.integrate(problem, one_step_method, h=H_STEP, n_steps=1)
        one_step.append(1e6 * (time.perf_counter() - started))
    median = {name: statistics.median(times) for name, times in per_step.items()}
    print(f"\nheavy top, h = {H_STEP}, {steps} steps, median of {rounds} interleaved rounds; kernel: {COMPILER}, "
          "Jacobian by forward differences")
    print(f"{'variant':<26} {'µs/step':>8} {'/kernel':>8} {'exp/cay':>8} {'Newton it/step':>15}")
    for s in STAGES:
        kernel = median[f"kernel L{s} cay"]
        for suffix in JACOBIANS:
            for kind in RETRACTIONS:
                name = f"liemech L{s} {kind}{suffix}"
                ratio = median[name] / median[f"liemech L{s} cay{suffix}"]
                print(f"{name:<26} {median[name]:8.1f} {median[name] / kernel:8.2f} {ratio:8.2f} "
                      f"{iterations[name]:15.2f}")
        name = f"kernel L{s} cay"
        print(f"{name:<26} {kernel:8.1f} {1.0:8.2f} {'':>8} {iterations[name]:15.2f}")
    print(f"lm.integrate fixed cost (1-step run, L3 cay): {statistics.median(one_step):.0f} µs")


if __name__ == "__main__":
    main()
