"""liemech.testing.work_precision on the heavy top: the errors it reports are those of the runs
(recomputed here from integrate and the reference of the Euler–Poisson equations by DOP853),
they fall at each method's order, and liemech.plot draws the table."""

from pathlib import Path

import numpy as np
import pytest

import liemech as lm
import liemech.plot
from liemech.systems import HeavyTop
from liemech.testing import estimate_order, point_distance, work_precision

TOP = HeavyTop()
T = 2.0
STEPS = (10, 20, 40)


@pytest.fixture(scope="module")
def table() -> lm.testing.WorkPrecision[lm.Matrix]:
    reference = TOP.reference(np.array([T]))[0][-1]
    methods = {"Lobatto-2": lm.VPRK(lm.lobatto(2)), "Lobatto-3": lm.VPRK(lm.lobatto(3))}
    return work_precision(TOP.problem(), methods, reference, T, STEPS, TOP.energy, rounds=2)


def test_the_table_reports_the_runs_errors(table: lm.testing.WorkPrecision[lm.Matrix]) -> None:
    """Every row's energy error and error at T are those of the same run made here, against
    DOP853 (rtol 1e-13) on the Euler–Poisson equations; wall times are positive."""
    reference = TOP.reference(np.array([T]))[0][-1]
    assert [(row.method, row.steps) for row in table.rows] == [(m, n) for m in ("Lobatto-2", "Lobatto-3")
                                                                for n in STEPS]
    for row, method in zip(table.rows, [lm.VPRK(lm.lobatto(2))] * 3 + [lm.VPRK(lm.lobatto(3))] * 3):
        sol = lm.integrate(TOP.problem(), method, h=T / row.steps, n_steps=row.steps)
        energy = np.array([TOP.energy(R, mu) for R, mu in zip(sol.g, sol.mu)])
        assert row.energy_error == pytest.approx(float(np.max(np.abs(energy - energy[0]))), rel=1e-9)
        assert row.final_error == pytest.approx(point_distance(sol.g[-1], reference), rel=1e-9)
        assert row.h == T / row.steps and row.wall_time > 0.0


def test_errors_fall_at_each_methods_order(table: lm.testing.WorkPrecision[lm.Matrix]) -> None:
    """The error at T against h: fitted slopes 2 (Lobatto-2) and 4 (Lobatto-3), ± 0.4 over three
    step sizes; the cheapest row meeting an energy error is one that meets it."""
    for name, order in (("Lobatto-2", 2.0), ("Lobatto-3", 4.0)):
        rows = table.of(name)
        slope = estimate_order([row.h for row in rows], [row.final_error for row in rows], min_points=3).slope
        assert abs(slope - order) <= 0.4, (name, slope)
    level = sorted(row.energy_error for row in table.rows)[2]
    best = table.cheapest(level)
    assert best is not None and best.energy_error <= level
    assert all(row.wall_time >= best.wall_time for row in table.rows if row.energy_error <= level)
    assert table.cheapest(0.0) is None
    assert "Lobatto-3" in str(table) and "energy error" in str(table)


def test_plot_draws_both_panels(table: lm.testing.WorkPrecision[lm.Matrix], tmp_path: Path) -> None:
    figure = liemech.plot.work_precision(table, title="heavy top")
    left, right = figure.axes
    assert len(left.lines) == len(right.lines) == 2
    assert np.allclose(left.lines[0].get_xdata(), [row.energy_error for row in table.of("Lobatto-2")])
    figure.savefig(tmp_path / "wp.png")
    assert (tmp_path / "wp.png").stat().st_size > 0


def test_bad_arguments_are_refused_by_name() -> None:
    reference = np.eye(3)
    method = {"L2": lm.VPRK(lm.lobatto(2))}
    with pytest.raises(ValueError, match="steps must hold at least one step count"):
        work_precision(TOP.problem(), method, reference, T, (), TOP.energy)
    with pytest.raises(ValueError, match="methods must name at least one method"):
        work_precision(TOP.problem(), {}, reference, T, STEPS, TOP.energy)
    with pytest.raises(ValueError, match="t_final must be positive"):
        work_precision(TOP.problem(), method, reference, -1.0, STEPS, TOP.energy)
