"""Array aliases used in every signature of liemech."""

from collections.abc import Callable
from typing import TypeAlias, TypeVar

import jax
import numpy as np
from jax.typing import ArrayLike
from numpy.typing import NDArray

Vector: TypeAlias = NDArray[np.float64]
"""A flat float64 array: an algebra vector ξ ∈ 𝔤 ≅ Rᵈ, a momentum μ ∈ 𝔤* or a point of Rⁿ."""

Matrix: TypeAlias = NDArray[np.float64]
"""A 2-D float64 array: a group matrix, an operator on 𝔤 (Ad, ad, dτ, …) or a Jacobian."""

Tensor: TypeAlias = NDArray[np.float64]
"""A 3-D float64 array, e.g. the stacked derivatives ∂_k 𝕀(g) of a configuration-dependent inertia."""

VectorLike: TypeAlias = NDArray[np.float64] | jax.Array
"""A vector argument: a numpy array from the caller, or a JAX array inside compiled code."""

P = TypeVar("P")

PointFunction: TypeAlias = Callable[[P], ArrayLike] | Callable[[jax.Array], ArrayLike]
"""A user callback of the configuration, g ↦ array (a potential, an inertia, a constraint Φ or a
derivative): typed with the point type or with ``jax.Array`` (liemech calls it with traced JAX
arrays); it may return any array, numpy or JAX."""

StateFunction: TypeAlias = (Callable[[P, Vector], ArrayLike] | Callable[[P, jax.Array], ArrayLike]
                            | Callable[[jax.Array, jax.Array], ArrayLike])
"""A user callback of the configuration and the body velocity, (g, η) ↦ array (a nonholonomic φ or
its derivatives), typed with numpy or JAX arrays."""

ForceFunction: TypeAlias = (Callable[[P, Vector, float], ArrayLike] | Callable[[P, jax.Array, jax.Array], ArrayLike]
                            | Callable[[jax.Array, jax.Array, jax.Array], ArrayLike])
"""An external force (g, η, t) ↦ F ∈ 𝔤*, typed with numpy or JAX arrays."""

OnPoint: TypeAlias = Callable[[P], ArrayLike]
"""A ``PointFunction`` as liemech holds and calls it (with points of the group's layout, traced or not)."""

OnState: TypeAlias = Callable[[P, Vector], ArrayLike]
"""A ``StateFunction`` as liemech holds and calls it."""
