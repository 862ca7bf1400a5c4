"""An initial-value problem: a Lagrangian system with consistent initial data (g₀, μ₀)."""

from typing import Generic, TypeVar

import numpy as np

from liemech.groups.base import LieGroup
from liemech.groups.validation import checked_vector
from liemech.mechanics.lagrangian import Lagrangian
from liemech.types import Vector

P = TypeVar("P")


class Problem(Generic[P]):
    """A system with initial configuration g₀ and initial body velocity η₀ or body momentum μ₀.

    Exactly one of ``eta0`` and ``mu0`` is given; the other follows from the Legendre map
    μ₀ = ∂ℓ/∂η (g₀, η₀). g₀ is checked with ``group.check_point``.
    """

    def __init__(
        self,
        system: Lagrangian[P],
        g0: P,
        eta0: Vector | None = None,
        *,
        mu0: Vector | None = None,
    ) -> None:
        if not isinstance(system, Lagrangian):
            raise TypeError(f"system must be a Lagrangian (e.g. MechanicalSystem), got {type(system).__name__}")
        group = system.group
        self.system = system
        self.g0: P = group.check_point(g0, "g0")
        if (eta0 is None) == (mu0 is None):
            raise ValueError("give exactly one of eta0 (body velocity) and mu0 (body momentum)")
        if eta0 is not None:
            self.eta0 = checked_vector(eta0, group.dim, "eta0")
            self.mu0 = system.momentum(self.g0, self.eta0)
        else:
            self.mu0 = checked_vector(mu0, group.dim, "mu0")
            self.eta0 = system.velocity(self.g0, self.mu0)
        if not np.all(np.isfinite(self.mu0)):
            raise ValueError("the initial momentum ∂ℓ/∂η (g0, eta0) is not finite")

    @property
    def group(self) -> LieGroup[P]:
        """The configuration space."""
        return self.system.group
