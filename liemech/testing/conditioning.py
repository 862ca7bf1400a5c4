"""The condition number of a discrete-gradient scheme's Newton matrix (Leyendecker, Betsch & Steinmann
2004, §4.1, Fig. 4)."""

from typing import Literal, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np

from liemech.mechanics.problem import Problem
from liemech.methods.discrete_gradient.multiplier import DiscreteGradientMultiplier
from liemech.methods.discrete_gradient.penalty import DiscreteGradientPenalty
from liemech.methods.method import NodeState
from liemech.run.integrate import integrate
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
    number grows like h⁻² (Fig. 4) rather than h⁻³. The Newton matrix is ``jax.jacfwd`` of the
    scheme's step equations.
    """
    if rows not in ("printed", "scaled"):
        raise ValueError(f"rows must be 'printed' or 'scaled', got {rows!r}")
    sol = integrate(problem, method, h=h, n_steps=1)
    start = NodeState(problem.g0, problem.mu0, problem.eta0, problem.lam0)
    equations = method.equations(problem)
    # The unknowns: (q₁, p₁), and λ₁ for the multiplier scheme (the penalty scheme reports no λ); on Rⁿ
    # the stored configurations are one (K, n) array.
    x = np.concatenate([cast(Vector, sol.g)[1], sol.mu[1], np.zeros(0) if sol.lam is None else sol.lam[1]])
    J = np.array(jax.jacfwd(lambda y: equations.residual(y, start, h))(jnp.asarray(x)))
    if rows == "scaled":
        J[: 2 * problem.group.dim] *= h
    return float(np.linalg.cond(J))
