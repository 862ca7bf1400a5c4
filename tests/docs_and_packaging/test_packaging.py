"""What a user installs: ``python -m build`` makes the sdist and, from it, the wheel; the wheel
installs into a clean virtual environment with its declared dependencies only, and there
``liemech --help`` and the README's example blocks run against the installed package (not this
checkout). The wheel carries ``py.typed`` and no tests."""

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def python_blocks(page: Path) -> list[str]:
    return [part.split("```", 1)[0] for part in page.read_text().split("```python")[1:]]


@pytest.mark.slow
def test_the_wheel_installs_and_runs_in_a_clean_environment(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], check=True,
                   capture_output=True, timeout=600)
    wheels, sdists = sorted(dist.glob("liemech-*.whl")), sorted(dist.glob("liemech-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "liemech/py.typed" in names and "liemech/methods/vprk/scheme.py" in names
    assert not any(name.startswith(("tests/", "examples/", "docs/")) for name in names)

    environment = tmp_path / "clean"
    venv.create(environment, with_pip=True)
    python, entry_point = environment / "bin" / "python", environment / "bin" / "liemech"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheels[0])], check=True,
                   capture_output=True, timeout=900)

    # Outside the checkout, with nothing of it on the path: what runs is the installed wheel.
    away = tmp_path / "elsewhere"
    away.mkdir()
    clean_env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    help_text = subprocess.run([str(entry_point), "--help"], cwd=away, env=clean_env, check=True,
                               capture_output=True, text=True, timeout=120).stdout
    assert "usage: liemech" in help_text and "run" in help_text
    script = away / "readme.py"
    script.write_text("\n".join(python_blocks(ROOT / "README.md"))
                      + "\nimport liemech\nprint('installed at', liemech.__file__)\n")
    out = subprocess.run([str(python), str(script)], cwd=away, env=clean_env, check=True,
                         capture_output=True, text=True, timeout=600).stdout
    installed_at = out.rsplit("installed at ", 1)[1].strip()
    assert Path(installed_at).is_relative_to(environment)


def test_the_oldest_jax_tested_is_the_oldest_allowed() -> None:
    """``make jax-oldest`` (run by CI) tests the lower bound of pyproject.toml's ``jax>=…``, so that the
    range a user may install is tested at both ends (``make test`` installs the newest)."""
    import re
    import tomllib

    from packaging.requirements import Requirement
    from packaging.version import Version

    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    jax = next(Requirement(d) for d in dependencies if Requirement(d).name == "jax")
    lower = [spec.version for spec in jax.specifier if spec.operator == ">="]
    tested = re.search(r"^JAX_OLDEST := ([0-9.]+)$", (ROOT / "Makefile").read_text(), re.M)
    assert len(lower) == 1 and tested is not None
    assert Version(lower[0]) == Version(tested[1]), (lower, tested[1])
    assert "make jax-oldest" in (ROOT / ".ci" / "run").read_text()
