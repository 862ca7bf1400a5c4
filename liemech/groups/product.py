"""Direct products G₁ × … × G_k: points are tuples, algebra vectors are concatenated,
and every operator (Ad, ad, dτ, dτ⁻¹, ddτ(·, η)) is block-diagonal."""

from collections.abc import Iterable, Sequence
from typing import TypeAlias, cast, overload

import jax
import jax.numpy as jnp
import jax.scipy.linalg
import numpy as np
from jax.typing import ArrayLike
from typing_extensions import TypeVar

from liemech.groups.base import RETRACTION_KINDS, LieGroup, Retraction, RetractionKind, unknown_kind
from liemech.input_checks import expect_shape
from liemech.jax_support import array_method
from liemech.types import Vector, VectorLike

Point: TypeAlias = "Vector | tuple[Point, ...]"
"""A point of any configuration space: an array, or a tuple of points for a product."""

ProductPoint: TypeAlias = tuple[Point, ...]
"""A point of a product group whose factors are not spelled out: a tuple of points."""

A = TypeVar("A", bound=Point)
B = TypeVar("B", bound=Point)
C = TypeVar("C", bound=Point)
D = TypeVar("D", bound=Point)
# The point type of a product: tuple[Matrix, Vector] for SO(3) × R³. The default keeps a bare
# ``ProductGroup`` annotation meaning a product of any factors.
PP = TypeVar("PP", bound=ProductPoint, default=ProductPoint)

# A factor is any group; the point type differs between factors, so they are held untyped.
_Factor: TypeAlias = LieGroup[Point]


class ProductGroup(LieGroup[PP]):
    """G₁ × … × G_k with ξ = (ξ₁, …, ξ_k) and g = (g₁, …, g_k).

    The point type follows the factors: ``ProductGroup(SO3(), Rn(3))`` is a
    ``LieGroup[tuple[Matrix, Vector]]``, so ``R, x = g`` gives a matrix and a vector (up to four
    factors of any kinds, or any number of factors with one point type)."""

    @overload
    def __init__(self: "ProductGroup[tuple[A]]", g1: LieGroup[A], /) -> None: ...
    @overload
    def __init__(self: "ProductGroup[tuple[A, B]]", g1: LieGroup[A], g2: LieGroup[B], /) -> None: ...
    @overload
    def __init__(
        self: "ProductGroup[tuple[A, B, C]]", g1: LieGroup[A], g2: LieGroup[B], g3: LieGroup[C], /
    ) -> None: ...
    @overload
    def __init__(
        self: "ProductGroup[tuple[A, B, C, D]]",
        g1: LieGroup[A], g2: LieGroup[B], g3: LieGroup[C], g4: LieGroup[D], /,
    ) -> None: ...
    @overload
    def __init__(self: "ProductGroup[tuple[A, ...]]", *factors: LieGroup[A]) -> None: ...
    def __init__(self, *factors: object) -> None:
        if not factors:
            raise ValueError("factors: a product needs at least one factor group")
        for i, f in enumerate(factors):
            if not isinstance(f, LieGroup):
                raise TypeError(f"factors[{i}] must be a LieGroup, got {type(f).__name__}")
        self.factors: tuple[_Factor, ...] = tuple(cast(_Factor, f) for f in factors)
        dims = [f.dim for f in self.factors]
        self._dim = sum(dims)
        edges = np.cumsum([0, *dims])
        self._slices = tuple(slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]))

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def slices(self) -> tuple[slice, ...]:
        """The slice of an algebra vector that belongs to each factor."""
        return self._slices

    def __repr__(self) -> str:
        return f"ProductGroup({', '.join(map(repr, self.factors))})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProductGroup) and other.factors == self.factors

    def __hash__(self) -> int:
        return hash(("ProductGroup", self.factors))

    def _points(self, g: PP, name: str) -> PP:
        if not isinstance(g, tuple) or len(g) != len(self.factors):
            raise ValueError(f"{name} must be a tuple of {len(self.factors)} factor points")
        return g

    def _pack(self, parts: Iterable[Point]) -> PP:
        # The factors are held untyped; the overloads of __init__ tie their points to PP.
        return cast(PP, tuple(parts))

    def split(self, xi: VectorLike, name: str = "xi") -> list[VectorLike]:
        """The factors' parts (ξ₁, …, ξ_k) of an algebra vector."""
        expect_shape(xi, (self._dim,), name)
        return [xi[s] for s in self._slices]

    @array_method
    def identity(self) -> PP:
        return self._pack(f.identity() for f in self.factors)

    @array_method
    def compose(self, g: PP, h: PP) -> PP:
        g, h = self._points(g, "g"), self._points(h, "h")
        return self._pack(f.compose(a, b) for f, a, b in zip(self.factors, g, h))

    @array_method
    def inverse(self, g: PP) -> PP:
        g = self._points(g, "g")
        return self._pack(f.inverse(a) for f, a in zip(self.factors, g))

    @array_method
    def hat(self, xi: VectorLike) -> PP:
        return self._pack(f.hat(x) for f, x in zip(self.factors, self.split(xi)))

    @array_method
    def vee(self, X: PP) -> jax.Array:
        X = self._points(X, "X")
        return jnp.concatenate([f.vee(a) for f, a in zip(self.factors, X)])

    @array_method
    def perturbed(self, g: PP, z: VectorLike) -> PP:
        g = self._points(g, "g")
        return self._pack(f.perturbed(a, x) for f, a, x in zip(self.factors, g, self.split(z, "z")))

    @array_method
    def Ad(self, g: PP) -> jax.Array:
        g = self._points(g, "g")
        return block_diagonal([f.Ad(a) for f, a in zip(self.factors, g)])

    @array_method
    def ad(self, xi: VectorLike) -> jax.Array:
        return block_diagonal([f.ad(x) for f, x in zip(self.factors, self.split(xi))])

    @array_method
    def ad_star(self, xi: VectorLike, mu: VectorLike) -> jax.Array:
        parts = zip(self.factors, self.split(xi), self.split(mu, "mu"))
        return jnp.concatenate([f.ad_star(x, m) for f, x, m in parts])

    @array_method
    def Ad_star(self, g: PP, mu: VectorLike) -> jax.Array:
        """Ad*_g μ factor by factor, without the block-diagonal Ad(g)."""
        g = self._points(g, "g")
        return jnp.concatenate([f.Ad_star(a, m) for f, a, m in zip(self.factors, g, self.split(mu, "mu"))])

    def check_point(self, g: object, name: str = "g") -> PP:
        parts = self._factor_parts(g, name, "factor points")
        return self._pack(f.check_point(a, f"{name}[{i}]") for i, (f, a) in enumerate(zip(self.factors, parts)))

    def check_points(self, points: object, name: str = "g") -> PP:
        """A tuple of the factors' stacks of points, each checked by its factor's ``check_points``."""
        parts = self._factor_parts(points, name, "stacks of factor points")
        stacks = [f.check_points(a, f"{name}[{i}]") for i, (f, a) in enumerate(zip(self.factors, parts))]
        counts = [len(jax.tree.leaves(stack)[0]) for stack in stacks]
        if len(set(counts)) != 1:
            raise ValueError(f"the factors of {name} must stack as many members each, got {counts}")
        return self._pack(stacks)

    def _factor_parts(self, g: object, name: str, what: str) -> Sequence[object]:
        if not isinstance(g, Sequence) or isinstance(g, np.ndarray) or len(g) != len(self.factors):
            raise ValueError(
                f"{name} must be a tuple of {len(self.factors)} {what} "
                f"({', '.join(map(repr, self.factors))}), got {type(g).__name__}"
            )
        return g

    def random_point(self, rng: np.random.Generator) -> PP:
        return self._pack(f.random_point(rng) for f in self.factors)

    def retraction(self, kind: RetractionKind = "cay") -> "ProductRetraction[PP]":
        if kind not in RETRACTION_KINDS:
            raise unknown_kind(kind)
        return ProductRetraction(self, kind)


