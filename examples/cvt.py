"""The pendulum-driven CVT (Martín de Diego & Sato Martín de Almagro 2018, §7.2, ε = ½) with
Lobatto-2: total, passenger and driver energy ranges over T = 200 for both energy levels, at h = 0.1
(excellent energy behaviour) and at h = π/10, the step of Modin & Verdier (erratic).

Run: .venv/bin/python examples/cvt.py
"""

import math
import os
from typing import Literal

from figures import save_plot

import liemech as lm
from liemech.systems import CVT

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: the low energy level over T = 10
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"
LEVELS: tuple[Literal["low", "high"], ...] = ("low",) if FAST else ("low", "high")


def main() -> None:
    print(f"{'level':<6}{'h':>7}{'E_T range':>22}{'E_p range':>22}{'E_d range':>22}")
    curves: dict[str, tuple[list[float], list[float]]] = {}
    for level in LEVELS:
        cvt = CVT(level=level)
        for h in (0.1, math.pi / 10):
            sol = lm.integrate(cvt.problem(), lm.VPRK(lm.lobatto(2)), h=h, n_steps=int((10.0 if FAST else 200.0) / h))
            Ep = [cvt.passenger_energy(q, v) for q, v in zip(sol.g, sol.eta)]
            Ed = [cvt.driver_energy(q, v) for q, v in zip(sol.g, sol.eta)]
            ET = [a + b for a, b in zip(Ep, Ed)]
            cells = "".join(f"{f'[{min(x):.3f}, {max(x):.3f}]':>22}" for x in (ET, Ep, Ed))
            print(f"{level:<6}{h:7.4f}{cells}")
            curves[f"E_T, {level}, h = {h:.3f}"] = (sol.t.tolist(), ET)
    saved = save_plot("cvt_energy", "CVT (ε = ½, Lobatto-2): total energy", "t", "E_T", curves)
    if saved:
        print(f"figure: {saved}")


if __name__ == "__main__":
    main()
