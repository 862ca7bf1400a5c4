"""What ``integrate`` returns: nodal configurations, velocities, momenta and solver statistics,
with interpolation on the group, a DataFrame view, and a ``.npz`` file format."""

import ast
import importlib.metadata
import itertools
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar, cast

import jax
import numpy as np
from jax.typing import ArrayLike

from liemech.groups import RETRACTION_KINDS, SE2, SE3, SO2, SO3, LieGroup, PowerGroup, ProductGroup, Rn
from liemech.run.interpolation import checked_times, linear, on_group
from liemech.types import Matrix, Vector

if TYPE_CHECKING:
    import pandas

P = TypeVar("P")


@dataclass(frozen=True)
class SolverStats:
    """Newton statistics of every step, stored or not (``iterations[k]``, ``residuals[k]`` for the
    step ending at t = k·h; entry 0 is 0), and the wall time of the whole run in seconds."""

    iterations: Vector
    residuals: Vector
    wall_time: float

    @property
    def mean_iterations(self) -> float:
        """Mean Newton iterations per step."""
        return float(np.mean(self.iterations[1:])) if self.iterations.size > 1 else 0.0


def stack(points: Sequence[P]) -> P:
    """Points as one point of stacked numpy arrays (leading axis over the points; a product
    point's factors are stacked one by one)."""
    return cast(P, jax.tree.map(lambda *leaves: np.stack([np.asarray(x, dtype=np.float64) for x in leaves]),
                                *points))


def unstack(stacked: P) -> list[P]:
    """The points of ``stack``'s result, in order."""
    count = len(jax.tree.leaves(stacked)[0])
    return [cast(P, jax.tree.map(lambda leaf: leaf[k], stacked)) for k in range(count)]


@dataclass(frozen=True)
class Interpolated(Generic[P]):
    """The state at time ``t`` (a 0-d array), or at each of an array of times, stacked along a
    leading axis like the fields of a ``Solution``."""

    t: Vector
    g: P
    eta: Matrix
    mu: Matrix
    lam: Matrix | None


FORMAT: Final = "liemech.Solution"
FORMAT_VERSION: Final = 1
"""The version of the ``.npz`` layout ``Solution.save`` writes; ``Solution.load`` reads it and refuses others."""

Metadata = dict[str, str | float]
"""Named facts about a run: ``integrate`` records "method", "group" (its repr), "h", "retraction"
(the kind ``Solution.at`` interpolates with) and "store_every"."""


