"""The rattleback: a convex body that, spun the "wrong" way, rocks, stops spinning and spins back
(``RollingBody.rattleback``, Kane & Levinson 1982: an ellipsoid with semi-axes 20, 3 and 2 cm whose
principal axes of inertia are turned by δ ≈ 0.82° about the vertical against its surface axes).

It rolls without slipping on the plane (holonomic contact and nonholonomic rolling at once) and is
integrated with Lobatto-2 (VPRK) at h = 1e-3 s from a tilt of 0.02 rad about its long axis, spun at
5 rad/s each way: the clockwise spin reverses at t ≈ 3.76 s, the anticlockwise one keeps its sense
far longer. Printed: the first reversal of each, the energy error and the largest constraint
residuals; plotted: the vertical spin ω_z(t) and the path of the contact point.

Run: .venv/bin/python examples/rattleback.py [output.png]   (default /tmp/rattleback.png)
"""

import os
import sys
from pathlib import Path

import matplotlib
import numpy as np

import liemech as lm
from liemech.groups.so3 import exp_matrix
from liemech.systems import RollingBody
from liemech.systems.body_on_plane import Pose
from liemech.systems.rolling_body import KANE_LEVINSON_MISALIGNMENT, first_sign_change

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: h = 2e-3 s up to T = 4.2 s
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"
H, T = (2e-3, 4.2) if FAST else (1e-3, 20.0)

BODY = RollingBody.rattleback()
R0 = exp_matrix(np.array([0.02, 0.0, 0.0]))


def constraint_residuals(problem: lm.Problem[Pose], sol: lm.Solution[Pose]) -> tuple[float, float]:
    """max over the nodes of |Φ| (contact height, m) and |φ| (slip velocity, m/s)."""
    assert problem.holonomic is not None and problem.nonholonomic is not None
    points = sol.points()
    return (max(float(np.max(np.abs(problem.holonomic.value(g)))) for g in points),
            max(float(np.max(np.abs(problem.nonholonomic.value(g, eta)))) for g, eta in zip(points, sol.eta)))


def main(output: Path) -> None:
    matplotlib.use("Agg")  # headless: before pyplot is imported
    import matplotlib.pyplot as plt

    fig, (ax_spin, ax_path) = plt.subplots(1, 2, figsize=(12.0, 4.0))
    print(f"Kane & Levinson's rattleback (δ = {np.degrees(KANE_LEVINSON_MISALIGNMENT):.3f}°), Lobatto-2, h = {H} s, "
          f"T = {T} s")
    for spin0 in (-5.0, 5.0):
        problem = BODY.problem(R0, np.array([0.0, 0.0, spin0]))
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=H, t_final=T, store_every=2)
        spin = BODY.vertical_spin(sol)
        reversal = first_sign_change(sol.t, spin)
        energy = np.array([BODY.energy(g, mu) for g, mu in zip(sol.points(), sol.mu)])
        height, slip = constraint_residuals(problem, sol)
        when = "none" if reversal is None else f"t = {reversal:.4f} s"
        print(f"  ω_z(0) = {spin0:+.0f} rad/s: first reversal {when}; max |E − E0| = "
              f"{np.max(np.abs(energy - energy[0])):.2e} J of E0 = {energy[0]:.4f} J; max |Φ| = {height:.1e} m, "
              f"max |φ| = {slip:.1e} m/s")
        ax_spin.plot(sol.t, spin, label=f"ω_z(0) = {spin0:+.0f} rad/s")
        contact = BODY.contact_point(sol)
        ax_path.plot(contact[:, 0], contact[:, 1], linewidth=0.8, label=f"ω_z(0) = {spin0:+.0f} rad/s")
    ax_spin.set(xlabel="t (s)", ylabel="ω_z (rad/s)", title="spin about the vertical")
    ax_path.set(xlabel="x (m)", ylabel="y (m)", title="path of the contact point", aspect="equal")
    for ax in (ax_spin, ax_path):
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(output, dpi=100)
    plt.close(fig)
    print(f"figure: {output}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/rattleback.png"))
