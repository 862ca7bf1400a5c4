"""Leyendecker, Betsch & Steinmann (2004, §4.1, Fig. 4): condition numbers of the Newton matrices on
the double spherical pendulum released from rest. The multiplier scheme grows like h⁻³ with the rows
as printed and h⁻² with the dynamic rows scaled by h; the penalty scheme like (μh)² while μh² ≲ 1.

Run: .venv/bin/python examples/constraint_methods/condition_numbers.py
"""

import numpy as np

import liemech as lm
from liemech.systems import DoubleSphericalPendulum
from liemech.testing.conditioning import newton_condition_number


def main() -> None:
    problem = DoubleSphericalPendulum(q0=np.array([1.0, 0.0, 0.0, 2.0, 0.0, 0.0]), v0=np.zeros(6)).problem()
    print(f"{'h':>8}{'LM printed':>14}{'× h³':>8}{'LM scaled':>14}{'× h²':>8}")
    for h in (1e-1, 1e-2, 1e-3, 1e-4):
        printed = newton_condition_number(problem, lm.DiscreteGradientMultiplier(), h)
        scaled = newton_condition_number(problem, lm.DiscreteGradientMultiplier(), h, "scaled")
        print(f"{h:8.0e}{printed:14.3e}{printed * h**3:8.2f}{scaled:14.3e}{scaled * h**2:8.2f}")
    print("\npenalty: cond" + "".join(f"{'μ = ' + format(mu, '.0e'):>12}" for mu in (1e3, 1e5, 1e7, 1e9)))
    for h in (1e-2, 1e-3, 1e-4):
        row = [newton_condition_number(problem, lm.DiscreteGradientPenalty(mu), h) for mu in (1e3, 1e5, 1e7, 1e9)]
        print(f"  h = {h:.0e}" + "".join(f"{c:12.2e}" for c in row))


if __name__ == "__main__":
    main()
