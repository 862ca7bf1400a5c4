"""The ``liemech`` command line (also ``python -m liemech``).

- ``liemech list``: the systems and methods it runs, one line each;
- ``liemech run SYSTEM --method lobatto3``: integrate a system of ``liemech.systems.catalogue``
  and print the Newton effort, the energy drift, the drift of each first integral and the
  constraint residuals (``--plot``, ``--save``);
- ``liemech order SYSTEM --method lobatto3 --h 0.1 0.05 …``: errors of g(T) against a reference,
  local and fitted slopes (``--plot``);
- ``liemech check-group so3xr3``: the conformance suite of ``liemech.testing`` on a group and its
  retractions.

Exit codes: 0 on success, 1 when a run does not converge, a conformance check fails or an order
cannot be fitted, 2 on bad arguments (including a method that refuses the system, an output path
that cannot be written or a step that does not divide the end time). Arguments and output paths are
checked before any integration starts; every error is one line on stderr.
"""

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn, Protocol, TypeVar

import numpy as np

import liemech as lm
from liemech import plot
from liemech.diagnostics import drift
from liemech.run.integrate import MAX_STEPS, MIN_STEP, whole_steps
from liemech.systems.catalogue import SYSTEMS, Entry
from liemech.tableaux import TableauPair, satisfies_H1_H3, satisfies_H1p_H2p
from liemech.testing import ConformanceReport, check_group, check_retraction, estimate_order, point_distance

P = TypeVar("P")

FIGURES = ("energy", "trajectory", "constraints")
"""What ``run --plot`` can draw (``--figure``; energy and first integrals by default)."""
ORDER_STEPS = (8, 4, 2, 1)
"""``order`` without ``--h`` uses these multiples of the system's default step."""
REFERENCE_REFINEMENT = 16
"""Without a reference solution, ``order`` compares with the same method at h_min / 16."""

_LMS = "Martín de Diego & Sato Martín de Almagro 2018"
_SIMPSON = "Rojas-Quintero, Dubois & Jourdan 2025"
_DG = "Leyendecker, Betsch & Steinmann 2004"
_GGL = "Kinon, Betsch & Schneider 2023"


@dataclass(frozen=True)
class MethodEntry:
    """A method by name: its source and the method for a retraction (ignored off VPRK)."""

    source: str
    make: Callable[[lm.RetractionKind], lm.Method]
    note: str = ""


def _vprk(tableau: Callable[[int], TableauPair], s: int) -> MethodEntry:
    return MethodEntry(_LMS, lambda retraction: lm.VPRK(tableau(s), retraction))


METHODS: dict[str, MethodEntry] = {
    **{f"lobatto{s}": _vprk(lm.lobatto, s) for s in range(2, 6)},
    **{f"gauss{s}": _vprk(lm.gauss, s) for s in range(1, 4)},
    "simpson": MethodEntry(_SIMPSON, lambda r: lm.SimpsonVI()),
    "midpoint": MethodEntry(_SIMPSON, lambda r: lm.MidpointVI()),
    "rk4": MethodEntry(_SIMPSON, lambda r: lm.RK4()),
    "dg-multiplier": MethodEntry(_DG, lambda r: lm.DiscreteGradientMultiplier()),
    "dg-penalty": MethodEntry(_DG, lambda r: lm.DiscreteGradientPenalty(1e7), "penalty μ = 1e7"),
    "dg-augmented": MethodEntry(_DG, lambda r: lm.DiscreteGradientAugmentedLagrange(1e7, variant="modified"),
                                "μ = 1e7, tol 1e-10"),
    "ggl-euler": MethodEntry(_GGL, lambda r: lm.GGLVariationalEuler()),
    "ggl-theta-a": MethodEntry(_GGL, lambda r: lm.GGLThetaA()),
    "ggl-theta-b": MethodEntry(_GGL, lambda r: lm.GGLThetaB()),
    "ggl-em": MethodEntry(_GGL, lambda r: lm.GGLEnergyMomentum()),
    "gonzalez-em": MethodEntry(_GGL, lambda r: lm.GonzalezEnergyMomentum()),
    "bobenko-suris": MethodEntry(_GGL, lambda r: lm.BobenkoSurisTop(), "the gyroscopic top only"),
}
"""Every method ``run`` and ``order`` accept, by name."""


