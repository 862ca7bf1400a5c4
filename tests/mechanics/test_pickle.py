"""Problems and solutions pickle: an unpickled problem integrates to the same bits, every problem of
``liemech.systems`` pickles with the standard library; a problem with lambdas needs cloudpickle,
which handles it."""

import functools
import pickle
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import liemech as lm
import liemech.systems
from liemech.systems import ChaoticNonholonomic, HeavyTop, Pendulum, RollingBody, RollingDisc

METHOD = lm.VPRK(lm.lobatto(2))


def pendulum_potential(q: lm.Vector) -> lm.Vector:
    """V(q) = 1 − cos q₀, a module-level function: pickled by reference."""
    return 1.0 - jnp.cos(q[0])  # type: ignore[return-value]


def test_an_unpickled_problem_integrates_to_the_same_bits() -> None:
    problem = Pendulum().problem()  # callbacks: bound methods of a frozen dataclass
    copy = pickle.loads(pickle.dumps(problem))
    assert copy.system is not problem.system
    first = lm.integrate(problem, METHOD, h=0.1, n_steps=8)
    second = lm.integrate(copy, METHOD, h=0.1, n_steps=8)
    assert np.array_equal(first.mu, second.mu) and np.array_equal(first.g, second.g)


def test_a_problem_pickles_after_it_was_integrated() -> None:
    """The compiled steps cached on the system stay behind; the copy compiles its own."""
    problem = Pendulum().problem()
    first = lm.integrate(problem, METHOD, h=0.1, n_steps=8)
    assert problem.system.compiled_steps
    copy = pickle.loads(pickle.dumps(problem))
    assert not copy.system.compiled_steps
    second = lm.integrate(copy, METHOD, h=0.1, n_steps=8)
    assert np.array_equal(first.mu, second.mu) and np.array_equal(first.g, second.g)


def test_module_level_callbacks_pickle() -> None:
    system = lm.MechanicalSystem(lm.Rn(1), np.array([[2.0]]), pendulum_potential)
    copy = pickle.loads(pickle.dumps(lm.Problem(system, np.array([0.7]), np.array([0.1]))))
    assert isinstance(copy.system, lm.MechanicalSystem)
    q = np.array([0.4])
    assert copy.system.potential(q) == 1.0 - np.cos(0.4)
    assert np.array_equal(copy.system.momentum(q, np.array([3.0])), [6.0])


def test_the_heavy_top_pickles_with_its_bound_methods() -> None:
    problem = HeavyTop().problem()
    copy = pickle.loads(pickle.dumps(problem))
    assert isinstance(copy.system, lm.MechanicalSystem) and isinstance(problem.system, lm.MechanicalSystem)
    assert np.array_equal(copy.g0, problem.g0) and np.array_equal(copy.mu0, problem.mu0)
    for R in (problem.g0, np.eye(3)):
        assert copy.system.potential(R) == problem.system.potential(R)
        assert np.array_equal(copy.system.force(R, problem.eta0), problem.system.force(R, problem.eta0))


def test_lambdas_need_cloudpickle() -> None:
    system = lm.MechanicalSystem(lm.Rn(1), np.eye(1), lambda q: 1.0 - jnp.cos(q[0]))
    problem = lm.Problem(system, np.array([0.7]), np.array([0.1]))
    with pytest.raises((pickle.PicklingError, AttributeError), match="lambda"):
        pickle.dumps(problem)
    cloudpickle = pytest.importorskip("cloudpickle")
    copy = cloudpickle.loads(cloudpickle.dumps(problem))
    assert isinstance(copy.system, lm.MechanicalSystem)
    assert copy.system.potential(np.array([0.4])) == 1.0 - np.cos(0.4)


def test_a_solution_pickles_with_its_group_and_metadata() -> None:
    t = np.array([0.0, 1.0])
    Rs = np.stack([np.eye(3), np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])])  # a quarter turn
    zeros = np.zeros((2, 3))
    sol = lm.Solution(t, Rs, zeros, zeros, None, lm.SolverStats(t, t, 0.5), metadata={"retraction": "exp"},
                      group=lm.SO3())
    copy = pickle.loads(pickle.dumps(sol))
    assert copy.group == lm.SO3() and copy.metadata == sol.metadata and np.array_equal(copy.g, Rs)
    c, s = np.cos(np.pi / 4), np.sin(np.pi / 4)  # half way: an eighth of a turn
    assert np.max(np.abs(copy.at(0.5).g - np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]))) <= 1e-15


# Problems of the classes whose problem() takes arguments or whose instance needs them.
BUILT_WITH_ARGUMENTS: dict[str, Callable[[], object]] = {
    "ChaoticNonholonomic": lambda: ChaoticNonholonomic().problem(1, 4),
    "SteadyRolling": lambda: RollingDisc().steady(0.3, 1.0).problem(),
    "RollingBody": lambda: RollingBody.rattleback().problem(np.eye(3), np.array([0.3, -0.2, 5.0])),
}
# ReducedLagrangeTop is an ODE with no problem; RollingDisc's problem is SteadyRolling's; Plane is
# RollingBody's contact option, not a system (it pickles: tests/systems/test_rolling_plane.py).
WITHOUT_OWN_PROBLEM = {"ReducedLagrangeTop", "RollingDisc", "Plane"}
SYSTEMS = [name for name in liemech.systems.__all__ if name not in WITHOUT_OWN_PROBLEM]


@functools.cache
def pickled(name: str) -> tuple[lm.Problem[object], lm.Problem[object]]:
    """The system's problem and its copy through pickle, made before either computes lam0 or
    integrates (the copy then computes with its own callbacks), shared by the tests below."""
    build = BUILT_WITH_ARGUMENTS.get(name)
    problem = build() if build is not None else getattr(liemech.systems, name)().problem()
    assert isinstance(problem, lm.Problem)
    copy = pickle.loads(pickle.dumps(problem))
    assert isinstance(copy, lm.Problem)
    return problem, copy


def same_bits(a: object, b: object) -> bool:
    """The same type (a point of a product group is a tuple of arrays) with bitwise equal leaves."""
    leaves_a, leaves_b = jax.tree.leaves(a), jax.tree.leaves(b)
    return (type(a) is type(b) and len(leaves_a) == len(leaves_b)
            and all(np.array_equal(x, y) for x, y in zip(leaves_a, leaves_b)))


@pytest.mark.parametrize("name", SYSTEMS)
def test_every_system_problem_pickles(name: str) -> None:
    problem, copy = pickled(name)
    assert copy.system is not problem.system
    assert same_bits(copy.g0, problem.g0) and same_bits(copy.eta0, problem.eta0)
    assert same_bits(copy.mu0, problem.mu0)
    assert same_bits(copy.lam0, problem.lam0)


@pytest.mark.parametrize("name", ["CartesianPendulum", "SphericalPendulum", "FourParticles"])
def test_an_unpickled_system_problem_takes_the_same_steps(name: str) -> None:
    problem, copy = pickled(name)
    first = lm.integrate(problem, METHOD, h=0.05, n_steps=3)
    second = lm.integrate(copy, METHOD, h=0.05, n_steps=3)
    assert same_bits(first.g, second.g) and same_bits(first.mu, second.mu) and same_bits(first.lam, second.lam)
