"""The Chaplygin ball (a sphere with inertia diag(0.3, 0.4, 0.5) rolling on a plane, SO(3) × R³,
holonomic contact and nonholonomic rolling at once) with the mixed-constraint VPRK scheme over
T = 50: the energy and the angular momentum about the contact point K (both conserved by the
continuous motion), the constraint residual, and the distance to DOP853 on the Newton–Euler
equations at T = 10.

Run: .venv/bin/python examples/rolling_ball.py
"""

import os

import numpy as np

import liemech as lm
from liemech.systems import RollingBall

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: Lobatto-2 at h = 0.05 up to T = 10
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"

BALL = RollingBall()


def main() -> None:
    problem = BALL.problem()
    assert problem.holonomic is not None and problem.nonholonomic is not None
    E0, K0 = BALL.energy(problem.g0, problem.mu0), BALL.contact_momentum(problem.g0, problem.mu0)
    reference = BALL.reference(np.array([0.0, 10.0]))
    print(f"Chaplygin ball: E = {E0:.6f}, K = {np.array2string(K0, precision=6)}")
    print(f"{'method':<12}{'h':>6}{'max |ΔE|':>11}{'max |ΔK|':>11}{'max |Φ|, |φ|':>15}{'|R − R_ref|(10)':>17}")
    for s, h in ((2, 0.05),) if FAST else ((2, 0.05), (2, 0.025), (3, 0.05)):
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(s)), h=h, t_final=10.0 if FAST else 50.0)
        states = list(zip(sol.points(), sol.mu))
        dE = max(abs(BALL.energy(g, mu) - E0) for g, mu in states)
        dK = max(float(np.max(np.abs(BALL.contact_momentum(g, mu) - K0))) for g, mu in states)
        residual = max(max(float(np.max(np.abs(problem.holonomic.value(g)))),
                           float(np.max(np.abs(problem.nonholonomic.value(g, eta)))))
                       for g, eta in zip(sol.points(), sol.eta))
        at_10 = int(round(10.0 / h))
        distance = float(np.max(np.abs(sol.g[0][at_10] - reference.R[-1])))
        print(f"{f'Lobatto-{s}':<12}{h:>6}{dE:>11.2e}{dK:>11.2e}{residual:>15.1e}{distance:>17.2e}")


if __name__ == "__main__":
    main()
