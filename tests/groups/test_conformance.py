"""The public conformance suite on every group × retraction, and its power to catch mistakes."""

import math
import re
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import liemech as lm
from liemech.groups import series
from liemech.groups.so3 import SO3Exp, hat3
from liemech.jax_support import array_method
from liemech.testing import DEFAULT_RADII, ConformanceError, check_group, check_retraction
from tests.groups.groups_under_test import GROUPS

seeds = st.integers(min_value=0, max_value=2**32 - 1)


@pytest.mark.parametrize("group", GROUPS, ids=repr)
@settings(max_examples=5, deadline=None)
@given(seed=seeds)
def test_group_axioms_and_adjoints(group: lm.LieGroup[lm.Vector], seed: int) -> None:
    report = check_group(group, np.random.default_rng(seed), n_samples=2)
    assert report.passed


# A product's retraction is its factors' (each checked with both kinds): one kind checks the wiring.
@pytest.mark.parametrize(("group", "kind"), [(group, kind) for group in GROUPS for kind in lm.RETRACTION_KINDS
                                             if kind == "cay" or not isinstance(group, lm.ProductGroup)],
                         ids=repr)
@settings(max_examples=3, deadline=None)
@given(seed=seeds)
def test_retraction_conformance(group: lm.LieGroup[lm.Vector], kind: lm.RetractionKind, seed: int) -> None:
    report = check_retraction(group.retraction(kind), np.random.default_rng(seed), n_samples=1)
    # The thresholds, read off the report rather than trusted from its defaults.
    assert report.worst("dτ: finite differences") <= 1e-7
    assert report.worst("ddτ: finite differences") <= 5e-9
    assert report.worst("ddτᵀdτᵀm = Kᵀm: finite differences") <= 5e-9
    assert report.worst("τ(−ξ) = τ(ξ)⁻¹") <= 1e-12
    assert report.worst("dτ(−ξ) = Ad(τ(ξ)) dτ(ξ)") <= 1e-12
    assert report.worst("ddτ(0, η)δ = ½[η, δ]") <= 1e-12
    if kind == "exp":
        assert report.worst("exp: dτ = Σ(−ad)^k/(k+1)!") <= 1e-14
        assert report.worst("exp: ddτ = ad-series") <= 1e-14


@pytest.mark.parametrize("kind", lm.RETRACTION_KINDS)
@pytest.mark.parametrize("group", GROUPS, ids=repr)
def test_autodiff_references_agree_with_closed_forms(group: lm.LieGroup[lm.Vector], kind: lm.RetractionKind) -> None:
    """jacfwd of τ and of dτ reproduce dτ and ddτ at ξ = 0 and at every default radius."""
    report = check_retraction(group.retraction(kind), np.random.default_rng(5), n_samples=2)
    for name in ("dτ: autodiff", "ddτ: autodiff"):
        wheres = {c.where.split(",")[0] for c in report.checks if c.name == name}
        assert {"ξ = 0", *(f"‖ξ‖ = {r:.0e}" for r in DEFAULT_RADII)} <= wheres
        assert report.worst(name) <= 1e-12


def test_ddtau_checked_at_every_radius_from_1e_5_to_1e_1() -> None:
    report = check_retraction(lm.SO3().retraction("exp"), n_samples=1)
    radii = {c.where.split(",")[0] for c in report.checks if c.name == "ddτ: finite differences"}
    assert {f"‖ξ‖ = {r:.0e}" for r in (1e-5, 1e-4, 1e-3, 1e-2, 1e-1)} <= radii


def test_so3_exp_near_pi() -> None:
    """Within 1e-6 of the cut locus the tangents stay exact and log recovers ξ."""
    report = check_retraction(lm.SO3().retraction("exp"), radii=(math.pi - 1e-6, math.pi - 1e-7))
    assert report.passed


