"""Each group against independent truths: scipy's expm, the generic matrix Cayley formulas,
closed-form values, and the cut locus and pole errors."""

import math

import numpy as np
import pytest
import scipy.linalg

import liemech as lm
from liemech.testing import point_distance

MATRIX_GROUPS: list[lm.LieGroup[lm.Matrix]] = [lm.SO2(), lm.SO3(), lm.SE2(), lm.SE3()]


@pytest.mark.parametrize("group", MATRIX_GROUPS, ids=repr)
@pytest.mark.parametrize("radius", [0.0, 1e-8, 1e-4, 0.3, 1.0, 2.5])
def test_exp_is_the_matrix_exponential(group: lm.LieGroup[lm.Matrix], radius: float) -> None:
    rng = np.random.default_rng(1)
    xi = rng.normal(size=group.dim)
    xi *= radius / np.linalg.norm(xi)
    expected = scipy.linalg.expm(group.hat(xi))
    assert np.max(np.abs(group.retraction("exp").tau(xi) - expected)) <= 1e-14


@pytest.mark.parametrize("group", [lm.SO2(), lm.SO3(), lm.SE2(), lm.SE3()], ids=repr)
def test_closed_form_cayley_equals_generic_matrix_formulas(group: lm.LieGroup[lm.Matrix]) -> None:
    """The closed forms against ``MatrixCayley``'s matrix inverses, and (where a retraction has
    them) its vector forms against the closed matrices."""
    closed, generic = group.retraction("cay"), lm.MatrixCayley(group)
    rng = np.random.default_rng(2)
    for radius in (1e-6, 0.5, 3.0):
        xi = rng.normal(size=group.dim)
        xi *= radius / np.linalg.norm(xi)
        eta = rng.normal(size=group.dim)
        g = closed.tau(xi)
        assert np.max(np.abs(g - generic.tau(xi))) <= 1e-14
        assert np.max(np.abs(closed.tau_inv(g) - generic.tau_inv(g))) <= 1e-12 * max(1.0, radius)
        assert np.max(np.abs(closed.dtau(xi) - generic.dtau(xi))) <= 1e-14
        assert np.max(np.abs(closed.dtau_inv(xi) - generic.dtau_inv(xi))) <= 1e-13 * max(1.0, radius**2)
        assert np.max(np.abs(closed.ddtau(xi, eta) - generic.ddtau(xi, eta))) <= 1e-13
        mu = rng.normal(size=group.dim)
        assert np.max(np.abs(closed.dtau_times(xi, eta) - generic.dtau(xi) @ eta)) <= 1e-14 * max(1.0, radius)
        assert np.max(np.abs(closed.dtau_star(xi, mu) - generic.dtau(xi).T @ mu)) <= 1e-14 * max(1.0, radius)
        assert np.max(np.abs(closed.ddtau_star(xi, eta, mu) - generic.ddtau(xi, eta).T @ mu)) <= 1e-13


def test_so3_closed_form_values() -> None:
    """Rotation by π/2 about z: exp gives the quarter turn; cay(2 tan(θ/2) z) does too."""
    quarter = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    G = lm.SO3()
    assert np.max(np.abs(G.retraction("exp").tau(np.array([0, 0, math.pi / 2])) - quarter)) <= 1e-15
    assert np.max(np.abs(G.retraction("cay").tau(np.array([0, 0, 2.0])) - quarter)) <= 1e-15
    # d^L exp is the right Jacobian: at ξ = (0, 0, θ) it is [[sinθ/θ, (1−cosθ)/θ, 0], [−(1−cosθ)/θ, sinθ/θ, 0], [0, 0, 1]].
    t = 0.7
    expected = np.array([[math.sin(t) / t, (1 - math.cos(t)) / t, 0], [-(1 - math.cos(t)) / t, math.sin(t) / t, 0], [0, 0, 1]])
    assert np.max(np.abs(G.retraction("exp").dtau(np.array([0, 0, t])) - expected)) <= 1e-15


@pytest.mark.parametrize("delta", [1e-6, 1e-7, 1e-8])
def test_so3_log_near_pi(delta: float) -> None:
    """log(exp(ξ)) = ξ within 1e-6 of the cut locus; the condition number there is ~1/δ."""
    rng = np.random.default_rng(3)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    xi = (math.pi - delta) * axis
    R = scipy.linalg.expm(lm.SO3().hat(xi))
    assert np.max(np.abs(lm.SO3().retraction("exp").tau_inv(R) - xi)) <= 1e-15 / delta


def test_se3_exp_log_round_trip_near_pi() -> None:
    xi = np.array([0.3, -1.0, 2.0, 0.0, math.pi - 1e-6, 0.0])
    tau = lm.SE3().retraction("exp")
    assert np.max(np.abs(tau.tau_inv(tau.tau(xi)) - xi)) <= 1e-8


@pytest.mark.parametrize(
    "group, rotation_by_pi",
    [
        (lm.SO2(), np.diag([-1.0, -1.0])),
        (lm.SO3(), np.diag([-1.0, -1.0, 1.0])),
        (lm.SE2(), np.diag([-1.0, -1.0, 1.0])),
        (lm.SE3(), np.diag([1.0, -1.0, -1.0, 1.0])),
    ],
    ids=repr,
)
def test_cut_locus_and_cayley_pole_raise(group: lm.LieGroup[lm.Matrix], rotation_by_pi: lm.Matrix) -> None:
    with pytest.raises(ValueError, match="cut locus"):
        group.retraction("exp").tau_inv(rotation_by_pi)
    with pytest.raises(ValueError, match="cay⁻¹ is undefined"):
        group.retraction("cay").tau_inv(rotation_by_pi)


def test_product_is_blockwise() -> None:
    G = lm.ProductGroup(lm.SO3(), lm.Rn(2), lm.SE2())
    assert G.dim == 8
    rng = np.random.default_rng(4)
    g, h = G.random_point(rng), G.random_point(rng)
    xi, eta = rng.normal(size=8), rng.normal(size=8)
    gh = G.compose(g, h)
    assert point_distance(gh[0], np.asarray(g[0]) @ np.asarray(h[0])) == 0.0
    assert point_distance(gh[1], np.asarray(g[1]) + np.asarray(h[1])) == 0.0
    tau = G.retraction("exp")
    parts = [f.retraction("exp") for f in G.factors]
    expected = scipy.linalg.block_diag(*(r.ddtau(x, e) for r, x, e in zip(parts, G.split(xi), G.split(eta))))
    assert np.array_equal(tau.ddtau(xi, eta), expected)
    assert point_distance(tau.tau(xi), tuple(r.tau(x) for r, x in zip(parts, G.split(xi)))) == 0.0


def test_unknown_retraction_kind() -> None:
    with pytest.raises(ValueError, match="kind must be one of"):
        lm.SO3().retraction("quaternion")  # type: ignore[arg-type]
