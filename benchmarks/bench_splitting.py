"""Work–precision on the heavy top (SO(3), 𝕀 = diag(1, 2, 3.5)), two tables.

1. T = 100: the time to keep the maximum energy error over the run below 1e-4 … 1e-12, for
   liemech's best splitting or composition at each level, liemech's best VPRK, scipy's DOP853 and
   diffrax's Dopri8 (jitted; when installed: ``pip install 'liemech[bench]'``), both with rtol
   scanned, on the same lean Euler–Poisson equations, with the ratios of the best splitting's time
   to DOP853's and to Dopri8's.
2. T = 10⁴: DOP853 at rtol 1e-11 (its time and energy error), then liemech's splittings run at no
   more than that time (the step count set from the CPU time of a shorter run), and the cheapest
   splitting run found whose energy error is 10 times smaller than DOP853's; Dopri8 at rtol 1e-11
   beside them. The liemech runs store every ``LONG_STORE_EVERY``-th node (the energy error is the
   maximum over those).

Times are wall and CPU times (``timed``); choices go by CPU time, which machine load disturbs
less. For each method and level the step (or rtol) is the largest on a geometric grid that meets
the level; the ``FINALISTS`` fastest methods of each family (by a first timing) are then timed in
interleaved rounds (every run once per round, so that a change of machine load touches them all
alike), after compilation, and the smallest median is printed. Every timed run includes computing
its energy error from the stored states.

Run: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_splitting.py
"""

import importlib.util
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

import liemech as lm  # noqa: E402
from liemech.systems.heavy_top import HeavyTop  # noqa: E402
from liemech.types import Matrix, Vector  # noqa: E402

T = 100.0
LEVELS = (1e-4, 1e-6, 1e-8, 1e-10, 1e-12)
ROUNDS = 5
TOP = HeavyTop()
INVERSE = np.linalg.inv(TOP.inertia)
SPLITTINGS: tuple[lm.SplittingComposition, ...] = ("strang", "yoshida4", "suzuki4", "mclachlan4", "yoshida6",
                                                   "kahan_li6", "yoshida8", "kahan_li8")
CARRIED = lm.NewtonOptions(jacobian="carried")
VPRKS = {f"VPRK({name}{', carried' if newton is CARRIED else ''})": lm.VPRK(tableau, newton=newton)
         for name, tableau in (("lobatto(3)", lm.lobatto(3)), ("gauss(2)", lm.gauss(2)), ("gauss(3)", lm.gauss(3)))
         for newton in (lm.NewtonOptions(), CARRIED)}
"""liemech's VPRK candidates, each with a fresh Jacobian per step and with Newton's factors carried
from step to step (which pays on the heavy top)."""
MAX_STEPS = {"splitting": 400_000, "vprk": 40_000}
RTOLS = tuple(10.0 ** (-k / 2) for k in range(6, 30))
"""The rtols scanned for DOP853 and Dopri8 (atol = 1e-3 rtol)."""
DIFFRAX_MAX_STEPS = 20_000
FINALISTS = 3
"""Per family and level, the settings (one per method: composition, tableau) that were fastest in a
first timing go on to the interleaved rounds, whose medians pick the best."""

LONG_T = 1e4
LONG_RTOL = 1e-11
LONG_ROUNDS = 3
LONG_STORE_EVERY = 100
LONG_SPLITTINGS: tuple[lm.SplittingComposition, ...] = ("kahan_li6", "kahan_li8")
PROBE_STEPS = 20_000
LONG_TIME_MARGIN = 0.7
"""The equal-time liemech runs aim at this fraction of DOP853's CPU time (machine load drifts)."""
DIFFRAX_LONG_MAX_STEPS = 400_000

X = TypeVar("X")


def energies(mu: Any, gamma: Any, xp: Any = np) -> Any:
    """H_k = ½μ_kᵀ𝕀⁻¹μ_k + mg ⟨Γ_k, χ⟩ with Γ = Rᵀe₃, for numpy (xp = np) or traced (xp = jnp) rows."""
    return 0.5 * xp.einsum("ki,ij,kj->k", mu, INVERSE, mu) + TOP.mg * gamma @ TOP.chi


def energy_error(R: Matrix, mu: Matrix) -> float:
    """max_k |H_k − H_0| over the stored nodes."""
    energy = energies(mu, R[:, 2])
    return float(np.max(np.abs(energy - energy[0])))


def step_counts(first: int, last: int) -> list[int]:
    """A geometric grid of step counts, ratio 2^(1/4), each dividing nothing in particular."""
    counts, n = [], float(first)
    while n <= last:
        counts.append(int(round(n)))
        n *= 2.0 ** 0.25
    return counts


