"""A project that installs liemech and runs ``mypy --strict`` in its own folder (no configuration of
this repository) finds liemech's types: precise code passes, deliberate type errors are reported."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
# Kept between runs (the first run checks jax and numpy in about a minute, the next in seconds),
# apart from the cache of the repository's own mypy run, whose configuration differs.
CACHE = HERE.parent.parent / ".mypy_cache" / "downstream"


def run_mypy(project: Path, module: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(CACHE), module],
        cwd=project, capture_output=True, text=True, check=False,
    )


@pytest.mark.slow
def test_downstream_project_type_checks(tmp_path: Path) -> None:
    for name in ("downstream_good.py", "downstream_bad.py"):
        shutil.copy(HERE / name, tmp_path / name)
    good = run_mypy(tmp_path, "downstream_good.py")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Success: no issues found in 1 source file" in good.stdout

    bad = run_mypy(tmp_path, "downstream_bad.py")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    errors = [line for line in bad.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 2, bad.stdout
    assert errors[0].startswith("downstream_bad.py:7: error: Incompatible return value type (got \"ndarray")
    assert errors[1].startswith("downstream_bad.py:10: error: Need more than 2 values to unpack (3 expected)")
