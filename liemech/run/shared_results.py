"""Arrays handed from a worker process to this one through shared memory instead of the pool's pipe.

An ensemble's batch returns its stored states (about 9 MB for 500 members of 100 steps on R⁷).
Pickling them through the pipe of a process pool costs a noticeable share of a whole run. The
worker copies them into one shared-memory block and sends its name; this process reads them there,
copying each value once into the ensemble's arrays, and frees the block.
Spawned workers share this process's resource tracker, so the block is registered once and
released by ``collect``.
"""

from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.shared_memory import SharedMemory

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class SharedArrays:
    """The name of a shared-memory block and where each array lies in it: (key, dtype, shape, offset)."""

    name: str
    layout: tuple[tuple[str, str, tuple[int, ...], int], ...]


def share(arrays: dict[str, NDArray[np.float64]]) -> SharedArrays:
    """Copy ``arrays`` into a new shared-memory block, which ``collect`` frees."""
    memory = SharedMemory(create=True, size=max(1, sum(array.nbytes for array in arrays.values())))
    layout, offset = [], 0
    for key, array in arrays.items():
        np.ndarray(array.shape, array.dtype, memory.buf, offset)[...] = array
        layout.append((key, array.dtype.str, array.shape, offset))
        offset += array.nbytes
    memory.close()
    return SharedArrays(memory.name, tuple(layout))


def collect(shared: SharedArrays, receive: Callable[[dict[str, NDArray[np.float64]]], object]) -> None:
    """Hand the arrays of a ``share``d block to ``receive`` as views into the block (it copies
    what it keeps), then free the block."""
    memory = SharedMemory(name=shared.name)
    try:
        receive({key: np.ndarray(shape, np.dtype(dtype), memory.buf, offset)
                 for key, dtype, shape, offset in shared.layout})
    finally:
        memory.close()
        memory.unlink()