def liemech_run(method: lm.Method, n: int, t_final: float = T, store_every: int = 1) -> Callable[[], float]:
    problem = TOP.problem()

    def run() -> float:
        try:
            sol = lm.integrate(problem, method, h=t_final / n, n_steps=n, store_every=store_every)
        except lm.ConvergenceError:  # a step too large for Newton (VPRK) or for stability
            return float("inf")
        return energy_error(sol.g, sol.mu)

    return run


def euler_poisson(y: Any, stack: Callable[[list[Any]], X]) -> X:
    """μ̇ = μ × ω + mg Γ × χ, Γ̇ = Γ × ω, ω = 𝕀⁻¹μ (diagonal 𝕀), written lean, for numpy
    (stack = np.array) or JAX (stack = jnp.stack)."""
    m1, m2, m3, g1, g2, g3 = y
    w1, w2, w3 = m1 / 1.0, m2 / 2.0, m3 / 3.5
    c1, c2, c3 = 0.2, -0.1, 0.6
    mg = 1.5
    return stack([m2 * w3 - m3 * w2 + mg * (g2 * c3 - g3 * c2),
                  m3 * w1 - m1 * w3 + mg * (g3 * c1 - g1 * c3),
                  m1 * w2 - m2 * w1 + mg * (g1 * c2 - g2 * c1),
                  g2 * w3 - g3 * w2, g3 * w1 - g1 * w3, g1 * w2 - g2 * w1])


def euler_poisson_numpy(t: float, y: Vector) -> Vector:
    return euler_poisson(y, np.array)


def initial_state() -> Vector:
    """(μ₀, Γ₀ = R₀ᵀe₃) of the heavy top."""
    problem = TOP.problem()
    return np.concatenate([problem.mu0, problem.g0[2]])


def dop853_run(rtol: float, t_final: float = T) -> Callable[[], float]:
    y0 = initial_state()

    def run() -> float:
        sol = solve_ivp(euler_poisson_numpy, (0.0, t_final), y0, method="DOP853", rtol=rtol, atol=rtol * 1e-3)
        energy = energies(sol.y[:3].T, sol.y[3:].T)
        return float(np.max(np.abs(energy - energy[0])))

    return run


def diffrax_solver(t_final: float, max_steps: int) -> Callable[[float], Callable[[], float]] | None:
    """rtol ↦ a run of diffrax's Dopri8 with a PIDController (atol = 1e-3 rtol) to ``t_final``,
    jitted once (rtol is an argument), returning max_k |H_k − H_0| over its steps (inf if it ran out
    of ``max_steps``); None if diffrax is not installed. The energy is computed inside the compiled
    solve, and only it is stored per step (SaveAt(steps=True, fn=...))."""
    if importlib.util.find_spec("diffrax") is None:
        return None
    import diffrax

    def energy(t: Any, y: jax.Array, args: Any) -> jax.Array:
        return jnp.asarray(energies(y[None, :3], y[None, 3:], jnp))[0]

    @jax.jit
    def solve(y0: jax.Array, rtol: jax.Array) -> jax.Array:
        sol = diffrax.diffeqsolve(
            diffrax.ODETerm(lambda t, y, args: euler_poisson(y, jnp.stack)), diffrax.Dopri8(), 0.0, t_final,
            None, y0, stepsize_controller=diffrax.PIDController(rtol=rtol, atol=1e-3 * rtol),
            saveat=diffrax.SaveAt(t0=True, steps=True, fn=energy), max_steps=max_steps, throw=False)
        values = jnp.asarray(sol.ys)
        deviation = jnp.where(jnp.isfinite(values), jnp.abs(values - values[0]), 0.0)  # unused slots are inf
        return jnp.where(sol.result == diffrax.RESULTS.successful, jnp.max(deviation), jnp.inf)

    y0 = jnp.asarray(initial_state())
    solve(y0, jnp.asarray(1e-6)).block_until_ready()  # compiles, outside every timing

    def at(rtol: float) -> Callable[[], float]:
        return lambda: float(solve(y0, jnp.asarray(rtol)).block_until_ready())

    return at


@dataclass
class Choice:
    label: str
    run: Callable[[], float]
    error: float
    times: list[tuple[float, float]]
    """(wall, CPU) seconds of each timed run."""

    @property
    def wall(self) -> float:
        return statistics.median(wall for wall, _ in self.times)

    @property
    def cpu(self) -> float:
        return statistics.median(cpu for _, cpu in self.times)


