"""liemech ↔ geomstats: exp, log, compose and inverse agree; conversions round-trip exactly; bad
input raises ValueError naming the argument. Skipped when the extra liemech[geomstats] is missing."""

import importlib
import math
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import liemech as lm

pytest.importorskip("liemech.interop.geomstats", exc_type=ImportError)

from geomstats.geometry.lie_group import MatrixLieGroup  # noqa: E402

from liemech.interop.geomstats import (  # noqa: E402
    SupportedGroup,
    algebra_from_geomstats,
    algebra_to_geomstats,
    point_from_geomstats,
    point_to_geomstats,
    to_geomstats_space,
)

GROUPS: list[SupportedGroup] = [lm.SO3(), lm.SE2(), lm.SE3()]
SPACES: dict[SupportedGroup, MatrixLieGroup] = {G: to_geomstats_space(G) for G in GROUPS}
ROTATION_SLICE = {lm.SO3(): slice(0, 3), lm.SE2(): slice(2, 3), lm.SE3(): slice(3, 6)}
GEOMSTATS_ORDER = {lm.SO3(): [0, 1, 2], lm.SE2(): [2, 0, 1], lm.SE3(): [3, 4, 5, 0, 1, 2]}
"""geomstats' basis_representation lists (ω, v) where liemech lists (v, ω)."""

EXP_TOL = 1e-12
LOG_TOL = 1e-12  # relative to max(1, ‖ξ‖_max)
COMPOSE_TOL = 1e-15

raw_vectors = arrays(np.float64, 6, elements=st.floats(-3.0, 3.0, allow_subnormal=False))
seeds = st.integers(min_value=0, max_value=2**32 - 1)
groups = pytest.mark.parametrize("group", GROUPS, ids=repr)


def max_diff(a: lm.Matrix, b: lm.Matrix) -> float:
    return float(np.max(np.abs(a - b)))


def xi_with_angle(group: SupportedGroup, angle: float) -> lm.Vector:
    """ξ with translation part (1, 2, 3)[:n] and rotation part `angle` about a fixed axis."""
    rot = ROTATION_SLICE[group]
    n_v = group.dim - (rot.stop - rot.start)
    axis = np.array([2.0, -1.0, 2.0])[: rot.stop - rot.start]
    xi = np.zeros(group.dim)
    xi[:n_v] = [1.0, 2.0, 3.0][:n_v]
    xi[rot] = angle * axis / np.linalg.norm(axis)
    return xi


def rotation_by(group: SupportedGroup, angle: float) -> lm.Matrix:
    return group.retraction("exp").tau(xi_with_angle(group, angle))


# ---- the spaces ------------------------------------------------------------------------------


@groups
def test_space_matches_group(group: SupportedGroup) -> None:
    space = to_geomstats_space(group)
    assert isinstance(space, MatrixLieGroup)
    assert space.dim == group.dim
    assert space.representation_dim == group.identity().shape[0]
    assert np.array_equal(point_from_geomstats(group, space.identity), group.identity())


@pytest.mark.parametrize(
    "group", [lm.SO2(), lm.Rn(3), lm.ProductGroup(lm.SO3(), lm.Rn(2))], ids=repr
)
def test_other_groups_raise_type_error(group: object) -> None:
    with pytest.raises(TypeError, match="group must be liemech's SO3"):
        to_geomstats_space(group)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="group must be"):
        point_to_geomstats(group, np.eye(2))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="group must be"):
        algebra_from_geomstats(group, np.zeros((2, 2)))  # type: ignore[arg-type]


# ---- exp, log, compose, inverse agree ------------------------------------------------------


@groups
@settings(max_examples=60, deadline=None)
@given(raw=raw_vectors)
def test_exp_agrees(group: SupportedGroup, raw: lm.Vector) -> None:
    xi = raw[: group.dim]
    ours = group.retraction("exp").tau(xi)
    theirs = point_from_geomstats(group, SPACES[group].exp(algebra_to_geomstats(group, xi)))
    assert max_diff(ours, theirs) <= EXP_TOL


@groups
@pytest.mark.parametrize("angle", [0.0, 1e-8, 1e-4, 1.0, math.pi - 1e-6, math.pi, 10.0])
def test_exp_agrees_at_special_angles(group: SupportedGroup, angle: float) -> None:
    xi = xi_with_angle(group, angle)
    theirs = point_from_geomstats(group, SPACES[group].exp(algebra_to_geomstats(group, xi)))
    assert max_diff(group.retraction("exp").tau(xi), theirs) <= EXP_TOL


