"""Lobatto-2 VPRK with holonomic constraints solved as RATTLE is: a position stage, then a velocity stage.

For a two-stage tableau with A = [[0, 0], [b₁, b₂]] (Lobatto IIIA, s = 2), Ξ¹ = 0 and Ξ² = ξ, so
the step equations (26) of Martín de Diego & Sato Martín de Almagro (2018) for i = 1 and i = 2
differ only in Πⁱ (C_i1 = 0, C_12 = C_22 = b₂), and by (28)

    dτ(ξ)ᵀ μ_{k+1} = dτ(ξ)ᵀ Ad(τ(ξ))ᵀ (μ_k + h b₁ f¹) + h b₂ dτ(ξ)ᵀ f²,

whose last term is the one of h b₂ N² in (26). The stage force f², and with it Λ², drop out:

    Π¹ + h b₂ ddτ(ξ, H²)ᵀ Π² − dτ(ξ)ᵀ Ad(τ(ξ))ᵀ (μ_k + h b₁ f¹) = 0,
    Π² − Π¹ = 0,                                                         (position stage)
    Φ(g_k τ(ξ)) = 0,

in H¹ = y¹, H² = y² − y¹ (ξ = h b₂ y², the unknowns of ``step_pattern``'s local layout) and Λ¹,
with f¹ = f(g_k, H¹) + F(g_k, H¹, t_k) + B(g_k)ᵀΛ¹, Π¹ = μ(g_k, H¹), Π² = dτ(ξ)ᵀ μ(g_{k+1}, η²) and
η² = dτ(ξ) H². Then, with ν = μ_{k+1} by (28),

    ν − Ad(τ(ξ))ᵀ (μ_k + h b₁ f¹) − h b₂ [f(g_{k+1}, η²) + F(g_{k+1}, η², t_{k+1}) + B(g_{k+1})ᵀΛ²] = 0,
    B(g_{k+1}) ∂h/∂μ(g_{k+1}, ν) = 0                                     (velocity stage)

in Λ² and ν, linear for a kinetic energy quadratic in the velocities (Newton ends in one step).
This is how RATTLE (Andersen 1983) splits the Lobatto IIIA–IIIB pair on Rⁿ; on a Lie group the
position stage keeps the stage velocities, which the retraction's dτ(ξ) ties together. The roots
are those of the whole step: in these rows the step's Jacobian is block lower triangular, with
its leading and trailing principal blocks those of the whole step's pattern, each solved on its
own block tree. A chain's bodies then carry 17 and 11 unknowns instead of 28, and inverting a
block costs its size cubed.
"""

from typing import Any, Generic, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from numpy.typing import NDArray

from liemech.groups.base import LieGroup, Retraction
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.problem import ExternalForce
from liemech.mechanics.trivialised import trivialised_jvp, trivialised_vjp
from liemech.methods.vprk.stage_force import stage_force
from liemech.numerics.block_tree import TreeStructure
from liemech.solvers import compiled_newton
from liemech.solvers.newton import NewtonOptions

P = TypeVar("P")


def splits(A: NDArray[np.float64], b: NDArray[np.float64]) -> bool:
    """Whether the tableau is of the two-stage kind above: A = [[0, 0], [b₁, b₂]]."""
    return A.shape == (2, 2) and bool(np.all(A[0] == 0.0) and np.all(A[1] == b))


class StagesOutcome(NamedTuple, Generic[P]):
    """The whole step's unknowns x = (y¹, y², Λ¹, Λ², ν), the node reached, the external force's
    work over the step, and Newton's record: iterations of both stages, the larger residual, the
    first status that is not convergence, and the factors each stage ended with."""

    x: jax.Array
    g_next: P
    mu_next: jax.Array
    lam_next: jax.Array
    work: jax.Array
    iterations: jax.Array
    residual: jax.Array
    status: jax.Array
    factors: Any


class _Kicked(NamedTuple, Generic[P]):
    """What the velocity stage takes from the position stage: g_{k+1} and ν at Λ² = 0."""

    g_next: P
    momentum: jax.Array
    work: jax.Array


