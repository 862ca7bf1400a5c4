"""Memory of long runs and of long-lived processes.

1. A run of 10⁷ RK4 steps on R¹ (an anharmonic oscillator) stored every 10⁵ steps, after a run of
   10⁴ steps: the growth of the process's peak resident memory between the two (a run keeps only
   its stored nodes, so it should not grow with the number of steps).
2. A loop over distinct systems in one process (a parameter study written as a loop: each system
   its own potential, so each compiles its own step), with nothing but ``gc.collect()`` between
   them: resident memory and memory maps every 100 systems (they should level off: compiled code
   is freed with its system).

Run: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_memory.py [steps] [systems]
"""

import gc
import os
import resource
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import liemech as lm  # noqa: E402


def peak_mib() -> float:
    """The process's peak resident memory so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def resident_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def memory_maps() -> int:
    with open("/proc/self/maps") as maps:
        return sum(1 for _ in maps)


def oscillator(stiffness: float) -> lm.Problem[lm.Vector]:
    def potential(q: lm.Vector) -> jax.Array:
        x = jnp.asarray(q)[0]
        energy: jax.Array = 0.5 * stiffness * x ** 2 + 0.1 * x ** 4
        return energy

    return lm.Problem(lm.MechanicalSystem(lm.Rn(1), np.eye(1), potential), np.array([1.0]), np.array([0.0]))


def long_run(steps: int) -> None:
    problem, method = oscillator(1.0), lm.RK4()
    lm.integrate(problem, method, h=1e-3, n_steps=10_000, store_every=100_000)
    short = peak_mib()
    started = time.perf_counter()
    sol = lm.integrate(problem, method, h=1e-3, n_steps=steps, store_every=100_000)
    wall = time.perf_counter() - started
    print(f"{steps:.0e} RK4 steps stored every 1e5 ({len(sol.t)} nodes, {wall:.1f} s): peak resident memory "
          f"{short:.0f} MiB after 1e4 steps, {peak_mib():.0f} MiB after {steps:.0e} (+{peak_mib() - short:.1f} MiB)")


def many_systems(count: int) -> None:
    print(f"{'systems':>8}{'resident MiB':>14}{'maps':>8}{'s per system':>14}")
    started = time.perf_counter()
    for k in range(1, count + 1):
        lm.integrate(oscillator(1.0 + k / count), lm.VPRK(lm.lobatto(2)), h=0.01, n_steps=10)
        gc.collect()
        if k % 100 == 0 or k == 1:
            print(f"{k:>8}{resident_mib():>14.0f}{memory_maps():>8}{(time.perf_counter() - started) / k:>14.2f}",
                  flush=True)


def main() -> None:
    steps = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**7
    systems = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    long_run(steps)
    many_systems(systems)


if __name__ == "__main__":
    main()
