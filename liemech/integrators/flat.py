"""What the embedded-coordinate schemes of papers 001 and 002 share: problems on Rⁿ, checked once."""

from abc import abstractmethod
from typing import TypeVar, cast

from liemech.groups.euclidean import Rn
from liemech.integrators.method import Method, Stepper, Traits
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.types import Vector

P = TypeVar("P")


def _require_rn(problem: Problem[P], method_name: str) -> None:
    if not isinstance(problem.group, Rn):
        raise TypeError(f"{method_name} works on Rn(n) configuration spaces, got {problem.group!r}")


class FlatMethod(Method):
    """A method for unconstrained problems on Rⁿ (paper 002); other problems get a clear error."""

    def stepper(self, problem: Problem[P], h: float) -> Stepper[P]:
        _require_rn(problem, self.name)
        if problem.holonomic is not None:
            raise ValueError(f"{self.name} does not handle holonomic constraints; use VPRK(lobatto(s))")
        # On Rn the point type P is Vector.
        return cast(Stepper[P], self.flat_stepper(cast(Lagrangian[Vector], problem.system), h))

    @abstractmethod
    def flat_stepper(self, lagrangian: Lagrangian[Vector], h: float) -> Stepper[Vector]:
        """The one-step map for ``lagrangian`` on Rⁿ with step h."""


class ConstrainedFlatMethod(Method):
    """A method for ½vᵀMv − V(q) on Rⁿ with constant M and holonomic constraints g(q) = 0
    (papers 000, 001, 003); other problems get a clear error."""

    def stepper(self, problem: Problem[P], h: float) -> Stepper[P]:
        _require_rn(problem, self.name)
        if problem.holonomic is None:
            raise ValueError(f"{self.name} needs a holonomic constraint (Problem(..., holonomic=...))")
        system = problem.system
        if not isinstance(system, MechanicalSystem) or system.constant_inertia is None:
            raise TypeError(f"{self.name} needs a MechanicalSystem with a constant inertia matrix")
        # On Rn the point type P is Vector.
        stepper = self.constrained_stepper(cast(MechanicalSystem[Vector], system),
                                           cast(HolonomicConstraint[Vector], problem.holonomic),
                                           problem.n_constraints, h)
        return cast(Stepper[P], stepper)

    @abstractmethod
    def constrained_stepper(self, system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector],
                            n_constraints: int, h: float) -> Stepper[Vector]:
        """The one-step map for ``system`` with ``constraint`` (m = n_constraints) and step h."""


class EnergyConservingConstrainedMethod(ConstrainedFlatMethod):
    """A discrete-gradient method of paper 001: H = ½pᵀM⁻¹p + U(q) on Rⁿ with constant M and
    holonomic constraints; second order, energy-conserving, not symplectic."""

    exact_constraint = True
    """Whether g(q_{n+1}) = 0 holds to round-off (not for the penalty and augmented-Lagrange schemes)."""

    @property
    def traits(self) -> Traits:
        return Traits(order=2, symplectic=False, conserves_energy=True, conserves_momentum_maps=True,
                      constraints_at_step_end=("position",) if self.exact_constraint else ())


def checked_penalty(mu: object) -> float:
    """μ as a positive finite float, or ValueError."""
    if isinstance(mu, bool) or not isinstance(mu, (int, float)) or not (0.0 < float(mu) < float("inf")):
        raise ValueError(f"mu must be a positive finite penalty parameter, got {mu!r}")
    return float(mu)
