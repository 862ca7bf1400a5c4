"""Heavy tops coupled by springs on ``PowerGroup(SO3(), n)``: the potential of the chain and the
problem of six tops with the sparsity of a chain (``BodySparsity``), shared by
tests/groups/test_power_group.py and tests/solvers/test_carried_jacobian.py."""

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import liemech as lm

CHI = np.array([0.1, -0.2, 1.0])
SPRING = 2.0


def chain_potential(R: jax.Array) -> jax.Array:
    """Σ e₃·(R_i χ) + k/2 Σ |R_{i+1}χ − R_iχ|², vectorised over the stack (3, 3, 3)."""
    tips = R @ jnp.asarray(CHI)
    return jnp.sum(tips[:, 2]) + 0.5 * SPRING * jnp.sum((tips[1:] - tips[:-1]) ** 2)


def sparse_chain_of_tops(n: int = 6) -> lm.Problem[Any]:
    """n tops on springs, slightly tilted and spinning, with the sparsity of a chain."""
    rng = np.random.default_rng(2)
    group = lm.PowerGroup(lm.SO3(), n)
    g0, eta0 = group.retraction("exp").tau(0.4 * rng.normal(size=3 * n)), rng.normal(size=3 * n)
    system = lm.MechanicalSystem(group, np.diag(np.tile([1.0, 2.0, 3.5], n)), chain_potential)
    tops = np.arange(n)
    sparsity = lm.BodySparsity(np.repeat(tops, 3), np.zeros(0, dtype=np.int64), np.stack([tops[:-1], tops[1:]], 1))
    return lm.Problem(system, g0, eta0, sparsity=sparsity)
