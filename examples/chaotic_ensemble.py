"""The chaotic nonholonomic system of Martín de Diego & Sato Martín de Almagro (2018, §7.3; n = 7,
energy sheet E = 3.06): the mean squared energy error over an ensemble of J + 1 trajectories,
scaled by h⁴ (Lobatto-2) and h⁸ (Lobatto-3) so the curves for h = 0.2 and 0.1 collapse.

Each study is one ``lm.integrate_ensemble`` call: the members are batched into one compiled
function and the batches run in one worker process per core (``workers=-1``), with a progress
bar on stderr. Pass
``--dask`` to run them on a local Dask cluster instead (``pip install 'liemech[dask]'``).

Run: .venv/bin/python examples/chaotic_ensemble.py [--members 65] [--dask]
"""

import argparse
import os

import jax
import numpy as np
from figures import save_plot

import liemech as lm
from liemech.systems import ChaoticNonholonomic

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: 9 members, Lobatto-2 at h = 0.2, T = 6
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"

T = 6.0 if FAST else 60.0


def energy(system: lm.Lagrangian[lm.Vector], q: lm.Vector, mu: jax.Array, v: jax.Array) -> jax.Array:
    """E = ⟨μ, v⟩ − ℓ(q, v), recorded at every node inside the compiled run."""
    return mu @ v - system.lagrangian(q, v)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members", type=int, default=9 if FAST else 65, help="ensemble size J + 1 (default 65)")
    parser.add_argument("--dask", action="store_true", help="run the batches on a local Dask cluster")
    args = parser.parse_args()
    J = args.members - 1
    system = ChaoticNonholonomic()
    members = [system.problem(j, J) for j in range(J + 1)]
    initial = (np.stack([p.g0 for p in members]), np.stack([p.eta0 for p in members]))
    client = None
    if args.dask:
        from distributed import Client, LocalCluster

        client = Client(LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None))
    print(f"ensemble of {J + 1} trajectories, T = {T}: mean over the run of μ(E, k)/hᵖ and μ(T)/hᵖ, "
          "μ(E, k) = mean over members of (E_k − E_0)²")
    curves: dict[str, tuple[list[float], list[float]]] = {}
    for s, p in ((2, 4),) if FAST else ((2, 4), (3, 8)):
        for h in (0.2,) if FAST else (0.2, 0.1):
            ensemble = lm.integrate_ensemble(members[0], lm.VPRK(lm.lobatto(s)), h, T, initial=initial,
                                             observables={"energy": energy}, client=client,
                                             workers=1 if client is not None else -1, progress=True)
            for failure in ensemble.failures():
                print(f"  member {failure.member} stopped: {failure.error}")
            E = ensemble.observables["energy"][ensemble.converged]
            mu = np.mean((E - E[:, :1]) ** 2, axis=0)
            print(f"  Lobatto-{s}, h = {h:<4}  mean μ/h^{p} = {float(np.mean(mu)) / h**p:.3e}   "
                  f"μ(T)/h^{p} = {float(mu[-1]) / h**p:.3e}")
            curves[f"Lobatto-{s}, h = {h}: μ/h^{p}"] = (ensemble.t.tolist(), (mu / h**p).tolist())
    if client is not None:
        client.close()
    saved = save_plot("chaotic_energy", "Chaotic system: scaled mean squared energy error", "t", "μ/hᵖ", curves,
                      scale="semilogy")
    if saved:
        print(f"figure: {saved}")


if __name__ == "__main__":
    main()
