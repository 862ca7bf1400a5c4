"""Leyendecker, Betsch & Steinmann (2004) on the double spherical pendulum: the Lagrange-multiplier
scheme conserves H and the angular momentum about gravity and keeps the rods exact (second order
against DOP853); the penalty scheme conserves H + μ|g|² and approaches it as μ grows (Prop. 3.2).

Run: .venv/bin/python examples/constraint_methods/multiplier_and_penalty.py
"""

import numpy as np

import liemech as lm
from liemech.systems import DoubleSphericalPendulum
from liemech.testing import estimate_order


def main() -> None:
    pendulum = DoubleSphericalPendulum()
    problem = pendulum.problem()
    assert problem.holonomic is not None
    constraint = problem.holonomic
    sol = lm.integrate(problem, lm.DiscreteGradientMultiplier(), h=1e-3, n_steps=1000)
    E = np.array([pendulum.energy(q, p) for q, p in zip(sol.g, sol.mu)])
    L = np.array([pendulum.angular_momentum(q, p) for q, p in zip(sol.g, sol.mu)])
    print("Lagrange multipliers, h = 1e-3, 1000 steps:")
    print(f"  max |H − H₀|/|H₀| = {np.max(np.abs(E - E[0])) / abs(E[0]):.1e}, max |L − L₀| = {np.max(np.abs(L - L[0])):.1e}, "
          f"max |g| = {max(float(np.max(np.abs(constraint.value(q)))) for q in sol.g):.1e}")
    reference = pendulum.reference(np.array([0.0, 1.0]))[-1]
    steps, errors = [0.02, 0.01, 0.005, 0.0025], []
    for h in steps:
        run = lm.integrate(problem, lm.DiscreteGradientMultiplier(), h=h, t_final=1.0)
        errors.append(float(np.max(np.abs(run.g[-1] - reference[:6]))))
    print("  position error at t = 1 vs DOP853: " + ", ".join(f"{e:.2e}" for e in errors)
          + f"  (order {estimate_order(steps, errors).slope:.2f})")
    print("\nPenalty, h = 1e-3, 300 steps, against the multiplier solution:")
    base = lm.integrate(problem, lm.DiscreteGradientMultiplier(), h=1e-3, n_steps=300)
    assert base.lam is not None
    for mu in (1e3, 1e5, 1e7, 1e9):
        run = lm.integrate(problem, lm.DiscreteGradientPenalty(mu), h=1e-3, n_steps=300)
        H = np.array([pendulum.energy(q, p) + mu * float(np.sum(constraint.value(q) ** 2)) for q, p in zip(run.g, run.mu)])
        gap = float(np.max(np.abs(np.array(run.g) - np.array(base.g))))
        lam_gap = float(np.max(np.abs(run.extras["penalty_multiplier"][-1] - base.lam[-1])))
        print(f"  μ = {mu:.0e}: |Δ(H + μ|g|²)| = {np.max(np.abs(H - H[0])):.1e}, max |g| = "
              f"{max(float(np.max(np.abs(constraint.value(q)))) for q in run.g):.1e}, position gap {gap:.1e}, "
              f"multiplier gap {lam_gap:.1e}")


if __name__ == "__main__":
    main()
