"""The interface every configuration space implements, declared once.

Conventions (docs/conventions.md): algebra elements are flat float64 vectors of length ``dim``; duals are
transposes; everything is left-trivialised. A group is generic in its point type ``P``: a vector
for Rⁿ, a matrix for SO(2), SO(3), SE(2), SE(3), a tuple of factor points for a product.
"""

from abc import ABC, abstractmethod
from typing import Generic, Literal, TypeVar, cast, get_args

import jax
import jax.numpy as jnp
import numpy as np

from liemech.input_checks import checked_vector, expect_shape
from liemech.jax_support import array_method
from liemech.types import Matrix, Vector, VectorLike

P = TypeVar("P")

RetractionKind = Literal["exp", "cay"]
"""The retraction τ: the exponential map, or the Cayley map."""
RETRACTION_KINDS: tuple[RetractionKind, ...] = get_args(RetractionKind)
"""Every ``RetractionKind``: ("exp", "cay")."""


class LieGroup(ABC, Generic[P]):
    """A Lie group G with algebra 𝔤 ≅ Rᵈ, d = ``dim``.

    ``hat`` returns an algebra element in the representation of the points (a matrix for a
    matrix group, the vector itself for Rⁿ, a tuple for a product); ``vee`` inverts it.
    Operations on the hot path check shapes only; ``check_point`` checks everything.

    The operations (identity, compose, inverse, hat, vee, Ad, ad, ad_star) are pure functions of
    their arrays, written with ``jax.numpy`` and wrapped by ``array_method``: compiled integrators
    trace and differentiate them, eager callers get numpy arrays. The group is a static argument
    of every compiled operation, so it must be hashable with value equality.
    """

    @property
    @abstractmethod
    def dim(self) -> int:
        """Dimension d of the algebra 𝔤 ≅ Rᵈ."""

    @abstractmethod
    def identity(self) -> P:
        """The neutral element e."""

    @abstractmethod
    def compose(self, g: P, h: P) -> P:
        """The product g·h."""

    @abstractmethod
    def inverse(self, g: P) -> P:
        """The inverse g⁻¹."""

    @abstractmethod
    def hat(self, xi: VectorLike) -> P:
        """ξ ∈ Rᵈ ↦ ξ̂ ∈ 𝔤 in the point representation."""

    @abstractmethod
    def vee(self, X: P) -> Vector:
        """Inverse of ``hat``."""

    @array_method
    def perturbed(self, g: P, z: VectorLike) -> P:
        """g (e + ẑ): to first order in z the point g τ(z) of every retraction, the straight line
        along which the left-trivialised derivatives differentiate (``liemech.mechanics.trivialised``).
        A group with a cheaper formula for the same point overrides it."""
        step = jax.tree.map(lambda e, x: e + x, self.identity(), self.hat(z))
        return self.compose(g, step)

    @abstractmethod
    def Ad(self, g: P) -> Matrix:
        """Matrix of ξ ↦ (g ξ̂ g⁻¹)^∨."""

    @abstractmethod
    def ad(self, xi: VectorLike) -> Matrix:
        """Matrix of η ↦ [ξ, η]."""

    @array_method
    def ad_star(self, xi: VectorLike, mu: VectorLike) -> Vector:
        """``ad*_ξ μ = ad(ξ)ᵀ μ`` (no minus sign; the Euler–Poincaré force ``μ̇ = ad*_η μ + f``)."""
        expect_shape(mu, (self.dim,), "mu")
        return self.ad(xi).T @ mu

    @array_method
    def Ad_star(self, g: P, mu: VectorLike) -> Vector:
        """``Ad*_g μ = Ad(g)ᵀ μ``. Products and powers apply it block by block, without the dense
        ``Ad(g)``."""
        expect_shape(mu, (self.dim,), "mu")
        return self.Ad(g).T @ mu

    @abstractmethod
    def check_point(self, g: object, name: str = "g") -> P:
        """Return g as a point of G, or raise ValueError naming ``name`` and the violated condition."""

    def check_points(self, points: object, name: str = "g") -> P:
        """Return a stack of points (each array of a point with a leading axis of members) as
        such, every member checked as by ``check_point``; a ValueError names the first bad member,
        ``name[k]``. Groups with a vectorised check override this loop."""
        counts = {np.shape(leaf)[0] if np.ndim(leaf) else 0 for leaf in jax.tree.leaves(points)}
        if len(counts) != 1 or 0 in counts:
            raise ValueError(f"{name} must stack one or more points along a first axis of members")
        members = [self.check_point(jax.tree.map(lambda leaf: leaf[k], points), f"{name}[{k}]")
                   for k in range(counts.pop())]
        return cast(P, jax.tree.map(lambda *parts: np.stack(parts), *members))

    @abstractmethod
    def random_point(self, rng: np.random.Generator) -> P:
        """A point drawn with ``rng`` (reproducible for a seeded generator)."""

    @abstractmethod
    def retraction(self, kind: RetractionKind = "cay") -> "Retraction[P]":
        """The retraction τ: 𝔤 → G of the given kind, ``"exp"`` or ``"cay"``."""

    def check_algebra(self, xi: object, name: str = "xi") -> Vector:
        """Return ξ as a finite float64 vector of length ``dim``, or raise ValueError."""
        return checked_vector(xi, self.dim, name)


