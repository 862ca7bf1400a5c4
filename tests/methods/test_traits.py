"""``Traits.constraints_at_step_end`` agrees with what the methods do: the listed constraints hold
to round-off at every node, the others do not (checked on paper 004's and 001's examples; the GGL
schemes are checked in tests/methods/ggl/test_ggl_schemes.py)."""

import numpy as np
import pytest

import liemech as lm
from liemech.diagnostics import holonomic_residuals
from liemech.systems import CartesianPendulum, DoubleSphericalPendulum, NonholonomicParticle

ROUND_OFF = 1e-12


@pytest.mark.parametrize("method", [lm.VPRK(lm.lobatto(2)), lm.VPRK(lm.lobatto(3)), lm.DiscreteGradientMultiplier(),
                                    lm.DiscreteGradientPenalty(1e4)], ids=repr)
def test_holonomic_constraints_at_the_nodes(method: lm.Method) -> None:
    problem = DoubleSphericalPendulum().problem()
    g, velocity_level, _ = holonomic_residuals(problem, lm.integrate(problem, method, h=0.01, n_steps=50))
    position, velocity = float(np.max(np.abs(g))), float(np.max(np.abs(velocity_level)))
    assert ("position" in method.traits.constraints_at_step_end) == (position < ROUND_OFF)
    assert ("velocity" in method.traits.constraints_at_step_end) == (velocity < ROUND_OFF)


def test_nonholonomic_constraint_at_the_nodes() -> None:
    problem, method = NonholonomicParticle().problem(), lm.VPRK(lm.lobatto(3))
    constraint = problem.nonholonomic
    assert constraint is not None and "nonholonomic" in method.traits.constraints_at_step_end
    sol = lm.integrate(problem, method, h=0.05, n_steps=40)
    assert max(float(np.max(np.abs(constraint.value(g, eta)))) for g, eta in zip(sol.g, sol.eta)) < ROUND_OFF
    pendulum = CartesianPendulum().problem()
    unconstrained_only = lm.SimpsonVI()
    assert unconstrained_only.traits.constraints_at_step_end == ()
    with pytest.raises(ValueError, match="does not handle holonomic constraints"):
        lm.integrate(pendulum, unconstrained_only, h=0.1, n_steps=1)
