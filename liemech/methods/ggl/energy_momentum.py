"""Energy–momentum schemes with Gonzalez discrete derivatives D̄ (Kinon, Betsch & Schneider 2023,
§5 and §6.3).

EM, the GGL energy–momentum scheme (ibid., eq. (84)), for constant M (v = M⁻¹p eliminated):

    q^{n+1} − qⁿ = h M⁻¹p^{n+½} + h (D̄_p g^v)ᵀγ                                   (84a, c)
    p^{n+1} − pⁿ = −h D̄V + h D̄gᵀλ − h (D̄_q g^v)ᵀγ                                 (84b)
    g(q^{n+1}) = 0,   g^v(q^{n+1}, p^{n+1}) = G(q^{n+1}) M⁻¹p^{n+1} = 0               (84d, e)

EM-G, Gonzalez's 1999 scheme, drops γ and the secondary constraint (84e). λ has liemech's plus
sign (λ = −λ_paper). D̄ is the Gonzalez discrete derivative f ↦ ∇f(mid) + S(Δ)Δ (exact:
D̄f·Δ = f(y) − f(x)): D̄g row by row over Δq, D̄g^v over Δz = (Δq, Δp); both reduce to the midpoint
forms (ibid., eq. (99)) for quadratic constraints, where S vanishes. D̄V is the generic Gonzalez formula,
or the invariant form (126) of a ``QuadraticInvariantPotential``, which also conserves the momentum
maps of the symmetries that leave its invariants unchanged (the generic one need not).
Both schemes conserve H = ½pᵀM⁻¹p + V to round-off (given consistent data), are second order in q
and p and first order in λ, and are not symplectic; they conserve momentum maps only with
``invariants`` (``traits.conserves_momentum_maps`` says which).
"""

from typing import TypeVar

import jax
import jax.numpy as jnp
import numpy as np

from liemech.mechanics.invariant_potential import QuadraticInvariantPotential
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.methods.ggl.base import GGLEquations, GGLMethod, InitialGuess
from liemech.methods.method import Traits
from liemech.numerics.discrete_derivative import discrete_derivative
from liemech.solvers.newton import NewtonOptions
from liemech.types import VectorLike

P = TypeVar("P")


def _check_invariants(invariants: QuadraticInvariantPotential, system: MechanicalSystem[VectorLike]) -> None:
    """ValueError unless ``invariants`` describes the system's V (value and gradient at two probe points)."""
    n = system.group.dim
    if invariants.dim != n:
        raise ValueError(f"invariants act on R^{invariants.dim}, the problem on R^{n}")
    for q in (np.linspace(-0.7, 0.9, n), np.cos(np.arange(n, dtype=np.float64))):
        V, dV = system.potential(q), system.potential_gradient(q)
        scale = 1.0 + abs(V) + float(np.max(np.abs(dV)))
        if abs(invariants.potential(q) - V) > 1e-8 * scale or np.max(np.abs(invariants.gradient(q) - dV)) > 1e-6 * scale:
            raise ValueError("invariants must describe the system's potential: their V or ∇V differs from the "
                             f"system's at q = {np.array2string(q, precision=3)}")


class _EnergyMomentumMethod(GGLMethod):
    secondary: bool

    def __init__(self, invariants: QuadraticInvariantPotential | None = None, newton: NewtonOptions | None = None,
                 initial_guess: InitialGuess = "advanced") -> None:
        super().__init__(newton, initial_guess)
        if invariants is not None and not isinstance(invariants, QuadraticInvariantPotential):
            raise TypeError(f"invariants must be a QuadraticInvariantPotential, got {type(invariants).__name__}")
        self.invariants = invariants
        self.parameters = (invariants,)
        self.name = f"{type(self).__name__}()"

    @property
    def traits(self) -> Traits:
        # The generic Gonzalez D̄V is not equivariant: a rotation-invariant V loses its angular
        # momentum (~3.5e-5 over a long run of the sphere with V = z + z³/2); the invariant form keeps it.
        return Traits(order=2, symplectic=False, conserves_energy=True,
                      conserves_momentum_maps=self.invariants is not None,
                      constraints_at_step_end=("position", "velocity") if self.secondary else ("position",))

    def equations(self, problem: Problem[P]) -> "EnergyMomentumEquations":
        return EnergyMomentumEquations(self, problem, self.invariants, self.secondary)


