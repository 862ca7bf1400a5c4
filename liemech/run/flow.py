"""The discrete flow as a pure JAX function: the state after N steps from given initial data.

``flow(problem, method, h, n_steps)`` returns a ``Flow``, a function (g₀, η₀) ↦ ``FinalState`` that
JAX can transform: ``jax.jacfwd``/``jax.jacrev`` give sensitivities of the final state to the
initial data, ``jax.vmap`` runs a batch of initial data, ``jax.jit`` compiles a whole study. Each
step's equations are solved by Newton and differentiated by the implicit function theorem
(dx = −J⁻¹ ∂r, see ``compiled_newton``), never through Newton's iterates, so reverse mode works and
derivatives are those of the exact discrete flow. Sensitivities to system parameters come from a
system built inside the differentiated function and passed as ``system=``.
"""

from typing import Generic, NamedTuple, SupportsFloat, SupportsIndex, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from liemech.input_checks import checked_count
from liemech.jax_support import require_float64
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.problem import Problem
from liemech.methods.compiled import CompiledMethod, StepStatus, convergence_error
from liemech.methods.method import Method
from liemech.run.integrate import checked_step
from liemech.run.march import advance, start_march
from liemech.xla_options import jit

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
        return self.failure[..., 2] == StepStatus.CONVERGED


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
        self._compiled = jit(self._final)

    def __call__(self, g0: P | None = None, eta0: ArrayLike | None = None, *,
                 system: Lagrangian[P] | None = None) -> FinalState[P]:
        """The final state from g₀ and η₀ (the problem's where omitted), for ``system`` (a system on
        the same group, e.g. with traced parameters; the problem's if omitted)."""
        require_float64()  # x64 switched off after the flow was made
        problem = self._problem
        given = (g0, eta0)
        if (g0 is not None or eta0 is not None) and not any(
                isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(given)):
            # Concrete initial data are checked as a Problem's are: g₀ on the group, a real finite η₀
            # of the right shape, consistent with the constraints.
            checked = Problem(problem.system, problem.g0 if g0 is None else g0,
                              problem.eta0 if eta0 is None else eta0,  # type: ignore[arg-type]
                              holonomic=problem.holonomic, nonholonomic=problem.nonholonomic,
                              force=problem.force, constraint_tol=problem.constraint_tol)
            g0, eta0 = checked.g0, checked.eta0
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
            raise convergence_error(self._method, int(step), int(step) * self._h, residual, int(status),
                                    problem.group)
        return final

    def _final(self, g0: P, eta0: jax.Array, system: Lagrangian[P] | None = None) -> FinalState[P]:
        step, march = start_march(self._problem, self._method, g0, eta0, system)
        end = advance(step, jnp.asarray(self._h), march, jnp.asarray(0), self._n)
        return FinalState(cast(P, end.last.g), end.last.mu, end.last.eta, end.last.lam, end.failure)


def flow(problem: Problem[P], method: Method, h: SupportsFloat, n_steps: SupportsIndex) -> Flow[P]:
    """The discrete flow of ``method`` over ``n_steps`` steps of size h, as a pure JAX function of
    the initial data (see ``Flow``)."""
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a Problem, got {type(problem).__name__}")
    if not isinstance(method, CompiledMethod):
        raise TypeError(f"{method!r} has no compiled step; flow needs a compiled method such as VPRK")
    require_float64()
    step, n = checked_step(h), checked_count(n_steps, "n_steps")
    method.check(problem)
    return Flow(problem, method, step, n)
