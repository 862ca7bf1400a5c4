"""liemech.multibody over long runs (T = 100) and through ``integrate_ensemble`` and ``flow``, on the
models of tests/multibody/models.py (apart from test_robots_linkages_and_tree_step.py, so that
pytest-xdist can run the two side by side)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import liemech as lm
from liemech.methods.vprk.scheme import VPRKEquations
from liemech.methods.vprk.step_pattern import stage_trees
from liemech.multibody import Configuration, Model
from tests.perturbation import Perturbation
from tests.multibody.models import chain, parallelogram


def energy_deviation(model: Model, sol: lm.Solution[Configuration]) -> tuple[lm.Vector, lm.Vector]:
    """The energy at the stored nodes and its deviation |E − E₀| from the first."""
    energy = np.array([model.system.energy(p, e) for p, e in zip(sol.points(), sol.eta)])
    return energy, np.abs(energy - energy[0])


@pytest.mark.slow
@pytest.mark.long_run
def test_chain_energy_stays_bounded_over_a_long_run(perturb: Perturbation) -> None:
    """8-link chains (chaotic), no damping, Lobatto-2 on the block-tree path, h = 0.01, T = 100
    (10⁴ steps, every 50th stored), released from rest with their links bent alternately by 0.20,
    0.22, …, 0.34 rad. A symplectic method of order 2 keeps a modified energy E + O(h²), so the
    energy error stays at O(h²) without drift; what each chaotic run reads of it is a sample.
    Its largest deviation is an extreme that round-off moves: over the eight bends from six sets
    of initial data (as given, and perturbed by a relative 1e-12 five times) it ranged from 1.3e-4
    to 1.0e-3 of the energy, so each run is only held below 4e-3 (four times the largest), and
    theory is checked on statistics over the eight runs, which are stable: the median of their
    largest deviations measured 1.6e-4 to 2.4e-4 over the six sets (bound 5e-4), and the median of
    the second half's mean deviation over the first half's 0.88 to 1.05 (bound 1.5; a drift linear
    in t from zero makes each such ratio 3). Every step and every stored node's joint rows are solved to
    round-off (measured 6.8e-15 and 1.3e-15)."""
    model = chain(8)
    method = lm.VPRK(lm.lobatto(2))
    largest, ratios = [], []
    for bend in np.arange(0.20, 0.35, 0.02):
        problem = model.problem(perturb(np.where(np.arange(8) % 2 == 0, bend, -bend)), perturb(np.zeros(8)))
        assert VPRKEquations(method, problem)._tree is not None
        sol = lm.integrate(problem, method, h=0.01, t_final=100.0, store_every=50)
        energy, deviation = energy_deviation(model, sol)
        half = len(deviation) // 2
        largest.append(np.max(deviation) / abs(energy[0]))
        ratios.append(np.mean(deviation[half:]) / np.mean(deviation[:half]))
        assert np.max(sol.stats.residuals) < 1e-13
        assert max(float(np.max(np.abs(model.constraint_rows(p)))) for p in sol.points()) < 1e-13
    assert max(largest) < 4e-3, largest
    assert np.median(largest) < 5e-4, largest
    assert np.median(ratios) <= 1.5, ratios


@pytest.mark.slow
@pytest.mark.long_run
def test_four_bar_keeps_its_loop_and_energy_over_a_long_run(perturb: Perturbation) -> None:
    """The closed parallelogram linkage, Lobatto-2 at h = 0.02 to T = 100 (5000 steps): the joints'
    rows, the loop's among them, hold to round-off at every stored node (measured 2.6e-16), the
    energy error stays bounded (measured 6.2e-3 J of E = −12.09 J) with no drift (its largest value
    over the last quarter within 1.1× that over the first; measured 1.0005×), and the coupler keeps
    translating (the two cranks' angles stay equal; measured to 5.7e-15)."""
    model = parallelogram()
    theta, rate = 0.6, -0.4
    problem = perturb.problem(model.problem([theta, theta, -theta, -theta], [rate, rate, -rate, -rate]))
    sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=0.02, t_final=100.0, store_every=25)
    energy, deviation = energy_deviation(model, sol)
    quarter = len(deviation) // 4
    assert np.max(deviation) < 1e-3 * abs(energy[0])
    assert np.max(deviation[-quarter:]) < 1.1 * np.max(deviation[:quarter])
    assert max(float(np.max(np.abs(model.constraint_rows(p)))) for p in sol.points()) < 1e-14
    q = model.joint_positions(sol)
    assert np.max(np.abs(q[:, 1] - q[:, 0])) < 1e-12


