"""Work–precision: the wall time of each method against the accuracy it reaches, measured.

For every method and every step count N of a problem run to t_final, the table holds the median
wall time of ``rounds`` runs (after one run that compiles; the methods take turns within each
round, so that a change of machine load touches them all alike), the energy error
max_k |H(g_k, μ_k) − H(g_0, μ_0)| over the run and the error at t_final, max |g_N − g(t_final)|
over the numbers of the configuration, against a reference configuration the caller computes
independently (DOP853 at tight tolerance, or a closed form). A user picks a method by measurement:
the cheapest row that meets the accuracy they need.
"""

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from liemech.input_checks import checked_count, checked_real
from liemech.mechanics.problem import Problem
from liemech.methods.method import Method
from liemech.run.integrate import integrate
from liemech.run.solution import Solution
from liemech.testing.conformance import point_distance
from liemech.types import Vector

P = TypeVar("P")

Energy = Callable[[P, Vector], float]
"""H(g, μ): the energy at a node, from its configuration and momentum."""


@dataclass(frozen=True)
class WorkPrecisionRow:
    """One method at one step count: its wall time (median, seconds), its energy error over the run
    and its error at t_final."""

    method: str
    steps: int
    h: float
    wall_time: float
    energy_error: float
    final_error: float


@dataclass(frozen=True)
class WorkPrecision(Generic[P]):
    """The rows of ``work_precision``, in the order of ``methods`` and then of ``steps``."""

    rows: tuple[WorkPrecisionRow, ...]
    t_final: float

    def of(self, method: str) -> tuple[WorkPrecisionRow, ...]:
        """The rows of one method, by increasing step count."""
        return tuple(row for row in self.rows if row.method == method)

    def cheapest(self, energy_error: float) -> WorkPrecisionRow | None:
        """The fastest row whose energy error is at most ``energy_error`` (None if no row is)."""
        meeting = [row for row in self.rows if row.energy_error <= energy_error]
        return min(meeting, key=lambda row: row.wall_time) if meeting else None

    def __str__(self) -> str:
        lines = [f"work–precision to t = {self.t_final:g}",
                 f"{'method':<28}{'steps':>9}{'h':>11}{'wall s':>10}{'energy error':>14}{'error at T':>12}"]
        lines += [f"{row.method:<28}{row.steps:>9}{row.h:>11.4g}{row.wall_time:>10.4f}{row.energy_error:>14.3e}"
                  f"{row.final_error:>12.3e}" for row in self.rows]
        return "\n".join(lines)


def work_precision(problem: Problem[P], methods: Mapping[str, Method], reference: P, t_final: float,
                   steps: Sequence[int], energy: Energy[P], *, rounds: int = 3) -> WorkPrecision[P]:
    """The work–precision table of ``methods`` (name → method) on ``problem`` up to ``t_final``, each
    at N = ``steps`` steps (h = t_final / N), against the configuration ``reference`` at t_final
    and with the energy ``energy`` (module docstring). A run that fails raises its
    ConvergenceError, naming the step."""
    t_final = checked_real(t_final, "t_final", 0.0, requirement="be positive and finite")
    counts = [checked_count(n, "steps") for n in steps]
    rounds = checked_count(rounds, "rounds")
    if not counts:
        raise ValueError("steps must hold at least one step count")
    if not methods:
        raise ValueError("methods must name at least one method")
    runs = [(name, method, n) for name, method in methods.items() for n in counts]
    for _, method, n in runs:
        integrate(problem, method, t_final / n, n_steps=1)  # compiles, outside the timing
    times: list[list[float]] = [[] for _ in runs]
    solutions: list[Solution[P] | None] = [None] * len(runs)
    for _ in range(rounds):
        for k, (_, method, n) in enumerate(runs):
            started = time.perf_counter()
            solutions[k] = integrate(problem, method, t_final / n, n_steps=n)
            times[k].append(time.perf_counter() - started)
    rows = []
    for (name, _, n), wall, sol in zip(runs, times, solutions):
        assert sol is not None
        energies = np.array([energy(g, mu) for g, mu in zip(sol.points(), sol.mu)])
        rows.append(WorkPrecisionRow(name, n, t_final / n, statistics.median(wall),
                                     float(np.max(np.abs(energies - energies[0]))),
                                     point_distance(sol.point(len(sol.t) - 1), reference)))
    return WorkPrecision(tuple(rows), t_final)
