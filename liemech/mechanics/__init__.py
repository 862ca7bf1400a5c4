"""Lagrangians on configuration spaces and initial-value problems."""

from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem

__all__ = ["Lagrangian", "MechanicalSystem", "Problem"]
