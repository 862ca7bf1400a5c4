"""Which body each coordinate and constraint row of a mechanism belongs to, and which bodies couple."""

from collections.abc import Sequence
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
    couple body a with body b only if (a, b) or (b, a) is an edge. ``row_bodies`` (optional, one
    row per constraint row, padded with −1) lists the bodies each constraint row involves (a
    joint's two bodies), its owner among them; without it a row may involve any body coupled to its
    owner. A row that involves fewer bodies lets a method take fewer directional derivatives.
    ``velocity_edges`` (optional) lists the couplings through the velocities alone, those of the
    kinetic energy and of velocity-dependent forces (a damped joint's two bodies); without it every
    edge may. Fewer of them, too, let a method take fewer directional derivatives.

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
    row_bodies: NDArray[np.int64] | None = None
    velocity_edges: NDArray[np.int64] | None = None

    def __post_init__(self) -> None:
        for name in ("coordinate_body", "row_body"):
            labels = np.asarray(getattr(self, name), dtype=np.int64).ravel()
            if labels.size and labels.min() < 0:
                raise ValueError(f"{name} must hold body numbers ≥ 0")
            object.__setattr__(self, name, labels)
        edges = np.asarray(self.edges, dtype=np.int64).reshape(-1, 2)
        object.__setattr__(self, "edges", edges)
        if self.velocity_edges is not None:
            velocity_edges = np.asarray(self.velocity_edges, dtype=np.int64).reshape(-1, 2)
            known = {tuple(sorted(pair)) for pair in edges.tolist()}
            if any(tuple(sorted(pair)) not in known for pair in velocity_edges.tolist()):
                raise ValueError("velocity_edges must be edges too (a coupling through the velocities is a "
                                 f"coupling), got {velocity_edges.tolist()} for the edges {edges.tolist()}")
            object.__setattr__(self, "velocity_edges", velocity_edges)
        if self.row_bodies is not None:
            row_bodies = np.asarray(self.row_bodies, dtype=np.int64)
            if (row_bodies.ndim != 2 or row_bodies.shape[0] != self.row_body.size or (row_bodies.size and (
                    row_bodies.min() < -1 or not np.all(np.any(row_bodies == self.row_body[:, None], 1))))):
                raise ValueError("row_bodies must hold, for each constraint row, a row of body numbers ≥ 0 (padded "
                                 f"with −1), its row_body among them; got shape {row_bodies.shape} for "
                                 f"{self.row_body.size} rows")
            object.__setattr__(self, "row_bodies", row_bodies)

    def reach(self) -> NDArray[np.bool_]:
        """reach[r, b]: whether constraint row r may involve body b: ``row_bodies``, or the bodies
        coupled to the row's owner."""
        bodies = int(max(self.coordinate_body.max(initial=0), self.row_body.max(initial=0),
                         self.edges.max(initial=0))) + 1
        if self.row_bodies is None:
            return self.coupled(np.arange(bodies))[self.row_body]
        reach = np.zeros((self.row_body.size, bodies + 1), dtype=bool)
        reach[np.arange(self.row_body.size)[:, None], self.row_bodies] = True  # −1 marks the extra last column
        return reach[:, :bodies]

    def coupled(self, labels: Labels, through: NDArray[np.int64] | None = None) -> NDArray[np.bool_]:
        """pattern[i, j]: whether entries labelled with the bodies labels[i] and labels[j] may couple
        (through the ``edges``, or the couplings ``through`` given)."""
        edges = self.edges if through is None else through
        bodies = int(max(labels.max(initial=0), self.edges.max(initial=0))) + 1
        adjacent = np.eye(bodies, dtype=bool)
        adjacent[edges[:, 0], edges[:, 1]] = True
        adjacent[edges[:, 1], edges[:, 0]] = True
        result: NDArray[np.bool_] = adjacent[labels[:, None], labels[None, :]]
        return result

    def velocity_coupled(self, labels: Labels) -> NDArray[np.bool_]:
        """pattern[i, j]: whether entries labelled labels[i] and labels[j] may couple through the
        velocities (``velocity_edges``, or every edge)."""
        return self.coupled(labels, self.velocity_edges)

    def tree(self, labels: Labels, entries: NDArray[np.bool_] | None = None,
             parts: Sequence[int] = (), late: NDArray[np.bool_] | None = None) -> TreeStructure | None:
        """The block tree of a square system whose unknowns (and equations) carry the bodies
        ``labels``, nonzero only where the bodies couple and, if given, ``entries`` (what vanishes
        whatever the bodies, known to the method that lays the system out); None if the couplings
        are no tree. The unknowns split at ``parts`` are differentiated apart, and those marked
        ``late`` (multipliers) come last in their blocks (``tree_structure``)."""
        pattern = self.coupled(labels)
        if entries is not None:
            pattern &= entries
        return tree_structure(pattern, labels, parts, late)
