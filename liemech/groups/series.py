"""Scalar coefficient functions of the rotation angle, accurate at every angle and traceable.

Each function takes s = θ² and returns a coefficient of the closed forms for SO(3), SE(3) and
SE(2). Below θ = 2 a polynomial in s is summed, the Taylor series economised on [0, 4] (the
closed forms lose up to all digits there: (θ − sin θ)/θ³ at θ = 1e-4 keeps none); above it the
closed forms lose at most a few digits (β_ss: 8e-15 relative at θ = 2).
Subscript ``_s`` means a derivative with respect to s, so d/dθ f = 2θ f_s.

The functions are written with ``jax.numpy`` so that the groups' compiled methods, and their
first and second derivatives, go through them. Each is jitted: a step calls them dozens of times,
and a nested jit is traced once, where the unrolled series would be traced (and differentiated,
and batched) at every call. Both branches are evaluated and one is selected;
each is evaluated at an argument clamped into its own range (the series at s < SERIES_BELOW, the
closed form at s ≥ SERIES_BELOW), so the branch not taken can produce neither NaN nor inf, in
the value or in any derivative (a plain ``where`` would pass 0 · inf = NaN to the gradient); for
one s (not a batch of them) the closed forms sit in a branch (``lax.cond``), taken only at θ ≥ 2.
The selected branch sees s itself, so derivatives are those of the series or the closed form.
``exp_coefficients`` gives SO(3)'s six exp coefficients from one stacked sum, with its derivative
in s summed the same way rather than differentiated term by term; under vmap (a step's stages) its
batch branches as a whole, so that the closed forms are skipped while every angle of the batch is
below θ = 2.
"""

import functools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Final, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike
from numpy.typing import NDArray

SERIES_BELOW: Final = 4.0
"""Series are used for s = θ² < SERIES_BELOW."""

TAYLOR_TERMS: Final = 24
"""Taylor coefficients kept, as exact rationals, before the series are economised: at s = 4 the
slowest, γ's (radius of convergence θ = 2π), falls tenfold a term."""

SERIES_TERMS: Final = 12
"""Terms of each economised series (``_series``): enough for every coefficient and its first
two derivatives in s to round-off on [0, SERIES_BELOW], where the Taylor series would need 20."""


def _coefficients(first_factorial: int) -> list[Fraction]:
    """Taylor coefficients of Σ_k (−1)^k s^k / (2k + first_factorial)!, k < TAYLOR_TERMS."""
    return [Fraction((-1) ** k, math.factorial(2 * k + first_factorial)) for k in range(TAYLOR_TERMS)]


def _derivative(coeffs: list[Fraction]) -> list[Fraction]:
    return [k * c for k, c in enumerate(coeffs) if k > 0]


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


def _substituted(coeffs: list[Fraction], a: Fraction, b: Fraction) -> list[Fraction]:
    """The coefficients in y of Σ_k coeffs[k] uᵏ with u = a + b·y (exact rationals)."""
    out = [Fraction(0)] * len(coeffs)
    for k, c in enumerate(coeffs):
        for j in range(k + 1):
            out[j] += c * math.comb(k, j) * a ** (k - j) * b**j
    return out