@pytest.mark.slow
def test_ensemble_and_flow_run_the_tree_step() -> None:
    """The 6-link chain's block-tree step serves ``integrate_ensemble`` and ``flow``: three members
    bent by different angles, run one after another in the ensemble's compiled batch (the step says
    so), equal their separate ``integrate`` runs (measured 3e-15), and the
    forward-mode derivative of the flow's final state along a change of the joints' initial rates
    equals central differences of the flow (measured 1.1e-9 relative, the differences' error), as
    does the reverse-mode gradient along it; both modes' Jacobians agree, and the derivative's
    program holds no n × n matrix (its tangent systems are solved on the trees of the step's
    position and velocity stages)."""
    model = chain(6)
    method = lm.VPRK(lm.lobatto(2))
    rates = np.linspace(0.5, -0.5, 6)
    problems = [model.problem(np.full(6, bend), rates) for bend in (0.2, 0.3, 0.4)]
    tree = VPRKEquations(method, problems[0])._tree
    assert tree is not None
    assert method.compiled_step(problems[0]).members == "sequential"
    g0 = jax.tree.map(lambda *leaves: np.stack(leaves), *[p.g0 for p in problems])
    ensemble = lm.integrate_ensemble(problems[0], method, 0.01, n_steps=30,
                                     initial=(g0, np.stack([p.eta0 for p in problems])))
    assert bool(np.all(ensemble.converged))
    for i, problem in enumerate(problems):
        alone = lm.integrate(problem, method, h=0.01, n_steps=30)
        assert ensemble.mu is not None and np.max(np.abs(ensemble.mu[i] - alone.mu)) < 1e-11

    final = lm.flow(problems[0], method, 0.01, 30)
    # η₀ is linear in the joint rates at fixed joint positions: a change of rates is a direction of η₀
    direction = model.problem(np.full(6, 0.2), rates + np.eye(6)[2]).eta0 - problems[0].eta0
    _, tangent = jax.jvp(lambda eta0: final(eta0=eta0).mu, (jnp.asarray(problems[0].eta0),),
                         (jnp.asarray(direction),))
    step = 1e-6
    central = (np.asarray(final(eta0=problems[0].eta0 + step * direction).mu)
               - np.asarray(final(eta0=problems[0].eta0 - step * direction).mu)) / (2 * step)
    assert np.max(np.abs(np.asarray(tangent) - central)) < 1e-6 * np.max(np.abs(central))
    # reverse mode: the gradient of ½|μ_N|² along the same direction
    gradient = jax.grad(lambda eta0: 0.5 * jnp.sum(final(eta0=eta0).mu ** 2))(jnp.asarray(problems[0].eta0))
    mu = np.asarray(final(eta0=problems[0].eta0).mu)
    assert abs(float(gradient @ direction) - float(mu @ central)) < 1e-6 * float(np.abs(mu) @ np.abs(central))
    # reverse mode transposes the tangent solve exactly: the Jacobians of both modes agree (3e-15)
    short = lm.flow(problems[0], method, 0.01, 5)
    eta0 = jnp.asarray(problems[0].eta0)
    forward = np.asarray(jax.jacfwd(lambda e: short(eta0=e).mu)(eta0))
    reverse = np.asarray(jax.jacrev(lambda e: short(eta0=e).mu)(eta0))
    assert np.max(np.abs(reverse - forward)) < 1e-12 * np.max(np.abs(forward))
    # the tangent systems are solved on the trees of the step's two stages: no matrix of either's
    # size, nor of the whole step's, in the derivative's program
    assert problems[0].sparsity is not None
    stages = stage_trees(problems[0].sparsity)
    assert stages is not None
    program = str(jax.make_jaxpr(lambda eta0: jax.jvp(lambda e: final(eta0=e).mu, (eta0,), (eta0,)))(
        jnp.asarray(problems[0].eta0)))
    for n in (tree.size, *(stage.size for stage in stages)):
        assert f"[{n},{n}]" not in program and f"{n},{n}]" not in program
