"""The heavy top on SO(3): ℓ(R, ω) = ½ ωᵀ𝕀ω − mg e₃ᵀRχ.

Its trivialised force is f = −∇V = mg (Rᵀe₃) × χ; rotations about the vertical axis are a
symmetry, with Noether momentum ⟨μ, Rᵀe₃⟩.
"""

from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
from scipy.integrate import solve_ivp

from liemech.groups.so3 import SO3, cross, exp_matrix, skew
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.types import Matrix, Vector
from liemech.systems.built_once import built_once

E3 = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True)
class HeavyTop:
    """Parameters and initial data of the heavy top (the defaults are ours; 𝕀 may be any SPD matrix)."""

    inertia: Matrix = field(default_factory=lambda: np.diag([1.0, 2.0, 3.5]))
    chi: Vector = field(default_factory=lambda: np.array([0.2, -0.1, 0.6]))
    mg: float = 1.5
    rotation0: Vector = field(default_factory=lambda: np.array([0.3, -0.5, 0.2]))
    omega0: Vector = field(default_factory=lambda: np.array([0.8, -0.4, 1.1]))
    t_final: float = 2.0

    def potential(self, R: Matrix) -> jax.Array:
        """V(R) = mg e₃ᵀ R χ (height of the centre of mass), traceable by JAX."""
        return self.mg * jnp.dot(R[2], self.chi)

    def potential_gradient(self, R: Matrix) -> Vector:
        """∇V(R) = mg χ × Γ with Γ = Rᵀe₃: d/dε V(R τ(εζ)) = mg e₃ᵀRζ̂χ = ⟨mg χ × Γ, ζ⟩."""
        return self.mg * cross(self.chi, R[2])

    def potential_hessian(self, R: Matrix) -> Matrix:
        """ζ ↦ d/dε ∇V(R τ(εζ)) = mg χ × (Γ × ζ) = mg χ̂ Γ̂ ζ."""
        return self.mg * (skew(self.chi) @ skew(R[2]))

    @built_once
    def system(self) -> MechanicalSystem[Matrix]:
        return MechanicalSystem(SO3(), self.inertia, self.potential, self.potential_gradient,
                                self.potential_hessian)

    def problem(self) -> Problem[Matrix]:
        return Problem(self.system(), exp_matrix(self.rotation0), self.omega0)

    def energy(self, R: Matrix, mu: Vector) -> float:
        """H = ½ μᵀ𝕀⁻¹μ + V(R)."""
        return 0.5 * float(mu @ np.linalg.solve(self.inertia, mu)) + float(self.potential(R))

    def noether_momentum(self, R: Matrix, mu: Vector) -> float:
        """⟨μ, Rᵀe₃⟩, conserved by the symmetry R ↦ exp(θ ê₃) R."""
        return float(mu @ R[2])

    def rhs(self, t: float, y: Vector) -> Vector:
        """Continuous equations on y = (R row-major, μ): Ṙ = R η̂, μ̇ = μ × η + mg Γ × χ, η = 𝕀⁻¹μ."""
        R, mu = y[:9].reshape(3, 3), y[9:]
        eta = np.asarray(np.linalg.solve(self.inertia, mu), dtype=np.float64)
        return np.concatenate([(R @ skew(eta)).ravel(), cross(mu, eta) + self.mg * cross(R[2], self.chi)])

    def reference(self, times: Vector) -> tuple[list[Matrix], Matrix]:
        """R(t), μ(t) at ``times`` from DOP853 with rtol 1e-13, atol 1e-14."""
        problem = self.problem()
        y0 = np.concatenate([problem.g0.ravel(), problem.mu0])
        sol = solve_ivp(self.rhs, (0.0, float(np.max(times))), y0, method="DOP853", t_eval=times,
                        rtol=1e-13, atol=1e-14)
        if not sol.success:
            raise RuntimeError(f"reference solution failed: {sol.message}")
        return [sol.y[:9, k].reshape(3, 3) for k in range(sol.y.shape[1])], sol.y[9:].T.copy()
