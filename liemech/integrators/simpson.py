"""The Simpson variational integrator of paper 002 (spec §II.2–II.4): quadratic finite elements on
nodes q_j, q_{j+1/2}, q_{j+1} and Simpson's quadrature, L_d = h/6 [ℓ(q_ℓ, g_ℓ) + 4ℓ(q_m, g_m) + ℓ(q_r, g_r)]
with the nodal velocities g_ℓ = (−3q_ℓ + 4q_m − q_r)/h, g_m = (q_r − q_ℓ)/h, g_r = (q_ℓ − 4q_m + 3q_r)/h.

Per step, with μ = ∂ℓ/∂q̇ and f = ∂ℓ/∂q, unknowns x = (q_m, p, q_r) solve (18ara), (18arb) and
the corrected (18arc), written for any Lagrangian (for ℓ = ½q̇ᵀMq̇ − V, f = ½ Q − ∇V):
    R_m = μ(q_r, g_r) − μ(q_ℓ, g_ℓ) − h f(q_m, g_m)                                   = 0
    R_p = p − p_j − h [f(q_ℓ, g_ℓ) + 4 f(q_m, g_m) + f(q_r, g_r)] / 6                   = 0
    R_q = [μ(q_ℓ, g_ℓ) + 4μ(q_m, g_m) + μ(q_r, g_r)]/6 − (p + p_j)/2 − h [f(q_ℓ, g_ℓ) − f(q_r, g_r)]/12 = 0
The printed (18arc) (h/12 and h/6 for h/24 and h/12) gives a second-order method; these
coefficients give order 4. The Jacobian is the exact chain rule through μ and f.
"""

import numpy as np

from liemech.integrators.flat import FlatMethod
from liemech.integrators.method import NodeState, Stepper, StepReport, Traits
from liemech.mechanics.lagrangian import Lagrangian
from liemech.solvers.newton import NewtonOptions, solve
from liemech.types import Matrix, Vector


class SimpsonVI(FlatMethod):
    """Simpson variational integrator (order 4, symplectic, preserves cyclic momenta), on Rⁿ."""

    def __init__(self, newton: NewtonOptions | None = None) -> None:
        self.newton = NewtonOptions() if newton is None else newton
        self.name = "SimpsonVI()"

    @property
    def traits(self) -> Traits:
        return Traits(order=4, symplectic=True, conserves_energy=False, conserves_momentum_maps=True)

    def flat_stepper(self, lagrangian: Lagrangian[Vector], h: float) -> Stepper[Vector]:
        return SimpsonStepper(lagrangian, h, self.newton)


class SimpsonStepper(Stepper[Vector]):
    def __init__(self, lagrangian: Lagrangian[Vector], h: float, newton: NewtonOptions) -> None:
        self._L, self._h, self._newton = lagrangian, h, newton
        n = lagrangian.group.dim
        self._n = n
        eye, zero = np.eye(n), np.zeros((n, n))
        # d(q_m, p, q_r)/dx and h·d(g_ℓ, g_m, g_r)/dx for x = (q_m, p, q_r)
        self._dq_m, self._dp, self._dq_r = (np.hstack(b) for b in ([eye, zero, zero], [zero, eye, zero], [zero, zero, eye]))
        self._dg = (np.hstack([4 * eye, zero, -eye]) / h, np.hstack([zero, zero, eye]) / h,
                    np.hstack([-4 * eye, zero, 3 * eye]) / h)

    def _residual(self, q_l: Vector, p_j: Vector, x: Vector, jacobian: bool) -> tuple[Vector, Matrix | None]:
        L, h, n = self._L, self._h, self._n
        q_m, p, q_r = x[:n], x[n : 2 * n], x[2 * n :]
        g_l, g_m, g_r = (-3 * q_l + 4 * q_m - q_r) / h, (q_r - q_l) / h, (q_l - 4 * q_m + 3 * q_r) / h
        nodes = ((q_l, g_l), (q_m, g_m), (q_r, g_r))
        mu = [L.momentum(q, g) for q, g in nodes]
        f = [L.force(q, g) for q, g in nodes]
        R_m = mu[2] - mu[0] - h * f[1]
        R_p = p - p_j - h * (f[0] + 4 * f[1] + f[2]) / 6
        R_q = (mu[0] + 4 * mu[1] + mu[2]) / 6 - 0.5 * (p + p_j) - h * (f[0] - f[2]) / 12
        R = np.concatenate([R_m, R_p, R_q])
        if not jacobian:
            return R, None
        positions = (None, self._dq_m, self._dq_r)
        d_mu, d_f = [], []
        for (q, g), dq, dg in zip(nodes, positions, self._dg):
            dmu = L.momentum_d_eta(q, g) @ dg
            df = L.force_d_eta(q, g) @ dg
            if dq is not None:
                dmu = dmu + L.momentum_d_g(q, g) @ dq
                df = df + L.force_d_g(q, g) @ dq
            d_mu.append(dmu)
            d_f.append(df)
        J = np.vstack([
            d_mu[2] - d_mu[0] - h * d_f[1],
            self._dp - h * (d_f[0] + 4 * d_f[1] + d_f[2]) / 6,
            (d_mu[0] + 4 * d_mu[1] + d_mu[2]) / 6 - 0.5 * self._dp - h * (d_f[0] - d_f[2]) / 12,
        ])
        return R, J

    def step(self, state: NodeState[Vector], k: int) -> tuple[NodeState[Vector], StepReport]:
        q_l, p_j, v = state.g, state.mu, state.eta
        # An explicit predictor: the paper's guess (q_j, p_j, q_j) can converge to a spurious root
        # when q moves fast (ψ̇ = 252 rad/s on the Lagrange top).
        guess = np.concatenate([q_l + 0.5 * self._h * v, p_j, q_l + self._h * v])
        scale = max(1.0, float(np.max(np.abs(guess))))
        result = solve(lambda x, need: self._residual(q_l, p_j, x, need), guess, self._newton, scale, k, k * self._h)
        n = self._n
        q, p = result.x[2 * n :], result.x[n : 2 * n]
        return NodeState(q, p, self._L.velocity(q, p)), StepReport(result.iterations, result.residual)
