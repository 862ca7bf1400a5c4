"""What the embedded-coordinate schemes of papers 001 and 002 share: problems on Rⁿ, checked once,
and the state of an unconstrained scheme at a node."""

from abc import abstractmethod
from typing import Any, NamedTuple, TypeVar, cast

import jax
import jax.numpy as jnp

from liemech.groups.euclidean import Rn
from liemech.integrators.compiled import CompiledMethod, CompiledStep
from liemech.integrators.method import NodeState
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.types import Matrix, VectorLike

P = TypeVar("P")


def require_rn(problem: Problem[P], method_name: str) -> None:
    """TypeError unless the problem lives on Rⁿ."""
    if not isinstance(problem.group, Rn):
        raise TypeError(f"{method_name} works on Rn(n) configuration spaces, got {problem.group!r}")


class UnconstrainedRnMethod(CompiledMethod):
    """A compiled method for unconstrained problems on Rⁿ (paper 002); other problems get a clear
    error."""

    def compiled_step(self, problem: Problem[P]) -> CompiledStep:
        require_rn(problem, self.name)
        if problem.holonomic is not None:
            raise ValueError(f"{self.name} does not handle holonomic constraints; use VPRK(lobatto(s))")
        if problem.nonholonomic is not None:
            raise ValueError(f"{self.name} does not handle nonholonomic constraints; use VPRK(lobatto(s))")
        return self.unconstrained_step(problem)

    @abstractmethod
    def unconstrained_step(self, problem: Problem[P]) -> CompiledStep:
        """The pure step for ``problem``, unconstrained on Rⁿ."""


def rn_lagrangian(problem: Problem[P]) -> Lagrangian[jax.Array]:
    """The problem's Lagrangian, whose points on Rⁿ are (traced) arrays inside a step."""
    return cast(Lagrangian[jax.Array], problem.system)


class FlatCarry(NamedTuple):
    """The state of a paper-002 scheme at a node: q_j, p_j, q̇_j and no multipliers."""

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
    require_rn(problem, method_name)
    if problem.holonomic is None:
        raise ValueError(f"{method_name} needs a holonomic constraint (Problem(..., holonomic=...))")
    system = problem.system
    if not isinstance(system, MechanicalSystem) or system.constant_inertia is None:
        raise TypeError(f"{method_name} needs a MechanicalSystem with a constant inertia matrix")
    # On Rn a point is a vector: a numpy array from the caller, a JAX array in the step.
    return (cast(MechanicalSystem[VectorLike], system), cast(HolonomicConstraint[VectorLike], problem.holonomic),
            system.constant_inertia)
