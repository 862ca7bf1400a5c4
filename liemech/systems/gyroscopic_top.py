"""The gyroscopic (heavy symmetric) top as a director-based rigid body with its tip fixed at the
origin (Kinon, Betsch & Schneider 2023, §6.2; their GGL conference paper, §5):
q = [φ; d₁; d₂; d₃] ∈ R¹², φ the centre of mass, {d_i} the body-fixed principal director frame.
The body is a solid cone (density ρ, height a, radius r = a/2, centre of mass at ℓ = ¾a from the
tip) set into steady precession."""

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.euclidean import Rn
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.mechanics import point_masses
from liemech.mechanics.system import MechanicalSystem
from liemech.systems.director_top import orthonormality_hessians
from liemech.systems.heavy_top import HeavyTop
from liemech.types import Matrix, Tensor, Vector
from liemech.systems.built_once import built_once


@dataclass(frozen=True)
class GyroscopicTop:
    """T = ½m φ̇·φ̇ + ½Σ E_i ḋ_i·ḋ_i, M = diag(mI₃, E₁I₃, E₂I₃, E₃I₃) (eqs. (100)–(101)), E_i =
    ½(J_j + J_k − J_i); V = m g φ₃; nine constraints in the paper's scaling (eqs. (102)–(104)):
    ½(d_i·d_i − 1) (i = 1, 2, 3), d₁·d₂, d₁·d₃, d₂·d₃ and φ/ℓ − d₃ (tip at the origin).
    Cone data m = ⅓ρπr²a, J₁ = J₂ = 3/80 m(4r² + a²), J₃ = 3/10 m r² (the GGL conference paper,
    eq. (54a)); steady precession (eqs. (108)–(112)): R₀ = R(α₀) about e₁, d_i⁰ = R₀e_i, φ⁰ = ℓd₃⁰,
    ω₀ = ω_p e₃ + ω_s d₃⁰ with ω_s = m g ℓ/(J₃ω_p) + (J₁ + mℓ² − J₃)/J₃ ω_p cos α₀ (= 135.6 for
    the defaults), v_i⁰ = ω₀ × q_i⁰. The centre of mass then stays at the height ℓ cos α₀
    (eq. (113)); L₃ = e₃·Σ q_i × p_i is conserved (eqs. (105)–(107))."""

    density: float = 2700.0
    height: float = 0.1
    gravity: float = 9.81
    alpha0: float = math.pi / 3.0
    precession_rate: float = 10.0

    @property
    def radius(self) -> float:
        """r = a/2."""
        return 0.5 * self.height

    @property
    def ell(self) -> float:
        """ℓ = ¾a, distance from the tip to the centre of mass."""
        return 0.75 * self.height

    @property
    def mass(self) -> float:
        """m = ⅓ρπr²a."""
        return self.density * math.pi * self.radius**2 * self.height / 3.0

    def principal_inertia(self) -> Vector:
        """(J₁, J₂, J₃) about the centre of mass: J₁ = J₂ = 3/80 m(4r² + a²), J₃ = 3/10 m r²."""
        m, r, a = self.mass, self.radius, self.height
        transverse = 3.0 / 80.0 * m * (4.0 * r**2 + a**2)
        return np.array([transverse, transverse, 0.3 * m * r**2])

    def euler_tensor(self) -> Vector:
        """E_i = ½(J_j + J_k − J_i)."""
        J1, J2, J3 = (float(x) for x in self.principal_inertia())
        return 0.5 * np.array([J2 + J3 - J1, J1 + J3 - J2, J1 + J2 - J3])

    def tip_inertia(self) -> Vector:
        """Principal inertia about the tip: (J₁ + mℓ², J₂ + mℓ², J₃)."""
        shift = self.mass * self.ell**2
        out: Vector = self.principal_inertia() + np.array([shift, shift, 0.0])
        return out

    def spin_rate(self) -> float:
        """ω_s = m g ℓ/(J₃ω_p) + (J₁ + mℓ² − J₃)/J₃ ω_p cos α₀ (steady precession, eq. (112))."""
        J1, _, J3 = (float(x) for x in self.principal_inertia())
        m, ell, wp = self.mass, self.ell, self.precession_rate
        return m * self.gravity * ell / (J3 * wp) + (J1 + m * ell**2 - J3) / J3 * wp * math.cos(self.alpha0)

    def rotation0(self) -> Matrix:
        """R(α₀), the rotation by α₀ about e₁ (eq. (109))."""
        c, s = math.cos(self.alpha0), math.sin(self.alpha0)
        return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])

    def omega0(self) -> Vector:
        """Spatial angular velocity ω₀ = ω_p e₃ + ω_s R₀e₃."""
        return self.precession_rate * np.array([0.0, 0.0, 1.0]) + self.spin_rate() * self.rotation0()[:, 2]

    def director_configuration(self, R: Matrix) -> Vector:
        """q = [ℓ R e₃; R e₁; R e₂; R e₃] for a rotation R = [d₁ d₂ d₃]."""
        return np.concatenate([self.ell * R[:, 2], R.T.ravel()])

    def director_velocity(self, R: Matrix, body_omega: Vector) -> Vector:
        """q̇ with q̇_i = ω × q_i, ω = R Ω the spatial angular velocity of the body velocity Ω."""
        return point_masses.rigid_rotation_velocity(R @ body_omega, self.director_configuration(R))

    @property
    def q0(self) -> Vector:
        """[φ⁰; d₁⁰; d₂⁰; d₃⁰] = [ℓR₀e₃; R₀e₁; R₀e₂; R₀e₃]."""
        return self.director_configuration(self.rotation0())

    @property
    def v0(self) -> Vector:
        """v_i⁰ = ω₀ × q_i⁰ for each 3-block."""
        return point_masses.rigid_rotation_velocity(self.omega0(), self.q0)

    def mass_matrix(self) -> Matrix:
        """diag(mI₃, E₁I₃, E₂I₃, E₃I₃)."""
        return np.diag(np.repeat(np.concatenate([[self.mass], self.euler_tensor()]), 3))

    def tip_and_frame(self, q: Vector) -> jax.Array:
        """g(q) = (½(|d₁|² − 1), ½(|d₂|² − 1), ½(|d₃|² − 1), d₁·d₂, d₁·d₃, d₂·d₃, φ/ℓ − d₃), traceable
        by JAX."""
        d1, d2, d3 = q[3:6], q[6:9], q[9:12]
        orthonormality = jnp.stack([
            0.5 * (jnp.dot(d1, d1) - 1.0), 0.5 * (jnp.dot(d2, d2) - 1.0), 0.5 * (jnp.dot(d3, d3) - 1.0),
            jnp.dot(d1, d2), jnp.dot(d1, d3), jnp.dot(d2, d3),
        ])
        return jnp.concatenate([orthonormality, (1.0 / self.ell) * q[0:3] - d3])

    def tip_and_frame_jacobian(self, q: Vector) -> Matrix:
        """G: rows 1–6 = D²g_k q (homogeneous quadratics), rows 7–9 = [I/ℓ, 0, 0, −I]."""
        external = np.zeros((3, 12))
        external[:, 0:3] = (1.0 / self.ell) * np.eye(3)
        external[:, 9:12] = -np.eye(3)
        return np.concatenate([self.tip_and_frame_hessians(q)[:6] @ q, external])

    @staticmethod
    def tip_and_frame_hessians(q: Vector) -> Tensor:
        """The constant Hessians D²g_k (zero for rows 7–9)."""
        return np.concatenate([orthonormality_hessians(12, 3), np.zeros((3, 12, 12))])

    @built_once
    def constraint(self) -> HolonomicConstraint[Vector]:
        """g = (½(|d₁|² − 1), ½(|d₂|² − 1), ½(|d₃|² − 1), d₁·d₂, d₁·d₃, d₂·d₃, φ/ℓ − d₃) (paper scaling)
        with its Jacobian and constant Hessians."""
        return HolonomicConstraint(self.tip_and_frame, self.tip_and_frame_jacobian, self.tip_and_frame_hessians)

    def potential(self, q: Vector) -> jax.Array:
        """V = m g φ₃, traceable by JAX."""
        return self.mass * self.gravity * jnp.asarray(q[2])

    def potential_gradient(self, q: Vector) -> Vector:
        weight = np.zeros(12)
        weight[2] = self.mass * self.gravity
        return weight

    @staticmethod
    def potential_hessian(q: Vector) -> Matrix:
        return np.zeros((12, 12))

    @built_once
    def system(self) -> MechanicalSystem[Vector]:
        return MechanicalSystem(Rn(12), self.mass_matrix(), self.potential, self.potential_gradient,
                                self.potential_hessian)

    def problem(self) -> Problem[Vector]:
        return Problem(self.system(), self.q0, self.v0, holonomic=self.constraint())

    def energy(self, q: Vector, p: Vector) -> float:
        """H = ½pᵀM⁻¹p + m g φ₃."""
        inverse_mass = 1.0 / np.repeat(np.concatenate([[self.mass], self.euler_tensor()]), 3)
        return 0.5 * float(p @ (inverse_mass * p)) + float(self.potential(q))

    @staticmethod
    def angular_momentum(q: Vector, p: Vector) -> Vector:
        """L = Σ_i q_i × p_i over the four 3-blocks (φ, d₁, d₂, d₃); L₃ is conserved."""
        return point_masses.angular_momentum(q, p)

    def steady_height(self) -> float:
        """φ₃ = ℓ cos α₀ under steady precession (eq. (113))."""
        return self.ell * math.cos(self.alpha0)

    def equivalent_top(self) -> HeavyTop:
        """The same body as a heavy top on SO(3): inertia diag(tip_inertia) about the tip, χ = ℓe₃,
        weight m g, R₀ = exp(α₀ ê₁), body angular velocity R₀ᵀω₀."""
        return HeavyTop(inertia=np.diag(self.tip_inertia()), chi=np.array([0.0, 0.0, self.ell]),
                        mg=self.mass * self.gravity, rotation0=np.array([self.alpha0, 0.0, 0.0]),
                        omega0=self.rotation0().T @ self.omega0())
