"""Heavy top on SO(3) with VPRK: convergence orders, energy error and Noether momentum drift.

Setup: 𝕀 = diag(1, 2, 3.5), χ = (0.2, −0.1, 0.6), mg = 1.5, T = 2 (``liemech.systems.HeavyTop``).
For Lobatto-s, s = 2..4, with the Cayley map and the exponential, the final-time errors in R and μ
against a DOP853 reference (rtol 1e-13) give fitted orders 2s − 2; the Noether momentum ⟨μ, Rᵀe₃⟩
(rotations about the vertical) is conserved to round-off.

Run: .venv/bin/python examples/heavy_top_so3.py
"""

import os

import numpy as np

import liemech as lm
from liemech.systems.heavy_top import HeavyTop
from liemech.testing import estimate_order

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: Lobatto-2 with one retraction, two step counts
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"

STEPS = (10, 20) if FAST else (10, 20, 40, 80)


def study(top: HeavyTop, s: int, retraction: lm.RetractionKind) -> str:
    R_ref, mu_ref = top.reference(np.array([top.t_final]))
    errors_R, errors_mu, energy, noether, iterations = [], [], [], [], []
    for n in STEPS:
        sol = lm.integrate(top.problem(), lm.VPRK(lm.lobatto(s), retraction), h=top.t_final / n, t_final=top.t_final)
        errors_R.append(float(np.max(np.abs(sol.g[-1] - R_ref[-1]))))
        errors_mu.append(float(np.max(np.abs(sol.mu[-1] - mu_ref[-1]))))
        E = np.array([top.energy(R, m) for R, m in zip(sol.g, sol.mu)])
        J = np.array([top.noether_momentum(R, m) for R, m in zip(sol.g, sol.mu)])
        energy.append(float(np.max(np.abs(E - E[0]))))
        noether.append(float(np.max(np.abs(J - J[0]))))
        iterations.append(sol.stats.mean_iterations)
    h = [top.t_final / n for n in STEPS]
    order_R = estimate_order(h, errors_R).slope
    order_mu = estimate_order(h, errors_mu).slope
    return (f"Lobatto-{s:<3}{retraction:<5}{2 * s - 2:>7}{order_R:>9.2f}{order_mu:>9.2f}"
            f"{errors_R[-1]:>14.1e}{energy[-1]:>12.1e}{max(noether):>12.1e}{np.mean(iterations):>8.1f}")


def main() -> None:
    top = HeavyTop()
    print(f"Heavy top on SO(3), T = {top.t_final}, N = {', '.join(map(str, STEPS))}")
    header = (f"{'method':<11}{'τ':<5}{'theory':>7}{'order R':>9}{'order μ':>9}"
              f"{'error R N=80':>14}{'|ΔE| N=80':>12}{'Noether':>12}{'Newton':>8}")
    print(header)
    print("-" * len(header))
    for s in (2,) if FAST else (2, 3, 4):
        for retraction in lm.RETRACTION_KINDS[:1] if FAST else lm.RETRACTION_KINDS:
            print(study(top, s, retraction))


if __name__ == "__main__":
    main()
