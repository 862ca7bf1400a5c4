"""A run's memory is that of what it stores: ``store_every`` thins the nodes as they are computed,
and the Newton statistics of the steps it skips are kept with the stored nodes (their number, total
iterations and largest residual), whether Newton's iterations per step are few or vary."""

import gc
import tracemalloc
import weakref

import jax.numpy as jnp
import numpy as np
import pytest

import liemech as lm
from liemech.systems import HeavyTop
from tests.perturbation import Perturbation

TOP = HeavyTop()
VPRK3 = lm.VPRK(lm.lobatto(3))


@pytest.mark.parametrize("method", [VPRK3, lm.VPRK(lm.lobatto(3), newton=lm.NewtonOptions(jacobian="every"))],
                         ids=["simplified-newton", "full-newton"])
def test_a_thinned_run_keeps_every_steps_statistics(method: lm.Method) -> None:
    """50 steps stored every 7th (and the last) against the same run storing every step: the same
    nodes bit for bit; per stored interval the step count, the sum of the iterations and the largest
    residual of the full run's steps; the same mean iterations per step."""
    full = lm.integrate(TOP.problem(), method, h=0.05, n_steps=50)
    thinned = lm.integrate(TOP.problem(), method, h=0.05, n_steps=50, store_every=7)
    kept = [0, *range(7, 50, 7), 50]
    assert np.array_equal(thinned.t, full.t[kept])
    assert np.array_equal(np.asarray(thinned.g), np.asarray(full.g)[kept])
    assert np.array_equal(thinned.mu, full.mu[kept]) and np.array_equal(thinned.eta, full.eta[kept])
    assert np.array_equal(thinned.stats.step_counts, [0, *[7] * 7, 1])
    assert np.array_equal(full.stats.step_counts, [0, *[1] * 50])
    bounds = list(zip(kept[:-1], kept[1:]))
    assert np.array_equal(thinned.stats.iterations[1:], [np.sum(full.stats.iterations[a + 1:b + 1]) for a, b in bounds])
    assert np.array_equal(thinned.stats.residuals[1:], [np.max(full.stats.residuals[a + 1:b + 1]) for a, b in bounds])
    assert thinned.stats.mean_iterations == pytest.approx(full.stats.mean_iterations, rel=1e-15)
    assert full.stats.mean_iterations == pytest.approx(np.mean(full.stats.iterations[1:]), rel=1e-15)


@pytest.mark.long_run
def test_a_long_run_holds_only_its_stored_nodes(perturb: Perturbation) -> None:
    """3·10⁵ RK4 steps on R¹ stored every 10⁵: the run's Python and numpy allocations peak below
    1 MiB (measured 0.03 MiB, the same at 3·10⁴ steps). Keeping every step's node and statistics
    and thinning afterwards, as liemech did before, peaked at 30 MiB (3.1 MiB at 3·10⁴ steps)."""
    oscillator = lm.Problem(lm.MechanicalSystem(lm.Rn(1), np.eye(1), lambda q: 0.5 * q[0] ** 2 + 0.1 * q[0] ** 4),
                            perturb([1.0]), perturb([0.0]))
    method = lm.RK4()
    lm.integrate(oscillator, method, h=1e-3, n_steps=300)  # compiles the chunk
    tracemalloc.start()
    try:
        sol = lm.integrate(oscillator, method, h=1e-3, n_steps=300_000, store_every=100_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(sol.t) == 4 and np.array_equal(sol.stats.step_counts, [0, 100_000, 100_000, 100_000])
    assert peak < 2**20, f"peak {peak / 2**20:.1f} MiB"


def _pendulum_in_the_plane(length: float) -> tuple[lm.Problem[lm.Vector], lm.HolonomicConstraint[lm.Vector]]:
    """A point mass on a rod of ``length`` in Cartesian coordinates: its own potential and constraint
    closures, as a parameter study written as a loop builds them."""
    rod: lm.HolonomicConstraint[lm.Vector] = lm.HolonomicConstraint(
        lambda q: 0.5 * jnp.stack([q[0] ** 2 + q[1] ** 2 - length ** 2]))
    system = lm.MechanicalSystem(lm.Rn(2), np.eye(2), lambda q: 9.81 * q[1])
    return lm.Problem(system, np.array([length, 0.0]), np.array([0.0, 0.5]), holonomic=rod), rod


def test_compiled_code_is_freed_with_its_system() -> None:
    """A system, its constraint and all that was compiled for them (the step, the consistent
    multiplier, the eager array methods) are freed once the user drops them. Before, module-level
    caches with the system and the constraint as static arguments kept every one of them, and its
    executables, for the life of the process (11 MiB and 150 memory maps per system in a loop)."""
    problem, rod = _pendulum_in_the_plane(1.5)
    lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=0.05, n_steps=3)
    problem.system.momentum(problem.g0, problem.eta0)
    rod.trivialised_jacobian(problem.group, problem.g0)
    assert problem.lam0 is not None and problem.system.compiled_steps
    alive: list[weakref.ref[object]] = [weakref.ref(problem.system), weakref.ref(rod)]
    del problem, rod
    gc.collect()
    assert [ref() for ref in alive] == [None, None]
