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

Each S_i is inverted by Gauss–Jordan elimination (``lu``), so that a solve, which Newton repeats
with one factorisation, is products of blocks alone. The KKT blocks are indefinite (the multiplier
unknowns have zero diagonal sub-blocks): for a linear solve each inversion pivots partially
(``lu.inverse``); for Newton, which needs J only approximately, the multipliers come last in their
blocks and each block is inverted pivoting on its diagonal in order (``lu.inverse_unpivoted``,
which skips the pivot search), and the whole factorisation again with partial pivoting where a
pivot was small against its column (``lu.PIVOT_RATIO``). The inverse's round-off, cond(S_i)·eps
relative (times the elimination's growth without pivoting), only slows a simplified Newton's
contraction by as much. There is no pivoting across blocks: every S_i must be regular. S_i is the Schur
complement of the subtree of i (i and the blocks below it), so it is when each subtree's block is:
for a mechanism whose joints' multipliers go with their child bodies (away from the world), a
subtree on the world's side of the root carries only joints among its own bodies and to the world,
and one beyond it also the joint to its parent, which its top body alone can satisfy.

Blocks are padded to one size b (identity on the padded diagonal, zero couplings) and processed
level by level, deepest first, in ``lax.scan``: the blocks of one level together, each level
padded to the widest with a dummy block (identity, no couplings). Compile time thus does not
depend on the number of blocks. The blocks live in slots in level order (level d, position w:
slot d·W + w), so that a level writes what its parents need (L_i S_i⁻¹ U_i, L_i z_i) into its own
consecutive slots, and a parent gathers its children's from a static table: no scatter and no
library call, so that XLA compiles each loop over the levels, and the loops around them, into one
kernel (``liemech.xla_options``). Factorisation and solve are differentiable in forward and
reverse mode.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from numpy.typing import NDArray

from liemech.numerics import lu

Indices = NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class TreeStructure:
    """Static block-tree layout of an n × n Jacobian, computed once outside ``jit`` (hashed by
    identity, so that it may be a static argument).

    Blocks are the bodies in increasing label order; ``index[i]`` holds block i's unknowns padded
    with the sentinel n. ``levels`` (depth + 1, width W) lists the blocks of each level, deepest
    first, padded with the dummy block nb: the slot d·W + w holds ``levels[d, w]``. Per slot,
    ``slot_index`` holds its block's unknowns (n for padding and dummies), ``child_slots`` the slots
    of its children padded with the sentinel slot (depth + 1)·W, and ``parent_slots`` its parent's
    slot (the sentinel for roots and dummies); ``position[k]`` is the place of unknown k in the
    flattened (slots, b) array. The gathers index
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
    slot_index: Indices
    child_slots: Indices
    parent_slots: Indices
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
                   parts: Sequence[int] = (), late: NDArray[np.bool_] | None = None) -> TreeStructure | None:
    """The block tree of the Jacobian with nonzero ``pattern`` (rows: equations, columns: unknowns)
    whose unknown k belongs to body ``labels[k]`` (−1: a multiplier, given to the deepest body it
    touches); None if the bodies' coupling graph has a cycle or a nonzero links unrelated blocks.
    The columns of each piece of the unknowns split at ``parts`` are coloured apart (see
    ``tree_jacobian``). Within a block the unknowns (and their equations) marked ``late`` come last,
    in their order, after the others in theirs: a KKT system's multipliers, whose diagonal entries
    vanish, so that its blocks can be inverted pivoting on the diagonal in order (``tree_factor``)."""
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
    order = np.lexsort((np.zeros(n, dtype=bool) if late is None else np.asarray(late, dtype=bool), block))
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
    sentinel = levels.size
    slot_of = np.full(nb + 1, sentinel)
    slot_of[levels.ravel()] = np.arange(levels.size)
    slot_of[nb] = sentinel
    children = [np.flatnonzero(parent == i) for i in range(nb)] + [np.zeros(0, dtype=np.int64)]
    most = max(1, max(len(c) for c in children))
    child_slots = np.full((*levels.shape, most), sentinel)
    for (d, w), i in np.ndenumerate(levels):
        child_slots[d, w, :len(children[i])] = slot_of[children[i]]
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
        position=slot_of[block] * b + slot, levels=levels, slot_index=np.vstack([index, np.full((1, b), n)])[levels],
        child_slots=child_slots, parent_slots=slot_of[np.append(parent_or_dummy, nb)[levels]],
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


def tree_linear_solve(linear: Callable[[jax.Array], jax.Array], r: jax.Array, blocks: TreeBlocks,
                      structure: TreeStructure) -> jax.Array:
    """x with A x = r for the matrix A with the block-tree ``structure`` and ``blocks``, which is
    also the linear map x ↦ A x = ``linear(x)``: factored and solved as above, differentiable in A
    and r (``lax.custom_linear_solve``: dx = A⁻¹(dr − dA x), dA through ``linear``) and
    transposable for reverse mode: Aᵀ has the same tree, with blocks D_iᵀ, L_iᵀ above and U_iᵀ
    below the diagonal. Implicit differentiation solves with it (``compiled_newton.solve``)."""
    factors = tree_factor(blocks, structure)

    def transposed() -> TreeBlocks:
        return TreeBlocks(*(jnp.swapaxes(block, -1, -2) for block in (blocks.diagonal, blocks.lower, blocks.upper)))

    out: jax.Array = jax.lax.custom_linear_solve(
        linear, r, solve=lambda _, b: tree_solve(factors, b, structure),
        transpose_solve=lambda _, b: tree_solve(tree_factor(transposed(), structure), b, structure))
    return out


def tree_factor(blocks: TreeBlocks, structure: TreeStructure, pivoting: bool = True) -> TreeFactors:
    """S_i⁻¹, the gains S_i⁻¹ U_i and L_i, level by level from the leaves, in slot order. With
    ``pivoting=False`` each S_i is first inverted pivoting on its diagonal in order
    (``lu.inverse_unpivoted``: the blocks' ``late`` unknowns last, see ``tree_structure``), and the
    whole factorisation again with partial pivoting where a pivot fell below ``lu.PIVOT_RATIO`` of its
    column (a factorisation that a simplified Newton iteration only needs approximately: the 32-link
    chain's Lobatto-2 step has ratios of about 1e-3). In an ensemble's batch (``lu.in_batch``), where
    a conditional computes both branches, it pivots at once."""
    b = structure.block_size
    depth, width = structure.levels.shape
    dummy = jnp.eye(b, dtype=blocks.diagonal.dtype)[None]
    levels = jnp.asarray(structure.levels)
    diagonal = jnp.concatenate([blocks.diagonal, dummy])[levels]
    upper = jnp.concatenate([blocks.upper, 0.0 * dummy])[levels]
    lower = jnp.concatenate([blocks.lower, 0.0 * dummy])[levels]
    pivoting = pivoting or lu.in_batch()
    invert = (lambda S: (lu.inverse(S), jnp.ones((), S.dtype))) if pivoting else lu.inverse_unpivoted

    def level(pushed: jax.Array, rows: tuple[jax.Array, ...]) -> tuple[jax.Array, tuple[TreeFactors, jax.Array]]:
        d, diagonal, upper, lower, children = rows
        inverse, ratio = jax.vmap(invert)(diagonal - jnp.sum(pushed[children], axis=1))
        gain = inverse @ upper
        pushed = jax.lax.dynamic_update_slice(pushed, lower @ gain, (d * width, 0, 0))
        return pushed, (TreeFactors(inverse, gain, lower), ratio)

    # pushed[slot] = L_i S_i⁻¹ U_i of the block in that slot, once its level is done; the last slot,
    # which no level writes, is the zero that padded children tables point at
    pushed = jnp.zeros((depth * width + 1, b, b), blocks.diagonal.dtype)
    rows = (jnp.arange(depth), diagonal, upper, lower, jnp.asarray(structure.child_slots))
    factors, ratios = jax.lax.scan(level, pushed, rows)[1]
    if pivoting:
        return factors
    repivoted: TreeFactors = jax.lax.cond(lu.pivots_pass(ratios, factors.inverse), lambda: factors,
                                          lambda: tree_factor(blocks, structure))
    return repivoted


def tree_solve(factors: TreeFactors, r: jax.Array, structure: TreeStructure) -> jax.Array:
    """x with A x = r (both (n,)), from the factors of the block-tree matrix A."""
    b = structure.block_size
    depth, width = structure.levels.shape
    rhs = jnp.append(r, jnp.zeros((), r.dtype))[jnp.asarray(structure.slot_index)]

    def forward(pushed: jax.Array, rows: tuple[jax.Array, ...]) -> tuple[jax.Array, jax.Array]:
        d, rhs, inverse, lower, children = rows
        z = jnp.sum(inverse * (rhs - jnp.sum(pushed[children], axis=1))[:, None, :], axis=-1)
        return jax.lax.dynamic_update_slice(pushed, jnp.sum(lower * z[:, None, :], axis=-1), (d * width, 0)), z

    def backward(x: jax.Array, rows: tuple[jax.Array, ...]) -> tuple[jax.Array, None]:
        d, z, gain, parents = rows
        return jax.lax.dynamic_update_slice(x, z - jnp.sum(gain * x[parents][:, None, :], axis=-1), (d * width, 0)), None

    levels, zero = jnp.arange(depth), jnp.zeros((depth * width + 1, b), r.dtype)
    z = jax.lax.scan(forward, zero, (levels, rhs, factors.inverse, factors.lower,
                                     jnp.asarray(structure.child_slots)))[1]
    x = jax.lax.scan(backward, zero, (levels, z, factors.gain, jnp.asarray(structure.parent_slots)), reverse=True)[0]
    return x[:-1].ravel()[jnp.asarray(structure.position)]
