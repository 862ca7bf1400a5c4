"""Kinon, Betsch & Schneider (2023), §6.2: steady precession of a gyroscopic top in the director
formulation (q ∈ R¹², nine constraints), with VI-S, VI-A(½), VI-B(1, ½), EM and the Bobenko–Suris
scheme BS99, under the papers' Newton protocol (``NewtonOptions.metis()``) and the simple guess.

(a) T = 2, h = 0.002: the range and final value of the centre-of-mass height φ₃ (steady value
    ℓ cos α₀ = 0.0375), max |H − H₀| with H = ½pᵀM⁻¹p + V, max |ΔL₃|, max |g| and the
    velocity-level residuals G M⁻¹p (rows k = 1..6 and the linear rows k = 7..9) and G v
    (v = ``sol.eta``; for VI-S and EM that is M⁻¹p).
(b) Order study at t = 0.001, h ∈ {1e-4, 5e-5, 1e-5}: e_q = |φ₃ − 0.0375|/0.0375 (eq. (113)) and
    e_p = |p_φ − p_φ,ref|/|p_φ,ref| (eq. (114)) with the reference EM at h = 5e-7, and fitted orders.

Run: .venv/bin/python examples/ggl/gyroscopic_top.py   (about 15 s)
"""

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from figures import save_plot  # noqa: E402
from paper_schemes import paper_schemes  # noqa: E402

import liemech as lm  # noqa: E402
from liemech.diagnostics import holonomic_residuals  # noqa: E402
from liemech.systems import GyroscopicTop  # noqa: E402
from liemech.testing import estimate_order  # noqa: E402
from liemech.types import Vector  # noqa: E402

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: T = 0.1, two steps against a reference at h = 1e-5
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"

H_RUN, T_RUN = 0.002, 0.1 if FAST else 2.0
T_ORDER, STEPS, H_REFERENCE = (0.001, (1e-4, 5e-5), 1e-5) if FAST else (0.001, (1e-4, 5e-5, 1e-5), 5e-7)


def trajectory(top: GyroscopicTop, problem: lm.Problem[Vector]) -> dict[str, tuple[list[float], list[float]]]:
    H0 = top.energy(problem.g0, problem.mu0)
    print(f"(a) h = {H_RUN}, T = {T_RUN}; H₀ = {H0:.12f}, steady φ₃ = {top.steady_height():.6g}, "
          f"ω_s = {top.spin_rate():.12g}")
    print(f"{'scheme':<6}{'it.':>6}{'φ₃ range':>22}{'φ₃(2)':>10}{'max|H−H₀|':>11}{'max|ΔL₃|':>10}{'max|g|':>9}"
          f"{'|GM⁻¹p| k≤6':>13}{'k=7..9':>9}{'max|Gv|':>9}")
    curves: dict[str, tuple[list[float], list[float]]] = {}
    for label, method in [*paper_schemes(gonzalez=False), ("BS99", lm.BobenkoSurisTop())]:
        sol = lm.integrate(problem, method, h=H_RUN, t_final=T_RUN)
        qs, ps = sol.g, sol.mu
        phi3 = np.array([float(q[2]) for q in qs])
        H = np.array([top.energy(q, p) for q, p in zip(qs, ps)])
        L3 = np.array([float(top.angular_momentum(q, p)[2]) for q, p in zip(qs, ps)])
        position, velocity, momentum = holonomic_residuals(problem, sol)
        g, gv, gp = float(np.max(np.abs(position))), float(np.max(np.abs(velocity))), np.abs(momentum)
        print(f"{label:<6}{sol.stats.mean_iterations:6.3f}   [{phi3.min():.6f}, {phi3.max():.6f}]{phi3[-1]:10.6f}"
              f"{np.max(np.abs(H - H0)):11.2e}{np.max(np.abs(np.diff(L3))):10.1e}{g:9.1e}"
              f"{np.max(gp[:, :6]):13.2e}{np.max(gp[:, 6:]):9.1e}{gv:9.1e}")
        curves[label] = (list(sol.t), list(phi3))
    curves["steady"] = ([0.0, T_RUN], [top.steady_height()] * 2)
    print("Independent implementation: φ₃(2) VI-S 0.038476, VI-A 0.037006, VI-B 0.038801, EM 0.037381; "
          "max|H−H₀| 1.93e-4 / 0.195 / 0.508 / 1.4e-14; BS99 φ₃ ∈ [0.036900, 0.038096]")
    return curves