def first_meeting(settings: list[tuple[str, Callable[[], float]]], levels: tuple[float, ...]) -> dict[
        float, tuple[str, Callable[[], float], float]]:
    """For each level, the first setting (cheapest first) whose energy error meets it; the settings
    are run once each, in order, until the smallest level is met."""
    found: dict[float, tuple[str, Callable[[], float], float]] = {}
    for setting, run in settings:
        error = run()
        for level in levels:
            if level not in found and error <= level:
                found[level] = (setting, run, error)
        if len(found) == len(levels):
            break
    return found


def timed(run: Callable[[], float]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run. The CPU time of the process (time.process_time: every thread;
    every solver here runs on one) is what the run would take on an idle machine; the wall time
    also holds the waits for the cores that other processes hold."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def interleaved(choices: Sequence[Choice], rounds: int) -> None:
    """Replace every choice's times by ``rounds`` runs, every choice once per round."""
    for choice in choices:
        choice.times.clear()
    for _ in range(rounds):
        for choice in choices:
            choice.times.append(timed(choice.run))


def ratio(numerator: Choice | None, denominator: Choice | None) -> str:
    """The ratio of the wall times / of the CPU times."""
    if numerator is None or denominator is None:
        return "–"
    return f"{numerator.wall / denominator.wall:.2f} / {numerator.cpu / denominator.cpu:.2f}"


def compile_everything() -> Callable[[float], Callable[[], float]] | None:
    """Compile liemech's methods and diffrax's solve (both outside every timing); print the times."""
    started = time.perf_counter()
    lm.integrate(TOP.problem(), lm.Splitting("strang"), h=0.1, n_steps=1)
    print(f"compilation: Splitting (the other compositions load it from the compilation cache) "
          f"{time.perf_counter() - started:.1f} s")
    for name, vprk in VPRKS.items():
        started = time.perf_counter()
        lm.integrate(TOP.problem(), vprk, h=0.1, n_steps=1)
        print(f"compilation: {name} {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    dopri8 = diffrax_solver(T, DIFFRAX_MAX_STEPS)
    if dopri8 is None:
        print("diffrax is not installed (pip install 'liemech[bench]'): its column is skipped")
    else:
        print(f"compilation: diffrax Dopri8 {time.perf_counter() - started:.1f} s")
    print()
    return dopri8


FAMILIES = ("splitting", "vprk", "dop853", "dopri8")


def work_precision_table(dopri8: Callable[[float], Callable[[], float]] | None) -> None:
    """Table 1 (module docstring)."""
    candidates: dict[str, list[tuple[str, list[tuple[str, Callable[[], float]]]]]] = {
        "splitting": [(f"Splitting({c!r})", [(f"{n} steps", liemech_run(lm.Splitting(c), n))
                                             for n in step_counts(100, MAX_STEPS["splitting"])]) for c in SPLITTINGS],
        "vprk": [(name, [(f"{n} steps", liemech_run(vprk, n)) for n in step_counts(200, MAX_STEPS["vprk"])])
                 for name, vprk in VPRKS.items()],
        "dop853": [("DOP853", [(f"rtol {r:.0e}", dop853_run(r)) for r in RTOLS])],
        "dopri8": [] if dopri8 is None else [("Dopri8", [(f"rtol {r:.0e}", dopri8(r)) for r in RTOLS])],
    }
    finalists: dict[tuple[float, str], list[Choice]] = {}
    for family, methods in candidates.items():
        per_method = [(label, first_meeting(settings, LEVELS)) for label, settings in methods]
        for level in LEVELS:
            meeting = [Choice(f"{label}, {found[level][0]}", found[level][1], found[level][2], [])
                       for label, found in per_method if level in found]
            for choice in meeting:
                choice.times = [min((timed(choice.run) for _ in range(2)), key=lambda pair: pair[1])]
            finalists[(level, family)] = sorted(meeting, key=lambda choice: choice.cpu)[:FINALISTS]
    interleaved([choice for choices in finalists.values() for choice in choices], ROUNDS)
    table = {key: min(choices, key=lambda choice: choice.cpu) if choices else None
             for key, choices in finalists.items()}

    print(f"Table 1. T = {T:g}: wall time / CPU time in ms (medians of {ROUNDS} interleaved runs, after "
          "compilation) to keep max_k |H_k − H_0| below each level, the fastest by CPU time; the setting chosen "
          "and the error it reached in brackets; the ratios of the best splitting's times to DOP853's and to "
          "Dopri8's (wall / CPU)\n")
    widths = (66, 60, 48, 48)
    print(f"{'max |ΔH|':>9} | " + " | ".join(f"{title:<{width}}" for title, width in zip(
        ("liemech, best splitting", "liemech, best VPRK", "scipy DOP853 (Euler–Poisson)", "diffrax Dopri8, jitted"),
        widths)) + f" | {'split/DOP853':>12} | {'split/Dopri8':>12}")
    for level in LEVELS:
        cells = []
        for family, width in zip(FAMILIES, widths):
            entry = table[(level, family)]
            missing = "diffrax not installed" if family == "dopri8" and dopri8 is None else "not reached"
            text = (missing if entry is None else
                    f"{1e3 * entry.wall:6.1f} / {1e3 * entry.cpu:6.1f} {entry.label} ({entry.error:.1e})")
            cells.append(f"{text:<{width}}")
        best_split = table[(level, "splitting")]
        print(f"{level:>9.0e} | {' | '.join(cells)} | {ratio(best_split, table[(level, 'dop853')]):>12} | "
              f"{ratio(best_split, table[(level, 'dopri8')]):>12}")
    print()


def measured(label: str, run: Callable[[], float]) -> Choice:
    """One timed run, with its energy error."""
    wall, cpu = time.perf_counter(), time.process_time()
    error = run()
    return Choice(label, run, error, [(time.perf_counter() - wall, time.process_time() - cpu)])


def long_run_table() -> None:
    """Table 2 (module docstring)."""
    dop853 = measured(f"scipy DOP853, rtol {LONG_RTOL:g}", dop853_run(LONG_RTOL, LONG_T))
    budget = dop853.cpu
    # equal time: per composition, the step count that fills LONG_TIME_MARGIN of DOP853's CPU time,
    # from the CPU time per step of a run of PROBE_STEPS steps
    same_time: dict[lm.SplittingComposition, Choice] = {}
    for composition in LONG_SPLITTINGS:
        method = lm.Splitting(composition)
        per_step = min(timed(liemech_run(method, PROBE_STEPS, LONG_T / 10, LONG_STORE_EVERY))[1]
                       for _ in range(2)) / PROBE_STEPS
        n = int(LONG_TIME_MARGIN * budget / per_step)
        same_time[composition] = measured(f"Splitting({composition!r}), {n} steps (h = {LONG_T / n:.3g})",
                                          liemech_run(method, n, LONG_T, LONG_STORE_EVERY))
    choices = [dop853, *same_time.values()]
    # the fewest steps, on a geometric grid, with which the best composition at equal time has an
    # energy error 10 times smaller than DOP853's
    composition = min(same_time, key=lambda name: same_time[name].error)
    for n in step_counts(10_000, 4_000_000):
        cheapest = measured(f"Splitting({composition!r}), {n} steps (h = {LONG_T / n:.3g}), fewest for ΔH/10",
                            liemech_run(lm.Splitting(composition), n, LONG_T, LONG_STORE_EVERY))
        if cheapest.error <= dop853.error / 10.0:
            choices.append(cheapest)
            break
    dopri8 = diffrax_solver(LONG_T, DIFFRAX_LONG_MAX_STEPS)
    if dopri8 is not None:
        choices.append(measured(f"diffrax Dopri8 (jitted), rtol {LONG_RTOL:g}", dopri8(LONG_RTOL)))
    interleaved(choices, LONG_ROUNDS)

    print(f"Table 2. T = {LONG_T:g}: DOP853 at rtol {LONG_RTOL:g}, liemech's splittings at about "
          f"{LONG_TIME_MARGIN:g} of its CPU time, and the cheapest splitting run found with a 10x smaller energy "
          f"error (median of {LONG_ROUNDS} interleaved runs; liemech stores every {LONG_STORE_EVERY}th node)\n")
    print(f"{'run':<72} | {'wall s':>7} | {'CPU s':>7} | {'max |ΔH|':>9} | {'time/DOP853 (wall / CPU)':>24} | "
          f"{'ΔH/DOP853':>9}")
    for choice in choices:
        print(f"{choice.label:<72} | {choice.wall:>7.2f} | {choice.cpu:>7.2f} | {choice.error:>9.1e} | "
              f"{ratio(choice, dop853):>24} | {choice.error / dop853.error:>9.1e}")


def main() -> None:
    print("heavy top on SO(3), 𝕀 = diag(1, 2, 3.5): work–precision of liemech, scipy and diffrax\n")
    dopri8 = compile_everything()
    work_precision_table(dopri8)
    long_run_table()


if __name__ == "__main__":
    main()
