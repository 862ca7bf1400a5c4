"""The Cayley retraction of a quadratic matrix group, from the generic matrix formulas.

With X = ξ̂, Y = η̂, Δ = δ̂:
    cay(ξ) = (I − X/2)⁻¹ (I + X/2),        cay⁻¹(g) = [2 (I + g)⁻¹ (g − I)]^∨,
    dτ(ξ) η = [(I + X/2)⁻¹ Y (I − X/2)⁻¹]^∨, dτ⁻¹(ξ) η = [(I + X/2) Y (I − X/2)]^∨,
    ddτ(ξ, η) δ = ½ [Y (I − X/2)⁻¹ Δ − Δ (I + X/2)⁻¹ Y]^∨.
Valid on SO(n) and SE(n); SE(2) uses it for ddτ, SE(3) for cay⁻¹ (its closed forms are these
formulas with the blocks of (I ± ξ̂/2)⁻¹ written out).
"""

from typing import Final

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from liemech.groups.base import LieGroup, Retraction
from liemech.input_checks import expect_shape
from liemech.jax_support import array_method
from liemech.numerics.lu import solve
from liemech.types import Matrix, Vector, VectorLike

SINGULAR_TOL: Final = 1e-12
"""cay⁻¹ raises when I + g is singular to this relative size (a rotation block by π)."""


def _solve(a: ArrayLike, b: ArrayLike) -> jax.Array:
    """a⁻¹ b (b may be a stack of matrices)."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    if b.ndim == 3:
        out: jax.Array = jax.vmap(lambda block: solve(a, block))(b)
        return out
    return solve(a, b)


class MatrixCayley(Retraction[Matrix]):
    """cay on a matrix group given only its hat and vee; operators are built column by column."""

    def __init__(self, group: LieGroup[Matrix]) -> None:
        super().__init__(group, "cay")
        d = group.dim
        basis = np.stack([group.hat(e) for e in np.eye(d)])  # (d, n, n): ê_j
        n = basis.shape[1]
        self._n = n
        self._basis = jnp.asarray(basis)
        # vee is linear: vee(X) = V · vec(X), with V the left inverse of the hat matrix.
        self._vee_matrix = jnp.asarray(np.linalg.pinv(basis.reshape(d, n * n).T))

    def _vee_columns(self, stack: ArrayLike) -> jax.Array:
        """The d×d matrix whose column j is vee(stack[j])."""
        return self._vee_matrix @ jnp.reshape(stack, (self._group.dim, self._n * self._n)).T

    def _halves(self, xi: VectorLike) -> tuple[jax.Array, jax.Array]:
        expect_shape(xi, (self._group.dim,), "xi")
        half = 0.5 * self._group.hat(xi)
        eye = jnp.eye(self._n)
        return eye + half, eye - half

    @array_method
    def tau(self, xi: VectorLike) -> jax.Array:
        plus, minus = self._halves(xi)
        return _solve(minus, plus)

    def tau_inv(self, g: Matrix) -> Vector:
        g = self._group.check_point(g)
        eye_plus_g = np.eye(self._n) + g
        smallest = float(np.linalg.svd(eye_plus_g, compute_uv=False)[-1])
        if smallest < SINGULAR_TOL * 2.0:
            raise ValueError(
                "cay⁻¹ is undefined where I + g is singular (a rotation by π): "
                f"smallest singular value {smallest:.3e}"
            )
        return self._group.vee(2.0 * np.asarray(np.linalg.solve(eye_plus_g, g - np.eye(self._n)), dtype=np.float64))

    @array_method
    def dtau(self, xi: VectorLike) -> jax.Array:
        plus, minus = self._halves(xi)
        return self._vee_columns(_solve(plus, self._basis) @ _solve(minus, jnp.eye(self._n)))

    @array_method
    def dtau_inv(self, xi: VectorLike) -> jax.Array:
        plus, minus = self._halves(xi)
        return self._vee_columns(plus @ self._basis @ minus)

    @array_method
    def ddtau(self, xi: VectorLike, eta: VectorLike) -> jax.Array:
        plus, minus = self._halves(xi)
        expect_shape(eta, (self._group.dim,), "eta")
        Y = self._group.hat(eta)
        left = Y @ _solve(minus, self._basis)  # Y (I − X/2)⁻¹ Δ_j
        right = self._basis @ _solve(plus, Y)  # Δ_j (I + X/2)⁻¹ Y
        return 0.5 * self._vee_columns(left - right)
