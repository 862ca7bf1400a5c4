"""A catalogue of mechanical problems with parameters, initial data and reference solutions."""

from liemech.systems.ball_on_turntable import BallOnTurntable
from liemech.systems.cartesian_pendulum import CartesianPendulum
from liemech.systems.chaotic_nonholonomic import ChaoticNonholonomic
from liemech.systems.chaplygin_sleigh import ChaplyginSleigh
from liemech.systems.cvt import CVT
from liemech.systems.director_top import DirectorTop
from liemech.systems.double_pendulum import DoublePendulum
from liemech.systems.double_spherical_pendulum import DoubleSphericalPendulum
from liemech.systems.four_particles import FourParticles
from liemech.systems.gyroscopic_top import GyroscopicTop
from liemech.systems.heavy_top import HeavyTop
from liemech.systems.heavy_top_constrained import ConstrainedHeavyTop
from liemech.systems.henon_heiles import HenonHeiles
from liemech.systems.lagrange_top import LagrangeTop
from liemech.systems.nonholonomic_particle import NonholonomicParticle
from liemech.systems.pendulum import Pendulum
from liemech.systems.reduced_lagrange_top import ReducedLagrangeTop
from liemech.systems.rolling_ball import RollingBall
from liemech.systems.rolling_body import RollingBody
from liemech.systems.rolling_disc import RollingDisc, SteadyRolling
from liemech.systems.rolling_plane import Plane
from liemech.systems.spherical_pendulum import SphericalPendulum
from liemech.systems.vertical_disc import VerticalDisc

__all__ = [
    "BallOnTurntable",
    "CVT",
    "CartesianPendulum",
    "ChaoticNonholonomic",
    "ChaplyginSleigh",
    "ConstrainedHeavyTop",
    "DirectorTop",
    "DoublePendulum",
    "DoubleSphericalPendulum",
    "FourParticles",
    "GyroscopicTop",
    "HeavyTop",
    "HenonHeiles",
    "LagrangeTop",
    "NonholonomicParticle",
    "Pendulum",
    "Plane",
    "ReducedLagrangeTop",
    "RollingBall",
    "RollingBody",
    "RollingDisc",
    "SphericalPendulum",
    "SteadyRolling",
    "VerticalDisc",
]
