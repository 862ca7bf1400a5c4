"""VI-S, the first-order GGL variational integrator (Kinon, Betsch & Schneider 2023, eq. (55) = eq.
(41) of their GGL conference paper), with q̄ = qⁿ + h vⁿ and T̄ = Σ_k γ_k^{n+1} D²g_k(q̄):

    q^{n+1} − qⁿ = h vⁿ + h M⁻¹G(q̄)ᵀγ^{n+1}                                    (55a)
    p^{n+1} − pⁿ = −h ∇V(qⁿ) + h G(qⁿ)ᵀλⁿ − h T̄ M⁻¹p^{n+1}                      (55b)
    M vⁿ = (I + h T̄ M⁻¹) p^{n+1}                                               (55c)
    g(q^{n+1}) = 0,   G(q̄) M⁻¹p^{n+1} = 0                                      (55d, e)

(λ with liemech's plus sign, λ = −λ_paper; the conference paper's (41b) misprints p^{n+1} as pⁿ.) Unknowns
(q^{n+1}, p^{n+1}, vⁿ, λⁿ, γ^{n+1}): 3n + 2m. It generalises symplectic Euler: first order,
symplectic on constrained variations, conserves momentum maps, not energy; g holds at the nodes,
the secondary constraint only at q̄.
"""

from typing import TypeVar

import jax
import jax.numpy as jnp

from liemech.mechanics.problem import Problem
from liemech.methods.ggl.base import GGLEquations, GGLMethod, InitialGuess
from liemech.methods.method import Traits
from liemech.solvers.newton import NewtonOptions

P = TypeVar("P")


class GGLVariationalEuler(GGLMethod):
    """VI-S (Kinon, Betsch & Schneider 2023, eq. (55)).

    ``sol.eta`` is M⁻¹p (the scheme's velocity vⁿ is staggered); ``sol.lam`` is None. Per step
    (row i of ``sol.extras``, the step t_i → t_{i+1}): "velocity" vⁱ and "lam" λⁱ, which belong to
    t_i, and "gamma" γ^{i+1}, which enforces the secondary constraint at q̄ = qⁱ + h vⁱ.
    """

    def __init__(self, newton: NewtonOptions | None = None, initial_guess: InitialGuess = "advanced") -> None:
        super().__init__(newton, initial_guess)
        self.name = "GGLVariationalEuler()"

    @property
    def traits(self) -> Traits:
        return Traits(order=1, symplectic=True, conserves_energy=False, conserves_momentum_maps=True,
                      constraints_at_step_end=("position",))

    def equations(self, problem: Problem[P]) -> "VariationalEulerEquations":
        return VariationalEulerEquations(self, problem)


class VariationalEulerEquations(GGLEquations):
    """(55) with x = (q^{n+1}, p^{n+1}, vⁿ, λⁿ, γ^{n+1})."""

    def __init__(self, method: GGLMethod, problem: Problem[P]) -> None:
        super().__init__(method, problem, multiplier_blocks=2)

    def equations(self, x: jax.Array, q0: jax.Array, p0: jax.Array, h: jax.Array) -> jax.Array:
        M_inv = self.M_inv
        q1, p1, v0, lam, gamma = self.unknowns(x)
        q_bar = q0 + h * v0
        u = M_inv @ p1
        T_u = self.curvature(q_bar, gamma, u)
        return jnp.concatenate([
            q1 - q0 - h * v0 - h * (M_inv @ self.GT(q_bar, gamma)),  # (55a)
            p1 - p0 + h * self.grad_V(q0) - h * self.GT(q0, lam) + h * T_u,  # (55b)
            self.M @ v0 - p1 - h * T_u,  # (55c)
            self.g(q1),  # (55d)
            self.G(q_bar, u),  # (55e)
        ])

    def result(self, x: jax.Array) -> tuple[jax.Array, jax.Array, dict[str, jax.Array]]:
        _, p1, v0, lam, gamma = self.unknowns(x)
        return self.M_inv @ p1, jnp.zeros(0), {"velocity": v0, "lam": lam, "gamma": gamma}
