"""Linear solves in O(number of blocks) for Jacobians whose block sparsity is a tree (a forest).

The unknowns are grouped into blocks, one per body of a mechanism; a joint's multipliers go with
the body they are labelled with or, unlabelled, with the child body (the joint's body farther from
the smallest label of its tree). Each tree is then rooted at its centre, the middle of a longest
path, where it is least deep: each level is a sequential step of the factorisation and of every
solve, and a chain of N bodies has ⌊N/2⌋ + 1 levels instead of the N it has rooted at its first
body. Block i couples only to its parent p(i) and its children, so that

    A_ii = D_i,   A_{i,p(i)} = U_i,   A_{p(i),i} = L_i,   every other block zero.

Block Gaussian elimination from the leaves to the roots, with Schur complements

    S_i = D_i − Σ_{c: p(c) = i} L_c S_c⁻¹ U_c,

then forward substitution leaves → roots and back substitution roots → leaves:

    z_i = S_i⁻¹ (r_i − Σ_{c: p(c) = i} L_c z_c),   x_i = z_i − S_i⁻¹ U_i x_{p(i)}   (x_root = z_root).

Each S_i is factored by LU with partial pivoting, which the indefinite KKT blocks need (the
multiplier unknowns have zero diagonal sub-blocks), and inverted from its factors: a solve, which
Newton repeats with one factorisation, is then products of blocks alone, which XLA fuses (the
32-link chain's Lobatto-2 step: a solve 90 → 42 µs, its factorisation 0.76 → 0.80 ms). The
inverse's round-off, cond(S_i)·eps relative, only slows a simplified Newton's contraction by as
much. There is no pivoting across blocks: every S_i
must be regular. S_i is the Schur complement of the subtree of i (i and the blocks below it), so
it is when each subtree's block is: for a mechanism whose joints' multipliers go with their child
bodies (away from the world), a subtree on the world's side of the root carries only joints among
its own bodies and to the world, and one beyond it also the joint to its parent, which its top
body alone can satisfy.

Blocks are padded to one size b (identity on the padded diagonal, zero couplings) and processed
level by level, deepest first, in ``lax.scan``: the blocks of one level together, each level
padded to the widest with a dummy block (identity, no couplings) whose updates are zero. Compile
time thus does not depend on the number of blocks. The LAPACK calls on a level's blocks are split
into calls of at most ``lu.LAPACK_CHUNK_WORK`` flops, under any number of enclosing ``vmap``s.
Factorisation and solve are differentiable in forward mode, not in reverse mode.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_batching import custom_vmap
from numpy.typing import NDArray

from liemech.numerics import lu

Indices = NDArray[np.int64]
T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class TreeStructure:
    """Static block-tree layout of an n × n Jacobian, computed once outside ``jit`` (hashed by
    identity, so that it may be a static argument).

    Blocks are the bodies in increasing label order; ``index[i]`` holds block i's unknowns padded
    with the sentinel n, ``position[k]`` the place of unknown k in the flattened (blocks, b) array.
    ``levels`` (depth + 1, width) lists the blocks of each level, deepest first, padded with the
    dummy block nb; ``level_parents`` their parents, nb for roots and dummies. The gathers index
    the flattened compressed Jacobian (colours, n) followed by one zero. ``parts`` splits the
    unknowns into pieces (``numpy.split``'s indices) whose columns are coloured apart, ``part_counts``
    their numbers of colours (piece p has colours from the sum of the counts before it on)."""

    size: int
    block_size: int
    count: int
    colours: Indices
    parts: tuple[int, ...]
    part_counts: tuple[int, ...]
    parent: Indices
    depth: Indices
    index: Indices
    position: Indices
    levels: Indices
    level_parents: Indices
    diagonal_gather: Indices
    upper_gather: Indices
    lower_gather: Indices
    padding: NDArray[np.float64]


class TreeBlocks(NamedTuple):
    """A block-tree matrix: ``diagonal[i]`` = A[i, i], ``upper[i]`` = A[i, p(i)], ``lower[i]`` =
    A[p(i), i], each (nb, b, b); zero couplings for roots."""

    diagonal: jax.Array
    upper: jax.Array
    lower: jax.Array


class TreeFactors(NamedTuple):
    """Per level (deepest first) and slot: S_i⁻¹, the gain S_i⁻¹ U_i and L_i."""

    inverse: jax.Array
    gain: jax.Array
    lower: jax.Array


def tree_structure(pattern: NDArray[np.bool_], labels: NDArray[np.int64],
                   parts: Sequence[int] = ()) -> TreeStructure | None:
    """The block tree of the Jacobian with nonzero ``pattern`` (rows: equations, columns: unknowns)
    whose unknown k belongs to body ``labels[k]`` (−1: a multiplier, given to the deepest body it
    touches); None if the bodies' coupling graph has a cycle or a nonzero links unrelated blocks.
    The columns of each piece of the unknowns split at ``parts`` are coloured apart (see
    ``tree_jacobian``)."""
    pattern, labels = np.asarray(pattern, dtype=bool), np.asarray(labels, dtype=np.int64)
    n, rows, cols = labels.size, *np.nonzero(pattern)
    bodies = np.unique(labels[labels >= 0])
    nb = bodies.size
    block = np.where(labels >= 0, np.searchsorted(bodies, labels), -1)
    a, c = block[rows], block[cols]
    linked = (a >= 0) & (c >= 0) & (a != c)
    pairs = np.unique((np.minimum(a, c) * nb + np.maximum(a, c))[linked])
    edges = {(int(pair) // nb, int(pair) % nb) for pair in pairs}
    unassigned = np.flatnonzero(block < 0)
    touched = []
    for u in unassigned:
        near = block[pattern[u] | pattern[:, u]]
        touched.append(np.unique(near[near >= 0]))
        edges |= {(int(i), int(j)) for i in touched[-1] for j in touched[-1] if i < j}
    adjacent: list[list[int]] = [[] for _ in range(nb)]
    for i, j in edges:
        adjacent[i].append(j)
        adjacent[j].append(i)
    parent, depth = np.full(nb, -1), np.full(nb, -1)
    for start in range(nb):  # smallest label first: it roots its component
        if depth[start] < 0:
            _search(adjacent, start, parent, depth)
    if len(edges) != np.count_nonzero(parent >= 0):  # a forest has one edge per body but the roots
        return None
    for u, near in zip(unassigned, touched):
        if near.size == 0:
            return None
        # near is a clique of an acyclic graph: one body or a parent and its child, so the deepest
        # (from the smallest label, the joint's child) is unique.
        block[u] = near[np.argmax(depth[near])]
    a, c = block[rows], block[cols]
    if not np.all((a == c) | (parent[a] == c) | (parent[c] == a)):
        return None
    roots, depth[:] = np.flatnonzero(parent < 0), -1
    for root in roots:  # the same trees, rooted at their centres
        _search(adjacent, _centre(adjacent, int(root), parent, depth), parent, depth)

    sizes = np.bincount(block, minlength=nb)
    b = int(sizes.max())
    order = np.argsort(block, kind="stable")
    slot = np.empty(n, dtype=np.int64)
    slot[order] = np.arange(n) - (np.cumsum(sizes) - sizes)[block[order]]
    index = np.full((nb + 1, b), n)
    index[block, slot] = np.arange(n)
    parent_or_dummy = np.where(parent >= 0, parent, nb)
    parents_index = index[parent_or_dummy]
    index = index[:nb]
    width = int(np.bincount(depth).max())
    levels = np.full((int(depth.max()) + 1, width), nb)
    for d in range(levels.shape[0]):
        members = np.flatnonzero(depth == levels.shape[0] - 1 - d)
        levels[d, :members.size] = members
    # Body by body: a refined pattern (one kind of unknown absent from some rows) then takes fewer
    # colours than in the unknowns' order, which runs through every body's unknowns of one kind first.
    colours, part_counts = np.empty(n, dtype=np.int64), list[int]()
    for piece in np.split(np.arange(n), list(parts)):
        by_body = piece[np.argsort(block[piece], kind="stable")]
        piece_colours, piece_count = column_colours(pattern[:, by_body])
        colours[by_body] = piece_colours + sum(part_counts)
        part_counts.append(piece_count)
    count = sum(part_counts)

    def gather(row: Indices, col: Indices) -> Indices:
        i, k = np.minimum(row[:, :, None], n - 1), np.minimum(col[:, None, :], n - 1)
        hit = (row[:, :, None] < n) & (col[:, None, :] < n) & pattern[i, k]
        return np.where(hit, colours[k] * n + i, count * n)

    return TreeStructure(
        size=n, block_size=b, count=count, colours=colours, parts=tuple(int(k) for k in parts),
        part_counts=tuple(part_counts), parent=parent, depth=depth, index=index,
        position=block * b + slot, levels=levels, level_parents=np.append(parent_or_dummy, nb)[levels],
        diagonal_gather=gather(index, index), upper_gather=gather(index, parents_index),
        lower_gather=gather(parents_index, index), padding=np.eye(b) * (index == n)[:, :, None])


def _search(adjacent: list[list[int]], root: int, parent: Indices, depth: Indices) -> list[int]:
    """Breadth-first search of ``root``'s component, whose ``depth`` must be −1: sets its bodies'
    ``parent`` (−1 for the root) and ``depth``, and returns them in the order found."""
    parent[root], depth[root], queue = -1, 0, [root]
    for i in queue:
        for j in adjacent[i]:
            if depth[j] < 0:
                parent[j], depth[j] = i, depth[i] + 1
                queue.append(j)
    return queue


def _centre(adjacent: list[list[int]], start: int, parent: Indices, depth: Indices) -> int:
    """The middle of a longest path of ``start``'s tree, whose ``depth`` must be −1, by two
    searches, each from the body found last by the one before (the farthest); ``parent`` and
    ``depth`` serve as scratch and are left −1 on the tree's depths."""
    component = _search(adjacent, start, parent, depth)
    depth[component] = -1
    path = [_search(adjacent, component[-1], parent, depth)[-1]]
    while parent[path[-1]] >= 0:
        path.append(int(parent[path[-1]]))
    depth[component] = -1
    return path[len(path) // 2]


def column_colours(pattern: TreeStructure | NDArray[np.bool_]) -> tuple[Indices, int]:
    """A greedy colouring of the columns (in order) such that no two columns of one colour have a
    nonzero in the same row, and the number of colours; a structure's own colouring."""
    if isinstance(pattern, TreeStructure):
        return pattern.colours, pattern.count
    pattern = np.asarray(pattern, dtype=bool)
    n = pattern.shape[1]
    columns, rows = np.nonzero(pattern.T)
    starts = np.searchsorted(columns, np.arange(n + 1))
    used = np.zeros((pattern.shape[0], 1), dtype=bool)  # used[i, c]: row i has a column of colour c
    colours = np.zeros(n, dtype=np.int64)
    top = 0
    for k in range(n):
        rows_k = rows[starts[k]:starts[k + 1]]
        if top == used.shape[1]:  # grown by doubling: n columns of room would be O(n²) memory
            used = np.concatenate([used, np.zeros_like(used)], axis=1)
        # Only the colours so far (and one new) can be free.
        colours[k] = np.argmin(used[rows_k, :top + 1].any(axis=0))
        used[rows_k, colours[k]] = True
        top = max(top, int(colours[k]) + 1)
    return colours, top


def tree_jacobian(fun: Callable[..., jax.Array], x: jax.Array, structure: TreeStructure) -> TreeBlocks:
    """The blocks of ∂fun/∂x at x, from one JVP per colour of the columns (vmapped), ``fun`` taking
    the pieces of x split at ``structure.parts``. Each piece's JVPs leave the others out, so that
    they skip what only the others reach (a step's multipliers enter its equations linearly, through
    the constraint forces alone, where its velocities enter everything)."""
    pieces, bounds = jnp.split(x, structure.parts), (0, *structure.parts, structure.size)
    compressed = []
    for p, count in enumerate(structure.part_counts):
        if count == 0:  # a piece without unknowns
            continue
        colours = structure.colours[bounds[p]:bounds[p + 1]] - sum(structure.part_counts[:p])
        seeds = jnp.asarray(np.eye(count)[colours].T, dtype=x.dtype)

        def along(seed: jax.Array, p: int = p) -> jax.Array:
            tangent: jax.Array = jax.jvp(lambda y: fun(*pieces[:p], y, *pieces[p + 1:]), (pieces[p],), (seed,))[1]
            return tangent

        compressed.append(jax.vmap(along)(seeds))
    values = jnp.append(jnp.concatenate(compressed).ravel(), jnp.zeros((), x.dtype))
    return TreeBlocks(values[structure.diagonal_gather] + structure.padding,
                      values[structure.upper_gather], values[structure.lower_gather])


def _in_chunks(kernel: Callable[..., T], args: tuple[jax.Array, ...], flops: int) -> T:
    """``kernel`` mapped over the leading axis of ``args`` by LAPACK calls of at most
    ``LAPACK_CHUNK_WORK`` flops each (``flops`` per member): a larger batched call jaxlib spreads over
    XLA's thread pool, which can hang (see ``liemech.numerics.lu``)."""
    chunk = max(1, lu.LAPACK_CHUNK_WORK // flops)
    if args[0].shape[0] <= chunk:
        return jax.vmap(kernel)(*args)
    out: T = jax.lax.map(lambda members: kernel(*members), args, batch_size=chunk)
    return out


def _flattened(stack: Callable[..., T]) -> Callable[..., tuple[T, object]]:
    """The vmap rule of a function of stacks: the batch joins the stack, so that ``stack``, called
    again, chunks it, and under enclosing vmaps too (``lu.lu_factor``'s rule chunks only the
    innermost batch: an ensemble of trees would make calls of members × chunk matrices)."""

    def rule(axis_size: int, in_batched: list[bool], *args: jax.Array) -> tuple[T, object]:
        args = tuple(arg if batched else jnp.broadcast_to(arg, (axis_size, *arg.shape))
                     for arg, batched in zip(args, in_batched))
        out = stack(*(arg.reshape(-1, *arg.shape[2:]) for arg in args))
        return (jax.tree.map(lambda leaf: leaf.reshape(axis_size, -1, *leaf.shape[1:]), out),
                jax.tree.map(lambda _: True, out))

    return rule


@custom_vmap
def _factor(matrices: jax.Array) -> lu.LUFactors:
    """LU factors with partial pivoting of a stack of matrices."""
    return lu.LUFactors(*_in_chunks(jax.lax.linalg.lu, (matrices,), matrices.shape[-1] ** 3))


@custom_vmap
def _solve(factors: jax.Array, permutation: jax.Array, rhs: jax.Array) -> jax.Array:
    """S⁻¹ rhs for a stack of LU factors (with their row permutations) and of right-hand sides
    (matrices of columns), by LAPACK's triangular solves: ``lu.lu_solve``'s batched substitutions,
    written out entry by entry, cost ten times as much inside the loop over levels (68 against 6 µs
    for b = 22); the factorisation's permutation is applied as it is (``jax.scipy``'s ``lu_solve``
    would rebuild it from the pivots at every solve)."""
    def kernel(lu_: jax.Array, rows: jax.Array, r: jax.Array) -> jax.Array:
        y = jax.lax.linalg.triangular_solve(lu_, r[rows], left_side=True, lower=True, unit_diagonal=True)
        return jax.lax.linalg.triangular_solve(lu_, y, left_side=True, lower=False)

    return _in_chunks(kernel, (factors, permutation, rhs), rhs.shape[-2] ** 2 * rhs.shape[-1])


_factor.def_vmap(_flattened(_factor))
_solve.def_vmap(_flattened(_solve))


def tree_factor(blocks: TreeBlocks, structure: TreeStructure) -> TreeFactors:
    """The LU factors of the Schur complements S_i and the gains S_i⁻¹ U_i, leaves to roots."""
    b = structure.block_size
    dummy = jnp.eye(b, dtype=blocks.diagonal.dtype)[None]
    upper = jnp.concatenate([blocks.upper, 0.0 * dummy])
    lower = jnp.concatenate([blocks.lower, 0.0 * dummy])

    def level(schur: jax.Array, rows: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, TreeFactors]:
        members, parents = rows
        factors = _factor(schur[members])
        inverse = _solve(factors.lu, factors.permutation, jnp.broadcast_to(dummy, (len(members), b, b)))
        gain = inverse @ upper[members]
        return schur.at[parents].add(-lower[members] @ gain), TreeFactors(inverse, gain, lower[members])

    schur = jnp.concatenate([blocks.diagonal, dummy])
    levels, level_parents = jnp.asarray(structure.levels), jnp.asarray(structure.level_parents)
    return jax.lax.scan(level, schur, (levels, level_parents))[1]


def tree_solve(factors: TreeFactors, r: jax.Array, structure: TreeStructure) -> jax.Array:
    """x with A x = r (both (n,)), from the factors of the block-tree matrix A."""
    b = structure.block_size
    levels, level_parents = jnp.asarray(structure.levels), jnp.asarray(structure.level_parents)
    rhs = jnp.append(r, jnp.zeros((), r.dtype))[jnp.asarray(structure.index)]
    rhs = jnp.concatenate([rhs, jnp.zeros((1, b), r.dtype)])

    def forward(rhs: jax.Array, rows: tuple[jax.Array, jax.Array, TreeFactors]) -> tuple[jax.Array, jax.Array]:
        members, parents, level = rows
        z = jnp.sum(level.inverse * rhs[members, None, :], axis=-1)
        return rhs.at[parents].add(-jnp.sum(level.lower * z[:, None, :], axis=-1)), z

    def backward(x: jax.Array, rows: tuple[jax.Array, jax.Array, jax.Array, jax.Array]) -> tuple[jax.Array, None]:
        members, parents, z, gain = rows
        return x.at[members].set(z - jnp.sum(gain * x[parents][:, None, :], axis=-1)), None

    z = jax.lax.scan(forward, rhs, (levels, level_parents, factors))[1]
    x = jax.lax.scan(backward, jnp.zeros_like(rhs), (levels, level_parents, z, factors.gain), reverse=True)[0]
    return x[:-1].ravel()[jnp.asarray(structure.position)]
