"""The progress bar of long runs: tqdm on stderr, off unless asked for."""

import sys
from typing import NoReturn

from tqdm import tqdm


def progress_bar(total: int, unit: str, enabled: bool, description: str | None = None) -> "tqdm[NoReturn]":
    """A bar counting to ``total`` ``unit``s on stderr; disabled (it writes nothing) unless ``enabled``."""
    return tqdm(total=total, unit=unit, desc=description, disable=not enabled, file=sys.stderr)
