"""A run in compiled chunks: a method's pure step looped by XLA over a chunk of steps per call, driven
from Python once per chunk.

One compilation per (system, constraints, method) serves every run: h, the first step and the
number of steps are arguments, not constants, so a new h or T does not recompile. A failed step
freezes the state; ``run`` then raises ``ConvergenceError`` with the step, time and residual.

Three things keep the cost of a chunk, beyond its steps, small:

- XLA's CPU runtime runs the operations outside a program's loops on a pool of threads as soon as
  there are more than a few of them over buffers of more than 512 bytes, and waiting for the pool
  costs far more per call than those operations. So the nodes of a chunk go into one buffer of
  rows of float64 (``Packing``), not a buffer per leaf of the node, and the carry is donated to the
  chunk (XLA then loops in its buffers instead of copying each leaf first).
- A chunk holds as many steps as fit in ``ROW_BYTES`` of rows (``chunk_length``), so the per-call
  cost is spread over hundreds or thousands of steps.
- Scalars are passed as numpy values, which JAX hands to XLA without a dispatch of its own.
"""

from collections.abc import Callable, Hashable
from typing import Final, NamedTuple, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np
from numpy.typing import NDArray

from liemech.mechanics.problem import Problem
from liemech.methods.compiled import CompiledMethod, Node, Step, StepStatus, compiled_for, convergence_error
from liemech.methods.method import NodeState
from liemech.xla_options import compiler_options

P = TypeVar("P")

ROW_BYTES: Final = 2**18
"""The bytes of node rows a chunk may hold; its number of steps follows from the node's size."""

MIN_CHUNK: Final = 128
MAX_CHUNK: Final = 4096


