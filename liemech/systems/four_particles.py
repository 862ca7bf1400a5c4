"""The four-particle system of Kinon, Betsch & Schneider (2023, §6.3, after Gonzalez 1999): four point
masses in R³ joined by two nonlinear springs (1–3, 2–4) and two rigid bars (1–2, 3–4), no gravity."""

import functools
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.euclidean import Rn
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.invariant_potential import QuadraticInvariantPotential, ScalarFunction
from liemech.mechanics.problem import Problem
from liemech.mechanics import point_masses
from liemech.mechanics.system import MechanicalSystem
from liemech.systems.constrained_reference import index1_reference
from liemech.types import Matrix, Tensor, Vector
from liemech.systems.built_once import built_once


def _pair_form(i: int, j: int) -> Matrix:
    """A with qᵀAq = |q_j − q_i|² for particles i, j (0-based) of q ∈ R¹²: DᵀD, D = [.., −I, .., I, ..]."""
    D = np.zeros((3, 12))
    D[:, 3 * i : 3 * i + 3] = -np.eye(3)
    D[:, 3 * j : 3 * j + 3] = np.eye(3)
    return D.T @ D


def _spring_energy(k: float, rest: float, s: float) -> float:
    """Ṽ(π) = ½k(π − rest)² of a spring written through its squared length π."""
    return 0.5 * k * (s - rest) ** 2


def _spring_force(k: float, rest: float, s: float) -> float:
    """Ṽ′(π) = k(π − rest)."""
    return k * (s - rest)


def _spring_stiffness(k: float, rest: float, s: float) -> float:
    """Ṽ″(π) = k."""
    return k


def _spring(k: float, rest: float) -> tuple[ScalarFunction, ScalarFunction, ScalarFunction]:
    """Ṽ, Ṽ′ and Ṽ″ of the spring, as partials of module-level functions so that they pickle."""
    return (functools.partial(_spring_energy, k, rest), functools.partial(_spring_force, k, rest),
            functools.partial(_spring_stiffness, k, rest))