class NaiveSO3Exp(SO3Exp):
    """ddτ written with the printed closed forms α′/θ, β′/θ: no series, so digits are lost.

    Written with jax.numpy like every retraction operation (the default ddtau_tensor traces it);
    at ξ = 0 the closed forms are 0/0 and the limit ½η̂ is selected.
    """

    @array_method
    def ddtau(self, xi: lm.VectorLike, eta: lm.VectorLike) -> jax.Array:
        x = jnp.asarray(xi)
        t = jnp.linalg.norm(x)
        a, b = (1 - jnp.cos(t)) / t**2, (t - jnp.sin(t)) / t**3
        da = (t * jnp.sin(t) - 2 * (1 - jnp.cos(t))) / t**3
        db = (t * (1 - jnp.cos(t)) - 3 * (t - jnp.sin(t))) / t**4
        X = hat3(x)
        M = (-da / t * jnp.outer(X @ eta, x) + a * hat3(eta) + db / t * jnp.outer(X @ X @ eta, x)
             - b * (hat3(X @ eta) + X @ hat3(eta)))
        return jnp.where(t == 0.0, 0.5 * hat3(eta), jnp.linalg.solve(self.dtau(xi), M))


def test_suite_rejects_naive_closed_forms_at_small_angles() -> None:
    with pytest.raises(ConformanceError, match="ddτ: finite differences"):
        check_retraction(NaiveSO3Exp(lm.SO3(), "exp"), radii=(1e-5, 1e-4, 1e-3))


def test_autodiff_check_rejects_naive_closed_forms_at_small_angles() -> None:
    """Also at 1e-4 and 1e-3, where the lost digits (~1e-9, ~1e-11) pass finite differences."""
    report = check_retraction(NaiveSO3Exp(lm.SO3(), "exp"), radii=(1e-5, 1e-4, 1e-3), raise_on_failure=False)
    failed = {c.where.split(",")[0] for c in report.failures if c.name == "ddτ: autodiff"}
    assert failed == {"‖ξ‖ = 1e-05", "‖ξ‖ = 1e-04", "‖ξ‖ = 1e-03"}


class WrongSignSO3Exp(SO3Exp):
    """dτ with the right-trivialised sign: d^R exp instead of d^L exp."""

    def dtau(self, xi: lm.VectorLike) -> lm.Matrix:
        return super().dtau(-xi)


def test_suite_rejects_the_other_trivialisation() -> None:
    with pytest.raises(ConformanceError, match="dτ: finite differences") as info:
        check_retraction(WrongSignSO3Exp(lm.SO3(), "exp"), radii=(1e-2,))
    assert "FAIL" in str(info.value)


class RightPerturbedSO3(lm.SO3):
    """perturbed with the point moved on the other side: (I + ẑ) g instead of g (I + ẑ)."""

    @array_method
    def perturbed(self, g: lm.Matrix, z: lm.VectorLike) -> jax.Array:
        return jnp.asarray(g) + hat3(z) @ jnp.asarray(g)


def test_suite_rejects_a_perturbation_on_the_other_side() -> None:
    """The trivialised derivatives differentiate along ``perturbed``, so the group suite checks it."""
    with pytest.raises(ConformanceError, match=r"perturbed\(g, ξ\) = g·\(e \+ hat\(ξ\)\)"):
        check_group(RightPerturbedSO3(), np.random.default_rng(1), n_samples=1)


def test_series_branches_agree_with_closed_forms_at_the_switch() -> None:
    """Both branches of every coefficient agree where they meet (s = θ² = 1)."""
    below, above = np.nextafter(series.SERIES_BELOW, 0.0), series.SERIES_BELOW
    for f in (series.sinc, series.alpha, series.beta, series.gamma, series.sinc_s,
              series.alpha_s, series.beta_s, series.alpha_ss, series.beta_ss):
        assert abs(f(below) - f(above)) <= 1e-13 * abs(f(above)), f.__name__


