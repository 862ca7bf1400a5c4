"""What the GGL schemes of papers 000/003 share (spec 000 §B.0, §B.10): L = ½vᵀMv − V(q) on Rⁿ with
constant M and holonomic constraints g(q) = 0 (Jacobian G, Hessians D²g_k), one Newton solve per
step on the stacked unknowns (q_{n+1}, p_{n+1}, [v], multipliers), and the papers' initial guesses.

Sign of λ: liemech's plus sign (DESIGN.md), ṗ = −∇V + Gᵀλ, so ``λ = −λ_paper``; γ keeps the
paper's sign (it multiplies the secondary constraint g^v = G M⁻¹p in the GGL functional (33)).

Newton Jacobians are exact for constraints of degree ≤ 2 (every example of the papers); for other
constraints they omit the third derivatives D³g, as the papers' code does (and, in EM and EM-G, the
derivatives of the Gonzalez quotients of g and gᵛ), and Newton then converges linearly, still to
round-off.
"""

from abc import abstractmethod
from typing import Generic, Literal, TypeVar

import numpy as np

from liemech.integrators.flat import ConstrainedFlatMethod
from liemech.integrators.method import NodeState, Stepper, StepReport
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.system import MechanicalSystem
from liemech.solvers.newton import NewtonOptions, solve
from liemech.types import Matrix, Tensor, Vector

S = TypeVar("S")

InitialGuess = Literal["simple", "advanced"]
"""Newton's starting point (spec 000 §B.10): "simple" is the previous step's complete solution
(multipliers and velocity included; zeros for the multipliers in the first step) with q_{n+1} ← qⁿ;
"advanced" the same with q_{n+1} ← qⁿ + h vⁿ (vⁿ the scheme's stored velocity, else M⁻¹pⁿ)."""


def weighted_hessians(hessians: Tensor, weights: Vector) -> Matrix:
    """Σ_k w_k D²g_k."""
    m, n, _ = hessians.shape
    out: Matrix = (weights @ hessians.reshape(m, n * n)).reshape(n, n)
    return out


def hessian_columns(hessians: Tensor, u: Vector) -> Matrix:
    """The (n, m) matrix whose column k is D²g_k u, i.e. ∂(G(q)u)/∂q transposed."""
    m, n, _ = hessians.shape
    out: Matrix = (hessians.reshape(m * n, n) @ u).reshape(m, n).T
    return out


class GGLMethod(ConstrainedFlatMethod):
    """A scheme of paper 000 on Rⁿ with constant mass and holonomic constraints.

    ``newton`` defaults to full Newton iterated to round-off; ``NewtonOptions.metis()`` is the
    papers' protocol. ``initial_guess`` is "advanced" (an explicit predictor) or "simple"."""

    def __init__(self, newton: NewtonOptions | None, initial_guess: InitialGuess) -> None:
        if initial_guess not in ("simple", "advanced"):
            raise ValueError(f"initial_guess must be 'simple' or 'advanced', got {initial_guess!r}")
        self.newton = NewtonOptions(jacobian="every") if newton is None else newton
        self.initial_guess: InitialGuess = initial_guess


def checked_parameter(value: object, name: str, low: float, high: float, open_low: bool, open_high: bool) -> float:
    """``value`` as a float in the interval low..high (open or closed at each end), else ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    x = float(value)
    above = x > low if open_low else x >= low
    below = x < high if open_high else x <= high
    if not (above and below):
        interval = f"{'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}")
    return x


class GGLStepper(Stepper[Vector], Generic[S]):
    """One step: solve R(x; start) = 0 for x = (q_{n+1}, p_{n+1}, [velocity], multipliers), where
    ``start`` = ``begin(qⁿ, pⁿ)`` holds what the equations need of the known state (evaluated once
    per step, not at every Newton iterate).

    The stepper remembers the last solution: the papers' "simple" guess continues from it."""

    has_velocity = True
    """Whether x holds a velocity block after (q, p)."""

    def __init__(self, system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector],
                 n_multipliers: int, h: float, newton: NewtonOptions, initial_guess: InitialGuess) -> None:
        assert system.constant_inertia is not None
        self.system, self.constraint, self.h = system, constraint, h
        self.group = system.group
        self.M = system.constant_inertia
        self.M_inv = np.linalg.inv(self.M)
        self.n = self.group.dim
        self.size = (3 if self.has_velocity else 2) * self.n + n_multipliers
        self._newton, self._initial_guess = newton, initial_guess
        self._last: tuple[int, Vector] | None = None

    @property
    def last_unknowns(self) -> Vector | None:
        """The solved unknowns x of the last step (None before the first), e.g. to differentiate the
        step map through R(x; qⁿ, pⁿ) = 0 by the implicit function theorem."""
        return None if self._last is None else self._last[1].copy()

    def G(self, q: Vector) -> Matrix:
        """G(q) = Dg(q), shape (m, n)."""
        return self.constraint.trivialised_jacobian(self.group, q)

    def hessians(self, q: Vector) -> Tensor:
        """D²g_k(q), shape (m, n, n)."""
        return self.constraint.trivialised_hessians(self.group, q)

    @abstractmethod
    def begin(self, q0: Vector, p0: Vector) -> S:
        """The terms of the step's equations that depend only on (qⁿ, pⁿ)."""

    @abstractmethod
    def residual(self, start: S, x: Vector, jacobian: bool) -> tuple[Vector, Matrix | None]:
        """R(x) of the step from ``start`` = begin(qⁿ, pⁿ), and ∂R/∂x when ``jacobian``."""

    @abstractmethod
    def result(self, x: Vector) -> tuple[NodeState[Vector], dict[str, Vector]]:
        """The node t_{n+1} and the step's extras from the solved unknowns."""

    def _guess(self, q0: Vector, p0: Vector, k: int) -> Vector:
        n = self.n
        if self._last is not None and self._last[0] == k - 1:
            x = self._last[1].copy()
        else:
            x = np.zeros(self.size)
            if self.has_velocity:
                x[2 * n : 3 * n] = self.M_inv @ p0
        x[:n], x[n : 2 * n] = q0, p0
        if self._initial_guess == "advanced":
            velocity = x[2 * n : 3 * n] if self.has_velocity else self.M_inv @ p0
            x[:n] = q0 + self.h * velocity
        return x

    def step(self, state: NodeState[Vector], k: int) -> tuple[NodeState[Vector], StepReport]:
        q0, p0 = state.g, state.mu
        guess = self._guess(q0, p0, k)
        scale = max(1.0, float(np.max(np.abs(guess))))
        start = self.begin(q0, p0)
        solution = solve(lambda x, need: self.residual(start, x, need), guess, self._newton, scale, k, k * self.h)
        self._last = (k, solution.x)
        node, extras = self.result(solution.x)
        return node, StepReport(solution.iterations, solution.residual, extras)
