"""Powers Gᴺ = G × … × G of one group: the N points stacked along a leading axis.

A point of ``PowerGroup(G, N)`` is G's point with a leading axis of N bodies (an (N, 3, 3) array for
SO(3)); an algebra vector is flat of length N·d (d = G.dim), the N blocks ξ = (ξ₀, …, ξ_{N−1})
concatenated body by body, as for ``ProductGroup(G, …, G)``. Every operation is ``jax.vmap`` of G's
over the bodies, so the traced code, and its compile time, do not grow with N.
"""

from typing import Generic, SupportsIndex, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from liemech.groups.base import (
    RETRACTION_KINDS,
    LieGroup,
    Retraction,
    RetractionKind,
    unknown_kind,
)
from liemech.input_checks import as_float_array, checked_count, expect_shape
from liemech.jax_support import array_method
from liemech.types import Vector, VectorLike

P = TypeVar("P")


def stacked_block_diagonal(stack: ArrayLike) -> jax.Array:
    """The block-diagonal (N·d, N·d) matrix diag(B₀, …, B_{N−1}) of a stack (N, d, d) of blocks,
    written by one scatter (the same operations for every N)."""
    blocks = jnp.asarray(stack)
    n, d, _ = blocks.shape
    bodies = jnp.arange(n)
    out = jnp.zeros((n, d, n, d), dtype=blocks.dtype).at[bodies, :, bodies, :].set(blocks)
    return out.reshape(n * d, n * d)


