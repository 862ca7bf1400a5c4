"""Optional figures for the examples: written to ``figures/`` when matplotlib (the ``plot``
extra, ``pip install 'liemech[plot]'``) is installed, skipped otherwise. Run as a script, it
writes the gallery's animation of a rolling disc, ``figures/rolling_disc.gif``."""

import importlib.util
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import liemech as lm
from liemech import plot
from liemech.systems import RollingDisc

Series = Mapping[str, tuple[Sequence[float], Sequence[float]]]

FIGURES = Path("figures")
# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: 10 frames of the animation instead of 60
FRAMES = 10 if os.environ.get("LIEMECH_EXAMPLES_FAST") == "1" else 60


def save_plot(
    name: str, title: str, xlabel: str, ylabel: str, series: Series,
    scale: Literal["linear", "loglog", "semilogy"] = "linear",
) -> Path | None:
    """One figure with a line per entry of ``series`` (label → (x, y)) on the given axes scale.
    Returns the PNG's path, or None without matplotlib."""
    if importlib.util.find_spec("matplotlib") is None:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for label, (x, y) in series.items():
        ax.plot(x, y, marker="o" if scale == "loglog" else None, markersize=3, label=label)
    if scale == "loglog":
        ax.set_xscale("log")
    if scale != "linear":
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if series:  # the quick mode may leave a figure without curves
        ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    FIGURES.mkdir(exist_ok=True)
    path = FIGURES / f"{name}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def rolling_disc_animation() -> Path | None:
    """The thin disc in its steady circular motion (lean 0.25, precession 1.5) over one turn,
    Lobatto-3 at h = 0.05 up to T = 4.2, as a GIF of 60 frames (10 in the quick mode). Returns
    its path, or None without matplotlib."""
    if importlib.util.find_spec("matplotlib") is None:
        return None
    problem = RollingDisc().steady(lean=0.25, precession=1.5).problem()
    sol = lm.integrate(problem, lm.VPRK(lm.lobatto(3)), h=0.05, t_final=4.2)
    FIGURES.mkdir(exist_ok=True)
    path = FIGURES / "rolling_disc.gif"
    plot.animate(sol, path, frames=FRAMES, dpi=80, title="rolling disc, VPRK(lobatto(3))")
    return path


if __name__ == "__main__":
    print(rolling_disc_animation())
