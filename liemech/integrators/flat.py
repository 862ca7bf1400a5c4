"""What the embedded-coordinate schemes of papers 001–003 share: they run on Rⁿ only."""

from typing import TypeVar

from liemech.groups.euclidean import Rn
from liemech.mechanics.problem import Problem
from liemech.types import Vector

P = TypeVar("P")


def require_flat_unconstrained(problem: Problem[P], method_name: str) -> Problem[Vector]:
    """``problem`` as a problem on Rⁿ without constraints, or a clear error."""
    if not isinstance(problem.group, Rn):
        raise TypeError(f"{method_name} works on Rn(n) configuration spaces, got {problem.group!r}")
    if problem.holonomic is not None:
        raise ValueError(f"{method_name} does not handle holonomic constraints; use VPRK(lobatto(s))")
    return problem  # type: ignore[return-value]
