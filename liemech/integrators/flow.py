"""The discrete flow as a pure JAX function: the state after N steps from given initial data.

``flow(problem, method, h, n_steps)`` returns a ``Flow``, a function (g₀, η₀) ↦ ``FinalState`` that
JAX can transform: ``jax.jacfwd``/``jax.jacrev`` give sensitivities of the final state to the
initial data, ``jax.vmap`` runs a batch of initial data, ``jax.jit`` compiles a whole study. Each
step's equations are solved by Newton and differentiated by the implicit function theorem
(dx = −J⁻¹ ∂r, see ``compiled_newton``), never through Newton's iterates, so reverse mode works and
derivatives are those of the exact discrete flow. Sensitivities to system parameters come from a
system built inside the differentiated function and passed as ``system=``.
"""

import copy
from typing import Generic, NamedTuple, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from liemech.integrators.compiled import CompiledMethod, Node, convergence_error
from liemech.integrators.method import Method, NodeState
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.problem import Problem, consistent_multiplier
from liemech.solvers.compiled_newton import Status
from liemech.types import Vector

P = TypeVar("P")


class FinalState(NamedTuple, Generic[P]):
    """The node t_N = N·h: configuration, body momentum, velocity and multipliers (empty without).
    ``failure`` is (step, residual, status) of the first step whose equations were not solved
    (status 0 if none); after it the state stays at the last node reached."""

    g: P
    mu: jax.Array
    eta: jax.Array
    lam: jax.Array
    failure: jax.Array

    @property
    def converged(self) -> jax.Array:
        """Whether every step was solved (elementwise over a batch)."""
        return self.failure[..., 2] == Status.CONVERGED


class Flow(Generic[P]):
    """(g₀, η₀) ↦ the state after ``n_steps`` steps of ``method`` with step h (module docstring).

    Called on concrete values, a failed Newton solve raises ``ConvergenceError``; inside a JAX
    transformation (jit, grad, vmap) no exception can be raised, so check ``final.converged``.

    >>> import jax, numpy as np, liemech as lm
    >>> system = lm.MechanicalSystem(lm.Rn(1), np.eye(1), lambda q: 1.0 - jax.numpy.cos(q[0]))
    >>> pendulum = lm.Problem(system, np.array([0.5]), np.array([0.0]))
    >>> final = lm.flow(pendulum, lm.VPRK(lm.lobatto(3)), h=0.1, n_steps=10)
    >>> d_q = jax.jacfwd(lambda eta0: final(eta0=eta0).g)(np.array([0.0]))   # ∂q(1)/∂q̇(0)
    >>> bool(0.5 < float(d_q[0, 0]) < 1.0)
    True
    """

    def __init__(self, problem: Problem[P], method: CompiledMethod, h: float, n_steps: int) -> None:
        self._problem, self._method, self._h, self._n = problem, method, h, n_steps
        self._compiled = jax.jit(self._final)

    def __call__(self, g0: P | None = None, eta0: ArrayLike | None = None, *,
                 system: Lagrangian[P] | None = None) -> FinalState[P]:
        """The final state from g₀ and η₀ (the problem's where omitted), for ``system`` (a system on
        the same group, e.g. with traced parameters; the problem's if omitted)."""
        problem = self._problem
        g = problem.g0 if g0 is None else g0
        eta = jnp.asarray(problem.eta0 if eta0 is None else eta0, dtype=float)
        if eta.shape != (problem.group.dim,):
            raise ValueError(f"eta0 must have shape ({problem.group.dim},), got {eta.shape}")
        if system is None:
            final: FinalState[P] = self._compiled(g, eta)
        else:
            if not isinstance(system, Lagrangian) or system.group != problem.group:
                raise ValueError(f"system must be a Lagrangian on {problem.group!r}, got {system!r}")
            final = self._final(g, eta, system)
        if not isinstance(final.failure, jax.core.Tracer) and not bool(final.converged):
            step, residual, status = (float(v) for v in np.asarray(final.failure))
            raise convergence_error(self._method, int(step), int(step) * self._h, residual, int(status))
        return final

    def _final(self, g0: P, eta0: jax.Array, system: Lagrangian[P] | None = None) -> FinalState[P]:
        problem = self._problem
        if system is not None:
            problem = copy.copy(problem)
            problem.system = system
        compiled = self._method.compiled_step(problem)
        mu0 = problem.system.momentum(g0, eta0)
        lam0 = consistent_multiplier(problem.system, problem.holonomic, problem.nonholonomic, g0, eta0)
        # Traced arrays stand in for the node's numpy arrays.
        carry = compiled.start(NodeState(g0, mu0, cast(Vector, eta0), cast(Vector | None, lam0)))
        h = jnp.asarray(self._h)
        first = cast(Node, jax.eval_shape(compiled.step, carry, h)[1])
        last = jax.tree.map(lambda leaf: jnp.zeros(leaf.shape, leaf.dtype), first)
        last = last._replace(g=g0, mu=mu0, eta=eta0)

        def body(state: tuple[object, Node, jax.Array], k: jax.Array) -> tuple[tuple[object, Node, jax.Array], None]:
            carry, last, failure = state
            new_carry, node = compiled.step(carry, h)
            fails = (failure[2] == Status.CONVERGED) & (node.status != Status.CONVERGED)
            failure = jnp.where(fails, jnp.stack([1.0 * k, node.residual, 1.0 * node.status]), failure)
            keep = failure[2] == Status.CONVERGED
            carry, last = jax.tree.map(lambda old, new: jnp.where(keep, new, old), (carry, last), (new_carry, node))
            return (carry, last, failure), None

        (_, last, failure), _ = jax.lax.scan(body, (carry, last, jnp.zeros(3)), jnp.arange(self._n))
        return FinalState(last.g, last.mu, last.eta, last.lam, failure)


def flow(problem: Problem[P], method: Method, h: float, n_steps: int) -> Flow[P]:
    """The discrete flow of ``method`` over ``n_steps`` steps of size h, as a pure JAX function of
    the initial data (see ``Flow``)."""
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a Problem, got {type(problem).__name__}")
    if not isinstance(method, CompiledMethod):
        raise TypeError(f"{method!r} has no compiled step; flow needs a compiled method such as VPRK")
    if not (isinstance(h, (int, float)) and np.isfinite(h) and h > 0.0):
        raise ValueError(f"h must be a positive finite step, got {h!r}")
    if not isinstance(n_steps, int) or isinstance(n_steps, bool) or n_steps < 1:
        raise ValueError(f"n_steps must be a positive integer, got {n_steps!r}")
    return Flow(problem, method, float(h), n_steps)
