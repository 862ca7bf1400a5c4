"""The N-link pendulum chain's flow and its derivatives: ms per step against N of ``lm.flow`` (VPRK
Lobatto-2, the chain of ``bench_multibody``), of its forward-mode derivative along one direction
of the initial velocities (a JVP) and of the reverse-mode gradient of ½|μ_N|² with respect to all
of them, beside what a user would otherwise compute: central differences, two flows per
direction (one direction for the JVP, all 6N for the gradient), with the fitted exponents. Each is compiled by ``lm.jit`` (``jax.jit``
with liemech's XLA options, which halve these times).

Both derivatives solve implicit differentiation's tangent systems J(x*) dx = −∂r on the step's
block tree (its Jacobian from one application per colour, factored body by body), so their cost
grows like the flow's.

Run: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_flow_derivatives.py [N ...]
"""

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import liemech as lm  # noqa: E402
from liemech.multibody import from_urdf  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from bench_multibody import chain_urdf, initial, step_size  # noqa: E402

STEPS = 20
CALLS = 3


def per_step(run: Callable[[], jax.Array]) -> float:
    """ms per step: the best of ``CALLS`` runs after a first (compiling) one."""
    run().block_until_ready()
    best = float("inf")
    for _ in range(CALLS):
        started = time.perf_counter()
        run().block_until_ready()
        best = min(best, time.perf_counter() - started)
    return 1e3 * best / STEPS


def row(n: int) -> tuple[float, float, float, int]:
    """(flow, JVP, gradient) ms per step for the n-link chain, and the number of directions (6n)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "chain.urdf"
        path.write_text(chain_urdf(n))
        model = from_urdf(path)
    problem = model.problem(*initial(n))
    final = lm.flow(problem, lm.VPRK(lm.lobatto(2)), step_size(n), STEPS)
    eta0 = jnp.asarray(problem.eta0)
    direction = jnp.asarray(np.random.default_rng(0).standard_normal(eta0.shape))

    def momentum(e: jax.Array) -> jax.Array:
        return final(eta0=e).mu

    def tangent(e: jax.Array, d: jax.Array) -> jax.Array:
        out: jax.Array = jax.jvp(momentum, (e,), (d,))[1]
        return out

    forward, jvp = lm.jit(momentum), lm.jit(tangent)
    gradient: Callable[[jax.Array], jax.Array] = lm.jit(jax.grad(lambda e: 0.5 * jnp.sum(momentum(e) ** 2)))
    return (per_step(lambda: forward(eta0)), per_step(lambda: jvp(eta0, direction)),
            per_step(lambda: gradient(eta0)), int(eta0.size))


def main() -> None:
    sizes = [int(n) for n in sys.argv[1:]] or [4, 8, 16, 32]
    print(f"N-link pendulum chain, lm.flow with VPRK Lobatto-2, {STEPS} steps, ms per step (best of {CALLS})")
    print(f"{'N':>4}{'flow':>9}{'JVP':>9}{'2 flows':>9}{'gradient':>10}{'12N flows':>11}")
    rows = []
    for n in sizes:
        flow, jvp, gradient, directions = row(n)
        rows.append((flow, jvp, gradient))
        print(f"{n:>4}{flow:>9.2f}{jvp:>9.2f}{2 * flow:>9.2f}{gradient:>10.2f}{2 * directions * flow:>11.1f}")
    if len(sizes) > 1:
        logs = np.log(np.asarray(rows))
        slopes = [np.polyfit(np.log(sizes), logs[:, k], 1)[0] for k in range(3)]
        print(f"fitted exponents: flow {slopes[0]:.2f}, JVP {slopes[1]:.2f}, gradient {slopes[2]:.2f}")


if __name__ == "__main__":
    main()
