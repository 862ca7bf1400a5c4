"""Solution.at: interpolation that stays on the group, second order in the node spacing, exact
closed forms on a fixed axis (Cayley), scipy's Slerp (exp) and np.interp (Rⁿ), refusals by name."""

from typing import TypeVar

import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

import liemech as lm
from liemech.systems import HeavyTop, RollingDisc
from liemech.testing import estimate_order

P = TypeVar("P")

TOP = HeavyTop()
METHOD = lm.VPRK(lm.lobatto(3))
T_END = 1.6
SPACINGS = (0.2, 0.1, 0.05, 0.025)
FINE = 16  # the reference's step is SPACINGS[-1] / FINE: its nodes hold every mid-point


@pytest.fixture(scope="module")
def reference() -> lm.Solution[lm.Matrix]:
    return lm.integrate(TOP.problem(), METHOD, h=SPACINGS[-1] / FINE, t_final=T_END)


@pytest.fixture(scope="module")
def coarse() -> list[lm.Solution[lm.Matrix]]:
    return [lm.integrate(TOP.problem(), METHOD, h=spacing, t_final=T_END) for spacing in SPACINGS]


def hand_built(t: lm.Vector, g: P, group: lm.LieGroup[P], retraction: str = "cay",
               lam: lm.Matrix | None = None) -> lm.Solution[P]:
    """A solution with the given nodes; η, μ are made-up rows (linear interpolation is checked by
    np.interp elsewhere)."""
    rows = np.outer(t, np.arange(1.0, group.dim + 1)) ** 2
    zeros = np.zeros(t.size)
    return lm.Solution(t, g, rows, 2.0 * rows, lam, lm.SolverStats(zeros, zeros, 0.0),
                       metadata={"retraction": retraction}, group=group)


def rotation_about(axis: lm.Vector, angle: float) -> lm.Matrix:
    return np.asarray(Rotation.from_rotvec(angle * axis).as_matrix(), dtype=np.float64)


def test_the_heavy_top_interpolates_to_rotations(coarse: list[lm.Solution[lm.Matrix]]) -> None:
    sol = coarse[0]
    times = np.linspace(0.0, T_END, 157)
    R = sol.at(times).g
    assert R.shape == (157, 3, 3)
    assert np.max(np.abs(np.einsum("kji,kjl->kil", R, R) - np.eye(3))) <= 1e-14
    assert np.max(np.abs(np.linalg.det(R) - 1.0)) <= 1e-14
    single = sol.at(0.37)
    assert single.g.shape == (3, 3) and single.mu.shape == (3,) and float(single.t) == 0.37
    assert np.max(np.abs(single.g - sol.at(np.array([0.37])).g[0])) <= 1e-15
    # At the nodes, the nodes (θ = 0 gives g_k τ(0) = g_k; at t_end θ = 1 gives g_end to round-off).
    nodes = sol.at(sol.t)
    assert np.max(np.abs(nodes.g - sol.g)) <= 1e-15
    assert np.max(np.abs(nodes.mu - sol.mu)) <= 1e-14


def test_interpolation_error_is_second_order_in_the_node_spacing(
        reference: lm.Solution[lm.Matrix], coarse: list[lm.Solution[lm.Matrix]]) -> None:
    """Mid-points of every coarse run against the run at step Δ_min/16, whose nodes they are."""
    g_errors, mu_errors = [], []
    for spacing, sol in zip(SPACINGS, coarse):
        mid = sol.t[:-1] + 0.5 * spacing
        at_reference = np.rint(mid / (SPACINGS[-1] / FINE)).astype(int)
        assert np.max(np.abs(reference.t[at_reference] - mid)) <= 1e-12
        state = sol.at(mid)
        g_errors.append(np.max(np.abs(state.g - reference.g[at_reference])))
        mu_errors.append(np.max(np.abs(state.mu - reference.mu[at_reference])))
    for errors in (g_errors, mu_errors):
        assert min(errors) > 1e-9  # far above the round-off plateau
        slope = np.polyfit(np.log(SPACINGS), np.log(errors), 1)[0]
        assert 1.8 < slope < 2.3, (errors, slope)


def test_cayley_interpolation_about_a_fixed_axis_is_the_closed_form() -> None:
    """R₀ = I, R₁ = rotation by φ about n: I cay(θ ξ) with ξ = cay⁻¹(R₁) turns by 2 atan(θ tan(φ/2))."""
    axis, angle = np.array([2.0, -1.0, 2.0]) / 3.0, 1.3
    R0 = rotation_about(np.array([0.0, 0.0, 1.0]), 0.4)
    sol = hand_built(np.array([1.0, 3.0]), np.stack([R0, R0 @ rotation_about(axis, angle)]), lm.SO3())
    theta = np.linspace(0.0, 1.0, 11)
    expected = [R0 @ rotation_about(axis, 2.0 * np.arctan(th * np.tan(angle / 2.0))) for th in theta]
    assert np.max(np.abs(sol.at(1.0 + 2.0 * theta).g - np.array(expected))) <= 1e-14


def test_exp_interpolation_is_slerp() -> None:
    rng = np.random.default_rng(7)
    steps = Rotation.from_rotvec(0.4 * rng.standard_normal((5, 3)))
    Rs = [Rotation.identity()]
    for step in steps:
        Rs.append(Rs[-1] * step)
    t = np.array([0.0, 0.3, 0.5, 1.1, 1.2, 2.0])
    key = Rotation.concatenate(Rs)
    sol = hand_built(t, np.asarray(key.as_matrix(), dtype=np.float64), lm.SO3(), retraction="exp")
    times = np.linspace(0.0, 2.0, 41)
    assert np.max(np.abs(sol.at(times).g - Slerp(t, key)(times).as_matrix())) <= 1e-14


