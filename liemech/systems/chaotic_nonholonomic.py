"""A fully chaotic nonholonomic system on Rⁿ, n = 2m + 1 (Martín de Diego & Sato Martín de Almagro
2018, §7.3, after McLachlan & Perlmutter): ℓ = ½|v|² − U(q) with
U = ½(|q|² + q_{m+2}² q_{m+3}² + Σ_{i=1}^m q_{1+i}² q_{m+1+i}²) and φ = v₁ + Σ_{i=m+2}^n q_i v_i (1-based).
The ensemble of Jay (2009): q₀(j) = (cos(jπ/2J), 0.6, 0.4, 0.2, 1, 1, 1), v₀(j) = (0, sin(jπ/2J), 0, …),
all on the energy sheet E = 3.06 for m = 3.
"""

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.euclidean import Rn
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.nonholonomic import NonholonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.methods.method import Method
from liemech.run.ensemble import integrate_ensemble
from liemech.systems.built_once import built_once
from liemech.types import Matrix, Vector


@dataclass(frozen=True)
class ChaoticNonholonomic:
    m: int = 3

    @property
    def n(self) -> int:
        return 2 * self.m + 1

    def _pairs(self) -> list[tuple[int, int]]:
        """0-based index pairs (a, b) of the quartic terms q_a² q_b²."""
        m = self.m
        return [(m + 1, m + 2)] + [(i, m + i) for i in range(1, m + 1)]

    def potential(self, q: Vector) -> jax.Array:
        """U(q), traceable by JAX (the quartic terms gathered at once: a step traces U dozens of
        times, under several transformations)."""
        a, b = np.array(self._pairs()).T
        x = jnp.asarray(q)
        return 0.5 * (jnp.dot(x, x) + jnp.sum(x[a] ** 2 * x[b] ** 2))

    def potential_gradient(self, q: Vector) -> Vector:
        grad = np.array(q, dtype=np.float64)
        for a, b in self._pairs():
            grad[a] += q[a] * q[b] ** 2
            grad[b] += q[b] * q[a] ** 2
        return grad

    def potential_hessian(self, q: Vector) -> Matrix:
        hess = np.eye(self.n)
        for a, b in self._pairs():
            hess[a, a] += q[b] ** 2
            hess[b, b] += q[a] ** 2
            hess[a, b] += 2.0 * q[a] * q[b]
            hess[b, a] += 2.0 * q[a] * q[b]
        return hess

    @property
    def _tail(self) -> slice:
        """The 0-based indices m + 1 … n − 1 of the terms q_i v_i of φ."""
        return slice(self.m + 1, self.n)

    def phi(self, q: Vector, v: Vector) -> jax.Array:
        """φ(q, v) = v₁ + Σ_{i=m+2}^n q_i v_i, traceable by JAX."""
        tail = self._tail
        return jnp.array([v[0] + jnp.dot(q[tail], v[tail])])

    def phi_d_eta(self, q: Vector, v: Vector) -> Matrix:
        """∂φ/∂v = (1, 0, …, 0, q_{m+2}, …, q_n)."""
        tail = self._tail
        row = np.zeros((1, self.n))
        row[0, 0] = 1.0
        row[0, tail] = q[tail]
        return row

    def phi_d_g(self, q: Vector, v: Vector) -> Matrix:
        """∂φ/∂q = (0, …, 0, v_{m+2}, …, v_n)."""
        tail = self._tail
        row = np.zeros((1, self.n))
        row[0, tail] = v[tail]
        return row

    @built_once
    def constraint(self) -> NonholonomicConstraint[Vector]:
        return NonholonomicConstraint(self.phi, self.phi_d_eta, self.phi_d_g)

    @built_once
    def system(self) -> MechanicalSystem[Vector]:
        return MechanicalSystem(Rn(self.n), np.eye(self.n), self.potential, self.potential_gradient,
                                self.potential_hessian)

    def problem(self, j: int, J: int) -> Problem[Vector]:
        """Member j of the ensemble j = 0..J on the energy sheet E = 3.06 (m = 3)."""
        q0 = np.concatenate([[math.cos(j * math.pi / (2 * J))], [0.6, 0.4, 0.2][: self.m], np.ones(self.m)])
        v0 = np.zeros(self.n)
        v0[1] = math.sin(j * math.pi / (2 * J))
        return Problem(self.system(), q0, v0, nonholonomic=self.constraint())

    def energy(self, q: Vector, v: Vector) -> float:
        return 0.5 * float(v @ v) + float(self.potential(q))


def mean_squared_energy_error(system: ChaoticNonholonomic, method: Method, h: float, n_steps: int, J: int,
                              *, progress: bool = False) -> Vector:
    """μ(E, k) = (1/(J+1)) Σ_j (E_jk − E_j0)², k = 0..n_steps (Martín de Diego & Sato Martín de
    Almagro 2018, §7.3), over the members j = 0..J run as one ensemble."""
    members = [system.problem(j, J) for j in range(J + 1)]
    initial = (np.stack([p.g0 for p in members]), np.stack([p.eta0 for p in members]))

    def energy(lagrangian: Lagrangian[Vector], q: Vector, mu: jax.Array, v: jax.Array) -> jax.Array:
        return mu @ v - lagrangian.lagrangian(q, v)

    ensemble = integrate_ensemble(members[0], method, h, n_steps=n_steps, initial=initial,
                                  observables={"energy": energy}, progress=progress)
    if not np.all(ensemble.converged):
        raise ensemble.failures()[0].error
    E = ensemble.observables["energy"]
    return np.asarray(np.mean((E - E[:, :1]) ** 2, axis=0), dtype=np.float64)
