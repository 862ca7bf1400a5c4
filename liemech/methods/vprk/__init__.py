"""Variational partitioned Runge–Kutta methods on Lie groups (Martín de Diego & Sato Martín de
Almagro 2018): the scheme, and the reverse-mode JVP of its consistent nonholonomic multiplier."""
