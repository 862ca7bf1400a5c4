"""Sensitivities of the heavy top's state at T = 1 to its initial angular velocity and to the weight
mg, by forward and reverse mode through the discrete flow, checked against central differences;
then a batch of initial velocities with ``jax.vmap``.

Run: .venv/bin/python examples/sensitivity.py
"""

import os

import jax
import jax.numpy as jnp
import numpy as np

import liemech as lm
from liemech.systems import HeavyTop

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: 10 steps instead of 100
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"


def main() -> None:
    top = HeavyTop()
    problem = top.problem()
    final = lm.flow(problem, lm.VPRK(lm.lobatto(3)), h=0.01, n_steps=10 if FAST else 100)

    def momentum_at_T(eta0: jax.Array) -> jax.Array:
        return final(eta0=eta0).mu

    eta0 = problem.eta0
    forward = np.asarray(jax.jacfwd(momentum_at_T)(eta0))
    reverse = np.asarray(jax.jacrev(momentum_at_T)(eta0))
    step = 1e-6
    central = np.stack([(np.asarray(momentum_at_T(eta0 + step * e)) - np.asarray(momentum_at_T(eta0 - step * e)))
                        / (2 * step) for e in np.eye(3)], axis=1)
    print("∂μ(T)/∂η₀ (forward mode):")
    print(np.array2string(forward, precision=6, suppress_small=True))
    print(f"reverse − forward: {np.max(np.abs(reverse - forward)):.1e}, "
          f"central differences − forward: {np.max(np.abs(central - forward)):.1e}")

    @lm.jit
    def momentum_for_weight(mg: jax.Array | float) -> jax.Array:
        heavier = HeavyTop(mg=mg)  # type: ignore[arg-type]  # a traced parameter
        return final(system=lm.MechanicalSystem(lm.SO3(), heavier.inertia, heavier.potential)).mu

    d_mg = np.asarray(jax.jacfwd(momentum_for_weight)(top.mg))
    central_mg = (np.asarray(momentum_for_weight(top.mg + step)) - np.asarray(momentum_for_weight(top.mg - step))) / (2 * step)
    print(f"∂μ(T)/∂(mg) = {np.array2string(d_mg, precision=6)}, central differences − autodiff: "
          f"{np.max(np.abs(central_mg - d_mg)):.1e}")

    scales = jnp.linspace(0.5, 1.5, 5)
    batch = jax.vmap(lambda s: final(eta0=s * eta0))(scales)
    noether = jnp.einsum("bi,bi->b", batch.mu, batch.g[:, 2])  # ⟨μ, Rᵀe₃⟩ at T for each η₀
    print(f"batch of {len(scales)} initial velocities, all converged: {bool(jnp.all(batch.converged))}; "
          f"Noether momentum at T: {np.array2string(np.asarray(noether), precision=6)}")


if __name__ == "__main__":
    main()
