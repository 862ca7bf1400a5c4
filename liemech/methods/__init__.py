"""The numerical methods, one subpackage per family, and the interface every method offers the
drivers in ``liemech.run``: traits and a compiled one-step map (``method.py``, ``compiled.py``).

- ``vprk``: variational partitioned Runge–Kutta methods on any configuration space (Martín de
  Diego & Sato Martín de Almagro 2018);
- ``ggl``: GGL-stabilised variational and energy–momentum schemes (Kinon, Betsch & Schneider 2023);
- ``discrete_gradient``: energy-conserving schemes of Leyendecker, Betsch & Steinmann (2004);
- ``variational``: Simpson and midpoint variational integrators (Rojas-Quintero, Dubois & Jourdan
  2025) and the Bobenko–Suris scheme for the Lagrange top;
- ``classical``: explicit Runge–Kutta of order 4;
- ``splitting``: explicit symplectic splitting and composition methods for a constant inertia (kick and
  free flow; Dullweber, Leimkuhler & McLachlan 1997, Fassò 2003, Yoshida 1990, McLachlan 1995,
  Kahan & Li 1997, Blanes & Moan 2002).
"""

from liemech.methods.classical.rk4 import RK4
from liemech.methods.discrete_gradient.augmented import DiscreteGradientAugmentedLagrange
from liemech.methods.discrete_gradient.multiplier import DiscreteGradientMultiplier
from liemech.methods.discrete_gradient.penalty import DiscreteGradientPenalty
from liemech.methods.ggl.base import InitialGuess
from liemech.methods.ggl.energy_momentum import GGLEnergyMomentum, GonzalezEnergyMomentum
from liemech.methods.ggl.theta import GGLThetaA, GGLThetaB
from liemech.methods.ggl.variational_euler import GGLVariationalEuler
from liemech.methods.method import Method, NodeState, Scope, Traits
from liemech.methods.splitting.coefficients import COMPOSITIONS as SPLITTING_COMPOSITIONS
from liemech.methods.splitting.coefficients import Composition as SplittingComposition
from liemech.methods.splitting.scheme import Splitting
from liemech.methods.variational.bobenko_suris import BobenkoSurisTop
from liemech.methods.variational.midpoint import MidpointVI
from liemech.methods.variational.simpson import SimpsonVI
from liemech.methods.vprk.scheme import VPRK

__all__ = [
    "RK4",
    "SPLITTING_COMPOSITIONS",
    "VPRK",
    "BobenkoSurisTop",
    "DiscreteGradientAugmentedLagrange",
    "DiscreteGradientMultiplier",
    "DiscreteGradientPenalty",
    "GGLEnergyMomentum",
    "GGLThetaA",
    "GGLThetaB",
    "GGLVariationalEuler",
    "GonzalezEnergyMomentum",
    "InitialGuess",
    "Method",
    "MidpointVI",
    "NodeState",
    "Scope",
    "SimpsonVI",
    "Splitting",
    "SplittingComposition",
    "Traits",
]
