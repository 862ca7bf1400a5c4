"""Left-trivialised derivatives by automatic differentiation along g τ(z).

For a function F on G, the trivialised derivative is ζ ↦ d/dε F(g τ(εζ))|₀. It depends on the
curve only through its tangent g ζ̂ at ε = 0, so F is differentiated along the straight line
g (e + εζ̂) (g + εζ on Rⁿ; ``LieGroup.perturbed``), which has that tangent: exact, and a much
smaller expression to compile and differentiate again than a retraction.
"""

from collections.abc import Callable
from typing import TypeVar

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from liemech.groups.base import LieGroup

P = TypeVar("P")


def trivialised_gradient(group: LieGroup[P], fn: Callable[[P], ArrayLike], g: P) -> jax.Array:
    """∇F(g) ∈ Rᵈ with ⟨∇F(g), ζ⟩ = d/dε F(g τ(εζ))|₀ for a scalar F."""
    return jnp.asarray(jax.grad(lambda z: jnp.asarray(fn(group.perturbed(g, z)), dtype=float).reshape(()))(
        jnp.zeros(group.dim)))


def derivative_in_eta(fn: Callable[[P, jax.Array], ArrayLike], g: P, eta: ArrayLike) -> jax.Array:
    """∂F/∂η (g, η) for F(g, η), by forward mode (shape of F followed by dim)."""
    return jnp.asarray(jax.jacfwd(fn, argnums=1)(g, jnp.asarray(eta, dtype=float)))


def trivialised_jacobian(group: LieGroup[P], fn: Callable[[P], ArrayLike], g: P) -> jax.Array:
    """The array J with J[..., k] = d/dε F(g τ(ε e_k))|₀ (shape of F followed by d)."""
    return jnp.asarray(jax.jacfwd(lambda z: jnp.asarray(fn(group.perturbed(g, z)), dtype=float))(
        jnp.zeros(group.dim)))


def trivialised_jvp(group: LieGroup[P], fn: Callable[[P], ArrayLike], g: P, tangent: ArrayLike) -> jax.Array:
    """d/dε F(g τ(εζ))|₀ for one tangent ζ (one forward pass, where the Jacobian costs dim of them)."""
    return jnp.asarray(jax.jvp(lambda z: jnp.asarray(fn(group.perturbed(g, z)), dtype=float), (jnp.zeros(group.dim),),
                               (jnp.asarray(tangent, dtype=float),))[1])


def trivialised_vjp(group: LieGroup[P], fn: Callable[[P], ArrayLike], g: P, cotangent: ArrayLike) -> jax.Array:
    """Jᵀλ with J the trivialised Jacobian of F at g (one reverse pass): the constraint force Bᵀλ."""
    return trivialised_gradient(group, lambda x: jnp.asarray(fn(x), dtype=float) @ jnp.asarray(cotangent), g)


def vjp_in_eta(fn: Callable[[P, jax.Array], ArrayLike], g: P, eta: ArrayLike, cotangent: ArrayLike) -> jax.Array:
    """(∂F/∂η)ᵀλ at (g, η), one reverse pass."""
    return jnp.asarray(jax.grad(lambda e: jnp.asarray(fn(g, e), dtype=float) @ jnp.asarray(cotangent))(
        jnp.asarray(eta, dtype=float)))
