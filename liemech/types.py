"""Array aliases used in every signature of liemech."""

from typing import TypeAlias

import jax
import numpy as np
from numpy.typing import NDArray

Vector: TypeAlias = NDArray[np.float64]
"""A flat float64 array: an algebra vector ξ ∈ 𝔤 ≅ Rᵈ, a momentum μ ∈ 𝔤* or a point of Rⁿ."""

Matrix: TypeAlias = NDArray[np.float64]
"""A 2-D float64 array: a group matrix, an operator on 𝔤 (Ad, ad, dτ, …) or a Jacobian."""

Tensor: TypeAlias = NDArray[np.float64]
"""A 3-D float64 array, e.g. the stacked derivatives ∂_k 𝕀(g) of a configuration-dependent inertia."""

VectorLike: TypeAlias = NDArray[np.float64] | jax.Array
"""A vector argument: a numpy array from the caller, or a JAX array inside compiled code."""
