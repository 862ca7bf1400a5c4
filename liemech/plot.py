"""Figures of a discrete solution: energy and first integrals, constraint residuals, convergence
studies and trajectories on SO(3), SE(2), Rⁿ and their products, and animations of a rigid or
rolling body.

Every figure function returns a ``matplotlib.figure.Figure`` (save it with ``fig.savefig(path)``,
or let a notebook display it) and never calls ``plt.show()``; its title is ``title`` or, by
default, the method's name that ``lm.integrate`` records in ``sol.metadata``. ``animate`` writes a
GIF (or an MP4 with ffmpeg). matplotlib is the ``plot`` extra (``pip install 'liemech[plot]'``);
it is imported when a figure is made, not with liemech.
"""

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from liemech.diagnostics import velocity_constraint
from liemech.groups.base import LieGroup
from liemech.groups.euclidean import Rn
from liemech.groups.product import ProductGroup
from liemech.groups.se2 import SE2
from liemech.groups.so3 import SO3
from liemech.mechanics.problem import Problem
from liemech.run.solution import Solution
from liemech.testing.order import estimate_order
from liemech.testing.work_precision_table import WorkPrecision
from liemech.types import Matrix, Vector

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

P = TypeVar("P")

Observable = Callable[[P, Vector], float]
"""A function of a configuration g and its body momentum μ."""

Series = Sequence[float] | Vector

_ARROWS = 20
"""At most this many heading arrows along an SE(2) path."""
_ARROW_LENGTH = 0.12
"""Heading arrows are this fraction of the path's extent long."""
_BODY_AXES_LENGTH = 0.4
"""Animated body axes at a moving centre are this fraction of the centre path's extent long."""
_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_CENTRE_LABELS = "xyz"
"""The coordinates of a centre: the R¹, R² or R³ factor after SO(3) in a product."""


def _figure(width: float, height: float) -> "Figure":
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError("liemech.plot needs matplotlib: pip install 'liemech[plot]'") from error
    return Figure(figsize=(width, height), layout="constrained")


def _titled(fig: "Figure", sol: Solution[P], title: str | None) -> "Figure":
    """``fig`` with the title ``title``, or else the method's name in ``sol.metadata`` if known."""
    text = sol.metadata.get("method") if title is None else title
    if text:
        fig.suptitle(str(text))
    return fig


