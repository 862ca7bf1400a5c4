"""Compiled methods: a method's pure step function, and the errors of a failed step.

A ``CompiledMethod`` gives ``compiled_step(problem)``: a pure function (carry, h) ↦ (carry, node)
whose carry holds the scheme's state (and Newton's starting guess) and whose node holds what the
Solution stores, with the Newton statistics of the step. ``liemech.run.chunks`` runs it over a
whole trajectory, ``liemech.run.flow`` in one traceable scan.
"""

from abc import abstractmethod
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final, Literal, NamedTuple, TypeVar, cast

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from liemech.groups.base import LieGroup
from liemech.mechanics.problem import Problem
from liemech.methods.method import Method, NodeState
from liemech.solvers.compiled_newton import Status
from liemech.solvers.newton import ConvergenceError, NewtonOptions, newton_options

P = TypeVar("P")
R = TypeVar("R", bound=Callable[..., Any])


class StepStatus(IntEnum):
    """How a step ended, carried as an integer through ``lax.scan``: the outcome of its Newton solve
    (``compiled_newton.Status``, whose codes these repeat), or what the method found around it."""

    CONVERGED = Status.CONVERGED
    RUNNING = Status.RUNNING
    NONFINITE_RESIDUAL = Status.NONFINITE_RESIDUAL
    SINGULAR_JACOBIAN = Status.SINGULAR_JACOBIAN
    NO_CONVERGENCE = Status.NO_CONVERGENCE
    DIVERGED = Status.DIVERGED
    NONFINITE_STATE = 5  # the step solved its equations (or had none) and its node is not finite
    METHOD_FAILURE = 6  # the method's own check or iteration around Newton failed (``own_failure``)


STALLED: Final = 1e-8
"""A Newton run that ends without converging below this residual has stalled near round-off
rather than diverged; its error suggests a fresh Jacobian, not a smaller step."""


class Node(NamedTuple):
    """What a step hands to the Solution: the node state and the step's Newton statistics."""

    g: object  # a point: an array, or a tuple of arrays on a product
    mu: jax.Array
    eta: jax.Array
    lam: jax.Array  # (m,); empty without multipliers or for a method that does not report them
    iterations: jax.Array
    residual: jax.Array
    status: jax.Array
    extras: dict[str, jax.Array]  # the method's per-step quantities (Solution.extras)


Step = Callable[[object, jax.Array], tuple[object, Node]]
"""(carry, h) ↦ (carry after the step, the node it reaches). The carry is a NamedTuple with at
least the fields g, mu and lam of the node it sits at."""


@dataclass(frozen=True)
class CompiledStep:
    """A method's pure step for one problem, and the carry that starts it from a node state. The
    step is wrapped in ``finite_nodes`` here, once for every caller (integrate, flow, …).
    ``members``: how ``integrate_ensemble`` runs the members of a batch, vectorised (``vmap``: one
    program steps them all, which amortises XLA's cost per operation) or one after another in one
    compiled program (``lax.map``: for a step so large that batching gains nothing, while a
    vectorised Newton iterates until its slowest member has converged)."""

    step: Step
    start: Callable[[NodeState[Any]], object]
    members: Literal["vectorised", "sequential"] = "vectorised"

    def __post_init__(self) -> None:
        object.__setattr__(self, "step", finite_nodes(self.step))


def finite_nodes(step: Step) -> Step:
    """``step`` with every node checked: a solved step whose node (g, μ, η, λ or an extra) is not
    finite everywhere reports ``StepStatus.NONFINITE_STATE``, so that no run, the last step included,
    returns a NaN or inf."""

    def checked(carry: object, h: jax.Array) -> tuple[object, Node]:
        new_carry, node = step(carry, h)
        leaves = jax.tree.leaves((node.g, node.mu, node.eta, node.lam, node.extras))
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(leaf)) for leaf in leaves]))
        status = jnp.where((node.status == StepStatus.CONVERGED) & ~finite, StepStatus.NONFINITE_STATE, node.status)
        return new_carry, node._replace(status=status.astype(jnp.int32))

    return checked


class CompiledMethod(Method):
    """A method whose step is a pure JAX function (see the module docstring)."""

    newton: NewtonOptions

    @property
    @abstractmethod
    def cache_key(self) -> Hashable:
        """Everything that changes the compiled step (equal keys share one compilation)."""

    @abstractmethod
    def compiled_step(self, problem: Problem[P]) -> CompiledStep:
        """The pure step for ``problem``."""

    def batched_step(self, problem: Problem[P]) -> CompiledStep:
        """The pure step for ``problem``, arranged to run on batches (``jax.vmap``); by default
        ``compiled_step``."""
        return self.compiled_step(problem)

    def own_failure(self) -> tuple[str, str, str]:
        """Reason, hint and the name of the measure reported as the residual for
        ``StepStatus.METHOD_FAILURE``: a method that stops a step by a check or an iteration of its
        own says which."""
        return "the method's own check of the step failed", "try a smaller step h", "residual ‖r‖∞"

    def failure_hint(self, status: int, group: LieGroup[Any] | None) -> str | None:
        """A sentence on what makes this method's step fail with ``status`` on ``group``, where the
        method knows one (appended to ``ConvergenceError``'s hint); None by default."""
        return None

    def check(self, problem: Problem[P]) -> None:
        """``Method.check``, and ``newton`` a NewtonOptions (for a method with a Newton solve)."""
        super().check(problem)
        if hasattr(self, "newton"):
            newton_options(self.newton, NewtonOptions(), carries=True)  # the constructor refused the rest


