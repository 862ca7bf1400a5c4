"""The condition number of a discrete-gradient scheme's Newton matrix (paper 001 §4, spec §I.8)."""

from typing import Literal, TypeVar, cast

import numpy as np

from liemech.integrators.discrete_gradient_multiplier import DiscreteGradientMultiplier, MultiplierStepper
from liemech.integrators.discrete_gradient_penalty import DiscreteGradientPenalty, PenaltyStepper
from liemech.integrators.integrate import integrate
from liemech.mechanics.problem import Problem
from liemech.types import Vector

P = TypeVar("P")


def newton_condition_number(
    problem: Problem[P],
    method: DiscreteGradientMultiplier | DiscreteGradientPenalty,
    h: float,
    rows: Literal["printed", "scaled"] = "printed",
) -> float:
    """2-norm condition number of the Newton matrix at the converged first step.

    ``rows="printed"`` takes the dynamic rows as the paper prints them, (q₁ − q₀)/h − …; ``"scaled"``
    multiplies them by h, (q₁ − q₀) − h…, the scaling under which the multiplier method's condition
    number grows like h⁻² (Fig. 4) rather than h⁻³.
    """
    if rows not in ("printed", "scaled"):
        raise ValueError(f"rows must be 'printed' or 'scaled', got {rows!r}")
    sol = integrate(problem, method, h=h, n_steps=1)
    stepper = method.stepper(problem, h)
    q0, p0 = cast(Vector, problem.g0), problem.mu0
    q1, p1 = cast(Vector, sol.g[1]), sol.mu[1]
    if isinstance(stepper, MultiplierStepper):
        assert sol.lam is not None
        x = np.concatenate([q1, p1, sol.lam[1]])
    else:
        assert isinstance(stepper, PenaltyStepper)
        x = np.concatenate([q1, p1])
    _, J = stepper._residual(q0, p0, x, True)
    assert J is not None
    if rows == "scaled":
        n = q0.size
        J = J.copy()
        J[: 2 * n] *= h
    return float(np.linalg.cond(J))
