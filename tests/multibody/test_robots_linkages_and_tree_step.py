"""liemech.multibody: robots from URDF against pinocchio, a closed four-bar linkage against its
closed-form reduced equation, the O(bodies) step against the dense one and refusals. The joint
kinds one by one are in test_joint_kinds_against_pinocchio.py; long runs, ensembles and flows in
test_long_runs_ensembles_and_flows.py; the hand-built models in models.py."""

import sysconfig
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.integrate import simpson, solve_ivp

import liemech as lm
from liemech.methods.method import NodeState
from liemech.methods.vprk.scheme import VPRKEquations
from liemech.methods.vprk.step_pattern import stage_trees, step_entries, step_labels, step_tree
from liemech.multibody import Body, Joint, Model, from_urdf
from liemech.solvers import compiled_newton
from liemech.testing import estimate_order
from tests.multibody.models import X, chain, parallelogram

pin: Any = pytest.importorskip("pinocchio")

ROBOTS = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
DOUBLE_PENDULUM = ROBOTS / "double_pendulum_description/urdf/double_pendulum.urdf"
UR5 = ROBOTS / "ur_description/urdf/ur5_robot.urdf"
PANDA = ROBOTS / "panda_description/urdf/panda.urdf"


def pinocchio_reference(path: Path, model: Model, q0: NDArray[np.float64], v0: NDArray[np.float64],
                        t: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Joint positions and rates at times t (in liemech's joint order) of the same URDF in minimal
    coordinates: pinocchio's articulated-body forward dynamics with the URDF's damping τ = −c v,
    integrated by DOP853 at tight tolerance."""
    robot = pin.buildModelFromUrdf(str(path))
    data = robot.createData()
    names = [robot.names[i] for i in range(1, robot.njoints)]
    order = [model.joint_names.index(name) for name in names]
    n = len(names)

    def rhs(_: float, y: NDArray[np.float64]) -> NDArray[np.float64]:
        q, v = y[:n], y[n:]
        return np.concatenate([v, pin.aba(robot, data, q, v, -robot.damping * v)])

    ref = solve_ivp(rhs, (t[0], t[-1]), np.concatenate([q0[order], v0[order]]), method="DOP853", rtol=1e-12,
                    atol=1e-12, t_eval=t)
    back = np.argsort(order)
    return ref.y[:n].T[:, back], ref.y[n:].T[:, back]


def test_double_pendulum_urdf_is_read_as_written() -> None:
    """Names, damping (0.05), limits and the two links' masses as the file gives them."""
    model = from_urdf(DOUBLE_PENDULUM)
    assert model.joint_names == ("joint1", "joint2")
    assert [b.name for b in model.bodies] == ["link1", "link2"]
    np.testing.assert_allclose([b.mass for b in model.bodies], [0.26703, 0.33238])
    assert [j.damping for j in model.joints] == [0.05, 0.05]
    assert model.limits == {"joint1": (0.0, 0.0), "joint2": (0.0, 0.0)}


def test_double_pendulum_urdf_converges_to_pinocchio_at_order_four() -> None:
    """The damped double pendulum of example-robot-data: joint angles of Lobatto-3 converge to
    pinocchio + DOP853 with fitted order 4 (two-sided), and its rates too. The energy falls by the
    work of the joints' damping τ = −c q̇: E(T) − E(0) = ∫ −c|q̇|² dt (Simpson's rule over the nodes)."""
    model = from_urdf(DOUBLE_PENDULUM)
    q0, v0 = np.array([0.9, -0.4]), np.array([0.5, 1.0])
    problem = model.problem(q0, v0)
    steps, errors, rate_errors = [0.02, 0.01, 0.005, 0.0025], [], []
    for h in steps:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(3)), h=h, t_final=1.0)
        q_ref, v_ref = pinocchio_reference(DOUBLE_PENDULUM, model, q0, v0, sol.t)
        errors.append(np.max(np.abs(model.joint_positions(sol) - q_ref)))
        rate_errors.append(np.max(np.abs(model.joint_velocities(sol) - v_ref)))
    assert 3.7 < estimate_order(steps, errors, min_points=3).slope < 4.3
    assert 3.7 < estimate_order(steps, rate_errors, min_points=3).slope < 4.3
    energy = np.array([model.system.energy(p, e) for p, e in zip(sol.points(), sol.eta)])
    work = simpson(-0.05 * np.sum(model.joint_velocities(sol) ** 2, axis=1), x=sol.t)
    assert abs((energy[-1] - energy[0]) - work) < 1e-6 * abs(work)


