"""Kinon, Betsch & Schneider (2023), §6.3: the four-particle system (two nonlinear springs, two
rigid bars, no gravity) with VI-S, VI-A(½), VI-B(1, ½), EM and Gonzalez's EM-G, both energy–momentum
schemes with the invariant discrete gradient (126) of ``FourParticles().invariant_potential()``,
under the papers' Newton protocol (``NewtonOptions.metis()``) and the simple guess.

Base run h = 0.01, T = 10: mean Newton iterations, max |H − H₀| and |ΔH| (H = ½pᵀM⁻¹p + V),
|ΔJ| (angular momentum), |ΔL| (linear momentum), max |g|, max |G M⁻¹p|, max |G v| (v = ``sol.eta``;
for VI-S, EM and EM-G that is M⁻¹p; VI-S's staggered vⁿ is printed below the table) and q₄(10).
Order study at t = 0.1 (paper's initial data (127)), h ∈ {1e-2, 1e-3, 1e-4}, reference EM at
h = 1e-5: relative errors of q₄, p₄ and λ (λ of the last step: EM/EM-G ``sol.lam[-1]`` at t = 0.1;
VI-S/VI-A/VI-B ``sol.extras["lam"][-1]``, which belongs to the last interval; for VI-B, whose λ
alternates from step to step, also the mean of the last two).

Run: .venv/bin/python examples/ggl/four_particles.py   (about 15 s)
"""

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from figures import save_plot  # noqa: E402
from paper_schemes import paper_schemes  # noqa: E402

import liemech as lm  # noqa: E402
from liemech.diagnostics import holonomic_residuals, velocity_constraint  # noqa: E402
from liemech.systems import FourParticles  # noqa: E402
from liemech.testing import estimate_order  # noqa: E402
from liemech.types import Vector  # noqa: E402

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: T = 0.5, two coarse steps against a reference at h = 1e-3
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"

H_RUN, T_RUN = 0.01, 0.5 if FAST else 10.0
T_ORDER, STEPS, H_REFERENCE = (0.1, (1e-2, 5e-3), 1e-3) if FAST else (0.1, (1e-2, 1e-3, 1e-4), 1e-5)


def final_multiplier(label: str, sol: lm.Solution[Vector]) -> Vector:
    """λ of the last step (liemech's sign, λ = −λ_paper)."""
    if sol.lam is not None:
        return np.asarray(sol.lam[-1], dtype=np.float64)
    return np.asarray(sol.extras["lam"][-1], dtype=np.float64)


def base_run(system: FourParticles, problem: lm.Problem[Vector], schemes: list[tuple[str, lm.Method]]) -> None:
    H0 = system.energy(problem.g0, problem.mu0)
    print(f"Base run h = {H_RUN}, T = {T_RUN}: H₀ = {H0:.12f}, L = {system.linear_momentum(problem.mu0)}, "
          f"J = {system.angular_momentum(problem.g0, problem.mu0)}")
    print(f"{'scheme':<6}{'it.':>6}{'max|H−H₀|':>11}{'max|ΔH|':>10}{'max|ΔJ|':>9}{'max|ΔL|':>9}{'max|g|':>9}"
          f"{'max|GM⁻¹p|':>11}{'max|Gv|':>9}   q₄(10)")
    energies: dict[str, tuple[list[float], list[float]]] = {}
    secondary: dict[str, tuple[list[float], list[float]]] = {}
    staggered = 0.0
    for label, method in schemes:
        sol = lm.integrate(problem, method, h=H_RUN, t_final=T_RUN)
        qs, ps = sol.g, sol.mu
        H = np.array([system.energy(q, p) for q, p in zip(qs, ps)])
        J = np.array([system.angular_momentum(q, p) for q, p in zip(qs, ps)])
        L = np.array([system.linear_momentum(p) for p in ps])
        position, velocity, momentum = holonomic_residuals(problem, sol)
        g, gv, gp = float(np.max(np.abs(position))), float(np.max(np.abs(velocity))), np.max(np.abs(momentum), axis=1)
        if label == "VI-S":  # the scheme's velocity vⁿ belongs to tⁿ; the last node has none
            staggered = float(np.max(np.abs(velocity_constraint(problem, qs[:-1], sol.extras["velocity"]))))
        q4 = qs[-1][9:]
        print(f"{label:<6}{sol.stats.mean_iterations:6.3f}{np.max(np.abs(H - H0)):11.2e}"
              f"{np.max(np.abs(np.diff(H))):10.2e}{np.max(np.abs(np.diff(J, axis=0))):9.1e}"
              f"{np.max(np.abs(np.diff(L, axis=0))):9.1e}{g:9.1e}{np.max(gp):11.2e}{gv:9.1e}   "
              f"[{q4[0]:.8f}, {q4[1]:.8f}, {q4[2]:.8f}]")
        energies[label] = (list(sol.t), list(H))
        secondary[label] = (list(sol.t), list(gp + 1e-20))
    print(f"VI-S: max |G(qⁿ) vⁿ| with its staggered velocity vⁿ = {staggered:.2e}")
    print("Independent implementation: max|H−H₀| 3.50e-4 / 5.19e-5 / 4.39e-4 / 9.8e-15 / 1.3e-14, "
          "EM-G max|GM⁻¹p| 1.73e-5, q₄(10) EM [0.26123482, 0.57615233, 2.91228291]")
    save_plot("ggl_4p_energy", "Four particles, h = 0.01: H(t)", "t", "H", energies)
    save_plot("ggl_4p_secondary", "Four particles: max_k |G M⁻¹p|", "t", "|G M⁻¹p|", secondary, scale="semilogy")


