"""Newton's options (the stopping rule every compiled step uses) and the error of a failed step."""

from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

from liemech.input_checks import checked_count, checked_flag, checked_real

EPS: Final = float(np.finfo(np.float64).eps)


class ConvergenceError(RuntimeError):
    """A step failed: its nonlinear equations could not be solved, or (``measure``) a method's own
    check of the step failed; carries the step, time and the residual (or the measured quantity)."""

    def __init__(self, step: int, time: float, residual: float, reason: str,
                 hint: str = "try a smaller step h", measure: str = "residual ‖r‖∞") -> None:
        self.step = step
        self.time = time
        self.residual = residual
        self.hint = hint
        super().__init__(
            f"step {step} (t = {time:.6g}) failed: {reason}; {measure} = {residual:.3e}. "
            f"{hint[0].upper()}{hint[1:]}."
        )


@dataclass(frozen=True)
class NewtonOptions:
    """Stopping rule. With ``tol=None`` (the default) Newton runs to round-off: it stops when
    ‖r‖∞ ≤ ``roundoff_factor``·eps·scale or the residual stops decreasing below √eps·scale, then
    applies one last update. With a number, it stops as soon as ‖r‖∞ ≤ tol (the papers' protocol
    is ``NewtonOptions.papers()``: tol 1e-9, at most 40 iterations). ``update_after_check``
    applies the update once more in the iteration whose residual passed ``tol`` and counts that
    iteration, as metis, the code of Kinon, Betsch & Schneider (2023), does (``NewtonOptions.metis()``).

    ``jacobian="first"`` (the default) factorises the Jacobian once per step, at the starting
    guess, and reuses it (simplified Newton); ``"every"`` re-evaluates it at every iterate;
    ``"refreshed"`` is simplified Newton that re-evaluates it at the iterate whose residual fell by
    less than half with the current one, above √eps·scale (a Jacobian per step while the iteration
    contracts, more where a frozen one would stall); ``"carried"`` starts each step with the
    factors the last one ended with, and evaluates the Jacobian again once an update from them
    would not shrink the residual a hundredfold (``compiled_newton.CARRIED_CONTRACTION``) above
    the noise of round-off: fewer Jacobians and more iterations per step, which pays only where a
    Jacobian costs much more than those iterations."""

    tol: float | None = None
    max_iterations: int = 50
    roundoff_factor: float = 16.0
    jacobian: Literal["first", "every", "refreshed", "carried"] = "first"
    update_after_check: bool = False

    def __post_init__(self) -> None:
        # Normalised to Python types: numpy scalars are accepted, and the options are part of the
        # compiled steps' cache keys.
        if self.tol is not None:
            object.__setattr__(self, "tol", checked_real(self.tol, "tol", 0.0,
                                                         requirement="be None or a finite number > 0"))
        object.__setattr__(self, "max_iterations", checked_count(self.max_iterations, "max_iterations"))
        object.__setattr__(self, "roundoff_factor", checked_real(self.roundoff_factor, "roundoff_factor", 0.0))
        if self.jacobian not in ("first", "every", "refreshed", "carried"):
            raise ValueError(f"jacobian must be 'first', 'every', 'refreshed' or 'carried', got {self.jacobian!r}")
        object.__setattr__(self, "update_after_check", checked_flag(self.update_after_check, "update_after_check"))

    @classmethod
    def papers(cls) -> "NewtonOptions":
        """The protocol of the papers' experiments: ‖r‖ ≤ 1e-9 within 40 iterations."""
        return cls(tol=1e-9, max_iterations=40)

    @classmethod
    def metis(cls) -> "NewtonOptions":
        """The protocol of Kinon, Betsch & Schneider (2023) and their code metis: ‖r‖∞ ≤ 1e-9
        checked before each full Newton update, the update also applied (and counted) in the
        checking iteration, at most 40 iterations; the iteration counts of their §6 use it."""
        return cls(tol=1e-9, max_iterations=40, jacobian="every", update_after_check=True)


def newton_options(newton: object, default: NewtonOptions, carries: bool = False) -> NewtonOptions:
    """A method's ``newton`` argument: ``default`` for None, else NewtonOptions or TypeError;
    ``jacobian="carried"`` only for a method that ``carries`` Newton's factors from step to step."""
    if newton is None:
        return default
    if not isinstance(newton, NewtonOptions):
        raise TypeError(f"newton must be a NewtonOptions (e.g. lm.NewtonOptions(tol=1e-9)) or None, "
                        f"got {type(newton).__name__}")
    if newton.jacobian == "carried" and not carries:
        raise ValueError("NewtonOptions(jacobian='carried') needs a method that carries Newton's factors from step "
                         "to step; this one starts every step afresh: use jacobian='first' or 'refreshed'")
    return newton
