"""What the embedded-coordinate schemes of Leyendecker, Betsch & Steinmann (2004) and
Rojas-Quintero, Dubois & Jourdan (2025) share: problems on Rⁿ, checked once, and the state of an
unconstrained scheme at a node."""

from abc import abstractmethod
from typing import Any, Final, NamedTuple, TypeVar, cast

import jax
import jax.numpy as jnp

from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.methods.compiled import CompiledMethod, CompiledStep
from liemech.methods.method import NodeState, Scope, check_scope
from liemech.types import Matrix, VectorLike

P = TypeVar("P")


UNCONSTRAINED_RN: Final = Scope(groups="Rn", holonomic="refused", nonholonomic="refused")
"""The problems of the schemes of Rojas-Quintero, Dubois & Jourdan (2025): any Lagrangian on Rⁿ,
without constraints."""

CONSTRAINED_RN: Final = Scope(groups="Rn", holonomic="required", nonholonomic="refused", inertia="constant")
"""The problems of the schemes of Kinon, Betsch & Schneider (2023) and Leyendecker, Betsch &
Steinmann (2004): ½vᵀMv − V(q) on Rⁿ with constant M and holonomic constraints."""


class UnconstrainedRnMethod(CompiledMethod):
    """A compiled method for unconstrained problems on Rⁿ (Rojas-Quintero, Dubois & Jourdan 2025);
    other problems get a clear error."""

    @property
    def scope(self) -> Scope:
        return UNCONSTRAINED_RN

    def compiled_step(self, problem: Problem[P]) -> CompiledStep:
        self.check(problem)
        return self.unconstrained_step(problem)

    @abstractmethod
    def unconstrained_step(self, problem: Problem[P]) -> CompiledStep:
        """The pure step for ``problem``, unconstrained on Rⁿ."""


def rn_lagrangian(problem: Problem[P]) -> Lagrangian[jax.Array]:
    """The problem's Lagrangian, whose points on Rⁿ are (traced) arrays inside a step."""
    return cast(Lagrangian[jax.Array], problem.system)


class FlatCarry(NamedTuple):
    """The state of an unconstrained scheme at a node: q_j, p_j, q̇_j and no multipliers."""

    g: jax.Array
    mu: jax.Array
    lam: jax.Array  # always empty
    eta: jax.Array


def flat_carry(state: NodeState[Any]) -> FlatCarry:
    """The carry at a node (traceable)."""
    return FlatCarry(jnp.asarray(state.g, dtype=float), jnp.asarray(state.mu, dtype=float), jnp.zeros(0),
                     jnp.asarray(state.eta, dtype=float))


def equation_scale(lagrangian: Lagrangian[jax.Array], c: FlatCarry, h: jax.Array) -> jax.Array:
    """The size of the terms of the step equations, ‖p_j‖∞ and h‖f(q_j, q̇_j)‖∞: Newton's round-off
    test is relative to it (never to the size of q, whose cyclic angles grow without bound)."""
    return jnp.maximum(jnp.max(jnp.abs(c.mu)), h * jnp.max(jnp.abs(lagrangian.force(c.g, c.eta))))


def constrained_mechanics(problem: Problem[P], method_name: str) -> tuple[
        MechanicalSystem[VectorLike], HolonomicConstraint[VectorLike], Matrix]:
    """The system, constraint and constant mass matrix of a problem for the schemes of Kinon,
    Betsch & Schneider and of Leyendecker, Betsch & Steinmann: ½pᵀM⁻¹p + V(q) on Rⁿ with constant
    M and a holonomic constraint g(q) = 0 (TypeError or ValueError naming ``method_name`` else)."""
    check_scope(CONSTRAINED_RN, problem, method_name)
    # On Rn a point is a vector: a numpy array from the caller, a JAX array in the step.
    system = cast(MechanicalSystem[VectorLike], problem.system)
    assert system.constant_inertia is not None
    return system, cast(HolonomicConstraint[VectorLike], problem.holonomic), system.constant_inertia