class Retraction(ABC, Generic[P]):
    """A retraction τ: 𝔤 → G with τ(0) = e, Dτ(0) = I and τ(−ξ) = τ(ξ)⁻¹, and its tangents.

    ``dtau(ξ)`` is A with d/dε τ(ξ + εv)|₀ = τ(ξ)·(A v)^ (left-trivialised tangent d^Lτ_ξ);
    ``dtau_inv(ξ)`` is A⁻¹; ``ddtau(ξ, η)`` is D with D δ = A⁻¹ · d/dε [dtau(ξ + εδ) η]|₀.
    Identities: dtau(−ξ) = Ad(τ(ξ)) dtau(ξ) and ddtau(0, η) δ = ½ [η, δ].

    Like the group operations, tau, dtau, dtau_inv, ddtau and ddtau_tensor are traceable
    ``array_method``s; ``tau_inv`` validates its point and stays numpy. Two retractions of the
    same class, group and kind are equal, so each call of ``group.retraction(kind)`` reuses the
    compiled operations.
    """

    def __init__(self, group: LieGroup[P], kind: RetractionKind) -> None:
        self._group = group
        self.kind: RetractionKind = kind

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Retraction)
            and type(other) is type(self)
            and other.group == self.group
            and other.kind == self.kind
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.group, self.kind))

    @property
    def group(self) -> LieGroup[P]:
        """The group this retraction maps into."""
        return self._group

    @abstractmethod
    def tau(self, xi: VectorLike) -> P:
        """τ(ξ)."""

    @abstractmethod
    def tau_inv(self, g: P) -> Vector:
        """τ⁻¹(g); raises ValueError where τ is not invertible (e.g. a rotation by π for cay)."""

    @abstractmethod
    def dtau(self, xi: VectorLike) -> Matrix:
        """d^Lτ_ξ: d/dε τ(ξ + εv)|₀ = τ(ξ)·(dtau(ξ) v)^."""

    @abstractmethod
    def dtau_inv(self, xi: VectorLike) -> Matrix:
        """(d^Lτ_ξ)⁻¹."""

    @abstractmethod
    def ddtau(self, xi: VectorLike, eta: VectorLike) -> Matrix:
        """dd^Lτ_ξ(η, ·): D δ = dtau(ξ)⁻¹ · d/dε [dtau(ξ + εδ) η]|₀ (Martín de Diego & Sato Martín
        de Almagro 2018, §6.1)."""

    @array_method
    def dtau_times(self, xi: VectorLike, v: VectorLike) -> Vector:
        """``dtau(ξ) v``. Products and powers apply it block by block, without the dense matrix."""
        expect_shape(v, (self.group.dim,), "v")
        return self.dtau(xi) @ v

    @array_method
    def dtau_star(self, xi: VectorLike, mu: VectorLike) -> Vector:
        """``dtau(ξ)ᵀ μ``, block by block on products and powers."""
        expect_shape(mu, (self.group.dim,), "mu")
        return self.dtau(xi).T @ mu

    @array_method
    def ddtau_star(self, xi: VectorLike, eta: VectorLike, mu: VectorLike) -> Vector:
        """``ddtau(ξ, η)ᵀ μ``, block by block on products and powers."""
        expect_shape(mu, (self.group.dim,), "mu")
        return self.ddtau(xi, eta).T @ mu

    @array_method
    def dtau_derivative_star(self, xi: VectorLike, eta: VectorLike, m: VectorLike) -> Vector:
        """``K(ξ, η)ᵀ m`` with K δ = d/dε [dtau(ξ + εδ) η]|₀ = dtau(ξ) ddtau(ξ, η) δ, i.e.
        ddtau(ξ, η)ᵀ dtau(ξ)ᵀ m: VPRK's stage term ddτ(Ξ, H)ᵀΠ at Π = dτ(Ξ)ᵀ ∂ℓ/∂η (Martín de Diego
        & Sato Martín de Almagro 2018, eq. (26)), which the closed forms give without applying dτ
        and then undoing it (dτ⁻ᵀ Π = ∂ℓ/∂η). Block by block on products and powers."""
        expect_shape(m, (self.group.dim,), "m")
        return self.ddtau_star(xi, eta, self.dtau_star(xi, m))

    @array_method
    def ddtau_tensor(self, xi: VectorLike) -> jax.Array:
        """The bilinear map ddτ(ξ, ·)(·) as an array T with T[:, :, l] = ddτ(ξ, e_l), so that
        ddτ(ξ, η) = T @ η. Retractions may override this for speed."""
        expect_shape(xi, (self.group.dim,), "xi")
        return jnp.stack([self.ddtau(xi, e) for e in np.eye(self.group.dim)], axis=2)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(group={self.group!r})"


def unknown_kind(kind: object) -> ValueError:
    """The error for a retraction kind that is not one of RETRACTION_KINDS."""
    return ValueError(f"kind must be one of {RETRACTION_KINDS}, got {kind!r}")
