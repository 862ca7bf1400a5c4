"""estimate_order: the least-squares slope of log e against log h, with the round-off plateau left out."""

import math

import numpy as np
import pytest

from liemech.testing.order import estimate_order

H = np.array([0.2 / 2.0**k for k in range(10)], dtype=np.float64)  # 0.2 … 0.000390625


@pytest.mark.parametrize("p", [1, 2, 4, 6, 8])
def test_recovers_the_order_of_noisy_errors_above_a_plateau(p: int) -> None:
    """e = 3 hᵖ (1 + 3 % noise), floored at a round-off level 1e-14 · (1 + noise): slope p ± 0.05,
    intercept log 3 ± 0.15, and every plateau point discarded with a reason."""
    rng = np.random.default_rng(p)
    errors = 3.0 * H**p * (1.0 + 0.03 * rng.uniform(-1.0, 1.0, H.size))
    plateau = errors < 1e-13
    errors[plateau] = 1e-14 * (1.0 + rng.uniform(0.0, 1.0, int(plateau.sum())))
    fit = estimate_order(H, errors, min_points=3)
    assert abs(fit.slope - p) <= 0.05
    assert abs(fit.intercept - math.log(3.0)) <= 0.15
    assert len(fit.discarded) == int(plateau.sum()) == len(fit.reasons)
    assert set(fit.discarded) == set(H[plateau].tolist())
    assert all("plateau" in reason for reason in fit.reasons)
    assert len(fit.steps_used) == len(fit.errors_used) == H.size - int(plateau.sum())


def test_discards_once_the_error_stops_decreasing() -> None:
    """A plateau above the absolute threshold (1e-11) is caught because the error stops falling;
    every smaller h after it is discarded too, even if its error happens to dip."""
    h = np.array([0.1, 0.05, 0.025, 0.0125, 0.00625])
    errors = np.array([1e-4, 6.25e-6, 3.9e-7, 4e-7, 1e-9])
    fit = estimate_order(h, errors)
    assert fit.steps_used == (0.1, 0.05, 0.025)
    assert fit.discarded == (0.0125, 0.00625)
    assert "not smaller than" in fit.reasons[0] and "beyond the round-off plateau" in fit.reasons[1]
    assert abs(fit.slope - 4.0) <= 0.01


def test_order_of_input_does_not_matter() -> None:
    errors = 2.0 * H**3
    forward = estimate_order(H, errors)
    backward = estimate_order(H[::-1].tolist(), errors[::-1].tolist())
    assert forward.slope == pytest.approx(3.0, abs=1e-12) and backward.slope == pytest.approx(forward.slope, abs=1e-12)
    assert forward.intercept == pytest.approx(math.log(2.0), abs=1e-12)
    assert forward.discarded == () and forward.reasons == ()


def final_error(n: int, rk4: bool) -> float:
    """|y_N − y(1)| for y′ = −y², y(0) = 1 (exact y = 1/(1 + t), y(1) = ½) with N explicit Euler or
    classical RK4 steps."""

    def f(y: float) -> float:
        return -y * y

    h, y = 1.0 / n, 1.0
    for _ in range(n):
        if rk4:
            k1 = f(y)
            k2 = f(y + 0.5 * h * k1)
            k3 = f(y + 0.5 * h * k2)
            k4 = f(y + h * k3)
            y += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        else:
            y += h * f(y)
    return abs(y - 0.5)


@pytest.mark.parametrize("rk4, order", [(False, 1), (True, 4)])
def test_orders_of_explicit_euler_and_rk4_on_a_nonlinear_ode(rk4: bool, order: int) -> None:
    steps = [10, 20, 40, 80, 160]
    fit = estimate_order([1.0 / n for n in steps], [final_error(n, rk4) for n in steps], min_points=3)
    assert abs(fit.slope - order) <= 0.1
    assert fit.discarded == ()


def test_rk4_run_into_round_off_keeps_only_the_asymptotic_points() -> None:
    """RK4 down to h = 1/10240 reaches round-off (~1e-16); the fit still gives 4 ± 0.1."""
    steps = [10 * 2**k for k in range(11)]
    errors = [final_error(n, True) for n in steps]
    fit = estimate_order([1.0 / n for n in steps], errors, min_points=3)
    assert abs(fit.slope - 4.0) <= 0.1
    assert len(fit.discarded) >= 2
    assert min(fit.errors_used) > 1e-13


@pytest.mark.parametrize(
    "steps, errors, message",
    [
        ([0.1, 0.05], [1e-3], "equal length"),
        ([[0.1, 0.05]], [[1e-3, 1e-4]], "1-D"),
        ([0.1, -0.05, 0.025], [1e-3, 1e-4, 1e-5], "steps must be positive"),
        ([0.1, 0.0, 0.025], [1e-3, 1e-4, 1e-5], "steps must be positive"),
        ([0.1, math.nan, 0.025], [1e-3, 1e-4, 1e-5], "steps must be positive and finite"),
        ([0.1, 0.05, 0.025], [1e-3, math.nan, 1e-5], "errors must be non-negative and finite"),
        ([0.1, 0.05, 0.025], [1e-3, -1e-4, 1e-5], "errors must be non-negative"),
        ([0.1, 0.05, 0.025], [1e-3, math.inf, 1e-5], "finite"),
    ],
)
def test_rejects_malformed_input(steps: list[float], errors: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        estimate_order(steps, errors)


def test_rejects_too_few_points_above_the_plateau() -> None:
    with pytest.raises(ValueError, match="only 2 points above the round-off plateau .* need 3"):
        estimate_order([0.1, 0.05, 0.025, 0.0125], [1e-3, 1e-5, 1e-15, 2e-15], min_points=3)
    with pytest.raises(ValueError, match="only 0 points"):
        estimate_order([0.1, 0.05], [0.0, 0.0])
    with pytest.raises(ValueError, match="min_points must be at least 2"):
        estimate_order([0.1, 0.05, 0.025], [1e-3, 1e-5, 1e-7], min_points=1)
