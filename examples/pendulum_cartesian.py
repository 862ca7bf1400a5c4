"""The pendulum in Cartesian coordinates, ℓ = ½|q̇|² − y with Φ = ½(|q|² − 1), integrated by the
holonomic Lobatto SPRK (s = 2 is RATTLE): fitted orders 2s − 2 in q and p against the angle equation
θ̈ = −sin θ (DOP853), constraint and tangency at round-off (Martín de Diego & Sato Martín de Almagro
2018, §4.3).

Run: .venv/bin/python examples/pendulum_cartesian.py
"""

import os

import numpy as np

import liemech as lm
from liemech.systems.cartesian_pendulum import CartesianPendulum
from liemech.testing import estimate_order

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: Lobatto-2, two step counts
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"

STEPS = (10, 20) if FAST else (10, 20, 40, 80)


def main() -> None:
    pendulum = CartesianPendulum()
    problem = pendulum.problem()
    q_ref, p_ref, _ = pendulum.reference(np.array([pendulum.t_final]))
    print(f"Cartesian pendulum, θ₀ = {pendulum.theta0}, T = {pendulum.t_final}, N = {STEPS}")
    print(f"{'method':<11}{'theory':>7}{'order q':>9}{'order p':>9}{'max |Φ|':>11}{'max |Bq̇|':>11}{'Newton':>8}")
    for s in (2,) if FAST else (2, 3, 4):
        errors_q, errors_p, phi, tangency, newton = [], [], 0.0, 0.0, 0.0
        for n in STEPS:
            sol = lm.integrate(problem, lm.VPRK(lm.lobatto(s)), h=pendulum.t_final / n, t_final=pendulum.t_final)
            errors_q.append(float(np.max(np.abs(sol.g[-1] - q_ref[-1]))))
            errors_p.append(float(np.max(np.abs(sol.mu[-1] - p_ref[-1]))))
            phi = max(phi, max(abs(0.5 * float(q @ q - 1.0)) for q in sol.g))
            tangency = max(tangency, max(abs(float(q @ v)) for q, v in zip(sol.g, sol.eta)))
            newton = sol.stats.mean_iterations
        h = [pendulum.t_final / n for n in STEPS]
        print(f"Lobatto-{s:<3}{2 * s - 2:>7}{estimate_order(h, errors_q).slope:>9.2f}"
              f"{estimate_order(h, errors_p).slope:>9.2f}{phi:>11.1e}{tangency:>11.1e}{newton:>8.1f}")


if __name__ == "__main__":
    main()