def order_study(problem: lm.Problem[Vector], schemes: list[tuple[str, lm.Method]]) -> None:
    reference = lm.integrate(problem, dict(schemes)["EM"], h=H_REFERENCE, t_final=T_ORDER)
    q_ref, p_ref, lam_ref = reference.g[-1][9:], reference.mu[-1][9:], final_multiplier("EM", reference)
    print(f"\nOrder study at t = {T_ORDER}, reference EM at h = {H_REFERENCE:g} ({reference.stats.wall_time:.1f} s): "
          f"q₄ = {np.array2string(q_ref, precision=8)}, p₄ = {np.array2string(p_ref, precision=8)}, "
          f"λ = {np.array2string(lam_ref, precision=8)} (liemech sign, λ = −λ_paper)")
    print(f"{'scheme':<6}{'e_q (h = 1e-2 / 1e-3 / 1e-4)':>36}{'ord':>6}{'e_p':>34}{'ord':>6}{'e_λ':>34}{'ord':>6}")
    curves: dict[str, tuple[list[float], list[float]]] = {}
    for label, method in schemes:
        e_q, e_p, e_lam, e_lam_mean = [], [], [], []
        for h in STEPS:
            sol = lm.integrate(problem, method, h=h, t_final=T_ORDER)
            lam = final_multiplier(label, sol)
            e_q.append(float(np.linalg.norm(sol.g[-1][9:] - q_ref) / np.linalg.norm(q_ref)))
            e_p.append(float(np.linalg.norm(sol.mu[-1][9:] - p_ref) / np.linalg.norm(p_ref)))
            e_lam.append(float(np.linalg.norm(lam - lam_ref) / np.linalg.norm(lam_ref)))
            if "lam" in sol.extras:
                mean = 0.5 * (sol.extras["lam"][-1] + sol.extras["lam"][-2])
                e_lam_mean.append(float(np.linalg.norm(mean - lam_ref) / np.linalg.norm(lam_ref)))
        cells = []
        for errors in (e_q, e_p, e_lam):
            try:
                order = f"{estimate_order(STEPS, errors).slope:6.2f}"
            except ValueError:
                order = f"{'–':>6}"
            cells.append(f"{' / '.join(f'{e:.3e}' for e in errors):>34}{order}")
        print(f"{label:<6}  " + "".join(cells))
        if label == "VI-B":
            print(f"{'':<6}  VI-B λ, mean of the last two steps: {' / '.join(f'{e:.3e}' for e in e_lam_mean)}"
                  f" (order {estimate_order(STEPS, e_lam_mean).slope:.2f})")
        curves[f"q₄ {label}"] = (list(STEPS), e_q)
        curves[f"λ {label}"] = (list(STEPS), e_lam)
    print("Independent implementation: EM e_q 1.975e-5 / 2.058e-7 / 2.039e-9, e_p 4.844e-4 / 4.639e-6 / 4.591e-8, "
          "e_λ 3.926e-4 / 3.265e-5 / 2.875e-6")
    save_plot("ggl_4p_errors", "Four particles: errors at t = 0.1", "h", "relative error", curves, scale="loglog")


def main() -> None:
    system = FourParticles()
    problem = system.problem()
    print("Four-particle system (Kinon, Betsch & Schneider 2023, §6.3), metis Newton, simple guess, "
          "invariant discrete gradient (126)")
    schemes = paper_schemes(system.invariant_potential())  # compiled once, used by every run
    base_run(system, problem, schemes)
    order_study(problem, schemes)


if __name__ == "__main__":
    main()
