"""What the energy-conserving schemes of Leyendecker, Betsch & Steinmann (2004) share: the problems
they take, H = ½pᵀM⁻¹p + U(q) on Rⁿ with constant M and holonomic constraints g(q) = 0, their
traits, and the size of their step equations, which sets Newton's round-off level.

Every scheme writes its step equations once, with ``jax.numpy``, from U and g; their derivatives
and Newton's Jacobian come from automatic differentiation.
"""

from abc import abstractmethod
from typing import Any, Protocol, TypeVar

import jax
import jax.numpy as jnp
import numpy as np

from liemech.input_checks import checked_real
from liemech.mechanics.problem import Problem
from liemech.methods.compiled import CompiledMethod, CompiledStep, Node
from liemech.methods.flat import CONSTRAINED_RN, constrained_mechanics
from liemech.methods.method import NodeState, Scope, Traits

P = TypeVar("P")


class StepEquations(Protocol):
    """A scheme's step equations for one problem: the pure step and the carry at a node."""

    def step(self, carry: object, h: jax.Array) -> tuple[object, Node]: ...

    def start(self, state: NodeState[Any]) -> object: ...


class EnergyConservingMethod(CompiledMethod):
    """A discrete-gradient method of Leyendecker, Betsch & Steinmann (2004): second order,
    energy-conserving, not symplectic, on Rⁿ with constant mass and holonomic constraints. Momentum
    maps are not conserved in general: the generic Gonzalez quotient S (y − x) is not equivariant
    (they are when U and g are quadratic, where S vanishes, as in the paper's examples)."""

    exact_constraint = True
    """Whether g(q_{n+1}) = 0 holds to round-off (not for the penalty and augmented-Lagrange schemes)."""

    @property
    def traits(self) -> Traits:
        return Traits(order=2, symplectic=False, conserves_energy=True, conserves_momentum_maps=False,
                      constraints_at_step_end=("position",) if self.exact_constraint else ())

    @property
    def scope(self) -> Scope:
        return CONSTRAINED_RN

    @abstractmethod
    def equations(self, problem: Problem[P]) -> StepEquations:
        """The step equations for ``problem`` (TypeError or ValueError if the scheme cannot take it)."""

    def compiled_step(self, problem: Problem[P]) -> CompiledStep:
        equations = self.equations(problem)
        return CompiledStep(equations.step, equations.start)


class ConstrainedHamiltonian:
    """H = ½pᵀM⁻¹p + U(q) with g(q) = 0 on Rⁿ, from a problem checked for it (TypeError or
    ValueError naming ``method_name`` otherwise), as traceable functions of the point."""

    def __init__(self, problem: Problem[P], method_name: str) -> None:
        self._system, self._constraint, M = constrained_mechanics(problem, method_name)
        self.M_inv = jnp.asarray(np.linalg.inv(M))
        self.n, self.m = problem.group.dim, problem.n_constraints

    def U(self, q: jax.Array) -> jax.Array:
        """The potential U(q), a 0-d array."""
        return jnp.asarray(self._system.potential_value(q))

    def g(self, q: jax.Array) -> jax.Array:
        """The constraints g(q), shape (m,)."""
        return self._constraint.phi(q)

    def predictor(self, q0: jax.Array, p0: jax.Array, h: jax.Array) -> jax.Array:
        """Newton's start (q₀ + h M⁻¹p₀, p₀): explicit, since every quotient S is 0/0 at Δz = 0."""
        return jnp.concatenate([q0 + h * (self.M_inv @ p0), p0])

    def equation_size(self, q0: jax.Array, p0: jax.Array, lam: jax.Array, h: jax.Array,
                      constraint_weight: float | jax.Array) -> jax.Array:
        """The size of the terms of the step equations at the step's start, which sets the
        round-off of their residual: (q₁ − q₀)/h carries eps·|q|/h, (p₁ − p₀)/h eps·|p|/h, and
        c·g(q), with c = 1 for g(q₁) = 0 or μ in a penalty force, carries c·eps·|q|² — far more
        than the force c·g ≈ λ itself when μ is large. Never the size of the unknowns alone."""
        force = jax.grad(lambda q: lam @ self.g(q))(q0)  # Dg(q₀)ᵀλ
        terms = jnp.concatenate([q0 / h, p0 / h, self.M_inv @ p0, jax.grad(self.U)(q0), force])
        return jnp.maximum(jnp.max(jnp.abs(terms)), constraint_weight * (q0 @ q0))


def checked_penalty(mu: object) -> float:
    """μ as a positive finite float, or ValueError."""
    return checked_real(mu, "mu", 0.0, requirement="be a positive finite penalty parameter")
