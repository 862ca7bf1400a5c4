"""What every integrator declares: its traits, the problems it can honour, and the node state its
step maps (the step itself is ``liemech.methods.compiled``'s)."""

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from liemech.groups.euclidean import Rn
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.types import Vector

P = TypeVar("P")


ConstraintKind = Literal["position", "velocity", "nonholonomic"]


@dataclass(frozen=True)
class Traits:
    """Properties the theory guarantees for a method (Martín de Diego & Sato Martín de Almagro 2018, Thm 6.1 and §3.7; Kinon, Betsch & Schneider 2023).

    ``constraints_at_step_end`` lists the constraints of a problem that hold at every node t_{n+1}
    (to round-off): "position" Φ(q) = 0, "velocity" its derivative B(q)η = 0 (for the Rⁿ schemes
    G(q)M⁻¹p = 0 or G(q)v = 0, as the method documents), "nonholonomic" φ(g, η) = 0.
    ``conserves_momentum_maps`` promises the momentum maps of the symmetries of ℓ and of the
    constraints on every problem the method accepts; it is False where that holds only for some
    (the generic Gonzalez discrete gradient keeps them only for quadratic V and constraints)."""

    order: int
    symplectic: bool
    conserves_energy: bool
    conserves_momentum_maps: bool
    constraints_at_step_end: tuple[ConstraintKind, ...] = ()


@dataclass(frozen=True)
class Scope:
    """The problems a method can honour; ``Method.check`` refuses every other problem by name,
    before anything is compiled.

    ``groups``: "any", or "Rn" for the embedded-coordinate schemes. ``holonomic``: "required",
    "optional" or "refused"; ``nonholonomic``: "optional" or "refused". ``inertia``: "any" Lagrangian,
    or "constant": a MechanicalSystem with a constant inertia matrix. ``forces``: "optional" for a
    method that adds an external force F(g, η, t) to its equations, else "refused"."""

    groups: Literal["any", "Rn"] = "any"
    holonomic: Literal["required", "optional", "refused"] = "optional"
    nonholonomic: Literal["optional", "refused"] = "optional"
    inertia: Literal["any", "constant"] = "any"
    forces: Literal["optional", "refused"] = "refused"


def check_scope(scope: Scope, problem: Problem[P], method_name: str) -> None:
    """TypeError (configuration space, system) or ValueError (constraints) unless ``problem`` lies in
    ``scope``; every message names the method and what it needs."""
    if scope.groups == "Rn" and not isinstance(problem.group, Rn):
        raise TypeError(f"{method_name} works on Rn(n) configuration spaces, got {problem.group!r}")
    if problem.nonholonomic is not None and scope.nonholonomic == "refused":
        raise ValueError(f"{method_name} does not handle nonholonomic constraints; use VPRK(lobatto(s))")
    if problem.holonomic is not None and scope.holonomic == "refused":
        raise ValueError(f"{method_name} does not handle holonomic constraints; use VPRK(lobatto(s))")
    if problem.holonomic is None and scope.holonomic == "required":
        raise ValueError(f"{method_name} needs a holonomic constraint (Problem(..., holonomic=...))")
    if problem.force is not None and scope.forces == "refused":
        raise ValueError(f"{method_name} does not take an external force; use VPRK(lobatto(s)) or VPRK(gauss(s))")
    if scope.inertia == "constant":
        system = problem.system
        if not isinstance(system, MechanicalSystem):
            raise TypeError(f"{method_name} needs a MechanicalSystem with a constant inertia matrix, "
                            f"got a {type(system).__name__}")
        if system.constant_inertia is None:
            raise TypeError(f"{method_name} needs a MechanicalSystem with a constant inertia matrix, got a "
                            "configuration-dependent inertia (a callable); use SimpsonVI, MidpointVI, RK4 or VPRK")


@dataclass(frozen=True)
class NodeState(Generic[P]):
    """The scheme's state at a node t_k: configuration, body momentum, velocity of that momentum,
    the multipliers a constrained scheme carries (None without constraints), and the time (which
    an external force depends on)."""

    g: P
    mu: Vector
    eta: Vector
    lam: Vector | None = None
    t: float = 0.0


class Method(ABC):
    """An integrator: its ``traits`` and ``scope``. Every method liemech runs is a
    ``CompiledMethod``, whose pure step ``integrate``, ``flow`` and ``integrate_ensemble`` compile."""

    name: str

    @property
    @abstractmethod
    def traits(self) -> Traits:
        """Order and conservation properties."""

    @property
    def scope(self) -> Scope:
        """The problems this method can honour (every one unless a method narrows it)."""
        return Scope()

    def check(self, problem: Problem[P]) -> None:
        """Raise TypeError or ValueError, naming the method and what it needs, unless it can honour
        ``problem``; ``integrate`` and ``flow`` call it before anything is compiled. Methods with
        further needs (a tableau's hypotheses, a system's parameters) extend it."""
        check_scope(self.scope, problem, self.name)

    def __repr__(self) -> str:
        return self.name
