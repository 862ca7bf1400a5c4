"""The implicit-midpoint variational integrator of paper 002 (spec §II.6, App. B corrected):
L_d(q_ℓ, q_r) = h ℓ((q_ℓ + q_r)/2, (q_r − q_ℓ)/h), so with q_m = (q_j + q)/2 and g = (q − q_j)/h,
    p − p_j − h f(q_m, g) = 0,     h μ(q_m, g) − h (p + p_j)/2 = 0        (18as)
(for ℓ = ½q̇ᵀMq̇ − V: f = ½Q(q_m, g) − ∇V(q_m), μ = M(q_m) g). Second order, symplectic.
"""

import numpy as np

from liemech.integrators.flat import FlatMethod
from liemech.integrators.method import NodeState, Stepper, StepReport, Traits
from liemech.mechanics.lagrangian import Lagrangian
from liemech.solvers.newton import NewtonOptions, solve
from liemech.types import Matrix, Vector


class MidpointVI(FlatMethod):
    """Midpoint variational integrator (order 2, symplectic, preserves cyclic momenta), on Rⁿ."""

    def __init__(self, newton: NewtonOptions | None = None) -> None:
        self.newton = NewtonOptions() if newton is None else newton
        self.name = "MidpointVI()"

    @property
    def traits(self) -> Traits:
        return Traits(order=2, symplectic=True, conserves_energy=False, conserves_momentum_maps=True)

    def flat_stepper(self, lagrangian: Lagrangian[Vector], h: float) -> Stepper[Vector]:
        return MidpointStepper(lagrangian, h, self.newton)


class MidpointStepper(Stepper[Vector]):
    def __init__(self, lagrangian: Lagrangian[Vector], h: float, newton: NewtonOptions) -> None:
        self._L, self._h, self._newton = lagrangian, h, newton
        self._n = lagrangian.group.dim

    def _residual(self, q_j: Vector, p_j: Vector, x: Vector, jacobian: bool) -> tuple[Vector, Matrix | None]:
        L, h, n = self._L, self._h, self._n
        p, q = x[:n], x[n:]
        q_m, g = 0.5 * (q_j + q), (q - q_j) / h
        R = np.concatenate([p - p_j - h * L.force(q_m, g), h * L.momentum(q_m, g) - 0.5 * h * (p + p_j)])
        if not jacobian:
            return R, None
        eye = np.eye(n)
        d_f = 0.5 * L.force_d_g(q_m, g) + L.force_d_eta(q_m, g) / h  # d f / dq
        d_mu = 0.5 * L.momentum_d_g(q_m, g) + L.momentum_d_eta(q_m, g) / h
        J = np.block([[eye, -h * d_f], [-0.5 * h * eye, h * d_mu]])
        return R, J

    def step(self, state: NodeState[Vector], k: int) -> tuple[NodeState[Vector], StepReport]:
        q_j, p_j = state.g, state.mu
        guess = np.concatenate([p_j, q_j + self._h * state.eta])  # explicit predictor
        scale = max(1.0, float(np.max(np.abs(guess))))
        result = solve(lambda x, need: self._residual(q_j, p_j, x, need), guess, self._newton, scale, k, k * self._h)
        n = self._n
        p, q = result.x[:n], result.x[n:]
        return NodeState(q, p, self._L.velocity(q, p)), StepReport(result.iterations, result.residual)