def accepts(method: lm.Method) -> str:
    """The problems ``method`` takes, from ``method.scope`` (and a constrained VPRK's tableau)."""
    scope = method.scope
    parts = ["any configuration space" if scope.groups == "any" else "Rⁿ"]
    if scope.inertia == "constant":
        parts.append("constant mass matrix")
    kinds = [kind for kind, allowed in (("holonomic", scope.holonomic), ("nonholonomic", scope.nonholonomic))
             if allowed != "refused"]
    if isinstance(method, lm.VPRK) and not (satisfies_H1_H3(method.tableau) and satisfies_H1p_H2p(method.tableau)):
        kinds = []
    if scope.holonomic == "required":
        parts.append("holonomic constraints required")
    else:
        parts.append(f"unconstrained or with {' or '.join(kinds)} constraints" if kinds else "unconstrained only")
    return ", ".join(parts)


def describe(name: str) -> str:
    """One line: the method, its order and structure, what it accepts and its source."""
    entry = METHODS[name]
    method = entry.make("cay")
    traits = method.traits
    structure = [kind for kind, holds in (("symplectic", traits.symplectic), ("energy-conserving",
                                                                              traits.conserves_energy)) if holds]
    note = f" ({entry.note})" if entry.note else ""
    return (f"{method.name}{note}: order {traits.order}{''.join(', ' + s for s in structure)}; "
            f"{accepts(method)}; {entry.source}")


def parse_group(text: str) -> lm.LieGroup[lm.Vector] | lm.LieGroup[tuple[lm.Vector, ...]]:
    """so2, so3, se2, se3, rN (e.g. r3), or factors joined by x (so3xr3) for their product."""
    factors: list[lm.LieGroup[lm.Vector]] = []
    named: dict[str, Callable[[], lm.LieGroup[lm.Vector]]] = {"so2": lm.SO2, "so3": lm.SO3, "se2": lm.SE2,
                                                               "se3": lm.SE3}
    for token in text.lower().split("x"):
        euclidean = re.fullmatch(r"r([1-9][0-9]*)", token)
        if token in named:
            factors.append(named[token]())
        elif euclidean:
            factors.append(lm.Rn(int(euclidean.group(1))))
        else:
            raise argparse.ArgumentTypeError(
                f"unknown group {text!r}: expected so2, so3, se2, se3, rN (e.g. r3) or a product joined "
                "by x (e.g. so3xr3)")
    return factors[0] if len(factors) == 1 else lm.ProductGroup(*factors)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (np.isfinite(value) and value > 0.0):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line on stderr, exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> _Parser:
    parser = _Parser(prog="liemech", description="Structure-preserving mechanics on Lie groups.")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="{list,run,order,check-group}")
    verbs.add_parser("list", help="the systems and methods, one line each")
    systems, methods = list(SYSTEMS), list(METHODS)

    run = verbs.add_parser("run", help="integrate a system and print a summary")
    run.add_argument("system", choices=systems, metavar="SYSTEM", help="a system of `liemech list`")
    run.add_argument("--method", choices=methods, default="lobatto3", metavar="METHOD", help="default lobatto3")
    run.add_argument("--retraction", choices=lm.RETRACTION_KINDS, help="τ of the VPRK methods (default cay)")
    run.add_argument("--h", type=_positive, help="step (default: the system's)")
    run.add_argument("--t-final", type=_positive, help="end time, a whole number of steps (default: the system's)")
    run.add_argument("--plot", metavar="PNG", help="write a figure")
    run.add_argument("--figure", choices=FIGURES, help="what --plot draws (default energy and first integrals)")
    run.add_argument("--save", metavar="NPZ", help="write the solution with Solution.save")

    order = verbs.add_parser("order", help="convergence study against a reference solution")
    order.add_argument("system", choices=systems, metavar="SYSTEM", help="a system of `liemech list`")
    order.add_argument("--method", choices=methods, default="lobatto3", metavar="METHOD", help="default lobatto3")
    order.add_argument("--retraction", choices=lm.RETRACTION_KINDS, help="τ of the VPRK methods (default cay)")
    order.add_argument("--h", type=_positive, nargs="+", help="steps (default: 8, 4, 2, 1 × the system's step)")
    order.add_argument("--t-final", type=_positive, help="end time (default: the system's)")
    order.add_argument("--plot", metavar="PNG", help="write the log–log figure")

    check = verbs.add_parser("check-group", help="conformance suite of a group and its retractions")
    check.add_argument("group", type=parse_group, metavar="GROUP",
                       help="so2, so3, se2, se3, rN, or a product like so3xr3")
    check.add_argument("--retraction", choices=lm.RETRACTION_KINDS, help="check only this retraction")
    return parser


def _method(args: argparse.Namespace) -> lm.Method:
    method = METHODS[args.method].make(args.retraction or "cay")
    if args.retraction is not None and not isinstance(method, lm.VPRK):
        raise ValueError(f"--retraction applies to the VPRK methods (lobatto*, gauss*), not {method.name}")
    return method


