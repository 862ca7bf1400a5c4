"""A thin disc rolling on a plane (SO(3) × R³, holonomic contact and nonholonomic rolling at once)
with the mixed-constraint VPRK scheme.

1. A steady circular motion (lean 0.25 rad, precession 1.5 rad/s, spin and path radius from the
   exact steady-motion relation): the error at T = 2 of Lobatto-2/3/4 for h = 0.1 and 0.05, the
   observed order (2s − 2) and the worst constraint residual over the nodes.
2. A wobbling motion (the steady initial velocity pushed off it) for T = 40: energy error, lean
   angle and the path of the contact point, plotted into a PNG.

Run: .venv/bin/python examples/rolling_disc.py [output.png]   (default /tmp/rolling_disc.png)
"""

import math
import os
import sys
from pathlib import Path

import matplotlib
import numpy as np
from scipy.linalg import null_space

import liemech as lm
from liemech.systems import RollingDisc
from liemech.systems.body_on_plane import Pose
from liemech.systems.rolling_disc import lowest_rim_direction

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: Lobatto-2 only, the wobbling disc up to T = 4
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"

DISC = RollingDisc()
STEADY = DISC.steady(lean=0.25, precession=1.5)


def constraint_residual(problem: lm.Problem[Pose], sol: lm.Solution[Pose]) -> float:
    assert problem.holonomic is not None and problem.nonholonomic is not None
    return max(max(float(np.max(np.abs(problem.holonomic.value(g)))),
                   float(np.max(np.abs(problem.nonholonomic.value(g, eta)))))
               for g, eta in zip(sol.points(), sol.eta))


def steady_table() -> None:
    problem, T = STEADY.problem(), 2.0
    R_T, x_T = STEADY.pose(T)
    print(f"steady motion: lean {STEADY.lean}, precession {STEADY.precession}, spin {STEADY.spin:.6f}, "
          f"contact path radius {abs(STEADY.path_radius):.6f}")
    print(f"{'method':<12}{'error h=0.1':>14}{'error h=0.05':>14}{'order':>8}{'max |Φ|, |φ|':>15}")
    for s in (2,) if FAST else (2, 3, 4):
        errors, residual = [], 0.0
        for h in (0.1, 0.05):
            sol = lm.integrate(problem, lm.VPRK(lm.lobatto(s)), h=h, t_final=T)
            R, x = sol.point(-1)
            errors.append(max(float(np.max(np.abs(R - R_T))), float(np.max(np.abs(x - x_T)))))
            residual = max(residual, constraint_residual(problem, sol))
        print(f"{f'Lobatto-{s}':<12}{errors[0]:>14.3e}{errors[1]:>14.3e}{math.log2(errors[0] / errors[1]):>8.2f}"
              f"{residual:>15.1e}")


def wobbling() -> lm.Problem[Pose]:
    steady = STEADY.problem()
    assert steady.holonomic is not None and steady.nonholonomic is not None
    admissible = null_space(np.vstack([steady.holonomic.trivialised_jacobian(steady.group, steady.g0),
                                       steady.nonholonomic.derivative_eta(steady.g0, steady.eta0)]))
    return DISC.problem(*steady.g0, steady.eta0 + 0.3 * admissible @ np.ones(admissible.shape[1]))


def main(output: Path) -> None:
    matplotlib.use("Agg")  # headless: before pyplot is imported
    import matplotlib.pyplot as plt

    steady_table()
    problem = wobbling()
    sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=0.02, t_final=4.0 if FAST else 40.0)
    energy = np.array([DISC.energy(g, mu) for g, mu in zip(sol.points(), sol.mu)])
    lean = np.degrees(np.arcsin(sol.g[0][:, 2, 2]))
    contact = np.array([x + DISC.radius * np.asarray(lowest_rim_direction(R[:, 2])) for R, x in sol.points()])
    print(f"wobbling disc, Lobatto-2, h = 0.02, T = 40: max |E − E0| = {np.max(np.abs(energy - energy[0])):.2e}, "
          f"lean between {lean.min():.1f}° and {lean.max():.1f}°, "
          f"max constraint residual {constraint_residual(problem, sol):.1e}")
    fig, (ax_energy, ax_lean, ax_path) = plt.subplots(1, 3, figsize=(13.0, 3.8))
    ax_energy.plot(sol.t, energy - energy[0])
    ax_energy.set(xlabel="t", ylabel="E − E₀", title="energy error")
    ax_lean.plot(sol.t, lean)
    ax_lean.set(xlabel="t", ylabel="lean (degrees)", title="lean of the disc's plane")
    ax_path.plot(contact[:, 0], contact[:, 1], linewidth=0.8)
    ax_path.set(xlabel="x", ylabel="y", title="path of the contact point", aspect="equal")
    for ax in (ax_energy, ax_lean, ax_path):
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(output, dpi=100)
    plt.close(fig)
    print(f"figure: {output}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/rolling_disc.png"))
