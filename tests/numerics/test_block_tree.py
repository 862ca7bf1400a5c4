"""The block-tree solve against dense truths: random KKT-like tree matrices (unknowns shuffled,
multipliers labelled or left to the analysis) solved by ``numpy.linalg.solve``, tree Jacobians
against ``jax.jacfwd``, colourings checked row by row; refusals of graphs that are not trees; jit,
vmap and a compiled size that does not grow with the number of blocks."""

import re
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpy.typing import NDArray

from liemech.numerics import lu
from liemech.numerics.block_tree import (
    TreeBlocks, TreeStructure, column_colours, tree_factor, tree_jacobian, tree_linear_solve, tree_solve,
    tree_structure)

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]


class System(NamedTuple):
    matrix: Floats
    labels: Ints


def tree_system(parents: list[int], sizes: list[int], assigned: list[bool], seed: int,
                label_of: Callable[[int], int] = lambda body: 3 * body + 5) -> System:
    """A random KKT-like block-tree matrix. Body i has ``sizes[i]`` coordinates q_i (a diagonally
    dominant block) coupled to its parent's; a joint to the parent adds min(2, sizes[i]) multipliers
    λ with rows G_i q_i + G_p q_p, columns G_iᵀ, G_pᵀ and a zero λλ block, labelled with the child's
    body if ``assigned[i]``, else −1. The unknowns are shuffled."""
    rng = np.random.default_rng(seed)
    labels: list[int] = []
    coordinates: list[Ints] = []
    for body, size in enumerate(sizes):
        coordinates.append(np.arange(len(labels), len(labels) + size))
        labels += [label_of(body)] * size
    joints = []
    for body, parent in enumerate(parents):
        if parent >= 0:
            count = min(2, sizes[body])
            joints.append((body, parent, np.arange(len(labels), len(labels) + count)))
            labels += [label_of(body) if assigned[body] else -1] * count
    n = len(labels)
    A = np.zeros((n, n))
    for q in coordinates:
        A[np.ix_(q, q)] = 4.0 * np.eye(q.size) + 0.5 * rng.standard_normal((q.size, q.size))
    for body, parent, lam in joints:
        q, p = coordinates[body], coordinates[parent]
        A[np.ix_(q, p)] = 0.5 * rng.standard_normal((q.size, p.size))
        A[np.ix_(p, q)] = 0.5 * rng.standard_normal((p.size, q.size))
        for own in (q, p):
            G = rng.standard_normal((lam.size, own.size))
            A[np.ix_(lam, own)], A[np.ix_(own, lam)] = G, G.T
    shuffle = rng.permutation(n)
    return System(A[np.ix_(shuffle, shuffle)], np.asarray(labels, dtype=np.int64)[shuffle])


CASES = {
    "chain": ([-1, 0, 1, 2, 3, 4], [3] * 6, [False] * 6),
    "star": ([-1, 0, 0, 0, 0], [4, 3, 3, 3, 3], [True] * 5),
    "binary tree": ([-1, 0, 0, 1, 1, 2, 2], [3] * 7, [False, True] * 4),
    "forest of two chains": ([-1, 0, 1, -1, 3, 4], [3, 2, 4, 3, 2, 2], [False] * 6),
    "unequal sizes": ([-1, 0, 1, 1, 3, 0], [1, 5, 2, 6, 1, 3], [True, False, True, False, False, True]),
}


def blocks_of(A: Floats, structure: TreeStructure) -> TreeBlocks:
    """The blocks of A by dense indexing (padded rows and columns through a zero border)."""
    n, index, parent = A.shape[0], structure.index, structure.parent
    bordered = np.zeros((n + 1, n + 1))
    bordered[:n, :n] = A
    parents_index = np.where(parent[:, None] >= 0, index[parent], n)
    return TreeBlocks(
        jnp.asarray(bordered[index[:, :, None], index[:, None, :]] + structure.padding),
        jnp.asarray(bordered[index[:, :, None], parents_index[:, None, :]]),
        jnp.asarray(bordered[parents_index[:, :, None], index[:, None, :]]))


