"""Newton's method on the stacked step equations, iterated to round-off by default."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

import numpy as np
from scipy.linalg.lapack import dgetrf, dgetrs
from numpy.typing import NDArray

from liemech.types import Matrix, Vector

EPS: Final = float(np.finfo(np.float64).eps)


class ConvergenceError(RuntimeError):
    """A step's nonlinear equations could not be solved; carries the step, time and residual."""

    def __init__(self, step: int, time: float, residual: float, reason: str,
                 hint: str = "try a smaller step h") -> None:
        self.step = step
        self.time = time
        self.residual = residual
        self.hint = hint
        super().__init__(
            f"Newton failed at step {step} (t = {time:.6g}): {reason}; residual ‖r‖∞ = {residual:.3e}. "
            f"{hint[0].upper()}{hint[1:]}."
        )


@dataclass(frozen=True)
class NewtonOptions:
    """Stopping rule. With ``tol=None`` (the default) Newton runs to round-off: it stops when
    ‖r‖∞ ≤ ``roundoff_factor``·eps·scale or the residual stops decreasing below √eps·scale, then
    applies one last update. With a number, it stops as soon as ‖r‖∞ ≤ tol (the papers' protocol
    is ``NewtonOptions.papers()``: tol 1e-9, at most 40 iterations). ``update_after_check``
    applies the update once more in the iteration whose residual passed ``tol`` and counts that
    iteration, as the metis code of papers 000/003 does (``NewtonOptions.metis()``).

    ``jacobian="first"`` (the default) factorises the Jacobian once per step, at the starting
    guess, and reuses it (simplified Newton); ``"every"`` re-evaluates it at every iterate."""

    tol: float | None = None
    max_iterations: int = 50
    roundoff_factor: float = 16.0
    jacobian: Literal["first", "every"] = "first"
    update_after_check: bool = False

    def __post_init__(self) -> None:
        if self.tol is not None and not self.tol > 0.0:
            raise ValueError(f"tol must be positive or None, got {self.tol!r}")
        if self.max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {self.max_iterations!r}")
        if self.jacobian not in ("first", "every"):
            raise ValueError(f"jacobian must be 'first' or 'every', got {self.jacobian!r}")

    @classmethod
    def papers(cls) -> "NewtonOptions":
        """The protocol of the papers' experiments: ‖r‖ ≤ 1e-9 within 40 iterations."""
        return cls(tol=1e-9, max_iterations=40)

    @classmethod
    def metis(cls) -> "NewtonOptions":
        """The protocol of papers 000/003 (spec 000 §B.10): ‖r‖∞ ≤ 1e-9 checked before each full
        Newton update, the update also applied (and counted) in the checking iteration, at most
        40 iterations; the regression iteration counts of spec 000 §D use it."""
        return cls(tol=1e-9, max_iterations=40, jacobian="every", update_after_check=True)


@dataclass(frozen=True)
class NewtonResult:
    x: Vector
    iterations: int
    residual: float


LUFactors: TypeAlias = tuple[Matrix, NDArray[np.int32]]

ResidualAndJacobian = Callable[[Vector, bool], tuple[Vector, Matrix | None]]
"""x, need_jacobian ↦ (r(x), J(x) if need_jacobian else None)."""


def solve(
    residual_and_jacobian: ResidualAndJacobian,
    x0: Vector,
    options: NewtonOptions,
    scale: float,
    step: int,
    time: float,
) -> NewtonResult:
    """Solve r(x) = 0 from x0 with x ← x − J⁻¹ r(x) (dense LU); ``scale`` sizes round-off."""
    x = np.array(x0, dtype=np.float64)
    roundoff = options.roundoff_factor * EPS * max(scale, 1.0)
    plateau = np.sqrt(EPS) * max(scale, 1.0)
    previous = np.inf
    factors: LUFactors | None = None
    for iteration in range(options.max_iterations + 1):
        refresh = factors is None or options.jacobian == "every"
        r, J = residual_and_jacobian(x, refresh)
        norm = float(np.max(np.abs(r)))
        if not np.isfinite(norm):
            raise ConvergenceError(step, time, norm, f"non-finite residual after {iteration} iterations")
        if refresh:
            assert J is not None
            factors = _factorise(J, step, time, norm)
        assert factors is not None
        if options.tol is not None:
            if norm <= options.tol:
                if options.update_after_check:
                    return NewtonResult(x - _lu_solve(factors, r, step, time, norm), iteration + 1, norm)
                return NewtonResult(x, iteration, norm)
        elif norm <= roundoff or (norm >= previous and norm <= plateau):
            return NewtonResult(x - _lu_solve(factors, r, step, time, norm), iteration + 1, norm)
        if iteration == options.max_iterations:
            break
        x = x - _lu_solve(factors, r, step, time, norm)
        previous = norm
    raise ConvergenceError(step, time, norm, f"no convergence in {options.max_iterations} iterations")


def _factorise(J: Matrix, step: int, time: float, norm: float) -> LUFactors:
    if not np.all(np.isfinite(J)):
        raise ConvergenceError(step, time, norm, "non-finite Jacobian")
    # LAPACK directly: scipy.linalg.lu_factor/lu_solve add ~15 µs of checks per call, which is
    # as much as the factorisation of a step's small system.
    lu, piv, info = dgetrf(J)
    if info > 0:
        raise ConvergenceError(step, time, norm, "singular Jacobian")
    return np.asarray(lu, dtype=np.float64), np.asarray(piv, dtype=np.int32)


def _lu_solve(factors: LUFactors, r: Vector, step: int, time: float, norm: float) -> Vector:
    solution, _ = dgetrs(factors[0], factors[1], r)
    dx = np.asarray(solution, dtype=np.float64)
    if not np.all(np.isfinite(dx)):
        raise ConvergenceError(step, time, norm, "singular Jacobian (non-finite update)")
    return dx
