"""Which entries of VPRK's step Jacobian may be nonzero on the block-tree path, and its block tree.

On that path the unknowns are the stage velocities H (s copies of the coordinates), the stage
multipliers Λ (s copies of the holonomic rows) and the momentum ν at the step's end (one more copy
of the coordinates); the equations share these ranges: the momentum rows (26) with dτ(ξ)ᵀν, the
constraint rows Φ(Gⁱ) = 0 (i = 2..s) with the tangency, and ν's closure ν = μ_{k+1} by (28)
(Martín de Diego & Sato Martín de Almagro 2018, §6.1).

With ``local`` the first copy of the coordinates is instead y¹ of the stage velocities written as
H = K y, K the identity with its first column v, A v = 0 and b·v = 0 (Lobatto IIIA, whose first row
of A is zero): y¹ moves no stage configuration Ξ = hAH and not ξ = hbH, only the stage
velocities, so it reaches the momentum rows and ν's closure of the bodies coupled through the
velocities alone (``BodySparsity.velocity_coupled``), and no constraint row."""

import weakref

import numpy as np
from numpy.typing import NDArray

from liemech.mechanics.sparsity import BodySparsity, Labels
from liemech.numerics.block_tree import TreeStructure

_TREES: "weakref.WeakKeyDictionary[BodySparsity, dict[tuple[int, bool], TreeStructure | None]]" = (
    weakref.WeakKeyDictionary())
_STAGE_TREES: "weakref.WeakKeyDictionary[BodySparsity, tuple[TreeStructure, TreeStructure] | None]" = (
    weakref.WeakKeyDictionary())


def step_labels(sparsity: BodySparsity, stages: int) -> Labels:
    """The body of each unknown (and equation): H, Λ, then ν."""
    return np.concatenate([np.tile(sparsity.coordinate_body, stages), np.tile(sparsity.row_body, stages),
                           sparsity.coordinate_body])


def step_entries(sparsity: BodySparsity, stages: int, local: bool = False) -> NDArray[np.bool_]:
    """Where the step's Jacobian may be nonzero whatever the bodies couple: multipliers are absent
    from the constraint rows and the tangency, ν from the constraint rows, from the momentum rows
    but its own body's (it enters through dτ(ξ)ᵀν, and the retraction acts body by body) and from
    its closure but its own coordinate's; and a constraint row's multiplier, equation and tangency
    meet only the coordinates of the bodies that row involves (``BodySparsity.reach``: a joint's
    multipliers enter the momentum rows of its two bodies, through its constraint force)."""
    n, m = sparsity.coordinate_body.size, sparsity.row_body.size
    rows, end = slice(stages * n, stages * (n + m)), stages * (n + m)
    entries = np.ones((end + n, end + n), dtype=bool)
    entries[rows, rows] = False
    entries[stages * n:end - m, end:] = False
    same_body = sparsity.coordinate_body[:, None] == sparsity.coordinate_body[None, :]
    entries[:stages * n, end:] = np.tile(same_body, (stages, 1))
    entries[end:, end:] = np.eye(n, dtype=bool)
    reach = sparsity.reach()[:, sparsity.coordinate_body]  # (rows, coordinates)
    coordinate = np.r_[np.arange(stages * n), np.arange(end, end + n)]
    for stage in range(stages):
        row = stages * n + stage * m + np.arange(m)
        entries[np.ix_(coordinate, row)] &= np.tile(reach.T, (stages + 1, 1))
        entries[np.ix_(row, coordinate)] &= np.tile(reach, (1, stages + 1))
    if local:
        velocities = sparsity.velocity_coupled(sparsity.coordinate_body)
        entries[:stages * n, :n] = np.tile(velocities, (stages, 1))
        entries[stages * n:end, :n] = False
        entries[end:, :n] = velocities
    return entries


def step_parts(sparsity: BodySparsity, stages: int, local: bool = False) -> tuple[int, ...]:
    """Where the unknowns split into H, Λ and ν (with ``local``: y¹, the other copies of y, Λ, ν)."""
    n, m = sparsity.coordinate_body.size, sparsity.row_body.size
    return (n,) * local + (stages * n, stages * (n + m))


def step_tree(sparsity: BodySparsity, stages: int, local: bool = False) -> TreeStructure | None:
    """The block tree of the step's Jacobian (None if the bodies' couplings are no tree), analysed
    once per mechanism and number of stages: ``integrate`` asks again at every call. H, Λ and ν are
    differentiated apart: Λ and ν enter the equations through a few linear terms only (the
    constraint forces; dτ(ξ)ᵀν, the tangency and ν's closure), so their directional derivatives cost
    a fraction of H's. Leaving out the entries of ``step_entries`` takes fewer of them. Λ comes
    last in each body's block: its constraint rows and multipliers have no diagonal entries, and
    Newton then inverts the blocks pivoting on their diagonals in order (``tree_factor``)."""
    trees = _TREES.setdefault(sparsity, {})
    if (stages, local) not in trees:
        n, m = sparsity.coordinate_body.size, sparsity.row_body.size
        labels = step_labels(sparsity, stages)
        late = np.zeros(labels.size, dtype=bool)
        late[stages * n:stages * (n + m)] = True
        trees[stages, local] = sparsity.tree(labels, step_entries(sparsity, stages, local),
                                             step_parts(sparsity, stages, local), late)
    return trees[stages, local]


def stage_trees(sparsity: BodySparsity) -> tuple[TreeStructure, TreeStructure] | None:
    """Lobatto-2 with ``local`` unknowns, solved as a position stage and then a velocity stage
    (``rattle_stages``): the block trees of the position stage, unknowns (y¹, y², Λ¹) and rows
    (the momentum rows, Φ(G²) = 0), and of the velocity stage, unknowns (Λ², ν) and rows (the
    tangency, ν's closure). They are the leading and the trailing principal blocks of the step's
    pattern (None if either is no tree), analysed once per mechanism."""
    if sparsity not in _STAGE_TREES:
        n, m = sparsity.coordinate_body.size, sparsity.row_body.size
        labels, entries = step_labels(sparsity, 2), step_entries(sparsity, 2, local=True)
        position, velocity = slice(0, 2 * n + m), slice(2 * n + m, None)
        late = np.zeros(labels.size, dtype=bool)
        late[2 * n:2 * (n + m)] = True
        position_tree = sparsity.tree(labels[position], entries[position, position], (n, 2 * n), late[position])
        velocity_tree = sparsity.tree(labels[velocity], entries[velocity, velocity], (m,), late[velocity])
        _STAGE_TREES[sparsity] = (None if position_tree is None or velocity_tree is None
                                  else (position_tree, velocity_tree))
    return _STAGE_TREES[sparsity]
