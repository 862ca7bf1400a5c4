"""The one-stage θ-methods of the GGL principle (paper 000 §4.3, eq. (76); spec 000 §B.3–B.5),
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

from typing import Literal, NamedTuple

import numpy as np

from liemech.integrators.ggl_base import (
    GGLMethod,
    GGLStepper,
    InitialGuess,
    checked_parameter,
    hessian_columns,
    weighted_hessians,
)
from liemech.integrators.method import NodeState, Stepper, Traits
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.system import MechanicalSystem
from liemech.solvers.newton import NewtonOptions
from liemech.types import Matrix, Vector

class GGLThetaA(GGLMethod):
    """VI-A(θ), Option A: constraints evaluated at q^{n+θ} (paper 000 eq. (79)), θ ∈ (0, 1).

    ``sol.eta`` is the scheme's v^{n+1}; ``sol.lam`` is None. Per step (row i of ``sol.extras``, the
    step t_i → t_{i+1}): "lam" λⁱ and "gamma" γⁱ, which belong to the whole interval.
    """

    def __init__(self, theta: float = 0.5, newton: NewtonOptions | None = None,
                 initial_guess: InitialGuess = "advanced") -> None:
        super().__init__(newton, initial_guess)
        self.theta = checked_parameter(theta, "theta", 0.0, 1.0, open_low=True, open_high=True)
        self.name = f"GGLThetaA(theta={self.theta:g})"

    @property
    def traits(self) -> Traits:
        return Traits(order=2 if self.theta == 0.5 else 1, symplectic=True, conserves_energy=False,
                      conserves_momentum_maps=True, constraints_at_step_end=())

    def constrained_stepper(self, system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector],
                            n_constraints: int, h: float) -> Stepper[Vector]:
        return ThetaStepper(system, constraint, n_constraints, h, self.newton, self.initial_guess, "A",
                            self.theta, 1.0)


class GGLThetaB(GGLMethod):
    """VI-B(θ, ϑ), Option B: trapezoidal constraint evaluation (paper 000 eq. (82)),
    θ ∈ [0, 1], ϑ ∈ (0, 1]; the defaults θ = 1, ϑ = ½ are the paper's scheme (83).

    ``sol.eta`` is the scheme's v^{n+1}; ``sol.lam`` is None; ``sol.extras`` as for GGLThetaA.
    """

    def __init__(self, theta: float = 1.0, vartheta: float = 0.5, newton: NewtonOptions | None = None,
                 initial_guess: InitialGuess = "advanced") -> None:
        super().__init__(newton, initial_guess)
        self.theta = checked_parameter(theta, "theta", 0.0, 1.0, open_low=False, open_high=False)
        self.vartheta = checked_parameter(vartheta, "vartheta", 0.0, 1.0, open_low=True, open_high=False)
        self.name = f"GGLThetaB(theta={self.theta:g}, vartheta={self.vartheta:g})"

    @property
    def traits(self) -> Traits:
        at_nodes: tuple[Literal["position", "velocity"], ...] = (
            ("position", "velocity") if self.theta == 1.0 else ("position",))
        return Traits(order=1, symplectic=True, conserves_energy=False, conserves_momentum_maps=True,
                      constraints_at_step_end=at_nodes)

    def constrained_stepper(self, system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector],
                            n_constraints: int, h: float) -> Stepper[Vector]:
        return ThetaStepper(system, constraint, n_constraints, h, self.newton, self.initial_guess, "B",
                            self.theta, self.vartheta)


class _Start(NamedTuple):
    q: Vector
    p: Vector
    G: Matrix | None  # G(qⁿ), for Option B


class ThetaStepper(GGLStepper[_Start]):
    def __init__(self, system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector], m: int, h: float,
                 newton: NewtonOptions, initial_guess: InitialGuess, option: Literal["A", "B"], theta: float,
                 vartheta: float) -> None:
        super().__init__(system, constraint, 2 * m, h, newton, initial_guess)
        self.m, self.option, self.theta, self.vartheta = m, option, theta, vartheta

    def begin(self, q0: Vector, p0: Vector) -> _Start:
        return _Start(q0, p0, self.G(q0) if self.option == "B" else None)

    def residual(self, start: _Start, x: Vector, jacobian: bool) -> tuple[Vector, Matrix | None]:
        n, m, h, M, M_inv, th, vth = self.n, self.m, self.h, self.M, self.M_inv, self.theta, self.vartheta
        q0, p0 = start.q, start.p
        q1, p1, v1 = x[:n], x[n : 2 * n], x[2 * n : 3 * n]
        lam, gamma = x[3 * n : 3 * n + m], x[3 * n + m :]
        q_th = (1.0 - th) * q0 + th * q1
        G_th, H_th = self.G(q_th), self.hessians(q_th)
        T_th = weighted_hessians(H_th, gamma)
        velocity_equation = M @ v1 - th * p0 - (1.0 - th) * p1
        if start.G is None:  # Option A: C = G_θ, E = 0
            C = G_th
            position = self.constraint.value(q_th)
        else:
            G0, G1 = start.G, self.G(q1)
            C = (1.0 - vth) * G0 + vth * G1
            E = th * (1.0 - vth) * G0 - (1.0 - th) * vth * G1
            velocity_equation -= h * (E.T @ lam)
            position = self.constraint.value(q1)
        R = np.concatenate([
            q1 - q0 - h * v1 - h * (M_inv @ (G_th.T @ gamma)),
            p1 - p0 + h * self.system.potential_gradient(q_th) - h * (C.T @ lam) + h * (T_th @ v1),
            velocity_equation,
            position,
            G_th @ v1,
        ])
        if not jacobian:
            return R, None
        eye = np.eye(n)
        r1, r2, r3, r4, r5 = slice(0, n), slice(n, 2 * n), slice(2 * n, 3 * n), slice(3 * n, 3 * n + m), slice(3 * n + m, None)
        c_q, c_p, c_v, c_lam, c_gam = r1, r2, r3, r4, r5
        W = hessian_columns(H_th, v1)
        J = np.zeros((self.size, self.size))
        J[r1, c_q] = eye - h * th * (M_inv @ T_th)
        J[r1, c_v] = -h * eye
        J[r1, c_gam] = -h * (M_inv @ G_th.T)
        J[r2, c_q] = h * th * self.system.potential_hessian(q_th)
        J[r2, c_p] = eye
        J[r2, c_v] = h * T_th
        J[r2, c_lam] = -h * C.T
        J[r2, c_gam] = h * W
        J[r3, c_p] = -(1.0 - th) * eye
        J[r3, c_v] = M
        if start.G is None:
            J[r2, c_q] -= h * th * weighted_hessians(H_th, lam)
            J[r4, c_q] = th * G_th
        else:
            J[r3, c_lam] = -h * E.T
            Lam1 = weighted_hessians(self.hessians(q1), lam)
            J[r2, c_q] -= h * vth * Lam1
            J[r3, c_q] = h * (1.0 - th) * vth * Lam1
            J[r4, c_q] = G1
        J[r5, c_q] = th * W.T
        J[r5, c_v] = G_th
        return R, J

    def result(self, x: Vector) -> tuple[NodeState[Vector], dict[str, Vector]]:
        n, m = self.n, self.m
        node = NodeState(x[:n].copy(), x[n : 2 * n].copy(), x[2 * n : 3 * n].copy())
        return node, {"lam": x[3 * n : 3 * n + m].copy(), "gamma": x[3 * n + m :].copy()}