def chebyshev_coefficients(coeffs: list[Fraction]) -> list[Fraction]:
    """b with Σ_k coeffs[k] sᵏ = Σ_j b_j T_j(x), x = 2s/SERIES_BELOW − 1 (exact rationals): the
    powers of s = (1 + x)·SERIES_BELOW/2 expanded in x, and x^k = 2^{1−k} Σ_{i≤k/2} C(k, i) T_{k−2i}
    (the term i = k/2 halved)."""
    half = Fraction(SERIES_BELOW) / 2
    b = [Fraction(0)] * len(coeffs)
    for k, c in enumerate(_substituted(coeffs, half, half)):
        for i in range(k // 2 + 1):
            weight = Fraction(math.comb(k, i), 2 ** (k - 1)) if k > 0 else Fraction(1)
            b[k - 2 * i] += c * (weight / 2 if k > 0 and 2 * i == k else weight)
    return b


@functools.cache
def _series(name: str) -> tuple[float, ...]:
    """``_TAYLOR[name]`` economised on [0, SERIES_BELOW] (Chebyshev economisation): expanded in
    Chebyshev polynomials of x = 2s/SERIES_BELOW − 1, cut after SERIES_TERMS of them, and brought
    back to powers of s, exactly; rounded to floats only at the end. The terms cut sum to less than
    2⁻⁵⁶ of each function's smallest value there (``tests/groups/test_series.py``). Computed at the first
    trace that needs it, not at import (exact rational arithmetic for all ten would slow every
    import)."""
    kept = chebyshev_coefficients(_TAYLOR[name])[:SERIES_TERMS]
    chebyshev = [[Fraction(1)], [Fraction(0), Fraction(1)]]  # T_j in powers of x
    for j in range(2, SERIES_TERMS):
        upper = [Fraction(0)] + [2 * c for c in chebyshev[j - 1]]
        chebyshev.append([u - (chebyshev[j - 2][i] if i < j - 1 else 0) for i, u in enumerate(upper)])
    in_x = [Fraction(0)] * SERIES_TERMS
    for b, polynomial in zip(kept, chebyshev):
        for i, c in enumerate(polynomial):
            in_x[i] += b * c
    return tuple(float(c) for c in _substituted(in_x, Fraction(-1), 2 / Fraction(SERIES_BELOW)))


def _table(*names: str) -> NDArray[np.float64]:
    """The series of ``names`` as columns (SERIES_TERMS rows)."""
    return np.array([_series(name) for name in names]).T


# γ = 1/θ² − cot(θ/2)/(2θ) = Σ_{n≥1} |B_2n| θ^{2n−2} / (2n)!  (radius of convergence θ = 2π)
_GAMMA_TAYLOR: Final = [b / math.factorial(2 * n) for n, b in enumerate(_bernoulli_even(TAYLOR_TERMS), start=1)]
_TAYLOR: Final = {"sinc": _coefficients(1), "alpha": _coefficients(2), "beta": _coefficients(3), "gamma": _GAMMA_TAYLOR}
"""The exact Taylor coefficients in s of sin θ/θ, (1 − cos θ)/θ², (θ − sin θ)/θ³ and γ, and
(below) of their derivatives in s."""
for _name in ("sinc", "alpha", "beta", "gamma"):
    _TAYLOR[f"{_name}_s"] = _derivative(_TAYLOR[_name])
for _name in ("alpha", "beta"):
    _TAYLOR[f"{_name}_ss"] = _derivative(_TAYLOR[f"{_name}_s"])


Closed = Callable[[jax.Array, jax.Array], jax.Array]
"""A closed form f(s, θ), evaluated at s ≥ SERIES_BELOW only."""


def _jitted(coefficient: Callable[[ArrayLike], jax.Array]) -> Callable[[ArrayLike], jax.Array]:
    """``jax.jit(coefficient)``, typed as the function it compiles."""
    return cast(Callable[[ArrayLike], jax.Array], jax.jit(coefficient))


def _summed(table: NDArray[np.float64], s: jax.Array) -> jax.Array:
    """[..., j] = Σ_k table[k, j] sᵏ, from the powers of s rather than by Horner's rule, whose chain
    of dependent products is slow where XLA compiles a VPRK step with exp into one kernel; the terms
    fall fast, and both orders agree to round-off."""
    s = s[..., None]
    powers = jnp.concatenate([jnp.ones_like(s)] + [s**k for k in range(1, len(table))], axis=-1)
    return jnp.sum(powers[..., None] * table, axis=-2)


def _stacked(table: NDArray[np.float64], forms: Sequence[Closed], s: ArrayLike) -> jax.Array:
    """[..., j] = Σ_k table[k, j] sᵏ for s < SERIES_BELOW, else forms[j](s, θ), θ = √s."""
    s = jnp.asarray(s, dtype=float)
    below = s < SERIES_BELOW
    summed = _summed(table, jnp.where(below, s, 0.0))
    s_closed = jnp.where(below, SERIES_BELOW, s)

    def closed() -> jax.Array:
        theta = jnp.sqrt(s_closed)
        return jnp.stack([form(s_closed, theta) for form in forms], axis=-1)

    if s.ndim == 0:
        # One angle: a branch, so that a step whose rotations stay below θ = 2 skips the closed
        # forms' sines, cosines and divisions. Under vmap, with a batched s, JAX evaluates both and
        # selects, as below.
        branched: jax.Array = jax.lax.cond(below, lambda: summed, closed)
        return branched
    return jnp.where(below[..., None], summed, closed())


def _batches_branch(table: NDArray[np.float64], forms: Sequence[Closed]) -> Callable[[jax.Array], jax.Array]:
    """``_stacked(table, forms, ·)``, whose batch (under vmap: a step's stages) branches as a whole:
    the closed forms are evaluated only if some s of the batch reaches SERIES_BELOW, where vmap
    would evaluate them for every s and select. Not differentiable
    (``jax.custom_batching.custom_vmap`` has no reverse mode): ``_exp_stack`` and ``_exp_s_stack``
    call it on primal values only."""

    @jax.custom_batching.custom_vmap
    def stacked(s: jax.Array) -> jax.Array:
        return _stacked(table, forms, s)

    @stacked.def_vmap
    def batched(axis_size: int, in_batched: list[bool], s: jax.Array) -> tuple[jax.Array, bool]:
        out = jax.lax.cond(jnp.all(s < SERIES_BELOW), lambda: _summed(table, s), lambda: _stacked(table, forms, s))
        return out, in_batched[0]

    return stacked


def _series_or_closed(name: str, closed: Closed, s: ArrayLike) -> jax.Array:
    """The series of ``name`` (``_series``) for s < SERIES_BELOW, else closed(s, θ)."""
    return _stacked(_table(name), (closed,), s)[..., 0]


def _sinc_closed(s: jax.Array, theta: jax.Array) -> jax.Array:
    return jnp.sin(theta) / theta


def _alpha_closed(s: jax.Array, theta: jax.Array) -> jax.Array:
    half = jnp.sin(0.5 * theta)
    return 2.0 * half * half / s


def _beta_closed(s: jax.Array, theta: jax.Array) -> jax.Array:
    return (theta - jnp.sin(theta)) / (theta * s)


def _gamma_closed(s: jax.Array, theta: jax.Array) -> jax.Array:
    return 1.0 / s - 1.0 / (2.0 * theta * jnp.tan(0.5 * theta))


def _sinc_s_closed(s: jax.Array, theta: jax.Array) -> jax.Array:
    return (theta * jnp.cos(theta) - jnp.sin(theta)) / (2.0 * theta * s)


def _alpha_s_closed(s: jax.Array, theta: jax.Array) -> jax.Array:
    return (0.5 * theta * jnp.sin(theta) - (1.0 - jnp.cos(theta))) / (s * s)


def _beta_s_closed(s: jax.Array, theta: jax.Array) -> jax.Array:
    return (theta * (1.0 - jnp.cos(theta)) - 3.0 * (theta - jnp.sin(theta))) / (2.0 * theta * s * s)


def _gamma_s_closed(s: jax.Array, theta: jax.Array) -> jax.Array:
    """dγ/ds = (dγ/dθ)/(2θ) with dγ/dθ = −2/θ³ + 1/(4θ sin²(θ/2)) + cot(θ/2)/(2θ²)."""
    half = jnp.sin(0.5 * theta)
    return -1.0 / (s * s) + 1.0 / (8.0 * s * half * half) + 1.0 / (4.0 * theta * s * jnp.tan(0.5 * theta))


def _alpha_ss_closed(s: jax.Array, theta: jax.Array) -> jax.Array:
    """(α_θθ − α_θ/θ)/(4θ²) with α_θ = 2θ α_s."""
    c, sn = jnp.cos(theta), jnp.sin(theta)
    a_theta = sn / s - 2.0 * (1.0 - c) / (theta * s)
    a_theta_theta = c / s - 4.0 * sn / (theta * s) + 6.0 * (1.0 - c) / (s * s)
    return (a_theta_theta - a_theta / theta) / (4.0 * s)


def _beta_ss_closed(s: jax.Array, theta: jax.Array) -> jax.Array:
    """(β_θθ − β_θ/θ)/(4θ²) with β_θ = 2θ β_s."""
    c, sn = jnp.cos(theta), jnp.sin(theta)
    b_theta = -2.0 / (theta * s) - c / (theta * s) + 3.0 * sn / (s * s)
    b_theta_theta = 6.0 / (s * s) + sn / (theta * s) + 6.0 * c / (s * s) - 12.0 * sn / (theta * s * s)
    return (b_theta_theta - b_theta / theta) / (4.0 * s)


@_jitted
def sinc(s: ArrayLike) -> jax.Array:
    """sin θ / θ."""
    return _series_or_closed("sinc", _sinc_closed, s)


@_jitted
def alpha(s: ArrayLike) -> jax.Array:
    """α = (1 − cos θ)/θ² = 2 sin²(θ/2)/θ²."""
    return _series_or_closed("alpha", _alpha_closed, s)


@_jitted
def beta(s: ArrayLike) -> jax.Array:
    """β = (θ − sin θ)/θ³."""
    return _series_or_closed("beta", _beta_closed, s)


@_jitted
def gamma(s: ArrayLike) -> jax.Array:
    """γ = 1/θ² − cot(θ/2)/(2θ), the θ̂² coefficient of (d^L exp_ξ)⁻¹ on SO(3)."""
    return _series_or_closed("gamma", _gamma_closed, s)


@_jitted
def sinc_s(s: ArrayLike) -> jax.Array:
    """d(sin θ/θ)/ds = (θ cos θ − sin θ)/(2θ³)."""
    return _series_or_closed("sinc_s", _sinc_s_closed, s)


@_jitted
def alpha_s(s: ArrayLike) -> jax.Array:
    """dα/ds = (θ sin θ / 2 − (1 − cos θ))/θ⁴."""
    return _series_or_closed("alpha_s", _alpha_s_closed, s)


@_jitted
def beta_s(s: ArrayLike) -> jax.Array:
    """dβ/ds = (θ(1 − cos θ) − 3(θ − sin θ))/(2θ⁵)."""
    return _series_or_closed("beta_s", _beta_s_closed, s)


@_jitted
def alpha_ss(s: ArrayLike) -> jax.Array:
    """d²α/ds²."""
    return _series_or_closed("alpha_ss", _alpha_ss_closed, s)


@_jitted
def beta_ss(s: ArrayLike) -> jax.Array:
    """d²β/ds²."""
    return _series_or_closed("beta_ss", _beta_ss_closed, s)


class ExpCoefficients(NamedTuple):
    """The coefficients of SO(3)'s exponential and its tangents at one s = θ²."""

    sinc: jax.Array
    alpha: jax.Array
    beta: jax.Array
    gamma: jax.Array
    alpha_s: jax.Array
    beta_s: jax.Array


_EXP_NAMES: Final = ("sinc", "alpha", "beta", "gamma", "alpha_s", "beta_s")
_EXP_S_NAMES: Final = ("sinc_s", "alpha_s", "beta_s", "gamma_s", "alpha_ss", "beta_ss")
_EXP_FORMS: Final = (_sinc_closed, _alpha_closed, _beta_closed, _gamma_closed, _alpha_s_closed, _beta_s_closed)
_EXP_S_FORMS: Final = (_sinc_s_closed, _alpha_s_closed, _beta_s_closed, _gamma_s_closed, _alpha_ss_closed,
                       _beta_ss_closed)


@functools.cache
def _exp_branches() -> tuple[Callable[[jax.Array], jax.Array], Callable[[jax.Array], jax.Array]]:
    """The six coefficients and their derivatives in s, each batch branching as a whole (built at
    the first trace, as ``_series``)."""
    return (_batches_branch(_table(*_EXP_NAMES), _EXP_FORMS),
            _batches_branch(_table(*_EXP_S_NAMES), _EXP_S_FORMS))


@jax.custom_jvp
def _exp_stack(s: jax.Array) -> jax.Array:
    return _exp_branches()[0](s)


@_exp_stack.defjvp
def _exp_stack_jvp(primals: tuple[jax.Array], tangents: tuple[jax.Array]) -> tuple[jax.Array, jax.Array]:
    """The six derivatives in s, summed the same way: a tangent then costs one product, where
    differentiating the stacked sum carries every tangent through its terms."""
    (s,), (ds,) = primals, tangents
    return _exp_stack(s), _exp_s_stack(s) * ds[..., None]


@jax.custom_jvp
def _exp_s_stack(s: jax.Array) -> jax.Array:
    return _exp_branches()[1](s)


@_exp_s_stack.defjvp
def _exp_s_stack_jvp(primals: tuple[jax.Array], tangents: tuple[jax.Array]) -> tuple[jax.Array, jax.Array]:
    """Its own tangent (the coefficients' second derivatives in s, which Newton's Jacobians never
    take) by autodiff of ``_stacked``, differentiable to any order and in reverse mode, which
    ``_batches_branch`` is not."""
    return jax.jvp(functools.partial(_stacked, _table(*_EXP_S_NAMES), _EXP_S_FORMS), primals, tangents)


def _exp_coefficients(s: ArrayLike) -> ExpCoefficients:
    """sinc, α, β, γ, α_s and β_s at s together: one sum on the stacked series and one
    closed form each, where the six single functions compile to a dozen small XLA kernels and more
    for their derivatives (a VPRK step on SO(3) with exp evaluates them at every stage)."""
    both = _exp_stack(jnp.asarray(s, dtype=float))
    return ExpCoefficients(*(both[..., k] for k in range(len(_EXP_FORMS))))


exp_coefficients: Final = cast(Callable[[ArrayLike], ExpCoefficients], jax.jit(_exp_coefficients))