def chunk_length(width: int) -> int:
    """Steps per chunk for nodes of ``width`` float64 entries: ``ROW_BYTES`` of rows, between
    ``MIN_CHUNK`` and ``MAX_CHUNK``."""
    return int(np.clip(ROW_BYTES // (8 * max(width, 1)), MIN_CHUNK, MAX_CHUNK))


_STATISTICS: Final = 3
"""The first columns of a packed node: iterations, residual, status."""


class Packing:
    """A node as one row of float64 and back: (iterations, residual, status, then every leaf of
    g, μ, η, λ and the extras, raveled); the integer statistics are exact in float64."""

    def __init__(self, node: Node) -> None:
        leaves, self._treedef = jax.tree.flatten((node.g, node.mu, node.eta, node.lam, node.extras))
        self._shapes = [tuple(leaf.shape) for leaf in leaves]
        sizes = [int(np.prod(shape, dtype=np.int64)) for shape in self._shapes]
        self._edges = _STATISTICS + np.cumsum([0, *sizes])
        self.width = int(self._edges[-1])
        self.length = chunk_length(self.width)

    @staticmethod
    def pack(node: Node) -> jax.Array:
        leaves = jax.tree.leaves((node.g, node.mu, node.eta, node.lam, node.extras))
        statistics = [node.iterations, node.residual, node.status]
        return jnp.concatenate([jnp.stack(statistics).astype(jnp.float64),
                                *(jnp.ravel(leaf).astype(jnp.float64) for leaf in leaves)])

    def unpack(self, rows: NDArray[np.float64]) -> Node:
        """The nodes of ``rows`` (n, width), each leaf with a leading axis of n."""
        leaves = [rows[:, a:b].reshape(len(rows), *shape)
                  for a, b, shape in zip(self._edges[:-1], self._edges[1:], self._shapes, strict=True)]
        g, mu, eta, lam, extras = jax.tree.unflatten(self._treedef, leaves)
        iterations, residual, status = (rows[:, 0].astype(np.int32), rows[:, 1], rows[:, 2].astype(np.int32))
        return Node(g, mu, eta, lam, *cast(tuple[jax.Array, jax.Array, jax.Array], (iterations, residual, status)),
                    extras)


class _Chunk(NamedTuple):
    carry: object
    rows: jax.Array  # (length, width): the packed nodes; rows past the run's end or after a failure are zeros
    failure: jax.Array  # (step, residual, status) of the first failed step; status 0 if none


class _Loop(NamedTuple):
    k: jax.Array
    carry: object
    rows: jax.Array
    failure: jax.Array


def _signature(carry: object) -> Hashable:
    return tuple((leaf.shape, leaf.dtype) for leaf in jax.tree.leaves(carry))


_fresh = jax.jit(lambda carry: jax.tree.map(jnp.copy, carry))
"""A copy of a carry in buffers of its own, which a chunk may then take over (a method's start
may hand back arrays that its caller still holds)."""


class ChunkRunner:
    """The compiled chunk (carry, h, first, n_steps, failure) ↦ (carry, rows, failure), taking over
    the buffers of the carry and failure it is given, and the packing of its rows (recorded when a
    carry of new shapes is traced)."""

    def __init__(self, step: Step) -> None:
        # Jitted once so that finding the node's shapes and running the step share one trace.
        self._step = jax.jit(step)
        self._packings: dict[Hashable, Packing] = {}
        self._compiled = jax.jit(self._run_chunk, donate_argnums=(0, 4), compiler_options=compiler_options())

    def packing(self, carry: object) -> Packing:
        """The packing of the rows of a chunk run from ``carry`` (after one has been)."""
        return self._packings[_signature(carry)]

    def __call__(self, carry: object, h: np.float64, first: np.int64, n_steps: np.int64,
                 failure: NDArray[np.float64] | jax.Array) -> _Chunk:
        chunk: _Chunk = self._compiled(carry, h, first, n_steps, failure)
        return chunk

    def _run_chunk(self, carry: object, h: jax.Array, first: jax.Array, n_steps: jax.Array,
                   failure: jax.Array) -> _Chunk:
        packing = self._packings[_signature(carry)] = Packing(jax.eval_shape(self._step, carry, h)[1])

        def running(loop: _Loop) -> jax.Array:
            return (loop.k < packing.length) & (first + loop.k < n_steps) & (loop.failure[2] == StepStatus.CONVERGED)

        def body(loop: _Loop) -> _Loop:
            new_carry, node = self._step(loop.carry, h)
            failed = node.status != StepStatus.CONVERGED
            rows = jax.lax.dynamic_update_slice(loop.rows, packing.pack(node)[None], (loop.k, 0))
            failure = jnp.where(failed, jnp.stack([first + loop.k, node.residual, 1.0 * node.status]), loop.failure)
            kept = jax.tree.map(lambda old, new: jnp.where(failed, old, new), loop.carry, new_carry)
            return _Loop(loop.k + 1, kept, rows, failure)

        # A while loop rather than a scan: the last chunk stops at the run's end (or at a failure)
        # without a conditional around every step.
        rows = jnp.zeros((packing.length, packing.width))
        end = jax.lax.while_loop(running, body, _Loop(jnp.asarray(0), carry, rows, failure))
        return _Chunk(end.carry, end.rows, end.failure)


class Stored(NamedTuple):
    """The nodes a run keeps (t_k for k a multiple of ``store_every``, and the last), with the Newton
    statistics of the steps that end in each interval (t_prev, t_k]: their number, the sum of their
    iterations and the largest accepted residual."""

    nodes: Node
    steps: NDArray[np.int64]
    iterations: NDArray[np.int64]
    residuals: NDArray[np.float64]


def _tally(block: NDArray[np.float64], first: int, n_steps: int, store_every: int, steps: NDArray[np.int64],
           iterations: NDArray[np.int64], residuals: NDArray[np.float64]) -> NDArray[np.float64]:
    """Adds the Newton statistics of a chunk's steps (rows ``block``, the first of them step
    ``first`` of the run) to their intervals, and returns the rows of the nodes kept."""
    count = len(block)
    if store_every == 1:  # each step its own interval, every node kept: a dozen numpy calls fewer
        steps[first:first + count] = 1
        iterations[first:first + count] = block[:, 0]
        residuals[first:first + count] = block[:, 1]
        return block
    ends = np.arange(first + 1, first + count + 1)  # the steps of this chunk end at t_ends
    interval = (ends - 1) // store_every
    starts = np.flatnonzero(((ends - 1) % store_every == 0) | (ends == first + 1))  # an interval's first step
    which = interval[starts]
    steps[which] += np.diff(starts, append=count)
    iterations[which] += np.add.reduceat(block[:, 0], starts).astype(np.int64)
    residuals[which] = np.maximum(residuals[which], np.maximum.reduceat(block[:, 1], starts))
    kept: NDArray[np.float64] = block[(ends % store_every == 0) | (ends == n_steps)]
    return kept


def run(problem: Problem[P], method: CompiledMethod, h: float, n_steps: int, store_every: int = 1,
        done: Callable[[int], None] | None = None) -> Stored:
    """The stored nodes of the run t_1 … t_N as stacked numpy arrays (leading axis over the stored
    nodes); ``done`` is told the number of steps completed after each chunk. Each chunk's nodes are
    thinned as soon as they arrive, so the memory of a run is that of its stored nodes."""
    compiled, runner = compiled_for(problem, method, "chunk", ChunkRunner)
    carry = _fresh(compiled.start(NodeState(problem.g0, problem.mu0, problem.eta0, problem.lam0)))
    failure: NDArray[np.float64] | jax.Array = np.zeros(3)
    intervals = -(-n_steps // store_every)
    steps, iterations = np.zeros(intervals, np.int64), np.zeros(intervals, np.int64)
    residuals = np.zeros(intervals)
    kept: list[NDArray[np.float64]] = []
    first = 0
    while first < n_steps:
        carry, rows, failure = runner(carry, np.float64(h), np.int64(first), np.int64(n_steps), failure)
        step_index, residual, status = (float(v) for v in np.asarray(failure))
        if status != StepStatus.CONVERGED:
            raise convergence_error(method, int(step_index), int(step_index) * h, residual, int(status),
                                    problem.group)
        packing = runner.packing(carry)
        count = min(packing.length, n_steps - first)
        kept.append(_tally(np.asarray(rows)[:count], first, n_steps, store_every, steps, iterations, residuals))
        first += count
        if done is not None:
            done(first)
    return Stored(packing.unpack(np.concatenate(kept)), steps, iterations, residuals)
