"""A catalogue of mechanical problems with parameters, initial data and reference solutions."""

from liemech.systems.heavy_top import HeavyTop
from liemech.systems.henon_heiles import HenonHeiles
from liemech.systems.pendulum import Pendulum

__all__ = ["HeavyTop", "HenonHeiles", "Pendulum"]
