"""What the matrix groups SO(2), SO(3), SE(2), SE(3) share: points are size×size matrices,
the product is the matrix product, and each group holds one retraction object per kind."""

from abc import abstractmethod

import jax
import jax.numpy as jnp

from liemech.groups.base import RETRACTION_KINDS, LieGroup, Retraction, RetractionKind, unknown_kind
from liemech.input_checks import expect_shape
from liemech.jax_support import array_method
from liemech.types import Matrix


class MatrixGroup(LieGroup[Matrix]):
    """A group of ``size``×``size`` matrices with g·h the matrix product."""

    size: int

    def __init__(self) -> None:
        self._retractions = self._make_retractions()

    @abstractmethod
    def _make_retractions(self) -> dict[RetractionKind, Retraction[Matrix]]:
        """One retraction per kind in RETRACTION_KINDS, built once."""

    def retraction(self, kind: RetractionKind = "cay") -> Retraction[Matrix]:
        if kind not in RETRACTION_KINDS:
            raise unknown_kind(kind)
        return self._retractions[kind]

    @array_method
    def identity(self) -> jax.Array:
        return jnp.eye(self.size)

    @array_method
    def compose(self, g: Matrix, h: Matrix) -> Matrix:
        expect_shape(g, (self.size, self.size), "g")
        expect_shape(h, (self.size, self.size), "h")
        # Products and a sum, not a matmul: under a step's vmaps (tangents, stages, bodies) XLA
        # transposes the operands of a batched small dot around it.
        product: Matrix = (g[:, :, None] * h[None, :, :]).sum(axis=1)
        return product

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self).__name__)
