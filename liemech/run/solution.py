"""What ``integrate`` returns: nodal configurations, velocities, momenta and solver statistics,
with interpolation on the group, a DataFrame view, and a ``.npz`` file format."""

import ast
import hashlib
import importlib.metadata
import itertools
import json
import os
import secrets
import zipfile
import zlib
from collections.abc import Callable, Iterator
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
    """Newton statistics of every step, stored or not, kept with the stored nodes: entry i covers
    the steps that end in (t[i − 1], t[i]] — ``steps[i]`` of them (one each with store_every = 1;
    ``None`` stands for that), ``iterations[i]`` their Newton iterations in total and
    ``residuals[i]`` the largest accepted residual among them; entry 0 (the initial node) is 0.
    ``wall_time`` is the whole run's, in seconds."""

    iterations: Vector
    residuals: Vector
    wall_time: float
    steps: Vector | None = None

    @property
    def step_counts(self) -> Vector:
        """``steps``, with ``None`` spelled out (0 for the initial node, then 1 per entry)."""
        if self.steps is not None:
            return self.steps
        counts: Vector = np.minimum(np.arange(self.iterations.size), 1).astype(np.float64)
        return counts

    @property
    def mean_iterations(self) -> float:
        """Mean Newton iterations per step."""
        steps = float(np.sum(self.step_counts))
        return float(np.sum(self.iterations)) / steps if steps else 0.0


def unstack(stacked: P) -> list[P]:
    """The points of a stacked point (a leading axis over the points on each of its arrays), in
    order."""
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
"""The version of the ``.npz`` layout ``Solution.save`` writes; ``Solution.load`` reads it and refuses others.
The header's "checksum" (added later) did not raise it: it is an extra key that older liemech reads
past, and files without it still load (without the checksum's check)."""

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
        outside [t_0, t_end] or a string raises ValueError, a bool TypeError; an empty array of
        times gives an empty state (zero rows), as numpy's vectorised functions do.

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
        ``columns()``; ``extras`` (one row per stored step) and ``stats`` stay out."""
        try:
            import pandas
        except ImportError as exc:
            raise ImportError("Solution.to_dataframe needs pandas: pip install pandas "
                              "(or pip install 'liemech[dataframe]')") from exc
        return pandas.DataFrame(self.columns())

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the solution to one ``.npz`` file at exactly ``path``: every array as it is (a
        product's factors one by one), and a JSON header with the format, its version, the liemech
        version, ``metadata`` and a SHA-256 checksum of the arrays and the header;
        ``numpy.load(path, allow_pickle=False)`` reads it.

        The save is atomic: the file is written to a hidden temporary file in the same folder,
        synced to disk and renamed onto ``path``, so ``path`` holds either the previous file or the
        new one, never a partial file. An error removes the temporary file; a process killed while
        writing can leave it behind (named ``.<name>.<random>.tmp``). A solution whose fields
        disagree in their number of nodes, whose ``t`` is not strictly increasing, or whose
        configurations do not fit its group raises ValueError and writes nothing, since ``load``
        would refuse the file."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        leaves = [np.asarray(leaf, dtype=np.float64) for leaf in jax.tree.leaves(self.g)]
        arrays: dict[str, np.ndarray[Any, Any]] = {
            name: np.asarray(value) for name, value in {
                "t": self.t, "eta": self.eta, "mu": self.mu,
                "iterations": self.stats.iterations, "residuals": self.stats.residuals,
                "steps": self.stats.step_counts,
                **{f"g_{i}": leaf for i, leaf in enumerate(leaves)},
                **{f"extra_{i}": value for i, value in enumerate(self.extras.values())},
                **({} if self.lam is None else {"lam": self.lam})}.items()}
        g = jax.tree.unflatten(jax.tree.structure(self.g), leaves)
        problem = _inconsistency(arrays, g)
        for group in (self.group, _group_from_repr(self.metadata.get("group"))):
            problem = problem or (None if group is None else _misfit(group, g))
        if problem:
            raise ValueError(f"cannot save this solution to {os.fspath(path)!r}: {problem}")
        header: dict[str, Any] = {
            "format": FORMAT, "format_version": FORMAT_VERSION, "liemech_version": _version(),
            "g_structure": _structure(self.g), "extras": list(self.extras), "wall_time": self.stats.wall_time,
            "metadata": self.metadata}
        header["checksum"] = _checksum(arrays, header)
        _write_atomically(os.fspath(path), {"header": np.array(json.dumps(header)), **arrays})

    @classmethod
    def load(cls, path: str | os.PathLike[str], group: LieGroup[P] | None = None) -> "Solution[P]":
        """The solution ``save`` wrote to ``path``, bitwise equal. ``group`` is rebuilt from its repr
        for liemech's groups; give it for a group of your own (else ``at`` cannot interpolate).

        Every file that cannot be read as a solution raises ValueError naming the path and what is
        wrong: a missing, empty, truncated or corrupted file, one that is not a liemech solution or
        of another format version, a checksum mismatch (the file was altered or damaged), fields
        that disagree in their number of nodes, a ``t`` that is not strictly increasing, or
        configurations that do not fit the group. A ``group`` given for a file that records one of
        liemech's groups must be that group (ValueError otherwise); a group of your own is checked
        against the shape of the stored configurations only, as its repr need not be stable. A
        ``group`` that is not a LieGroup raises TypeError. Files without a checksum (written by
        liemech before checksums) load with every check but the checksum."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        if group is not None and not isinstance(group, LieGroup):
            raise TypeError(f"group must be a LieGroup (e.g. lm.SO3()) or None, got {type(group).__name__} "
                            f"{group!r}")
        name = os.fspath(path)
        arrays = _read_arrays(name)
        header = _header(arrays, name)
        try:
            g = _rebuild(header["g_structure"], (arrays[f"g_{i}"] for i in itertools.count()))
            metadata: Metadata = dict(header["metadata"])
            if "steps" not in arrays:
                arrays.update(_statistics_per_node(arrays, metadata))
            stats = SolverStats(arrays["iterations"], arrays["residuals"], float(header["wall_time"]), arrays["steps"])
            extras = {key: arrays[f"extra_{i}"] for i, key in enumerate(header["extras"])}
            t, eta, mu = arrays["t"], arrays["eta"], arrays["mu"]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{name!r} is a damaged liemech solution file: {exc!r}") from exc
        if "checksum" in header and header["checksum"] != _checksum(
                {key: value for key, value in arrays.items() if key != "header"}, header):
            raise ValueError(f"{name!r} is a damaged liemech solution file: checksum mismatch: the file was altered "
                             "or damaged")
        problem = _inconsistency(arrays, g)
        if problem:
            raise ValueError(f"{name!r} is a damaged liemech solution file: {problem}")
        recorded = metadata.get("group")
        own = _group_from_repr(recorded)
        if group is not None and own is not None and group != own:
            raise ValueError(f"{name!r} records the group {recorded}, but group={group!r} was given")
        group = cast(LieGroup[P] | None, own) if group is None else group
        problem = None if group is None else _misfit(group, g)
        if problem:
            given = "the group it records" if own is not None and group is own else f"group={group!r}"
            raise ValueError(f"{name!r} does not fit {given}: {problem}")
        return cls(t, cast(P, g), eta, mu, arrays.get("lam"), stats, extras, metadata, group)


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


