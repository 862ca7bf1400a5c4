"""The ``liemech`` command line: each verb in a subprocess (exit code, printed summary, files
written) against direct library calls, bad arguments in process (exit code 2 and the message),
and the catalogue's energies against the Lagrangian's E = ⟨μ, η⟩ − ℓ."""

import contextlib
import dataclasses
import io
import re
import subprocess
import sys
from pathlib import Path
from typing import TypeVar, cast

import numpy as np
import pytest

import liemech as lm
from liemech.cli import METHODS, main
from liemech.diagnostics import drift
from liemech.systems import ConstrainedHeavyTop
from liemech.systems.catalogue import SYSTEMS, Entry
from liemech.testing import Check, ConformanceReport

P = TypeVar("P")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TOP = cast(Entry[lm.Matrix], SYSTEMS["heavy-top"])
H, T_FINAL = 0.01, 0.2


def liemech(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "liemech", *args], cwd=cwd, capture_output=True, text=True,
                          encoding="utf-8", timeout=600)


def liemech_in_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``main(args)`` run in ``cwd`` as the command would be, its output and exit code captured (a
    subprocess would pay 3 s of imports per command)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(list(args))
        except SystemExit as exit_:  # argparse's usage errors
            code = exit_.code if isinstance(exit_.code, int) else 2
    return subprocess.CompletedProcess(["liemech", *args], code, stdout.getvalue(), stderr.getvalue())


def number(label: str, output: str) -> float:
    """The number printed after ``label`` on its line."""
    match = re.search(re.escape(label) + r"\s*([-+0-9.e]+)", output)
    assert match is not None, f"{label!r} not in\n{output}"
    return float(match.group(1))


@pytest.fixture(scope="module")
def heavy_top() -> tuple[lm.Problem[lm.Matrix], lm.Solution[lm.Matrix]]:
    """The heavy top with Lobatto-3 and the Cayley map, integrated directly (h = 0.01, T = 0.2)."""
    problem = TOP.problem()
    return problem, lm.integrate(problem, lm.VPRK(lm.lobatto(3), "cay"), H, T_FINAL)


