"""Nonlinear solvers shared by every implicit method."""

from liemech.solvers.newton import ConvergenceError, NewtonOptions

__all__ = ["ConvergenceError", "NewtonOptions"]
