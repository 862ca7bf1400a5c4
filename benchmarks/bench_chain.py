"""A chain of N heavy tops coupled by springs: µs per step and compile time against N, on
``ProductGroup(SO3(), …, SO3())`` (points a tuple of N rotations), on ``PowerGroup(SO3(), N)``
(points one (N, 3, 3) stack), and on the power group with its ``BodySparsity`` (each top coupled
to its neighbours: Newton's Jacobian from 3 × 9 directional derivatives, solved top by top), and
on the power group with its sparsity and Newton's factors carried from step to step
(``NewtonOptions(jacobian="carried")``), with VPRK Lobatto-3, cay, h = 0.01, and the fitted
exponents of cost and compile time in N.

V = Σ mg e₃ᵀR_iχ + k/2 Σ |R_{i+1}χ − R_iχ|², written once with jax.numpy over the stacked
rotations; 𝕀 = diag(1, 2, 3.5) per body. The two groups give the same trajectory to round-off
(tests/groups/test_power_group.py). The configurations are interleaved in one process, each timed as the
median of a few calls (this machine's speed drifts).

Run: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_chain.py [N ...]
"""

import os
import sys
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import liemech as lm  # noqa: E402
from timing import exponent, step_times  # noqa: E402

CHI, MG, SPRING = np.array([0.1, -0.2, 1.0]), 1.0, 2.0
H, STEPS, CALLS = 0.01, 200, 3
SIZES = [int(n) for n in sys.argv[1:]] or [1, 2, 4, 8, 16]


def chain_potential(R: jax.Array) -> jax.Array:
    """V of the module docstring for a stack R of shape (N, 3, 3)."""
    tips = R @ jnp.asarray(CHI)
    return MG * jnp.sum(tips[:, 2]) + 0.5 * SPRING * jnp.sum((tips[1:] - tips[:-1]) ** 2)


def chain(n: int, kind: str) -> lm.Problem[Any]:
    """The chain of n tops, slightly tilted and spinning, on the product or the power group."""
    rng = np.random.default_rng(0)
    stack = np.asarray(lm.PowerGroup(lm.SO3(), n).retraction("exp").tau(0.3 * rng.normal(size=3 * n)))
    inertia, eta0 = np.diag(np.tile([1.0, 2.0, 3.5], n)), rng.normal(size=3 * n)
    if kind in ("power", "sparse"):
        system = lm.MechanicalSystem(lm.PowerGroup(lm.SO3(), n), inertia, chain_potential)
        tops = np.arange(n)
        sparsity = lm.BodySparsity(np.repeat(tops, 3), np.zeros(0, dtype=np.int64),
                                   np.stack([tops[:-1], tops[1:]], axis=1))
        return lm.Problem(system, stack, eta0, sparsity=sparsity if kind == "sparse" else None)
    product = lm.ProductGroup(*[lm.SO3()] * n)
    potential: Callable[[Any], jax.Array] = lambda g: chain_potential(jnp.stack(g))
    return lm.Problem(lm.MechanicalSystem(product, inertia, potential), tuple(stack), eta0)


def measure(n: int, kind: str) -> tuple[float, float]:
    """(compile time in s, median µs per step); ``carried``: the sparse chain with Newton's factors
    carried from step to step."""
    if kind == "carried":
        return step_times(chain(n, "sparse"), lm.VPRK(lm.lobatto(3), newton=lm.NewtonOptions(jacobian="carried")),
                          H, STEPS, CALLS)
    return step_times(chain(n, kind), lm.VPRK(lm.lobatto(3)), H, STEPS, CALLS)



def main() -> None:
    print(f"chain of N heavy tops, VPRK Lobatto-3 cay, h = {H}, {STEPS} steps, median of {CALLS}")
    print(f"{'N':>4}{'product µs/step':>18}{'compile s':>11}{'power µs/step':>16}{'compile s':>11}"
          f"{'sparse µs/step':>16}{'compile s':>11}{'carried µs/step':>17}{'compile s':>11}{'product/sparse':>16}"
          f"{'product/carried':>17}")
    rows: dict[str, list[tuple[float, float]]] = {"product": [], "power": [], "sparse": [], "carried": []}
    for n in SIZES:
        for kind in rows:
            rows[kind].append(measure(n, kind))
        (cp, sp), (cw, sw), (cs, ss), (cc, sc) = (rows[kind][-1] for kind in rows)
        print(f"{n:>4}{sp:>18.1f}{cp:>11.2f}{sw:>16.1f}{cw:>11.2f}{ss:>16.1f}{cs:>11.2f}{sc:>17.1f}{cc:>11.2f}"
              f"{sp / ss:>16.2f}{sp / sc:>17.2f}", flush=True)
    if len(SIZES) > 1:
        for kind in rows:
            compile_s, per_step = zip(*rows[kind])
            print(f"{kind}: cost ∝ N^{exponent(SIZES, list(per_step)):.2f}, "
                  f"compile ∝ N^{exponent(SIZES, list(compile_s)):.2f}")


if __name__ == "__main__":
    main()