class PowerGroup(LieGroup[P], Generic[P]):
    """Gᴺ with g = (g₀, …, g_{N−1}) stacked along a leading axis and ξ = (ξ₀, …, ξ_{N−1}) concatenated.

    compose(g, h)[i] = G.compose(g[i], h[i]), inverse(g)[i] = G.inverse(g[i]),
    identity()[i] = G.identity(), hat(ξ)[i] = G.hat(ξ_i), vee(X)_i = G.vee(X[i]);
    Ad(g) = diag(Ad_G(g₀), …, Ad_G(g_{N−1})), ad(ξ) = diag(ad_G(ξ₀), …, ad_G(ξ_{N−1})) and
    ad*_ξ μ = (ad*_G(ξ₀, μ₀), …) block by block. Each is ``jax.vmap`` of G's operation over the
    leading axis. ``PowerGroup(G, N)`` agrees with ``ProductGroup(G, …, G)`` (N factors) on algebra
    vectors and on every operator; only its points differ (a stack, not a tuple).
    """

    def __init__(self, group: LieGroup[P], N: SupportsIndex) -> None:
        if not isinstance(group, LieGroup):
            raise TypeError(f"group must be a LieGroup, got {type(group).__name__}")
        try:
            self.N = checked_count(N, "N")
        except ValueError:
            raise ValueError(f"N must be an integer ≥ 1, got {N!r}") from None
        self.group: LieGroup[P] = group
        self._dim = self.N * group.dim
        # The layout of one body's point (G's identity), to check the stacks against.
        e = group.identity()
        self._leaf_shapes = [np.shape(leaf) for leaf in jax.tree.leaves(e)]
        self._array_points = not isinstance(e, tuple)

    @property
    def dim(self) -> int:
        return self._dim

    def __repr__(self) -> str:
        return f"PowerGroup({self.group!r}, {self.N})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PowerGroup) and other.N == self.N and other.group == self.group

    def __hash__(self) -> int:
        return hash(("PowerGroup", self.group, self.N))

    def _stack(self, g: P, name: str) -> P:
        """g unchanged, after checking that each of its arrays has a leading axis of N bodies."""
        for leaf, shape in zip(jax.tree.leaves(g), self._leaf_shapes, strict=False):
            if np.shape(leaf) != (self.N, *shape):
                raise ValueError(f"{name} must stack {self.N} points of {self.group!r} along its first axis: "
                                 f"shape {(self.N, *shape)}, got {np.shape(leaf)}")
        return g

    def blocks(self, xi: VectorLike, name: str = "xi") -> jax.Array:
        """The (N, d) blocks (ξ₀, …, ξ_{N−1}) of an algebra vector, one row per body."""
        expect_shape(xi, (self._dim,), name)
        return jnp.reshape(jnp.asarray(xi, dtype=float), (self.N, self.group.dim))

    def flat(self, blocks: ArrayLike) -> jax.Array:
        """The (N, d) blocks as one algebra vector of length N·d."""
        return jnp.reshape(blocks, (self._dim,))

    @array_method
    def identity(self) -> P:
        e = self.group.identity()
        stacked: P = jax.tree.map(lambda leaf: jnp.broadcast_to(leaf, (self.N, *np.shape(leaf))), e)
        return stacked

    @array_method
    def compose(self, g: P, h: P) -> P:
        return jax.vmap(self.group.compose)(self._stack(g, "g"), self._stack(h, "h"))

    @array_method
    def inverse(self, g: P) -> P:
        return jax.vmap(self.group.inverse)(self._stack(g, "g"))

    @array_method
    def hat(self, xi: VectorLike) -> P:
        return jax.vmap(self.group.hat)(self.blocks(xi))

    @array_method
    def vee(self, X: P) -> jax.Array:
        return jnp.reshape(jax.vmap(self.group.vee)(self._stack(X, "X")), (self._dim,))

    @array_method
    def perturbed(self, g: P, z: VectorLike) -> P:
        return jax.vmap(self.group.perturbed)(self._stack(g, "g"), self.blocks(z, "z"))

    @array_method
    def Ad(self, g: P) -> jax.Array:
        return stacked_block_diagonal(jax.vmap(self.group.Ad)(self._stack(g, "g")))

    @array_method
    def ad(self, xi: VectorLike) -> jax.Array:
        return stacked_block_diagonal(jax.vmap(self.group.ad)(self.blocks(xi)))

    @array_method
    def ad_star(self, xi: VectorLike, mu: VectorLike) -> jax.Array:
        """ad*_ξ μ block by block, without forming ad(ξ)."""
        return self.flat(jax.vmap(self.group.ad_star)(self.blocks(xi), self.blocks(mu, "mu")))

    @array_method
    def Ad_star(self, g: P, mu: VectorLike) -> jax.Array:
        """Ad*_g μ block by block (Ad*_G(g_i) μ_i), without forming the (N·d, N·d) matrix."""
        return self.flat(jax.vmap(self.group.Ad_star)(self._stack(g, "g"), self.blocks(mu, "mu")))

    def check_point(self, g: object, name: str = "g") -> P:
        """g as a stack of N points of G, every body checked by G (vectorised, G.check_points); a
        ValueError names the wrong shape or the first bad body, ``name[k]``."""
        if self._array_points:
            arr = as_float_array(g, name)
            expected = (self.N, *self._leaf_shapes[0])
            if arr.shape != expected:
                raise ValueError(f"{name} must stack {self.N} points of {self.group!r} along its first axis: "
                                 f"shape {expected}, got {arr.shape}")
            return self.group.check_points(arr, name)
        points = self.group.check_points(g, name)
        return self._stack(points, name)

    def check_points(self, points: object, name: str = "g") -> P:
        """A stack (members, N, …) of points, checked in one vectorised pass; a ValueError names the
        first bad member and body, ``name[m][k]``."""
        if not self._array_points:
            return super().check_points(points, name)
        arr = as_float_array(points, name)
        shape = (self.N, *self._leaf_shapes[0])
        if arr.ndim != len(shape) + 1 or arr.shape[1:] != shape or len(arr) == 0:
            raise ValueError(f"{name} must stack points of shape {shape} along a first axis of members, "
                             f"got shape {arr.shape}")
        try:
            bodies = self.group.check_points(arr.reshape(len(arr) * self.N, *shape[1:]), name)
        except ValueError:
            for m in range(len(arr)):  # name the first bad member and body
                self.check_point(arr[m], f"{name}[{m}]")
            raise
        stacked: P = jax.tree.map(lambda leaf: np.reshape(leaf, arr.shape), bodies)
        return stacked

    def random_point(self, rng: np.random.Generator) -> P:
        bodies = [self.group.random_point(rng) for _ in range(self.N)]
        stacked: P = jax.tree.map(lambda *leaves: np.stack(leaves), *bodies)
        return stacked

    def retraction(self, kind: RetractionKind = "cay") -> "PowerRetraction[P]":
        if kind not in RETRACTION_KINDS:
            raise unknown_kind(kind)
        return PowerRetraction(self, kind)


