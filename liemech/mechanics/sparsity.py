"""Which body each coordinate and constraint row of a mechanism belongs to, and which bodies couple."""

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from liemech.numerics.block_tree import TreeStructure, tree_structure

Labels = NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class BodySparsity:
    """The bodies of a mechanism: ``coordinate_body[k]`` owns velocity coordinate k,
    ``row_body[r]`` owns holonomic constraint row r (a joint's rows belong to its child), and
    ``edges`` (pairs of bodies) lists every coupling: ℓ, the constraints and the external force
    couple body a with body b only if (a, b) or (b, a) is an edge.

    An implicit method then knows the sparsity of its step's Jacobian without evaluating it: when
    the edges form a tree (a forest), it builds the Jacobian from a few directional derivatives
    (one per colour of its columns) and solves it body by body, in O(bodies) (VPRK on a holonomic
    problem; the ``liemech.multibody`` models provide it). A coupling left out does not change the
    solution, whose residual is exact, but slows Newton down or stops it with a ConvergenceError.
    The retraction must act body by body (dτ(ξ) couples no coordinates of two bodies), as on a
    power or product group with a factor per body or per kind of coordinate. Bodies are numbered
    from 0, the bodies fixed to the world first in each tree of bodies.
    """

    coordinate_body: Labels
    row_body: Labels
    edges: NDArray[np.int64]

    def __post_init__(self) -> None:
        for name in ("coordinate_body", "row_body"):
            labels = np.asarray(getattr(self, name), dtype=np.int64).ravel()
            if labels.size and labels.min() < 0:
                raise ValueError(f"{name} must hold body numbers ≥ 0")
            object.__setattr__(self, name, labels)
        edges = np.asarray(self.edges, dtype=np.int64).reshape(-1, 2)
        object.__setattr__(self, "edges", edges)

    def coupled(self, labels: Labels) -> NDArray[np.bool_]:
        """pattern[i, j]: whether entries labelled with the bodies labels[i] and labels[j] may couple."""
        bodies = int(max(labels.max(initial=0), self.edges.max(initial=0))) + 1
        adjacent = np.eye(bodies, dtype=bool)
        adjacent[self.edges[:, 0], self.edges[:, 1]] = True
        adjacent[self.edges[:, 1], self.edges[:, 0]] = True
        result: NDArray[np.bool_] = adjacent[labels[:, None], labels[None, :]]
        return result

    def stacked_tree(self, copies: int, momenta: bool = False) -> TreeStructure | None:
        """The block tree of a square system whose unknowns (and equations) are ``copies`` stacked
        copies of the coordinates followed by as many of the rows (a step with that many stages),
        and, with ``momenta``, one more copy of the coordinates (the momentum ν at the step's end),
        each labelled with its body; None if the couplings are no tree. Analysed once per layout:
        ``integrate`` asks again at every call.

        With ``momenta`` the system is VPRK's step on the block-tree path, whose equations are the
        momentum rows (copies of the coordinates), the constraint rows at the later stages and the
        tangency (copies of the rows) and ν's closure ν = μ_{k+1} (a copy of the coordinates), and
        entries that vanish whatever the bodies are left out too: multipliers in the constraint
        rows and the tangency, ν in the constraint rows, in the momentum rows but its own body's
        (through dτ(ξ)ᵀν, body by body) and in its closure but its own coordinate's. The Jacobian
        then takes fewer directional derivatives (30 rather than 36 for a chain of heavy tops with
        Lobatto-3, 72 rather than 84 for a chain of links with Lobatto-2)."""
        cache: dict[tuple[int, bool], TreeStructure | None] = self.__dict__.setdefault("_trees", {})
        if (copies, momenta) not in cache:
            blocks = [np.tile(self.coordinate_body, copies), np.tile(self.row_body, copies)]
            labels = np.concatenate(blocks + [self.coordinate_body] * momenta)
            pattern = self.coupled(labels)
            if momenta:
                pattern &= self._step_entries(copies)
            cache[copies, momenta] = tree_structure(pattern, labels)
        return cache[copies, momenta]

    def _step_entries(self, copies: int) -> NDArray[np.bool_]:
        """Where VPRK's step Jacobian (the layout of ``stacked_tree`` with momenta) may be nonzero
        whatever the bodies couple. Rows and columns share their ranges: the momentum rows and H,
        the constraint rows with the tangency and Λ, ν's closure and ν."""
        n, m = self.coordinate_body.size, self.row_body.size
        rows, end = slice(copies * n, copies * (n + m)), copies * (n + m)
        entries = np.ones((end + n, end + n), dtype=bool)
        entries[rows, rows] = False
        entries[copies * n:end - m, end:] = False
        entries[:copies * n, end:] = np.tile(self.coordinate_body[:, None] == self.coordinate_body[None, :], (copies, 1))
        entries[end:, end:] = np.eye(n, dtype=bool)
        return entries
