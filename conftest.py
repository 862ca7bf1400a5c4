"""The documentation's code blocks are tests: sybil collects README.md and docs/*.md page by page, and
runs each page's ```python blocks in order in one namespace, as a reader pasting them would. Each page
runs inside its own temporary directory (a block that saves a figure or a ``.npz`` writes there,
never into the repository), and the pages listed in ``SLOW_PAGES`` are marked ``slow``.

The environment of tests/conftest.py (single-threaded BLAS, the shared compilation cache) is set
before any page runs: it is imported here, ahead of liemech and jax."""

import gc
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser

import tests.conftest  # noqa: F401  (its environment settings, for the pages too)

ROOT = Path(__file__).resolve().parent

# pages whose blocks take more than a few seconds together (`pytest -m "not slow"` skips them)
SLOW_PAGES = frozenset({
    "README.md",
    "docs/conformance.md",
    "docs/ensembles.md",
    "docs/getting_started.md",
    "docs/ggl.md",
    "docs/integrators.md",
    "docs/nonholonomic.md",
    "docs/plots.md",
    "docs/rolling.md",
    "docs/sensitivities.md",
    "docs/simpson.md",
})


def _enter_temporary_directory(namespace: dict[str, Any]) -> None:
    namespace["__page_cwd__"] = os.getcwd()
    namespace["__page_tmp__"] = tempfile.mkdtemp(prefix="liemech-doc-")
    os.chdir(namespace["__page_tmp__"])


def _leave_temporary_directory(namespace: dict[str, Any]) -> None:
    os.chdir(namespace.pop("__page_cwd__"))
    shutil.rmtree(namespace.pop("__page_tmp__"), ignore_errors=True)
    pyplot = sys.modules.get("matplotlib.pyplot")  # close the figures of a page that drew some
    if pyplot is not None:
        pyplot.close("all")
    import jax  # as tests/conftest.py does after each module: release the compiled code

    clear_caches: Callable[[], None] = jax.clear_caches  # untyped in jax
    clear_caches()
    gc.collect()


pytest_collect_file = Sybil(
    parsers=[PythonCodeBlockParser()],
    patterns=["README.md", "docs/*.md"],
    setup=_enter_temporary_directory,
    teardown=_leave_temporary_directory,
).pytest()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--perturb", type=int, default=0, metavar="N",
                     help="run each long_run test N times, from initial data perturbed by a relative 1e-12")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(ROOT) and item.path.relative_to(ROOT).as_posix() in SLOW_PAGES:
            item.add_marker(pytest.mark.slow)
