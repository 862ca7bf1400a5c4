"""A catalogue of mechanical problems with parameters, initial data and reference solutions."""

from liemech.systems.heavy_top import HeavyTop
from liemech.systems.henon_heiles import HenonHeiles

__all__ = ["HeavyTop", "HenonHeiles"]
