"""The one-stage θ-methods of the GGL principle (Kinon, Betsch & Schneider 2023, §4.3, eq. (76)),
q^{n+θ} = (1 − θ)qⁿ + θq^{n+1}, p^{n+1−θ} = θpⁿ + (1 − θ)p^{n+1}, G_θ = G(q^{n+θ}),
T_θ = Σ_k γ_k D²g_k(q^{n+θ}), C the discrete constraint force matrix:

    q^{n+1} − qⁿ = h v^{n+1} + h M⁻¹G_θᵀγ                                        (76a)
    p^{n+1} − pⁿ = −h ∇V(q^{n+θ}) + h Cᵀλ − h T_θ v^{n+1}                        (76b)
    M v^{n+1} = p^{n+1−θ} + h Eᵀλ                                                (76c)
    g_d(qⁿ, q^{n+1}) = 0,   G_θ v^{n+1} = 0                                     (76d, e)

Option A (VI-A, eq. (79)): C = G_θ, E = 0, g_d = g(q^{n+θ}); θ ∈ (0, 1).
Option B (VI-B, eq. (82)): C = (1 − ϑ)G(qⁿ) + ϑG(q^{n+1}), E = θ(1 − ϑ)G(qⁿ) − (1 − θ)ϑG(q^{n+1}),
g_d = g(q^{n+1}); θ ∈ [0, 1], ϑ ∈ (0, 1]; θ = 1, ϑ = ½ is the paper's scheme (83).
(λ with liemech's plus sign, λ = −λ_paper; the misprinted "D₁L_d" of (79b), (82b) means h D₁L.)
Unknowns (q^{n+1}, p^{n+1}, v^{n+1}, λⁿ, γⁿ): 3n + 2m. Both are symplectic and conserve momentum
maps; VI-A(½) is second order and meets both constraints only at q^{n+½}; VI-B is first order
and meets g(q^{n+1}) = 0 and G(q^{n+1})v^{n+1} = 0 at the nodes when θ = 1.
"""

from typing import Literal, SupportsFloat, TypeVar

import jax
import jax.numpy as jnp

from liemech.input_checks import checked_real
from liemech.mechanics.problem import Problem
from liemech.methods.ggl.base import GGLEquations, GGLMethod, InitialGuess
from liemech.methods.method import Traits
from liemech.solvers.newton import NewtonOptions

P = TypeVar("P")


class GGLThetaA(GGLMethod):
    """VI-A(θ), Option A: constraints evaluated at q^{n+θ} (Kinon, Betsch & Schneider 2023,
    eq. (79)), θ ∈ (0, 1).

    ``sol.eta`` is the scheme's v^{n+1}; ``sol.lam`` is None. Per step (row i of ``sol.extras``, the
    step t_i → t_{i+1}): "lam" λⁱ and "gamma" γⁱ, which belong to the whole interval.
    """

    def __init__(self, theta: SupportsFloat = 0.5, newton: NewtonOptions | None = None,
                 initial_guess: InitialGuess = "advanced") -> None:
        super().__init__(newton, initial_guess)
        self.theta = checked_real(theta, "theta", 0.0, 1.0)
        self.parameters = (self.theta,)
        self.name = f"GGLThetaA(theta={self.theta:g})"

    @property
    def traits(self) -> Traits:
        return Traits(order=2 if self.theta == 0.5 else 1, symplectic=True, conserves_energy=False,
                      conserves_momentum_maps=True, constraints_at_step_end=())

    def equations(self, problem: Problem[P]) -> "ThetaEquations":
        return ThetaEquations(self, problem, self.theta, None)


class GGLThetaB(GGLMethod):
    """VI-B(θ, ϑ), Option B: trapezoidal constraint evaluation (Kinon, Betsch & Schneider 2023,
    eq. (82)),
    θ ∈ [0, 1], ϑ ∈ (0, 1]; the defaults θ = 1, ϑ = ½ are the paper's scheme (83).

    ``sol.eta`` is the scheme's v^{n+1}; ``sol.lam`` is None; ``sol.extras`` as for GGLThetaA.
    """

    def __init__(self, theta: SupportsFloat = 1.0, vartheta: SupportsFloat = 0.5, newton: NewtonOptions | None = None,
                 initial_guess: InitialGuess = "advanced") -> None:
        super().__init__(newton, initial_guess)
        self.theta = checked_real(theta, "theta", 0.0, 1.0, open_low=False, open_high=False)
        self.vartheta = checked_real(vartheta, "vartheta", 0.0, 1.0, open_high=False)
        self.parameters = (self.theta, self.vartheta)
        self.name = f"GGLThetaB(theta={self.theta:g}, vartheta={self.vartheta:g})"

    @property
    def traits(self) -> Traits:
        at_nodes: tuple[Literal["position", "velocity"], ...] = (
            ("position", "velocity") if self.theta == 1.0 else ("position",))
        return Traits(order=1, symplectic=True, conserves_energy=False, conserves_momentum_maps=True,
                      constraints_at_step_end=at_nodes)

    def equations(self, problem: Problem[P]) -> "ThetaEquations":
        return ThetaEquations(self, problem, self.theta, self.vartheta)


class ThetaEquations(GGLEquations):
    """(76) with Option A (``vartheta`` None) or Option B; x = (q^{n+1}, p^{n+1}, v^{n+1}, λⁿ, γⁿ)."""

    def __init__(self, method: GGLMethod, problem: Problem[P], theta: float, vartheta: float | None) -> None:
        super().__init__(method, problem, multiplier_blocks=2)
        self.theta, self.vartheta = theta, vartheta

    def equations(self, x: jax.Array, q0: jax.Array, p0: jax.Array, h: jax.Array) -> jax.Array:
        th, vth, M_inv = self.theta, self.vartheta, self.M_inv
        q1, p1, v1, lam, gamma = self.unknowns(x)
        q_th = (1.0 - th) * q0 + th * q1
        velocity_equation = self.M @ v1 - th * p0 - (1.0 - th) * p1
        if vth is None:  # Option A: C = G_θ, E = 0, g_d = g(q^{n+θ})
            C_lam, position = self.GT(q_th, lam), self.g(q_th)
        else:  # Cᵀλ and Eᵀλ from G(qⁿ)ᵀλ and G(q^{n+1})ᵀλ
            G0_lam, G1_lam = self.GT(q0, lam), self.GT(q1, lam)
            C_lam = (1.0 - vth) * G0_lam + vth * G1_lam
            velocity_equation = velocity_equation - h * (th * (1.0 - vth) * G0_lam - (1.0 - th) * vth * G1_lam)
            position = self.g(q1)
        return jnp.concatenate([
            q1 - q0 - h * v1 - h * (M_inv @ self.GT(q_th, gamma)),  # (76a)
            p1 - p0 + h * self.grad_V(q_th) - h * C_lam + h * self.curvature(q_th, gamma, v1),  # (76b)
            velocity_equation,  # (76c)
            position,  # (76d)
            self.G(q_th, v1),  # (76e)
        ])

    def result(self, x: jax.Array) -> tuple[jax.Array, jax.Array, dict[str, jax.Array]]:
        _, _, v1, lam, gamma = self.unknowns(x)
        return v1, jnp.zeros(0), {"lam": lam, "gamma": gamma}
