"""The Chaplygin sleigh on SE(2): a rigid body on a knife edge, with its centre of mass ahead of the
edge (Chaplygin 1911), and an optional spring that pulls the edge to the origin.

The body frame sits at the knife edge, its first axis along the blade, and the centre of mass at
(a, 0) in it. With ξ = (v₁, v₂, ω), ℓ = ½m[v₁² + (v₂ + aω)²] + ½I_c ω² − ½k(x² + y²), so
𝕀 = [[m, 0, 0], [0, m, ma], [0, ma, I_c + ma²]], and the edge does not slip sideways: φ(g, ξ) = v₂.
On φ = 0 the reduced equations (Newton–Euler for the body, the edge force eliminated) are

    ẋ = v cos θ,  ẏ = v sin θ,  θ̇ = ω,
    m v̇ = m a ω² − k (x cos θ + y sin θ),        (I_c + m a²) ω̇ = −m a v ω,

with v = v₁ and λ = m v ω I_c / (I_c + m a²) + k (y cos θ − x sin θ) the sideways force of the edge
(the multiplier of μ̇ = ad*_ξ μ + f + (∂φ/∂ξ)ᵀλ). The spring acts at the edge, so it does not turn
the sleigh. E = ½m v² + ½(I_c + m a²) ω² + ½k(x² + y²) is conserved. Without the spring the
motion tends to sliding along a straight line: v → sgn(a)·√(2E/m) and ω → 0 like e^{−ct},
c = m|a|√(2E/m)/(I_c + m a²), an attracting relative equilibrium.

Defaults: m = 1, a = 0.5, I_c = 0.2, k = 0, (x, y, θ)₀ = 0, ξ₀ = (1, 0, 2): E = 1.4, the limit
velocity (1.6733, 0, 0) and c = 1.8592.
"""

import math
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
from scipy.integrate import solve_ivp

from liemech.groups.se2 import SE2
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.systems.built_once import built_once
from liemech.systems.vertical_disc import VerticalDisc
from liemech.types import Matrix, Vector


@dataclass(frozen=True)
class ChaplyginSleigh:
    """Mass m, centre of mass a ahead of the edge, inertia I_c about the centre of mass, spring
    stiffness k ≥ 0; initial pose (x, y, θ) and body velocity ξ₀ = (v₁, 0, ω)."""

    mass: float = 1.0
    offset: float = 0.5
    inertia: float = 0.2
    stiffness: float = 0.0
    pose0: Vector = field(default_factory=lambda: np.zeros(3))
    velocity0: Vector = field(default_factory=lambda: np.array([1.0, 0.0, 2.0]))
    t_final: float = 50.0

    def __post_init__(self) -> None:
        for name in ("mass", "inertia", "t_final"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0.0 < value < math.inf):
                raise ValueError(f"{name} must be positive and finite, got {value!r}")
        if not (isinstance(self.offset, (int, float)) and math.isfinite(self.offset)):
            raise ValueError(f"offset must be a finite number, got {self.offset!r}")
        if not (isinstance(self.stiffness, (int, float)) and 0.0 <= self.stiffness < math.inf):
            raise ValueError(f"stiffness must be non-negative and finite, got {self.stiffness!r}")

    # The pose (x, y, θ) as a point of SE(2), and the knife edge φ = v₂ (no sideways slip): the
    # vertical disc's.
    point = staticmethod(VerticalDisc.point)
    constraint = staticmethod(VerticalDisc.constraint)

    def inertia_matrix(self) -> Matrix:
        """𝕀 of ℓ = ½ξᵀ𝕀ξ at the knife edge."""
        m, a = self.mass, self.offset
        return np.array([[m, 0.0, 0.0], [0.0, m, m * a], [0.0, m * a, self.inertia + m * a * a]])

    def potential(self, g: Matrix) -> jax.Array:
        """V = ½k(x² + y²), traceable by JAX."""
        x, y = jnp.asarray(g[0, 2]), jnp.asarray(g[1, 2])
        return 0.5 * self.stiffness * (x * x + y * y)

    @built_once
    def system(self) -> MechanicalSystem[Matrix]:
        return MechanicalSystem(SE2(), self.inertia_matrix(), self.potential)

    def problem(self) -> Problem[Matrix]:
        return Problem(self.system(), self.point(*self.pose0), self.velocity0, nonholonomic=self.constraint())

    def energy(self, g: Matrix, xi: Vector) -> float:
        """E = ½ξᵀ𝕀ξ + ½k(x² + y²)."""
        return 0.5 * float(xi @ self.inertia_matrix() @ xi) + float(self.potential(g))

    def multiplier(self, x: float, y: float, theta: float, v: float, omega: float) -> float:
        """λ = m v ω I_c/(I_c + m a²) + k (y cos θ − x sin θ)."""
        m, a, k = self.mass, self.offset, self.stiffness
        return (m * v * omega * self.inertia / (self.inertia + m * a * a)
                + k * (y * math.cos(theta) - x * math.sin(theta)))

    def _free_sliding(self) -> tuple[float, float]:
        """(v∞, c) of the motion without spring; ValueError where it has no straight-line limit."""
        if self.stiffness != 0.0 or self.offset == 0.0 or self.velocity0[2] == 0.0:
            raise ValueError("the sleigh tends to straight-line sliding only with stiffness = 0, offset ≠ 0 "
                             f"and ω₀ ≠ 0 (got stiffness {self.stiffness}, offset {self.offset}, "
                             f"ω₀ = {self.velocity0[2]})")
        speed = math.sqrt(2.0 * self.energy(self.point(*self.pose0), self.velocity0) / self.mass)
        return math.copysign(speed, self.offset), self.mass * abs(self.offset) * speed / (
            self.inertia + self.mass * self.offset**2)

    def limit_velocity(self) -> Vector:
        """ξ∞ = (sgn(a)√(2E/m), 0, 0), the straight-line sliding the motion tends to (k = 0)."""
        return np.array([self._free_sliding()[0], 0.0, 0.0])

    def decay_rate(self) -> float:
        """c = m|a|√(2E/m)/(I_c + m a²): ω → 0 like e^{−ct} (k = 0)."""
        return self._free_sliding()[1]

    def rhs(self, t: float, y: Vector) -> Vector:
        """(x, y, θ, v, ω)′ of the reduced equations (module docstring)."""
        x, yy, theta, v, omega = y
        m, a, k = self.mass, self.offset, self.stiffness
        c, s = math.cos(theta), math.sin(theta)
        return np.array([v * c, v * s, omega, a * omega**2 - k * (x * c + yy * s) / m,
                         -m * a * v * omega / (self.inertia + m * a * a)])

    def reference(self, times: Vector) -> tuple[list[Matrix], Matrix, Vector]:
        """g(t), ξ(t) = (v, 0, ω) and λ(t) from DOP853 on the reduced equations (rtol 1e-12,
        atol 1e-14)."""
        y0 = np.array([*self.pose0, self.velocity0[0], self.velocity0[2]])
        sol = solve_ivp(self.rhs, (0.0, float(np.max(times))), y0, method="DOP853", t_eval=times,
                        rtol=1e-12, atol=1e-14)
        states = sol.y.T
        gs = [self.point(*row[:3]) for row in states]
        xis = np.column_stack([states[:, 3], np.zeros(len(states)), states[:, 4]])
        lams = np.array([self.multiplier(*row) for row in states])
        return gs, xis, lams