@pytest.mark.parametrize("s", [0.0, 1e-8, 0.3, 2.0, np.nextafter(series.SERIES_BELOW, 0.0), series.SERIES_BELOW, 9.0, 30.0])
def test_stacked_exp_coefficients_and_their_derivative_rule_equal_autodiff_of_the_single_ones(s: float) -> None:
    """exp_coefficients gives the six values of the single functions, and its hand-written tangent
    (the derivative series and closed forms) equals forward-mode autodiff of the single functions'
    own sums, to first and second order."""
    singles = (series.sinc, series.alpha, series.beta, series.gamma, series.alpha_s, series.beta_s)
    x = jnp.asarray(s)
    stacked = series.exp_coefficients(x)
    first = jax.jvp(series.exp_coefficients, (x,), (jnp.asarray(1.0),))[1]
    second = jax.jvp(lambda y: jax.jvp(series.exp_coefficients, (y,), (jnp.asarray(1.0),))[1], (x,),
                     (jnp.asarray(1.0),))[1]
    for k, single in enumerate(singles):
        d1 = jax.jvp(single, (x,), (jnp.asarray(1.0),))[1]
        d2 = jax.jvp(lambda y: jax.jvp(single, (y,), (jnp.asarray(1.0),))[1], (x,), (jnp.asarray(1.0),))[1]
        assert abs(float(stacked[k]) - float(single(x))) <= 1e-15 * abs(float(single(x))), single.__name__
        assert abs(float(first[k]) - float(d1)) <= 1e-13 * abs(float(d1)), single.__name__
        assert abs(float(second[k]) - float(d2)) <= 1e-11 * abs(float(d2)), single.__name__


@pytest.mark.parametrize("angle", [1e-3, 1.0, 2.5])
@pytest.mark.parametrize("group", [lm.SO3(), lm.SE3()], ids=repr)
def test_exp_applies_its_tangents_to_vectors_as_the_matrices_do(group: lm.LieGroup[lm.Matrix], angle: float) -> None:
    """dτ η, dτᵀμ, ddτ(ξ, η)ᵀμ and ddτ(ξ, η)ᵀdτ(ξ)ᵀμ in vector form equal the matrices built from
    dexp, dexp⁻¹, K and L on either branch of the coefficients (a rotation by 2.5 is above the
    series' switch), and so does SE(3)'s Ad*."""
    rng = np.random.default_rng(11)
    tau = group.retraction("exp")
    xi, eta, mu = (rng.normal(size=group.dim) for _ in range(3))
    xi[-3:] *= angle / np.linalg.norm(xi[-3:])
    np.testing.assert_allclose(tau.dtau_times(xi, eta), tau.dtau(xi) @ eta, rtol=0, atol=1e-15 * group.dim)
    np.testing.assert_allclose(tau.dtau_star(xi, mu), tau.dtau(xi).T @ mu, rtol=0, atol=1e-15 * group.dim)
    np.testing.assert_allclose(tau.ddtau_star(xi, eta, mu), tau.ddtau(xi, eta).T @ mu, rtol=0, atol=1e-15 * group.dim)
    np.testing.assert_allclose(tau.dtau_derivative_star(xi, eta, mu), (tau.dtau(xi) @ tau.ddtau(xi, eta)).T @ mu,
                               rtol=0, atol=1e-14 * group.dim)
    g = group.random_point(rng)
    np.testing.assert_allclose(group.Ad_star(g, mu), group.Ad(g).T @ mu, rtol=0, atol=1e-15 * group.dim)


def test_report_lists_every_check() -> None:
    report = check_retraction(lm.SE2().retraction("cay"), radii=(1e-3,), n_samples=1)
    text = str(report)
    assert text.startswith("conformance of cay on SE2()")
    assert len(report.checks) == len(text.splitlines()) - 1


def test_groups_too_large_to_check_are_refused_at_once() -> None:
    """Rn(3000) ran for over 300 s and 1.1 GB (dim×dim Jacobians by finite differences, a dim³
    ddτ_tensor): check_group and check_retraction refuse a dimension above MAX_DIM with a
    ValueError naming the group and the limit, before any work; PowerGroup(SO3(), 34) (dim 102) too."""
    from liemech.testing.conformance import MAX_DIM

    assert MAX_DIM == 100
    started = time.perf_counter()
    for group in (lm.Rn(3000), lm.PowerGroup(lm.SO3(), 34)):
        with pytest.raises(ValueError, match=rf"group {re.escape(repr(group))} has dimension {group.dim}, above "
                                             r"the 100 that the conformance checks handle"):
            check_group(group)
        with pytest.raises(ValueError, match=rf"the group {re.escape(repr(group))} of tau has dimension"):
            check_retraction(group.retraction("cay"))
    assert time.perf_counter() - started < 1.0
