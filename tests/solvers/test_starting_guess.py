"""Newton's starting guess: polynomial extrapolation of the last solutions, of the degree that
predicted the last one best."""

import jax
import jax.numpy as jnp
import numpy as np

import liemech as lm
from liemech.solvers import starting_guess
from liemech.systems import HeavyTop


def guesses(sequence: np.ndarray) -> np.ndarray:
    """The guess for x_{k+1} after each solution x_k of ``sequence`` (rows), from a history that
    starts at sequence[0] as the first guess."""
    past = starting_guess.history(jnp.asarray(sequence[0]))
    out = []
    for x in sequence[1:]:
        past, guess = starting_guess.extrapolate(past, jnp.asarray(x))
        out.append(np.asarray(guess))
    return np.array(out)


def test_a_cubic_is_predicted_exactly_once_four_solutions_are_known_and_an_alternation_by_the_last_value() -> None:
    k = np.arange(9.0)
    cubic = np.stack([0.3 - 1.2 * k + 0.7 * k**2 - 0.05 * k**3, 2.0 * k**2], axis=1)
    predicted = guesses(cubic)
    # predicted[i] is the guess for cubic[i + 2]; the first steps know fewer solutions
    assert np.array_equal(predicted[0], cubic[1])  # one solution known: the last value
    assert np.allclose(predicted[3:-1], cubic[5:], rtol=0, atol=1e-12)
    alternating = np.stack([2.0 * (-1.0) ** k, 0.5 * k], axis=1)
    # the line, the best of the rest, would miss the alternation by 8, the last value by 4
    assert np.array_equal(guesses(alternating)[3:-1], alternating[4:-1])


def test_the_guess_error_on_a_smooth_motion_falls_as_h_to_the_fourth() -> None:
    steps = np.array([0.1, 0.05, 0.025, 0.0125])
    errors = []
    for h in steps:
        t = h * np.arange(12)
        x = np.stack([np.sin(t), np.cos(2 * t)], axis=1)
        errors.append(np.max(np.abs(guesses(x)[3:-1] - x[5:])))  # guesses[i] is made for x[i + 2]
    order = np.polyfit(np.log(steps), np.log(errors), 1)[0]
    assert 3.8 < order < 4.3


def test_vprk_takes_fewer_iterations_than_from_the_line_and_the_same_steps() -> None:
    """On the heavy top at h = 0.006 (the line through the last two solutions took 3.0
    simplified-Newton iterations per step to round-off) nearly every step takes two: one update from
    the guess, then the check that finds the residual at round-off and applies the last update,
    the fewest the stopping rule allows unless the guess itself is at round-off. The steps are
    those of a Jacobian at every iterate, to round-off."""
    problem = HeavyTop().problem()
    sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=0.006, t_final=6.0)
    assert sol.stats.mean_iterations <= 2.05
    every = lm.integrate(problem, lm.VPRK(lm.lobatto(2), newton=lm.NewtonOptions(jacobian="every")), h=0.006,
                         t_final=6.0)
    assert np.max(np.abs(sol.mu - every.mu)) <= 1e-12 * np.max(np.abs(every.mu))


def test_the_history_rides_through_jit_and_vmap() -> None:
    k = jnp.arange(6.0)
    rows = jnp.stack([k**2, -k], axis=1)

    def last_guess(scale: jax.Array) -> jax.Array:
        past = starting_guess.history(scale * rows[0])
        guess = rows[0]
        for x in rows[1:]:
            past, guess = starting_guess.extrapolate(past, scale * x)
        return guess

    batched = jax.jit(jax.vmap(last_guess))(jnp.array([1.0, 2.0]))
    assert np.allclose(np.asarray(batched), [[36.0, -6.0], [72.0, -12.0]], atol=1e-12)
