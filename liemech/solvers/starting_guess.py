"""Newton's starting guess for the next step, extrapolated from the solutions of the last steps.

The unknowns of a one-step method (stage velocities, multipliers) are smooth functions of the node
along a resolved motion, so the polynomial of degree p through the last p + 1 solutions predicts
the next one to O(h^{p+1}):

    x̂_{k+1} = Σ_{j=0}^{p} (−1)^j C(p + 1, j + 1) x_{k−j}     (Newton's backward differences),

the last solution (p = 0), the line (p = 1), the parabola and the cubic (p = 3). A motion that the
step does not resolve (a parasitic multiplier that alternates from step to step, a chain whipping
at hω ≈ 1) is predicted worse the higher the degree: the cubic amplifies an alternation
fifteenfold. So the guess takes the degree whose prediction of the solution just found, from the
ones before it, came closest (in the largest miss over the components): the cubic where the motion
is smooth, the last value where it alternates. (Chosen per component, the degrees made guesses
from which simplified Newton lost a whipping chain's root.)
"""

import math
from typing import Final, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

DEGREES: Final = 4
EXTRAPOLATION: Final = np.array([[(-1.0) ** j * math.comb(p + 1, j + 1) if j <= p else 0.0 for j in range(DEGREES)]
                                 for p in range(DEGREES)])
"""Row p: the weights (−1)^j C(p + 1, j + 1) of x_k, x_{k−1}, x_{k−2}, x_{k−3} in the degree-p
prediction of x_{k+1}."""


class History(NamedTuple):
    """The last ``DEGREES`` solutions, newest first, of which the first ``known`` are filled."""

    solutions: jax.Array
    known: jax.Array


def history(guess: jax.Array) -> History:
    """The history at the start: the first guess counts as a solution (of a step into the start)."""
    return History(jnp.tile(guess, (DEGREES, 1)), jnp.ones((), dtype=int))


def extrapolate(past: History, solution: jax.Array) -> tuple[History, jax.Array]:
    """The history with ``solution`` added, and the guess for the next step: the prediction of the
    degree that predicted ``solution`` best from the solutions before it (its largest miss over
    the components the smallest)."""
    solutions = jnp.concatenate([solution[None], past.solutions[:-1]])
    # Elementwise over the degrees (no matrix products, argmin or gathers), so that XLA fuses it
    # into a few kernels: it runs once per step, and a compiled step is short.
    guess, closest = solution, jnp.asarray(jnp.inf)
    for p in range(DEGREES):
        weights = EXTRAPOLATION[p, :p + 1]
        miss = jnp.max(jnp.abs(sum(w * x for w, x in zip(weights, past.solutions)) - solution))
        better = (p < past.known) & (miss < closest)  # degree p needs p + 1 earlier solutions
        closest = jnp.where(better, miss, closest)
        guess = jnp.where(better, sum(w * x for w, x in zip(weights, solutions)), guess)
    return History(solutions, jnp.minimum(past.known + 1, DEGREES)), guess
