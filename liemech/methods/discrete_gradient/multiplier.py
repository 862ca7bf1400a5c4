"""The energy-conserving Lagrange-multiplier scheme with Gonzalez discrete derivatives (Leyendecker,
Betsch & Steinmann 2004, eq. (23)) for H = ½pᵀM⁻¹p + U(q) on Rⁿ with holonomic constraints g(q) = 0:

    (q₁ − q₀)/h = M⁻¹p_{½} + S (p₁ − p₀)
    (p₁ − p₀)/h = −∇U(q_{½}) + B(q_{½})ᵀλ − S (q₁ − q₀)           g(q₁) = 0
    S = [W(q₁) − W(q₀) − ∇W(q_{½})·Δq] / (|Δq|² + |Δp|²),   W = U − ⟨λ, g⟩

(T is quadratic, so its own quotient vanishes; the constraint force enters with liemech's plus
sign, λ = −λ_paper). H(q₁, p₁) = H(q₀, p₀) and g(q₁) = 0 to round-off; second order.

S is the Gonzalez quotient (eq. (19)) of the whole W = U + P. The paper drops P(q₁) − P(q₀) =
−⟨λ, g(q₁) − g(q₀)⟩ from its numerator, which vanishes at the solution (g(q₀) = g(q₁) = 0), so
both forms have the same solutions. They differ off the constraint, where Newton starts: with the
term dropped, a quadratic g leaves λ·(g(q₁) − g(q₀))/|Δz|² in S, of size λ at the explicit
predictor (Δp = 0, g(q₁) ≠ 0). On the spherical pendulum (m = ℓ = 1, |v₀| = 1, λ₀ = −1) it is
S = λ₀/2 = −½, which cancels the block ∂/∂p₁ = −M⁻¹/2 − S of the first row exactly: a singular
Newton matrix at step 0. With the whole quotient the quadratic part of g cancels in S for every
iterate (S = 0 for a linear U and a quadratic g: the step equations are then those of EM-G,
Gonzalez 1999).
"""

from collections.abc import Hashable
from typing import Any, NamedTuple, TypeVar, cast

import jax
import jax.numpy as jnp

from liemech.mechanics.problem import Problem
from liemech.methods.compiled import Node, node
from liemech.methods.discrete_gradient.base import ConstrainedHamiltonian, EnergyConservingMethod
from liemech.methods.method import NodeState
from liemech.numerics.discrete_derivative import quotients
from liemech.solvers import compiled_newton
from liemech.solvers.newton import NewtonOptions, newton_options
from liemech.types import VectorLike

P = TypeVar("P")


class DiscreteGradientMultiplier(EnergyConservingMethod):
    """Energy-conserving Lagrange-multiplier method (order 2, not symplectic), on Rⁿ with constant
    mass and holonomic constraints. ``sol.lam[k]`` is the λ of the step ending at t_k."""

    def __init__(self, newton: NewtonOptions | None = None) -> None:
        # The quotient S varies fast with the iterate (1/|Δz|²): a frozen Jacobian does not converge.
        self.newton = newton_options(newton, NewtonOptions(jacobian="every"))
        self.name = "DiscreteGradientMultiplier()"

    @property
    def cache_key(self) -> Hashable:
        return ("DiscreteGradientMultiplier", self.newton)

    def equations(self, problem: Problem[P]) -> "MultiplierEquations":
        return MultiplierEquations(self, problem)


class _Carry(NamedTuple):
    g: jax.Array  # q
    mu: jax.Array  # p
    lam: jax.Array  # λ of the step that reached the node: Newton's start for the next one


class MultiplierEquations:
    """The step equations (23) of one problem as pure functions of the unknowns x = (q₁, p₁, λ):
    ``residual(x, state, h)`` and the ``step`` that solves them."""

    def __init__(self, method: DiscreteGradientMultiplier, problem: Problem[P]) -> None:
        self._H = ConstrainedHamiltonian(problem, method.name)
        self._newton = method.newton

    def start(self, state: NodeState[Any]) -> _Carry:
        """The carry at a node; Newton starts from the explicit predictor and the node's λ."""
        lam = jnp.zeros(self._H.m) if state.lam is None else jnp.asarray(state.lam, dtype=float)
        return _Carry(jnp.asarray(state.g, dtype=float), jnp.asarray(state.mu, dtype=float), lam)

    def _equations(self, x: jax.Array, q0: jax.Array, p0: jax.Array, h: jax.Array) -> jax.Array:
        H, n = self._H, self._H.n
        q1, p1, lam = x[:n], x[n : 2 * n], x[2 * n :]
        dq, dp = q1 - q0, p1 - p0
        q_mid = 0.5 * (q0 + q1)

        def W(q: jax.Array) -> jax.Array:
            """U + P with P = −⟨λ, g⟩ (the plus-sign force)."""
            return H.U(q) - lam @ H.g(q)

        drive = jax.grad(W)(q_mid)  # ∇U(q_½) − B(q_½)ᵀλ
        S = quotients(W(q0), W(q1), drive @ dq, dq @ dq + dp @ dp)
        return jnp.concatenate([dq / h - H.M_inv @ (0.5 * (p0 + p1)) - S * dp, dp / h + drive + S * dq, H.g(q1)])

    def residual(self, x: VectorLike, state: NodeState[Any], h: float) -> jax.Array:
        """The stacked step equations at x from the node ``state`` (zero at the solution), with the
        dynamic rows as the paper prints them."""
        return self._equations(jnp.asarray(x, dtype=float), jnp.asarray(state.g, dtype=float),
                               jnp.asarray(state.mu, dtype=float), jnp.asarray(h, dtype=float))

    def step(self, carry: object, h: jax.Array) -> tuple[object, Node]:
        c, H, n = cast(_Carry, carry), self._H, self._H.n
        guess = jnp.concatenate([H.predictor(c.g, c.mu, h), c.lam])
        outcome = compiled_newton.solve(lambda x: self._equations(x, c.g, c.mu, h), guess, self._newton,
                                        H.equation_size(c.g, c.mu, c.lam, h, 1.0), ordered=True)
        q1, p1, lam1 = outcome.x[:n], outcome.x[n : 2 * n], outcome.x[2 * n :]
        return _Carry(q1, p1, lam1), node(q1, p1, H.M_inv @ p1, lam1, outcome.iterations, outcome.residual,
                                         outcome.status)
