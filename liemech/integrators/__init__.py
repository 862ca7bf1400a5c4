"""Integrators and the ``integrate`` driver."""

from liemech.integrators.integrate import integrate
from liemech.integrators.method import Method, NodeState, Stepper, StepReport, Traits
from liemech.integrators.solution import Solution, SolverStats
from liemech.integrators.vprk import VPRK

__all__ = ["Method", "NodeState", "Solution", "SolverStats", "StepReport", "Stepper", "Traits", "VPRK", "integrate"]
