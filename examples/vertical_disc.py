"""The nonholonomic vertical disc with a spring on SE(2) (Martín de Diego & Sato Martín de Almagro
2018, §7.4): Lobatto-s VPRK with the Cayley map, against a DOP853 reference. Prints the fitted
orders of g, ξ and the multiplier λ (2s − 2 for all three with the default consistent closure; the
paper's carried multiplier gives λ order s or s − 1, Cor. 5.2.1) and the constraint v₂ at the
nodes: the content of the paper's Fig. 7, whose parameters the paper does not give.

Run: .venv/bin/python examples/vertical_disc.py
"""

import os

import numpy as np
from figures import save_plot

import liemech as lm
from liemech.systems import VerticalDisc
from liemech.testing import estimate_order

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: Lobatto-2 with one retraction, two step counts
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"

STEPS = (10, 20) if FAST else (10, 20, 40, 80)


def main() -> None:
    disc = VerticalDisc()
    problem = disc.problem()
    assert problem.lam0 is not None
    g_ref, xi_ref, lam_ref = disc.reference(np.array([disc.t_final]))
    print(f"Vertical disc on SE(2), T = {disc.t_final}, N = {STEPS}, consistent λ₀ = {float(problem.lam0[0]):.6f}")
    print(f"{'method':<11}{'τ':<5}{'order g':>9}{'order ξ':>9}{'order λ':>9}{'theory λ':>10}{'max |v₂|':>11}")
    curves: dict[str, tuple[list[float], list[float]]] = {}
    for s in (2,) if FAST else (2, 3, 4):
        for retraction in lm.RETRACTION_KINDS[:1] if FAST else lm.RETRACTION_KINDS:
            errors_g, errors_xi, errors_lam, slip = [], [], [], 0.0
            for n in STEPS:
                sol = lm.integrate(problem, lm.VPRK(lm.lobatto(s), retraction), h=disc.t_final / n, t_final=disc.t_final)
                assert sol.lam is not None
                errors_g.append(float(np.linalg.norm(sol.g[-1] - g_ref[-1]) / np.linalg.norm(g_ref[-1])))
                errors_xi.append(float(np.max(np.abs(sol.eta[-1] - xi_ref[-1]))))
                errors_lam.append(abs(float(sol.lam[-1, 0]) - float(lam_ref[-1])))
                slip = max(slip, float(np.max(np.abs(sol.eta[:, 1]))))
            h = [disc.t_final / n for n in STEPS]
            if retraction == "cay":
                curves[f"g, Lobatto-{s}"] = (h, errors_g)
                curves[f"λ, Lobatto-{s}"] = (h, errors_lam)
            print(f"Lobatto-{s:<3}{retraction:<5}{estimate_order(h, errors_g).slope:>9.2f}"
                  f"{estimate_order(h, errors_xi).slope:>9.2f}{estimate_order(h, errors_lam).slope:>9.2f}"
                  f"{2 * s - 2:>10}{slip:>11.1e}")
    saved = save_plot("vertical_disc_orders", "Vertical disc (cay): error vs h", "h", "error", curves, scale="loglog")
    if saved:
        print(f"figure: {saved}")


if __name__ == "__main__":
    main()
