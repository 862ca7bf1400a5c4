"""liemech: structure-preserving mechanics on Lie groups."""

from liemech.groups import (
    RETRACTION_KINDS,
    SE2,
    SE3,
    SO2,
    SO3,
    LieGroup,
    MatrixCayley,
    Point,
    ProductGroup,
    ProductPoint,
    Retraction,
    RetractionKind,
    Rn,
)
from liemech.integrators import RK4, VPRK, Method, MidpointVI, SimpsonVI, Solution, SolverStats, Traits, integrate
from liemech.mechanics import HolonomicConstraint, Lagrangian, MechanicalSystem, Problem, project_to_constraints
from liemech.solvers import ConvergenceError, NewtonOptions
from liemech.tableaux import Tableau, TableauPair, gauss, lobatto, radau_iia
from liemech.types import Matrix, Tensor, Vector

__all__ = [
    "RETRACTION_KINDS",
    "RK4",
    "SE2",
    "SE3",
    "SO2",
    "SO3",
    "VPRK",
    "ConvergenceError",
    "HolonomicConstraint",
    "Lagrangian",
    "LieGroup",
    "Matrix",
    "MatrixCayley",
    "MechanicalSystem",
    "Method",
    "MidpointVI",
    "NewtonOptions",
    "Point",
    "Problem",
    "ProductGroup",
    "ProductPoint",
    "Retraction",
    "RetractionKind",
    "Rn",
    "SimpsonVI",
    "Solution",
    "SolverStats",
    "Tableau",
    "TableauPair",
    "Tensor",
    "Traits",
    "Vector",
    "gauss",
    "integrate",
    "lobatto",
    "project_to_constraints",
    "radau_iia",
]
