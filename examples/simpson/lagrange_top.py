"""Rojas-Quintero, Dubois & Jourdan (2025), §4.2: the Lagrange top of Table 3 over 1, 10 and 100
nutation periods with the Simpson VI, the midpoint VI and RK4 in (q, q̇) and (q, p), against the
exact (Jacobi elliptic) nutation: ‖e_θ‖∞ and ‖e_H‖∞ for h = t̄/N with their observed orders — the
content of the paper's Tables 4 and 5 — and the drift of the cyclic momenta p_φ, p_ψ.

Run: .venv/bin/python examples/simpson/lagrange_top.py   (about a minute)
"""

import math
import os

import numpy as np

import liemech as lm
from liemech.systems import LagrangeTop

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: one period, N = 20 and 40
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"

METHODS: list[lm.Method] = [lm.SimpsonVI(), lm.MidpointVI(), lm.RK4("velocity"), lm.RK4("canonical")]
STEPS_PER_PERIOD = (20, 40) if FAST else (20, 40, 80, 160)


def main() -> None:
    top = LagrangeTop()
    problem = top.problem()
    period = top.nutation_period()
    H0 = top.energy(problem.g0, problem.mu0)
    print(f"Lagrange top (Table 3), nutation period t̄ = {period:.15f} s (paper: 1.84671 s), H₀ = {H0:.12f} J")
    for periods in (1,) if FAST else (1, 10, 100):
        print(f"\nP = {periods} periods: ‖e_θ‖∞ / ‖e_H‖∞ (orders) for h = t̄/N")
        print(f"  {'method':<18}" + "".join(f"{'N = ' + str(n):>30}" for n in STEPS_PER_PERIOD) + f"{'|Δp|/|p|':>11}")
        for method in METHODS:
            cells, previous, drift = [], None, 0.0
            for n in STEPS_PER_PERIOD:
                sol = lm.integrate(problem, method, h=period / n, n_steps=periods * n)
                theta = np.array([q[1] for q in sol.g])
                e_theta = float(np.max(np.abs(theta / top.theta(sol.t) - 1.0)))
                e_H = max(abs(top.energy(q, p) - H0) / H0 for q, p in zip(sol.g, sol.mu))
                orders = "" if previous is None else (
                    f" ({math.log2(previous[0] / e_theta):.1f},{math.log2(previous[1] / e_H):.1f})")
                cells.append(f"{e_theta:.2e}/{e_H:.2e}{orders}")
                previous = (e_theta, e_H)
                drift = max(drift, max(float(np.max(np.abs(sol.mu[:, i] / problem.mu0[i] - 1.0))) for i in (0, 2)))
            print(f"  {method.name:<18}" + "".join(f"{c:>30}" for c in cells) + f"{drift:11.1e}")


if __name__ == "__main__":
    main()