def dense_of(blocks: TreeBlocks, structure: TreeStructure) -> Floats:
    """The n × n matrix the blocks stand for (padded entries dropped through a border)."""
    n, index, parent = structure.size, structure.index, structure.parent
    dense = np.zeros((n + 1, n + 1))
    child = parent >= 0
    rows, cols = index[child], index[parent[child]]
    dense[rows[:, :, None], cols[:, None, :]] = np.asarray(blocks.upper)[child]
    dense[cols[:, :, None], rows[:, None, :]] = np.asarray(blocks.lower)[child]
    dense[index[:, :, None], index[:, None, :]] = np.asarray(blocks.diagonal)
    return dense[:n, :n]


def analysed(system: System) -> TreeStructure:
    structure = tree_structure(system.matrix != 0, system.labels)
    assert structure is not None
    return structure


def assert_solves(A: Floats, r: Floats, x: Floats) -> None:
    """Relative error at most 1e-12 against numpy's solve, on matrices that are well conditioned."""
    assert np.linalg.cond(A) < 1e4
    exact = np.linalg.solve(A, r)
    assert np.max(np.abs(np.asarray(x) - exact)) <= 1e-12 * np.max(np.abs(exact))


@pytest.mark.parametrize("case", CASES)
def test_solve_matches_numpy(case: str) -> None:
    parents, sizes, assigned = CASES[case]
    system = tree_system(parents, sizes, assigned, seed=len(case))
    structure = analysed(system)
    assert edges(structure.parent) == edges(np.asarray(parents))  # the same tree, rooted at its centre
    np.testing.assert_array_equal(dense_of(blocks_of(system.matrix, structure), structure), system.matrix)
    r = np.random.default_rng(1).standard_normal(system.labels.size)
    x = tree_solve(tree_factor(blocks_of(system.matrix, structure), structure), jnp.asarray(r), structure)
    assert_solves(system.matrix, r, np.asarray(x))


@pytest.mark.parametrize("case", CASES)
def test_factors_without_pivoting_with_the_multipliers_last(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The multipliers (the unknowns whose diagonal entries vanish) put last in their blocks: each
    block's unknowns are its coordinates, then its multipliers, each in their order; the blocks
    inverted pivoting on their diagonals solve the system as numpy does, and they are what the
    factorisation keeps (the same as with every pivot ratio accepted). With the multipliers first, a
    block's first pivot vanishes, and the factors are exactly those with partial pivoting; so they
    are in an ensemble's batch."""
    parents, sizes, assigned = CASES[case]
    system = tree_system(parents, sizes, assigned, seed=len(case))
    multipliers = np.diag(system.matrix) == 0
    structure = tree_structure(system.matrix != 0, system.labels, late=multipliers)
    assert structure is not None
    for row in structure.index:
        unknowns = row[row < structure.size]
        late = multipliers[unknowns]
        assert not np.any(late[:-1] & ~late[1:])
        assert np.all(np.diff(unknowns[late]) > 0) and np.all(np.diff(unknowns[~late]) > 0)
    blocks = blocks_of(system.matrix, structure)
    r = np.random.default_rng(3).standard_normal(system.labels.size)
    unpivoted = tree_factor(blocks, structure, pivoting=False)
    pivoted = tree_factor(blocks, structure)
    assert_solves(system.matrix, r, np.asarray(tree_solve(unpivoted, jnp.asarray(r), structure)))
    with monkeypatch.context() as patched:
        patched.setattr(lu, "PIVOT_RATIO", 0.0)
        for got, expected in zip(unpivoted, tree_factor(blocks, structure, pivoting=False)):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))

    first = tree_structure(system.matrix != 0, system.labels, late=~multipliers)
    assert first is not None
    blocks = blocks_of(system.matrix, first)
    repivoted = tree_factor(blocks, first, pivoting=False)
    for got, expected in zip(repivoted, tree_factor(blocks, first)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))
    with lu.batched():
        in_batch = tree_factor(blocks_of(system.matrix, structure), structure, pivoting=False)
    for got, expected in zip(in_batch, pivoted):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