@dataclass(frozen=True)
class FourParticles:
    """M = diag(m₁I₃, …, m₄I₃), V = ½k₁₃(π₁ − l₁₃²)² + ½k₂₄(π₂ − l₂₄²)² (eq. (116)) with the quadratic
    invariants π₁ = |q₃ − q₁|², π₂ = |q₄ − q₂|² (eq. (122), corrected: the paper prints q₄ − q₃),
    Ṽ_i(π) = ½k(π − l²)² (eqs. (123)–(124)), and the bars g₁ = ½(|q₂ − q₁|²/l₁₂² − 1),
    g₂ = ½(|q₄ − q₃|²/l₃₄² − 1) (eq. (117)). Translations and rotations are symmetries: L = Σp_i (118)
    and J = Σ q_i × p_i (119)–(121) are conserved.

    Initial data (eq. (127)): q₀ = (0,0,0, 1,0,0, 0,1,0, 1,1,0), v₁ = v₂ = v₃ = 0 and
    v₄ = (0, 0, 2/1.7) (the default: H₀ = 2/1.7, L = (0, 0, 2), J = (2, −2, 0)). The metis
    error-analysis input uses v₄ = (0, 3/1.7, 2/1.7): ``FourParticles(v4=np.array([0.0, 3 / 1.7, 2 / 1.7]))``."""

    masses: tuple[float, float, float, float] = (1.0, 3.0, 2.3, 1.7)
    k13: float = 50.0
    k24: float = 500.0
    l13: float = 1.0
    l24: float = 1.0
    l12: float = 1.0
    l34: float = 1.0
    q0: Vector = field(default_factory=lambda: np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0,
                                                         1.0, 1.0, 0.0]))
    v4: Vector = field(default_factory=lambda: np.array([0.0, 0.0, 2.0 / 1.7]))

    @property
    def v0(self) -> Vector:
        """(0, 0, v₄): particles 1–3 start at rest."""
        return np.concatenate([np.zeros(9), np.asarray(self.v4, dtype=np.float64)])

    def mass_matrix(self) -> Matrix:
        return np.diag(np.repeat(np.array(self.masses, dtype=np.float64), 3))

    def invariant_potential(self) -> QuadraticInvariantPotential:
        """V = Ṽ₁(π₁) + Ṽ₂(π₂) with π₁ = |q₃ − q₁|², π₂ = |q₄ − q₂|², Ṽ_i = ½k(π − l²)²."""
        (V1, dV1, ddV1), (V2, dV2, ddV2) = _spring(self.k13, self.l13**2), _spring(self.k24, self.l24**2)
        return QuadraticInvariantPotential([_pair_form(0, 2), _pair_form(1, 3)], [V1, V2], [dV1, dV2],
                                           [ddV1, ddV2])

    @built_once
    def system(self) -> MechanicalSystem[Vector]:
        V = self.invariant_potential()
        return MechanicalSystem(Rn(12), self.mass_matrix(), V, V.gradient, V.hessian)

    def bars(self, q: Vector) -> jax.Array:
        """g(q) = (½(|q₂ − q₁|²/l₁₂² − 1), ½(|q₄ − q₃|²/l₃₄² − 1)), traceable by JAX."""
        s12, s34 = 1.0 / self.l12**2, 1.0 / self.l34**2
        a, b = q[3:6] - q[0:3], q[9:12] - q[6:9]
        return jnp.stack([0.5 * (s12 * jnp.dot(a, a) - 1.0), 0.5 * (s34 * jnp.dot(b, b) - 1.0)])

    def bars_jacobian(self, q: Vector) -> Matrix:
        """G = [−Δ₁₂ᵀ, Δ₁₂ᵀ, 0, 0]/l₁₂², [0, 0, −Δ₃₄ᵀ, Δ₃₄ᵀ]/l₃₄²."""
        s12, s34 = 1.0 / self.l12**2, 1.0 / self.l34**2
        a, b = s12 * (q[3:6] - q[0:3]), s34 * (q[9:12] - q[6:9])
        out = np.zeros((2, 12))
        out[0, 0:3], out[0, 3:6] = -a, a
        out[1, 6:9], out[1, 9:12] = -b, b
        return out

    def bars_hessians(self, q: Vector) -> Tensor:
        """The constant Hessians [[I, −I], [−I, I]]/l² in each bar's blocks."""
        s12, s34 = 1.0 / self.l12**2, 1.0 / self.l34**2
        return np.stack([s12 * _pair_form(0, 1), s34 * _pair_form(2, 3)])

    @built_once
    def constraint(self) -> HolonomicConstraint[Vector]:
        """The two bars: g, G and the constant Hessians."""
        return HolonomicConstraint(self.bars, self.bars_jacobian, self.bars_hessians)

    def reference(self, times: Vector) -> tuple[Matrix, Matrix, Matrix]:
        """q(t), v(t) and λ(t) (liemech's sign) at ``times`` by DOP853 on the index-1 equations."""
        return index1_reference(self.system(), self.constraint(), self.q0, self.v0, times)

    def problem(self) -> Problem[Vector]:
        return Problem(self.system(), self.q0, self.v0, holonomic=self.constraint())

    def potential(self, q: Vector) -> float:
        """V = ½k₁₃(|q₃ − q₁|² − l₁₃²)² + ½k₂₄(|q₄ − q₂|² − l₂₄²)² (eq. (116)), written out."""
        a, b = q[6:9] - q[0:3], q[9:12] - q[3:6]
        return 0.5 * self.k13 * (float(a @ a) - self.l13**2) ** 2 + 0.5 * self.k24 * (float(b @ b) - self.l24**2) ** 2

    def energy(self, q: Vector, p: Vector) -> float:
        """H = ½pᵀM⁻¹p + V(q)."""
        inverse_mass = 1.0 / np.repeat(np.array(self.masses, dtype=np.float64), 3)
        return 0.5 * float(p @ (inverse_mass * p)) + self.potential(q)

    @staticmethod
    def linear_momentum(p: Vector) -> Vector:
        """L = Σ_i p_i (eq. (118))."""
        return point_masses.linear_momentum(p)

    @staticmethod
    def angular_momentum(q: Vector, p: Vector) -> Vector:
        """J = Σ_i q_i × p_i (eqs. (119)–(121))."""
        return point_masses.angular_momentum(q, p)