def compiled_for(problem: Problem[P], method: CompiledMethod, kind: str,
                 build: Callable[[Step], R]) -> tuple[CompiledStep, R]:
    """The method's step for ``problem`` and its compiled form, built once per system, constraints
    and method (the initial data enter as arguments), after ``method.check(problem)``."""
    method.check(problem)
    compiled_step = method.compiled_step(problem)
    key = (method.cache_key, kind, *problem.step_key)
    cache = problem.system.compiled_steps
    if key not in cache:
        cache[key] = build(compiled_step.step)
    return compiled_step, cast(R, cache[key])


def node(g: object, mu: jax.Array, eta: jax.Array, lam: jax.Array, iterations: ArrayLike, residual: ArrayLike,
         status: ArrayLike, extras: dict[str, jax.Array] | None = None) -> Node:
    """A Node with the statistics in the dtypes every step uses (lax.cond needs them equal)."""
    return Node(g, mu, eta, lam, jnp.asarray(iterations, dtype=jnp.int32),
                jnp.asarray(residual, dtype=jnp.float64), jnp.asarray(status, dtype=jnp.int32),
                {} if extras is None else extras)


REASONS: Final = {
    StepStatus.NONFINITE_RESIDUAL: ("non-finite residual",
                                    "a potential, force or constraint returned NaN or inf at a stage point: "
                                    "check it there, or try a smaller step h"),
    StepStatus.SINGULAR_JACOBIAN: ("singular Jacobian",
                                   "the step equations are singular there (redundant constraints, or a singular "
                                   "inertia at a stage point?); else try a smaller step h"),
    StepStatus.NO_CONVERGENCE: ("no convergence", "try a smaller step h"),
    StepStatus.DIVERGED: ("Newton's iterates diverged: the residual, finite at the starting guess, was not at a "
                          "later iterate (the last finite one is shown)",
                          "the step equations may have no solution near the starting guess at this h, or a "
                          "potential, force or constraint is NaN or inf where the iterates went: try a smaller "
                          "step h"),
    StepStatus.NONFINITE_STATE: ("the step produced a non-finite state",
                                 "a potential, force, inertia or constraint returned NaN or inf during the step "
                                 "(check them near the last node reached), or the state overflowed: then try a "
                                 "smaller step h"),
}


def stalled_hint(newton: NewtonOptions) -> str:
    """The hint for a Newton solve that ran out of iterations with its residual near round-off: a
    tolerance below round-off, a frozen Jacobian or too few iterations, never the step size."""
    if newton.tol is not None:
        return (f"the residual stalled near round-off above tol = {newton.tol:g}: loosen tol, or use tol=None "
                "to iterate to round-off")
    if newton.jacobian == "first":
        return ("the residual stalled near round-off: try NewtonOptions(jacobian='refreshed') or jacobian='every', or "
                "a larger max_iterations")
    if newton.jacobian == "refreshed":
        return "the residual stalled near round-off: try NewtonOptions(jacobian='every') or a larger max_iterations"
    return "the residual stalled near round-off: try a larger max_iterations"


def convergence_error(method: CompiledMethod, step: int, time: float, residual: float,
                      status: int, group: LieGroup[Any] | None = None) -> ConvergenceError:
    """The error of a failed step, with a hint that fits the cause (and the method's own
    ``failure_hint`` on the problem's ``group``)."""
    measure = "residual ‖r‖∞"
    if status == StepStatus.METHOD_FAILURE:
        reason, hint, measure = method.own_failure()
    else:
        reason, hint = REASONS[StepStatus(status)]
    if status == StepStatus.NO_CONVERGENCE:
        reason = f"no convergence in {method.newton.max_iterations} iterations"
        hint = stalled_hint(method.newton) if residual <= STALLED else "try a smaller step h or a larger max_iterations"
    if status in (StepStatus.SINGULAR_JACOBIAN, StepStatus.DIVERGED) and getattr(method, "retraction", None) is not None:
        hint += " or the other retraction"
    specific = method.failure_hint(status, group)
    if specific is not None:
        hint += f"; {specific}"
    return ConvergenceError(step, time, residual, reason, hint, measure)