@pytest.mark.parametrize("case", ["binary tree", "unequal sizes"])
def test_linear_solve_and_its_derivatives_match_numpy(case: str) -> None:
    """``tree_linear_solve`` of A(s) = A + s E (E on A's pattern; its blocks, and x ↦ A(s) x for the
    derivative in s) against numpy:
    the solve, the solve with Aᵀ that reverse mode takes (r ↦ A⁻ᵀ r as the cotangent of r), and
    d/ds A(s)⁻¹ r = −A⁻¹ E A⁻¹ r."""
    parents, sizes, assigned = CASES[case]
    system = tree_system(parents, sizes, assigned, seed=7)
    structure = analysed(system)
    rng = np.random.default_rng(2)
    A, r, w = system.matrix, rng.standard_normal(system.labels.size), rng.standard_normal(system.labels.size)
    E = np.where(A != 0, rng.standard_normal(A.shape), 0.0)

    def solved(s: jax.Array, rhs: jax.Array) -> jax.Array:
        blocks = jax.tree.map(lambda a, e: a + s * e, blocks_of(A, structure), blocks_of(E, structure))
        # the padding's identity in E's diagonal blocks is A's: take it once
        blocks = blocks._replace(diagonal=blocks.diagonal - s * jnp.asarray(structure.padding))
        return tree_linear_solve(lambda x: (jnp.asarray(A) + s * jnp.asarray(E)) @ x, rhs,
                                 jax.lax.stop_gradient(blocks), structure)

    zero = jnp.zeros(())
    assert_solves(A, r, np.asarray(jax.jit(solved)(zero, jnp.asarray(r))))
    cotangent = jax.vjp(lambda rhs: solved(zero, rhs), jnp.asarray(r))[1](jnp.asarray(w))[0]
    assert_solves(A.T, w, np.asarray(cotangent))
    derivative = jax.jvp(lambda s: solved(s, jnp.asarray(r)), (zero,), (jnp.ones(()),))[1]
    exact = -np.linalg.solve(A, E @ np.linalg.solve(A, r))
    assert np.max(np.abs(np.asarray(derivative) - exact)) <= 1e-12 * np.max(np.abs(exact))


def edges(parent: Ints) -> set[frozenset[int]]:
    """A forest's edges, whichever way it is rooted."""
    return {frozenset((int(i), int(p))) for i, p in enumerate(parent) if p >= 0}


