"""Numerical building blocks below the groups: LU factors and solves that are safe under ``vmap``,
and the Gonzalez discrete derivative."""
