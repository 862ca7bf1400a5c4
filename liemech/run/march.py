"""A run as a traceable loop: the method's step for a problem, started from initial data that may be
traced (JAX arrays under jit, vmap or differentiation), and advanced in ``lax.scan`` with failures
kept as data. ``flow`` and ``integrate_ensemble`` are built on it."""

import copy
from typing import NamedTuple, TypeVar, cast

import jax
import jax.numpy as jnp

from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.problem import Problem, consistent_multiplier
from liemech.methods.compiled import CompiledMethod, Node, Step, StepStatus
from liemech.methods.method import NodeState
from liemech.types import Vector

P = TypeVar("P")


class March(NamedTuple):
    """A run in progress: the scheme's carry, the last node reached, and (step, residual, status)
    of the first failed step (status 0 if none)."""

    carry: object
    last: Node
    failure: jax.Array


def start_march(problem: Problem[P], method: CompiledMethod, g0: P, eta0: jax.Array,
                system: Lagrangian[P] | None = None, batched: bool = False) -> tuple[Step, March]:
    """The method's step for ``problem`` (with ``system`` in place of the problem's, if given; its
    ``batched_step`` if ``batched``) and the run at t = 0 from (g₀, η₀); traceable in g₀, η₀ and
    the system's parameters."""
    if system is not None:
        problem = copy.copy(problem)
        problem.system = system
    compiled = method.batched_step(problem) if batched else method.compiled_step(problem)
    mu0 = problem.system.momentum(g0, eta0)
    lam0 = consistent_multiplier(problem.system, problem.holonomic, problem.nonholonomic, problem.force, g0, eta0)
    # Traced arrays stand in for the node's numpy arrays.
    carry = compiled.start(NodeState(g0, mu0, cast(Vector, eta0), cast(Vector | None, lam0)))
    # Jitted so that finding the node's shapes here and running the step in ``advance`` share one
    # trace (tracing a step of a large system, such as the chaotic nonholonomic one, is slow).
    step: Step = jax.jit(compiled.step)
    first = cast(Node, jax.eval_shape(step, carry, jnp.asarray(1.0))[1])
    last = jax.tree.map(lambda leaf: jnp.zeros(leaf.shape, leaf.dtype), first)
    if lam0 is not None and last.lam.shape == jnp.shape(lam0):
        last = last._replace(lam=jnp.asarray(lam0))
    return step, March(carry, last._replace(g=g0, mu=mu0, eta=eta0), jnp.zeros(3))


def advance(step: Step, h: jax.Array, march: March, first: jax.Array, n_steps: int) -> March:
    """``n_steps`` steps (numbered from ``first``) in ``lax.scan``; after a failed step the state
    stays at the last node reached and the failure is recorded."""

    def body(march: March, k: jax.Array) -> tuple[March, None]:
        new_carry, node = step(march.carry, h)
        fails = (march.failure[2] == StepStatus.CONVERGED) & (node.status != StepStatus.CONVERGED)
        failure = jnp.where(fails, jnp.stack([1.0 * k, node.residual, 1.0 * node.status]), march.failure)
        keep = failure[2] == StepStatus.CONVERGED
        carry, last = jax.tree.map(lambda old, new: jnp.where(keep, new, old), (march.carry, march.last),
                                   (new_carry, node))
        return March(carry, last, failure), None

    end, _ = jax.lax.scan(body, march, first + jnp.arange(n_steps))
    return end
