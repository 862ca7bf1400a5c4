"""Newton's options (the stopping rule every compiled step uses) and the error of a failed step."""

from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

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
            f"step {step} (t = {time:.6g}) failed: {reason}; residual ‖r‖∞ = {residual:.3e}. "
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
