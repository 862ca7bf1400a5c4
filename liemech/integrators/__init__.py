"""Integrators and the ``integrate`` driver."""

from liemech.integrators.bobenko_suris import BobenkoSurisTop
from liemech.integrators.discrete_gradient_augmented import DiscreteGradientAugmentedLagrange
from liemech.integrators.discrete_gradient_multiplier import DiscreteGradientMultiplier
from liemech.integrators.discrete_gradient_penalty import DiscreteGradientPenalty
from liemech.integrators.ggl_base import InitialGuess
from liemech.integrators.ggl_energy_momentum import GGLEnergyMomentum, GonzalezEnergyMomentum
from liemech.integrators.ggl_theta import GGLThetaA, GGLThetaB
from liemech.integrators.ggl_variational_euler import GGLVariationalEuler
from liemech.integrators.ensemble import Ensemble, MemberFailure, Sweep, integrate_ensemble
from liemech.integrators.flow import FinalState, Flow, flow
from liemech.integrators.integrate import integrate
from liemech.integrators.method import Method, NodeState, Scope, Stepper, StepReport, Traits
from liemech.integrators.midpoint_vi import MidpointVI
from liemech.integrators.rk4 import RK4
from liemech.integrators.simpson import SimpsonVI
from liemech.integrators.solution import Solution, SolverStats
from liemech.integrators.vprk import VPRK

__all__ = [
    "RK4",
    "VPRK",
    "BobenkoSurisTop",
    "DiscreteGradientAugmentedLagrange",
    "DiscreteGradientMultiplier",
    "DiscreteGradientPenalty",
    "Ensemble",
    "FinalState",
    "Flow",
    "GGLEnergyMomentum",
    "GGLThetaA",
    "GGLThetaB",
    "GGLVariationalEuler",
    "GonzalezEnergyMomentum",
    "InitialGuess",
    "MemberFailure",
    "Method",
    "MidpointVI",
    "NodeState",
    "Scope",
    "SimpsonVI",
    "Solution",
    "SolverStats",
    "StepReport",
    "Sweep",
    "Stepper",
    "Traits",
    "flow",
    "integrate",
    "integrate_ensemble",
]
