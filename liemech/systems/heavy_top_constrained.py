"""The heavy top as a free rigid body on SO(3) × R³ held at its pivot by Φ(R, x) = x − Rχ
(a test of Martín de Diego & Sato Martín de Almagro 2018, §6.3): ℓ = ½ ωᵀ𝕀_c ω + ½ m |v|² − m g e₃·x,
with x the centre of mass.

Eliminating the constraint gives the heavy top of ``heavy_top.py`` with the pivot inertia
𝕀 = 𝕀_c + m(|χ|² I − χχᵀ) and mg = m·g: its DOP853 solution is the reference.
"""

from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.euclidean import Rn
from liemech.groups.product import ProductGroup
from liemech.groups.so3 import SO3, exp_matrix, skew
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.systems.heavy_top import HeavyTop
from liemech.types import Matrix, Tensor, Vector
from liemech.systems.built_once import built_once

_BASIS_HATS = np.stack([skew(e) for e in np.eye(3)])


@dataclass(frozen=True)
class ConstrainedHeavyTop:
    """Defaults: 𝕀_c = diag(0.6, 1.2, 1.7), m = 1.5, g = 1, χ = (0.2, −0.1, 0.6), R₀ = exp(0.3, −0.5, 0.2),
    ω₀ = (0.8, −0.4, 1.1), T = 2."""

    inertia_centre: Matrix = field(default_factory=lambda: np.diag([0.6, 1.2, 1.7]))
    mass: float = 1.5
    gravity: float = 1.0
    chi: Vector = field(default_factory=lambda: np.array([0.2, -0.1, 0.6]))
    rotation0: Vector = field(default_factory=lambda: np.array([0.3, -0.5, 0.2]))
    omega0: Vector = field(default_factory=lambda: np.array([0.8, -0.4, 1.1]))
    t_final: float = 2.0

    @property
    def group(self) -> ProductGroup[tuple[Matrix, Vector]]:
        return ProductGroup(SO3(), Rn(3))

    def reduced(self) -> HeavyTop:
        """The same top about its pivot, on SO(3)."""
        c = self.chi
        pivot = self.inertia_centre + self.mass * (float(c @ c) * np.eye(3) - np.outer(c, c))
        return HeavyTop(inertia=pivot, chi=c, mg=self.mass * self.gravity, rotation0=self.rotation0,
                        omega0=self.omega0, t_final=self.t_final)

    def pivot(self, g: tuple[Matrix, Vector]) -> jax.Array:
        """Φ(R, x) = x − Rχ, traceable by JAX."""
        R, x = jnp.asarray(g[0]), jnp.asarray(g[1])
        return x - R @ self.chi

    def pivot_jacobian(self, g: tuple[Matrix, Vector]) -> Matrix:
        """B = [R χ̂, I₃]."""
        return np.hstack([np.asarray(g[0]) @ skew(self.chi), np.eye(3)])

    def pivot_hessians(self, g: tuple[Matrix, Vector]) -> Tensor:
        """d/dε (R τ(εζ) χ̂) = R ζ̂ χ̂ in the rotation block, zero elsewhere."""
        out = np.zeros((3, 6, 6))
        out[:, :3, :3] = np.einsum("ki,bij->kjb", np.asarray(g[0]), _BASIS_HATS @ skew(self.chi))
        return out

    @built_once
    def constraint(self) -> HolonomicConstraint[tuple[Matrix, Vector]]:
        """Φ = x − Rχ; B = [R χ̂, I₃]; Hessians d/dε (R τ(εζ) χ̂) = R ζ̂ χ̂ in the rotation block."""
        return HolonomicConstraint(self.pivot, self.pivot_jacobian, self.pivot_hessians)

    def potential(self, g: tuple[Matrix, Vector]) -> jax.Array:
        """V = m g e₃·x, traceable by JAX."""
        return self.mass * self.gravity * jnp.asarray(g[1])[2]

    def potential_gradient(self, g: tuple[Matrix, Vector]) -> Vector:
        return np.array([0.0, 0.0, 0.0, 0.0, 0.0, self.mass * self.gravity])

    @staticmethod
    def potential_hessian(g: tuple[Matrix, Vector]) -> Matrix:
        return np.zeros((6, 6))

    @built_once
    def system(self) -> MechanicalSystem[tuple[Matrix, Vector]]:
        inertia = np.zeros((6, 6))
        inertia[:3, :3] = self.inertia_centre
        inertia[3:, 3:] = self.mass * np.eye(3)
        return MechanicalSystem(self.group, inertia, potential=self.potential,
                                potential_gradient=self.potential_gradient, potential_hessian=self.potential_hessian)

    def problem(self) -> Problem[tuple[Matrix, Vector]]:
        """R₀, x₀ = R₀χ, body ω₀ and ẋ₀ = R₀(ω₀ × χ): consistent with Φ and its tangency."""
        R0 = exp_matrix(self.rotation0)
        eta0 = np.concatenate([self.omega0, R0 @ (skew(self.omega0) @ self.chi)])
        return Problem(self.system(), (R0, R0 @ self.chi), eta0, holonomic=self.constraint())
