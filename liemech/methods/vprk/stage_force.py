"""The force at a VPRK stage: the trivialised ∂ℓ/∂g and an external force, with the latter's power.

The discrete Lagrange–d'Alembert principle adds an external force F wherever the trivialised
∂ℓ/∂g enters the step equations (Martín de Diego & Sato Martín de Almagro 2018, eqs. (26), (28);
the forced variational integrators of Marsden & West 2001), and the step's work is the stage
quadrature h Σ_i b_i ⟨Fⁱ, ηⁱ⟩ of its power.
"""

from typing import TypeVar

import jax
import jax.numpy as jnp

from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.problem import ExternalForce

P = TypeVar("P")


def stage_force(system: Lagrangian[P], force: ExternalForce[P] | None, g: P, eta: jax.Array,
                t: jax.Array) -> tuple[jax.Array, jax.Array]:
    """f(g, η) + F(g, η, t) and the power ⟨F, η⟩ (0 without F)."""
    f = jnp.asarray(system.force(g, eta))
    if force is None:
        return f, jnp.zeros(())
    F = jnp.asarray(force(g, eta, t), dtype=float)  # type: ignore[arg-type]
    return f + F, F @ eta
