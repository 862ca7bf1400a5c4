"""The Chaplygin sleigh (m = 1, a = 0.5, I_c = 0.2, ξ₀ = (1, 0, 2)) with Lobatto-2 VPRK at h = 0.05
to T = 20, with both closures of the nonholonomic multipliers: the default "consistent" one and the
paper's "carried" one (Martín de Diego & Sato Martín de Almagro 2018, §6.2). The exact motion tends
to straight-line sliding, ω ∝ e^{−1.86t}; the carried multiplier grows at the same rate, and the
run stops (ConvergenceError) once it has left the continuous λ(g, η), before it throws the sleigh
off its motion; the carried run is shown up to there. Prints a summary and plots the relative energy error and |ω(t)| of both, with
|ω| of the reduced equations (DOP853), into a PNG.

Run: .venv/bin/python examples/chaplygin_sleigh.py [output.png]   (default /tmp/chaplygin_sleigh.png)
"""

import os
import sys
from pathlib import Path

import matplotlib
import numpy as np

import liemech as lm
from liemech.methods.vprk.scheme import NonholonomicMultiplier
from liemech.systems import ChaplyginSleigh

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: T = 5
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"

H, T = 0.05, 5.0 if FAST else 20.0
CLOSURES: tuple[NonholonomicMultiplier, ...] = ("consistent", "carried")


def main(output: Path) -> None:
    matplotlib.use("Agg")  # headless: before pyplot is imported
    import matplotlib.pyplot as plt

    sleigh = ChaplyginSleigh()
    problem = sleigh.problem()
    E0 = sleigh.energy(problem.g0, problem.eta0)
    limit = sleigh.limit_velocity()
    print(f"Chaplygin sleigh: E = {E0}, limit velocity {limit[0]:.6f}, ω ∝ e^(−{sleigh.decay_rate():.4f} t); "
          f"Lobatto-2, h = {H}, T = {T}")
    print(f"{'closure':<12}{'max |E/E0 − 1|':>16}{'final v₁':>11}{'final ω':>11}{'max |λ|':>10}")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.0, 6.0), sharex=True)
    for closure in CLOSURES:
        method = lm.VPRK(lm.lobatto(2), nonholonomic_multiplier=closure)
        try:
            sol = lm.integrate(problem, method, h=H, t_final=T)
        except lm.ConvergenceError as failure:  # the carried closure's guard: λ has left λ(g, η)
            print(f"{closure}: {failure}")
            sol = lm.integrate(problem, method, h=H, n_steps=failure.step)
        assert sol.lam is not None
        error = np.abs(np.array([sleigh.energy(g, xi) for g, xi in zip(sol.points(), sol.eta)]) / E0 - 1.0)
        print(f"{closure:<12}{float(np.max(error)):>16.3e}{float(sol.eta[-1, 0]):>11.5f}"
              f"{float(sol.eta[-1, 2]):>11.2e}{float(np.max(np.abs(sol.lam))):>10.3g}")
        top.semilogy(sol.t[1:], error[1:], label=closure)
        bottom.semilogy(sol.t, np.abs(sol.eta[:, 2]), label=closure)
    times = np.linspace(0.0, T, 401)
    _, exact, _ = sleigh.reference(times)
    bottom.semilogy(times, np.abs(exact[:, 2]), "k--", linewidth=0.8, label="reduced equations")
    top.set_ylabel("|E/E₀ − 1|")
    top.set_title(f"Chaplygin sleigh, Lobatto-2, h = {H}")
    bottom.set_ylabel("|ω|")
    bottom.set_xlabel("t")
    for ax in (top, bottom):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(output, dpi=120)
    plt.close(fig)
    print(f"figure: {output}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/chaplygin_sleigh.png"))