def _checked_folder(path: str | os.PathLike[str], name: str) -> str:
    """``path`` as a str, after checking it names a file in an existing, writable folder; else
    ValueError naming ``name``."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or os.PathLike, got {type(path).__name__}")
    text = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise ValueError(f"{name}: the folder {folder!r} of {text!r} does not exist")
    if os.path.isdir(text) or not os.access(folder, os.W_OK):
        raise ValueError(f"{name}: cannot write a file at {text!r}")
    return text


def check_figure_path(path: str | os.PathLike[str], name: str = "path") -> None:
    """Check before drawing that ``fig.savefig(path)`` can write ``path``: its folder exists and
    its suffix is a format matplotlib writes (.png, .pdf, .svg, …); else ValueError naming
    ``name`` and what was expected."""
    text = _checked_folder(path, name)
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError as error:
        raise ImportError("liemech.plot needs matplotlib: pip install 'liemech[plot]'") from error
    formats = sorted(FigureCanvasBase.get_supported_filetypes())
    suffix = os.path.splitext(text)[1].lower()
    if suffix.lstrip(".") not in formats:
        raise ValueError(f"{name}: unknown figure format {suffix or '(no suffix)'!r} of {text!r}; expected a "
                         f"path ending in {', '.join('.' + f for f in formats)}")


def at_nodes(sol: Solution[P], fn: Observable[P]) -> Vector:
    """fn(g_k, μ_k) at every stored node."""
    return np.array([fn(g, mu) for g, mu in zip(sol.points(), sol.mu)], dtype=np.float64)


def residual_norms(sol: Solution[P], problem: Problem[P]) -> dict[str, Vector]:
    """‖·‖∞ of the constraints at every stored node: "|Φ(g)|" and "|B(g)η|" for a holonomic Φ with
    B(g) = L*_g DΦ(g), then "|φ(g, η)|" for a nonholonomic φ (all three when the problem has both
    kinds, as a rolling body does), with η_k = ``sol.eta[k]``. ValueError for a problem without
    constraints."""
    if problem.holonomic is None and problem.nonholonomic is None:
        raise ValueError("problem: constraint residuals need a problem with a holonomic or nonholonomic constraint")
    points = sol.points()
    norms: dict[str, Vector] = {}
    if problem.holonomic is not None:
        c = problem.holonomic
        norms["|Φ(g)|"] = np.array([np.max(np.abs(c.value(g))) for g in points])
        norms["|B(g)η|"] = np.max(np.abs(velocity_constraint(problem, points, sol.eta)), axis=1)
    if problem.nonholonomic is not None:
        n = problem.nonholonomic
        norms["|φ(g, η)|"] = np.array([np.max(np.abs(n.value(g, eta))) for g, eta in zip(points, sol.eta)])
    return norms


def energy(sol: Solution[P], energy_fn: Observable[P],
           invariants: Mapping[str, Observable[P]] | None = None, *, title: str | None = None) -> "Figure":
    """H(g_k, μ_k) − H(g_0, μ_0) against t_k on the first axes and, on a second one when
    ``invariants`` (name → I(g, μ)) are given, I(g_k, μ_k) − I(g_0, μ_0) for each, in order."""
    invariants = {} if invariants is None else invariants
    fig = _figure(7.0, 5.5 if invariants else 3.5)
    axes = fig.subplots(2 if invariants else 1, 1, sharex=True, squeeze=False)[:, 0]
    H = at_nodes(sol, energy_fn)
    axes[0].plot(sol.t, H - H[0], label="H − H₀")
    axes[0].set_ylabel("energy error H − H₀")
    for name, fn in invariants.items():
        values = at_nodes(sol, fn)
        axes[1].plot(sol.t, values - values[0], label=name)
    if invariants:
        axes[1].set_ylabel("first integrals I − I₀")
        axes[1].legend(fontsize=8)
    axes[-1].set_xlabel("time t")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    return _titled(fig, sol, title)


def constraint_residuals(sol: Solution[P], problem: Problem[P], *, title: str | None = None) -> "Figure":
    """The residuals of ``residual_norms`` against t_k, one line each, on a log scale (exact zeros
    are left out of the log axis)."""
    residuals = residual_norms(sol, problem)
    fig = _figure(7.0, 3.5)
    ax = fig.subplots()
    for name, values in residuals.items():
        ax.plot(sol.t, values, marker=".", linewidth=0.8, label=name)
    ax.set_yscale("log", nonpositive="mask")
    ax.set_xlabel("time t")
    ax.set_ylabel("constraint residual (max norm)")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    return _titled(fig, sol, title)


def convergence(h: Series, errors: Series | Mapping[str, Series], slopes: Sequence[float] = (),
                plateau: float = 1e-13, *, title: str | None = None) -> "Figure":
    """Errors against the steps ``h`` on log–log axes, one line per series (``errors`` one series or
    name → series), each labelled with the slope p of log e = p log h + C fitted by
    ``liemech.testing.estimate_order`` over the points above the round-off ``plateau`` (the points
    it leaves out are ringed), then a dashed reference line ∝ hᵖ for each p in ``slopes``, through
    the largest-h point of the first series, under ``title`` if given. ValueError (from ``estimate_order``) on malformed input
    or when fewer than two points of a series lie above the plateau."""
    named = dict(errors) if isinstance(errors, Mapping) else {"error": errors}
    steps = np.asarray(h, dtype=np.float64)
    arrays = {name: np.asarray(series, dtype=np.float64) for name, series in named.items()}
    fits = {name: estimate_order(steps, e, plateau) for name, e in arrays.items()}
    fig = _figure(6.0, 4.5)
    ax = fig.subplots()
    for name, e in arrays.items():
        ax.plot(steps, e, marker="o", label=f"{name}: fitted slope {fits[name].slope:.2f}")
    for name, e in arrays.items():
        left_out = np.isin(steps, fits[name].discarded)
        if np.any(left_out):
            ax.plot(steps[left_out], e[left_out], linestyle="none", marker="o", markersize=11,
                    markerfacecolor="none", color="grey")
    first = next(iter(arrays.values()))
    anchor = int(np.argmax(steps))
    for p in slopes:
        ax.plot(steps, first[anchor] * (steps / steps[anchor]) ** p, linestyle="--", color="grey",
                label=f"slope {p:g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("step h")
    ax.set_ylabel("error")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    if title:
        fig.suptitle(title)
    return fig


def work_precision(table: "WorkPrecision[P]", *, title: str | None = None) -> "Figure":
    """A ``liemech.testing.work_precision`` table drawn: wall time against the energy error (left)
    and against the error at t_final (right), log–log, one line per method through its step counts."""
    fig = _figure(10.0, 4.0)
    axes = fig.subplots(1, 2, sharey=True)
    for name in dict.fromkeys(row.method for row in table.rows):
        rows = table.of(name)
        wall = [row.wall_time for row in rows]
        axes[0].plot([row.energy_error for row in rows], wall, marker="o", label=name)
        axes[1].plot([row.final_error for row in rows], wall, marker="o", label=name)
    axes[0].set_xlabel("energy error max |H − H₀|")
    axes[1].set_xlabel(f"error at t = {table.t_final:g}")
    axes[0].set_ylabel("wall time (s)")
    for ax in axes:
        ax.set_xscale("log", nonpositive="mask")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=8)
    if title:
        fig.suptitle(title)
    return fig


def trajectory(sol: Solution[P], group: LieGroup[P] | None = None, *, title: str | None = None) -> "Figure":
    """The stored configurations on ``group`` (default ``sol.group``): on SO(3) the body axes, the
    columns R_k e₁, R_k e₂, R_k e₃, traced on the unit sphere (3D axes, one line each, then guide
    circles); on SE(2) the path (x_k, y_k) with heading arrows (cos θ_k, sin θ_k), each 12% of the
    path's extent long; on Rⁿ each component q_k[i] against t_k (named x, y, z for the centre of
    a body, the R¹, R² or R³ factor after SO(3) in a product); on a product each factor on its own
    axes, side by side. Other groups are refused with a TypeError."""
    group = sol.group if group is None else group
    if group is None:
        raise ValueError("group: the solution does not know its configuration space; pass group=problem.group")
    panels = _factors(group, sol.g)
    fig = _figure(4.5 * len(panels), 4.5)
    for i, (kind, points) in enumerate(panels):
        if kind is SO3:
            _body_axes(fig.add_subplot(1, len(panels), i + 1, projection="3d"), points)
        elif kind is SE2:
            _planar_path(fig.add_subplot(1, len(panels), i + 1), points)
        else:
            centre = i > 0 and panels[i - 1][0] is SO3 and points.shape[1] <= len(_CENTRE_LABELS)
            _components(fig.add_subplot(1, len(panels), i + 1), sol.t, points, centre)
    return _titled(fig, sol, title)


def _factors(group: object, g: object) -> list[tuple[type[SO3] | type[SE2] | type[Rn], Matrix]]:
    """(kind of factor, its stacked points) for every factor of a (nested) product, or for the
    group itself; TypeError for a space ``trajectory`` cannot draw."""
    if isinstance(group, ProductGroup) and isinstance(g, tuple):
        return [panel for factor, part in zip(group.factors, g) for panel in _factors(factor, part)]
    if isinstance(group, (SO3, SE2, Rn)):
        return [(type(group), np.asarray(g, dtype=np.float64))]
    raise TypeError(f"group: trajectory draws SO3(), SE2(), Rn(n) and products of them, got {group!r}")


_AXIS_COLOURS = ("tab:red", "tab:green", "tab:blue")


def _body_axes(ax: "Axes", R: Matrix) -> None:
    for j, color in enumerate(_AXIS_COLOURS):
        ax.plot(R[:, 0, j], R[:, 1, j], R[:, 2, j], color=color, label=f"R e{'₁₂₃'[j]}")
    _unit_sphere(ax)
    ax.set_title("SO(3): body axes on the unit sphere")
    ax.legend(fontsize=8, loc="upper left")


def _unit_sphere(ax: "Axes") -> None:
    """Three grey great circles, and axes limited to the unit cube with ticks −1, 0, 1."""
    circle = np.linspace(0.0, 2.0 * np.pi, 121)
    zero = np.zeros_like(circle)
    for x, y, z in ((np.cos(circle), np.sin(circle), zero), (np.cos(circle), zero, np.sin(circle)),
                    (zero, np.cos(circle), np.sin(circle))):
        ax.plot(x, y, z, color="grey", linewidth=0.5, alpha=0.5)
    ticks = (-1.0, 0.0, 1.0)
    ax.set(xlim=(-1.0, 1.0), ylim=(-1.0, 1.0), zlim=(-1.0, 1.0), box_aspect=(1.0, 1.0, 1.0),
           xticks=ticks, yticks=ticks, zticks=ticks, xlabel="x", ylabel="y", zlabel="z")


def _arrow_length(*coordinates: Vector, fraction: float = _ARROW_LENGTH) -> float:
    """``fraction`` times the largest extent of the coordinates (1 if they do not move)."""
    return fraction * max(float(np.ptp(c)) for c in coordinates) or 1.0


def _planar_path(ax: "Axes", g: Matrix) -> None:
    x, y = g[:, 0, 2], g[:, 1, 2]
    ax.plot(x, y, label="path (x, y)")
    every = max(1, len(x) // _ARROWS)
    ax.quiver(x[::every], y[::every], g[::every, 0, 0], g[::every, 1, 0], angles="xy", scale_units="xy",
              scale=1.0 / _arrow_length(x, y), width=0.006, zorder=3, color="tab:orange", label="heading")
    ax.set(aspect="equal", xlabel="x", ylabel="y", title="SE(2): path and heading")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)


def _components(ax: "Axes", t: Vector, q: Matrix, centre: bool) -> None:
    n = q.shape[1]
    names = _CENTRE_LABELS[:n] if centre else [f"q{i}" for i in range(n)]
    for i in range(n):
        ax.plot(t, q[:, i], label=names[i])
    ax.set(xlabel="time t", ylabel="centre " + ", ".join(names) if centre else "q",
           title=f"R{str(n).translate(_SUPERSCRIPTS)}: {'centre' if centre else 'components'}")
    if n <= 12:
        ax.legend(fontsize=8, ncols=2)
    ax.grid(True, alpha=0.3)


ANIMATION_FORMATS = (".gif", ".mp4")
"""The suffixes ``animate`` writes: GIF with Pillow, MP4 with ffmpeg."""


def animate(sol: Solution[P], path: str | os.PathLike[str], group: LieGroup[P] | None = None, *,
            frames: int = 100, fps: int = 20, title: str | None = None, dpi: int = 60) -> None:
    """Write the motion of a rigid or rolling body to ``path``: a GIF (matplotlib's PillowWriter)
    or, if ffmpeg is installed, an MP4. ``group`` (default ``sol.group``) is SO(3), SO(3) × R³ or
    SE(2): on SO(3) the body axes R e₁, R e₂, R e₃ from the origin with the traces of their tips;
    on SO(3) × R³ the body axes at the centre x (40% of the centre path's extent long) and the
    path of x so far; on SE(2) the pose (x, y) with its heading arrow and the path so far. The
    frames are ``min(frames, number of nodes)`` nodes evenly spread from the first to the last, at
    ``fps`` frames per second. The suffix, folder and group are checked before anything is drawn:
    ValueError for another suffix (or .mp4 without ffmpeg), TypeError for another group."""
    text = _checked_folder(path, "path")
    suffix = os.path.splitext(text)[1].lower()
    if suffix not in ANIMATION_FORMATS:
        raise ValueError(f"path: unknown animation format {suffix or '(no suffix)'!r} of {text!r}; expected a "
                         "path ending in .gif (or .mp4 with ffmpeg)")
    if not (isinstance(frames, int) and frames >= 2 and isinstance(fps, int) and fps >= 1):
        raise ValueError(f"frames must be an integer ≥ 2 and fps a positive integer, got frames={frames!r}, "
                         f"fps={fps!r}")
    group = sol.group if group is None else group
    if group is None:
        raise ValueError("group: the solution does not know its configuration space; pass group=problem.group")
    panels = _animated(group, sol.g)
    try:
        from matplotlib import animation
    except ImportError as error:
        raise ImportError("liemech.plot needs matplotlib: pip install 'liemech[plot]'") from error
    if suffix == ".mp4" and not animation.writers.is_available("ffmpeg"):
        raise ValueError(f"path: writing {suffix!r} needs ffmpeg, which is not installed; write a .gif instead")
    writer = animation.FFMpegWriter(fps=fps) if suffix == ".mp4" else animation.PillowWriter(fps=fps)
    nodes = np.unique(np.linspace(0, len(sol.t) - 1, min(frames, len(sol.t))).round().astype(int))
    draw = _planar_frame if panels[0][0] is SE2 else _rotation_frame
    fig = _figure(4.5, 4.5)
    with writer.saving(fig, text, dpi):
        for k in nodes:
            draw(fig, panels, int(k), float(sol.t[k]))
            _titled(fig, sol, title)
            writer.grab_frame()


def _animated(group: object, g: object) -> list[tuple[type[SO3] | type[SE2] | type[Rn], Matrix]]:
    """The panels of ``_factors`` for SO(3), SO(3) × R³ or SE(2), else TypeError."""
    try:
        panels = _factors(group, g)
    except TypeError:
        panels = []
    kinds = [(kind, points.shape[1:]) for kind, points in panels]
    if kinds not in ([(SO3, (3, 3))], [(SO3, (3, 3)), (Rn, (3,))], [(SE2, (3, 3))]):
        raise TypeError(f"group: animate draws SO3(), ProductGroup(SO3(), Rn(3)) or SE2(), got {group!r}")
    return panels


def _rotation_frame(fig: "Figure", panels: list[tuple[type[SO3] | type[SE2] | type[Rn], Matrix]], k: int,
                    t: float) -> None:
    """Node k of an SO(3) or SO(3) × R³ motion: body axes (at the centre) and the traces so far."""
    fig.clf()
    ax = fig.add_subplot(projection="3d")
    R = panels[0][1]
    if len(panels) == 1:
        _unit_sphere(ax)
        centre, length = np.zeros(3), 1.0
        for j, color in enumerate(_AXIS_COLOURS):
            ax.plot(R[: k + 1, 0, j], R[: k + 1, 1, j], R[: k + 1, 2, j], color=color, linewidth=0.8)
    else:
        x = panels[1][1]
        length = _arrow_length(*x.T, fraction=_BODY_AXES_LENGTH)
        low, high = x.min(axis=0) - length, x.max(axis=0) + length
        half = 0.5 * float(np.max(high - low))
        middle = 0.5 * (low + high)
        ax.set(xlim=(middle[0] - half, middle[0] + half), ylim=(middle[1] - half, middle[1] + half),
               zlim=(middle[2] - half, middle[2] + half), box_aspect=(1.0, 1.0, 1.0), xlabel="x", ylabel="y",
               zlabel="z")
        ax.plot(x[: k + 1, 0], x[: k + 1, 1], x[: k + 1, 2], color="black", linewidth=0.8, label="centre x")
        centre = x[k]
    for j, color in enumerate(_AXIS_COLOURS):
        tip = centre + length * R[k, :, j]
        ax.plot(*np.column_stack([centre, tip]), color=color, linewidth=2.0, label=f"R e{'₁₂₃'[j]}")
    ax.set_title(f"t = {t:.2f}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")


def _planar_frame(fig: "Figure", panels: list[tuple[type[SO3] | type[SE2] | type[Rn], Matrix]], k: int,
                  t: float) -> None:
    """Node k of an SE(2) motion: the path so far and the pose with its heading arrow."""
    fig.clf()
    ax = fig.add_subplot()
    g = panels[0][1]
    x, y = g[:, 0, 2], g[:, 1, 2]
    length = _arrow_length(x, y)
    ax.set(xlim=(x.min() - length, x.max() + length), ylim=(y.min() - length, y.max() + length), aspect="equal",
           xlabel="x", ylabel="y", title=f"t = {t:.2f}")
    ax.plot(x[: k + 1], y[: k + 1], color="tab:blue", label="path (x, y)")
    ax.quiver(x[k], y[k], g[k, 0, 0], g[k, 1, 0], angles="xy", scale_units="xy", scale=1.0 / length,
              width=0.012, color="tab:orange", label="heading")
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(True, alpha=0.3)
