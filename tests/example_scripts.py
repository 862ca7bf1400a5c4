"""Running an example script as a user would, ``python examples/….py``, in its quick mode
(``LIEMECH_EXAMPLES_FAST=1``: fewer steps, shorter horizons, fewer methods), from a temporary
directory so that its figures land there. The scripts are split between two test files, the
examples at the top of examples/ and those of the papers' folders, so that pytest-xdist's
``--dist loadfile`` runs the two halves side by side."""

import os
import re
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def scripts(pattern: str) -> list[str]:
    """The scripts (files with a ``__main__`` block) matching ``pattern`` under examples/."""
    return sorted(path.relative_to(EXAMPLES).as_posix() for path in EXAMPLES.glob(pattern)
                  if 'if __name__ == "__main__":' in path.read_text())


def run_fast(script: str, folder: Path) -> None:
    """Run ``script`` in ``folder``: it must exit 0, print something, and write every figure it
    announces (``figure: path`` lines)."""
    env = {**os.environ, "LIEMECH_EXAMPLES_FAST": "1", "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, str(EXAMPLES / script)], cwd=folder, env=env,
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, f"{script} exited {run.returncode}:\n{run.stdout}\n{run.stderr}"
    assert run.stdout.strip(), run.stdout
    for figure in re.findall(r"^figure: (.+)$", run.stdout, re.M):
        assert (folder / figure).is_file(), figure
