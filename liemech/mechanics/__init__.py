"""Lagrangians on configuration spaces, constraints and initial-value problems."""

from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.invariant_potential import QuadraticInvariantPotential
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.nonholonomic import NonholonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.mechanics.projection import project_to_constraints
from liemech.mechanics.sparsity import BodySparsity
from liemech.mechanics.system import MechanicalSystem

__all__ = [
    "BodySparsity",
    "HolonomicConstraint",
    "Lagrangian",
    "MechanicalSystem",
    "NonholonomicConstraint",
    "Problem",
    "QuadraticInvariantPotential",
    "project_to_constraints",
]
