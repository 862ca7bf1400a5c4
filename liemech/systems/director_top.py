"""The heavy symmetric top in the director formulation (Leyendecker, Betsch & Steinmann 2004, §4.2):
q = (d₁, d₂, d₃) ∈ R⁹, the body axes, with T = ½ Σ_i E_i |ḋ_i|², U = M g ℓ e₃·d₃ (fixed point at
the origin, gravity along −e₃) and the six orthonormality constraints
g = (½(|d₁|² − 1), ½(|d₂|² − 1), ½(|d₃|² − 1), d₁·d₂, d₁·d₃, d₂·d₃).

The paper takes its parameters from Betsch & Steinmann (2001), which is not available here; the
defaults below are ours. With J = diag(E₂+E₃, E₁+E₃, E₁+E₂) about the fixed point this is the heavy
top on SO(3) with R = [d₁ d₂ d₃] and χ = ℓe₃, whose DOP853 solution is the reference.
"""

import functools
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.euclidean import Rn
from liemech.groups.so3 import exp_matrix, skew
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.systems.heavy_top import HeavyTop
from liemech.types import Matrix, Tensor, Vector
from liemech.systems.built_once import built_once

ORTHONORMALITY_PAIRS = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))
"""(i, j) of the six orthonormality constraints ½(d_i·d_i − 1) (i = j) and d_i·d_j (i ≠ j), in this order."""


def orthonormality_hessians(dim: int = 9, offset: int = 0) -> Tensor:
    """The constant Hessians, shape (6, dim, dim), of g = (½(|d₁|² − 1), ½(|d₂|² − 1), ½(|d₃|² − 1),
    d₁·d₂, d₁·d₃, d₂·d₃) for directors stored as q[offset : offset + 9] = (d₁, d₂, d₃): I₃ in the
    diagonal block (i, i), I₃ in the blocks (i, j) and (j, i) for i ≠ j."""
    if offset < 0 or offset + 9 > dim:
        raise ValueError(f"the directors q[offset : offset + 9] must fit in dim = {dim}, got offset = {offset}")
    out = np.zeros((6, dim, dim))
    eye = np.eye(3)
    for k, (i, j) in enumerate(ORTHONORMALITY_PAIRS):
        a, b = offset + 3 * i, offset + 3 * j
        out[k, a : a + 3, b : b + 3] = eye
        out[k, b : b + 3, a : a + 3] = eye
    return out


_HESSIANS = orthonormality_hessians()


@dataclass(frozen=True)
class DirectorTop:
    """Defaults (ours): J = diag(2, 2, 1) about the fixed point, M g ℓ = 1.5, R₀ = exp((0.3, 0, 0)^),
    body angular velocity ω₀ = (0.2, −0.1, 5)."""

    inertia: Vector = field(default_factory=lambda: np.array([2.0, 2.0, 1.0]))
    mgl: float = 1.5
    rotation0: Vector = field(default_factory=lambda: np.array([0.3, 0.0, 0.0]))
    omega0: Vector = field(default_factory=lambda: np.array([0.2, -0.1, 5.0]))

    def euler_tensor(self) -> Vector:
        """E_i with J₁ = E₂ + E₃, J₂ = E₁ + E₃, J₃ = E₁ + E₂."""
        J1, J2, J3 = (float(x) for x in self.inertia)
        return np.array([J2 + J3 - J1, J1 + J3 - J2, J1 + J2 - J3]) / 2.0

    @staticmethod
    def orthonormality(q: Vector) -> jax.Array:
        """g(q), traceable by JAX."""
        d = q.reshape(3, 3)
        return jnp.stack([(0.5 if i == j else 1.0) * jnp.dot(d[i], d[j]) - (0.5 if i == j else 0.0)
                          for i, j in ORTHONORMALITY_PAIRS])

    @staticmethod
    def orthonormality_jacobian(q: Vector) -> Matrix:
        """∇g_k = H_k q (g_k is quadratic with the constant Hessian H_k)."""
        return np.asarray(np.einsum("kab,b->ka", _HESSIANS, q), dtype=np.float64)

    @staticmethod
    def constant_hessians(q: Vector) -> Tensor:
        """The Hessians of g, constant (``orthonormality_hessians()``)."""
        return _HESSIANS

    @staticmethod
    @functools.cache
    def constraint() -> HolonomicConstraint[Vector]:
        return HolonomicConstraint(DirectorTop.orthonormality, DirectorTop.orthonormality_jacobian,
                                   DirectorTop.constant_hessians)

    def potential_gradient(self, q: Vector) -> Vector:
        """∇U = M g ℓ e₃ in the d₃ block (U = M g ℓ e₃·d₃ is linear)."""
        weight = np.zeros(9)
        weight[8] = self.mgl
        return weight

    def potential(self, q: Vector) -> jax.Array:
        """U = ∇U·q, traceable by JAX."""
        return jnp.dot(self.potential_gradient(q), q)

    @staticmethod
    def potential_hessian(q: Vector) -> Matrix:
        return np.zeros((9, 9))

    @built_once
    def system(self) -> MechanicalSystem[Vector]:
        mass = np.diag(np.repeat(self.euler_tensor(), 3))
        return MechanicalSystem(Rn(9), mass, self.potential, self.potential_gradient, self.potential_hessian)

    def problem(self) -> Problem[Vector]:
        """d_i = R₀e_i and ḋ_i = R₀(ω₀ × e_i)."""
        R0 = exp_matrix(self.rotation0)
        q0 = R0.T.ravel()  # rows of R₀ᵀ are the columns d_i of R₀
        v0 = (R0 @ skew(self.omega0)).T.ravel()
        return Problem(self.system(), q0, v0, holonomic=self.constraint())

    def equivalent_top(self) -> HeavyTop:
        """The same body as a heavy top on SO(3)."""
        return HeavyTop(inertia=np.diag(self.inertia), chi=np.array([0.0, 0.0, 1.0]), mg=self.mgl,
                        rotation0=self.rotation0, omega0=self.omega0)

    @staticmethod
    def rotation(q: Vector) -> Matrix:
        """R = [d₁ d₂ d₃]."""
        return q.reshape(3, 3).T.copy()

    def energy(self, q: Vector, p: Vector) -> float:
        E = np.repeat(self.euler_tensor(), 3)
        return 0.5 * float(p @ (p / E)) + self.mgl * float(q[8])

    @staticmethod
    def vertical_angular_momentum(q: Vector, p: Vector) -> float:
        """e₃ · Σ_i d_i × π_i, conserved (rotations about gravity)."""
        d, pi = q.reshape(3, 3), p.reshape(3, 3)
        return float(np.sum(d[:, 0] * pi[:, 1] - d[:, 1] * pi[:, 0]))
