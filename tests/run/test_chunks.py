"""A run in compiled chunks (``liemech.run.chunks``): the nodes packed into rows come back as they
were, a run across several chunks keeps its nodes and statistics, and the buffers a chunk takes
over are never the caller's."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import liemech as lm
from liemech.methods.compiled import CompiledStep, Node, compiled_for
from liemech.methods.method import NodeState
from liemech.run.chunks import MAX_CHUNK, MIN_CHUNK, ROW_BYTES, ChunkRunner, Packing, chunk_length
from liemech.systems.heavy_top import HeavyTop
from tests.perturbation import Perturbation

TOP = HeavyTop()


def test_packed_nodes_come_back_exactly_with_their_shapes_and_dtypes() -> None:
    """A node on a product (a tuple point), with multipliers, integer statistics and an extra."""
    rng = np.random.default_rng(3)
    nodes = [Node((jnp.asarray(rng.normal(size=(3, 3))), jnp.asarray(rng.normal(size=2))), jnp.asarray(rng.normal(size=5)),
                  jnp.asarray(rng.normal(size=5)), jnp.asarray(rng.normal(size=2)), jnp.asarray(7 + k, dtype=jnp.int32),
                  jnp.asarray(rng.normal()), jnp.asarray(k, dtype=jnp.int32), {"work": jnp.asarray(rng.normal(size=4))})
             for k in range(3)]
    packing = Packing(nodes[0])
    assert packing.width == 3 + 9 + 2 + 5 + 5 + 2 + 4
    rows = np.stack([np.asarray(Packing.pack(node)) for node in nodes])
    back = packing.unpack(rows)
    g = back.g
    assert isinstance(g, tuple)
    for k, node in enumerate(nodes):
        assert isinstance(node.g, tuple)
        assert np.array_equal(g[0][k], node.g[0]) and np.array_equal(g[1][k], node.g[1])
        for name in ("mu", "eta", "lam", "residual"):
            assert np.array_equal(getattr(back, name)[k], getattr(node, name))
        assert np.array_equal(back.extras["work"][k], node.extras["work"])
        assert back.iterations[k] == 7 + k and back.status[k] == k
    assert back.iterations.dtype == np.int32 and back.status.dtype == np.int32


def test_a_chunk_holds_its_row_budget_within_bounds() -> None:
    """Its rows fill the budget (one more step would exceed it), unless a bound stops them first."""
    for width in (1, 6, 18, 64, 500, 2_000, 10**6):
        length, row = chunk_length(width), 8 * width
        assert MIN_CHUNK <= length <= MAX_CHUNK
        if length == MIN_CHUNK:  # the budget holds no more rows than the least chunk
            assert ROW_BYTES < (MIN_CHUNK + 1) * row
        elif length == MAX_CHUNK:  # the budget holds at least the largest chunk
            assert MAX_CHUNK * row <= ROW_BYTES
        else:
            assert length * row <= ROW_BYTES < (length + 1) * row
    assert chunk_length(1) == MAX_CHUNK and chunk_length(10**6) == MIN_CHUNK


@pytest.mark.long_run
def test_a_run_across_chunks_keeps_its_nodes_and_statistics(perturb: Perturbation) -> None:
    """9000 steps of the heavy top (VPRK Lobatto-2, Newton's iterations differ from step to step)
    over several chunks, stored every 1000th step, so that intervals straddle the chunks' ends:
    the stored nodes are those of the run that stores every node (whose statistics take a shorter
    path: one step an interval), the step counts, iteration sums and largest residuals those of its
    steps."""
    problem, method, n = perturb.problem(TOP.problem()), lm.VPRK(lm.lobatto(2)), 9000
    full = lm.integrate(problem, method, h=0.01, n_steps=n)
    thinned = lm.integrate(problem, method, h=0.01, n_steps=n, store_every=1000)
    compiled, runner = compiled_for(problem, method, "chunk", ChunkRunner)
    length = runner.packing(compiled.start(NodeState(problem.g0, problem.mu0, problem.eta0, problem.lam0))).length
    assert n // length >= 3 and length % 1000 != 0
    kept = list(range(0, n + 1, 1000))
    assert np.array_equal(thinned.t, full.t[kept])
    assert np.array_equal(np.asarray(thinned.g), np.asarray(full.g)[kept])
    assert np.array_equal(thinned.mu, full.mu[kept]) and np.array_equal(thinned.eta, full.eta[kept])
    assert np.array_equal(thinned.stats.step_counts, [0, *[1000] * 9])
    assert np.array_equal(full.stats.step_counts, [0, *[1] * n])
    bounds = list(zip(kept[:-1], kept[1:]))
    assert np.array_equal(thinned.stats.iterations[1:], [np.sum(full.stats.iterations[a + 1:b + 1]) for a, b in bounds])
    assert np.array_equal(thinned.stats.residuals[1:], [np.max(full.stats.residuals[a + 1:b + 1]) for a, b in bounds])
    assert len(set(full.stats.iterations[1:])) > 1


def test_a_run_copies_the_carry_it_starts_from(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk takes over the buffers of the carry it is given (XLA then loops in them instead of
    copying each leaf first); the carry a method's start hands back, which it may also keep or
    share, is copied before the first chunk, so it stays readable after the run."""
    method, problem = lm.Splitting("strang"), TOP.problem()
    handed: list[object] = []
    compiled_step = method.compiled_step

    def recording(problem: lm.Problem[lm.Matrix]) -> CompiledStep:
        compiled = compiled_step(problem)

        def start(state: NodeState[lm.Matrix]) -> object:
            handed.append(compiled.start(state))
            return handed[-1]

        return CompiledStep(compiled.step, start)

    monkeypatch.setattr(method, "compiled_step", recording)
    first = lm.integrate(problem, method, h=0.05, n_steps=20)
    assert handed and not any(leaf.is_deleted() for leaf in jax.tree.leaves(handed[0]))
    second = lm.integrate(problem, method, h=0.05, n_steps=20)
    assert np.array_equal(np.asarray(first.g), np.asarray(second.g)) and np.array_equal(first.mu, second.mu)
