"""Figures of a discrete solution: energy and first integrals, constraint residuals, convergence
studies and trajectories on SO(3), SE(2), Rⁿ and their products.

Every function returns a ``matplotlib.figure.Figure`` (save it with ``fig.savefig(path)``, or let a
notebook display it) and never calls ``plt.show()``. matplotlib is the ``plot`` extra
(``pip install 'liemech[plot]'``); it is imported when a figure is made, not with liemech.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from liemech.diagnostics import velocity_constraint
from liemech.groups.base import LieGroup
from liemech.groups.euclidean import Rn
from liemech.groups.product import ProductGroup
from liemech.groups.se2 import SE2
from liemech.groups.so3 import SO3
from liemech.run.solution import Solution
from liemech.mechanics.problem import Problem
from liemech.testing.order import estimate_order
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


def _figure(width: float, height: float) -> "Figure":
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError("liemech.plot needs matplotlib: pip install 'liemech[plot]'") from error
    return Figure(figsize=(width, height), layout="constrained")


def at_nodes(sol: Solution[P], fn: Observable[P]) -> Vector:
    """fn(g_k, μ_k) at every stored node."""
    return np.array([fn(g, mu) for g, mu in zip(sol.points(), sol.mu)], dtype=np.float64)


def residual_norms(sol: Solution[P], problem: Problem[P]) -> dict[str, Vector]:
    """‖·‖∞ of the constraints at every stored node: "|Φ(g)|" and "|B(g)η|" for a holonomic Φ with
    B(g) = L*_g DΦ(g), or "|φ(g, η)|" for a nonholonomic φ, with η_k = ``sol.eta[k]``. ValueError
    for a problem without constraints."""
    points = sol.points()
    if problem.holonomic is not None:
        c = problem.holonomic
        return {"|Φ(g)|": np.array([np.max(np.abs(c.value(g))) for g in points]),
                "|B(g)η|": np.max(np.abs(velocity_constraint(problem, points, sol.eta)), axis=1)}
    if problem.nonholonomic is not None:
        n = problem.nonholonomic
        return {"|φ(g, η)|": np.array([np.max(np.abs(n.value(g, eta))) for g, eta in zip(points, sol.eta)])}
    raise ValueError("problem: constraint residuals need a problem with a holonomic or nonholonomic constraint")


def energy(sol: Solution[P], energy_fn: Observable[P],
           invariants: Mapping[str, Observable[P]] | None = None) -> "Figure":
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
    axes[-1].set_xlabel("t")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    return fig


def constraint_residuals(sol: Solution[P], problem: Problem[P]) -> "Figure":
    """The residuals of ``residual_norms`` against t_k, one line each, on a log scale (exact zeros
    are left out of the log axis)."""
    residuals = residual_norms(sol, problem)
    fig = _figure(7.0, 3.5)
    ax = fig.subplots()
    for name, values in residuals.items():
        ax.plot(sol.t, values, marker=".", linewidth=0.8, label=name)
    ax.set_yscale("log", nonpositive="mask")
    ax.set_xlabel("t")
    ax.set_ylabel("constraint residual (max norm)")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    return fig


def convergence(h: Series, errors: Series | Mapping[str, Series], slopes: Sequence[float] = (),
                plateau: float = 1e-13) -> "Figure":
    """Errors against the steps ``h`` on log–log axes, one line per series (``errors`` one series or
    name → series), each labelled with the slope p of log e = p log h + C fitted by
    ``liemech.testing.estimate_order`` over the points above the round-off ``plateau`` (the points
    it leaves out are ringed), then a dashed reference line ∝ hᵖ for each p in ``slopes``, through
    the largest-h point of the first series. ValueError (from ``estimate_order``) on malformed input
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
    return fig


def trajectory(sol: Solution[P], group: LieGroup[P] | None = None) -> "Figure":
    """The stored configurations on ``group`` (default ``sol.group``): on SO(3) the body axes, the
    columns R_k e₁, R_k e₂, R_k e₃, traced on the unit sphere (3D axes, one line each, then guide
    circles); on SE(2) the path (x_k, y_k) with heading arrows (cos θ_k, sin θ_k); on Rⁿ each
    component q_k[i] against t_k; on a product each factor on its own axes, side by side. Other
    groups are refused with a TypeError."""
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
            _components(fig.add_subplot(1, len(panels), i + 1), sol.t, points)
    return fig


def _factors(group: object, g: object) -> list[tuple[type[SO3] | type[SE2] | type[Rn], Matrix]]:
    """(kind of factor, its stacked points) for every factor of a (nested) product, or for the
    group itself; TypeError for a space ``trajectory`` cannot draw."""
    if isinstance(group, ProductGroup) and isinstance(g, tuple):
        return [panel for factor, part in zip(group.factors, g) for panel in _factors(factor, part)]
    if isinstance(group, (SO3, SE2, Rn)):
        return [(type(group), np.asarray(g, dtype=np.float64))]
    raise TypeError(f"group: trajectory draws SO3(), SE2(), Rn(n) and products of them, got {group!r}")


def _body_axes(ax: "Axes", R: Matrix) -> None:
    for j, color in enumerate(("tab:red", "tab:green", "tab:blue")):
        ax.plot(R[:, 0, j], R[:, 1, j], R[:, 2, j], color=color, label=f"R e{'₁₂₃'[j]}")
    circle = np.linspace(0.0, 2.0 * np.pi, 121)
    zero = np.zeros_like(circle)
    for x, y, z in ((np.cos(circle), np.sin(circle), zero), (np.cos(circle), zero, np.sin(circle)),
                    (zero, np.cos(circle), np.sin(circle))):
        ax.plot(x, y, z, color="grey", linewidth=0.5, alpha=0.5)
    ax.set(xlim=(-1.0, 1.0), ylim=(-1.0, 1.0), zlim=(-1.0, 1.0), box_aspect=(1.0, 1.0, 1.0),
           xlabel="x", ylabel="y", zlabel="z", title="SO(3): body axes")
    ax.legend(fontsize=8)


def _planar_path(ax: "Axes", g: Matrix) -> None:
    x, y = g[:, 0, 2], g[:, 1, 2]
    ax.plot(x, y, label="path (x, y)")
    every = max(1, len(x) // _ARROWS)
    length = 0.08 * max(float(np.ptp(x)), float(np.ptp(y))) or 1.0  # arrows scaled to the path
    ax.quiver(x[::every], y[::every], g[::every, 0, 0], g[::every, 1, 0], angles="xy", scale_units="xy",
              scale=1.0 / length, width=0.007, zorder=3, color="tab:orange", label="heading")
    ax.set(aspect="equal", xlabel="x", ylabel="y", title="SE(2): path and heading")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)


def _components(ax: "Axes", t: Vector, q: Matrix) -> None:
    for i in range(q.shape[1]):
        ax.plot(t, q[:, i], label=f"q{i}")
    ax.set(xlabel="t", ylabel="q", title=f"R{q.shape[1]}: components")
    if q.shape[1] <= 12:
        ax.legend(fontsize=8, ncols=2)
    ax.grid(True, alpha=0.3)
