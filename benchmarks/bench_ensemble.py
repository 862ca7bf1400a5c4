"""Member-steps per second of ``integrate_ensemble`` against a Python loop of ``integrate``.

The chaotic nonholonomic system (n = 7) with nonholonomic Lobatto-2, h = 0.1, 100 steps per
member, for 1, 10, 100 and 1000 members: a loop of ``integrate`` (problems built beforehand),
the ensemble in this process, in one worker process per core (``workers=-1``), and on a Dask
LocalCluster of two worker processes. Times are after compilation and after the worker processes
started (each configuration is run once to warm up; the first start of the local pool is printed).

This machine's speed drifts by tens of per cent within a minute, so the configurations are timed
in interleaved rounds (each round: the loop, then every ensemble) and the table gives median rates
and the median over the rounds of each round's ratio to its loop.

A second table: ensembles of the pendulum chains of ``bench_multibody`` (Lobatto-2, whose Newton
systems are solved on the block tree from 4 links on, where the members of a batch run one after
another; 2 links stay vectorised), against a loop of ``integrate``, in µs per member-step.

Run: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_ensemble.py [--no-dask] [--rounds N]
"""

import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import liemech as lm  # noqa: E402
from liemech.systems import ChaoticNonholonomic  # noqa: E402

SYSTEM = ChaoticNonholonomic()
METHOD = lm.VPRK(lm.lobatto(2))
H, STEPS = 0.1, 100
CORES = len(os.sched_getaffinity(0))
LOOP_LIMIT = 100  # the loop's rate is per member; longer loops only take longer


def seconds(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def main() -> None:
    use_dask = "--no-dask" not in sys.argv
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5
    client = None
    if use_dask:
        from distributed import Client, LocalCluster

        client = Client(LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None))
    print(f"chaotic nonholonomic system, {METHOD.name}, h = {H}, {STEPS} steps per member, {CORES} cores; "
          f"medians of {rounds} interleaved rounds")
    print(f"{'members':>8} {'loop steps/s':>13} {'1 process':>10} {'× loop':>7} {f'{CORES} processes':>12} "
          f"{'× loop':>7} {'dask':>10} {'× loop':>7}")
    first_start = math.nan
    for count in (1, 10, 100, 1000):
        problems = [SYSTEM.problem(j, count) for j in range(count + 1)][:count]
        initial = (np.stack([p.g0 for p in problems]), np.stack([p.eta0 for p in problems]))
        looped = problems[:LOOP_LIMIT]

        def loop() -> list[lm.Solution[lm.Vector]]:
            return [lm.integrate(p, METHOD, H, n_steps=STEPS) for p in looped]

        def ensemble(on: object = None, workers: int = 1) -> lm.Ensemble[lm.Vector]:
            return lm.integrate_ensemble(problems[0], METHOD, H, n_steps=STEPS, initial=initial,
                                         client=on, workers=workers)  # type: ignore[arg-type]

        configurations = [(None, 1), (None, -1)] + ([(client, 1)] if client is not None else [])
        loop()
        for on, workers in configurations:
            warm_up = seconds(lambda: ensemble(on, workers))
            if workers == -1 and count == 1:
                first_start = warm_up
        loop_rates, rates = [], np.zeros((rounds, len(configurations)))
        for r in range(rounds):
            loop_rates.append(len(looped) * STEPS / seconds(loop))
            for c, (on, workers) in enumerate(configurations):
                rates[r, c] = count * STEPS / seconds(lambda: ensemble(on, workers))
        ratios = rates / np.array(loop_rates)[:, None]
        row = f"{count:8d} {np.median(loop_rates):13.0f}"
        for c, (_, workers) in enumerate(configurations):
            row += f" {np.median(rates[:, c]):{12 if workers == -1 else 10}.0f} {np.median(ratios[:, c]):7.1f}"
        print(row)
    print(f"first call with workers=-1 (starting the processes, compiling from the disk cache): {first_start:.1f} s")
    if client is not None:
        client.close()


def chains(rounds: int, members: int = 32, steps: int = 100) -> None:
    """µs per member-step of ensembles of n-link chains bent by random angles, and of a loop of
    ``integrate`` over the same problems (medians of interleaved rounds)."""
    from bench_multibody import chain_urdf, initial, step_size

    from liemech.multibody import from_urdf

    print(f"\npendulum chains, Lobatto-2, {members} members, {steps} steps; µs per member-step, medians of {rounds} "
          "interleaved rounds")
    print(f"{'links':>6} {'members':>10} {'loop':>8} {'ensemble':>9} {'× loop':>7}")
    rng = np.random.default_rng(0)
    for n in (2, 4, 8):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "chain.urdf"
            path.write_text(chain_urdf(n))
            model = from_urdf(path)
        q0, v0 = initial(n)
        problems = [model.problem(q0 + 0.05 * rng.normal(size=n), v0) for _ in range(members)]
        g0 = (np.stack([p.g0[0] for p in problems]), np.stack([p.g0[1] for p in problems]))
        eta0 = np.stack([p.eta0 for p in problems])
        h = step_size(n)
        kind = METHOD.compiled_step(problems[0]).members

        def loop() -> None:
            for problem in problems:
                lm.integrate(problem, METHOD, h, n_steps=steps)

        def ensemble() -> None:
            lm.integrate_ensemble(problems[0], METHOD, h, n_steps=steps, initial=(g0, eta0))

        loop()
        ensemble()
        times = np.array([[seconds(loop), seconds(ensemble)] for _ in range(rounds)]) / (members * steps) * 1e6
        loop_time, ensemble_time = np.median(times, axis=0)
        print(f"{n:6d} {kind:>10} {loop_time:8.0f} {ensemble_time:9.0f} {loop_time / ensemble_time:7.2f}")


if __name__ == "__main__":
    main()
    chains(int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5)
