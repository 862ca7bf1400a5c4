"""The ``liemech`` command line: each verb in a subprocess (exit code, printed summary, files
written) against direct library calls, bad arguments in process (exit code 2 and the message),
and the catalogue's energies against the Lagrangian's E = ⟨μ, η⟩ − ℓ."""

import dataclasses
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
    assert number("of Noether momentum ⟨μ, Rᵀe₃⟩:", out.stdout) <= 1e-14
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
    (["run", "heavy-top", "--h", "0.3"], "t_final / h = 6.666666666666667 is not a whole number of steps"),
    (["run", "heavy-top", "--method", "simpson"], "SimpsonVI() works on Rn(n) configuration spaces, got SO3()"),
    (["run", "pendulum", "--method", "rk4", "--retraction", "exp"], "--retraction applies to the VPRK methods"),
])
def test_bad_arguments_exit_2_with_a_one_line_message(
        argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's usage errors
        code = int(str(exit_.code))
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


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
