"""The variational Hamilton–Pontryagin RKMK integrator (VPRK) on any configuration space,
unconstrained, with holonomic or with nonholonomic constraints (Martín de Diego & Sato Martín de
Almagro 2018, Theorem 6.1 and §6.2).

One step (g_k, μ_k) ↦ (g_{k+1}, μ_{k+1}): with unknown chart velocities H¹..Hˢ ∈ 𝔤,
    Ξⁱ = h Σ_j a_ij Hʲ,  ξ = h Σ_j b_j Hʲ,  Gⁱ = g_k τ(Ξⁱ),  ηⁱ = dτ(Ξⁱ) Hⁱ,
    fⁱ = f(Gⁱ, ηⁱ) + Bⁱᵀ Λⁱ,  Nⁱ = dτ(Ξⁱ)ᵀ fⁱ,  Πⁱ = dτ(Ξⁱ)ᵀ μ(Gⁱ, ηⁱ),
    μ_{k+1} = Ad(τ(ξ))ᵀ [μ_k + h Σ_j b_j Ad(τ(Ξʲ)⁻¹)ᵀ fʲ]                                   (28)
    Πⁱ + h Σ_j (b_j a_ji / b_i) [Nʲ + ddτ(Ξʲ, Hʲ)ᵀ Πʲ] − dτ(ξ)ᵀ μ_{k+1} = 0,  i = 1..s      (26)
and g_{k+1} = g_k τ(ξ). On Rⁿ (τ = id, Ad = I, ddτ = 0) this is the vector-space VPRK, eq. (9).

Holonomic Φ (B = L*DΦ, §6.1 and eq. (13) of the vector-space scheme): Λ¹..Λˢ are unknown too, and
Φ(Gⁱ) = 0 for i = 2..s and the tangency B(g_{k+1}) ∂h/∂μ (g_{k+1}, μ_{k+1}) = 0 close the system.
Nonholonomic φ (B = ∂φ/∂η, §6.2): Λ¹ = λ_k is carried from the previous step, Λ²..Λˢ are unknown,
and φ(Gⁱ, ∂h/∂μ(Gⁱ, μⁱ)) = 0 for i = 2..s on the IIIA momentum stages
μⁱ = Ad(τ(Ξⁱ))ᵀ[μ_k + h Σ_j a_ij Ad(τ(Ξʲ)⁻¹)ᵀ fʲ]; λ_{k+1} = Λˢ.

Every derivative (f, μ, B, ∂φ/∂η and Newton's Jacobian) comes from automatic differentiation of
ℓ, Φ and φ; the step is compiled once per problem and method.
"""

from collections.abc import Hashable
from typing import Generic, NamedTuple, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.base import RETRACTION_KINDS, Retraction, RetractionKind
from liemech.integrators.compiled import CompiledMethod, CompiledStep, Node, node
from liemech.integrators.method import NodeState, Traits
from liemech.mechanics.problem import Problem
from liemech.mechanics.trivialised import derivative_in_eta, trivialised_jacobian
from liemech.solvers import compiled_newton
from liemech.solvers.newton import NewtonOptions
from liemech.tableaux import TableauPair, check_constrained_hypotheses
from liemech.types import VectorLike

P = TypeVar("P")