def rates(errors: list[float]) -> str:
    """Pairwise rates log(e_i/e_{i+1})/log(h_i/h_{i+1}) and the least-squares order."""
    pairwise = [np.log(errors[i] / errors[i + 1]) / np.log(STEPS[i] / STEPS[i + 1]) for i in range(len(STEPS) - 1)]
    return ", ".join(f"{r:.2f}" for r in pairwise) + f" ({estimate_order(STEPS, errors).slope:.2f})"


def order_study(top: GyroscopicTop, problem: lm.Problem[Vector]) -> dict[str, tuple[list[float], list[float]]]:
    reference_method = lm.GGLEnergyMomentum(newton=lm.NewtonOptions.metis(), initial_guess="simple")
    reference = lm.integrate(problem, reference_method, h=H_REFERENCE, t_final=T_ORDER)
    p_ref = reference.mu[-1][:3]
    steady = top.steady_height()
    print(f"\n(b) errors at t = {T_ORDER}; p_φ,ref (EM, h = {H_REFERENCE:g}) = "
          f"[{p_ref[0]:.9f}, {p_ref[1]:.8e}, {p_ref[2]:.1e}], its e_q = {abs(reference.g[-1][2] - steady) / steady:.1e}")
    print(f"{'scheme':<6}" + "".join(f"{'e_q h=' + format(h, 'g'):>14}" for h in STEPS) + f"{'rates (fit)':>18}"
          + "".join(f"{'e_p h=' + format(h, 'g'):>14}" for h in STEPS) + f"{'rates (fit)':>18}")
    curves: dict[str, tuple[list[float], list[float]]] = {}
    for label, method in [*paper_schemes(gonzalez=False), ("BS99", lm.BobenkoSurisTop())]:
        e_q, e_p = [], []
        for h in STEPS:
            sol = lm.integrate(problem, method, h=h, t_final=T_ORDER)
            e_q.append(abs(float(sol.g[-1][2]) - steady) / steady)
            e_p.append(float(np.linalg.norm(sol.mu[-1][:3] - p_ref) / np.linalg.norm(p_ref)))
        print(f"{label:<6}" + "".join(f"{e:14.3e}" for e in e_q) + f"{rates(e_q):>18}"
              + "".join(f"{e:14.3e}" for e in e_p) + f"{rates(e_p):>18}")
        curves[f"e_q {label}"] = (list(STEPS), e_q)
        curves[f"e_p {label}"] = (list(STEPS), e_p)
    print("Independent implementation at h = 1e-4: e_q VI-S 8.654e-6, BS99 8.656e-6, VI-B 8.658e-6, VI-A 5.059e-9, "
          "EM 2.427e-10; orders 1, 1, 1, 2, 2 in q and p")
    return curves


def main() -> None:
    top = GyroscopicTop()
    problem = top.problem()
    print(f"Gyroscopic top (Kinon, Betsch & Schneider 2023, §6.2): m = {top.mass:.15f}, "
          f"J = {top.principal_inertia()[0]:.14e}, ℓ = {top.ell:g}, metis Newton, simple guess")
    phi3 = trajectory(top, problem)
    errors = order_study(top, problem)
    save_plot("ggl_top_phi3", "Gyroscopic top, h = 0.002: φ₃(t)", "t", "φ₃", phi3)
    save_plot("ggl_top_errors", "Gyroscopic top: errors at t = 0.001", "h", "relative error", errors, scale="loglog")


if __name__ == "__main__":
    main()