@pytest.mark.slow
def test_ur5_converges_to_pinocchio_at_order_two() -> None:
    """The UR5 arm (six revolute joints, fixed joints lumped): Lobatto-2 joint angles converge to
    pinocchio + DOP853 at fitted order 2 (two-sided); the joints hold to round-off at every node."""
    model = from_urdf(UR5)
    q0 = np.array([0.3, -1.2, 1.0, -0.5, 0.7, 0.2])
    v0 = np.array([0.5, -0.3, 0.8, 0.1, -0.6, 1.0])
    problem = model.problem(q0, v0)
    assert problem.holonomic is not None
    # the light wrist spins up to 24 rad/s: h = 0.02 is beyond Newton's reach
    steps, errors = [0.01, 0.005, 0.0025, 0.00125], []
    for h in steps:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=h, t_final=1.0)
        errors.append(np.max(np.abs(model.joint_positions(sol) - pinocchio_reference(UR5, model, q0, v0, sol.t)[0])))
        residual = max(np.max(np.abs(problem.holonomic.value(p))) for p in sol.points())
        assert residual < 1e-13
    assert 1.8 < estimate_order(steps, errors, min_points=3).slope < 2.2


def test_ur5_lumps_fixed_links_and_keeps_the_mass() -> None:
    """Fixed joints merge links into bodies: the moving bodies carry the mass of every link but
    those fixed to the world (base_link, base, world), and the end effector's links join wrist 3."""
    model = from_urdf(UR5)
    assert model.joint_names == ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
                                 "wrist_2_joint", "wrist_3_joint")
    robot = pin.buildModelFromUrdf(str(UR5))
    np.testing.assert_allclose([b.mass for b in model.bodies], [robot.inertias[i].mass for i in range(1, 7)],
                               rtol=1e-12)
    for body, i in zip(model.bodies, range(1, 7)):
        np.testing.assert_allclose(body.com, robot.inertias[i].lever, atol=1e-12)
        np.testing.assert_allclose(body.inertia, robot.inertias[i].inertia, atol=1e-12)


@pytest.mark.slow
def test_parallelogram_four_bar_follows_its_reduced_equation() -> None:
    """A parallelogram linkage moves as one pendulum: the coupler translates, and the crank angle θ
    obeys (2 I_p + m_k L²) θ̈ = −(m_c + m_k) g L sin θ (I_p the crank's moment about its hinge),
    integrated by DOP853. Lobatto-3 follows it at order 4; the loop's joint, two of whose five rows
    are kept (the others repeat the tree's), holds to round-off at every node."""
    mc, mk, L = 1.0, 2.0, 0.5
    model = parallelogram(mc, mk, L)
    theta, rate = 0.6, -0.4
    problem = model.problem([theta, theta, -theta, -theta], [rate, rate, -rate, -rate])
    assert problem.holonomic is not None and problem.n_holonomic == 3 * 5 + 2
    inertia = mc * L ** 2 / 12 + mc * (L / 2) ** 2

    def reduced(_: float, y: NDArray[np.float64]) -> list[float]:
        return [y[1], -(mc + mk) * 9.81 * L * np.sin(y[0]) / (2 * inertia + mk * L ** 2)]

    steps, errors = [0.04, 0.02, 0.01], []
    for h in steps:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(3)), h=h, t_final=2.0)
        ref = solve_ivp(reduced, (0, 2), [theta, rate], method="DOP853", rtol=1e-12, atol=1e-12, t_eval=sol.t)
        q = model.joint_positions(sol)
        errors.append(np.max(np.abs(q[:, 0] - ref.y[0])))
        np.testing.assert_allclose(q[:, 1], q[:, 0], atol=1e-13)  # the coupler translates
        assert max(np.max(np.abs(model.constraint_rows(p))) for p in sol.points()) < 1e-14
    assert 3.7 < estimate_order(steps, errors, min_points=3).slope < 4.3