def test_vectors_and_product_factors_in_rn_are_linear() -> None:
    rng = np.random.default_rng(3)
    t = np.array([0.0, 0.5, 0.7, 1.5])
    x = rng.standard_normal((4, 2))
    Rs = np.asarray(Rotation.from_rotvec(0.3 * rng.standard_normal((4, 3))).as_matrix(), dtype=np.float64)
    lam = rng.standard_normal((4, 1))
    times = np.linspace(0.0, 1.5, 23)

    def interp(rows: lm.Matrix) -> lm.Matrix:
        return np.stack([np.interp(times, t, column) for column in rows.T], axis=1)

    flat = hand_built(t, x, lm.Rn(2), lam=lam)
    state = flat.at(times)
    for got, rows in ((state.g, x), (state.eta, flat.eta), (state.mu, flat.mu), (state.lam, lam)):
        assert got is not None and np.max(np.abs(got - interp(rows))) <= 1e-14
    product = hand_built(t, (Rs, x), lm.ProductGroup(lm.SO3(), lm.Rn(2)))
    R, y = product.at(times).g
    assert np.max(np.abs(y - interp(x))) <= 1e-14
    on_so3 = hand_built(t, Rs, lm.SO3()).at(times).g
    assert np.max(np.abs(R - on_so3)) <= 1e-15


def test_times_outside_the_run_and_missing_groups_are_refused(coarse: list[lm.Solution[lm.Matrix]]) -> None:
    sol = coarse[0]
    with pytest.raises(ValueError, match=r"t = 1\.7 is outside the stored times \[0\.0, 1\.6"):
        sol.at(1.7)
    with pytest.raises(ValueError, match=r"t = -0\.1 is outside"):
        sol.at(np.array([0.5, -0.1]))
    with pytest.raises(ValueError, match="t must be a finite time"):
        sol.at(np.nan)
    with pytest.raises(ValueError, match="t must be a real array"):
        sol.at("soon")  # type: ignore[arg-type]
    t_end = sol.t[-1] * (1.0 + 1e-15)  # round-off past the end is the end
    assert np.max(np.abs(sol.at(t_end).g - sol.g[-1])) <= 1e-15
    unknown = lm.Solution(sol.t, sol.g, sol.eta, sol.mu, None, sol.stats)
    with pytest.raises(ValueError, match=r"at\(\) needs the solution's group"):
        unknown.at(0.5)


@pytest.mark.slow
def test_between_nodes_the_interpolant_leaves_the_constraints_at_second_order() -> None:
    """What ``Solution.at`` says of constraints: a disc in steady rolling (Lobatto-3) keeps contact
    Φ and rolling φ to round-off at the nodes, and halfway between them violates both by O(Δt²):
    the fitted slope of the largest violation over Δt = 0.05, 0.025, 0.0125 is 2 (±0.2)."""
    problem = RollingDisc().steady(lean=0.25, precession=1.5).problem()
    assert problem.holonomic is not None and problem.nonholonomic is not None
    contact, rolling = problem.holonomic.phi, problem.nonholonomic.phi
    steps, worst_contact, worst_rolling = [0.05, 0.025, 0.0125], [], []
    for h in steps:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(3)), h=h, t_final=1.0)
        assert max(float(np.max(np.abs(contact(g)))) for g in sol.points()) <= 1e-14
        halfway = sol.at(0.5 * (sol.t[:-1] + sol.t[1:]))
        points = list(zip(*halfway.g))
        worst_contact.append(max(float(np.max(np.abs(contact(g)))) for g in points))
        worst_rolling.append(max(float(np.max(np.abs(rolling(g, eta)))) for g, eta in zip(points, halfway.eta)))
    assert abs(estimate_order(steps, worst_contact).slope - 2.0) <= 0.2
    assert abs(estimate_order(steps, worst_rolling).slope - 2.0) <= 0.2


def test_booleans_are_refused_and_no_times_give_an_empty_state() -> None:
    """A bool (or an array of them) is not a time: TypeError naming t, where it was read as 0 or 1; a
    numeric string is refused like any string. An empty array of times gives zero rows of every
    field, each with the shape of one state after it (it raised a numpy error from inside)."""
    t = np.array([0.0, 0.5, 1.0])
    rng = np.random.default_rng(4)
    x, lam = rng.standard_normal((3, 2)), rng.standard_normal((3, 1))
    Rs = np.asarray(Rotation.from_rotvec(0.3 * rng.standard_normal((3, 3))).as_matrix(), dtype=np.float64)
    sol = hand_built(t, (Rs, x), lm.ProductGroup(lm.SO3(), lm.Rn(2)), lam=lam)
    for booleans in (True, np.True_, np.array([True, False]), [False, True]):
        with pytest.raises(TypeError, match=r"t must be a time or an array of times \(real numbers\), got booleans"):
            sol.at(booleans)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="t must be a real array, got str"):
        sol.at("0.5")  # type: ignore[arg-type]
    empties: tuple[object, ...] = (np.array([]), np.zeros(0, dtype=np.int64), [])
    for empty in empties:
        state = sol.at(empty)  # type: ignore[arg-type]
        R, y = state.g
        assert state.t.shape == (0,) and R.shape == (0, 3, 3) and y.shape == (0, 2)
        assert state.eta.shape == (0, 5) and state.mu.shape == (0, 5)
        assert state.lam is not None and state.lam.shape == (0, 1)
    assert sol.at(np.array([], dtype=np.float64)).g[0].dtype == np.float64
