"""What the GGL schemes of Kinon, Betsch & Schneider (2023) share: L = ½vᵀMv − V(q) on Rⁿ with
constant M and holonomic constraints g(q) = 0 (Jacobian G, Hessians D²g_k), one Newton solve per
step on the stacked unknowns x = (q_{n+1}, p_{n+1}, [v], multipliers), and the papers' initial guesses.

Sign of λ: liemech's plus sign (docs/conventions.md), ṗ = −∇V + Gᵀλ, so ``λ = −λ_paper``; γ keeps the
paper's sign (it multiplies the secondary constraint g^v = G M⁻¹p in the GGL functional (33)).

The step equations are written once, with ``jax.numpy``, from V, g and their automatic derivatives
(∇V, G = Dg and Σ_k w_k D²g_k u); the step is compiled once per problem and method, and Newton's
Jacobian is ``jax.jacfwd`` of the equations: exact for any V and g, whatever their degree.
"""

from abc import abstractmethod
from collections.abc import Hashable
from typing import Any, Literal, NamedTuple, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np

from liemech.mechanics.problem import Problem
from liemech.methods.compiled import CompiledMethod, CompiledStep, Node, node
from liemech.methods.flat import CONSTRAINED_RN, constrained_mechanics
from liemech.methods.method import NodeState, Scope
from liemech.solvers import compiled_newton
from liemech.solvers.newton import NewtonOptions, newton_options
from liemech.types import VectorLike

P = TypeVar("P")

InitialGuess = Literal["simple", "advanced"]
"""Newton's starting point (as in metis, the code of Kinon, Betsch & Schneider 2023): "simple" is
the previous step's complete solution (multipliers and velocity included; zeros for the multipliers
in the first step) with q_{n+1} ← qⁿ; "advanced" the same with q_{n+1} ← qⁿ + h vⁿ (vⁿ the scheme's
stored velocity, else M⁻¹pⁿ)."""


class GGLMethod(CompiledMethod):
    """A scheme of Kinon, Betsch & Schneider (2023) on Rⁿ with constant mass and holonomic constraints.

    ``newton`` defaults to full Newton iterated to round-off; ``NewtonOptions.metis()`` is the
    papers' protocol. ``initial_guess`` is "advanced" (an explicit predictor) or "simple"."""

    parameters: tuple[Hashable, ...] = ()
    """The scheme's parameters (θ, ϑ, the invariants of D̄V): part of ``cache_key``."""

    def __init__(self, newton: NewtonOptions | None, initial_guess: InitialGuess) -> None:
        if initial_guess not in ("simple", "advanced"):
            raise ValueError(f"initial_guess must be 'simple' or 'advanced', got {initial_guess!r}")
        self.newton = newton_options(newton, NewtonOptions(jacobian="every"))
        self.initial_guess: InitialGuess = initial_guess

    @property
    def scope(self) -> Scope:
        return CONSTRAINED_RN

    @property
    def cache_key(self) -> Hashable:
        return (type(self), self.parameters, self.newton, self.initial_guess)

    @abstractmethod
    def equations(self, problem: Problem[P]) -> "GGLEquations":
        """The step equations of this scheme for ``problem`` (TypeError or ValueError if the
        problem is not on Rⁿ, has no holonomic constraint or a non-constant inertia)."""

    def compiled_step(self, problem: Problem[P]) -> CompiledStep:
        equations = self.equations(problem)
        return CompiledStep(equations.step, equations.start)


class GGLCarry(NamedTuple):
    """What a step carries from node to node."""

    g: jax.Array  # qⁿ
    mu: jax.Array  # pⁿ
    lam: jax.Array  # λⁿ of EM and EM-G; empty for the VIs, whose multipliers belong to the step
    guess: jax.Array  # the previous step's solution x (Newton's start), the scheme's velocity included


