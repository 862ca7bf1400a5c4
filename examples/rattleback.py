"""The rattleback: a convex body that, spun the "wrong" way, rocks, stops spinning and spins back
(``RollingBody.rattleback``, Kane & Levinson 1982: an ellipsoid with semi-axes 20, 3 and 2 cm whose
principal axes of inertia are turned by δ ≈ 0.82° about the vertical against its surface axes).

It rolls without slipping on the plane (holonomic contact and nonholonomic rolling at once) and is
integrated with Lobatto-2 (VPRK) at h = 1e-3 s from a tilt of 0.02 rad about its long axis, spun at
5 rad/s: the body with δ spun clockwise reverses at t ≈ 3.76 s, and spun anticlockwise keeps its
sense far longer; its mirror image (−δ) spun anticlockwise reverses at the same instant as the first,
towards clockwise. Printed: the first reversal of each run, the energy error and the largest
constraint residuals; plotted (when matplotlib is installed, into figures/): the vertical spin
ω_z(t) of the three runs (``rattleback_spin.png``, the gallery's figure) and the path of the
contact point (``rattleback_path.png``).

Run: .venv/bin/python examples/rattleback.py
"""

import os

import numpy as np

import liemech as lm
from figures import save_plot
from liemech.groups.so3 import exp_matrix
from liemech.systems import RollingBody
from liemech.systems.body_on_plane import Pose
from liemech.systems.rolling_body import KANE_LEVINSON_MISALIGNMENT, first_sign_change

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: h = 2e-3 s up to T = 4.2 s, without the mirror image
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"
H, T = (2e-3, 4.2) if FAST else (1e-3, 20.0)
STORE_EVERY = 2                       # the first reversal is interpolated between stored nodes: keep them close

R0 = exp_matrix(np.array([0.02, 0.0, 0.0]))
DELTA = KANE_LEVINSON_MISALIGNMENT
# (label of δ, δ, ω_z(0) in rad/s); the quick run leaves out the mirror image, a second body whose
# step would compile again
ALL_RUNS = (("δ", DELTA, -5.0), ("δ", DELTA, 5.0), ("−δ", -DELTA, 5.0))
RUNS: tuple[tuple[str, float, float], ...] = ALL_RUNS[:2] if FAST else ALL_RUNS


def constraint_residuals(problem: lm.Problem[Pose], sol: lm.Solution[Pose]) -> tuple[float, float]:
    """max over the nodes of |Φ| (contact height, m) and |φ| (slip velocity, m/s)."""
    assert problem.holonomic is not None and problem.nonholonomic is not None
    points = sol.points()
    return (max(float(np.max(np.abs(problem.holonomic.value(g)))) for g in points),
            max(float(np.max(np.abs(problem.nonholonomic.value(g, eta)))) for g, eta in zip(points, sol.eta)))


def main() -> None:
    print(f"Kane & Levinson's rattleback (δ = {np.degrees(DELTA):.3f}°), Lobatto-2, h = {H} s, T = {T} s")
    bodies = {delta: RollingBody.rattleback(delta) for delta in {delta for _, delta, _ in RUNS}}
    spins: dict[str, tuple[list[float], list[float]]] = {}
    paths: dict[str, tuple[list[float], list[float]]] = {}
    for name, delta, spin0 in RUNS:
        body = bodies[delta]
        problem = body.problem(R0, np.array([0.0, 0.0, spin0]))
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=H, t_final=T, store_every=STORE_EVERY)
        spin = body.vertical_spin(sol)
        reversal = first_sign_change(sol.t, spin)
        energy = np.array([body.energy(g, mu) for g, mu in zip(sol.points(), sol.mu)])
        height, slip = constraint_residuals(problem, sol)
        when = "none" if reversal is None else f"t = {reversal:.3f} s"
        label = f"{name}, ω_z(0) = {spin0:+.0f} rad/s"
        print(f"  {label}: first reversal {when}; max |E − E0| = {np.max(np.abs(energy - energy[0])):.2e} J of "
              f"E0 = {energy[0]:.4f} J; max |Φ| = {height:.1e} m, max |φ| = {slip:.1e} m/s")
        spins[label] = (sol.t.tolist(), spin.tolist())
        contact = body.contact_point(sol)
        paths[label] = (contact[:, 0].tolist(), contact[:, 1].tolist())
    for saved in (save_plot("rattleback_spin", f"Rattleback: spin about the vertical (Lobatto-2, h = {H} s)",
                            "t (s)", "ω_z (rad/s)", spins),
                  save_plot("rattleback_path", "Rattleback: path of the contact point", "x (m)", "y (m)", paths)):
        if saved:
            print(f"figure: {saved}")


if __name__ == "__main__":
    main()
