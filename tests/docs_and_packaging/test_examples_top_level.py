"""Every example script at the top of examples/ runs in its quick mode
(tests/docs_and_packaging/example_scripts.py); the papers' folders are in
tests/docs_and_packaging/test_examples_paper_folders.py."""

from pathlib import Path

import pytest

from tests.docs_and_packaging.example_scripts import run_fast, scripts

SCRIPTS = scripts("*.py")


def test_every_example_is_found() -> None:
    assert len(SCRIPTS) >= 15 and "demo.py" in SCRIPTS and "rolling_disc.py" in SCRIPTS


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_example_runs_in_fast_mode(script: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_fast(script, tmp_path, monkeypatch)