class GGLEnergyMomentum(_EnergyMomentumMethod):
    """EM (Kinon, Betsch & Schneider 2023, eq. (84)): both constraints at every node, energy
    conserved, and the momentum maps of the invariants' symmetries when ``invariants`` is given.

    ``invariants``: the potential written through quadratic invariants, for the invariant discrete
    gradient (126); the generic Gonzalez formula otherwise. ``sol.eta`` is M⁻¹p, ``sol.lam[k]`` the
    λ^k of the step ending at t_k (``lam[0]`` the consistent λ₀), ``sol.extras["gamma"]`` γ^{i+1}.
    """

    secondary = True


class GonzalezEnergyMomentum(_EnergyMomentumMethod):
    """EM-G (Gonzalez 1999; Kinon, Betsch & Schneider 2023, §6.3): primary constraints only, energy
    conserved (momentum maps only with ``invariants``); the secondary constraint G M⁻¹p = 0 is not
    enforced. ``invariants``, ``sol.eta`` and ``sol.lam`` as for GGLEnergyMomentum."""

    secondary = False


class EnergyMomentumEquations(GGLEquations):
    """(84) with x = (q^{n+1}, p^{n+1}, λ^{n+1}, γ^{n+1}), or EM-G's (q^{n+1}, p^{n+1}, λ^{n+1})."""

    velocity = False
    reports_lam = True

    def __init__(self, method: GGLMethod, problem: Problem[P], invariants: QuadraticInvariantPotential | None,
                 secondary: bool) -> None:
        super().__init__(method, problem, multiplier_blocks=2 if secondary else 1)
        if invariants is not None:
            _check_invariants(invariants, self.system)
        self.invariants = invariants

    def potential_derivative(self, q0: jax.Array, q1: jax.Array) -> jax.Array:
        """D̄V(qⁿ, q^{n+1}): the invariant form (126), else the generic Gonzalez formula."""
        if self.invariants is not None:
            return self.invariants.discrete_gradient(q0, q1)
        return discrete_derivative(self.V, q0, q1)

    def secondary_constraint(self, z: jax.Array) -> jax.Array:
        """gᵛ(q, p) = G(q)M⁻¹p at z = (q, p)."""
        return self.G(z[: self.n], self.M_inv @ z[self.n :])

    def equations(self, x: jax.Array, q0: jax.Array, p0: jax.Array, h: jax.Array) -> jax.Array:
        q1, p1, lam, *secondary = self.unknowns(x)
        R1 = q1 - q0 - h * (self.M_inv @ (0.5 * (p0 + p1)))  # (84a, c)
        R2 = p1 - p0 + h * self.potential_derivative(q0, q1) - h * (discrete_derivative(self.g, q0, q1).T @ lam)
        if not secondary:
            return jnp.concatenate([R1, R2, self.g(q1)])
        gamma, n = secondary[0], self.n
        z1 = jnp.concatenate([q1, p1])
        D_gv = discrete_derivative(self.secondary_constraint, jnp.concatenate([q0, p0]), z1)
        return jnp.concatenate([
            R1 - h * (D_gv[:, n:].T @ gamma),  # (84a, c)
            R2 + h * (D_gv[:, :n].T @ gamma),  # (84b)
            self.g(q1),  # (84d)
            self.secondary_constraint(z1),  # (84e)
        ])

    def result(self, x: jax.Array) -> tuple[jax.Array, jax.Array, dict[str, jax.Array]]:
        _, p1, lam, *secondary = self.unknowns(x)
        return self.M_inv @ p1, lam, {"gamma": secondary[0]} if secondary else {}
