"""The energy-conserving penalty scheme of paper 001 (eq. (24) in the form of eq. (39), spec §I.6,
§I.9) for H = ½pᵀM⁻¹p + U(q) + μ|g(q)|² on Rⁿ:

    (q₁ − q₀)/h = M⁻¹p_{½}
    (p₁ − p₀)/h = −D̄U(q₀, q₁) − μ Σ_i (g_i(q₀) + g_i(q₁)) D̄g_i(q₀, q₁)

with D̄ the Gonzalez discrete derivative on Rⁿ; (g_i(q₀) + g_i(q₁)) D̄g_i is an exact discrete
derivative of g_i², so H + μ|g|² is conserved to round-off. The rods become springs of stiffness
μ; as μ → ∞ the solution tends to the Lagrange-multiplier one and −μ(g(q₀) + g(q₁)) to its λ
(Prop. 3.2). ``sol.extras["penalty_multiplier"]`` holds that estimate, one row per step, at the
step's midpoint t_{k+½}.
"""

from typing import TypeVar, cast

import numpy as np

from liemech.discrete_gradient import gonzalez_derivative_and_jacobian
from liemech.groups.euclidean import Rn
from liemech.integrators.method import Method, NodeState, Stepper, StepReport, Traits
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.solvers.newton import NewtonOptions, solve
from liemech.types import Matrix, Vector

P = TypeVar("P")


class DiscreteGradientPenalty(Method):
    """Energy-conserving penalty method with parameter μ > 0 (order 2), on Rⁿ with constant mass."""

    def __init__(self, mu: float, newton: NewtonOptions | None = None) -> None:
        if not (isinstance(mu, (int, float)) and np.isfinite(mu) and mu > 0.0):
            raise ValueError(f"mu must be a positive finite penalty parameter, got {mu!r}")
        self.mu = float(mu)
        self.newton = NewtonOptions(jacobian="every") if newton is None else newton
        self.name = f"DiscreteGradientPenalty(mu={mu:g})"

    @property
    def traits(self) -> Traits:
        return Traits(order=2, symplectic=False, conserves_energy=True, conserves_momentum_maps=True)

    def stepper(self, problem: Problem[P], h: float) -> Stepper[P]:
        system = problem.system
        if not isinstance(problem.group, Rn):
            raise TypeError(f"{self.name} works on Rn(n) configuration spaces, got {problem.group!r}")
        if problem.holonomic is None:
            raise ValueError(f"{self.name} needs a holonomic constraint (Problem(..., holonomic=...))")
        if not isinstance(system, MechanicalSystem) or system.constant_inertia is None:
            raise TypeError(f"{self.name} needs a MechanicalSystem with a constant inertia matrix")
        return cast(Stepper[P], PenaltyStepper(cast(MechanicalSystem[Vector], system),
                                               cast(HolonomicConstraint[Vector], problem.holonomic),
                                               self.mu, h, self.newton))


class PenaltyStepper(Stepper[Vector]):
    def __init__(self, system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector], mu: float,
                 h: float, newton: NewtonOptions) -> None:
        assert system.constant_inertia is not None
        self._system, self._constraint, self._mu, self._h, self._newton = system, constraint, mu, h, newton
        self._M_inv = np.linalg.inv(system.constant_inertia)
        self._n = system.group.dim

    def _penalty_force(self, q0: Vector, q1: Vector) -> tuple[Vector, Matrix, Vector]:
        """F = D̄U + μ Σ_i (g_i(q₀) + g_i(q₁)) D̄g_i, ∂F/∂q₁, and g(q₀) + g(q₁)."""
        V, c, G = self._system, self._constraint, self._system.group
        step, mid = q1 - q0, 0.5 * (q0 + q1)
        force, jac = gonzalez_derivative_and_jacobian(
            V.potential(q0), V.potential(q1), V.potential_gradient(q1), V.potential_gradient(mid),
            V.potential_hessian(mid), step)
        g0, g1 = c.value(q0), c.value(q1)
        B1, B_mid, H_mid = c.trivialised_jacobian(G, q1), c.trivialised_jacobian(G, mid), c.trivialised_hessians(G, mid)
        for i in range(g0.size):
            D_i, dD_i = gonzalez_derivative_and_jacobian(float(g0[i]), float(g1[i]), B1[i], B_mid[i], H_mid[i], step)
            weight = self._mu * float(g0[i] + g1[i])
            force = force + weight * D_i
            jac = jac + weight * dD_i + self._mu * np.outer(D_i, B1[i])
        return force, jac, g0 + g1

    def _residual(self, q0: Vector, p0: Vector, x: Vector, jacobian: bool) -> tuple[Vector, Matrix | None]:
        n, h = self._n, self._h
        q1, p1 = x[:n], x[n:]
        force, d_force, _ = self._penalty_force(q0, q1)
        R = np.concatenate([(q1 - q0) / h - self._M_inv @ (0.5 * (p0 + p1)), (p1 - p0) / h + force])
        if not jacobian:
            return R, None
        eye = np.eye(n)
        J = np.block([[eye / h, -0.5 * self._M_inv], [d_force, eye / h]])
        return R, J

    def step(self, state: NodeState[Vector], k: int) -> tuple[NodeState[Vector], StepReport]:
        q0, p0 = state.g, state.mu
        guess = np.concatenate([q0 + self._h * (self._M_inv @ p0), p0])  # explicit predictor
        # μ g(q) carries round-off μ·eps·|q|²: that, not |x|, sets the attainable residual.
        scale = max(1.0, float(np.max(np.abs(guess))), self._mu * max(1.0, float(q0 @ q0)))
        result = solve(lambda x, need: self._residual(q0, p0, x, need), guess, self._newton, scale, k, k * self._h)
        n = self._n
        q1, p1 = result.x[:n], result.x[n:]
        _, _, g_sum = self._penalty_force(q0, q1)
        extras = {"penalty_multiplier": -self._mu * g_sum}
        return NodeState(q1, p1, self._M_inv @ p1), StepReport(result.iterations, result.residual, extras)
