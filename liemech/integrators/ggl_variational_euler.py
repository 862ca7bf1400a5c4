"""VI-S, the first-order GGL variational integrator (paper 000 eq. (55) = paper 003 eq. (41),
spec 000 §B.1), with q̄ = qⁿ + h vⁿ and T̄ = Σ_k γ_k^{n+1} D²g_k(q̄):

    q^{n+1} − qⁿ = h vⁿ + h M⁻¹G(q̄)ᵀγ^{n+1}                                    (55a)
    p^{n+1} − pⁿ = −h ∇V(qⁿ) + h G(qⁿ)ᵀλⁿ − h T̄ M⁻¹p^{n+1}                      (55b)
    M vⁿ = (I + h T̄ M⁻¹) p^{n+1}                                               (55c)
    g(q^{n+1}) = 0,   G(q̄) M⁻¹p^{n+1} = 0                                      (55d, e)

(λ with liemech's plus sign, λ = −λ_paper; 003 (41b) misprints p^{n+1} as pⁿ.) Unknowns
(q^{n+1}, p^{n+1}, vⁿ, λⁿ, γ^{n+1}): 3n + 2m. It generalises symplectic Euler: first order,
symplectic on constrained variations, conserves momentum maps, not energy; g holds at the nodes,
the secondary constraint only at q̄.
"""

from typing import NamedTuple

import numpy as np

from liemech.integrators.ggl_base import GGLMethod, GGLStepper, InitialGuess, hessian_columns, weighted_hessians
from liemech.integrators.method import NodeState, Stepper, Traits
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.system import MechanicalSystem
from liemech.solvers.newton import NewtonOptions
from liemech.types import Matrix, Vector


class GGLVariationalEuler(GGLMethod):
    """VI-S (paper 000 eq. (55)).

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

    def constrained_stepper(self, system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector],
                            n_constraints: int, h: float) -> Stepper[Vector]:
        return VariationalEulerStepper(system, constraint, n_constraints, h, self.newton, self.initial_guess)


class _Start(NamedTuple):
    q: Vector
    p: Vector
    G: Matrix  # G(qⁿ)
    grad_V: Vector  # ∇V(qⁿ)


class VariationalEulerStepper(GGLStepper[_Start]):
    def __init__(self, system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector], m: int, h: float,
                 newton: NewtonOptions, initial_guess: InitialGuess) -> None:
        super().__init__(system, constraint, 2 * m, h, newton, initial_guess)
        self.m = m

    def begin(self, q0: Vector, p0: Vector) -> _Start:
        return _Start(q0, p0, self.G(q0), self.system.potential_gradient(q0))

    def residual(self, start: _Start, x: Vector, jacobian: bool) -> tuple[Vector, Matrix | None]:
        n, m, h, M, M_inv = self.n, self.m, self.h, self.M, self.M_inv
        q0, p0, G0 = start.q, start.p, start.G
        q1, p1, v0 = x[:n], x[n : 2 * n], x[2 * n : 3 * n]
        lam, gamma = x[3 * n : 3 * n + m], x[3 * n + m :]
        q_bar = q0 + h * v0
        G_bar, H_bar = self.G(q_bar), self.hessians(q_bar)
        T_bar = weighted_hessians(H_bar, gamma)
        u = M_inv @ p1
        T_u = T_bar @ u
        R = np.concatenate([
            q1 - q0 - h * v0 - h * (M_inv @ (G_bar.T @ gamma)),
            p1 - p0 + h * start.grad_V - h * (G0.T @ lam) + h * T_u,
            M @ v0 - p1 - h * T_u,
            self.constraint.value(q1),
            G_bar @ u,
        ])
        if not jacobian:
            return R, None
        W = hessian_columns(H_bar, u)
        eye, TM = np.eye(n), T_bar @ M_inv
        r1, r2, r3, r4, r5 = slice(0, n), slice(n, 2 * n), slice(2 * n, 3 * n), slice(3 * n, 3 * n + m), slice(3 * n + m, None)
        c_q, c_p, c_v, c_lam, c_gam = r1, r2, r3, r4, r5
        J = np.zeros((self.size, self.size))
        J[r1, c_q] = eye
        J[r1, c_v] = -h * eye - h * h * (M_inv @ T_bar)
        J[r1, c_gam] = -h * (M_inv @ G_bar.T)
        J[r2, c_p] = eye + h * TM
        J[r2, c_lam] = -h * G0.T
        J[r2, c_gam] = h * W
        J[r3, c_p] = -eye - h * TM
        J[r3, c_v] = M
        J[r3, c_gam] = -h * W
        J[r4, c_q] = self.G(q1)
        J[r5, c_p] = G_bar @ M_inv
        J[r5, c_v] = h * W.T
        return R, J

    def result(self, x: Vector) -> tuple[NodeState[Vector], dict[str, Vector]]:
        n, m = self.n, self.m
        q1, p1 = x[:n].copy(), x[n : 2 * n].copy()
        extras = {"velocity": x[2 * n : 3 * n].copy(), "lam": x[3 * n : 3 * n + m].copy(), "gamma": x[3 * n + m :].copy()}
        return NodeState(q1, p1, self.M_inv @ p1), extras
