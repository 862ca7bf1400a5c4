"""The energy-conserving augmented-Lagrange scheme of paper 001 (eqs. (29)–(31), spec §I.7): per
step, solve the penalty subproblem with P = ⟨λᵏ, g⟩ + μ|g|² for (q₁ᵏ, p₁ᵏ), then update
λᵏ⁺¹ = λᵏ + 2μ g(q₁ᵏ) (Uzawa) until |g(q₁ᵏ)|∞ ≤ tol. Each subproblem conserves its augmented
Hamiltonian; the iterates tend to the Lagrange-multiplier step (Prop. 3.5).

``variant="paper"``: the force of eq. (40), Σ_i (λ_i + μ(g_i(q₀) + g_i(q₁))) D̄g_i, the form the
paper's example uses; ``variant="modified"``: the modified derivative D̂ of eq. (31), which
converges faster (its limit has g(q₁) = 0). ``warm_start`` starts λ⁰ from the previous step's λ
instead of the paper's λ⁰ = 0. ``sol.lam`` holds the step's effective multiplier (liemech's sign)
and ``sol.extras["al_iterations"]`` the Uzawa iterations of each step.
"""

from typing import Literal

import numpy as np

from liemech.integrators.discrete_gradient_penalty import PenaltyStepper
from liemech.integrators.flat import EnergyConservingConstrainedMethod, checked_penalty
from liemech.integrators.method import NodeState, Stepper, StepReport
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.system import MechanicalSystem
from liemech.solvers.newton import ConvergenceError, NewtonOptions
from liemech.types import Vector


class DiscreteGradientAugmentedLagrange(EnergyConservingConstrainedMethod):
    """Energy-conserving augmented-Lagrange method (order 2), on Rⁿ with constant mass."""

    exact_constraint = False

    def __init__(
        self,
        mu: float,
        tol: float = 1e-10,
        variant: Literal["paper", "modified"] = "paper",
        *,
        warm_start: bool = False,
        max_iterations: int = 200,
        newton: NewtonOptions | None = None,
    ) -> None:
        if not tol > 0.0:
            raise ValueError(f"tol must be positive, got {tol!r}")
        if variant not in ("paper", "modified"):
            raise ValueError(f"variant must be 'paper' (eq. (40)) or 'modified' (eq. (31)), got {variant!r}")
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {max_iterations!r}")
        self.mu, self.tol, self.variant = checked_penalty(mu), float(tol), variant
        self.warm_start, self.max_iterations = warm_start, max_iterations
        self.newton = NewtonOptions(jacobian="every") if newton is None else newton
        self.name = f"DiscreteGradientAugmentedLagrange(mu={mu:g}, tol={tol:g}, variant={variant!r})"

    def constrained_stepper(self, system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector],
                            n_constraints: int, h: float) -> Stepper[Vector]:
        inner = PenaltyStepper(system, constraint, n_constraints, self.mu, h, self.newton,
                               "midpoint" if self.variant == "paper" else "endpoint")
        return AugmentedLagrangeStepper(self, inner, constraint, h)


class AugmentedLagrangeStepper(Stepper[Vector]):
    def __init__(self, method: DiscreteGradientAugmentedLagrange, inner: PenaltyStepper,
                 constraint: HolonomicConstraint[Vector], h: float) -> None:
        self._method, self._inner, self._constraint, self._h = method, inner, constraint, h

    def step(self, state: NodeState[Vector], k: int) -> tuple[NodeState[Vector], StepReport]:
        q0, p0 = state.g, state.mu
        inner, mu, n = self._inner, self._method.mu, q0.size
        if not self._method.warm_start:
            inner.lam = np.zeros_like(inner.lam)
        guess, newton_iterations = inner.predictor(q0, p0), 0
        for iteration in range(1, self._method.max_iterations + 1):
            x, report = inner.solve_step(q0, p0, guess, k)
            newton_iterations += report.iterations
            q1, p1 = x[:n], x[n:]
            violation = float(np.max(np.abs(self._constraint.value(q1))))
            lam_effective = inner.multiplier_estimate(q0, q1)
            if violation <= self._method.tol:
                extras = {"al_iterations": np.array([float(iteration)])}
                # The effective multiplier is the next warm start: λ⁰ = −(liemech's λ).
                inner.lam = -lam_effective
                return (NodeState(q1, p1, inner.velocity(p1), lam_effective),
                        StepReport(newton_iterations, report.residual, extras))
            inner.lam = inner.lam + 2.0 * mu * self._constraint.value(q1)
            guess = x
        raise ConvergenceError(k, k * self._h, violation,
                               f"augmented Lagrange: |g| above tol = {self._method.tol:g} after "
                               f"{self._method.max_iterations} Uzawa iterations")
