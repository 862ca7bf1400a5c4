"""The interface an integrator needs from a trivialised Lagrangian ℓ(g, η) on G × 𝔤."""

from abc import ABC, abstractmethod
from typing import Generic, TypeVar

from liemech.groups.base import LieGroup
from liemech.types import Matrix, Vector

P = TypeVar("P")


class Lagrangian(ABC, Generic[P]):
    """ℓ: G × 𝔤 → R with its first and second derivatives, all left-trivialised.

    μ = ∂ℓ/∂η; f = L*_g D₁ℓ with ⟨f, ζ⟩ = d/dε ℓ(g τ(εζ), η)|₀; the ``*_d_g`` derivatives are
    trivialised the same way: (d_g X)ζ = d/dε X(g τ(εζ), η)|₀. Continuous equations (spec 004-Lie
    §2.1): μ̇ = ad*_η μ + f, ġ = g η.
    """

    @property
    @abstractmethod
    def group(self) -> LieGroup[P]:
        """The configuration space G."""

    @abstractmethod
    def value(self, g: P, eta: Vector) -> float:
        """ℓ(g, η)."""

    @abstractmethod
    def momentum(self, g: P, eta: Vector) -> Vector:
        """μ = ∂ℓ/∂η (g, η)."""

    @abstractmethod
    def velocity(self, g: P, mu: Vector) -> Vector:
        """The inverse Legendre map: η with ∂ℓ/∂η (g, η) = μ."""

    @abstractmethod
    def force(self, g: P, eta: Vector) -> Vector:
        """f = L*_g D₁ℓ (g, η)."""

    @abstractmethod
    def momentum_d_eta(self, g: P, eta: Vector) -> Matrix:
        """∂μ/∂η = ∂²ℓ/∂η² (the mass matrix)."""

    @abstractmethod
    def momentum_d_g(self, g: P, eta: Vector) -> Matrix:
        """ζ ↦ d/dε μ(g τ(εζ), η)|₀."""

    @abstractmethod
    def force_d_eta(self, g: P, eta: Vector) -> Matrix:
        """δ ↦ d/dε f(g, η + εδ)|₀."""

    @abstractmethod
    def force_d_g(self, g: P, eta: Vector) -> Matrix:
        """ζ ↦ d/dε f(g τ(εζ), η)|₀."""

    def energy(self, g: P, eta: Vector) -> float:
        """E = ⟨μ, η⟩ − ℓ."""
        return float(self.momentum(g, eta) @ eta) - self.value(g, eta)
