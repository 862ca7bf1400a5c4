"""The energy-conserving augmented-Lagrange scheme of Leyendecker, Betsch & Steinmann (2004,
eqs. (29)–(31)): per step, solve
the penalty subproblem with P = ⟨λᵏ, g⟩ + μ|g|² for (q₁ᵏ, p₁ᵏ), then update λᵏ⁺¹ = λᵏ + 2μ g(q₁ᵏ)
(Uzawa) until |g(q₁ᵏ)|∞ ≤ tol. Each subproblem conserves its augmented Hamiltonian; the iterates
tend to the Lagrange-multiplier step (Prop. 3.5).

``variant="paper"``: the force of eq. (40), Σ_i (λ_i + μ(g_i(q₀) + g_i(q₁))) D̄g_i, the form the
paper's example uses; ``variant="modified"``: the modified derivative D̂ of eq. (31), which
converges faster (its limit has g(q₁) = 0). ``warm_start`` starts λ⁰ from the node's multiplier
(the previous step's; λ(0) of the continuous equations at the first step) instead of the paper's
λ⁰ = 0. ``sol.lam`` holds the step's effective multiplier (liemech's sign) and
``sol.extras["al_iterations"]`` the Uzawa iterations of each step.

The Uzawa iteration is a ``lax.while_loop`` around the compiled Newton solve of the subproblem. A
subproblem that fails ends the step with Newton's status; |g| still above tol after
``max_iterations`` ends it with ``StepStatus.METHOD_FAILURE`` and |g|∞ as the residual.
"""

from collections.abc import Hashable
from typing import Any, Literal, NamedTuple, SupportsFloat, SupportsIndex, TypeVar, cast

import jax
import jax.numpy as jnp

from liemech.input_checks import checked_count, checked_flag, checked_real
from liemech.mechanics.problem import Problem
from liemech.methods.compiled import Node, StepStatus, node
from liemech.methods.discrete_gradient.base import EnergyConservingMethod, checked_penalty
from liemech.methods.discrete_gradient.penalty import PenaltyCarry, PenaltyEquations, Subproblem
from liemech.methods.method import NodeState
from liemech.solvers.newton import NewtonOptions, newton_options

P = TypeVar("P")


class DiscreteGradientAugmentedLagrange(EnergyConservingMethod):
    """Energy-conserving augmented-Lagrange method (order 2), on Rⁿ with constant mass."""

    exact_constraint = False

    def __init__(
        self,
        mu: SupportsFloat,
        tol: SupportsFloat = 1e-10,
        variant: Literal["paper", "modified"] = "paper",
        *,
        warm_start: bool = False,
        max_iterations: SupportsIndex = 200,
        newton: NewtonOptions | None = None,
    ) -> None:
        if variant not in ("paper", "modified"):
            raise ValueError(f"variant must be 'paper' (eq. (40)) or 'modified' (eq. (31)), got {variant!r}")
        self.mu, self.tol, self.variant = checked_penalty(mu), checked_real(tol, "tol", 0.0), variant
        self.warm_start = checked_flag(warm_start, "warm_start")
        self.max_iterations = checked_count(max_iterations, "max_iterations")
        self.newton = newton_options(newton, NewtonOptions(jacobian="every"))
        self.name = f"DiscreteGradientAugmentedLagrange(mu={self.mu:g}, tol={self.tol:g}, variant={variant!r})"

    def own_failure(self) -> tuple[str, str, str]:
        return (f"augmented Lagrange: |g|∞ above tol = {self.tol:g} after {self.max_iterations} Uzawa iterations",
                "raise max_iterations or mu, or loosen tol", "residual ‖r‖∞")

    @property
    def cache_key(self) -> Hashable:
        # μ is an argument of the step (PenaltyCarry)
        return ("DiscreteGradientAugmentedLagrange", self.tol, self.variant, self.warm_start, self.max_iterations,
                self.newton)

    def equations(self, problem: Problem[P]) -> "AugmentedLagrangeEquations":
        return AugmentedLagrangeEquations(self, problem)


class _Uzawa(NamedTuple):
    iteration: jax.Array
    lam: jax.Array  # λᵏ, the paper's sign
    x: jax.Array  # (q₁ᵏ, p₁ᵏ), the start of the next subproblem
    newton_iterations: jax.Array
    residual: jax.Array
    status: jax.Array


class AugmentedLagrangeEquations:
    """The augmented-Lagrange step of one problem: Uzawa's iteration on the penalty subproblems
    (``PenaltyEquations`` with a fixed λ)."""

    def __init__(self, method: DiscreteGradientAugmentedLagrange, problem: Problem[P]) -> None:
        self.penalty = PenaltyEquations(problem, method.mu, method.newton,
                                        "midpoint" if method.variant == "paper" else "endpoint", method.name)
        self._tol, self._warm_start, self._max_iterations = method.tol, method.warm_start, method.max_iterations

    def start(self, state: NodeState[Any]) -> PenaltyCarry:
        """The carry at a node, with its multiplier (the warm start)."""
        lam = jnp.zeros(self.penalty.hamiltonian.m) if state.lam is None else state.lam
        return self.penalty.start(state, lam)

    def step(self, carry: object, h: jax.Array) -> tuple[object, Node]:
        c, penalty = cast(PenaltyCarry, carry), self.penalty
        H = penalty.hamiltonian

        def uzawa(u: _Uzawa) -> _Uzawa:
            outcome = penalty.solve(Subproblem(c.g, c.mu, u.lam, c.penalty), u.x, h)
            g1 = H.g(outcome.x[: H.n])
            violation = jnp.max(jnp.abs(g1))
            iteration = u.iteration + 1
            status = jnp.where(outcome.status != StepStatus.CONVERGED, outcome.status,
                               jnp.where(violation <= self._tol, StepStatus.CONVERGED,
                                         jnp.where(iteration >= self._max_iterations, StepStatus.METHOD_FAILURE,
                                                   StepStatus.RUNNING))).astype(jnp.int32)
            return _Uzawa(
                iteration=iteration,
                # λ of the last subproblem stays: the step's multiplier estimate is made with it.
                lam=jnp.where(status == StepStatus.RUNNING, u.lam + 2.0 * c.penalty * g1, u.lam),
                x=outcome.x,
                newton_iterations=u.newton_iterations + outcome.iterations,
                residual=jnp.where(status == StepStatus.METHOD_FAILURE, violation,
                                   outcome.residual),
                status=status,
            )

        # The node's effective multiplier (liemech's sign) is the warm start: λ⁰ = −λ.
        lam0 = -c.lam if self._warm_start else jnp.zeros(H.m)
        begin = _Uzawa(jnp.asarray(0, dtype=jnp.int32), lam0, H.predictor(c.g, c.mu, h), jnp.asarray(0, dtype=jnp.int32),
                       jnp.asarray(0.0), jnp.asarray(StepStatus.RUNNING, dtype=jnp.int32))
        end: _Uzawa = jax.lax.while_loop(lambda u: u.status == StepStatus.RUNNING, uzawa, begin)
        q1, p1 = end.x[: H.n], end.x[H.n :]
        lam1 = penalty.multiplier_estimate(Subproblem(c.g, c.mu, end.lam, c.penalty), q1)
        extras = {"al_iterations": (1.0 * end.iteration)[None]}
        return c._replace(g=q1, mu=p1, lam=lam1), node(q1, p1, H.M_inv @ p1, lam1, end.newton_iterations,
                                                       end.residual, end.status, extras)
