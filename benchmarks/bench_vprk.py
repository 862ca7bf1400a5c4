"""Wall time per step of VPRK Lobatto-3 (cay) on the heavy top, after compilation, against scipy's
DOP853 and Radau on the same problem at matched final-time accuracy.

Run: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_vprk.py
"""

import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

import liemech as lm  # noqa: E402
from liemech.systems.heavy_top import HeavyTop  # noqa: E402


def main() -> None:
    top = HeavyTop()
    T = top.t_final
    R_ref, mu_ref = top.reference(np.array([T]))
    y0 = np.concatenate([top.problem().g0.ravel(), top.problem().mu0])
    method = lm.VPRK(lm.lobatto(3), "cay")
    lm.integrate(top.problem(), method, h=T / 20, n_steps=1)  # compiles the step every run below uses
    for n in (20, 80, 320):
        started = time.perf_counter()
        sol = lm.integrate(top.problem(), method, h=T / n, t_final=T)
        wall = time.perf_counter() - started
        error = max(float(np.max(np.abs(sol.g[-1] - R_ref[-1]))), float(np.max(np.abs(sol.mu[-1] - mu_ref[-1]))))
        print(f"VPRK Lobatto-3 cay  N = {n:4d}  error {error:8.1e}  {1e6 * wall / n:8.0f} µs/step  "
              f"{wall * 1e3:7.1f} ms total  Newton {sol.stats.mean_iterations:.1f} it/step")
        for peer in ("DOP853", "Radau"):
            rtol = 1e-3
            while True:
                started = time.perf_counter()
                ivp = solve_ivp(top.rhs, (0.0, T), y0, method=peer, rtol=rtol, atol=rtol * 1e-2)
                ivp_wall = time.perf_counter() - started
                y = ivp.y[:, -1]
                ivp_error = max(float(np.max(np.abs(y[:9].reshape(3, 3) - R_ref[-1]))),
                                float(np.max(np.abs(y[9:] - mu_ref[-1]))))
                if ivp_error <= error or rtol < 1e-13:
                    break
                rtol /= 3.0
            steps = ivp.t.size - 1
            print(f"  scipy {peer:<7} rtol {rtol:7.1e}  error {ivp_error:8.1e}  {1e6 * ivp_wall / steps:8.0f} µs/step  "
                  f"{ivp_wall * 1e3:7.1f} ms total  ({steps} steps)")


if __name__ == "__main__":
    main()
