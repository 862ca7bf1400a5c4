"""Rojas-Quintero, Dubois & Jourdan (2025), §4.3: the Simpson VI on the complete Lagrange top (Euler
angles, Table 6) against classical RK4 on the reduced first-order system (18aq), with the same h
over 1 s; both against the exact nutation. ‖ε_θ‖∞ = sup |θ_Simpson − θ_RK4| converges with order ≈ 4
(the paper's Fig. 14).

Run: .venv/bin/python examples/simpson/reduced_top.py
"""

import math
import os

import numpy as np

import liemech as lm
from liemech.systems import ReducedLagrangeTop

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: h = 0.1 and 0.05
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"


def rk4_theta(reduced: ReducedLagrangeTop, h: float, T: float) -> lm.Vector:
    y = reduced.initial_state()
    out = [float(y[1])]
    for _ in range(round(T / h)):
        k1 = reduced.rhs(0.0, y)
        k2 = reduced.rhs(0.0, y + 0.5 * h * k1)
        k3 = reduced.rhs(0.0, y + 0.5 * h * k2)
        k4 = reduced.rhs(0.0, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(float(y[1]))
    return np.array(out)


def main() -> None:
    reduced = ReducedLagrangeTop()
    top = reduced.top
    print(f"Reduced Lagrange top (Table 6): exact θ(1 s) = {float(top.theta(np.array([1.0]))[0]):.15f} rad, "
          f"nutation period {top.nutation_period():.15f} s")
    print(f"{'h':>9}{'‖ε_θ‖∞':>12}{'α':>7}{'Simpson vs exact':>19}{'RK4 vs exact':>15}")
    previous = None
    for h in (0.1, 0.05) if FAST else (0.1, 0.05, 0.025, 0.0125, 0.00625):
        sol = lm.integrate(top.problem(), lm.SimpsonVI(), h=h, t_final=1.0)
        theta_simpson = np.array([q[1] for q in sol.g])
        theta_rk4 = rk4_theta(reduced, h, 1.0)
        exact = top.theta(sol.t)
        gap = float(np.max(np.abs(theta_simpson - theta_rk4)))
        alpha = "" if previous is None else f"{math.log2(previous / gap):.2f}"
        print(f"{h:9.5f}{gap:12.3e}{alpha:>7}{float(np.max(np.abs(theta_simpson - exact))):19.3e}"
              f"{float(np.max(np.abs(theta_rk4 - exact))):15.3e}")
        previous = gap


if __name__ == "__main__":
    main()