CHAIN = chain(4)
"""One chain for several tests: its compiled steps are shared."""


def test_tree_newton_update_is_the_dense_one() -> None:
    """The step's Jacobian (with the momentum at the step's end among the unknowns) vanishes
    outside the block tree of the chain's bodies and the entries of its kinds of rows and
    unknowns that ``step_entries`` leaves out (the stage velocities as y, H = K y, whose first copy
    moves no configuration and so reaches only its own body's momentum rows: undamped hinges couple
    no velocities), and Newton's update from the tree (directional derivatives along y¹, the rest of
    y, Λ and ν apart, factorised body by body) agrees with the dense solve J⁻¹r of the whole
    Jacobian (jax.jacfwd, numpy's LU) at an iterate off the solution, on an 8-link chain; the
    update's compiled code scatters nothing and calls no library."""
    problem = chain(8).problem(np.linspace(0.5, -0.3, 8), np.linspace(1.0, -0.5, 8))
    equations = VPRKEquations(lm.VPRK(lm.lobatto(2)), problem)
    assert problem.sparsity is not None
    sparsity = problem.sparsity
    tree = step_tree(sparsity, 2, local=True)
    assert tree is not None and equations.tree is tree
    carry = equations.start(NodeState(problem.g0, problem.mu0, problem.eta0, problem.lam0))

    def of_pieces(*pieces: jax.Array) -> jax.Array:
        return equations._stages(pieces, carry, jnp.zeros(0), jnp.asarray(0.01)).residual

    def residual(x: jax.Array) -> jax.Array:
        return of_pieces(*equations._pieces(x))

    x = carry.guess + 1e-3 * jnp.asarray(np.random.default_rng(0).normal(size=carry.guess.shape))
    factor, update = compiled_newton._linear_algebra(residual, of_pieces, (tree.parts, ()), tree, carry.guess.size,
                                                     False)
    compiled = jax.jit(lambda x: update(factor(x), residual(x))).lower(x).compile()
    by_tree = np.asarray(compiled(x))
    # the joints take their bodies by slices and the tree gathers, so that XLA can compile the
    # loops of a step into one kernel: nothing scattered, no library called
    text = str(compiled.as_text())
    assert " scatter(" not in text and "custom_call" not in text
    jacobian = np.asarray(jax.jit(jax.jacfwd(residual))(x))
    pattern = sparsity.coupled(step_labels(sparsity, 2)) & step_entries(sparsity, 2, local=True)
    assert np.max(np.abs(jacobian[~pattern])) == 0.0
    n = sparsity.coordinate_body.size  # y¹'s columns: its own body's momentum rows and ν's closure alone
    own = sparsity.coordinate_body[:, None] == sparsity.coordinate_body[None, :]
    assert np.array_equal(pattern[:, :n], np.vstack([own, own, np.zeros((pattern.shape[0] - 3 * n, n), bool), own]))
    dense = np.linalg.solve(jacobian, np.asarray(jax.jit(residual)(x)))
    assert np.max(np.abs(by_tree - dense)) < 1e-9 * np.max(np.abs(dense))