class VPRK(CompiledMethod):
    """VPRK(tableau_pair, retraction="cay"): the variational PRK method on a Lie group.

    Only the position tableau (A, b) enters; the momentum tableau is its symplectic conjugate by
    construction. Order: that of the pair (2s − 2 for Lobatto-s, 2s for Gauss-s); symplectic;
    preserves the momentum maps of symmetries of ℓ (and of Φ). A problem with a constraint needs a
    tableau with H1–H3 and H1′–H2′ (Lobatto; s = 2 is RATTLE). With a holonomic constraint
    ``sol.lam[k]`` is the last stage multiplier Λˢ of the step ending at t_k (its stage sits at
    t_k); with a nonholonomic one, the multiplier λ_k carried from step to step. ``sol.lam[0]`` is
    the consistent λ(0) of the continuous equations.
    """

    def __init__(
        self,
        tableau: TableauPair,
        retraction: RetractionKind = "cay",
        newton: NewtonOptions | None = None,
    ) -> None:
        if not isinstance(tableau, TableauPair):
            raise TypeError(f"tableau must be a TableauPair (e.g. lobatto(3)), got {type(tableau).__name__}")
        if retraction not in RETRACTION_KINDS:
            raise ValueError(f"retraction must be one of {RETRACTION_KINDS}, got {retraction!r}")
        if np.any(tableau.b == 0.0):
            raise ValueError(f"tableau {tableau.name}: VPRK divides by b_i, which must all be nonzero")
        self.tableau = tableau
        self.retraction: RetractionKind = retraction
        self.newton = NewtonOptions() if newton is None else newton
        self.name = f"VPRK({tableau.name}, retraction={retraction!r})"

    @property
    def traits(self) -> Traits:
        return Traits(order=self.tableau.order, symplectic=True, conserves_energy=False,
                      conserves_momentum_maps=True,
                      constraints_at_step_end=("position", "velocity", "nonholonomic"))

    @property
    def cache_key(self) -> Hashable:
        return ("VPRK", self.tableau.A.tobytes(), self.tableau.b.tobytes(), self.retraction, self.newton)

    def compiled_step(self, problem: Problem[P]) -> CompiledStep:
        if problem.holonomic is not None or problem.nonholonomic is not None:
            check_constrained_hypotheses(self.tableau)
        scheme = VPRKEquations(self, problem)
        return CompiledStep(scheme.step, scheme.start)


class _Carry(NamedTuple, Generic[P]):
    g: P
    mu: jax.Array
    lam: jax.Array  # λ_k (nonholonomic) or the last stage multiplier (holonomic); empty without
    guess: jax.Array  # Newton's starting point: the previous step's solution


class _Stages(NamedTuple, Generic[P]):
    g_next: P
    mu_next: jax.Array
    residual: jax.Array
    lam_last: jax.Array


