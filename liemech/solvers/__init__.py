"""Nonlinear solvers shared by every implicit method."""

from liemech.solvers.newton import ConvergenceError, NewtonOptions, NewtonResult, solve

__all__ = ["ConvergenceError", "NewtonOptions", "NewtonResult", "solve"]
