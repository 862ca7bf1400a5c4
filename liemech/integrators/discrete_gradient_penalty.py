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

import numpy as np

from liemech.discrete_gradient import gonzalez_derivative_and_jacobian, gonzalez_numerator
from liemech.integrators.flat import EnergyConservingConstrainedMethod, checked_penalty
from liemech.integrators.method import NodeState, Stepper, StepReport
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.system import MechanicalSystem
from liemech.solvers.newton import NewtonOptions, solve
from liemech.types import Matrix, Vector


class DiscreteGradientPenalty(EnergyConservingConstrainedMethod):
    """Energy-conserving penalty method with parameter μ > 0 (order 2), on Rⁿ with constant mass."""

    exact_constraint = False

    def __init__(self, mu: float, newton: NewtonOptions | None = None) -> None:
        self.mu = checked_penalty(mu)
        self.newton = NewtonOptions(jacobian="every") if newton is None else newton
        self.name = f"DiscreteGradientPenalty(mu={mu:g})"

    def constrained_stepper(self, system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector],
                            n_constraints: int, h: float) -> Stepper[Vector]:
        return PenaltyStepper(system, constraint, n_constraints, self.mu, h, self.newton)


class PenaltyStepper(Stepper[Vector]):
    """The penalty step, with an optional fixed multiplier λ added (the augmented-Lagrange
    subproblem (29)): the constraint force is a discrete derivative of P = ⟨λ, g⟩ + μ|g|².

    ``variant="midpoint"`` (eq. (39)/(40)): Σ_i (λ_i + μ(g_i(q₀) + g_i(q₁))) D̄g_i(q₀, q₁).
    ``variant="endpoint"`` (the modified derivative D̂ of eq. (31)): ∇g(q_½)ᵀ(λ + 2μ g(q₁)) plus the
    Gonzalez correction that makes it exact for P; its limit satisfies g(q₁) = 0 rather than the
    mean of g over the step.
    """

    def __init__(self, system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector], n_constraints: int,
                 mu: float, h: float, newton: NewtonOptions, variant: str = "midpoint") -> None:
        assert system.constant_inertia is not None
        self._system, self._constraint, self._mu, self._h, self._newton = system, constraint, mu, h, newton
        self._M_inv = np.linalg.inv(system.constant_inertia)
        self._n = system.group.dim
        self._variant = variant
        self.lam = np.zeros(n_constraints)

    def _constraint_force(self, q0: Vector, q1: Vector) -> tuple[Vector, Matrix]:
        """The discrete derivative of ⟨λ, g⟩ + μ|g|² and its derivative with respect to q₁."""
        c, G, mu, lam = self._constraint, self._system.group, self._mu, self.lam
        step, mid = q1 - q0, 0.5 * (q0 + q1)
        g0, g1 = c.value(q0), c.value(q1)
        B1, B_mid, H_mid = c.trivialised_jacobian(G, q1), c.trivialised_jacobian(G, mid), c.trivialised_hessians(G, mid)
        n = self._n
        force, jac = np.zeros(n), np.zeros((n, n))
        if self._variant == "midpoint":
            for i in range(g0.size):
                D_i, dD_i = gonzalez_derivative_and_jacobian(float(g0[i]), float(g1[i]), B1[i], B_mid[i], H_mid[i],
                                                             step)
                weight = float(lam[i]) + mu * float(g0[i] + g1[i])
                force = force + weight * D_i
                jac = jac + weight * dD_i + mu * np.outer(D_i, B1[i])
            return force, jac
        weights = lam + 2.0 * mu * g1
        main = B_mid.T @ weights
        d_main = 0.5 * np.einsum("i,iab->ab", weights, H_mid) + 2.0 * mu * B_mid.T @ B1
        P0 = float(lam @ g0) + mu * float(g0 @ g0)
        P1 = float(lam @ g1) + mu * float(g1 @ g1)
        squared = float(step @ step)
        numerator = gonzalez_numerator(P0, P1, float(main @ step))
        S = numerator / squared if squared > 0.0 else 0.0
        force, jac = main + S * step, d_main + S * np.eye(n)
        if squared > 0.0:
            d_numerator = B1.T @ weights - main - d_main.T @ step
            jac = jac + np.outer(step, (d_numerator - 2.0 * S * step) / squared)
        return force, jac

    def _residual(self, q0: Vector, p0: Vector, x: Vector, jacobian: bool) -> tuple[Vector, Matrix | None]:
        n, h, V = self._n, self._h, self._system
        q1, p1 = x[:n], x[n:]
        step, mid = q1 - q0, 0.5 * (q0 + q1)
        grad_U, d_grad_U = gonzalez_derivative_and_jacobian(
            V.potential(q0), V.potential(q1), V.potential_gradient(q1), V.potential_gradient(mid),
            V.potential_hessian(mid), step)
        force, d_force = self._constraint_force(q0, q1)
        R = np.concatenate([(q1 - q0) / h - self._M_inv @ (0.5 * (p0 + p1)), (p1 - p0) / h + grad_U + force])
        if not jacobian:
            return R, None
        eye = np.eye(n)
        return R, np.block([[eye / h, -0.5 * self._M_inv], [d_grad_U + d_force, eye / h]])

    def solve_step(self, q0: Vector, p0: Vector, guess: Vector, k: int) -> tuple[Vector, StepReport]:
        """(q₁, p₁) for the current λ, by Newton from ``guess``."""
        # μ g(q) carries round-off μ·eps·|q|²: that, not |x|, sets the attainable residual.
        scale = max(1.0, float(np.max(np.abs(guess))), self._mu * max(1.0, float(q0 @ q0)))
        result = solve(lambda x, need: self._residual(q0, p0, x, need), guess, self._newton, scale, k, k * self._h)
        return result.x, StepReport(result.iterations, result.residual)

    def predictor(self, q0: Vector, p0: Vector) -> Vector:
        return np.concatenate([q0 + self._h * (self._M_inv @ p0), p0])

    def multiplier_estimate(self, q0: Vector, q1: Vector) -> Vector:
        """The effective multiplier of the step in liemech's sign: −(λ + μ(g(q₀) + g(q₁))) (midpoint
        variant) or −(λ + 2μ g(q₁)) (endpoint variant)."""
        g0, g1 = self._constraint.value(q0), self._constraint.value(q1)
        return -(self.lam + (self._mu * (g0 + g1) if self._variant == "midpoint" else 2.0 * self._mu * g1))

    def velocity(self, p: Vector) -> Vector:
        return self._M_inv @ p

    def step(self, state: NodeState[Vector], k: int) -> tuple[NodeState[Vector], StepReport]:
        q0, p0 = state.g, state.mu
        x, report = self.solve_step(q0, p0, self.predictor(q0, p0), k)
        n = self._n
        q1, p1 = x[:n], x[n:]
        extras = {"penalty_multiplier": self.multiplier_estimate(q0, q1)}
        return NodeState(q1, p1, self.velocity(p1)), StepReport(report.iterations, report.residual, extras)
