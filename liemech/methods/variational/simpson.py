"""The Simpson variational integrator of Rojas-Quintero, Dubois & Jourdan (2025): quadratic finite
elements on nodes q_j, q_{j+1/2}, q_{j+1} and Simpson's quadrature (eqs. (3)–(6)),
L_d = h/6 [ℓ(q_ℓ, g_ℓ) + 4ℓ(q_m, g_m) + ℓ(q_r, g_r)], with the nodal velocities
g_ℓ = (−3q_ℓ + 4q_m − q_r)/h, g_m = (q_r − q_ℓ)/h, g_r = (q_ℓ − 4q_m + 3q_r)/h.

Per step, with μ = ∂ℓ/∂q̇ and f = ∂ℓ/∂q, (q_m, p, q_r) solve (18ara), (18arb) and the corrected
(18arc) of Appendix A, written for any Lagrangian (for ℓ = ½q̇ᵀMq̇ − V, f = ½ Q − ∇V):
    R_m = μ(q_r, g_r) − μ(q_ℓ, g_ℓ) − h f(q_m, g_m)                                   = 0
    R_p = p − p_j − h [f(q_ℓ, g_ℓ) + 4 f(q_m, g_m) + f(q_r, g_r)] / 6                   = 0
    R_q = [μ(q_ℓ, g_ℓ) + 4μ(q_m, g_m) + μ(q_r, g_r)]/6 − (p + p_j)/2 − h [f(q_ℓ, g_ℓ) − f(q_r, g_r)]/12 = 0
The printed (18arc) (h/12 and h/6 for h/24 and h/12) gives a second-order method; these
coefficients give order 4.

Newton's unknowns are the increments x = (q_m − q_j, p, q_r − q_j): the nodal velocities are then
differences of increments, not of angles that grow without bound, and the equations can be solved
to the round-off of the momenta. Newton's Jacobian is ``jax.jacfwd`` of the equations; the step is
compiled once per system (see ``liemech.methods.compiled``).
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


class SimpsonVI(UnconstrainedRnMethod):
    """Simpson variational integrator (order 4, symplectic, preserves cyclic momenta), on Rⁿ.

    ``sol.mu`` holds the discrete momenta p_j and ``sol.eta`` the velocities of those momenta,
    ∂ℓ/∂q̇ (q_j, sol.eta[j]) = p_j."""

    def __init__(self, newton: NewtonOptions | None = None) -> None:
        # Full Newton, as in the paper's Appendix A: at large steps the simplified one contracts
        # slowly and not monotonically, and can stop on a false plateau above round-off.
        self.newton = newton_options(newton, NewtonOptions(jacobian="every"))
        self.name = "SimpsonVI()"

    @property
    def traits(self) -> Traits:
        return Traits(order=4, symplectic=True, conserves_energy=False, conserves_momentum_maps=True)

    @property
    def cache_key(self) -> Hashable:
        return ("SimpsonVI", self.newton)

    def unconstrained_step(self, problem: Problem[P]) -> CompiledStep:
        return CompiledStep(SimpsonEquations(self, problem).step, flat_carry)


class SimpsonEquations:
    """(18ara), (18arb) and the corrected (18arc) of one Lagrangian as pure functions of the
    unknowns x = (q_m − q_j, p, q_r − q_j): ``residual(x, state, h)`` and the ``step`` that
    solves them."""

    def __init__(self, method: SimpsonVI, problem: Problem[P]) -> None:
        self._L, self._newton, self._n = rn_lagrangian(problem), method.newton, problem.group.dim

    def _residual(self, x: jax.Array, q_l: jax.Array, p_j: jax.Array, h: jax.Array) -> jax.Array:
        n = self._n
        d_m, p, d_r = x[:n], x[n: 2 * n], x[2 * n:]
        q = jnp.stack([q_l, q_l + d_m, q_l + d_r])
        g = jnp.stack([4 * d_m - d_r, d_r, 3 * d_r - 4 * d_m]) / h  # g_ℓ, g_m, g_r
        mu, f = jax.vmap(lambda q_i, g_i: (self._L.momentum(q_i, g_i), self._L.force(q_i, g_i)))(q, g)
        return jnp.concatenate([
            mu[2] - mu[0] - h * f[1],  # (18ara)
            p - p_j - h * (f[0] + 4 * f[1] + f[2]) / 6,  # (18arb)
            (mu[0] + 4 * mu[1] + mu[2]) / 6 - 0.5 * (p + p_j) - h * (f[0] - f[2]) / 12,  # (18arc), corrected
        ])

    def residual(self, x: VectorLike, state: NodeState[Vector], h: float) -> jax.Array:
        """The stacked step equations at x from the node ``state`` (zero at the solution)."""
        c = flat_carry(state)
        return self._residual(jnp.asarray(x, dtype=float), c.g, c.mu, jnp.asarray(h))

    def step(self, carry: object, h: jax.Array) -> tuple[object, Node]:
        c = cast(FlatCarry, carry)
        # An explicit predictor: the paper's guess (q_j, p_j, q_j) can converge to a spurious root
        # when q moves fast (ψ̇ = 252 rad/s on the Lagrange top).
        guess = jnp.concatenate([0.5 * h * c.eta, c.mu, h * c.eta])
        outcome = compiled_newton.solve(lambda x: self._residual(x, c.g, c.mu, h), guess, self._newton,
                                        equation_scale(self._L, c, h))
        n = self._n
        q, p = c.g + outcome.x[2 * n:], outcome.x[n: 2 * n]
        v = jnp.asarray(self._L.velocity(q, p))
        return FlatCarry(q, p, c.lam, v), node(q, p, v, c.lam, outcome.iterations, outcome.residual, outcome.status)
