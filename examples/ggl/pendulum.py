"""Kinon, Betsch & Schneider (2023), §6.1: the mathematical pendulum in 3D. T = 10, h = 0.05 with
VI-S, VI-A(½), VI-B(1, ½) and EM under the papers' Newton protocol (``NewtonOptions.metis()``:
tolerance 1e-9, at most 40 iterations, one update past the check) and the simple initial guess.
Prints the columns of the regression table of an independent implementation and writes figures of
q₁(t), the energy, the increments of J₃ and the constraints (with matplotlib).

H = ½pᵀM⁻¹p + V uses the nodal momentum; E = p·v − ½vᵀMv + V the scheme's own velocity (VI-S: the
staggered vⁿ of ``sol.extras["velocity"]``, VI-A/VI-B: ``sol.eta``), as the papers' energy plots
do. ``G v`` uses v = ``sol.eta`` (for VI-S, EM that is M⁻¹p); for VI-S the staggered G(qⁿ)vⁿ
(independent implementation: 1.05) is printed below the table.

Run: .venv/bin/python examples/ggl/pendulum.py   (about 8 s, mostly compilation)
"""

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from figures import save_plot  # noqa: E402
from paper_schemes import paper_schemes  # noqa: E402

import liemech as lm  # noqa: E402
from liemech.diagnostics import holonomic_residuals, velocity_constraint  # noqa: E402
from liemech.systems import SphericalPendulum  # noqa: E402
from liemech.types import Vector  # noqa: E402

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: T = 1
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"

H_STEP, T_FINAL = 0.05, 1.0 if FAST else 10.0


def energy_function(pendulum: SphericalPendulum, q: Vector, p: Vector, v: Vector) -> float:
    """E = p·v − ½ m v·v + V."""
    return float(p @ v) - 0.5 * pendulum.mass * float(v @ v) + float(pendulum.potential(q))


def main() -> None:
    pendulum = SphericalPendulum()
    problem = pendulum.problem()
    H0 = pendulum.energy(problem.g0, problem.mu0)
    print(f"3D pendulum (Kinon, Betsch & Schneider 2023, §6.1): h = {H_STEP}, T = {T_FINAL}, metis Newton, "
          f"simple guess; H₀ = {H0:g}, J₃ = {pendulum.vertical_angular_momentum(problem.g0, problem.mu0):g}")
    header = (f"{'scheme':<6}{'mean it.':>9}{'max|ΔH|':>10}{'max|ΔE|':>10}{'max|ΔJ₃|':>10}{'max|g|':>10}"
              f"{'max|GM⁻¹p|':>11}{'max|Gv|':>10}{'q₁(10)':>11}{'p₁(10)':>11}")
    print(header)
    q1_curves: dict[str, tuple[list[float], list[float]]] = {}
    energy_curves: dict[str, tuple[list[float], list[float]]] = {}
    J3_curves: dict[str, tuple[list[float], list[float]]] = {}
    g_curves: dict[str, tuple[list[float], list[float]]] = {}
    gv_curves: dict[str, tuple[list[float], list[float]]] = {}
    staggered = 0.0
    for label, method in paper_schemes(gonzalez=False):
        sol = lm.integrate(problem, method, h=H_STEP, t_final=T_FINAL)
        qs, ps, t = sol.g, sol.mu, sol.t
        H = np.array([pendulum.energy(q, p) for q, p in zip(qs, ps)])
        J3 = np.array([pendulum.vertical_angular_momentum(q, p) for q, p in zip(qs, ps)])
        g, gv, gp = (values[:, 0] for values in holonomic_residuals(problem, sol))
        if label == "VI-S":  # the scheme's velocity vⁿ belongs to tⁿ; the last node has none
            velocities = list(sol.extras["velocity"])
            E = np.array([energy_function(pendulum, q, p, v) for q, p, v in zip(qs, ps, velocities)])
            E_times = t[:-1]
            staggered = float(np.max(np.abs(velocity_constraint(problem, qs[:-1], velocities))))
        else:
            E = np.array([energy_function(pendulum, q, p, v) for q, p, v in zip(qs, ps, sol.eta)])
            E_times = t
        print(f"{label:<6}{sol.stats.mean_iterations:9.3f}{np.max(np.abs(np.diff(H))):10.2e}"
              f"{np.max(np.abs(np.diff(E))):10.2e}{np.max(np.abs(np.diff(J3))):10.1e}{np.max(np.abs(g)):10.1e}"
              f"{np.max(np.abs(gp)):11.2e}{np.max(np.abs(gv)):10.2e}{float(qs[-1][0]):11.6f}{float(ps[-1][0]):11.6f}")
        q1_curves[label] = (list(t), [float(q[0]) for q in qs])
        energy_curves[label] = (list(E_times), list(E))
        J3_curves[label] = (list(t[1:]), list(np.abs(np.diff(J3)) + 1e-20))
        g_curves[label] = (list(t), list(np.abs(g) + 1e-20))
        gv_curves[label] = (list(t), list(np.abs(gp) + 1e-20))
    print(f"VI-S: max |G(qⁿ) vⁿ| with its staggered velocity vⁿ = {staggered:.2f} (the secondary constraint "
          "holds for M⁻¹pⁿ, not for vⁿ)")
    print("Independent implementation: mean it. 4.705/4.495/4.785/4.745, max|ΔE| 0.308/0.051/0.253/5.3e-15, "
          "q₁(10) −0.000276/0.287589/0.058209/0.252304")
    save_plot("ggl_pendulum_q1", "3D pendulum, h = 0.05: q₁(t)", "t", "q₁", q1_curves)
    save_plot("ggl_pendulum_energy", "3D pendulum: energy function E(t)", "t", "E", energy_curves)
    save_plot("ggl_pendulum_J3", "3D pendulum: |J₃ⁿ⁺¹ − J₃ⁿ|", "t", "|ΔJ₃|", J3_curves, scale="semilogy")
    save_plot("ggl_pendulum_g", "3D pendulum: |g(qⁿ)|", "t", "|g|", g_curves, scale="semilogy")
    save_plot("ggl_pendulum_gv", "3D pendulum: |G(qⁿ)M⁻¹pⁿ|", "t", "|G M⁻¹p|", gv_curves, scale="semilogy")


if __name__ == "__main__":
    main()