def block_diagonal(blocks: Sequence[ArrayLike]) -> jax.Array:
    """The block-diagonal matrix diag(B₁, …, B_k) of square blocks."""
    out: jax.Array = jax.scipy.linalg.block_diag(*blocks)  # typed as returning Any
    return out


class ProductRetraction(Retraction[PP]):
    """τ(ξ) = (τ₁(ξ₁), …, τ_k(ξ_k)) with the factors' retractions of the same kind."""

    def __init__(self, group: ProductGroup[PP], kind: RetractionKind) -> None:
        super().__init__(group, kind)
        self._product = group
        self.factors: tuple[Retraction[Point], ...] = tuple(f.retraction(kind) for f in group.factors)

    @array_method
    def tau(self, xi: VectorLike) -> PP:
        return self._product._pack(r.tau(x) for r, x in zip(self.factors, self._product.split(xi)))

    def tau_inv(self, g: PP) -> Vector:
        g = self._product.check_point(g)
        return np.concatenate([r.tau_inv(a) for r, a in zip(self.factors, g)])

    @array_method
    def dtau(self, xi: VectorLike) -> jax.Array:
        return block_diagonal([r.dtau(x) for r, x in zip(self.factors, self._product.split(xi))])

    @array_method
    def dtau_inv(self, xi: VectorLike) -> jax.Array:
        return block_diagonal([r.dtau_inv(x) for r, x in zip(self.factors, self._product.split(xi))])

    @array_method
    def ddtau(self, xi: VectorLike, eta: VectorLike) -> jax.Array:
        parts = zip(self.factors, self._product.split(xi), self._product.split(eta, "eta"))
        return block_diagonal([r.ddtau(x, e) for r, x, e in parts])

    @array_method
    def dtau_times(self, xi: VectorLike, v: VectorLike) -> jax.Array:
        """dτ(ξ) v factor by factor, without the block-diagonal dτ(ξ)."""
        split = self._product.split
        return jnp.concatenate([r.dtau_times(x, w) for r, x, w in zip(self.factors, split(xi), split(v, "v"))])

    @array_method
    def dtau_star(self, xi: VectorLike, mu: VectorLike) -> jax.Array:
        """dτ(ξ)ᵀ μ factor by factor."""
        split = self._product.split
        return jnp.concatenate([r.dtau_star(x, m) for r, x, m in zip(self.factors, split(xi), split(mu, "mu"))])

    @array_method
    def ddtau_star(self, xi: VectorLike, eta: VectorLike, mu: VectorLike) -> jax.Array:
        """ddτ(ξ, η)ᵀ μ factor by factor."""
        split = self._product.split
        parts = zip(self.factors, split(xi), split(eta, "eta"), split(mu, "mu"))
        return jnp.concatenate([r.ddtau_star(x, e, m) for r, x, e, m in parts])

    @array_method
    def dtau_derivative_star(self, xi: VectorLike, eta: VectorLike, m: VectorLike) -> jax.Array:
        """ddτ(ξ, η)ᵀ dτ(ξ)ᵀ m factor by factor."""
        split = self._product.split
        parts = zip(self.factors, split(xi), split(eta, "eta"), split(m, "m"))
        return jnp.concatenate([r.dtau_derivative_star(x, e, p) for r, x, e, p in parts])
