"""Classical explicit RK4 on Rⁿ, the baseline of paper 002 (spec §II.7), in two forms:

- ``"canonical"`` (default): y = (q, p), q̇ = ∂h/∂p = v(q, p), ṗ = f(q, v) (for ℓ = ½q̇ᵀMq̇ − V:
  q̇ = M⁻¹p, ṗ = ½ q̇ᵀ∇M q̇ − ∇V). Conserves momenta conjugate to cyclic coordinates exactly.
- ``"velocity"``: y = (q, q̇), q̈ = (∂μ/∂q̇)⁻¹ (f − (∂μ/∂q) q̇) (= M⁻¹(−Ṁq̇ + ½q̇ᵀ∇Mq̇ − ∇V)), p := M(q)q̇.
  Cyclic momenta then drift, as in the paper's Fig. 10.
"""

from typing import Literal

import numpy as np

from liemech.integrators.flat import FlatMethod
from liemech.integrators.method import NodeState, Stepper, StepReport, Traits
from liemech.mechanics.lagrangian import Lagrangian
from liemech.types import Vector


class RK4(FlatMethod):
    """Explicit 4-stage Runge–Kutta, order 4, neither symplectic nor energy-conserving, on Rⁿ."""

    def __init__(self, variables: Literal["canonical", "velocity"] = "canonical") -> None:
        if variables not in ("canonical", "velocity"):
            raise ValueError(f"variables must be 'canonical' or 'velocity', got {variables!r}")
        self.variables = variables
        self.name = f"RK4({variables!r})"

    @property
    def traits(self) -> Traits:
        return Traits(order=4, symplectic=False, conserves_energy=False, conserves_momentum_maps=False)

    def flat_stepper(self, lagrangian: Lagrangian[Vector], h: float) -> Stepper[Vector]:
        return RK4Stepper(lagrangian, h, self.variables)


class RK4Stepper(Stepper[Vector]):
    def __init__(self, lagrangian: Lagrangian[Vector], h: float, variables: str) -> None:
        self._L, self._h, self._canonical = lagrangian, h, variables == "canonical"
        self._n = lagrangian.group.dim

    def _rate(self, y: Vector) -> Vector:
        L, n = self._L, self._n
        q, second = y[:n], y[n:]
        if self._canonical:
            v = L.velocity(q, second)
            return np.concatenate([v, L.force(q, v)])
        drive = L.force(q, second) - L.momentum_d_g(q, second) @ second
        return np.concatenate([second, np.linalg.solve(L.momentum_d_eta(q, second), drive)])

    def step(self, state: NodeState[Vector], k: int) -> tuple[NodeState[Vector], StepReport]:
        h, n = self._h, self._n
        y = np.concatenate([state.g, state.mu if self._canonical else state.eta])
        k1 = self._rate(y)
        k2 = self._rate(y + 0.5 * h * k1)
        k3 = self._rate(y + 0.5 * h * k2)
        k4 = self._rate(y + h * k3)
        y = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        if not np.all(np.isfinite(y)):
            raise ValueError(f"RK4 produced a non-finite state at step {k} (t = {k * h:.6g}); reduce h")
        q = y[:n]
        if self._canonical:
            p = y[n:]
            return NodeState(q, p, self._L.velocity(q, p)), StepReport(0, 0.0)
        v = y[n:]
        return NodeState(q, self._L.momentum(q, v), v), StepReport(0, 0.0)
