"""Interpolation of stored nodes that stays on the group.

Between nodes t_k ≤ t ≤ t_{k+1}, g(t) = g_k τ(θ ξ_k) with ξ_k = τ⁻¹(g_k⁻¹ g_{k+1}) and
θ = (t − t_k)/(t_{k+1} − t_k): the curve of the retraction from g_k through g_{k+1} (a straight line
on Rⁿ). Velocities, momenta and multipliers are interpolated linearly. Second order: the error is
O(Δt²) in the spacing Δt of the stored nodes.
"""

import functools
from collections.abc import Callable
from typing import TypeVar, cast

import jax
import numpy as np
from jax.typing import ArrayLike
from numpy.typing import NDArray

from liemech.groups.base import LieGroup, RetractionKind
from liemech.input_checks import as_float_array
from liemech.types import Matrix, Vector

P = TypeVar("P")

BLOCK = 64
"""Points interpolated per compiled call (the last block padded): one compilation for any count."""

TIME_SLACK = 1e-12
"""Times beyond [t_0, t_end] by at most this, relative to max(1, |t|), are round-off and taken at
the end they pass (t_end = N·h may differ from the t_final a user typed in the last digit)."""


def checked_times(t: ArrayLike, nodes: Vector) -> Vector:
    """``t`` as a finite float64 scalar or 1-D array (possibly empty) inside [nodes[0], nodes[-1]],
    else ValueError naming t (TypeError for booleans, which numpy would read as 0 and 1)."""
    try:
        given = getattr(t, "dtype", None)
        kind = np.dtype(np.asarray(t).dtype if given is None else given).kind
    except (TypeError, ValueError):  # not an array at all: as_float_array names the problem
        kind = "f"
    if isinstance(t, (bool, np.bool_)) or kind == "b":
        raise TypeError(f"t must be a time or an array of times (real numbers), got booleans: {t!r}")
    if isinstance(t, (str, bytes)) or kind in "US":  # numpy would read "0.5" as a number
        raise ValueError(f"t must be a real array, got {type(t).__name__}")
    times = as_float_array(t, "t")
    if times.ndim > 1 or not np.all(np.isfinite(times)):
        raise ValueError(f"t must be a finite time or a 1-D array of finite times, got {t!r}")
    first, last = float(nodes[0]), float(nodes[-1])
    slack = TIME_SLACK * max(1.0, abs(first), abs(last))
    outside = times[(times < first - slack) | (times > last + slack)]
    if outside.size:
        raise ValueError(f"t = {float(outside.flat[0])!r} is outside the stored times [{first!r}, {last!r}]; "
                         "a solution interpolates, it does not extrapolate")
    return np.clip(times, first, last)


def intervals(times: Vector, nodes: Vector) -> tuple[NDArray[np.intp], Vector]:
    """For each time its interval k (t_k ≤ t ≤ t_{k+1}, the last one closed) and θ ∈ [0, 1]."""
    k = np.clip(np.searchsorted(nodes, times, side="right") - 1, 0, max(len(nodes) - 2, 0))
    span = nodes[np.minimum(k + 1, len(nodes) - 1)] - nodes[k]
    theta = np.divide(times - nodes[k], span, out=np.zeros_like(times), where=span > 0)
    return k, theta


def on_group(group: LieGroup[P], kind: RetractionKind, g: P, times: Vector, nodes: Vector) -> P:
    """g(t) = g_k τ(θ ξ_k), ξ_k = τ⁻¹(g_k⁻¹ g_{k+1}), at every time (stacked along a leading axis)."""
    if not len(times):
        return cast(P, jax.tree.map(lambda leaf: np.asarray(leaf, dtype=np.float64)[:0], g))
    k, theta = intervals(times, nodes)
    tau = group.retraction(kind)
    last = len(nodes) - 1

    def node(index: int) -> P:
        return cast(P, jax.tree.map(lambda leaf: leaf[index], g))

    # τ⁻¹ validates its point in numpy, so it runs once per interval used; the rest runs in blocks
    # of one shape, compiled once per group and retraction.
    used, position = np.unique(k, return_inverse=True)
    xis = np.stack([tau.tau_inv(group.compose(group.inverse(node(i)), node(min(i + 1, last))))
                    for i in used.tolist()])[position]
    padded = np.resize(np.arange(len(times)), -(-len(times) // BLOCK) * BLOCK)
    inputs = (jax.tree.map(lambda leaf: np.asarray(leaf)[k[padded]], g), xis[padded], theta[padded])
    blocks = [_along(group, kind)(*jax.tree.map(lambda leaf: leaf[i:i + BLOCK], inputs))
              for i in range(0, len(padded), BLOCK)]
    return cast(P, jax.tree.map(lambda *parts: np.concatenate(parts)[: len(times)], *blocks))


@functools.cache
def _along(group: LieGroup[P], kind: RetractionKind) -> Callable[[P, Matrix, Vector], P]:
    """(g_k, ξ_k, θ) ↦ g_k τ(θ ξ_k) for a block of points, compiled."""
    tau = group.retraction(kind)
    return cast(Callable[[P, Matrix, Vector], P],
                jax.jit(jax.vmap(lambda start, xi, theta: group.compose(start, tau.tau(theta * xi)))))


def linear(rows: Matrix, times: Vector, nodes: Vector) -> Matrix:
    """Rows interpolated linearly: (1 − θ) r_k + θ r_{k+1}, one row per time."""
    k, theta = intervals(times, nodes)
    weight = theta.reshape(-1, *([1] * (rows.ndim - 1)))
    return np.asarray((1.0 - weight) * rows[k] + weight * rows[np.minimum(k + 1, len(nodes) - 1)],
                      dtype=np.float64)