class VPRKEquations(Generic[P]):
    """The VPRK step equations of one problem as pure functions of the unknowns
    x = (H¹..Hˢ, free multipliers): ``residual(x, state, h)`` and the ``step`` that solves them."""

    def __init__(self, method: VPRK, problem: Problem[P]) -> None:
        self._newton = method.newton
        self._system = problem.system
        self._group = problem.group
        self._tau: Retraction[P] = self._group.retraction(method.retraction)
        t = method.tableau
        self._A, self._b = jnp.asarray(t.A), jnp.asarray(t.b)
        self._s, self._n = t.stages, self._group.dim
        # C_ij = b_j a_ji / b_i (the boxed residual (26))
        self._C = jnp.asarray((t.b[None, :] * t.A.T) / t.b[:, None])
        self._holonomic = problem.holonomic
        self._nonholonomic = problem.nonholonomic
        self._m = problem.n_constraints
        # The first stage whose multiplier is unknown: Λ¹ = λ_k is carried for nonholonomic constraints.
        self._first_free = 1 if self._nonholonomic is not None else 0

    def start(self, state: NodeState[P]) -> _Carry[P]:
        """The carry at a node; Newton starts from Hʲ = η and Λʲ = λ."""
        s = self._s
        lam = jnp.zeros(0) if state.lam is None else jnp.asarray(state.lam)
        guess = jnp.concatenate([jnp.tile(jnp.asarray(state.eta), s), jnp.tile(lam, s - self._first_free)])
        return _Carry(state.g, jnp.asarray(state.mu), lam, guess)

    def _stages(self, x: jax.Array, g: P, mu: jax.Array, lam_k: jax.Array, h: jax.Array) -> _Stages[P]:
        s, n, m = self._s, self._n, self._m
        group, tau, L = self._group, self._tau, self._system
        H = x[: s * n].reshape(s, n)
        Lam = x[s * n:].reshape(s - self._first_free, m)
        if self._first_free:
            Lam = jnp.concatenate([lam_k[None, :], Lam])
        Xi = h * (self._A @ H)
        xi = h * (self._b @ H)

        def stage(Xi_j: jax.Array, H_j: jax.Array, Lam_j: jax.Array) -> tuple[P, P, jax.Array, jax.Array,
                                                                                 jax.Array, jax.Array]:
            """Gʲ = g τ(Ξʲ) and the stage terms Πʲ, Nʲ + ddτ(Ξʲ, Hʲ)ᵀΠʲ, Ad(τ(Ξʲ)⁻¹)ᵀfʲ, Φ(Gʲ)."""
            T_j = tau.tau(Xi_j)
            A_j = jnp.asarray(tau.dtau(Xi_j))
            G_j = group.compose(g, T_j)
            eta_j = A_j @ H_j
            f_j = jnp.asarray(L.force(G_j, eta_j))
            phi_j = jnp.zeros(0)
            if self._holonomic is not None:
                f_j = f_j + trivialised_jacobian(group, self._holonomic.phi, G_j).T @ Lam_j
                phi_j = self._holonomic.phi(G_j)
            elif self._nonholonomic is not None:
                f_j = f_j + derivative_in_eta(self._nonholonomic.phi, G_j, eta_j).T @ Lam_j
            Pi_j = A_j.T @ jnp.asarray(L.momentum(G_j, eta_j))
            ND_j = A_j.T @ f_j + jnp.asarray(tau.ddtau(Xi_j, H_j)).T @ Pi_j
            pulled_j = jnp.asarray(group.Ad(group.inverse(T_j))).T @ f_j
            return T_j, G_j, Pi_j, ND_j, pulled_j, phi_j

        # One traced stage, batched over the s stages: s times less to compile than a loop.
        T, G, Pi, ND, pulled, phi = jax.vmap(stage)(Xi, H, Lam)
        T_xi = tau.tau(xi)
        mu_next = jnp.asarray(group.Ad(T_xi)).T @ (mu + h * (self._b @ pulled))  # (28)
        g_next = group.compose(g, T_xi)
        rows = [(Pi + h * (self._C @ ND) - jnp.asarray(tau.dtau(xi)).T @ mu_next).ravel()]
        if self._holonomic is not None:
            v_next = jnp.asarray(L.velocity(g_next, mu_next))
            rows += [phi[1:].ravel(), trivialised_jacobian(group, self._holonomic.phi, g_next) @ v_next]
        elif self._nonholonomic is not None:
            constraint = self._nonholonomic

            def momentum_stage(T_i: P, G_i: P, A_i: jax.Array) -> jax.Array:
                """φ(Gⁱ, ∂h/∂μ(Gⁱ, μⁱ)) on the IIIA momentum stage μⁱ."""
                mu_i = jnp.asarray(group.Ad(T_i)).T @ (mu + h * (A_i @ pulled))
                return constraint.phi(G_i, jnp.asarray(L.velocity(G_i, mu_i)))

            T_later, G_later = jax.tree.map(lambda a: a[1:], (T, G))
            rows.append(jax.vmap(momentum_stage)(T_later, G_later, self._A[1:]).ravel())
        return _Stages(g_next, mu_next, jnp.concatenate(rows), Lam[-1])

    def residual(self, x: VectorLike, state: NodeState[P], h: float) -> jax.Array:
        """The stacked step equations at x from the node ``state`` (zero at the solution)."""
        c = self.start(state)
        return self._stages(jnp.asarray(x), c.g, c.mu, c.lam, jnp.asarray(h)).residual

    def step(self, carry: object, h: jax.Array) -> tuple[object, Node]:
        c = cast(_Carry[P], carry)
        outcome = compiled_newton.solve(lambda x: self._stages(x, c.g, c.mu, c.lam, h).residual, c.guess,
                                        self._newton, jnp.max(jnp.abs(c.mu)))
        end = self._stages(outcome.x, c.g, c.mu, c.lam, h)
        eta_next = jnp.asarray(self._system.velocity(end.g_next, end.mu_next))
        lam_next = end.lam_last if self._m else c.lam
        return _Carry(end.g_next, end.mu_next, lam_next, outcome.x), node(
            end.g_next, end.mu_next, eta_next, lam_next, outcome.iterations, outcome.residual, outcome.status)
