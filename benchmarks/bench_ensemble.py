"""Member-steps per second of ``integrate_ensemble`` against a Python loop of ``integrate``.

The chaotic nonholonomic system (n = 7) with nonholonomic Lobatto-2, h = 0.1, 100 steps per
member, for 1, 10, 100 and 1000 members: a loop of ``integrate`` (problems built beforehand),
the local ensemble (batches on every core), and the ensemble on a Dask LocalCluster of two worker
processes. Times are after compilation (each configuration is run once to warm up).

Run: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_ensemble.py [--no-dask]
"""

import os
import sys
import time
from collections.abc import Callable

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import liemech as lm  # noqa: E402
from liemech.systems import ChaoticNonholonomic  # noqa: E402

SYSTEM = ChaoticNonholonomic()
METHOD = lm.VPRK(lm.lobatto(2))
H, STEPS = 0.1, 100
LOOP_LIMIT = 100  # the loop's rate is per member; longer loops only take longer


def best_of(run: Callable[[], object], repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    use_dask = "--no-dask" not in sys.argv
    client = None
    if use_dask:
        from distributed import Client, LocalCluster

        client = Client(LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None))
    print(f"chaotic nonholonomic system, {METHOD.name}, h = {H}, {STEPS} steps per member")
    print(f"{'members':>8} {'loop steps/s':>13} {'local steps/s':>14} {'× loop':>7} {'dask steps/s':>13} {'× loop':>7}")
    for count in (1, 10, 100, 1000):
        problems = [SYSTEM.problem(j, count) for j in range(count + 1)][:count]
        initial = (np.stack([p.g0 for p in problems]), np.stack([p.eta0 for p in problems]))
        looped = problems[:LOOP_LIMIT]
        lm.integrate(looped[0], METHOD, H, n_steps=STEPS)
        loop = best_of(lambda: [lm.integrate(p, METHOD, H, n_steps=STEPS) for p in looped], 1)
        loop_rate = len(looped) * STEPS / loop

        def ensemble(on: object) -> lm.Ensemble[lm.Vector]:
            return lm.integrate_ensemble(problems[0], METHOD, H, n_steps=STEPS, initial=initial,
                                         client=on)  # type: ignore[arg-type]

        ensemble(None)
        local_rate = count * STEPS / best_of(lambda: ensemble(None))
        row = f"{count:8d} {loop_rate:13.0f} {local_rate:14.0f} {local_rate / loop_rate:7.1f}"
        if client is not None:
            ensemble(client)
            dask_rate = count * STEPS / best_of(lambda: ensemble(client))
            row += f" {dask_rate:13.0f} {dask_rate / loop_rate:7.1f}"
        print(row)
    if client is not None:
        client.close()


if __name__ == "__main__":
    main()
