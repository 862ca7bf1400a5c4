"""The progress bar of long runs: tqdm on stderr, off unless asked for."""

import sys
from types import TracebackType
from typing import NoReturn

from tqdm import tqdm


class _Silent:
    """A bar that counts and writes nothing (constructing even a disabled tqdm costs a noticeable
    part of a short ``integrate``)."""

    def __init__(self) -> None:
        self.n: float = 0

    def update(self, n: float = 1) -> None:
        self.n += n

    def __enter__(self) -> "_Silent":
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        return None


def progress_bar(total: int, unit: str, enabled: bool, description: str | None = None) -> "tqdm[NoReturn] | _Silent":
    """A bar counting to ``total`` ``unit``s on stderr, or, unless ``enabled``, one that writes nothing."""
    if not enabled:
        return _Silent()
    return tqdm(total=total, unit=unit, desc=description, file=sys.stderr)
