"""Worker processes on this machine for ensembles: ``workers=`` of ``integrate_ensemble``.

One compiled batch runs on one core (XLA's CPU backend parallelises only large operations, and two
threads, or two CPU devices, running one step at once can deadlock on its thread pool), so the
cores are used by processes. They are started with ``spawn`` (``fork`` is unsafe once JAX
has started its threads), once per size, and kept for later calls: a process imports JAX and
liemech (which is slow) and compiles an ensemble once, reading the disk cache when it can;
concurrent.futures stops them when this process exits.
"""

import multiprocessing
import os
import pickle
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.sharedctypes import Synchronized

from liemech.input_checks import checked_count

_POOLS: dict[int, ProcessPoolExecutor] = {}


def worker_count(workers: object) -> int:
    """``workers`` as a number of processes: a positive integer, or −1 for every core (as scipy's
    ``workers``); 1 runs in this process."""
    try:
        count = checked_count(workers, "workers", minimum=-1)
    except ValueError:
        count = 0
    if count == -1:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if count < 1:
        raise ValueError(f"workers must be a positive integer or -1 (every core), got {workers!r}")
    return count


def local_pool(size: int) -> ProcessPoolExecutor:
    """The pool of ``size`` spawned processes, started on first use and kept; with no more processes
    than cores, each keeps to a core of its own."""
    pool = _POOLS.get(size)
    if pool is None:
        context = multiprocessing.get_context("spawn")
        cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        pool = _POOLS[size] = ProcessPoolExecutor(
            size, mp_context=context, initializer=_keep_to_one_core,
            initargs=(cores if size <= len(cores) else [], context.Value("i", 0)))
    return pool


def _keep_to_one_core(cores: list[int], started: "Synchronized[int]") -> None:
    """Pin this worker to the next of ``cores`` (none: leave it to the scheduler). Two workers left
    to move between two cores run slower than two pinned ones, on a batch each."""
    if not cores:
        return
    with started.get_lock():
        index = started.value
        started.value += 1
    os.sched_setaffinity(0, {cores[index % len(cores)]})


def discard_pool(size: int) -> None:
    """Shut down the pool of ``size`` processes (after one of them died) so the next call starts afresh."""
    pool = _POOLS.pop(size, None)
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def check_picklable(job: object) -> None:
    """Raise TypeError unless ``job`` (the problem, method, observables and sweep) pickles: worker
    processes receive it by pickle, which refuses lambdas and functions defined inside others."""
    try:
        pickle.dumps(job)
    except (pickle.PicklingError, TypeError, AttributeError) as error:
        raise TypeError(f"workers > 1 sends the problem, method, observables and parameters to other "
                        f"processes by pickle, which failed: {error}. Define the functions they use at "
                        "module level (or use functools.partial), or run with workers=1") from error
