"""The energy-conserving penalty scheme of Leyendecker, Betsch & Steinmann (2004, eq. (24) in the
form of eq. (39)) for
H = ½pᵀM⁻¹p + U(q) + μ|g(q)|² on Rⁿ:

    (q₁ − q₀)/h = M⁻¹p_{½}
    (p₁ − p₀)/h = −D̄U(q₀, q₁) − μ Σ_i (g_i(q₀) + g_i(q₁)) D̄g_i(q₀, q₁)

with D̄ the Gonzalez discrete derivative (19) on Rⁿ; (g_i(q₀) + g_i(q₁)) D̄g_i is an exact discrete
derivative of g_i², so H + μ|g|² is conserved to round-off. The rods become springs of stiffness
μ; as μ → ∞ the solution tends to the Lagrange-multiplier one and −μ(g(q₀) + g(q₁)) to its λ
(Prop. 3.2). ``sol.extras["penalty_multiplier"]`` holds that estimate, one row per step, at the
step's midpoint t_{k+½}.
"""

from collections.abc import Hashable
from typing import Any, Literal, NamedTuple, SupportsFloat, TypeVar, cast

import jax
import jax.numpy as jnp

from liemech.mechanics.problem import Problem
from liemech.methods.compiled import Node, node
from liemech.methods.discrete_gradient.base import ConstrainedHamiltonian, EnergyConservingMethod, checked_penalty
from liemech.methods.method import NodeState
from liemech.numerics.discrete_derivative import quotients
from liemech.solvers import compiled_newton
from liemech.solvers.newton import NewtonOptions, newton_options
from liemech.types import VectorLike

P = TypeVar("P")

PenaltyVariant = Literal["midpoint", "endpoint"]


class DiscreteGradientPenalty(EnergyConservingMethod):
    """Energy-conserving penalty method with parameter μ > 0 (order 2), on Rⁿ with constant mass."""

    exact_constraint = False

    def __init__(self, mu: SupportsFloat, newton: NewtonOptions | None = None) -> None:
        self.mu = checked_penalty(mu)
        self.newton = newton_options(newton, NewtonOptions(jacobian="every"))
        self.name = f"DiscreteGradientPenalty(mu={self.mu:g})"

    @property
    def cache_key(self) -> Hashable:
        return ("DiscreteGradientPenalty", self.newton)  # μ is an argument of the step (PenaltyCarry)

    def equations(self, problem: Problem[P]) -> "PenaltyEquations":
        return PenaltyEquations(problem, self.mu, self.newton, "midpoint", self.name)



class PenaltyCarry(NamedTuple):
    """What a penalty or augmented-Lagrange step carries from node to node."""

    g: jax.Array  # q
    mu: jax.Array  # p
    lam: jax.Array  # the node's effective multiplier (augmented Lagrange); empty for the penalty scheme
    penalty: jax.Array  # μ: an argument of the compiled step, not a constant in it, so a new μ does not recompile


class Subproblem(NamedTuple):
    """The data of one penalty step: its start (q₀, p₀), the fixed multiplier λ (the paper's sign;
    zero for the penalty scheme) and μ."""

    q0: jax.Array
    p0: jax.Array
    lam: jax.Array
    penalty: jax.Array


