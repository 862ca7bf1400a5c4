"""The Gonzalez discrete derivative (Leyendecker, Betsch & Steinmann 2004, eq. (19)), shared by every
energy-conserving scheme:

    D̄f(x, y) = Df(w) + S_f(x, y) (y − x),   S_f = [f(y) − f(x) − Df(w)·(y − x)] / |y − x|²,
    w = (x + y)/2,

so that D̄f(x, y)·(y − x) = f(y) − f(x) exactly. The quotient S_f is 0/0 when x = y; it is set to 0
when its numerator is at the round-off level of f (the numerator is O(|y − x|³) for smooth f).
"""

from collections.abc import Callable
from typing import Final

import jax
import jax.numpy as jnp
import numpy as np

ROUNDOFF: Final = 16.0 * float(np.finfo(np.float64).eps)


def quotients(f_x: jax.Array, f_y: jax.Array, linear: jax.Array, squared: jax.Array) -> jax.Array:
    """S = [f(y) − f(x) − Df(w)(y − x)] / |y − x|², traceable and elementwise for a vector-valued f,
    given ``linear`` = Df(w)(y − x) and ``squared`` = |y − x|²: 0 where the numerator is at the
    round-off level of its terms, and 0 when y = x. The guarded division keeps the derivatives
    finite on both sides of the switch."""
    numerator = f_y - f_x - linear
    zero = (jnp.abs(numerator) <= ROUNDOFF * (jnp.abs(f_x) + jnp.abs(f_y) + jnp.abs(linear))) | (squared == 0.0)
    return jnp.where(zero, 0.0, numerator / jnp.where(zero, 1.0, squared))


def discrete_derivative(f: Callable[[jax.Array], jax.Array], x: jax.Array, y: jax.Array) -> jax.Array:
    """D̄f(x, y) = Df(w) + S_f (y − x), eq. (19), traceable: the gradient (n,) of a scalar f, or the
    (m, n) Jacobian of a vector-valued f row by row; Df(w) by forward-mode autodiff."""
    step = y - x
    D_mid = jax.jacfwd(f)(0.5 * (x + y))
    S = quotients(f(x), f(y), D_mid @ step, step @ step)
    out: jax.Array = D_mid + S[..., None] * step
    return out
