"""Compiled stepping: a method's pure step function run in ``lax.scan`` over fixed-length chunks.

A ``CompiledMethod`` gives ``compiled_step(problem)``: a pure function (carry, h) ↦ (carry, node)
whose carry holds the scheme's state (and Newton's starting guess) and whose node holds what the
Solution stores, with the Newton statistics of the step. ``run`` compiles one chunk of
``CHUNK`` steps per (problem, method) — h and the number of steps are arguments, not constants,
so a new h or T does not recompile — and drives it from Python once per chunk. A failed step
freezes the state; ``run`` then raises ``ConvergenceError`` with the step, time and residual.
"""

from abc import abstractmethod
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any, Final, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike
from numpy.typing import NDArray

from liemech.groups.base import LieGroup
from liemech.mechanics.problem import Problem
from liemech.methods.method import Method, NodeState, Stepper, StepReport
from liemech.solvers.compiled_newton import Status
from liemech.solvers.newton import ConvergenceError, NewtonOptions, newton_options
from liemech.xla_options import jit

P = TypeVar("P")

CHUNK: Final = 128
"""Steps per compiled chunk: one compilation serves every run length; the last chunk stops at the
run's end."""


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
    step is wrapped in ``finite_nodes`` here, once for every caller (integrate, flow, …)."""

    step: Step
    start: Callable[[NodeState[Any]], object]

    def __post_init__(self) -> None:
        object.__setattr__(self, "step", finite_nodes(self.step))


def finite_nodes(step: Step) -> Step:
    """``step`` with every node checked: a solved step whose node (g, μ, η, λ or an extra) is not
    finite everywhere reports ``Status.NONFINITE_STATE``, so that no run, the last step included,
    returns a NaN or inf."""

    def checked(carry: object, h: jax.Array) -> tuple[object, Node]:
        new_carry, node = step(carry, h)
        leaves = jax.tree.leaves((node.g, node.mu, node.eta, node.lam, node.extras))
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(leaf)) for leaf in leaves]))
        status = jnp.where((node.status == Status.CONVERGED) & ~finite, Status.NONFINITE_STATE, node.status)
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

    def outer_failure(self) -> tuple[str, str]:
        """Reason and hint for ``Status.OUTER_NO_CONVERGENCE``, for a method with an outer
        iteration around Newton."""
        return "the outer iteration did not converge", "try a smaller step h"

    def failure_hint(self, status: int, group: LieGroup[Any] | None) -> str | None:
        """A sentence on what makes this method's step fail with ``status`` on ``group``, where the
        method knows one (appended to ``ConvergenceError``'s hint); None by default."""
        return None

    def check(self, problem: Problem[P]) -> None:
        """``Method.check``, and ``newton`` a NewtonOptions (for a method with a Newton solve)."""
        super().check(problem)
        if hasattr(self, "newton"):
            newton_options(self.newton, NewtonOptions(), carries=True)  # the constructor refused the rest

    def stepper(self, problem: Problem[P], h: float) -> Stepper[P]:
        """One compiled step at a time (for one-step maps; ``integrate`` runs whole chunks)."""
        return _SingleStepper(problem, self, h)


def _compiled(problem: Problem[P], method: CompiledMethod, kind: str,
              build: Callable[[Step], Callable[..., Any]]) -> tuple[CompiledStep, Callable[..., Any]]:
    """The method's step for ``problem`` and its compiled form, built once per system, constraints
    and method (the initial data enter as arguments), after ``method.check(problem)``."""
    method.check(problem)
    compiled_step = method.compiled_step(problem)
    key = (method.cache_key, kind, problem.holonomic, problem.nonholonomic, problem.force, problem.sparsity)
    cache = problem.system.compiled_steps
    runner = cache.get(key)
    if runner is None:
        runner = cache[key] = build(compiled_step.step)
    return compiled_step, runner


class _SingleStepper(Stepper[P]):
    def __init__(self, problem: Problem[P], method: CompiledMethod, h: float) -> None:
        self._compiled, self._step = _compiled(problem, method, "single", jit)
        self._method, self._h, self._group = method, h, problem.group

    def step(self, state: NodeState[P], k: int) -> tuple[NodeState[P], StepReport]:
        _, node = self._step(self._compiled.start(replace(state, t=k * self._h)), jnp.asarray(self._h))
        node = jax.tree.map(np.asarray, node)
        if int(node.status) != Status.CONVERGED:
            raise convergence_error(self._method, k, k * self._h, float(node.residual), int(node.status),
                                    self._group)
        lam = node.lam if state.lam is not None and node.lam.size else None
        return (NodeState(node.g, node.mu, node.eta, lam, (k + 1) * self._h),
                StepReport(int(node.iterations), float(node.residual), dict(node.extras)))


class _Chunk(NamedTuple):
    carry: object
    nodes: Node  # CHUNK nodes; those past the run's end or after a failure are zeros
    failure: jax.Array  # (step, residual, status) of the first failed step; status 0 if none


class _Loop(NamedTuple):
    k: jax.Array
    carry: object
    nodes: Node
    failure: jax.Array


def _chunk_runner(step: Step) -> Callable[..., _Chunk]:
    # Jitted once so that finding the node's shapes and running the step share one trace.
    traced_step = jax.jit(step)

    def run_chunk(carry: object, h: jax.Array, first: jax.Array, n_steps: jax.Array,
                  failure: jax.Array) -> _Chunk:
        def running(loop: _Loop) -> jax.Array:
            return (loop.k < CHUNK) & (first + loop.k < n_steps) & (loop.failure[2] == Status.CONVERGED)

        def body(loop: _Loop) -> _Loop:
            new_carry, node = traced_step(loop.carry, h)
            failed = node.status != Status.CONVERGED
            nodes = jax.tree.map(lambda stored, leaf: stored.at[loop.k].set(leaf), loop.nodes, node)
            failure = jnp.where(failed, jnp.stack([first + loop.k, node.residual, 1.0 * node.status]), loop.failure)
            kept = jax.tree.map(lambda old, new: jnp.where(failed, old, new), loop.carry, new_carry)
            return _Loop(loop.k + 1, kept, nodes, failure)

        # A while loop rather than a scan: the last chunk stops at the run's end (or at a failure)
        # without a conditional around every step.
        shapes = jax.eval_shape(traced_step, carry, h)[1]
        nodes = jax.tree.map(lambda leaf: jnp.zeros((CHUNK, *leaf.shape), leaf.dtype), shapes)
        end = jax.lax.while_loop(running, body, _Loop(jnp.asarray(0), carry, nodes, failure))
        return _Chunk(end.carry, end.nodes, end.failure)

    return jit(run_chunk)


def node(g: object, mu: jax.Array, eta: jax.Array, lam: jax.Array, iterations: ArrayLike, residual: ArrayLike,
         status: ArrayLike, extras: dict[str, jax.Array] | None = None) -> Node:
    """A Node with the statistics in the dtypes every step uses (lax.cond needs them equal)."""
    return Node(g, mu, eta, lam, jnp.asarray(iterations, dtype=jnp.int32),
                jnp.asarray(residual, dtype=jnp.float64), jnp.asarray(status, dtype=jnp.int32),
                {} if extras is None else extras)


REASONS: Final = {
    Status.NONFINITE_RESIDUAL: ("non-finite residual",
                                "a potential, force or constraint returned NaN or inf at a stage point: "
                                "check it there, or try a smaller step h"),
    Status.SINGULAR_JACOBIAN: ("singular Jacobian",
                               "the step equations are singular there (redundant constraints, or a singular "
                               "inertia at a stage point?); else try a smaller step h"),
    Status.NO_CONVERGENCE: ("no convergence", "try a smaller step h"),
    Status.DIVERGED: ("Newton's iterates diverged: the residual, finite at the starting guess, was not at a later "
                      "iterate (the last finite one is shown)",
                      "the step equations may have no solution near the starting guess at this h, or a potential, "
                      "force or constraint is NaN or inf where the iterates went: try a smaller step h"),
    Status.CARRIED_MULTIPLIER_DRIFT: ("the carried multiplier λ left the continuous λ(g, η)",
                                      "the paper's carried closure is unstable near attracting motions (its "
                                      "multiplier has a parasitic root): use nonholonomic_multiplier='consistent', "
                                      "or carried_drift_limit=None to run on regardless"),
    Status.NONFINITE_STATE: ("the step produced a non-finite state",
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
    reason, hint = method.outer_failure() if status == Status.OUTER_NO_CONVERGENCE else REASONS[Status(status)]
    if status == Status.NO_CONVERGENCE:
        reason = f"no convergence in {method.newton.max_iterations} iterations"
        hint = stalled_hint(method.newton) if residual <= STALLED else "try a smaller step h or a larger max_iterations"
    if status in (Status.SINGULAR_JACOBIAN, Status.DIVERGED) and getattr(method, "retraction", None) is not None:
        hint += " or the other retraction"
    specific = method.failure_hint(status, group)
    if specific is not None:
        hint += f"; {specific}"
    measure = "relative deviation" if status == Status.CARRIED_MULTIPLIER_DRIFT else "residual ‖r‖∞"
    return ConvergenceError(step, time, residual, reason, hint, measure)


class Stored(NamedTuple):
    """The nodes a run keeps (t_k for k a multiple of ``store_every``, and the last), with the Newton
    statistics of the steps that end in each interval (t_prev, t_k]: their number, the sum of their
    iterations and the largest accepted residual."""

    nodes: Node
    steps: NDArray[np.int64]
    iterations: NDArray[np.int64]
    residuals: NDArray[np.float64]


def run(problem: Problem[P], method: CompiledMethod, h: float, n_steps: int, store_every: int = 1,
        done: Callable[[int], None] | None = None) -> Stored:
    """The stored nodes of the run t_1 … t_N as stacked numpy arrays (leading axis over the stored
    nodes); ``done`` is told the number of steps completed after each chunk. Each chunk's nodes are
    thinned as soon as they arrive, so the memory of a run is that of its stored nodes."""
    compiled, runner = _compiled(problem, method, "chunk", _chunk_runner)
    carry = compiled.start(NodeState(problem.g0, problem.mu0, problem.eta0, problem.lam0))
    failure = jnp.zeros(3)
    intervals = -(-n_steps // store_every)
    steps, iterations = np.zeros(intervals, np.int64), np.zeros(intervals, np.int64)
    residuals = np.zeros(intervals)
    kept: list[Node] = []
    for first in range(0, n_steps, CHUNK):
        carry, nodes, failure = runner(carry, jnp.asarray(h), jnp.asarray(first), jnp.asarray(n_steps), failure)
        step_index, residual, status = (float(v) for v in np.asarray(failure))
        if status != Status.CONVERGED:
            raise convergence_error(method, int(step_index), int(step_index) * h, residual, int(status),
                                    problem.group)
        ends = np.arange(first + 1, min(first + CHUNK, n_steps) + 1)  # the steps of this chunk end at t_ends
        interval = (ends - 1) // store_every
        np.add.at(steps, interval, 1)
        np.add.at(iterations, interval, np.asarray(nodes.iterations)[:ends.size])
        np.maximum.at(residuals, interval, np.asarray(nodes.residual)[:ends.size])
        rows = np.flatnonzero((ends % store_every == 0) | (ends == n_steps))
        if rows.size:
            kept.append(jax.tree.map(lambda leaf: np.asarray(leaf)[rows], nodes))
        if done is not None:
            done(int(ends[-1]))
    stacked: Node = jax.tree.map(lambda *parts: np.concatenate(parts), *kept)
    return Stored(stacked, steps, iterations, residuals)