@groups
@settings(max_examples=60, deadline=None)
@given(raw=raw_vectors, angle=st.floats(0.0, math.pi - 0.01))
def test_log_agrees_away_from_the_cut_locus(
    group: SupportedGroup, raw: lm.Vector, angle: float
) -> None:
    xi = raw[: group.dim].copy()
    rot = ROTATION_SLICE[group]
    norm = float(np.linalg.norm(xi[rot]))
    xi[rot] = angle * xi[rot] / norm if norm > 1e-3 else 0.0
    g = group.retraction("exp").tau(xi)
    ours = group.retraction("exp").tau_inv(g)
    theirs = algebra_from_geomstats(group, SPACES[group].log(point_to_geomstats(group, g)))
    assert max_diff(ours, theirs) <= LOG_TOL * max(1.0, float(np.max(np.abs(xi))))


@groups
def test_log_at_the_cut_locus_is_refused_on_both_sides(group: SupportedGroup) -> None:
    """A rotation by π has no unique logarithm. liemech raises; geomstats raises on SO(3) and
    returns a complex matrix on SE(n), which algebra_from_geomstats refuses."""
    g = rotation_by(group, math.pi)
    with pytest.raises(ValueError, match="cut locus"):
        group.retraction("exp").tau_inv(g)
    space = SPACES[group]
    if isinstance(group, lm.SO3):
        with pytest.raises(ValueError, match="antipodal"):
            space.log(point_to_geomstats(group, g))
    else:
        X = space.log(point_to_geomstats(group, g))
        assert np.iscomplexobj(X)
        with pytest.raises(ValueError, match="X must be real"):
            algebra_from_geomstats(group, X)


@groups
@settings(max_examples=30, deadline=None)
@given(seed=seeds)
def test_compose_and_inverse_agree(group: SupportedGroup, seed: int) -> None:
    rng = np.random.default_rng(seed)
    g, h = group.random_point(rng), group.random_point(rng)
    space = SPACES[group]
    gs_g, gs_h = point_to_geomstats(group, g), point_to_geomstats(group, h)
    composed = point_from_geomstats(group, space.compose(gs_g, gs_h))
    assert max_diff(composed, group.compose(g, h)) <= COMPOSE_TOL
    inverted = point_from_geomstats(group, space.inverse(gs_g))
    assert max_diff(inverted, group.inverse(g)) <= COMPOSE_TOL


# ---- exact round trips and the shared representation ---------------------------------------


@groups
@settings(max_examples=30, deadline=None)
@given(seed=seeds, raw=raw_vectors)
def test_round_trips_are_exact(group: SupportedGroup, seed: int, raw: lm.Vector) -> None:
    space = SPACES[group]
    g = group.random_point(np.random.default_rng(seed))
    m = point_to_geomstats(group, g)
    assert bool(space.belongs(m))
    assert np.array_equal(point_from_geomstats(group, m), g)
    assert np.array_equal(point_to_geomstats(group, point_from_geomstats(group, m)), m)

    xi = raw[: group.dim]
    X = algebra_to_geomstats(group, xi)
    assert bool(space.lie_algebra.belongs(X))
    assert np.array_equal(algebra_from_geomstats(group, X), xi)
    # A matrix built by geomstats from its own coordinates converts back exactly too.
    X_gs = space.lie_algebra.matrix_representation(xi[GEOMSTATS_ORDER[group]])
    assert np.array_equal(algebra_from_geomstats(group, X_gs), xi)
    assert np.array_equal(algebra_to_geomstats(group, algebra_from_geomstats(group, X_gs)), X_gs)


@groups
def test_geomstats_coordinates_list_rotation_first(group: SupportedGroup) -> None:
    xi = np.arange(1.0, group.dim + 1.0)
    coordinates = SPACES[group].lie_algebra.basis_representation(algebra_to_geomstats(group, xi))
    assert np.array_equal(coordinates, xi[GEOMSTATS_ORDER[group]])


@pytest.mark.parametrize("group", [lm.SE2(), lm.SE3()], ids=repr)
def test_last_row_round_off_from_expm_is_snapped(group: SupportedGroup) -> None:
    g = rotation_by(group, 1.0)
    m = point_to_geomstats(group, g)
    m[-1, 0] = 1.5e-15
    out = point_from_geomstats(group, m)
    assert np.array_equal(out[-1], np.eye(out.shape[0])[-1])
    assert m[-1, 0] == 1.5e-15  # the input is not modified