def test_step_by_stages_solves_the_whole_step_equations() -> None:
    """Lobatto-2 on the block tree solves a holonomic step as a position stage, then a velocity
    stage (``rattle_stages``). Their root is the root of the whole step's equations (26) and (28)
    with Φ(G²) = 0 and the tangency, as ``VPRKEquations`` writes them for any tableau: on a damped
    8-link chain (damping is a force at both stages), after each of 20 steps from a bent, swinging
    state, the whole residual at the stages' unknowns is at round-off (measured ≤ 3.3e-16 of the
    momenta's scale), and the node's μ_{k+1}, λ_{k+1} and the damping's work are the whole
    equations' at those unknowns. With Newton's factors carried from step to step (each stage its
    own), the run reaches the same states."""
    problem = chain(8, damping=0.3).problem(np.linspace(0.6, -0.4, 8), np.linspace(1.5, -1.0, 8))
    method = lm.VPRK(lm.lobatto(2))
    equations = VPRKEquations(method, problem)
    assert equations._rattle is not None
    h = jnp.asarray(0.01)
    step = jax.jit(equations.step)
    carry: Any = equations.start(NodeState(problem.g0, problem.mu0, problem.eta0, problem.lam0))
    for _ in range(20):
        after, node = step(carry, h)
        assert int(node.status) == compiled_newton.Status.CONVERGED
        x = after.history.solutions[0]
        whole = equations._stages(equations._pieces(x), carry, jnp.zeros(0), h)
        scale = max(1.0, float(jnp.max(jnp.abs(carry.mu))))
        assert float(jnp.max(jnp.abs(whole.residual))) < 1e-13 * scale
        np.testing.assert_allclose(after.mu, whole.mu_next, rtol=0, atol=1e-13 * scale)
        np.testing.assert_allclose(after.lam, whole.lam_next, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(after.work - carry.work, whole.work, rtol=0, atol=1e-14 * scale)
        carry = after
    carried = lm.VPRK(lm.lobatto(2), newton=lm.NewtonOptions(jacobian="carried"))
    fresh_run = lm.integrate(problem, method, h=0.01, n_steps=20)
    carried_run = lm.integrate(problem, carried, h=0.01, n_steps=20)
    np.testing.assert_allclose(carried_run.mu, fresh_run.mu, rtol=0, atol=1e-12)
    np.testing.assert_allclose(carried_run.mu[-1], carry.mu, rtol=0, atol=1e-12)


def test_chain_jacobian_takes_a_number_of_colours_independent_of_its_length() -> None:
    """A chain's step Jacobian is built from the same directional derivatives whatever its length
    (each body couples to its neighbours only): 6 along y¹ (the stage velocities' copy that moves
    no configuration reaches its own body alone: 6 coordinates), 18 along the other copy of y (3
    bodies × 6 coordinates), 20 along the multipliers Λ (a hinge's 5 rows × 2 stages reach its 2
    bodies, so that every other hinge shares a colour) and 12 along the momenta ν (6 coordinates,
    which reach the tangency rows of a body's 2 hinges), each kind apart; from 3 bodies on, and up
    to 2 the dense Jacobian. Damped hinges couple their bodies' velocities: 18 along y¹ then.
    Solved by stages (``rattle_stages``), the position stage takes 6, 18 and 10 (Λ¹ alone) in
    blocks of 17 unknowns a body, the velocity stage 10 along Λ² and 12 along ν in blocks of 11."""
    method = lm.VPRK(lm.lobatto(2))
    for n in (3, 12):
        problem = chain(n).problem(np.full(n, 0.1), np.zeros(n))
        tree = VPRKEquations(method, problem)._tree
        assert tree is not None and tree.part_counts == (6, 18, 20, 12)
        assert problem.sparsity is not None
        stages = stage_trees(problem.sparsity)
        assert stages is not None
        assert [(t.part_counts, t.block_size) for t in stages] == [((6, 18, 10), 17), ((10, 12), 11)]
    assert VPRKEquations(method, chain(2).problem(np.full(2, 0.1), np.zeros(2)))._tree is None
    damped = VPRKEquations(method, chain(6, damping=0.05).problem(np.full(6, 0.1), np.zeros(6)))._tree
    assert damped is not None and damped.part_counts == (18, 18, 20, 12)


def test_panda_mimic_fingers_move_together_and_locked_fingers_leave() -> None:
    """The Panda arm: its second finger mimics the first, a holonomic row that an initial state with
    the fingers apart violates; that row ties the two sibling fingers (their bodies and the hand
    form a cycle), so the step is solved densely. Locking the fingers leaves the seven arm joints."""
    model = from_urdf(PANDA)
    assert len(model.joint_names) == 9 and model.joints[-1].mimic == ("panda_finger_joint1", 1.0, 0.0)
    q0 = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8, 0.02, 0.02])
    problem = model.problem(q0, np.zeros(9))
    assert problem.holonomic is not None and problem.n_holonomic == 9 * 5 + 1
    assert VPRKEquations(lm.VPRK(lm.lobatto(2)), problem)._tree is None
    with pytest.raises(ValueError, match="does not close joint 'panda_finger_joint2'"):
        model.problem(np.concatenate([q0[:7], [0.02, 0.03]]), np.zeros(9))
    arm = from_urdf(PANDA, locked={"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02})
    assert arm.joint_names == tuple(f"panda_joint{i}" for i in range(1, 8))
    assert abs(sum(b.mass for b in arm.bodies) - sum(b.mass for b in model.bodies)) < 1e-12


@pytest.mark.parametrize("build, message", [
    (lambda: Joint("j", "revolute", "world", "a", axis=np.zeros(3)), "axis must be a nonzero vector"),
    (lambda: Body("a", 1.0, np.diag([1.0, -1.0, 1.0])), "inertia must be symmetric positive definite"),
    (lambda: Body("a", 0.0, np.eye(3)), "mass must be a finite number > 0"),
    (lambda: Joint("j", "hinge", "world", "a"), "kind must be one of"),
    (lambda: Model([Body("a", 1.0, np.eye(3))], [Joint("j", "revolute", "world", "b")]), "child 'b' names no body"),
    (lambda: Model([Body("a", 1.0, np.eye(3)), Body("b", 1.0, np.eye(3))], [Joint("j", "revolute", "world", "a")]),
     "body 'b' is not connected to the world"),
    (lambda: chain(2).problem([0.1], [0.0, 0.0]), "q must have length 2"),
    (lambda: parallelogram().problem([0.3, 0.2, -0.3, -0.3], np.zeros(4)), "does not close joint 'rocker_coupler'"),
    (lambda: lm.BodySparsity(np.zeros(3, dtype=np.int64), np.array([1]), np.array([[0, 1]]), np.array([[0, -1]])),
     "row_bodies must hold, for each constraint row"),
    (lambda: lm.BodySparsity(np.array([0, 1, 2]), np.array([1]), np.array([[0, 1]]), velocity_edges=np.array([[1, 2]])),
     "velocity_edges must be edges too"),
])
def test_bad_models_are_refused_by_name(build: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()


def test_bad_urdf_files_are_refused_by_name(tmp_path: Path) -> None:
    """A file that does not parse, one with no moving link, a joint naming a missing link, and a
    missing file."""
    broken = tmp_path / "broken.urdf"
    broken.write_text("<robot><link></robot>")
    with pytest.raises(ValueError, match="not a readable URDF"):
        from_urdf(broken)
    still = tmp_path / "still.urdf"
    still.write_text("<robot name='r'><link name='a'/></robot>")
    with pytest.raises(ValueError, match="no link moves"):
        from_urdf(still)
    missing = tmp_path / "missing_link.urdf"
    missing.write_text("<robot name='r'><link name='a'/><joint name='j' type='revolute'><parent link='a'/>"
                       "<child link='b'/><axis xyz='1 0 0'/><limit lower='0' upper='1' effort='1' velocity='1'/>"
                       "</joint></robot>")
    with pytest.raises(ValueError, match="link 'b'"):
        from_urdf(missing)
    with pytest.raises(ValueError, match="does not exist"):
        from_urdf(tmp_path / "nowhere.urdf")


def test_joint_readouts_have_one_row_per_node() -> None:
    """joint_positions and joint_velocities are (nodes, nq) and (nodes, nv), and at the first node
    they give back the initial state."""
    model = CHAIN
    q0, v0 = np.array([0.2, -0.1, 0.4, 0.0]), np.array([0.3, 0.0, -0.2, 0.1])
    sol = lm.integrate(model.problem(q0, v0), lm.VPRK(lm.lobatto(2)), h=0.01, n_steps=10)
    assert model.joint_positions(sol).shape == (11, 4) and model.joint_velocities(sol).shape == (11, 4)
    np.testing.assert_allclose(model.joint_positions(sol)[0], q0, atol=1e-14)
    np.testing.assert_allclose(model.joint_velocities(sol)[0], v0, atol=1e-13)
    np.testing.assert_allclose(np.asarray(model.velocities(sol.point(0), jnp.asarray(sol.eta[0]))), v0, atol=1e-13)


def test_joint_wrench_of_a_physical_pendulum_matches_newton() -> None:
    """A rigid pendulum (mass m, centre of mass at distance l from its hinge, inertia I about it):
    the hinge's force on it is m a − m g with the centre's acceleration a from θ̈ = −m g l sin θ /
    (I + m l²): along the rod m g cos θ + m l θ̇², across it m g sin θ + m l θ̈; no torque about the
    hinge's axis. Compared at every node of a short Lobatto-3 run."""
    m, l, inertia = 2.0, 0.7, 0.1
    model = Model([Body("bob", m, np.diag([inertia, inertia, 0.01]), com=np.array([0.0, 0.0, -l]))],
                  [Joint("hinge", "revolute", "world", "bob", axis=X)])
    problem = model.problem([0.5], [1.0])
    sol = lm.integrate(problem, lm.VPRK(lm.lobatto(3)), h=0.002, n_steps=50)
    wrench = model.joint_wrenches(problem, sol)["hinge"][1:]
    theta, rate = model.joint_positions(sol)[1:, 0], model.joint_velocities(sol)[1:, 0]
    acceleration = -m * 9.81 * l * np.sin(theta) / (inertia + m * l ** 2)
    toward_hinge = np.stack([np.zeros_like(theta), -np.sin(theta), np.cos(theta)], axis=1)
    across = np.stack([np.zeros_like(theta), np.cos(theta), np.sin(theta)], axis=1)
    force = wrench[:, :3]
    np.testing.assert_allclose(np.sum(force * toward_hinge, axis=1), m * 9.81 * np.cos(theta) + m * l * rate ** 2,
                               rtol=1e-5)
    np.testing.assert_allclose(np.sum(force * across, axis=1), m * 9.81 * np.sin(theta) + m * l * acceleration,
                               atol=1e-4)
    np.testing.assert_allclose(wrench[:, 3], 0.0, atol=1e-10)


def test_locked_revolute_joint_lumps_like_pinocchio_reduced_model() -> None:
    """Locking the double pendulum's second hinge at 0.7 rad merges link2 into link1 as pinocchio's
    buildReducedModel does: the same mass, centre of mass and inertia of the one moving body."""
    model = from_urdf(DOUBLE_PENDULUM, locked={"joint2": 0.7})
    robot = pin.buildModelFromUrdf(str(DOUBLE_PENDULUM))
    reduced = pin.buildReducedModel(robot, [robot.getJointId("joint2")], np.array([0.0, 0.7]))
    assert model.joint_names == ("joint1",)
    (body,) = model.bodies
    np.testing.assert_allclose(body.mass, reduced.inertias[1].mass, rtol=1e-12)
    np.testing.assert_allclose(body.com, reduced.inertias[1].lever, atol=1e-12)
    np.testing.assert_allclose(body.inertia, reduced.inertias[1].inertia, atol=1e-12)
