"""The energy-conserving Lagrange-multiplier scheme with Gonzalez discrete derivatives (paper 001
eq. (23), spec §I.5) for H = ½pᵀM⁻¹p + U(q) on Rⁿ with holonomic constraints g(q) = 0:

    (q₁ − q₀)/h = M⁻¹p_{½} + S (p₁ − p₀)
    (p₁ − p₀)/h = −∇U(q_{½}) + B(q_{½})ᵀλ − S (q₁ − q₀)           g(q₁) = 0
    S = [U(q₁) − U(q₀) − ∇U(q_{½})·Δq − λ·B(q_{½})Δq] / (|Δq|² + |Δp|²)

(T is quadratic, so its own quotient vanishes; the constraint force enters with liemech's plus
sign, λ = −λ_paper). H(q₁, p₁) = H(q₀, p₀) and g(q₁) = 0 to round-off; second order.
"""

import numpy as np

from liemech.discrete_gradient import gonzalez_numerator
from liemech.integrators.flat import EnergyConservingConstrainedMethod
from liemech.integrators.method import NodeState, Stepper, StepReport
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.system import MechanicalSystem
from liemech.solvers.newton import NewtonOptions, solve
from liemech.types import Matrix, Vector


class DiscreteGradientMultiplier(EnergyConservingConstrainedMethod):
    """Energy-conserving Lagrange-multiplier method (order 2, not symplectic), on Rⁿ with constant
    mass and holonomic constraints."""

    def __init__(self, newton: NewtonOptions | None = None) -> None:
        # The quotient S varies fast with the iterate (1/|Δz|²): a frozen Jacobian does not converge.
        self.newton = NewtonOptions(jacobian="every") if newton is None else newton
        self.name = "DiscreteGradientMultiplier()"

    def constrained_stepper(self, system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector],
                            n_constraints: int, h: float) -> Stepper[Vector]:
        return MultiplierStepper(system, constraint, h, self.newton)


class MultiplierStepper(Stepper[Vector]):
    def __init__(self, system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector], h: float,
                 newton: NewtonOptions) -> None:
        assert system.constant_inertia is not None
        self._system, self._constraint, self._h, self._newton = system, constraint, h, newton
        self._group = system.group
        self._M_inv = np.linalg.inv(system.constant_inertia)
        self._n = system.group.dim

    def _residual(self, q0: Vector, p0: Vector, x: Vector, jacobian: bool) -> tuple[Vector, Matrix | None]:
        n, h, V, c, G = self._n, self._h, self._system, self._constraint, self._group
        q1, p1, lam = x[:n], x[n : 2 * n], x[2 * n :]
        dq, dp = q1 - q0, p1 - p0
        q_mid, p_mid = 0.5 * (q0 + q1), 0.5 * (p0 + p1)
        grad_U = V.potential_gradient(q_mid)
        B = c.trivialised_jacobian(G, q_mid)
        force = B.T @ lam
        # S = S_U + S_P with P = −⟨λ, g⟩ (the plus-sign force), over the phase-space norm |Δz|².
        squared = float(dq @ dq + dp @ dp)
        numerator = gonzalez_numerator(V.potential(q0), V.potential(q1), float((grad_U - force) @ dq))
        S = numerator / squared if squared > 0.0 else 0.0
        R = np.concatenate([dq / h - self._M_inv @ p_mid - S * dp, dp / h + grad_U - force + S * dq, c.value(q1)])
        if not jacobian:
            return R, None
        hess_U = V.potential_hessian(q_mid)
        curvature = np.einsum("k,kab->ab", lam, c.trivialised_hessians(G, q_mid))  # Σ λ_k ∇²g_k
        # dS = (dN − S d|Δz|²)/|Δz|², N = U(q₁) − U(q₀) − (∇U(q_½) − Bᵀλ)·Δq
        dN_dq = V.potential_gradient(q1) - grad_U + force - 0.5 * (hess_U - curvature) @ dq
        dN_dlam = B @ dq
        dS = np.zeros(2 * n + lam.size)
        if squared > 0.0:
            dS[:n] = (dN_dq - 2.0 * S * dq) / squared
            dS[n : 2 * n] = -2.0 * S * dp / squared
            dS[2 * n :] = dN_dlam / squared
        eye, m = np.eye(n), lam.size
        J = np.zeros((2 * n + m, 2 * n + m))
        J[:n, :n] = eye / h
        J[:n, n : 2 * n] = -0.5 * self._M_inv - S * eye
        J[:n] -= np.outer(dp, dS)
        J[n : 2 * n, :n] = 0.5 * (hess_U - curvature) + S * eye
        J[n : 2 * n, n : 2 * n] = eye / h
        J[n : 2 * n, 2 * n :] = -B.T
        J[n : 2 * n] += np.outer(dq, dS)
        J[2 * n :, :n] = c.trivialised_jacobian(G, q1)
        return R, J

    def step(self, state: NodeState[Vector], k: int) -> tuple[NodeState[Vector], StepReport]:
        q0, p0 = state.g, state.mu
        lam0 = np.zeros(0) if state.lam is None else state.lam
        v0 = self._M_inv @ p0
        guess = np.concatenate([q0 + self._h * v0, p0, lam0])  # explicit predictor; S is 0/0 at Δz = 0
        scale = max(1.0, float(np.max(np.abs(guess))))
        result = solve(lambda x, need: self._residual(q0, p0, x, need), guess, self._newton, scale, k, k * self._h)
        n = self._n
        q1, p1, lam1 = result.x[:n], result.x[n : 2 * n], result.x[2 * n :]
        return NodeState(q1, p1, self._M_inv @ p1, lam1.copy()), StepReport(result.iterations, result.residual)