class PowerRetraction(Retraction[P]):
    """τ(ξ)[i] = τ_G(ξ_i) with G's retraction of the same kind; dτ, dτ⁻¹ and ddτ(ξ, η) are
    block-diagonal with G's blocks at (ξ_i, η_i); every operation is ``jax.vmap`` over the bodies."""

    def __init__(self, group: PowerGroup[P], kind: RetractionKind) -> None:
        super().__init__(group, kind)
        self._power = group
        self.body: Retraction[P] = group.group.retraction(kind)

    @array_method
    def tau(self, xi: VectorLike) -> P:
        return jax.vmap(self.body.tau)(self._power.blocks(xi))

    def tau_inv(self, g: P) -> Vector:
        """τ_G⁻¹ body by body (numpy, like G's); a body outside τ's image is named, ``g[k]``."""
        g = self._power.check_point(g)
        parts = []
        for k in range(self._power.N):
            try:
                parts.append(self.body.tau_inv(jax.tree.map(lambda leaf: leaf[k], g)))  # noqa: B023
            except ValueError as exc:
                raise ValueError(f"g[{k}]: {exc}") from exc
        return np.concatenate(parts)

    @array_method
    def dtau(self, xi: VectorLike) -> jax.Array:
        return stacked_block_diagonal(jax.vmap(self.body.dtau)(self._power.blocks(xi)))

    @array_method
    def dtau_inv(self, xi: VectorLike) -> jax.Array:
        return stacked_block_diagonal(jax.vmap(self.body.dtau_inv)(self._power.blocks(xi)))

    @array_method
    def ddtau(self, xi: VectorLike, eta: VectorLike) -> jax.Array:
        blocks = jax.vmap(self.body.ddtau)(self._power.blocks(xi), self._power.blocks(eta, "eta"))
        return stacked_block_diagonal(blocks)

    @array_method
    def dtau_times(self, xi: VectorLike, v: VectorLike) -> jax.Array:
        """dτ(ξ) v block by block, dτ_G(ξ_i) v_i."""
        blocks = self._power.blocks
        return self._power.flat(jax.vmap(self.body.dtau_times)(blocks(xi), blocks(v, "v")))

    @array_method
    def dtau_star(self, xi: VectorLike, mu: VectorLike) -> jax.Array:
        """dτ(ξ)ᵀ μ block by block, dτ_G(ξ_i)ᵀ μ_i."""
        blocks = self._power.blocks
        return self._power.flat(jax.vmap(self.body.dtau_star)(blocks(xi), blocks(mu, "mu")))

    @array_method
    def ddtau_star(self, xi: VectorLike, eta: VectorLike, mu: VectorLike) -> jax.Array:
        """ddτ(ξ, η)ᵀ μ block by block, ddτ_G(ξ_i, η_i)ᵀ μ_i."""
        blocks = self._power.blocks
        return self._power.flat(jax.vmap(self.body.ddtau_star)(blocks(xi), blocks(eta, "eta"), blocks(mu, "mu")))

    @array_method
    def dtau_derivative_star(self, xi: VectorLike, eta: VectorLike, m: VectorLike) -> jax.Array:
        """ddτ(ξ, η)ᵀ dτ(ξ)ᵀ m block by block."""
        blocks = self._power.blocks
        return self._power.flat(jax.vmap(self.body.dtau_derivative_star)(blocks(xi), blocks(eta, "eta"),
                                                                         blocks(m, "m")))

    @array_method
    def ddtau_tensor(self, xi: VectorLike) -> jax.Array:
        """T[(i,a), (j,b), (k,l)] = δ_ij δ_ik T_i[a, b, l] with T_i G's tensor at ξ_i (one scatter)."""
        blocks = jnp.asarray(jax.vmap(self.body.ddtau_tensor)(self._power.blocks(xi)))
        n, d = self._power.N, self._power.group.dim
        bodies = jnp.arange(n)
        out = jnp.zeros((n, d, n, d, n, d), dtype=blocks.dtype).at[bodies, :, bodies, :, bodies, :].set(blocks)
        return out.reshape(n * d, n * d, n * d)
