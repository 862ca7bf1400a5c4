"""integrate(problem, method, h, t_final | n_steps): run a fixed-step method and collect nodes."""

import dataclasses
import math
import time
from collections.abc import Callable
from typing import SupportsFloat, SupportsIndex, TypeVar, cast

import jax
import numpy as np
from numpy.typing import NDArray

from liemech.input_checks import checked_count, checked_flag, checked_real
from liemech.jax_support import require_float64
from liemech.mechanics.problem import Problem
from liemech.methods.compiled import CompiledMethod
from liemech.methods.method import Method
from liemech.run.chunks import run
from liemech.run.progress import progress_bar
from liemech.run.solution import Metadata, Solution, SolverStats
from liemech.types import Vector, VectorLike

P = TypeVar("P")

_WHOLE_NUMBER_TOL = 1e-9
MAX_STEPS = 2**53
"""The most steps a run can take: beyond 2⁵³ the node times k·h of consecutive k round to one float64
(t + h == t), so time would stop advancing."""
MIN_STEP = math.sqrt(float(np.finfo(np.float64).tiny))
"""The smallest step, √(smallest normal float64) ≈ 1.49e-154: below it h² underflows, and the step
equations carry the forces into the configuration through h² (from rest a step moves by O(h²), and
a constrained step's Jacobian turns singular); a subnormal h also makes 1/h overflow."""


def checked_step(h: SupportsFloat) -> float:
    """The step size h as a finite float ≥ ``MIN_STEP`` (Python or numpy number), else ValueError."""
    step = checked_real(h, "h", 0.0, requirement="be a positive finite step")
    if step < MIN_STEP:
        raise ValueError(f"h = {step!r} is too small: h must be at least {MIN_STEP:.3g} (√ of the smallest normal "
                         "float64), below which h² underflows to 0 and the step equations lose the forces")
    return step


def whole_steps(h: float, t_final: float) -> int | None:
    """N with N·h = t_final (to a relative 1e-9) for positive finite h and t_final, or None when
    t_final / h is not a whole number ≥ 1 or exceeds ``MAX_STEPS``."""
    ratio = t_final / h
    if not ratio <= MAX_STEPS:
        return None
    n = round(ratio)
    return n if n >= 1 and abs(ratio - n) <= _WHOLE_NUMBER_TOL * max(1.0, ratio) else None


def _number_of_steps(h: float, t_final: object, n_steps: object) -> int:
    if (t_final is None) == (n_steps is None):
        raise ValueError("give exactly one of t_final and n_steps")
    if n_steps is not None:
        n = checked_count(n_steps, "n_steps")
        if n > MAX_STEPS:
            raise ValueError(f"n_steps = {n} is too large: at most 2**53 steps, beyond which the node "
                             "times k·h stop advancing in float64")
        return n
    T = checked_real(t_final, "t_final", 0.0, requirement="be positive and finite")
    ratio = T / h
    if not ratio <= MAX_STEPS:
        raise ValueError(f"h = {h!r} and t_final = {T!r}: the step count t_final / h = {ratio:.3g} is too "
                         "large (at most 2**53 steps, beyond which the node times k·h stop advancing in "
                         "float64); choose a larger h or a smaller t_final")
    whole = whole_steps(h, T)
    if whole is None:
        raise ValueError(
            f"t_final / h = {ratio!r} is not a whole number of steps; "
            f"choose h = t_final / N or pass n_steps= instead of t_final="
        )
    return whole


def integrate(
    problem: Problem[P],
    method: Method,
    h: SupportsFloat,
    t_final: SupportsFloat | None = None,
    *,
    n_steps: SupportsIndex | None = None,
    store_every: SupportsIndex = 1,
    progress: bool = False,
) -> Solution[P]:
    """Integrate ``problem`` with ``method`` at fixed step h up to t_final = n_steps·h.

    Nodes t_k = k·h are stored for k a multiple of ``store_every`` (and the last node), which keeps
    memory bounded on long runs; ``progress`` shows a bar of the steps done on stderr.
    Raises ConvergenceError (step, time, residual) if a step's equations cannot be solved.
    ``sol.lam`` holds the multipliers of methods that carry them (None otherwise); ``sol.extras``
    the methods' per-step quantities, one row per stored step (row i: the step ending at t[i + 1]);
    ``sol.metadata`` the method, the group, h, the retraction and store_every.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a Problem, got {type(problem).__name__}")
    if not isinstance(method, CompiledMethod):
        raise TypeError(f"method must be one of liemech's integrators such as VPRK(lobatto(3)), got "
                        f"{type(method).__name__}")
    require_float64()  # x64 switched off after the problem was built
    h = checked_step(h)
    n = _number_of_steps(h, t_final, n_steps)
    store_every = checked_count(store_every, "store_every")
    progress = checked_flag(progress, "progress")
    method.check(problem)
    metadata: Metadata = {"method": method.name, "group": repr(problem.group), "h": h,
                          "retraction": getattr(method, "retraction", "cay"), "store_every": store_every}
    with progress_bar(n, "step", progress, method.name) as bar:

        def report_progress(steps_done: int) -> None:
            bar.update(steps_done - bar.n)

        solution = _integrate_compiled(problem, method, h, n, store_every, report_progress)
    return dataclasses.replace(solution, metadata=metadata, group=problem.group)


def _integrate_compiled(problem: Problem[P], method: CompiledMethod, h: float, n: int, store_every: int,
                        report: Callable[[int], None]) -> Solution[P]:
    """The compiled path: the whole run in compiled chunks, every store_every-th node kept."""
    started = time.perf_counter()
    stored = run(problem, method, h, n, store_every, report)
    nodes, lam0 = stored.nodes, problem.lam0

    def with_start(start: VectorLike, rows: VectorLike) -> Vector:
        return np.concatenate([np.asarray(start, dtype=np.float64)[None], np.asarray(rows, dtype=np.float64)])

    def from_zero(summary: NDArray[np.int64] | NDArray[np.float64]) -> Vector:
        return np.concatenate([[0.0], summary.astype(np.float64)])

    kept = np.append(np.arange(store_every, n, store_every), n)
    gs = cast(P, jax.tree.map(with_start, problem.g0, nodes.g))
    stats = SolverStats(from_zero(stored.iterations), from_zero(stored.residuals), time.perf_counter() - started,
                        from_zero(stored.steps))
    lam = None if lam0 is None or nodes.lam.shape[-1] == 0 else with_start(lam0, nodes.lam)
    return Solution(np.concatenate([[0.0], kept * h]), gs, with_start(problem.eta0, nodes.eta),
                    with_start(problem.mu0, nodes.mu), lam, stats,
                    {name: np.asarray(rows, dtype=np.float64) for name, rows in nodes.extras.items()})
