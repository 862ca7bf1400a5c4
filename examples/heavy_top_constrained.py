"""The heavy top as a rigid body on SO(3) × R³ held at its pivot by Φ(R, x) = x − Rχ, integrated by
the holonomic VPRK, against the same top modelled on SO(3) with the pivot inertia (the holonomic
scheme of Martín de Diego & Sato Martín de Almagro 2018, §6.3): orders 2s − 2 in R and ω, Φ and its
tangency at round-off, and the gap between the two models at the size of the discretisation error.

Run: .venv/bin/python examples/heavy_top_constrained.py
"""

import os

import numpy as np

import liemech as lm
from liemech.systems.heavy_top_constrained import ConstrainedHeavyTop
from liemech.testing import estimate_order

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: Lobatto-2 with one retraction, two step counts
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"

STEPS = (10, 20) if FAST else (10, 20, 40, 80)


def main() -> None:
    top = ConstrainedHeavyTop()
    problem, reduced = top.problem(), top.reduced()
    constraint = top.constraint()
    R_ref, mu_ref = reduced.reference(np.array([top.t_final]))
    omega_ref = np.linalg.solve(reduced.inertia, mu_ref[-1])
    print(f"Heavy top on SO(3) × R³ with Φ = x − Rχ, T = {top.t_final}, N = {STEPS}")
    print(f"{'method':<11}{'τ':<5}{'order R':>9}{'order ω':>9}{'max |Φ|':>11}{'tangency':>11}{'vs SO(3) model':>16}")
    for s in (2,) if FAST else (2, 3, 4):
        for retraction in lm.RETRACTION_KINDS[:1] if FAST else lm.RETRACTION_KINDS:
            errors_R, errors_omega, phi, tangency = [], [], 0.0, 0.0
            for n in STEPS:
                method = lm.VPRK(lm.lobatto(s), retraction)
                sol = lm.integrate(problem, method, h=top.t_final / n, t_final=top.t_final)
                errors_R.append(float(np.max(np.abs(np.asarray(sol.point(-1)[0]) - R_ref[-1]))))
                errors_omega.append(float(np.max(np.abs(sol.eta[-1][:3] - omega_ref))))
                phi = max(phi, max(float(np.max(np.abs(constraint.value(g)))) for g in sol.points()))
                tangency = max(tangency, max(float(np.max(np.abs(constraint.trivialised_jacobian(top.group, g) @ e)))
                                             for g, e in zip(sol.points(), sol.eta)))
            unconstrained = lm.integrate(reduced.problem(), method, h=top.t_final / STEPS[-1], t_final=top.t_final)
            gap = float(np.max(np.abs(np.asarray(sol.point(-1)[0]) - unconstrained.g[-1])))
            h = [top.t_final / n for n in STEPS]
            print(f"Lobatto-{s:<3}{retraction:<5}{estimate_order(h, errors_R).slope:>9.2f}"
                  f"{estimate_order(h, errors_omega).slope:>9.2f}{phi:>11.1e}{tangency:>11.1e}{gap:>16.1e}")


if __name__ == "__main__":
    main()