class RattleStages(Generic[P]):
    """The two stages of one holonomic problem, each solved by Newton on its block tree."""

    def __init__(self, group: LieGroup[P], tau: Retraction[P], system: Lagrangian[P],
                 holonomic: HolonomicConstraint[P], force: ExternalForce[P] | None, b: NDArray[np.float64],
                 trees: tuple[TreeStructure, TreeStructure], newton: NewtonOptions) -> None:
        self._group, self._tau, self._system, self._phi, self._force = group, tau, system, holonomic.phi, force
        self._b1, self._b2 = float(b[0]), float(b[1])
        self._position_tree, self._velocity_tree = trees
        self._newton = newton
        self._n = group.dim
        self._m = trees[1].size - self._n

    def unset_factors(self, x: jax.Array) -> tuple[Any, Any]:
        """Each stage's unset factors (``compiled_newton.unset_factors``) for the unknowns x."""
        position, velocity = jnp.split(x, [self._position_tree.size])
        return (compiled_newton.unset_factors(position, self._position_tree),
                compiled_newton.unset_factors(velocity, self._velocity_tree))

    def _position(self, y1: jax.Array, y2: jax.Array, lam1: jax.Array, g: P, mu: jax.Array, t: jax.Array,
                  h: jax.Array) -> tuple[jax.Array, _Kicked[P]]:
        """The position stage's rows, and what the velocity stage takes from it."""
        group, tau, L = self._group, self._tau, self._system
        H2, xi = y2 - y1, h * self._b2 * y2
        T = tau.tau(xi)
        g_next = group.compose(g, T)
        f1, power1 = stage_force(L, self._force, g, y1, t)
        f1 = f1 + trivialised_vjp(group, self._phi, g, lam1)
        kicked = jnp.asarray(group.Ad_star(T, mu + h * self._b1 * f1))
        Pi1 = jnp.asarray(L.momentum(g, y1))
        eta2 = jnp.asarray(tau.dtau_times(xi, H2))
        momentum2 = jnp.asarray(L.momentum(g_next, eta2))
        Pi2 = jnp.asarray(tau.dtau_star(xi, momentum2))
        rows = jnp.concatenate([Pi1 + h * self._b2 * jnp.asarray(tau.dtau_derivative_star(xi, H2, momentum2))
                                - jnp.asarray(tau.dtau_star(xi, kicked)), Pi2 - Pi1, jnp.asarray(self._phi(g_next))])
        f2, power2 = stage_force(L, self._force, g_next, eta2, t + h)
        return rows, _Kicked(g_next, kicked + h * self._b2 * f2, h * (self._b1 * power1 + self._b2 * power2))

    def _velocity(self, lam2: jax.Array, nu: jax.Array, kicked: _Kicked[P], h: jax.Array) -> tuple[
            jax.Array, jax.Array]:
        """The velocity stage's rows, and μ_{k+1} by (28)."""
        g_next = kicked.g_next
        mu_next = kicked.momentum + h * self._b2 * trivialised_vjp(self._group, self._phi, g_next, lam2)
        tangency = trivialised_jvp(self._group, self._phi, g_next, jnp.asarray(self._system.velocity(g_next, nu)))
        return jnp.concatenate([tangency, nu - mu_next]), mu_next

    def solve(self, g: P, mu: jax.Array, t: jax.Array, guess: jax.Array, h: jax.Array, factors: Any) -> StagesOutcome[P]:
        """Both stages from Newton's ``guess`` of the whole step's unknowns, and ``factors``: None,
        or the factors each stage ended with in the last step (``NewtonOptions(jacobian="carried")``)."""
        n, m, scale = self._n, self._m, jnp.max(jnp.abs(mu))
        position_guess, velocity_guess = jnp.split(guess, [self._position_tree.size])
        carried = (None, None) if factors is None else factors

        def position_rows(y1: jax.Array, y2: jax.Array, lam1: jax.Array) -> jax.Array:
            return self._position(y1, y2, lam1, g, mu, t, h)[0]

        position = compiled_newton.solve(position_rows, position_guess, self._newton, scale, self._position_tree,
                                         carried=carried[0])
        y1, y2, lam1 = jnp.split(position.x, [n, 2 * n])
        kicked = self._position(y1, y2, lam1, g, mu, t, h)[1]
        velocity = compiled_newton.solve(lambda lam2, nu: self._velocity(lam2, nu, kicked, h)[0], velocity_guess,
                                         self._newton, scale, self._velocity_tree, carried=carried[1])
        lam2, nu = jnp.split(velocity.x, [m])
        mu_next = self._velocity(lam2, nu, kicked, h)[1]
        positioned = position.status == compiled_newton.Status.CONVERGED
        return StagesOutcome(
            jnp.concatenate([position.x, velocity.x]), kicked.g_next, mu_next, lam2, kicked.work,
            position.iterations + velocity.iterations,
            jnp.where(positioned, jnp.maximum(position.residual, velocity.residual), position.residual),
            jnp.where(positioned, velocity.status, position.status),
            None if factors is None else (position.factors, velocity.factors))