# ---- bad input -------------------------------------------------------------------------------


@groups
def test_bad_points_name_the_argument(group: SupportedGroup) -> None:
    n = group.identity().shape[0]
    stretched = group.identity()
    stretched[0, 0] = 1.01
    with pytest.raises(ValueError, match="m must be a rotation"):
        point_from_geomstats(group, stretched)
    with pytest.raises(ValueError, match="g must be a rotation"):
        point_to_geomstats(group, stretched)
    reflected = group.identity()
    reflected[0, 0] = -1.0
    with pytest.raises(ValueError, match="det = -1"):
        point_from_geomstats(group, reflected)
    with pytest.raises(ValueError, match=rf"m must have shape \({n}, {n}\), got \(5, 5\)"):
        point_from_geomstats(group, np.eye(5))
    with pytest.raises(ValueError, match=rf"g must have shape \({n}, {n}\), got \({n},\)"):
        point_to_geomstats(group, np.ones(n))
    with pytest.raises(ValueError, match="m must be finite"):
        point_from_geomstats(group, np.full((n, n), np.nan))
    with pytest.raises(ValueError, match="m must be a real array"):
        point_from_geomstats(group, "identity")
    if not isinstance(group, lm.SO3):
        far = group.identity()
        far[-1, 0] = 1e-3
        with pytest.raises(ValueError, match="m must be homogeneous"):
            point_from_geomstats(group, far)


@groups
def test_bad_algebra_elements_name_the_argument(group: SupportedGroup) -> None:
    n = group.identity().shape[0]
    with pytest.raises(ValueError, match=rf"xi must have shape \({group.dim},\)"):
        algebra_to_geomstats(group, np.zeros(group.dim + 1))
    with pytest.raises(ValueError, match="xi must be finite"):
        algebra_to_geomstats(group, np.full(group.dim, np.inf))
    with pytest.raises(ValueError, match=rf"X must have shape \({n}, {n}\)"):
        algebra_from_geomstats(group, np.zeros((n + 1, n + 1)))
    symmetric = np.zeros((n, n))
    symmetric[0, 1] = symmetric[1, 0] = 0.5
    with pytest.raises(ValueError, match="X must be in the Lie algebra: .* not skew-symmetric"):
        algebra_from_geomstats(group, symmetric)
    complex_X = algebra_to_geomstats(group, np.ones(group.dim)) + 1e-3j
    with pytest.raises(ValueError, match="X must be real"):
        algebra_from_geomstats(group, complex_X)
    with pytest.raises(ValueError, match="X must be a real array"):
        algebra_from_geomstats(group, [[1.0, 2.0], [3.0]])
    if not isinstance(group, lm.SO3):
        bottom = np.zeros((n, n))
        bottom[-1, -1] = 1.0
        with pytest.raises(ValueError, match="X must be in the Lie algebra: its last row"):
            algebra_from_geomstats(group, bottom)


# ---- import behaviour ------------------------------------------------------------------------


def test_missing_geomstats_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "geomstats" or m.startswith("geomstats.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "liemech.interop.geomstats")
    hint = r"needs geomstats; install it with: pip install 'liemech\[geomstats\]'"
    with pytest.raises(ImportError, match=hint):
        importlib.import_module("liemech.interop.geomstats")


def test_broken_geomstats_names_the_numpy_pin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "geomstats.geometry.lie_group", types.ModuleType("broken"))
    monkeypatch.delitem(sys.modules, "liemech.interop.geomstats")
    with pytest.raises(ImportError, match=r"failed to import .* numpy < 2\.4"):
        importlib.import_module("liemech.interop.geomstats")


def test_import_leaves_the_root_logger_alone_and_survives_warnings_as_errors() -> None:
    """geomstats' import calls logging.basicConfig and sets the root level to INFO, and emits an
    ImportWarning from its backend importer; ours undoes the first and silences the second."""
    code = (
        "import logging; root = logging.getLogger(); before = (root.level, list(root.handlers)); "
        "import liemech.interop.geomstats, geomstats; "
        "assert (root.level, root.handlers) == before, (root.level, root.handlers)"
    )
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo), "GEOMSTATS_BACKEND": "numpy"}
    subprocess.run([sys.executable, "-W", "error", "-c", code], check=True, cwd=repo, env=env, timeout=60)
