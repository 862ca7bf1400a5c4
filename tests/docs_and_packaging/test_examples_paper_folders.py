"""Every example script of the papers' folders (examples/ggl, examples/simpson,
examples/constraint_methods) runs in its quick mode
(tests/docs_and_packaging/example_scripts.py)."""

from pathlib import Path

import pytest

from tests.docs_and_packaging.example_scripts import run_fast, scripts

SCRIPTS = scripts("*/*.py")


def test_every_paper_example_is_found() -> None:
    assert len(SCRIPTS) >= 10 and "ggl/four_particles.py" in SCRIPTS and "simpson/lagrange_top.py" in SCRIPTS


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_paper_example_runs_in_fast_mode(script: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_fast(script, tmp_path, monkeypatch)