def _check_folder(path: str | None, option: str) -> None:
    """ValueError naming ``option`` unless ``path`` (when given) names a file in an existing,
    writable folder."""
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"argument {option}: expected a file name, got the folder {path!r}")
    if not os.path.isdir(folder):
        raise ValueError(f"argument {option}: the folder {folder!r} of {path!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"argument {option}: cannot write into the folder {folder!r} of {path!r}")


def _check_figure(path: str | None) -> None:
    """ValueError naming --plot unless ``path`` (when given) can take a figure: an existing folder
    and a format matplotlib writes."""
    if path is not None:
        _check_folder(path, "--plot")
        plot.check_figure_path(path, "argument --plot")


def _step_count(h: float, t_final: float) -> int:
    """N with N·h = t_final, else ValueError in the command line's terms: --h too small to count
    the steps, or not dividing --t-final (with a step that does and an end time that does)."""
    ratio = t_final / h
    if not ratio <= MAX_STEPS:
        raise ValueError(f"argument --h: {h:g} is too small for --t-final {t_final:g}: the step count "
                         f"--t-final / --h = {ratio:.3g} is too large (at most 2**53); choose a larger --h")
    if h < MIN_STEP:
        raise ValueError(f"argument --h: {h:g} is too small: the step must be at least {MIN_STEP:.3g}, below which "
                         "h² underflows in float64 and the step equations lose the forces")
    n = whole_steps(h, t_final)
    if n is None:
        near = max(1, round(ratio))
        raise ValueError(f"argument --h: --t-final {t_final:g} is not a whole number of steps of --h {h:g} "
                         f"(--t-final / --h = {ratio:.6g}); try --h {t_final / near!r} (--t-final / {near}) "
                         f"or --t-final {near * h:.12g}")
    return n


def _list() -> int:
    width = max(map(len, [*SYSTEMS, *METHODS])) + 2
    print("systems (liemech run SYSTEM):")
    for name, entry in SYSTEMS.items():
        print(f"  {name:<{width}}{entry.description}; h = {entry.h:g}, T = {entry.t_final:g}")
    print("methods (--method METHOD):")
    for name in METHODS:
        print(f"  {name:<{width}}{describe(name)}")
    return 0


def _run(entry: Entry[P], args: argparse.Namespace) -> int:
    if args.figure is not None and args.plot is None:
        raise ValueError(f"argument --figure: --figure {args.figure} needs --plot PNG, the file to draw it in")
    method = _method(args)
    _check_figure(args.plot)
    _check_folder(args.save, "--save")
    h, t_final = args.h or entry.h, args.t_final or entry.t_final
    n_steps = _step_count(h, t_final)
    problem = entry.problem()
    if args.figure == "constraints" and problem.holonomic is None and problem.nonholonomic is None:
        raise ValueError(f"argument --figure: {args.system} has no constraints, so --figure constraints would "
                         "draw an empty figure; choose --figure energy or trajectory")
    method.check(problem)
    sol = lm.integrate(problem, method, h, n_steps=n_steps, progress=True)
    iterations = sol.stats.iterations[1:]
    print(f"system: {args.system} ({entry.description})")
    print(f"method: {method.name}")
    print(f"steps: {len(iterations)} (h = {h:g}, t_final = {t_final:g})")
    print(f"Newton iterations per step: mean {sol.stats.mean_iterations:.2f}, max {int(np.max(iterations))}")
    print(f"wall time: {sol.stats.wall_time:.2f} s")
    print(f"energy drift max|H − H₀|: {drift(plot.at_nodes(sol, entry.energy)):.3e}")
    for name, fn in entry.invariants.items():
        print(f"drift max|I − I₀| of {name}: {drift(plot.at_nodes(sol, fn)):.3e}")
    if problem.holonomic is not None or problem.nonholonomic is not None:
        for name, values in plot.residual_norms(sol, problem).items():
            print(f"constraint residual max{name}: {float(np.max(values)):.3e}")
    if args.plot:
        title = f"{args.system}, {method.name}"
        figures = {"energy": lambda: plot.energy(sol, entry.energy, entry.invariants, title=title),
                   "trajectory": lambda: plot.trajectory(sol, problem.group, title=title),
                   "constraints": lambda: plot.constraint_residuals(sol, problem, title=title)}
        figures[args.figure or "energy"]().savefig(args.plot)
        print(f"figure: {args.plot}")
    if args.save:
        sol.save(args.save)
        print(f"saved: {args.save}")
    return 0


def _order(entry: Entry[P], args: argparse.Namespace) -> int:
    method = _method(args)
    _check_figure(args.plot)
    if args.h is not None and len(set(args.h)) < 2:
        raise ValueError(f"argument --h: expected at least two different steps, got "
                         f"{' '.join(f'{h:g}' for h in args.h)}")
    repeated = sorted({h for h in args.h or () if args.h.count(h) > 1}, reverse=True)
    if repeated:
        # A repeated step runs twice and gives a 0/0 local slope; the fit would count it twice.
        raise ValueError(f"argument --h: {' '.join(f'{h:g}' for h in repeated)} given more than once; give each "
                         "step once")
    t_final = args.t_final or entry.t_final
    steps = sorted(args.h or [k * entry.h for k in ORDER_STEPS], reverse=True)
    counts = [_step_count(h, t_final) for h in steps]
    h_ref = steps[-1] / REFERENCE_REFINEMENT
    n_ref = _step_count(h_ref, t_final) if entry.reference is None else 0
    problem = entry.problem()
    method.check(problem)
    if entry.reference is not None:
        reference, source = entry.reference(t_final), "the system's reference solution"
    else:
        reference = lm.integrate(problem, method, h_ref, n_steps=n_ref, progress=True).point(-1)
        source = f"the same method at h = {h_ref:g}"
    errors = [point_distance(lm.integrate(problem, method, h, n_steps=n).point(-1), reference)
              for h, n in zip(steps, counts)]
    print(f"{args.system} with {method.name}: error max|g_N − g(T)| at T = {t_final:g} against {source}")
    print(f"{'h':>12}{'error':>14}{'local slope':>14}")
    for i, (h, error) in enumerate(zip(steps, errors)):
        rate = i > 0 and error > 0 and errors[i - 1] > 0
        local = f"{np.log(error / errors[i - 1]) / np.log(h / steps[i - 1]):14.2f}" if rate else ""
        print(f"{h:>12.6g}{error:>14.3e}{local}")
    try:
        fit = estimate_order(steps, errors)
    except ValueError as reason:
        print(f"liemech order: cannot fit a slope: {reason}", file=sys.stderr)
        return 1
    print(f"fitted slope: {fit.slope:.2f} (theory {method.traits.order}; over h = "
          f"{', '.join(f'{h:g}' for h in fit.steps_used)})")
    if args.plot:
        plot.convergence(steps, {"max|g_N − g(T)|": errors}, slopes=[method.traits.order],
                         title=f"{args.system}, {method.name}: error at T = {t_final:g}").savefig(args.plot)
        print(f"figure: {args.plot}")
    return 0


def _conformance(group: lm.LieGroup[P], kinds: Sequence[lm.RetractionKind]) -> list[ConformanceReport]:
    rng = np.random.default_rng(0)
    return [check_group(group, rng, raise_on_failure=False),
            *(check_retraction(group.retraction(kind), rng, raise_on_failure=False) for kind in kinds)]


def _check_group(args: argparse.Namespace) -> int:
    kinds: tuple[lm.RetractionKind, ...] = (args.retraction,) if args.retraction else lm.RETRACTION_KINDS
    reports = _conformance(args.group, kinds)
    for report in reports:
        print(f"conformance of {report.subject}: {len(report.checks) - len(report.failures)}/"
              f"{len(report.checks)} checks passed")
        print(f"  {'check':<36}{'worst defect':>14}{'tolerance':>11}  result")
        for name in dict.fromkeys(c.name for c in report.checks):
            checks = [c for c in report.checks if c.name == name]
            worst = max(checks, key=lambda c: c.defect / c.tolerance)
            result = "ok" if all(c.passed for c in checks) else "FAIL"
            print(f"  {name:<36}{worst.defect:>14.2e}{worst.tolerance:>11.0e}  {result}")
        for failure in report.failures:
            print(f"  {failure}")
    return 0 if all(report.passed for report in reports) else 1


class _SystemVerb(Protocol):
    def __call__(self, entry: Entry[P], args: argparse.Namespace, /) -> int: ...


def _on_system(verb: _SystemVerb) -> Callable[[argparse.Namespace], int]:
    """The verb applied to the entry of ``args.system``, whatever its configuration space."""
    def command(args: argparse.Namespace) -> int:
        def action(entry: Entry[P]) -> int:
            return verb(entry, args)

        return SYSTEMS[args.system].apply(action)

    return command


VERBS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": _on_system(_run), "order": _on_system(_order), "check-group": _check_group}


def _one_line(error: BaseException) -> str:
    """The error's message on one line."""
    return " ".join(str(error).split())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    args = _parser().parse_args(argv)
    try:
        return _list() if args.verb == "list" else VERBS[args.verb](args)
    except (ValueError, TypeError, OSError) as error:
        print(f"liemech {args.verb}: error: {_one_line(error)}", file=sys.stderr)
        return 2
    except (lm.ConvergenceError, ImportError, RuntimeError) as error:
        print(f"liemech {args.verb}: {_one_line(error)}", file=sys.stderr)
        return 1
