"""The rotation-angle coefficients below θ = 2 (``liemech.groups.series``): economised polynomials
of their Taylor series, against the exact Taylor sums in rational arithmetic, from coefficients
built here: sin θ/θ = Σ(−s)ᵏ/(2k+1)!, (1 − cos θ)/θ² = Σ(−s)ᵏ/(2k+2)!, (θ − sin θ)/θ³ =
Σ(−s)ᵏ/(2k+3)!, γ = 1/θ² − cot(θ/2)/(2θ) = Σ_{n≥1} |B_2n| s^{n−1}/(2n)! with the Bernoulli numbers
from Σ_{j≤m} C(m+1, j) B_j = 0 (the library uses the Akiyama–Tanigawa recurrence)."""

import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from liemech.groups import series

SINGLES = ("sinc", "alpha", "beta", "gamma", "sinc_s", "alpha_s", "beta_s", "alpha_ss", "beta_ss")
POINTS = np.linspace(0.0, np.nextafter(series.SERIES_BELOW, 0.0), 81)


TERMS = 30


def bernoulli(count: int) -> list[Fraction]:
    """B_0 … B_{count−1} from B_0 = 1 and Σ_{j≤m} C(m+1, j) B_j = 0."""
    numbers = [Fraction(1)]
    for m in range(1, count):
        numbers.append(-sum((math.comb(m + 1, j) * numbers[j] for j in range(m)), Fraction(0)) / (m + 1))
    return numbers


def derivative(coeffs: list[Fraction]) -> list[Fraction]:
    return [k * c for k, c in enumerate(coeffs) if k > 0]


BERNOULLI = bernoulli(2 * TERMS + 2)
TAYLOR = {name: [Fraction((-1) ** k, math.factorial(2 * k + first)) for k in range(TERMS)]
          for name, first in (("sinc", 1), ("alpha", 2), ("beta", 3))}
TAYLOR["gamma"] = [abs(BERNOULLI[2 * n]) / math.factorial(2 * n) for n in range(1, TERMS + 1)]
for name in ("sinc", "alpha", "beta", "gamma"):
    TAYLOR[f"{name}_s"] = derivative(TAYLOR[name])
for name in ("alpha", "beta"):
    TAYLOR[f"{name}_ss"] = derivative(TAYLOR[f"{name}_s"])


def taylor_sum(name: str, s: float) -> Fraction:
    """Σ_k c_k sᵏ over TERMS exact Taylor coefficients (the rest of the series is below 1e-28 of
    each sum on [0, 4])."""
    return sum((c * Fraction(s) ** k for k, c in enumerate(TAYLOR[name])), Fraction(0))


@pytest.mark.parametrize("name", [*SINGLES, "gamma_s"])
def test_the_chebyshev_terms_cut_are_below_round_off(name: str) -> None:
    """Σ_{j ≥ SERIES_TERMS} |b_j| < 2⁻⁵⁶ min |f| on [0, 4], which bounds what economisation changes."""
    b = series.chebyshev_coefficients(TAYLOR[name])
    smallest = min(abs(taylor_sum(name, float(s))) for s in POINTS)
    assert sum(abs(x) for x in b[series.SERIES_TERMS:]) < smallest / 2**56


@pytest.mark.parametrize("name", SINGLES)
def test_each_coefficient_is_its_taylor_sum_to_round_off(name: str) -> None:
    function = getattr(series, name)
    errors = [abs(Fraction(float(function(s))) - taylor_sum(name, float(s))) / abs(taylor_sum(name, float(s)))
              for s in POINTS]
    assert float(max(errors)) <= 2e-15


def test_the_stacked_coefficients_and_their_derivatives_are_the_taylor_sums() -> None:
    """exp_coefficients (six at once) and its derivative in s (the economised derivative series)."""
    names = ("sinc", "alpha", "beta", "gamma", "alpha_s", "beta_s")
    for s in POINTS[::8]:
        values, slopes = jax.jvp(series.exp_coefficients, (jnp.asarray(s),), (jnp.asarray(1.0),))
        for name, value, slope in zip(names, values, slopes, strict=True):
            derivative = f"{name}s" if name.endswith("_s") else f"{name}_s"
            for got, exact in ((value, taylor_sum(name, float(s))), (slope, taylor_sum(derivative, float(s)))):
                assert abs(Fraction(float(got)) - exact) <= 2e-15 * abs(exact)


@pytest.mark.parametrize("name", SINGLES)
def test_one_angle_branches_as_a_batch_selects(name: str) -> None:
    """For one s the closed forms sit in a branch (``lax.cond``), for a batch of them both are
    evaluated and selected: at 41 angles from 0 to θ ≈ 4.5, across θ = 2 (s = 4), the two agree in
    the value and in the derivative in s, to 1e-15 relative."""
    function = getattr(series, name)
    points = np.linspace(0.0, 20.0, 41)
    batched = np.asarray(function(points))
    slopes = np.asarray(jax.vmap(jax.grad(function))(jnp.asarray(points)))
    for s, value, slope in zip(points, batched, slopes, strict=True):
        assert abs(float(function(s)) - value) <= 1e-15 * abs(value)
        assert abs(float(jax.grad(function)(s)) - slope) <= 1e-15 * max(abs(slope), 1e-300)


@pytest.mark.parametrize("points", [np.linspace(0.0, 3.9, 5), np.linspace(0.0, 20.0, 5), np.linspace(4.0, 20.0, 5)],
                         ids=("all below θ = 2", "across θ = 2", "all above"))
def test_a_batch_of_angles_branches_as_a_whole_and_equals_one_angle_at_a_time(points: np.ndarray) -> None:
    """Under vmap (a VPRK step's stages) exp_coefficients skips the closed forms when every angle of
    the batch is below θ = 2, and evaluates both and selects otherwise; either way the six values,
    their first and second derivatives in s (forward mode) and their derivatives by reverse mode
    equal those of one angle at a time, which branches on its own angle: exactly, except the
    second derivatives above θ = 2, where vectorised and scalar sines may differ in the last bit
    and the closed forms' cancellation (β_ss's: a few digits) amplifies it to ~4e-15."""

    def values(s: jax.Array) -> jax.Array:
        return jnp.asarray(series.exp_coefficients(s))

    def first(s: jax.Array) -> jax.Array:
        return jnp.asarray(jax.jvp(values, (s,), (jnp.asarray(1.0),))[1])

    def second(s: jax.Array) -> jax.Array:
        return jnp.asarray(jax.jvp(first, (s,), (jnp.asarray(1.0),))[1])

    batch = jnp.asarray(points)
    for function, rtol in ((values, 0.0), (first, 0.0), (second, 1e-14), (jax.jacrev(values), 0.0)):
        batched = np.asarray(jax.vmap(function)(batch))
        one_at_a_time = np.array([np.asarray(function(jnp.asarray(s))) for s in points])
        np.testing.assert_allclose(batched, one_at_a_time, rtol=rtol, atol=0)
    np.testing.assert_array_equal(np.asarray(jax.vmap(jax.jacrev(values))(batch)), np.asarray(jax.vmap(first)(batch)))