class GGLEquations:
    """The step equations R(x; qⁿ, pⁿ, h) = 0 of one scheme and problem as pure functions of the
    unknowns x = (q_{n+1}, p_{n+1}, [velocity], multiplier blocks of m each): ``residual(x, state, h)``,
    and the ``step`` that solves them (``compiled_newton.solve``)."""

    velocity = True
    """Whether x holds a velocity block after (q, p)."""

    reports_lam = False
    """Whether the first multiplier block is the node's λ (``sol.lam``) rather than the step's."""

    def __init__(self, method: GGLMethod, problem: Problem[P], multiplier_blocks: int) -> None:
        self.system, self.constraint, M = constrained_mechanics(problem, method.name)
        self.M = jnp.asarray(M)
        self.M_inv = jnp.asarray(np.linalg.inv(M))
        self.n, self.m = problem.group.dim, problem.n_constraints
        sizes = [self.n] * (3 if self.velocity else 2) + [self.m] * multiplier_blocks
        self.size = sum(sizes)
        self._splits = list(np.cumsum(sizes)[:-1])
        self._newton, self._initial_guess = method.newton, method.initial_guess

    # ---- V, g and their derivatives ---------------------------------------------------------

    def V(self, q: jax.Array) -> jax.Array:
        return jnp.asarray(self.system.potential_value(q))

    def grad_V(self, q: jax.Array) -> jax.Array:
        out: jax.Array = jax.grad(self.V)(q)
        return out

    def g(self, q: jax.Array) -> jax.Array:
        return self.constraint.phi(q)

    def G(self, q: jax.Array, u: jax.Array) -> jax.Array:
        """G(q)u, the derivative of g along u (G = Dg is never formed)."""
        out: jax.Array = jax.jvp(self.g, (q,), (u,))[1]
        return out

    def GT(self, q: jax.Array, w: jax.Array) -> jax.Array:
        """G(q)ᵀw, by reverse mode."""
        out: jax.Array = jax.vjp(self.g, q)[1](w)[0]
        return out

    def curvature(self, q: jax.Array, w: jax.Array, u: jax.Array) -> jax.Array:
        """Σ_k w_k D²g_k(q) u, the derivative of G(q)ᵀw along u."""
        out: jax.Array = jax.jvp(lambda y: self.GT(y, w), (q,), (u,))[1]
        return out

    def unknowns(self, x: jax.Array) -> list[jax.Array]:
        """x split into its blocks (q_{n+1}, p_{n+1}, [velocity], multipliers…)."""
        return jnp.split(x, self._splits)

    # ---- the scheme -------------------------------------------------------------------------

    @abstractmethod
    def equations(self, x: jax.Array, q0: jax.Array, p0: jax.Array, h: jax.Array) -> jax.Array:
        """R(x) of the step of size h from (qⁿ, pⁿ)."""

    @abstractmethod
    def result(self, x: jax.Array) -> tuple[jax.Array, jax.Array, dict[str, jax.Array]]:
        """η, λ of the node t_{n+1} (empty unless ``reports_lam``) and the step's extras."""

    # ---- stepping ---------------------------------------------------------------------------

    def start(self, state: NodeState[Any]) -> GGLCarry:
        """The carry at a node: Newton starts from q_{n+1} = qⁿ, p_{n+1} = pⁿ, v = M⁻¹pⁿ and zero
        multipliers."""
        q, p = jnp.asarray(state.g, dtype=float), jnp.asarray(state.mu, dtype=float)
        blocks = [q, p, self.M_inv @ p] if self.velocity else [q, p]
        guess = jnp.concatenate([*blocks, jnp.zeros(self.size - len(blocks) * self.n)])
        if not self.reports_lam:
            lam = jnp.zeros(0)
        else:
            lam = jnp.zeros(self.m) if state.lam is None else jnp.asarray(state.lam, dtype=float)
        return GGLCarry(q, p, lam, guess)

    def residual(self, x: VectorLike, state: NodeState[Any], h: float) -> jax.Array:
        """The stacked step equations at x from the node ``state`` (zero at the solution)."""
        return self.equations(jnp.asarray(x, dtype=float), jnp.asarray(state.g, dtype=float),
                              jnp.asarray(state.mu, dtype=float), jnp.asarray(h, dtype=float))

    def step(self, carry: object, h: jax.Array) -> tuple[object, Node]:
        c = cast(GGLCarry, carry)
        n = self.n
        x0 = c.guess
        if self._initial_guess == "advanced":
            velocity = x0[2 * n : 3 * n] if self.velocity else self.M_inv @ c.mu
            x0 = x0.at[:n].set(c.g + h * velocity)
        # Round-off is judged against the size of the terms of the equations: qⁿ, pⁿ and the
        # velocity M⁻¹pⁿ that the secondary constraints multiply, not the multipliers.
        scale = jnp.max(jnp.abs(jnp.concatenate([c.g, c.mu, self.M_inv @ c.mu])))
        outcome = compiled_newton.solve(lambda x: self.equations(x, c.g, c.mu, h), x0, self._newton, scale,
                                        ordered=True)
        x = outcome.x
        eta, lam, extras = self.result(x)
        q1, p1 = x[:n], x[n : 2 * n]
        return GGLCarry(q1, p1, lam, x), node(q1, p1, eta, lam, outcome.iterations, outcome.residual,
                                               outcome.status, extras)
