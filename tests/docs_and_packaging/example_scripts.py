"""Running an example script as a user would, ``python examples/….py``, in its quick mode
(``LIEMECH_EXAMPLES_FAST=1``: fewer steps, shorter horizons, fewer methods), from a temporary
directory so that its figures land there. The scripts are split between two test files, the
examples at the top of examples/ and those of the papers' folders, so that pytest-xdist's
``--dist loadfile`` runs the two halves side by side.

A script runs inside the test's process (``runpy``, as ``__main__``, with its own ``sys.argv``, its
folder first on ``sys.path`` and its sibling modules forgotten afterwards): a fresh interpreter
would pay 3 s of imports per script. The scripts that start worker processes run in a subprocess,
as the user's command would."""

import contextlib
import io
import os
import re
import runpy
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# scripts whose worker processes must import the script from a real ``python script.py`` run
IN_SUBPROCESS = frozenset({"chaotic_ensemble.py"})


def scripts(pattern: str) -> list[str]:
    """The scripts (files with a ``__main__`` block) matching ``pattern`` under examples/."""
    return sorted(path.relative_to(EXAMPLES).as_posix() for path in EXAMPLES.glob(pattern)
                  if 'if __name__ == "__main__":' in path.read_text())


@contextlib.contextmanager
def _as_a_script(path: Path) -> Iterator[None]:
    """``sys.argv``, ``sys.path`` and the modules that ``python path`` would start from, restored after."""
    argv, search_path, modules = sys.argv[:], sys.path[:], set(sys.modules)
    sys.argv[:] = [str(path)]
    sys.path.insert(0, str(path.parent))
    try:
        yield
    finally:
        sys.argv[:], sys.path[:] = argv, search_path
        for name in set(sys.modules) - modules:  # the script's siblings (figures, paper_schemes)
            if str(getattr(sys.modules[name], "__file__", None) or "").startswith(str(EXAMPLES)):
                del sys.modules[name]
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            pyplot.close("all")
        import jax  # release the script's compiled code, as tests/conftest.py does after a module

        clear_caches: Callable[[], None] = jax.clear_caches  # untyped in jax
        clear_caches()


def _run_in_process(script: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("LIEMECH_EXAMPLES_FAST", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(folder)
    stdout = io.StringIO()
    with _as_a_script(EXAMPLES / script), contextlib.redirect_stdout(stdout):
        try:
            runpy.run_path(str(EXAMPLES / script), run_name="__main__")
        except SystemExit as exit_:
            assert exit_.code in (None, 0), f"{script} exited {exit_.code}:\n{stdout.getvalue()}"
    return stdout.getvalue()


def _run_in_subprocess(script: str, folder: Path) -> str:
    env = {**os.environ, "LIEMECH_EXAMPLES_FAST": "1", "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, str(EXAMPLES / script)], cwd=folder, env=env,
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, f"{script} exited {run.returncode}:\n{run.stdout}\n{run.stderr}"
    return run.stdout


def run_fast(script: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run ``script`` in ``folder``: it must finish without an error, print something, and write
    every figure it announces (``figure: path`` lines)."""
    stdout = (_run_in_subprocess(script, folder) if script in IN_SUBPROCESS
              else _run_in_process(script, folder, monkeypatch))
    assert stdout.strip(), stdout
    for figure in re.findall(r"^figure: (.+)$", stdout, re.M):
        assert (folder / figure).is_file(), figure