@dataclass(frozen=True)
class Solution(Generic[P]):
    """A discrete trajectory at the stored nodes t[k] = k·h·store_every.

    ``g`` holds the scheme's nodal configurations stacked along a leading axis: an array of shape
    (K, 3, 3) on SO(3), (K, n) on Rⁿ, and on a product a tuple of such arrays, one per factor
    (``point(k)`` and ``points()`` give single points on any space). ``mu[k]`` is the body momentum;
    ``eta[k]`` the velocity of the nodal momentum (∂ℓ/∂η (g_k, η_k) = μ_k); ``lam`` holds multipliers
    or None; ``extras`` holds named arrays a scheme has but that do not live at the nodes
    (documented by the method). ``metadata`` describes the run and ``group`` is its configuration
    space (None for a solution built by hand; ``at`` needs it). Everything is numpy, ready to plot
    or save; ``save`` and ``load`` keep it in one ``.npz`` file.
    """

    t: Vector
    g: P
    eta: Matrix
    mu: Matrix
    lam: Matrix | None
    stats: SolverStats
    extras: dict[str, Matrix] = field(default_factory=dict)
    metadata: Metadata = field(default_factory=dict)
    group: LieGroup[P] | None = field(default=None, repr=False)

    def point(self, k: int) -> P:
        """g_k, the k-th stored configuration (negative k counts from the end)."""
        return cast(P, jax.tree.map(lambda leaf: leaf[k], self.g))

    def points(self) -> list[P]:
        """Every stored configuration, in order."""
        return unstack(self.g)

    def at(self, t: ArrayLike) -> Interpolated[P]:
        """The state at time t (a number) or at each of an array of times (stacked along a leading
        axis), interpolated between the stored nodes t_k ≤ t ≤ t_{k+1} on the group:
        g(t) = g_k τ(θ ξ_k) with ξ_k = τ⁻¹(g_k⁻¹ g_{k+1}) and θ = (t − t_k)/(t_{k+1} − t_k), τ the
        method's retraction (``metadata["retraction"]``, "cay" if absent; linear on Rⁿ); η, μ and λ
        linearly. Second order: the error is O(Δt²) in the spacing Δt of the stored nodes. A t
        outside [t_0, t_end] raises ValueError.

        Constraints hold at the nodes, not between them: the interpolant is not projected onto
        Φ(g) = 0 or φ(g, η) = 0, so between nodes it violates them by O(Δt²) (a disc in steady
        rolling, Lobatto-3 at Δt = 0.05: |Φ| up to 5e-5 and |φ| up to 4e-5 halfway between nodes).
        For states on the constraints, integrate with the nodes you need (``h``, ``store_every``)."""
        if self.group is None:
            raise ValueError("at() needs the solution's group: build it as Solution(..., group=...), or load "
                             "it with Solution.load(path, group=...)")
        kind = self.metadata.get("retraction", "cay")
        if kind not in RETRACTION_KINDS:
            raise ValueError(f"metadata['retraction'] must be one of {RETRACTION_KINDS}, got {kind!r}")
        times = checked_times(t, self.t)
        flat = np.atleast_1d(times)
        state = (on_group(self.group, kind, self.g, flat, self.t),
                 linear(self.eta, flat, self.t), linear(self.mu, flat, self.t),
                 None if self.lam is None else linear(self.lam, flat, self.t))
        g, eta, mu, lam = state if times.ndim else jax.tree.map(lambda leaf: leaf[0], state)
        return Interpolated(times, g, eta, mu, lam)

    def columns(self) -> dict[str, Vector]:
        """The stored nodes as named flat columns: "t"; "g_i_j" for entry (i, j) of a matrix point
        ("g_i" on Rⁿ; on a product "g{f}_…" for factor f); "eta_i", "mu_i" and "lam_i"."""
        named: dict[str, Vector] = {"t": self.t}
        leaves = jax.tree.leaves(self.g)
        prefixes = [f"g{f}" for f in range(len(leaves))] if isinstance(self.g, tuple) else ["g"]
        for prefix, leaf in zip(prefixes, leaves):
            named.update(_flat_columns(prefix, np.asarray(leaf, dtype=np.float64)))
        for prefix, rows in (("eta", self.eta), ("mu", self.mu), ("lam", self.lam)):
            if rows is not None:
                named.update(_flat_columns(prefix, rows))
        return named

    def to_dataframe(self) -> "pandas.DataFrame":
        """The stored nodes as a pandas DataFrame, one row per node, with the columns of
        ``columns()``; ``extras`` and ``stats`` are per step, not per node, and stay out."""
        try:
            import pandas
        except ImportError as exc:
            raise ImportError("Solution.to_dataframe needs pandas: pip install pandas "
                              "(or pip install 'liemech[dataframe]')") from exc
        return pandas.DataFrame(self.columns())

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the solution to one ``.npz`` file at exactly ``path``: every array as it is (a
        product's factors one by one), and a JSON header with the format, its version, the liemech
        version and ``metadata``; ``numpy.load(path, allow_pickle=False)`` reads it."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        leaves = [np.asarray(leaf, dtype=np.float64) for leaf in jax.tree.leaves(self.g)]
        header = {"format": FORMAT, "format_version": FORMAT_VERSION, "liemech_version": _version(),
                  "g_structure": _structure(self.g), "extras": list(self.extras),
                  "wall_time": self.stats.wall_time, "metadata": self.metadata}
        arrays = {"header": np.array(json.dumps(header)), "t": self.t, "eta": self.eta, "mu": self.mu,
                  "iterations": self.stats.iterations, "residuals": self.stats.residuals,
                  **{f"g_{i}": leaf for i, leaf in enumerate(leaves)},
                  **{f"extra_{i}": value for i, value in enumerate(self.extras.values())},
                  **({} if self.lam is None else {"lam": self.lam})}
        with open(path, "wb") as file:
            np.savez(file, allow_pickle=False, **arrays)

    @classmethod
    def load(cls, path: str | os.PathLike[str], group: LieGroup[P] | None = None) -> "Solution[P]":
        """The solution ``save`` wrote to ``path``, bitwise equal. ``group`` is rebuilt from its repr
        for liemech's groups; give it for a group of your own (else ``at`` cannot interpolate).
        A file that is not a liemech solution, or of another format version, raises ValueError."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        try:
            loaded = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{os.fspath(path)!r} is not a liemech solution file: {exc}") from exc
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise ValueError(f"{os.fspath(path)!r} is not a liemech solution file: a single array, not an "
                             ".npz archive")
        with loaded:
            arrays: dict[str, Vector] = {name: loaded[name] for name in loaded.files}
        header = _header(arrays, os.fspath(path))
        try:
            g = _rebuild(header["g_structure"], (arrays[f"g_{i}"] for i in itertools.count()))
            stats = SolverStats(arrays["iterations"], arrays["residuals"], float(header["wall_time"]))
            extras = {name: arrays[f"extra_{i}"] for i, name in enumerate(header["extras"])}
            metadata: Metadata = dict(header["metadata"])
            if group is None:
                group = cast(LieGroup[P] | None, _group_from_repr(metadata.get("group")))
            return cls(arrays["t"], cast(P, g), arrays["eta"], arrays["mu"], arrays.get("lam"), stats, extras,
                       metadata, group)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{os.fspath(path)!r} is a damaged liemech solution file: {exc!r}") from exc


def _flat_columns(prefix: str, rows: Matrix) -> dict[str, Vector]:
    """One column per entry of the trailing axes: prefix_i_j for rows of shape (K, …)."""
    return {"_".join([prefix, *map(str, index)]): rows[(slice(None), *index)]
            for index in np.ndindex(rows.shape[1:])}


def _version() -> str:
    """The installed liemech's version, recorded in every file."""
    try:
        return importlib.metadata.version("liemech")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _structure(g: object) -> object:
    """The nesting of a point as JSON: null for an array, a list for a tuple of points."""
    return [_structure(part) for part in g] if isinstance(g, tuple) else None


def _rebuild(structure: object, leaves: Iterator[Vector]) -> object:
    """The point of ``_structure`` with its arrays taken from ``leaves`` in order."""
    if isinstance(structure, list):
        return tuple(_rebuild(part, leaves) for part in structure)
    if structure is not None:
        raise ValueError(f"g_structure must be null or a list, got {structure!r}")
    return next(leaves)


def _header(arrays: dict[str, Vector], path: str) -> dict[str, Any]:
    """The JSON header of a solution file, checked for the format and its version."""
    raw = arrays.get("header")
    try:
        header = json.loads(str(raw)) if raw is not None and raw.dtype.kind == "U" else None
    except json.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{path!r} is not a liemech solution file (no liemech header; Solution.save writes one)")
    if header.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path!r} has solution format version {header.get('format_version')!r}, this liemech "
                         f"reads version {FORMAT_VERSION}; load it with the liemech that wrote it "
                         f"({header.get('liemech_version')!r})")
    return header


_GROUPS: Final[dict[str, Callable[..., object]]] = {
    "Rn": Rn, "SO2": SO2, "SO3": SO3, "SE2": SE2, "SE3": SE3, "ProductGroup": ProductGroup, "PowerGroup": PowerGroup}


def _group_from_repr(text: object) -> LieGroup[object] | None:
    """liemech's group whose repr is ``text`` (e.g. "ProductGroup(SO3(), Rn(3))"), or None."""

    def build(node: ast.expr) -> object:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _GROUPS
                and not node.keywords):
            return _GROUPS[node.func.id](*(build(arg) for arg in node.args))
        raise ValueError(f"not a liemech group: {ast.unparse(node)}")

    try:
        group = build(ast.parse(text, mode="eval").body) if isinstance(text, str) else None
    except (SyntaxError, TypeError, ValueError):
        return None
    return group if isinstance(group, LieGroup) else None
