"""Forces in the variational integrator (the discrete Lagrange–d'Alembert principle): the energy
balance E(t) − E(0) = W(t), with W the work of the external force.

1. Two coupled oscillators (quadratic energy) with nonlinear damping and a periodic drive: the
   Gauss VPRK methods are collocation methods and keep the balance to round-off.
2. The heavy top with a damping torque −0.4Ω and a periodic drive: Lobatto-s keeps the balance to
   its order 2s − 2; the run prints the dissipated work and the balance defect for two step sizes.

Run: .venv/bin/python examples/damped_top.py
"""

import os

import jax
import jax.numpy as jnp
import numpy as np

import liemech as lm
from liemech.groups.so3 import exp_matrix
from liemech.systems import HeavyTop

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: Gauss-1 and Lobatto-2 only, the top up to T = 2
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"

MASS, STIFFNESS = np.diag([1.0, 2.0]), np.array([[2.0, 0.5], [0.5, 1.0]])


def oscillator_force(q: lm.Vector, v: lm.Vector, t: float) -> jax.Array:
    """F = −0.3 (1 + |v|²) v + 0.8 cos(1.7t) e₁."""
    return jnp.asarray(-0.3 * (1.0 + v @ v) * v) + 0.8 * jnp.cos(1.7 * t) * jnp.array([1.0, 0.0])


def top_force(R: lm.Matrix, omega: lm.Vector, t: float) -> jax.Array:
    """F = −0.4 Ω + 0.5 sin(2t) e₁ (body torque)."""
    return jnp.asarray(-0.4 * omega) + 0.5 * jnp.sin(2.0 * t) * jnp.array([1.0, 0.0, 0.0])


def balance_defect(energies: lm.Vector, work: lm.Vector) -> float:
    """max_k |E_k − E_0 − W_k| (the work at t₀ is 0)."""
    return float(np.max(np.abs(energies - energies[0] - np.concatenate([[0.0], work]))))


def main() -> None:
    oscillators = lm.MechanicalSystem(lm.Rn(2), MASS, lambda q: 0.5 * q @ STIFFNESS @ q)
    driven = lm.Problem(oscillators, np.array([1.0, -0.5]), np.array([0.3, 1.2]), force=oscillator_force)
    print("coupled oscillators, h = 0.05, 400 steps")
    for s in (1,) if FAST else (1, 2, 3):
        sol = lm.integrate(driven, lm.VPRK(lm.gauss(s)), h=0.05, n_steps=400)
        E = np.array([0.5 * p @ np.linalg.solve(MASS, p) + 0.5 * q @ STIFFNESS @ q for q, p in zip(sol.g, sol.mu)])
        print(f"  Gauss-{s}: work of the force {sol.extras['work'][-1]:+.6f}, "
              f"max |E − E0 − W| = {balance_defect(E, sol.extras['work']):.1e}")
    top = HeavyTop()
    problem = lm.Problem(top.system(), exp_matrix(top.rotation0), top.omega0, force=top_force)
    print("damped, driven heavy top, T = 20")
    for s in (2,) if FAST else (2, 3):
        for h in (0.05,) if FAST else (0.05, 0.025):
            sol = lm.integrate(problem, lm.VPRK(lm.lobatto(s)), h=h, t_final=2.0 if FAST else 20.0)
            E = np.array([top.energy(R, mu) for R, mu in zip(sol.g, sol.mu)])
            print(f"  Lobatto-{s}, h = {h}: E(20) − E(0) = {E[-1] - E[0]:+.6f}, "
                  f"max |E − E0 − W| = {balance_defect(E, sol.extras['work']):.2e}")


if __name__ == "__main__":
    main()
