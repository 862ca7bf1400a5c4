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
from typing import Any, Final, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike
import numpy as np

from liemech.integrators.method import Method, NodeState, Stepper, StepReport
from liemech.mechanics.problem import Problem
from liemech.solvers.compiled_newton import Status
from liemech.solvers.newton import ConvergenceError, NewtonOptions

P = TypeVar("P")

CHUNK: Final = 128
"""Steps per compiled chunk: one compilation serves every run length; the steps of the last chunk
past the end of the run are skipped by ``lax.cond``."""


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


class CompiledStep(NamedTuple):
    """A method's pure step for one problem, and the carry that starts it from a node state."""

    step: Step
    start: Callable[[NodeState[Any]], object]


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

    def outer_failure(self) -> tuple[str, str]:
        """Reason and hint for ``Status.OUTER_NO_CONVERGENCE``, for a method with an outer
        iteration around Newton."""
        return "the outer iteration did not converge", "try a smaller step h"

    def stepper(self, problem: Problem[P], h: float) -> Stepper[P]:
        """One compiled step at a time (for one-step maps; ``integrate`` runs whole chunks)."""
        return _SingleStepper(problem, self, h)


def _compiled(problem: Problem[P], method: CompiledMethod, kind: str,
              build: Callable[[Step], Callable[..., Any]]) -> tuple[CompiledStep, Callable[..., Any]]:
    """The method's step for ``problem`` and its compiled form, built once per system, constraints
    and method (the initial data enter as arguments)."""
    compiled_step = method.compiled_step(problem)
    key = (method.cache_key, kind, problem.holonomic, problem.nonholonomic)
    cache = problem.system.compiled_steps
    runner = cache.get(key)
    if runner is None:
        runner = cache[key] = build(compiled_step.step)
    return compiled_step, runner


class _SingleStepper(Stepper[P]):
    def __init__(self, problem: Problem[P], method: CompiledMethod, h: float) -> None:
        self._compiled, self._step = _compiled(problem, method, "single", jax.jit)
        self._method, self._h = method, h

    def step(self, state: NodeState[P], k: int) -> tuple[NodeState[P], StepReport]:
        _, node = self._step(self._compiled.start(state), jnp.asarray(self._h))
        node = jax.tree.map(np.asarray, node)
        if int(node.status) != Status.CONVERGED:
            raise convergence_error(self._method, k, k * self._h, float(node.residual), int(node.status))
        lam = node.lam if state.lam is not None and node.lam.size else None
        return NodeState(node.g, node.mu, node.eta, lam), StepReport(int(node.iterations), float(node.residual),
                                                                      dict(node.extras))


class _Chunk(NamedTuple):
    carry: object
    nodes: Node
    failure: jax.Array  # (step, residual, status) of the first failed step; status 0 if none


def _chunk_runner(step: Step) -> Callable[..., _Chunk]:
    def run_chunk(carry: object, h: jax.Array, first: jax.Array, n_steps: jax.Array,
                  failure: jax.Array) -> _Chunk:
        def body(state: tuple[object, jax.Array], k: jax.Array) -> tuple[tuple[object, jax.Array], Node]:
            carry, failure = state
            active = (first + k < n_steps) & (failure[2] == Status.CONVERGED)
            new_carry, node = jax.lax.cond(active, lambda c: step(c, h), lambda c: (c, idle), carry)
            failed = active & (node.status != Status.CONVERGED)
            kept = jax.tree.map(lambda old, new: jnp.where(failed, old, new), carry, new_carry)
            failure = jnp.where(failed, jnp.stack([first + k, node.residual, 1.0 * node.status]), failure)
            return (kept, failure), node

        # The node of a skipped step (past the end of the run, or after a failure): never stored.
        idle = jax.tree.map(lambda leaf: jnp.zeros(leaf.shape, leaf.dtype), jax.eval_shape(step, carry, h)[1])
        (carry, failure), nodes = jax.lax.scan(body, (carry, failure), jnp.arange(CHUNK))
        return _Chunk(carry, nodes, failure)

    return jax.jit(run_chunk)


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
    Status.SINGULAR_JACOBIAN: ("singular Jacobian", "try a smaller step h or another retraction"),
    Status.NO_CONVERGENCE: ("no convergence", "try a smaller step h"),
    Status.NONFINITE_STATE: ("the explicit step produced a non-finite state", "reduce h"),
}


def convergence_error(method: CompiledMethod, step: int, time: float, residual: float,
                      status: int) -> ConvergenceError:
    """The error of a failed step, with a hint that fits the cause."""
    reason, hint = method.outer_failure() if status == Status.OUTER_NO_CONVERGENCE else REASONS[Status(status)]
    if status == Status.NO_CONVERGENCE:
        reason = f"no convergence in {method.newton.max_iterations} iterations"
        if residual <= STALLED:
            hint = "the residual stalled near round-off: try NewtonOptions(jacobian='every') or a larger max_iterations"
    return ConvergenceError(step, time, residual, reason, hint)


def run(problem: Problem[P], method: CompiledMethod, h: float, n_steps: int,
        done: Callable[[int], None] | None = None) -> Node:
    """Every node t_1 … t_N of the run as stacked numpy arrays (leading axis N); ``done`` is told
    the number of steps completed after each chunk."""
    compiled, runner = _compiled(problem, method, "chunk", _chunk_runner)
    carry = compiled.start(NodeState(problem.g0, problem.mu0, problem.eta0, problem.lam0))
    failure = jnp.zeros(3)
    chunks: list[Node] = []
    for first in range(0, n_steps, CHUNK):
        carry, nodes, failure = runner(carry, jnp.asarray(h), jnp.asarray(first), jnp.asarray(n_steps), failure)
        chunks.append(jax.tree.map(np.asarray, nodes))
        step_index, residual, status = (float(v) for v in np.asarray(failure))
        if status != Status.CONVERGED:
            raise convergence_error(method, int(step_index), int(step_index) * h, residual, int(status))
        if done is not None:
            done(min(first + CHUNK, n_steps))
    stacked: Node = jax.tree.map(lambda *parts: np.concatenate(parts)[:n_steps], *chunks)
    return stacked