class PenaltyEquations:
    """The penalty step equations of one problem as pure functions of the unknowns x = (q₁, p₁),
    with an optional fixed multiplier λ (the augmented-Lagrange subproblem (29)): the constraint
    force is a discrete derivative of P = ⟨λ, g⟩ + μ|g|².

    ``variant="midpoint"`` (eq. (39)/(40)): Σ_i (λ_i + μ(g_i(q₀) + g_i(q₁))) D̄g_i(q₀, q₁).
    ``variant="endpoint"`` (the modified derivative D̂ of eq. (31)): ∇g(q_½)ᵀ(λ + 2μ g(q₁)) plus the
    Gonzalez correction that makes it exact for P; its limit satisfies g(q₁) = 0 rather than the
    mean of g over the step.
    """

    def __init__(self, problem: Problem[P], mu: float, newton: NewtonOptions, variant: PenaltyVariant,
                 method_name: str) -> None:
        self.hamiltonian = ConstrainedHamiltonian(problem, method_name)
        self._mu, self._newton, self._variant = mu, newton, variant

    def start(self, state: NodeState[Any], lam: VectorLike | None = None) -> PenaltyCarry:
        """The carry at a node with μ; ``lam``, the node's multiplier, is carried by the
        augmented-Lagrange scheme (the penalty scheme reports none)."""
        return PenaltyCarry(jnp.asarray(state.g, dtype=float), jnp.asarray(state.mu, dtype=float),
                            jnp.zeros(0) if lam is None else jnp.asarray(lam, dtype=float), jnp.asarray(self._mu))

    def subproblem(self, state: NodeState[Any], lam: VectorLike | None = None) -> Subproblem:
        """The step from the node ``state`` with the fixed multiplier λ (zero when None) and this μ."""
        return Subproblem(jnp.asarray(state.g, dtype=float), jnp.asarray(state.mu, dtype=float),
                          jnp.zeros(self.hamiltonian.m) if lam is None else jnp.asarray(lam, dtype=float),
                          jnp.asarray(self._mu))

    def _force(self, sub: Subproblem, q1: jax.Array) -> jax.Array:
        """D̄U(q₀, q₁) plus the discrete derivative of P = ⟨λ, g⟩ + μ|g|² along q₀ → q₁, each of the
        form (19), Df(q_½) + S (q₁ − q₀): with w = λ + μ(g(q₀) + g(q₁)) (midpoint) or λ + 2μ g(q₁)
        (endpoint), the sum is ∇(U + w·g)(q_½) + (S_U + S_P)(q₁ − q₀), S_P = w·S_g (midpoint: the
        quotients of each g_i) or the quotient of P itself (endpoint)."""
        H, q0, lam, mu = self.hamiltonian, sub.q0, sub.lam, sub.penalty
        g0, g1 = H.g(q0), H.g(q1)
        step, mid = q1 - q0, 0.5 * (q0 + q1)
        squared = step @ step
        w = lam + (mu * (g0 + g1) if self._variant == "midpoint" else 2.0 * mu * g1)
        U_step, g_step = jax.jvp(lambda q: (H.U(q), H.g(q)), (mid,), (step,))[1]  # DU(q_½)Δq, Dg(q_½)Δq
        S_U = quotients(H.U(q0), H.U(q1), U_step, squared)
        if self._variant == "midpoint":
            S_P = w @ quotients(g0, g1, g_step, squared)
        else:
            S_P = quotients(lam @ g0 + mu * (g0 @ g0), lam @ g1 + mu * (g1 @ g1), w @ g_step, squared)
        gradient: jax.Array = jax.grad(lambda q: H.U(q) + w @ H.g(q))(mid)
        return gradient + (S_U + S_P) * step

    def _equations(self, x: jax.Array, sub: Subproblem, h: jax.Array) -> jax.Array:
        H, n = self.hamiltonian, self.hamiltonian.n
        q1, p1 = x[:n], x[n:]
        return jnp.concatenate([(q1 - sub.q0) / h - H.M_inv @ (0.5 * (sub.p0 + p1)),
                                (p1 - sub.p0) / h + self._force(sub, q1)])

    def residual(self, x: VectorLike, state: NodeState[Any], h: float, lam: VectorLike | None = None) -> jax.Array:
        """The stacked step equations at x from the node ``state`` (zero at the solution), with the
        dynamic rows as the paper prints them; ``lam`` is the fixed multiplier of the subproblem
        (29) (none for the penalty scheme)."""
        return self._equations(jnp.asarray(x, dtype=float), self.subproblem(state, lam), jnp.asarray(h, dtype=float))

    def solve(self, sub: Subproblem, guess: jax.Array, h: jax.Array) -> compiled_newton.NewtonOutcome:
        """x = (q₁, p₁) of the subproblem, by Newton from ``guess``."""
        # μ g(q) carries round-off μ·eps·|q|²: that, not |x|, sets the attainable residual.
        scale = self.hamiltonian.equation_size(sub.q0, sub.p0, sub.lam, h, sub.penalty)
        return compiled_newton.solve(lambda x: self._equations(x, sub, h), guess, self._newton, scale, ordered=True)

    def multiplier_estimate(self, sub: Subproblem, q1: jax.Array) -> jax.Array:
        """The effective multiplier of the step in liemech's sign: −(λ + μ(g(q₀) + g(q₁))) (midpoint
        variant) or −(λ + 2μ g(q₁)) (endpoint variant)."""
        g0, g1 = self.hamiltonian.g(sub.q0), self.hamiltonian.g(q1)
        return -(sub.lam + sub.penalty * (g0 + g1 if self._variant == "midpoint" else 2.0 * g1))

    def step(self, carry: object, h: jax.Array) -> tuple[object, Node]:
        """The penalty scheme's step (λ = 0)."""
        c, H = cast(PenaltyCarry, carry), self.hamiltonian
        sub = Subproblem(c.g, c.mu, jnp.zeros(H.m), c.penalty)
        outcome = self.solve(sub, H.predictor(c.g, c.mu, h), h)
        q1, p1 = outcome.x[: H.n], outcome.x[H.n :]
        extras = {"penalty_multiplier": self.multiplier_estimate(sub, q1)}
        return c._replace(g=q1, mu=p1), node(q1, p1, H.M_inv @ p1, c.lam, outcome.iterations, outcome.residual,
                                             outcome.status, extras)
