"""The chaotic nonholonomic system of paper 004 §7.3 (n = 7, energy sheet E = 3.06): the mean
squared energy error over an ensemble, scaled by h⁴ (Lobatto-2) and h⁸ (Lobatto-3) so the curves
for h = 0.2 and 0.1 collapse. The members are independent and run in parallel processes.

Run: .venv/bin/python examples/chaotic_ensemble.py
"""

from concurrent.futures import ProcessPoolExecutor

import numpy as np
from figures import save_plot

import liemech as lm
from liemech.systems import ChaoticNonholonomic
from liemech.systems.chaotic_nonholonomic import mean_squared_energy_error

J, T = 8, 60.0


def main() -> None:
    system = ChaoticNonholonomic()
    print(f"ensemble of {J + 1} trajectories, T = {T}: mean of μ(E, k)/hᵖ over the run and at t = T")
    curves: dict[str, tuple[list[float], list[float]]] = {}
    with ProcessPoolExecutor() as pool:
        for s, p in ((2, 4), (3, 8)):
            for h in (0.2, 0.1):
                mu = mean_squared_energy_error(system, lm.VPRK(lm.lobatto(s)), h, round(T / h), J, pool.map)
                print(f"  Lobatto-{s}, h = {h:<4}  mean μ/h^{p} = {float(np.mean(mu)) / h**p:.3e}   "
                      f"μ(T)/h^{p} = {float(mu[-1]) / h**p:.3e}")
                curves[f"Lobatto-{s}, h = {h}: μ/h^{p}"] = ((h * np.arange(mu.size)).tolist(), (mu / h**p).tolist())
    saved = save_plot("chaotic_energy", "Chaotic system: scaled mean squared energy error", "t", "μ/hᵖ", curves, scale="semilogy")
    if saved:
        print(f"figure: {saved}")


if __name__ == "__main__":
    main()
