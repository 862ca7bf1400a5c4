"""What runs any method: ``integrate`` (one trajectory), ``flow`` (a traceable run for
sensitivities), ``integrate_ensemble`` (many members, in one process, worker processes or on Dask),
and the ``Solution`` they return with its interpolation."""

from liemech.run.ensemble import Ensemble, MemberFailure, Sweep, integrate_ensemble
from liemech.run.flow import FinalState, Flow, flow
from liemech.run.integrate import integrate
from liemech.run.solution import Solution, SolverStats

__all__ = [
    "Ensemble",
    "FinalState",
    "Flow",
    "MemberFailure",
    "Solution",
    "SolverStats",
    "Sweep",
    "flow",
    "integrate",
    "integrate_ensemble",
]
