"""One system and one constraint object per catalogue entry, so that every problem built from the
entry shares the compiled steps cached on them."""

import functools
from collections.abc import Callable
from typing import TypeVar

S = TypeVar("S")
R = TypeVar("R")


def built_once(method: Callable[[S], R]) -> Callable[[S], R]:
    """Cache a no-argument method's result on the (frozen dataclass) instance."""
    name = f"_built_{method.__name__}"

    @functools.wraps(method)
    def build(self: S) -> R:
        built: dict[str, R] = self.__dict__
        if name not in built:
            built[name] = method(self)
        return built[name]

    return build
