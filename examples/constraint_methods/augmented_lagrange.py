"""Leyendecker, Betsch & Steinmann (2004): the augmented-Lagrange iteration per step on the double
spherical pendulum and the director top (μ = 1e7, h = 1e-3, tol = 1e-10): mean and largest number of
Uzawa iterations, for the paper's form (40) and the modified derivative (31), cold and warm start.

Run: .venv/bin/python examples/constraint_methods/augmented_lagrange.py
"""

import numpy as np

import liemech as lm
from liemech.systems import DirectorTop, DoubleSphericalPendulum


def main() -> None:
    for name, problem in (("double spherical pendulum", DoubleSphericalPendulum().problem()),
                          ("director top", DirectorTop().problem())):
        reference = lm.integrate(problem, lm.DiscreteGradientMultiplier(), h=1e-3, n_steps=200)
        print(f"{name}: Uzawa iterations per step to |g| ≤ 1e-10 (200 steps)")
        for variant in ("paper", "modified"):
            for warm in (False, True):
                method = lm.DiscreteGradientAugmentedLagrange(1e7, 1e-10, variant, warm_start=warm)
                sol = lm.integrate(problem, method, h=1e-3, n_steps=200)
                iterations = sol.extras["al_iterations"]
                gap = float(np.max(np.abs(np.array(sol.g) - np.array(reference.g))))
                print(f"  {variant:<9}{'warm' if warm else 'cold':<6} mean {float(np.mean(iterations)):5.1f}  "
                      f"max {float(np.max(iterations)):4.0f}   position gap to the multiplier scheme {gap:.1e}")


if __name__ == "__main__":
    main()
