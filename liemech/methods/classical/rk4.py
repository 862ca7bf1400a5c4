"""Classical explicit RK4 on Rⁿ, the baseline of Rojas-Quintero, Dubois & Jourdan (2025), in two forms:

- ``"canonical"`` (default): y = (q, p), q̇ = ∂h/∂p = v(q, p), ṗ = f(q, v) (for ℓ = ½q̇ᵀMq̇ − V:
  q̇ = M⁻¹p, ṗ = ½ q̇ᵀ∇M q̇ − ∇V). Conserves momenta conjugate to cyclic coordinates exactly.
- ``"velocity"``: y = (q, q̇), q̈ = (∂μ/∂q̇)⁻¹ (f − (∂μ/∂q) q̇) (= M⁻¹(−Ṁq̇ + ½q̇ᵀ∇Mq̇ − ∇V)), p := μ(q, q̇),
  with both derivatives of μ by forward-mode autodiff. Cyclic momenta then drift, as in the
  paper's Fig. 10.

The step is compiled once per system; a state that is no longer finite (h too large for the
dynamics) stops the run with a ``ConvergenceError`` at that step.
"""

from collections.abc import Hashable
from typing import Literal, TypeVar, cast

import jax
import jax.numpy as jnp

from liemech.mechanics.problem import Problem
from liemech.mechanics.trivialised import derivative_in_eta
from liemech.methods.compiled import CompiledStep, Node, StepStatus, node
from liemech.methods.flat import FlatCarry, UnconstrainedRnMethod, flat_carry, rn_lagrangian
from liemech.methods.method import Traits
from liemech.numerics.lu import solve

P = TypeVar("P")


class RK4(UnconstrainedRnMethod):
    """Explicit 4-stage Runge–Kutta, order 4, neither symplectic nor energy-conserving, on Rⁿ.

    ``sol.stats`` reports 0 iterations and residual 0 for every step. In the canonical form
    ``sol.eta`` is v(q, p); in the velocity form ``sol.eta`` is q̇ and ``sol.mu`` is μ(q, q̇)."""

    def __init__(self, variables: Literal["canonical", "velocity"] = "canonical") -> None:
        if variables not in ("canonical", "velocity"):
            raise ValueError(f"variables must be 'canonical' or 'velocity', got {variables!r}")
        self.variables = variables
        self.name = f"RK4({variables!r})"

    @property
    def traits(self) -> Traits:
        return Traits(order=4, symplectic=False, conserves_energy=False, conserves_momentum_maps=False)

    @property
    def cache_key(self) -> Hashable:
        return ("RK4", self.variables)

    def unconstrained_step(self, problem: Problem[P]) -> CompiledStep:
        return CompiledStep(RK4Step(self, problem).step, flat_carry)


class RK4Step:
    """One RK4 step of a Lagrangian's equations, in (q, p) or (q, q̇)."""

    def __init__(self, method: RK4, problem: Problem[P]) -> None:
        self._L, self._canonical, self._n = rn_lagrangian(problem), method.variables == "canonical", problem.group.dim

    def _rate(self, y: jax.Array) -> jax.Array:
        L, n = self._L, self._n
        q, second = y[:n], y[n:]
        if self._canonical:
            v = jnp.asarray(L.velocity(q, second))
            return jnp.concatenate([v, L.force(q, v)])
        _, momentum_rate = jax.jvp(lambda x: L.momentum(x, second), (q,), (second,))  # (∂μ/∂q) q̇
        drive = L.force(q, second) - momentum_rate
        return jnp.concatenate([second, solve(derivative_in_eta(L.momentum, q, second), drive)])

    def step(self, carry: object, h: jax.Array) -> tuple[object, Node]:
        c = cast(FlatCarry, carry)
        y = jnp.concatenate([c.g, c.mu if self._canonical else c.eta])
        k1 = self._rate(y)
        k2 = self._rate(y + 0.5 * h * k1)
        k3 = self._rate(y + 0.5 * h * k2)
        k4 = self._rate(y + h * k3)
        y = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        n = self._n
        q = y[:n]
        if self._canonical:
            p = y[n:]
            v = jnp.asarray(self._L.velocity(q, p))
        else:
            v = y[n:]
            p = jnp.asarray(self._L.momentum(q, v))
        finite = jnp.all(jnp.isfinite(y))
        status = jnp.where(finite, StepStatus.CONVERGED, StepStatus.NONFINITE_STATE)
        return FlatCarry(q, p, c.lam, v), node(q, p, v, c.lam, 0, jnp.where(finite, 0.0, jnp.inf), status)
