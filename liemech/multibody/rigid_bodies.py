"""N rigid bodies in redundant coordinates on SO(3)ᴺ × R³ᴺ, body by body."""

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike
from numpy.typing import NDArray

from liemech.groups.euclidean import Rn
from liemech.groups.power import PowerGroup
from liemech.groups.product import ProductGroup
from liemech.groups.so3 import SO3
from liemech.jax_support import array_method
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.trivialised import trivialised_gradient
from liemech.multibody.joint_kinds import apply
from liemech.types import Vector, VectorLike

Configuration = tuple[Vector, Vector]
"""(R, x): the bodies' rotations (N, 3, 3) and their centres of mass (3N,) in space (numpy arrays,
or JAX arrays inside compiled code)."""


class RigidBodies(Lagrangian[Configuration]):
    """ℓ(g, η) = Σᵢ ½ ωᵢᵀ Jᵢ ωᵢ + ½ mᵢ |ẋᵢ|² − V(g) on G = SO(3)ᴺ × R³ᴺ.

    g = (R, x) holds each body's orientation Rᵢ (its frame's axes) and centre of mass xᵢ; η = (ω, ẋ)
    its angular velocity in its own axes (ωᵢ = (Rᵢᵀ Ṙᵢ)^∨) and the velocity of its centre of mass in
    space. Jᵢ is the inertia about the centre of mass (any symmetric positive definite matrix),
    mᵢ the mass. The mass matrix is block diagonal and applied body by body (3 × 3 blocks, never the
    dense 6N × 6N matrix), so momentum and velocity cost O(N).
    """

    def __init__(self, masses: Vector, inertias: Vector, potential: Callable[[Configuration], jax.Array]) -> None:
        self._n = len(masses)
        self._group: ProductGroup[Configuration] = ProductGroup(PowerGroup(SO3(), self._n), Rn(3 * self._n))
        self._masses = np.asarray(masses, dtype=np.float64)
        self._inertias = np.asarray(inertias, dtype=np.float64)
        self._inverse_inertias = np.linalg.inv(self._inertias)
        self._potential = potential

    @property
    def group(self) -> ProductGroup[Configuration]:
        return self._group

    def coordinate_bodies(self, labels: NDArray[np.int64]) -> NDArray[np.int64]:
        """The label of the body each coordinate of η = (ω, ẋ) belongs to, given each body's label:
        ω's three per body, then ẋ's three per body (the layout of ``_split``)."""
        return np.tile(np.repeat(np.asarray(labels, dtype=np.int64), 3), 2)

    def _split(self, eta: jax.Array) -> tuple[jax.Array, jax.Array]:
        return eta[: 3 * self._n].reshape(self._n, 3), eta[3 * self._n:].reshape(self._n, 3)

    def lagrangian(self, g: Configuration, eta: ArrayLike) -> jax.Array:
        omega, v = self._split(jnp.asarray(eta, dtype=float))
        kinetic = 0.5 * jnp.sum(omega * apply(jnp.asarray(self._inertias), omega)) + 0.5 * jnp.sum(
            jnp.asarray(self._masses) * jnp.sum(v * v, axis=-1))
        return kinetic - jnp.asarray(self._potential(g), dtype=float).reshape(())

    @array_method
    def momentum(self, g: Configuration, eta: ArrayLike) -> jax.Array:
        """μ = (Jᵢ ωᵢ, mᵢ ẋᵢ)."""
        omega, v = self._split(jnp.asarray(eta, dtype=float))
        return jnp.concatenate([apply(jnp.asarray(self._inertias), omega).ravel(),
                                (jnp.asarray(self._masses)[:, None] * v).ravel()])

    @array_method
    def velocity(self, g: Configuration, mu: VectorLike) -> jax.Array:
        """η = (Jᵢ⁻¹ μ_ωᵢ, μ_xᵢ / mᵢ)."""
        return jnp.asarray(self.mass_solve(g, mu, mu))

    @array_method
    def mass_solve(self, g: Configuration, eta: ArrayLike, rhs: ArrayLike) -> jax.Array:
        """M⁻¹ rhs body by body (``rhs`` a vector or a matrix of columns)."""
        rhs = jnp.asarray(rhs, dtype=float)
        columns = rhs.reshape(2, self._n, 3, -1)
        rotation = jnp.sum(jnp.asarray(self._inverse_inertias)[..., None] * columns[0][:, None], axis=2)
        translation = columns[1] / jnp.asarray(self._masses)[:, None, None]
        return jnp.concatenate([rotation, translation]).reshape(rhs.shape)

    @array_method
    def force(self, g: Configuration, eta: ArrayLike) -> jax.Array:
        """f = −∇V (the kinetic energy does not depend on g)."""
        return -trivialised_gradient(self.group, self._potential, g)
