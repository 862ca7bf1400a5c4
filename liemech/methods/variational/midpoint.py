"""The implicit-midpoint variational integrator of Rojas-Quintero, Dubois & Jourdan (2025,
Appendix B, corrected):
L_d(q_ℓ, q_r) = h ℓ((q_ℓ + q_r)/2, (q_r − q_ℓ)/h), so with q_m = (q_j + q)/2 and g = (q − q_j)/h,
    p − p_j − h f(q_m, g) = 0,     μ(q_m, g) − (p + p_j)/2 = 0        (18as)
(for ℓ = ½q̇ᵀMq̇ − V: f = ½Q(q_m, g) − ∇V(q_m), μ = M(q_m) g). Second order, symplectic.

Newton's unknowns are x = (p, q − q_j) (the increment keeps g free of the cancellation of large
angles); its Jacobian is ``jax.jacfwd`` of the equations, and the step is compiled once per system.
"""

from collections.abc import Hashable
from typing import TypeVar, cast

import jax
import jax.numpy as jnp

from liemech.mechanics.problem import Problem
from liemech.methods.compiled import CompiledStep, Node, node
from liemech.methods.flat import FlatCarry, UnconstrainedRnMethod, equation_scale, flat_carry, rn_lagrangian
from liemech.methods.method import NodeState, Traits
from liemech.solvers import compiled_newton
from liemech.solvers.newton import NewtonOptions, newton_options
from liemech.types import Vector, VectorLike

P = TypeVar("P")


class MidpointVI(UnconstrainedRnMethod):
    """Midpoint variational integrator (order 2, symplectic, preserves cyclic momenta), on Rⁿ.

    ``sol.mu`` holds the discrete momenta p_j and ``sol.eta`` the velocities of those momenta,
    ∂ℓ/∂q̇ (q_j, sol.eta[j]) = p_j."""

    def __init__(self, newton: NewtonOptions | None = None) -> None:
        # Full Newton, as in the paper's Appendix A: at large steps the simplified one contracts
        # slowly and not monotonically, and can stop on a false plateau above round-off.
        self.newton = newton_options(newton, NewtonOptions(jacobian="every"))
        self.name = "MidpointVI()"

    @property
    def traits(self) -> Traits:
        return Traits(order=2, symplectic=True, conserves_energy=False, conserves_momentum_maps=True)

    @property
    def cache_key(self) -> Hashable:
        return ("MidpointVI", self.newton)

    def unconstrained_step(self, problem: Problem[P]) -> CompiledStep:
        return CompiledStep(MidpointEquations(self, problem).step, flat_carry)


class MidpointEquations:
    """(18as) of one Lagrangian as pure functions of the unknowns x = (p, q − q_j):
    ``residual(x, state, h)`` and the ``step`` that solves them."""

    def __init__(self, method: MidpointVI, problem: Problem[P]) -> None:
        self._L, self._newton, self._n = rn_lagrangian(problem), method.newton, problem.group.dim

    def _residual(self, x: jax.Array, q_j: jax.Array, p_j: jax.Array, h: jax.Array) -> jax.Array:
        n = self._n
        p, d = x[:n], x[n:]
        q_m, g = q_j + 0.5 * d, d / h
        # Both rows in units of momentum: h × the first of (18as), and the second.
        return jnp.concatenate([p - p_j - h * self._L.force(q_m, g), self._L.momentum(q_m, g) - 0.5 * (p + p_j)])

    def residual(self, x: VectorLike, state: NodeState[Vector], h: float) -> jax.Array:
        """The stacked step equations at x from the node ``state`` (zero at the solution)."""
        c = flat_carry(state)
        return self._residual(jnp.asarray(x, dtype=float), c.g, c.mu, jnp.asarray(h))

    def step(self, carry: object, h: jax.Array) -> tuple[object, Node]:
        c = cast(FlatCarry, carry)
        guess = jnp.concatenate([c.mu, h * c.eta])  # explicit predictor
        outcome = compiled_newton.solve(lambda x: self._residual(x, c.g, c.mu, h), guess, self._newton,
                                        equation_scale(self._L, c, h))
        n = self._n
        q, p = c.g + outcome.x[n:], outcome.x[:n]
        v = jnp.asarray(self._L.velocity(q, p))
        return FlatCarry(q, p, c.lam, v), node(q, p, v, c.lam, outcome.iterations, outcome.residual, outcome.status)