def test_list_names_every_system_and_method(tmp_path: Path) -> None:
    out = liemech("list", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    for name in [*SYSTEMS, *METHODS]:
        assert sum(line.split()[0] == name for line in lines if line.startswith("  ")) == 1
    lobatto3 = next(line for line in lines if line.split()[0] == "lobatto3")
    assert "order 4" in lobatto3 and "holonomic or nonholonomic" in lobatto3
    gauss2 = next(line for line in lines if line.split()[0] == "gauss2")
    assert "unconstrained only" in gauss2


@pytest.mark.slow
def test_run_prints_the_summary_of_a_direct_integration_and_writes_its_files(
        tmp_path: Path, heavy_top: tuple[lm.Problem[lm.Matrix], lm.Solution[lm.Matrix]]) -> None:
    """Steps, Newton iterations, energy drift and the Noether drift agree with lm.integrate; the
    figure is a PNG and the saved solution loads to the same nodes."""
    out = liemech("run", "heavy-top", "--method", "lobatto3", "--retraction", "cay", "--h", str(H),
                  "--t-final", str(T_FINAL), "--plot", "energy.png", "--save", "run.npz", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    _, sol = heavy_top
    energy = drift(np.array([TOP.energy(R, mu) for R, mu in zip(sol.g, sol.mu)]))
    noether = drift(np.array([float(mu @ R[2]) for R, mu in zip(sol.g, sol.mu)]))  # ⟨μ, Rᵀe₃⟩
    assert number("steps:", out.stdout) == round(T_FINAL / H)
    assert number("Newton iterations per step: mean", out.stdout) == pytest.approx(sol.stats.mean_iterations, abs=0.01)
    assert number("energy drift max|H − H₀|:", out.stdout) == pytest.approx(energy, rel=1e-3)
    assert 1e-13 < energy < 1e-8
    assert noether <= 1e-14 and number("of Noether momentum ⟨μ, Rᵀe₃⟩:", out.stdout) <= 1e-14  # both at round-off
    assert (tmp_path / "energy.png").read_bytes()[:8] == PNG_SIGNATURE
    saved = lm.Solution.load(tmp_path / "run.npz", lm.SO3())
    assert np.array_equal(saved.t, sol.t)
    assert np.max(np.abs(np.asarray(saved.g) - sol.g)) <= 1e-14


@pytest.mark.slow
def test_order_fits_the_slope_of_lobatto3(tmp_path: Path) -> None:
    """Lobatto-3 on the heavy top against DOP853: fitted slope 2s − 2 = 4 (± 0.3); a log–log PNG."""
    out = liemech("order", "heavy-top", "--method", "lobatto3", "--h", "0.2", "0.1", "0.05", "0.025",
                  "--t-final", "1", "--plot", "order.png", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert abs(number("fitted slope:", out.stdout) - 4.0) <= 0.3
    rows = [line.split() for line in out.stdout.splitlines() if re.fullmatch(r"\s*0\.\d+\s+\S+(\s+\S+)?", line)]
    assert [float(row[0]) for row in rows] == [0.2, 0.1, 0.05, 0.025]
    assert (tmp_path / "order.png").read_bytes()[:8] == PNG_SIGNATURE


def test_order_without_a_reference_uses_a_finer_run(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        heavy_top: tuple[lm.Problem[lm.Matrix], lm.Solution[lm.Matrix]]) -> None:
    """The heavy top with its DOP853 reference removed: the errors against Lobatto-3 at h_min / 16
    still fit slope 4 (± 0.3)."""
    monkeypatch.setitem(SYSTEMS, "heavy-top", dataclasses.replace(TOP, reference=None))
    assert main(["order", "heavy-top", "--h", "0.2", "0.1", "0.05", "--t-final", "1"]) == 0
    out = capsys.readouterr().out
    assert "against the same method at h = 0.003125" in out
    assert abs(number("fitted slope:", out) - 4.0) <= 0.3


def test_check_group_passes_on_so3(tmp_path: Path) -> None:
    out = liemech("check-group", "so3", "--retraction", "cay", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "conformance of SO3()" in out.stdout and "conformance of cay on SO3()" in out.stdout
    passed = re.findall(r"(\d+)/(\d+) checks passed", out.stdout)
    assert len(passed) == 2 and all(a == b for a, b in passed)
    assert "FAIL" not in out.stdout


def test_an_unknown_system_exits_2_from_the_command_line(tmp_path: Path) -> None:
    out = liemech("run", "trebuchet", cwd=tmp_path)
    assert out.returncode == 2
    assert "argument SYSTEM: invalid choice: 'trebuchet'" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and out.stdout == ""


@pytest.mark.parametrize(("argv", "message"), [
    (["run", "heavy-top", "--method", "lobatto9"], "argument --method: invalid choice: 'lobatto9'"),
    (["check-group", "so4"], "argument GROUP: unknown group 'so4'"),
    (["run", "heavy-top", "--h", "0"], "argument --h: must be a positive number, got '0'"),
    (["order", "heavy-top", "--h", "0.1", "-0.05"], "argument --h: must be a positive number, got '-0.05'"),
    (["run", "heavy-top", "--h", "0.3"], "argument --h: --t-final 2 is not a whole number of steps of --h 0.3"),
    (["run", "heavy-top", "--h", "1e-300"], "argument --h: 1e-300 is too small for --t-final 2: the step count "
                                            "--t-final / --h = 2e+300 is too large"),
    (["run", "heavy-top", "--h", "abc"], "argument --h: must be a positive number, got 'abc'"),
    (["run", "heavy-top", "--t-final", "inf"], "argument --t-final: must be a positive number, got 'inf'"),
    (["order", "heavy-top", "--h", "0.1"], "argument --h: expected at least two different steps, got 0.1"),
    (["order", "heavy-top", "--h", "0.1", "0.1"], "argument --h: expected at least two different steps, got 0.1 0.1"),
    (["order", "heavy-top", "--h", "0.2", "0.1", "0.2"], "argument --h: 0.2 given more than once; give each step once"),
    (["order", "heavy-top", "--h", "0.1", "0.3"], "argument --h: --t-final 2 is not a whole number of steps of --h 0.3"),
    (["order", "heavy-top", "--h", "1e-300", "1e-299"], "argument --h: 1e-299 is too small for --t-final 2"),
    (["run", "heavy-top", "--save", "/missing/dir/x.npz"],
     "argument --save: the folder '/missing/dir' of '/missing/dir/x.npz' does not exist"),
    (["run", "heavy-top", "--save", "."], "argument --save: expected a file name, got the folder '.'"),
    (["run", "heavy-top", "--plot", "/missing/dir/x.png"],
     "argument --plot: the folder '/missing/dir' of '/missing/dir/x.png' does not exist"),
    (["run", "heavy-top", "--plot", "x.xyz"], "argument --plot: unknown figure format '.xyz' of 'x.xyz'; expected a "
                                              "path ending in "),
    (["order", "heavy-top", "--plot", "order"], "argument --plot: unknown figure format '(no suffix)'"),
    (["run", "heavy-top", "--method", "simpson"], "SimpsonVI() works on Rn(n) configuration spaces, got SO3()"),
    (["run", "pendulum", "--method", "rk4", "--retraction", "exp"], "--retraction applies to the VPRK methods"),
    (["run", "heavy-top", "--figure", "trajectory"], "argument --figure: --figure trajectory needs --plot PNG"),
    (["run", "heavy-top", "--plot", "top.png", "--figure", "constraints"],
     "argument --figure: heavy-top has no constraints, so --figure constraints would draw an empty figure"),
    (["run", "heavy-top", "--h", "1e-300", "--t-final", "1e-299"],
     "argument --h: 1e-300 is too small: the step must be at least 1.49e-154, below which h² underflows"),
    (["check-group", "r3000"], "group Rn(3000) has dimension 3000, above the 100 that the conformance checks handle"),
])
def test_bad_arguments_exit_2_with_a_one_line_message(
        argv: list[str], message: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Each is refused with exit code 2 and one line naming the argument, before any integration."""
    def no_integration(*args: object, **kwargs: object) -> None:
        raise AssertionError("integrated before checking the arguments")

    monkeypatch.setattr(lm, "integrate", no_integration)
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's usage errors
        code = int(str(exit_.code))
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_step_that_does_not_divide_t_final_suggests_a_step_and_an_end_time_that_do(
        capsys: pytest.CaptureFixture[str]) -> None:
    """For --h 0.3 and the default T = 2 the message suggests --h = 2/7 and --t-final = 7 × 0.3;
    with either, T / h is within 1e-12 of the whole number 7."""
    assert main(["run", "heavy-top", "--h", "0.3"]) == 2
    err = capsys.readouterr().err
    match = re.search(r"try --h (\S+) \(--t-final / 7\) or --t-final (\S+)$", err.strip())
    assert match is not None, err
    h, t_final = float(match.group(1)), float(match.group(2))
    assert abs(2.0 / h - 7.0) <= 1e-12 and abs(t_final / 0.3 - 7.0) <= 1e-12
    assert "n_steps" not in err  # the command line has no such option


def test_run_reports_the_no_slip_residual_of_the_rolling_disc(capsys: pytest.CaptureFixture[str]) -> None:
    """The rolling disc has a holonomic contact and nonholonomic rolling: the summary prints
    |Φ|, |Bη| and |φ(g, η)|, each at round-off (Lobatto IIIA keeps both constraints at the nodes)."""
    assert main(["run", "rolling-disc", "--h", "0.05", "--t-final", "0.2"]) == 0
    out = capsys.readouterr().out
    for name in ("|Φ(g)|", "|B(g)η|", "|φ(g, η)|"):
        assert number(f"constraint residual max{name}:", out) <= 1e-13


def test_a_failed_check_or_a_failed_step_exits_1(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A conformance report with a defect above its tolerance, and a ConvergenceError from
    integrate, give exit code 1 with what failed."""
    failing = ConformanceReport("SO3()", [Check("axiom: e·g = g·e = g", "sample 0", 1e-3, 1e-12)])
    monkeypatch.setattr("liemech.cli.check_group", lambda *args, **kwargs: failing)
    assert main(["check-group", "so3", "--retraction", "cay"]) == 1
    assert "FAIL axiom: e·g = g·e = g" in capsys.readouterr().out

    def diverging(*args: object, **kwargs: object) -> lm.Solution[lm.Matrix]:
        raise lm.ConvergenceError(3, 0.03, 1e-3, "Newton did not converge")

    monkeypatch.setattr(lm, "integrate", diverging)
    assert main(["run", "heavy-top"]) == 1
    assert "step 3 (t = 0.03) failed: Newton did not converge" in capsys.readouterr().err


def test_catalogue_energies_are_the_lagrangian_energy() -> None:
    """H(g, μ) of the entries that write their own (or convert η to μ) equals ⟨μ, η⟩ − ℓ(g, η)
    with η the velocity of μ, at g₀ and a momentum off the initial one."""
    rng = np.random.default_rng(0)
    for name in ("constrained-heavy-top", "chaplygin-sleigh", "ball-on-turntable", "cvt", "rolling-disc", "rolling-ball"):
        def check(entry: Entry[P]) -> None:
            problem = entry.problem()
            mu = problem.mu0 + rng.normal(size=problem.mu0.shape)
            eta = np.asarray(problem.system.velocity(problem.g0, mu))
            assert entry.energy(problem.g0, mu) == pytest.approx(problem.system.energy(problem.g0, eta), abs=1e-13)

        SYSTEMS[name].apply(check)


def test_constrained_heavy_top_integrals_are_those_of_the_reduced_top() -> None:
    """On the constraint x = Rχ the free body's energy and e₃·(Rμ_R + x × μ_x) are the pivoted
    heavy top's H and ⟨𝕀ω, Rᵀe₃⟩ (𝕀 the pivot inertia)."""
    entry = cast(Entry[lm.ProductPoint], SYSTEMS["constrained-heavy-top"])
    top = ConstrainedHeavyTop().reduced()
    problem = entry.problem()
    R = np.asarray(problem.g0[0])
    pivot_momentum = top.inertia @ problem.eta0[:3]
    assert entry.energy(problem.g0, problem.mu0) == pytest.approx(top.energy(R, pivot_momentum), abs=1e-14)
    (momentum,) = entry.invariants.values()
    assert momentum(problem.g0, problem.mu0) == pytest.approx(top.noether_momentum(R, pivot_momentum), abs=1e-14)


NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def shown_commands(page: Path) -> list[tuple[list[str], list[str]]]:
    """The ``$ liemech …`` commands of the page's ```text blocks, each with the lines shown after it
    (up to the next command or the end of the block; lines that are only "…" left out)."""
    commands: list[tuple[list[str], list[str]]] = []
    for block in page.read_text().split("```text\n")[1:]:
        shown: list[str] | None = None  # lines of a block before its first command belong to none
        for line in block.split("```", 1)[0].splitlines():
            if line.startswith("$ liemech "):
                shown = []
                commands.append((line.split()[2:], shown))
            elif shown is not None and line.strip() and line.strip() != "…":
                shown.append(line)
    return commands


ROUNDOFF_LEVEL = 1e-12


def shows(expected: str, actual: str) -> bool:
    """``actual`` is the line ``expected``, where "…" stands for any text and each number agrees to
    the precision it is printed with (one unit of its last digit; a wall time may differ). A number
    shown at round-off level (below ROUNDOFF_LEVEL) only has to be printed at round-off level: its
    digits depend on the machine's floating-point kernels."""
    parts = NUMBER.split(expected)
    numbers = NUMBER.findall(expected)
    pattern = "".join(re.escape(part).replace("…", ".*?") + (f"({NUMBER.pattern})" if i < len(numbers) else "")
                      for i, part in enumerate(parts))
    match = re.fullmatch(pattern, actual)
    if match is None:
        return False
    if expected.startswith("wall time:"):
        return True
    for shown, printed in zip(numbers, match.groups()):
        if 0.0 < abs(float(shown)) < ROUNDOFF_LEVEL:
            if not abs(float(printed)) < ROUNDOFF_LEVEL:
                return False
            continue
        mantissa = shown.lower().split("e")[0]
        exponent = int(shown.lower().split("e")[1]) if "e" in shown.lower() else 0
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        if abs(float(shown) - float(printed)) > 1.01 * 10.0 ** (exponent - decimals):
            return False
    return True


@pytest.mark.slow
def test_the_commands_of_docs_cli_print_what_the_page_shows(tmp_path: Path) -> None:
    """Every ``$ liemech`` command of docs/cli.md, run in a fresh folder: each line the page shows
    after it is a line of its stdout or stderr (run in process; the tests above run the command itself)."""
    commands = shown_commands(Path(__file__).resolve().parent.parent / "docs" / "cli.md")
    assert len(commands) >= 8
    for argv, lines in commands:
        out = liemech_in_process(*argv, cwd=tmp_path)
        printed = (out.stdout + out.stderr).splitlines()
        missing = [line for line in lines if not any(shows(line, actual) for actual in printed)]
        assert not missing, f"liemech {' '.join(argv)}: not printed:\n" + "\n".join(missing) + "\n---\n" + out.stdout


def test_shows_compares_numbers_to_the_printed_precision() -> None:
    assert shows("mean 4.00, max 4", "mean 4.00, max 4") and not shows("mean 4.00, max 4", "mean 3.00, max 4")
    assert shows("drift 5.247e-10", "drift 5.248e-10") and not shows("drift 5.247e-10", "drift 5.251e-10")
    assert shows("wall time: 3.33 s", "wall time: 1.20 s") and shows("choose from 'a', …)", "choose from 'a', 'b')")
    assert not shows("steps: 1000", "steps: 1000 (h = 0.01)")
    assert shows("drift 1.021e-14", "drift 3.3e-15") and not shows("drift 1.021e-14", "drift 2.0e-11")