def test_trees_are_rooted_at_their_centres() -> None:
    """A chain of N bodies, whatever its labels, is rooted at a middle body: ⌊N/2⌋ + 1 levels of
    two blocks, eliminated from both ends; so is each chain of a forest."""
    order = [4, 2, 0, 5, 1, 3]
    system = tree_system([-1, 0, 1, 2, 3, 4], [3, 4, 2, 3, 3, 2], [False] * 6, seed=3, label_of=lambda i: order[i])
    structure = analysed(system)
    assert structure.levels.shape == (4, 2)
    assert min(structure.parent[order[2]], structure.parent[order[3]]) < 0  # a middle one of six is the root
    for bodies in (7, 64):
        chain = tree_structure(chain_pattern(bodies, 1), np.arange(bodies))
        assert chain is not None and chain.levels.shape == (bodies // 2 + 1, 2)
    forest = analysed(tree_system(*CASES["forest of two chains"], seed=4))
    assert forest.levels.shape == (2, 4) and np.count_nonzero(forest.parent < 0) == 2
    r = np.random.default_rng(2).standard_normal(system.labels.size)
    x = tree_solve(tree_factor(blocks_of(system.matrix, structure), structure), jnp.asarray(r), structure)
    assert_solves(system.matrix, r, np.asarray(x))


def coupled(pairs: list[tuple[int, int]], labels: list[int]) -> tuple[NDArray[np.bool_], Ints]:
    """A pattern with the diagonal and the given unknown pairs nonzero (both ways)."""
    pattern = np.eye(len(labels), dtype=bool)
    for i, j in pairs:
        pattern[i, j] = pattern[j, i] = True
    return pattern, np.asarray(labels, dtype=np.int64)


@pytest.mark.parametrize("pairs, labels", [
    pytest.param([(0, 1), (1, 2), (2, 0)], [0, 1, 2], id="ring of three bodies"),
    pytest.param([(0, 1), (1, 2), (3, 0), (3, 1), (3, 2)], [0, 1, 2, -1], id="multiplier on a chain's three bodies"),
    pytest.param([(0, 1), (0, 2), (3, 1), (3, 2)], [0, 1, 2, -1], id="multiplier between siblings"),
    pytest.param([(0, 1), (2, 3)], [0, 1, -1, -1], id="multipliers touching no body"),
    pytest.param([(0, 1), (0, 2), (3, 0), (3, 1), (4, 0), (4, 2), (3, 4)], [0, 1, 2, -1, -1],
                 id="multipliers of sibling joints coupled"),
])
def test_refuses_what_is_not_a_tree(pairs: list[tuple[int, int]], labels: list[int]) -> None:
    assert tree_structure(*coupled(pairs, labels)) is None


def assert_valid_colouring(pattern: NDArray[np.bool_], colours: Ints, count: int) -> None:
    assert colours.min() >= 0 and colours.max() == count - 1
    for colour in range(count):
        assert np.all(pattern[:, colours == colour].sum(axis=1) <= 1)


def chain_pattern(blocks: int, size: int) -> NDArray[np.bool_]:
    pattern: NDArray[np.bool_] = np.kron(np.eye(blocks) + np.eye(blocks, k=1) + np.eye(blocks, k=-1),
                                         np.ones((size, size))) != 0
    return pattern


def test_colouring_is_valid_and_its_count_independent_of_the_chain_length() -> None:
    counts = set()
    for blocks in (4, 16, 64):
        pattern = chain_pattern(blocks, 5)
        colours, count = column_colours(pattern)
        assert_valid_colouring(pattern, colours, count)
        counts.add(count)
    assert counts == {15}
    for parents, sizes, assigned in CASES.values():
        system = tree_system(parents, sizes, assigned, seed=4)
        structure = analysed(system)
        colours, count = column_colours(structure)
        assert_valid_colouring(system.matrix != 0, colours, count)
        by_body = structure.index[structure.index < structure.size]  # the columns coloured body by body
        np.testing.assert_array_equal(colours[by_body], column_colours((system.matrix != 0)[:, by_body])[0])


def chain_residual(bodies: int) -> tuple[Callable[[jax.Array], jax.Array], Ints]:
    """A nonlinear chain of bodies of 3 coordinates joined by 2 multipliers (labels −1, at the end):
    r_i = M q_i + sin(q_i) ⊙ C q_{i+1} + (F q_{i−1})³ ± Gᵀ((1 + cos/5 (g_i)) ⊙ λ_i), constraints
    g_i + sin(g_i)/5 with g_i = G (q_{i+1} − q_i)."""
    rng = np.random.default_rng(8)
    M = jnp.asarray(4.0 * np.eye(3) + 0.5 * rng.standard_normal((3, 3)))
    C, F = jnp.asarray(0.3 * rng.standard_normal((3, 3))), jnp.asarray(0.3 * rng.standard_normal((3, 3)))
    G = jnp.asarray(rng.standard_normal((2, 3)))

    def residual(x: jax.Array) -> jax.Array:
        q, lam = x[:3 * bodies].reshape(bodies, 3), x[3 * bodies:].reshape(bodies - 1, 2)
        gap = q[1:] - q[:-1]
        joint = gap @ G.T
        force = ((1.0 + 0.2 * jnp.cos(joint)) * lam) @ G
        r = q @ M.T
        r = r.at[:-1].add(jnp.sin(q[:-1]) * (q[1:] @ C.T) - force)
        r = r.at[1:].add((q[:-1] @ F.T) ** 3 + force)
        return jnp.concatenate([r.ravel(), (joint + 0.2 * jnp.sin(joint)).ravel()])

    return residual, np.concatenate([np.repeat(np.arange(bodies), 3), np.full(2 * (bodies - 1), -1)])


def chain_analysis(bodies: int, parts: tuple[int, ...] = ()) -> tuple[Callable[[jax.Array], jax.Array],
                                                                      TreeStructure]:
    """The chain's residual and its structure (unknowns split at ``parts``), from the union of the
    Jacobians' patterns at two points."""
    residual, labels = chain_residual(bodies)
    points = np.random.default_rng(9).standard_normal((2, labels.size))
    pattern = np.any([np.asarray(jax.jacfwd(residual)(jnp.asarray(p))) != 0 for p in points], axis=0)
    structure = tree_structure(pattern, labels, parts)
    assert structure is not None
    return residual, structure


def test_tree_jacobian_equals_jacfwd() -> None:
    """Blocks, padding included, equal those of the dense Jacobian; 3b colours suffice for a chain."""
    residual, structure = chain_analysis(6)
    x = jnp.asarray(np.random.default_rng(10).standard_normal(structure.size))
    blocks = tree_jacobian(residual, x, structure)
    truth = blocks_of(np.asarray(jax.jacfwd(residual)(x)), structure)
    for block, expected in zip(blocks, truth):
        np.testing.assert_allclose(block, expected, rtol=1e-14, atol=1e-14)
    assert structure.count <= 3 * structure.block_size


def test_tree_jacobian_by_pieces_equals_jacfwd() -> None:
    """With the unknowns split into pieces (the bodies' coordinates, then the joints' multipliers),
    each coloured apart and differentiated with the other held fixed, the blocks still equal those
    of the dense Jacobian."""
    residual, structure = chain_analysis(6, parts=(3 * 6,))
    assert len(structure.part_counts) == 2 and structure.count == sum(structure.part_counts)
    x = jnp.asarray(np.random.default_rng(10).standard_normal(structure.size))
    blocks = tree_jacobian(lambda q, lam: residual(jnp.concatenate([q, lam])), x, structure)
    truth = blocks_of(np.asarray(jax.jacfwd(residual)(x)), structure)
    for block, expected in zip(blocks, truth):
        np.testing.assert_allclose(block, expected, rtol=1e-14, atol=1e-14)


def newton_step(residual: Callable[[jax.Array], jax.Array], structure: TreeStructure
                ) -> Callable[[jax.Array, jax.Array], jax.Array]:
    return lambda x, r: tree_solve(tree_factor(tree_jacobian(residual, x, structure), structure), r, structure)


def test_compiled_and_batched() -> None:
    """Newton's step J(x)⁻¹ r jitted; vmapped over right-hand sides with shared factors, and over
    states and right-hand sides; each against numpy's solve with the dense Jacobian."""
    residual, structure = chain_analysis(8)
    rng = np.random.default_rng(11)
    xs, rs = rng.standard_normal((2, 5, structure.size))
    jacobians = [np.asarray(jax.jacfwd(residual)(jnp.asarray(x))) for x in xs]
    step = jax.jit(newton_step(residual, structure))
    factors = tree_factor(tree_jacobian(residual, jnp.asarray(xs[0]), structure), structure)
    shared = np.asarray(jax.jit(jax.vmap(lambda r: tree_solve(factors, r, structure)))(rs))
    each = np.asarray(jax.jit(jax.vmap(step))(xs, rs))
    for J, x, r, with_shared, with_each in zip(jacobians, xs, rs, shared, each):
        assert_solves(J, r, np.asarray(step(x, r)))
        assert_solves(jacobians[0], r, with_shared)
        assert_solves(J, r, with_each)


def test_compiled_size_does_not_grow_with_the_number_of_blocks() -> None:
    """The jaxprs of Jacobian, factorisation and solve for 4 and 64 bodies differ only in shapes."""
    texts = []
    for bodies in (4, 64):
        residual, structure = chain_analysis(bodies)
        x = jnp.zeros(structure.size)
        jaxpr = str(jax.make_jaxpr(newton_step(residual, structure))(x, x))
        texts.append(re.sub(r"\s+", "", re.sub(r"\d+", "#", jaxpr)))  # shapes and line breaks set aside
    assert texts[0] == texts[1]


def test_forward_and_reverse_mode_derivatives() -> None:
    """dx = A⁻¹(dr − dA x) through tree_jacobian, tree_factor and tree_solve, and its adjoint: for
    a cotangent w, ∂⟨w, x⟩/∂r = A⁻ᵀw and ∂⟨w, x⟩/∂A = −(A⁻ᵀw) xᵀ on A's nonzeros."""
    system = tree_system(*CASES["binary tree"], seed=7)
    structure = analysed(system)
    A, n = system.matrix, system.labels.size
    rng = np.random.default_rng(13)
    r, dr = rng.standard_normal((2, n))
    dA = rng.standard_normal((n, n)) * (A != 0)

    def solve(A: jax.Array, r: jax.Array) -> jax.Array:
        blocks = tree_jacobian(lambda x: A @ x, jnp.zeros(n), structure)
        return tree_solve(tree_factor(blocks, structure), r, structure)

    _, dx = jax.jvp(solve, (jnp.asarray(A), jnp.asarray(r)), (jnp.asarray(dA), jnp.asarray(dr)))
    assert_solves(A, dr - dA @ np.linalg.solve(A, r), np.asarray(dx))
    w = rng.standard_normal(n)
    grad_A, grad_r = jax.grad(lambda A, r: jnp.dot(jnp.asarray(w), solve(A, r)), argnums=(0, 1))(
        jnp.asarray(A), jnp.asarray(r))
    adjoint = np.linalg.solve(A.T, w)
    assert np.max(np.abs(np.asarray(grad_r) - adjoint)) <= 1e-12 * np.max(np.abs(adjoint))
    expected = -np.outer(adjoint, np.linalg.solve(A, r)) * (A != 0)
    assert np.max(np.abs(np.asarray(grad_A) * (A != 0) - expected)) <= 1e-12 * np.max(np.abs(expected))


def test_the_loops_over_levels_are_single_kernels_alone_and_in_ensembles() -> None:
    """Trees of one level of 40 blocks and a chain of 9, alone and vmapped over 64 members, once and
    twice: the compiled factorisation and solve call no library and scatter nothing, so that XLA
    compiles each loop over the levels into one kernel; every member is solved."""
    chain = tree_system([-1, 0, 1, 2, 3, 4, 5, 6, 7], [4] * 9, [False] * 9, seed=5)
    chain_structure = analysed(chain)
    factorised = jax.jit(lambda blocks, r: tree_solve(tree_factor(blocks, chain_structure), r, chain_structure))
    text = str(factorised.lower(blocks_of(chain.matrix, chain_structure), np.ones(chain.labels.size)).compile().as_text())
    assert "custom_call" not in text and "scatter(" not in text and "xla_cpu_small_call" in text
    system = tree_system([-1] + [0] * 40, [5] * 41, [False] * 41, seed=6)
    structure = analysed(system)
    rng = np.random.default_rng(12)
    matrices = system.matrix * (1.0 + 0.01 * rng.standard_normal((64, *system.matrix.shape)))
    right = rng.standard_normal((64, system.labels.size))
    blocks = [blocks_of(A, structure) for A in matrices]
    stacked = TreeBlocks(*(jnp.stack(leaves) for leaves in zip(*blocks)))

    def solve(blocks: TreeBlocks, r: jax.Array) -> jax.Array:
        return tree_solve(tree_factor(blocks, structure), r, structure)

    once = jax.jit(jax.vmap(solve))
    twice = jax.jit(jax.vmap(jax.vmap(solve)))
    nested = (jax.tree.map(lambda leaf: leaf.reshape(8, 8, *leaf.shape[1:]), stacked), right.reshape(8, 8, -1))
    for compiled, arguments in ((once, (stacked, right)), (twice, nested)):
        text = str(compiled.lower(*arguments).compile().as_text())
        assert "custom_call" not in text and "scatter(" not in text
    solutions = np.asarray(once(stacked, right))
    np.testing.assert_array_equal(np.asarray(twice(*nested)).reshape(solutions.shape), solutions)
    for A, r, x in zip(matrices, right, solutions):
        assert_solves(A, r, x)
