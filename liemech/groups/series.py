"""Scalar coefficient functions of the rotation angle, accurate at every angle.

Each function takes s = θ² and returns a coefficient of the closed forms for SO(3), SE(3) and
SE(2). Below θ = 2 a Taylor series in s is summed (the closed forms lose up to all digits there:
(θ − sin θ)/θ³ at θ = 1e-4 keeps none); above it the closed forms lose at most a few digits
(β_ss: 8e-15 relative at θ = 2).
Subscript ``_s`` means a derivative with respect to s, so d/dθ f = 2θ f_s.
"""

import math
from fractions import Fraction
from typing import Final

SERIES_BELOW: Final = 4.0
"""Series are used for s = θ² < SERIES_BELOW; 20 terms then reach round-off."""

_TERMS: Final = 20


def _coefficients(first_factorial: int) -> tuple[float, ...]:
    """Taylor coefficients of Σ_k (−1)^k s^k / (2k + first_factorial)!, k = 0.._TERMS−1."""
    return tuple((-1) ** k / math.factorial(2 * k + first_factorial) for k in range(_TERMS))


def _derivative(coeffs: tuple[float, ...]) -> tuple[float, ...]:
    return tuple(k * c for k, c in enumerate(coeffs) if k > 0)


_SHORT_BELOW: Final = 1.0
_SHORT_TERMS: Final = 12  # below s = 1 the 13th term is < 1/25! ≈ 6e-26 of the first


def _horner(coeffs: tuple[float, ...], s: float) -> float:
    acc = 0.0
    for c in reversed(coeffs[:_SHORT_TERMS] if s < _SHORT_BELOW else coeffs):
        acc = acc * s + c
    return acc


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


def sinc(s: float) -> float:
    """sin θ / θ."""
    if s < SERIES_BELOW:
        return _horner(_SINC, s)
    theta = math.sqrt(s)
    return math.sin(theta) / theta


def alpha(s: float) -> float:
    """α = (1 − cos θ)/θ² = 2 sin²(θ/2)/θ²."""
    if s < SERIES_BELOW:
        return _horner(_ALPHA, s)
    half = math.sin(0.5 * math.sqrt(s))
    return 2.0 * half * half / s


def beta(s: float) -> float:
    """β = (θ − sin θ)/θ³."""
    if s < SERIES_BELOW:
        return _horner(_BETA, s)
    theta = math.sqrt(s)
    return (theta - math.sin(theta)) / (theta * s)


def gamma(s: float) -> float:
    """γ = 1/θ² − cot(θ/2)/(2θ), the θ̂² coefficient of (d^L exp_ξ)⁻¹ on SO(3)."""
    if s < SERIES_BELOW:
        return _horner(_GAMMA, s)
    theta = math.sqrt(s)
    return 1.0 / s - 1.0 / (2.0 * theta * math.tan(0.5 * theta))


def sinc_s(s: float) -> float:
    """d(sin θ/θ)/ds = (θ cos θ − sin θ)/(2θ³)."""
    if s < SERIES_BELOW:
        return _horner(_SINC_S, s)
    theta = math.sqrt(s)
    return (theta * math.cos(theta) - math.sin(theta)) / (2.0 * theta * s)


def alpha_s(s: float) -> float:
    """dα/ds = (θ sin θ / 2 − (1 − cos θ))/θ⁴."""
    if s < SERIES_BELOW:
        return _horner(_ALPHA_S, s)
    theta = math.sqrt(s)
    return (0.5 * theta * math.sin(theta) - (1.0 - math.cos(theta))) / (s * s)


def beta_s(s: float) -> float:
    """dβ/ds = (θ(1 − cos θ) − 3(θ − sin θ))/(2θ⁵)."""
    if s < SERIES_BELOW:
        return _horner(_BETA_S, s)
    theta = math.sqrt(s)
    return (theta * (1.0 - math.cos(theta)) - 3.0 * (theta - math.sin(theta))) / (2.0 * theta * s * s)


def alpha_ss(s: float) -> float:
    """d²α/ds² = (α_θθ − α_θ/θ)/(4θ²) with α_θ = 2θ α_s."""
    if s < SERIES_BELOW:
        return _horner(_ALPHA_SS, s)
    theta = math.sqrt(s)
    c, sn = math.cos(theta), math.sin(theta)
    a_theta = sn / s - 2.0 * (1.0 - c) / (theta * s)
    a_theta_theta = c / s - 4.0 * sn / (theta * s) + 6.0 * (1.0 - c) / (s * s)
    return (a_theta_theta - a_theta / theta) / (4.0 * s)


def beta_ss(s: float) -> float:
    """d²β/ds² = (β_θθ − β_θ/θ)/(4θ²) with β_θ = 2θ β_s."""
    if s < SERIES_BELOW:
        return _horner(_BETA_SS, s)
    theta = math.sqrt(s)
    c, sn = math.cos(theta), math.sin(theta)
    b_theta = -2.0 / (theta * s) - c / (theta * s) + 3.0 * sn / (s * s)
    b_theta_theta = 6.0 / (s * s) + sn / (theta * s) + 6.0 * c / (s * s) - 12.0 * sn / (theta * s * s)
    return (b_theta_theta - b_theta / theta) / (4.0 * s)
