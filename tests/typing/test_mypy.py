"""mypy --strict accepts precise downstream code and rejects a deliberate type error."""

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


def run_mypy(module: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", str(ROOT / "pyproject.toml"), str(module)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )


@pytest.mark.slow
def test_precise_downstream_code_passes() -> None:
    result = run_mypy(HERE / "downstream_good.py")
    assert result.returncode == 0, result.stdout


@pytest.mark.slow
def test_deliberate_type_error_is_rejected() -> None:
    result = run_mypy(HERE / "downstream_bad.py")
    assert result.returncode == 1, result.stdout
    assert 'Incompatible return value type (got "ndarray' in result.stdout
    assert "downstream_bad.py:7: error" in result.stdout
