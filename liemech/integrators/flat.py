"""What the embedded-coordinate schemes of paper 002 share: unconstrained problems on Rⁿ."""

from abc import abstractmethod
from typing import TypeVar, cast

from liemech.groups.euclidean import Rn
from liemech.integrators.method import Method, Stepper
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.problem import Problem
from liemech.types import Vector

P = TypeVar("P")


class FlatMethod(Method):
    """A method for unconstrained problems on Rⁿ; other problems get a clear error."""

    def stepper(self, problem: Problem[P], h: float) -> Stepper[P]:
        if not isinstance(problem.group, Rn):
            raise TypeError(f"{self.name} works on Rn(n) configuration spaces, got {problem.group!r}")
        if problem.holonomic is not None:
            raise ValueError(f"{self.name} does not handle holonomic constraints; use VPRK(lobatto(s))")
        # On Rn the point type P is Vector.
        return cast(Stepper[P], self.flat_stepper(cast(Lagrangian[Vector], problem.system), h))

    @abstractmethod
    def flat_stepper(self, lagrangian: Lagrangian[Vector], h: float) -> Stepper[Vector]:
        """The one-step map for ``lagrangian`` on Rⁿ with step h."""
