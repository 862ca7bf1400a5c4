"""Rojas-Quintero, Dubois & Jourdan (2025), §3: the double pendulum (Table 1, ℓ = g/ω₀²) with the
Simpson VI, the midpoint VI and RK4 in (q, p). Prints the largest angle deviation from a DOP853
reference over 10 s at h = 0.1 (the paper's reference is RK4 at h = 1e-5; DOP853 at rtol 1e-13 is as
accurate and faster) and the relative energy error ‖e_H‖∞ against h for T = 10 s and 100 s, with
fitted orders.

Run: .venv/bin/python examples/simpson/double_pendulum.py
"""

import os

import numpy as np

import liemech as lm
from liemech.systems import DoublePendulum
from liemech.testing import estimate_order

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: three steps over T = 10 only
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"

METHODS: list[lm.Method] = [lm.SimpsonVI(), lm.MidpointVI(), lm.RK4()]
STEPS = (0.1, 0.05, 0.025) if FAST else (0.1, 0.05, 0.025, 0.0125)


def main() -> None:
    pendulum = DoublePendulum()
    problem = pendulum.problem()
    H0 = pendulum.energy(problem.g0, problem.mu0)
    print(f"Double pendulum, ℓ = g/ω₀² = {pendulum.length:.10f} m, H₀ = {H0:.12f} J")
    times = np.linspace(0.0, 10.0, 101)
    q_ref, _ = pendulum.reference(times)
    print("\nmax |q − q_ref| over 10 s at h = 0.1")
    for method in METHODS:
        sol = lm.integrate(problem, method, h=0.1, t_final=10.0)
        print(f"  {method.name:<18}{float(np.max(np.abs(np.array(sol.g) - q_ref))):10.2e} rad")
    for T in (10.0,) if FAST else (10.0, 100.0):
        print(f"\n‖e_H‖∞ over T = {T:g} s" + "".join(f"{'h = ' + str(h):>14}" for h in STEPS) + f"{'order':>8}")
        for method in METHODS:
            errors = []
            for h in STEPS:
                sol = lm.integrate(problem, method, h=h, t_final=T)
                errors.append(max(abs(pendulum.energy(q, p) - H0) / abs(H0) for q, p in zip(sol.g, sol.mu)))
            order = estimate_order(STEPS[1:], errors[1:]).slope
            print(f"  {method.name:<18}" + "".join(f"{e:14.3e}" for e in errors) + f"{order:8.2f}")


if __name__ == "__main__":
    main()