def _read_arrays(path: str) -> dict[str, Vector]:
    """Every entry of the ``.npz`` file at ``path``; any failure to read it is a ValueError naming
    the path and what is wrong."""
    try:
        loaded = np.load(path, allow_pickle=False)
    except EOFError as exc:  # numpy's only EOFError here: not a single byte to read
        raise ValueError(f"{path!r} is not a liemech solution file: the file is empty") from exc
    except zipfile.BadZipFile as exc:  # starts like a zip archive but its directory is missing or broken
        raise ValueError(f"{path!r} is a truncated or corrupted .npz file: {exc}") from exc
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path!r} is not a liemech solution file: {exc}") from exc
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        raise ValueError(f"{path!r} is not a liemech solution file: a single array, not an .npz archive")
    arrays: dict[str, Vector] = {}
    with loaded:
        for name in loaded.files:
            try:
                arrays[name] = loaded[name]
            except (zipfile.BadZipFile, EOFError, zlib.error, OSError, ValueError, KeyError) as exc:
                raise ValueError(f"{path!r} is a truncated or corrupted .npz file: its entry {name!r} cannot be "
                                 f"read ({exc!r})") from exc
    return arrays


def _checksum(arrays: dict[str, np.ndarray[Any, Any]], header: dict[str, Any]) -> str:
    """SHA-256 of every array (name, dtype, shape and C-order bytes, by name) and of the header
    without its checksum, as "sha256:<hex>"."""
    digest = hashlib.sha256()
    # The header goes through a JSON round trip first so that save (a dict of Python values) and
    # load (the parsed JSON) hash the same text.
    rest = json.loads(json.dumps({key: value for key, value in header.items() if key != "checksum"}))
    digest.update(json.dumps(rest, sort_keys=True).encode())
    for name in sorted(arrays):
        value = arrays[name]
        data = value.tobytes(order="C")
        # The length prefix keeps the concatenation unambiguous.
        digest.update(json.dumps([name, value.dtype.str, list(value.shape), len(data)]).encode())
        digest.update(data)
    return f"sha256:{digest.hexdigest()}"


