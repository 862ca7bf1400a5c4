"""Wall time per step and Newton iterations of the GGL schemes (paper 000) on the papers' three
examples at their step sizes, with liemech's default Newton (to round-off, advanced guess) and the
papers' protocol (metis, simple guess); RATTLE (VPRK Lobatto-2) on the same problems for scale.

Run: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_ggl.py
"""

import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import liemech as lm  # noqa: E402
from liemech.systems import FourParticles, GyroscopicTop, SphericalPendulum  # noqa: E402
from liemech.types import Vector  # noqa: E402


def schemes(invariants: lm.QuadraticInvariantPotential | None, papers: bool) -> list[tuple[str, lm.Method]]:
    newton = lm.NewtonOptions.metis() if papers else None
    guess: lm.InitialGuess = "simple" if papers else "advanced"
    return [
        ("VI-S", lm.GGLVariationalEuler(newton=newton, initial_guess=guess)),
        ("VI-A", lm.GGLThetaA(newton=newton, initial_guess=guess)),
        ("VI-B", lm.GGLThetaB(newton=newton, initial_guess=guess)),
        ("EM", lm.GGLEnergyMomentum(invariants, newton=newton, initial_guess=guess)),
        ("EM-G", lm.GonzalezEnergyMomentum(invariants, newton=newton, initial_guess=guess)),
    ]


def time_run(problem: lm.Problem[Vector], method: lm.Method, h: float, n: int) -> tuple[float, float]:
    """µs per step after compilation (a first one-step run compiles) and mean Newton iterations."""
    lm.integrate(problem, method, h=h, n_steps=1)
    started = time.perf_counter()
    sol = lm.integrate(problem, method, h=h, n_steps=n)
    return 1e6 * (time.perf_counter() - started) / n, sol.stats.mean_iterations


def main() -> None:
    particles = FourParticles()
    cases = [("3D pendulum", SphericalPendulum().problem(), 0.05, None),
             ("gyroscopic top", GyroscopicTop().problem(), 0.002, None),
             ("four particles", particles.problem(), 0.01, particles.invariant_potential())]
    n = 300
    for name, problem, h, invariants in cases:
        print(f"{name}: n = {problem.group.dim}, m = {problem.n_constraints}, h = {h}, {n} steps")
        print(f"  {'scheme':<8}{'default µs/step':>16}{'it.':>6}{'papers µs/step':>16}{'it.':>6}")
        for (label, default), (_, papers) in zip(schemes(invariants, False), schemes(invariants, True)):
            t_default, it_default = time_run(problem, default, h, n)
            t_papers, it_papers = time_run(problem, papers, h, n)
            print(f"  {label:<8}{t_default:16.0f}{it_default:6.2f}{t_papers:16.0f}{it_papers:6.2f}")
        t_rattle, it_rattle = time_run(problem, lm.VPRK(lm.lobatto(2)), h, n)
        print(f"  {'RATTLE':<8}{t_rattle:16.0f}{it_rattle:6.2f}")
        if name == "gyroscopic top":
            t_bs, _ = time_run(problem, lm.BobenkoSurisTop(), h, n)
            print(f"  {'BS99':<8}{t_bs:16.0f}{0.0:6.2f}")


if __name__ == "__main__":
    main()
