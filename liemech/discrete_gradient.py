"""The Gonzalez discrete derivative (paper 001 eq. (19), spec §I.3), shared by every
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

from liemech.types import Matrix, Vector

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


def is_roundoff(value: float, *terms: float) -> bool:
    """|value| ≤ ROUNDOFF·Σ|terms|: a difference of the terms that is pure round-off."""
    return abs(value) <= ROUNDOFF * sum(abs(t) for t in terms)


def gonzalez_numerator(f_x: float, f_y: float, linear: float) -> float:
    """f(y) − f(x) − Df(w)·(y − x) given ``linear`` = Df(w)·(y − x), or 0 at the round-off level."""
    numerator = f_y - f_x - linear
    return 0.0 if is_roundoff(numerator, f_x, f_y, linear) else numerator


def gonzalez_quotients(f_x: Vector, f_y: Vector, linear: Vector, squared: float) -> Vector:
    """The quotients S_k = [f_k(y) − f_k(x) − ∇f_k(w)·(y − x)]/|y − x|² of a vector-valued f, given
    ``linear`` = (∇f_k(w)·(y − x))_k and ``squared`` = |y − x|²; the rule of ``gonzalez_numerator``
    component by component (0 where a numerator is round-off, all 0 when y = x)."""
    if squared == 0.0:
        return np.zeros(f_x.size)
    numerator = f_y - f_x - linear
    roundoff = np.abs(numerator) <= ROUNDOFF * (np.abs(f_x) + np.abs(f_y) + np.abs(linear))
    return np.where(roundoff, 0.0, numerator) / squared


def gonzalez_quotient(f_x: float, f_y: float, gradient_mid: Vector, step: Vector) -> float:
    """S_f = [f(y) − f(x) − Df(w)·(y − x)] / |y − x|² (0 where the numerator is round-off)."""
    squared = float(step @ step)
    return 0.0 if squared == 0.0 else gonzalez_numerator(f_x, f_y, float(gradient_mid @ step)) / squared


def gonzalez_derivative(f_x: float, f_y: float, gradient_mid: Vector, step: Vector) -> Vector:
    """D̄f(x, y) = Df(w) + S_f (y − x) (eq. (19)), from f(x), f(y), Df(w) and y − x."""
    return gradient_mid + gonzalez_quotient(f_x, f_y, gradient_mid, step) * step


def gonzalez_derivative_and_jacobian(
    f_x: float, f_y: float, gradient_y: Vector, gradient_mid: Vector, hessian_mid: Matrix, step: Vector
) -> tuple[Vector, Matrix]:
    """D̄f(x, y) and its derivative with respect to y, for Newton:
    ∂D̄f/∂y = ½∇²f(w) + S I + (y − x) ∂Sᵀ, ∂S = [∇f(y) − ∇f(w) − ½∇²f(w)(y − x) − 2S(y − x)]/|y − x|²."""
    squared = float(step @ step)
    S = gonzalez_quotient(f_x, f_y, gradient_mid, step)
    jac = 0.5 * hessian_mid + S * np.eye(step.size)
    if squared > 0.0:
        d_S = (gradient_y - gradient_mid - 0.5 * hessian_mid @ step - 2.0 * S * step) / squared
        jac = jac + np.outer(step, d_S)
    return gradient_mid + S * step, jac


def invariant_discrete_derivative(
    F: Callable[[float], float], dF: Callable[[float], float], s_x: float, s_y: float, grad_s_mid: Vector
) -> Vector:
    """The equivariant (invariant-based) discrete derivative of f = F ∘ s with s quadratic (a squared
    length, spec §I.9): D̄f = [F(s(y)) − F(s(x))]/(s(y) − s(x)) ∇s(w), with F′(s(w)) where the
    difference quotient is 0/0. Exact (D̄f·(y − x) = f(y) − f(x), since ∇s(w)·(y − x) = s(y) − s(x))
    and equivariant under every symmetry that preserves s."""
    difference = s_y - s_x
    if is_roundoff(difference, s_x, s_y):
        return dF(0.5 * (s_x + s_y)) * grad_s_mid
    return (F(s_y) - F(s_x)) / difference * grad_s_mid