def _inconsistency(arrays: dict[str, np.ndarray[Any, Any]], g: object) -> str | None:
    """What makes the fields of a solution disagree, or None: every field has one row per entry of
    a strictly increasing ``t``, the statistics included (one entry per stored node)."""
    t = arrays["t"]
    if t.ndim != 1:
        return f"t must be one-dimensional, it has shape {t.shape}"
    leaves = [np.asarray(leaf) for leaf in jax.tree.leaves(g)]
    named = [("g" if len(leaves) == 1 else f"g (array {i} of the product)", leaf) for i, leaf in enumerate(leaves)]
    named += [(name, arrays[name]) for name in ("eta", "mu", "lam") if name in arrays]
    for name, value in named:
        if value.ndim == 0 or len(value) != len(t):
            return f"t has {len(t)} nodes but {name} has shape {value.shape}"
    if not np.all(np.diff(t) > 0):
        return "t is not strictly increasing"
    for name in ("iterations", "residuals", "steps"):
        if arrays[name].shape != t.shape:
            return f"t has {len(t)} nodes but the statistics' {name} has shape {arrays[name].shape}"
    return None


def _statistics_per_node(arrays: dict[str, np.ndarray[Any, Any]], metadata: Metadata) -> dict[str, Vector]:
    """The statistics of a file written before they were kept per stored node (liemech 0.1.0 kept
    one entry per step; ``store_every`` of the metadata tells which steps each node closes)."""
    iterations, residuals = np.asarray(arrays["iterations"]), np.asarray(arrays["residuals"])
    every = metadata.get("store_every", 1)
    if iterations.ndim != 1 or residuals.shape != iterations.shape or not isinstance(every, int) or every < 1:
        return {"steps": np.full(0, np.nan)}  # refused as inconsistent with t
    ends = np.append(np.arange(0, iterations.size - 1, every), iterations.size - 1)
    counts = np.diff(ends, prepend=0).astype(np.float64)
    starts = ends - counts.astype(np.int64) + 1
    return {"steps": counts,
            "iterations": np.array([np.sum(iterations[a:b + 1]) for a, b in zip(starts, ends)]),
            "residuals": np.array([np.max(residuals[a:b + 1], initial=0.0) for a, b in zip(starts, ends)])}


def _misfit(group: LieGroup[Any], g: object) -> str | None:
    """Why the stacked configurations ``g`` are not points of ``group``, or None: the nesting of
    tuples and every array's per-node shape must be those of ``group.identity()``."""
    point = jax.eval_shape(group.identity)  # shapes only: nothing is computed
    have, want = _shapes(g, 1), _shapes(point, 0)
    return None if have == want else (f"its configurations have shape {have} per node, the points of {group!r} "
                                      f"have shape {want}")


def _shapes(point: Any, skip: int) -> str:
    """The shapes of a point's arrays (after ``skip`` leading axes), nested like the point."""
    if isinstance(point, tuple):
        return "(" + ", ".join(_shapes(part, skip) for part in point) + ")"
    return str(tuple(np.shape(point))[skip:])


def _write_atomically(path: str, arrays: dict[str, np.ndarray[Any, Any]]) -> None:
    """Write ``arrays`` as an ``.npz`` file at ``path`` through a temporary file in its folder,
    synced and renamed onto ``path``: ``path`` is never a partial file."""
    target = os.path.realpath(path) if os.path.islink(path) else path  # write through a link, as open() does
    folder, name = os.path.split(os.path.abspath(target))
    for _ in range(100):
        temporary = os.path.join(folder, f".{name[:200]}.{secrets.token_hex(6)}.tmp")
        try:
            # os.open, not tempfile, so that the file gets the usual permissions (0o666 less the umask)
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                                 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"no free temporary file name next to {path!r}")
    try:
        with os.fdopen(descriptor, "wb") as file:
            np.savez(file, allow_pickle=False, **arrays)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    _sync_folder(folder)


def _sync_folder(folder: str) -> None:
    """Make a rename in ``folder`` durable where the system allows it (POSIX; not Windows)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


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
