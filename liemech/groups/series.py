"""Scalar coefficient functions of the rotation angle, accurate at every angle and traceable.

Each function takes s = θ² and returns a coefficient of the closed forms for SO(3), SE(3) and
SE(2). Below θ = 2 a Taylor series in s is summed (the closed forms lose up to all digits there:
(θ − sin θ)/θ³ at θ = 1e-4 keeps none); above it the closed forms lose at most a few digits
(β_ss: 8e-15 relative at θ = 2).
Subscript ``_s`` means a derivative with respect to s, so d/dθ f = 2θ f_s.

The functions are written with ``jax.numpy`` so that the groups' compiled methods, and their
first and second derivatives, go through them. Each is jitted: a step calls them dozens of times,
and a nested jit is traced once, where the unrolled series would be traced (and differentiated,
and batched) at every call. Both branches are evaluated and one is selected;
each is evaluated at an argument clamped into its own range (the series at s < SERIES_BELOW, the
closed form at s ≥ SERIES_BELOW), so the branch not taken can produce neither NaN nor inf, in
the value or in any derivative (a plain ``where`` would pass 0 · inf = NaN to the gradient).
The selected branch sees s itself, so derivatives are those of the series or the closed form.
"""

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Final, cast

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

SERIES_BELOW: Final = 4.0
"""Series are used for s = θ² < SERIES_BELOW; 20 terms then reach round-off."""

_TERMS: Final = 20


def _coefficients(first_factorial: int) -> tuple[float, ...]:
    """Taylor coefficients of Σ_k (−1)^k s^k / (2k + first_factorial)!, k = 0.._TERMS−1."""
    return tuple((-1) ** k / math.factorial(2 * k + first_factorial) for k in range(_TERMS))


def _derivative(coeffs: tuple[float, ...]) -> tuple[float, ...]:
    return tuple(k * c for k, c in enumerate(coeffs) if k > 0)


