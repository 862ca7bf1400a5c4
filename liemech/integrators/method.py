"""What every integrator offers ``integrate``: traits and a one-step map."""

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from liemech.mechanics.problem import Problem
from liemech.types import Vector

P = TypeVar("P")


ConstraintKind = Literal["position", "velocity", "nonholonomic"]


@dataclass(frozen=True)
class Traits:
    """Properties the theory guarantees for a method (spec 004: Thm 6.1 and §3.7; spec 000 §E.1).

    ``constraints_at_step_end`` lists the constraints of a problem that hold at every node t_{n+1}
    (to round-off): "position" Φ(q) = 0, "velocity" its derivative B(q)η = 0 (for the Rⁿ schemes
    G(q)M⁻¹p = 0 or G(q)v = 0, as the method documents), "nonholonomic" φ(g, η) = 0."""

    order: int
    symplectic: bool
    conserves_energy: bool
    conserves_momentum_maps: bool
    constraints_at_step_end: tuple[ConstraintKind, ...] = ()


@dataclass(frozen=True)
class NodeState(Generic[P]):
    """The scheme's state at a node t_k: configuration, body momentum, velocity of that momentum,
    and the multipliers a constrained scheme carries (None without constraints)."""

    g: P
    mu: Vector
    eta: Vector
    lam: Vector | None = None


@dataclass(frozen=True)
class StepReport:
    """Newton's effort for one step, and named quantities of the step that do not live at the
    nodes (each method documents where they live in time)."""

    iterations: int
    residual: float
    extras: Mapping[str, Vector] = field(default_factory=dict)


class Stepper(ABC, Generic[P]):
    """A method bound to one problem and step size."""

    @abstractmethod
    def step(self, state: NodeState[P], k: int) -> tuple[NodeState[P], StepReport]:
        """Advance from node k to node k + 1."""


class Method(ABC):
    """An integrator: ``traits`` and ``stepper(problem, h)``."""

    name: str

    @property
    @abstractmethod
    def traits(self) -> Traits:
        """Order and conservation properties."""

    @abstractmethod
    def stepper(self, problem: Problem[P], h: float) -> Stepper[P]:
        """The one-step map of this method for ``problem`` with step ``h``."""

    def __repr__(self) -> str:
        return self.name