def _bernoulli_even(count: int) -> list[Fraction]:
    """|B_2|, |B_4|, …, |B_2count| by the Akiyama–Tanigawa recurrence (exact rationals)."""
    n_max = 2 * count
    a = [Fraction(0)] * (n_max + 1)
    numbers: list[Fraction] = []
    for m in range(n_max + 1):
        a[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        numbers.append(a[0])
    return [abs(numbers[2 * n]) for n in range(1, count + 1)]


_SINC: Final = _coefficients(1)  # sin θ / θ
_ALPHA: Final = _coefficients(2)  # (1 − cos θ) / θ²
_BETA: Final = _coefficients(3)  # (θ − sin θ) / θ³
_SINC_S: Final = _derivative(_SINC)
_ALPHA_S: Final = _derivative(_ALPHA)
_BETA_S: Final = _derivative(_BETA)
_ALPHA_SS: Final = _derivative(_ALPHA_S)
_BETA_SS: Final = _derivative(_BETA_S)
# γ = 1/θ² − cot(θ/2)/(2θ) = Σ_{n≥1} |B_2n| θ^{2n−2} / (2n)!  (radius of convergence θ = 2π)
_GAMMA: Final = tuple(
    float(b / math.factorial(2 * n)) for n, b in enumerate(_bernoulli_even(_TERMS), start=1)
)


def _jitted(coefficient: Callable[[ArrayLike], jax.Array]) -> Callable[[ArrayLike], jax.Array]:
    """``jax.jit(coefficient)``, typed as the function it compiles."""
    return cast(Callable[[ArrayLike], jax.Array], jax.jit(coefficient))


def _series_or_closed(
    coeffs: tuple[float, ...], closed: Callable[[jax.Array, jax.Array], jax.Array], s: ArrayLike
) -> jax.Array:
    """Σ coeffs[k] sᵏ (Horner) for s < SERIES_BELOW, else closed(s, θ) with θ = √s."""
    s = jnp.asarray(s, dtype=float)
    below = s < SERIES_BELOW
    s_series = jnp.where(below, s, 0.0)
    s_closed = jnp.where(below, SERIES_BELOW, s)
    acc = jnp.zeros_like(s)
    for c in reversed(coeffs):
        acc = acc * s_series + c
    return jnp.where(below, acc, closed(s_closed, jnp.sqrt(s_closed)))


@_jitted
def sinc(s: ArrayLike) -> jax.Array:
    """sin θ / θ."""
    return _series_or_closed(_SINC, lambda s, theta: jnp.sin(theta) / theta, s)


@_jitted
def alpha(s: ArrayLike) -> jax.Array:
    """α = (1 − cos θ)/θ² = 2 sin²(θ/2)/θ²."""

    def closed(s: jax.Array, theta: jax.Array) -> jax.Array:
        half = jnp.sin(0.5 * theta)
        return 2.0 * half * half / s

    return _series_or_closed(_ALPHA, closed, s)


@_jitted
def beta(s: ArrayLike) -> jax.Array:
    """β = (θ − sin θ)/θ³."""
    return _series_or_closed(_BETA, lambda s, theta: (theta - jnp.sin(theta)) / (theta * s), s)


@_jitted
def gamma(s: ArrayLike) -> jax.Array:
    """γ = 1/θ² − cot(θ/2)/(2θ), the θ̂² coefficient of (d^L exp_ξ)⁻¹ on SO(3)."""
    return _series_or_closed(_GAMMA, lambda s, theta: 1.0 / s - 1.0 / (2.0 * theta * jnp.tan(0.5 * theta)), s)


@_jitted
def sinc_s(s: ArrayLike) -> jax.Array:
    """d(sin θ/θ)/ds = (θ cos θ − sin θ)/(2θ³)."""
    return _series_or_closed(
        _SINC_S, lambda s, theta: (theta * jnp.cos(theta) - jnp.sin(theta)) / (2.0 * theta * s), s
    )


@_jitted
def alpha_s(s: ArrayLike) -> jax.Array:
    """dα/ds = (θ sin θ / 2 − (1 − cos θ))/θ⁴."""
    return _series_or_closed(
        _ALPHA_S, lambda s, theta: (0.5 * theta * jnp.sin(theta) - (1.0 - jnp.cos(theta))) / (s * s), s
    )


@_jitted
def beta_s(s: ArrayLike) -> jax.Array:
    """dβ/ds = (θ(1 − cos θ) − 3(θ − sin θ))/(2θ⁵)."""

    def closed(s: jax.Array, theta: jax.Array) -> jax.Array:
        return (theta * (1.0 - jnp.cos(theta)) - 3.0 * (theta - jnp.sin(theta))) / (2.0 * theta * s * s)

    return _series_or_closed(_BETA_S, closed, s)


@_jitted
def alpha_ss(s: ArrayLike) -> jax.Array:
    """d²α/ds² = (α_θθ − α_θ/θ)/(4θ²) with α_θ = 2θ α_s."""

    def closed(s: jax.Array, theta: jax.Array) -> jax.Array:
        c, sn = jnp.cos(theta), jnp.sin(theta)
        a_theta = sn / s - 2.0 * (1.0 - c) / (theta * s)
        a_theta_theta = c / s - 4.0 * sn / (theta * s) + 6.0 * (1.0 - c) / (s * s)
        return (a_theta_theta - a_theta / theta) / (4.0 * s)

    return _series_or_closed(_ALPHA_SS, closed, s)


@_jitted
def beta_ss(s: ArrayLike) -> jax.Array:
    """d²β/ds² = (β_θθ − β_θ/θ)/(4θ²) with β_θ = 2θ β_s."""

    def closed(s: jax.Array, theta: jax.Array) -> jax.Array:
        c, sn = jnp.cos(theta), jnp.sin(theta)
        b_theta = -2.0 / (theta * s) - c / (theta * s) + 3.0 * sn / (s * s)
        b_theta_theta = 6.0 / (s * s) + sn / (theta * s) + 6.0 * c / (s * s) - 12.0 * sn / (theta * s * s)
        return (b_theta_theta - b_theta / theta) / (4.0 * s)

    return _series_or_closed(_BETA_SS, closed, s)
