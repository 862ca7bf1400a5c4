"""liemech.multibody against an independent multibody code: pinocchio's articulated-body algorithm
(``pin.aba``, minimal coordinates, Featherstone's recursion) integrated by scipy's DOP853 at
rtol = atol = 1e-12. Every mechanism is built twice from one description, once as a liemech
``Model`` (bodies in redundant coordinates tied by holonomic constraints, integrated by VPRK) and
once as a pinocchio ``Model``; nothing of liemech's kinematics enters the reference.

Coordinate conventions (checked against pinocchio's forward kinematics): revolute, prismatic,
universal, spherical (quaternion x, y, z, w; v the angular velocity in the child's axes) and free
(p, quaternion; v the linear and angular velocity in the child's axes) agree with pinocchio's. A
planar joint differs in two ways: liemech's in-plane coordinates run along (b₁, b₂) of
``Joint.frame()``, which for the normal z is (y, −x), not pinocchio's (x, y); and liemech's planar
rates are the derivatives (ẋ, ẏ, θ̇) of its coordinates (velocity in the joint frame's axes), while
pinocchio's planar v is the velocity of the child's origin in the child's axes. ``_to_pinocchio``
and ``_from_pinocchio`` map between them.

The tolerances of the comparisons are about three times the errors measured (``TOLERANCES``; VPRK
Lobatto-3 with the Cayley retraction, h = 0.01, T = 1, a fourth-order method: errors from 4e-10 for
two free bodies to 3e-5 in the rates of a fast spherical pair, each shrinking 16-fold when h is
halved, so truncation errors, not a mismatch of conventions). The reference is read at liemech's
nodes through DOP853's dense output, well below these errors.
"""

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.integrate import solve_ivp

import liemech as lm
from liemech.multibody import Body, Joint, Model, pose
from liemech.testing import estimate_order

pin: Any = importlib.import_module("pinocchio")

F64 = NDArray[np.float64]

H, T_FINAL = 0.01, 1.0
QUATERNION_KINDS = ("spherical", "free")


# -- one description, two models ------------------------------------------------------------------


@dataclass(frozen=True)
class Link:
    """A body and the joint that ties it to ``parent`` (−1: the world, k: the k-th link)."""

    kind: str
    parent: int
    origin: F64
    mass: float
    com: F64
    inertia: F64
    axis: F64 = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    axis2: F64 | None = None
    damping: float = 0.0
    stiffness: float = 0.0
    rest: float = 0.0


def _unit(v: Sequence[float] | NDArray[np.floating[Any]]) -> F64:
    a = np.asarray(v, dtype=np.float64)
    return np.asarray(a / np.linalg.norm(a), dtype=np.float64)


def _inertia(principal: Sequence[float], rpy: Sequence[float]) -> F64:
    """A full (non-diagonal) inertia tensor: principal moments in axes rotated by ``rpy``."""
    R = pose(rpy=np.asarray(rpy, dtype=np.float64))[:3, :3]
    return np.asarray(R @ np.diag(principal) @ R.T, dtype=np.float64)


def _origin(xyz: Sequence[float], rpy: Sequence[float]) -> F64:
    return np.asarray(pose(np.asarray(xyz, dtype=np.float64), np.asarray(rpy, dtype=np.float64)), dtype=np.float64)


def _links(kind: str, axis: F64, axis2: F64 | None = None) -> list[Link]:
    """Two bodies hanging from the world, the second from the first, both by ``kind``, with joint
    frames rotated and shifted in their parents, offset centres of mass and full inertia tensors."""
    return [
        Link(kind, -1, _origin((0.1, -0.2, 0.3), (0.3, -0.5, 0.7)), 1.3, np.array([0.05, -0.1, -0.4]),
             _inertia((0.08, 0.11, 0.05), (0.2, 0.4, -0.3)), axis, axis2),
        Link(kind, 0, _origin((0.02, 0.1, -0.5), (-0.4, 0.2, 0.9)), 0.8, np.array([-0.03, 0.12, -0.3]),
             _inertia((0.04, 0.03, 0.06), (-0.5, 0.1, 0.6)), axis, axis2),
    ]


def liemech_model(links: Sequence[Link]) -> Model:
    bodies = [Body(f"b{i}", link.mass, link.inertia, link.com) for i, link in enumerate(links)]
    joints = [Joint(f"j{i}", link.kind, "world" if link.parent < 0 else f"b{link.parent}", f"b{i}", link.origin,
                    axis=link.axis, axis2=link.axis2, damping=link.damping, stiffness=link.stiffness, rest=link.rest)
              for i, link in enumerate(links)]
    return Model(bodies, joints)


def _pinocchio_joint(link: Link) -> Any:
    if link.kind == "revolute":
        return pin.JointModelRevoluteUnaligned(link.axis)
    if link.kind == "prismatic":
        return pin.JointModelPrismaticUnaligned(link.axis)
    if link.kind == "spherical":
        return pin.JointModelSpherical()
    if link.kind == "universal":
        return pin.JointModelUniversal(link.axis, link.axis2)
    if link.kind == "planar":
        assert np.allclose(link.axis, [0.0, 0.0, 1.0]), "pinocchio's planar joint moves in the xy plane"
        return pin.JointModelPlanar()
    if link.kind == "free":
        return pin.JointModelFreeFlyer()
    raise AssertionError(link.kind)


def pinocchio_model(links: Sequence[Link]) -> Any:
    model = pin.Model()  # gravity (0, 0, −9.81), liemech's default
    for i, link in enumerate(links):
        placement = pin.SE3(np.array(link.origin[:3, :3]), np.array(link.origin[:3, 3]))
        joint_id = model.addJoint(link.parent + 1, _pinocchio_joint(link), placement, f"j{i}")
        model.appendBodyToJoint(joint_id, pin.Inertia(link.mass, np.array(link.com), np.array(link.inertia)),
                                pin.SE3.Identity())
    return model


# -- coordinates ----------------------------------------------------------------------------------

LIEMECH_SIZES = {"revolute": (1, 1), "prismatic": (1, 1), "spherical": (4, 3), "universal": (2, 2),
                 "planar": (3, 3), "free": (7, 6)}
PINOCCHIO_SIZES = {**LIEMECH_SIZES, "planar": (4, 3)}


def _split(x: F64, kinds: Sequence[str], sizes: dict[str, tuple[int, int]], which: int) -> list[F64]:
    out, start = [], 0
    for kind in kinds:
        n = sizes[kind][which]
        out.append(x[..., start:start + n])
        start += n
    return out


def _rot2(theta: float) -> F64:
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s], [s, c]])


def _to_pinocchio(kinds: Sequence[str], q: F64, v: F64) -> tuple[F64, F64]:
    """liemech's (q, v) of the joints ``kinds`` as pinocchio's (module docstring)."""
    qs, vs = [], []
    for kind, qj, vj in zip(kinds, _split(q, kinds, LIEMECH_SIZES, 0), _split(v, kinds, LIEMECH_SIZES, 1)):
        if kind == "planar":  # liemech (x along y, y along −x, θ) with rates in the joint frame
            x, y, theta = qj
            qs.append(np.array([-y, x, np.cos(theta), np.sin(theta)]))
            vs.append(np.concatenate([_rot2(theta).T @ np.array([-vj[1], vj[0]]), vj[2:]]))
        else:
            qs.append(qj)
            vs.append(vj)
    return np.concatenate(qs), np.concatenate(vs)


def _from_pinocchio(kinds: Sequence[str], q: F64, v: F64) -> tuple[F64, F64]:
    """pinocchio's (q, v) as liemech's; quaternions normalised (sign left as is)."""
    qs, vs = [], []
    for kind, qj, vj in zip(kinds, _split(q, kinds, PINOCCHIO_SIZES, 0), _split(v, kinds, PINOCCHIO_SIZES, 1)):
        if kind == "planar":
            X, Y, c, s = qj
            theta = float(np.arctan2(s, c))
            qs.append(np.array([Y, -X, theta]))
            velocity = _rot2(theta) @ vj[:2]
            vs.append(np.array([velocity[1], -velocity[0], vj[2]]))
        elif kind == "spherical":
            qs.append(qj / np.linalg.norm(qj))
            vs.append(vj)
        elif kind == "free":
            qs.append(np.concatenate([qj[:3], qj[3:] / np.linalg.norm(qj[3:])]))
            vs.append(vj)
        else:
            qs.append(qj)
            vs.append(vj)
    return np.concatenate(qs), np.concatenate(vs)


def _quaternion_rate(quat: F64, omega: F64) -> F64:
    """d/dt (x, y, z, w) = ½ q ⊗ (ω, 0), ω in the body's axes."""
    vector, w = quat[:3], float(quat[3])
    rate: F64 = 0.5 * np.concatenate([w * omega + np.cross(vector, omega), [-vector @ omega]])
    return rate


def _quaternion_matrix(quat: F64) -> F64:
    x, y, z, w = quat / np.linalg.norm(quat)
    matrix: F64 = np.array(pin.Quaternion(w, x, y, z).matrix(), dtype=np.float64)
    return matrix


def _configuration_rate(kinds: Sequence[str], q: F64, v: F64) -> F64:
    """q̇ from pinocchio's v, joint by joint (its configuration spaces' kinematic maps)."""
    rates = []
    for kind, qj, vj in zip(kinds, _split(q, kinds, PINOCCHIO_SIZES, 0), _split(v, kinds, PINOCCHIO_SIZES, 1)):
        if kind == "spherical":
            rates.append(_quaternion_rate(qj, vj))
        elif kind == "free":
            rates.append(np.concatenate([_quaternion_matrix(qj[3:]) @ vj[:3], _quaternion_rate(qj[3:], vj[3:])]))
        elif kind == "planar":
            c, s = qj[2:] / np.linalg.norm(qj[2:])
            rates.append(np.array([c * vj[0] - s * vj[1], s * vj[0] + c * vj[1], -s * vj[2], c * vj[2]]))
        else:
            rates.append(vj)
    return np.concatenate(rates)


def _normalised(kinds: Sequence[str], q: F64) -> F64:
    parts = []
    for kind, qj in zip(kinds, _split(q, kinds, PINOCCHIO_SIZES, 0)):
        if kind == "spherical":
            parts.append(qj / np.linalg.norm(qj))
        elif kind == "free":
            parts.append(np.concatenate([qj[:3], qj[3:] / np.linalg.norm(qj[3:])]))
        elif kind == "planar":
            parts.append(np.concatenate([qj[:2], qj[2:] / np.linalg.norm(qj[2:])]))
        else:
            parts.append(qj)
    return np.concatenate(parts)


def _spring_damper(links: Sequence[Link]) -> tuple[F64, F64, F64, NDArray[np.int_], NDArray[np.int_]]:
    """c, k, rest of the one-degree-of-freedom joints and their columns in pinocchio's q and v."""
    c, k, rest, q_columns, v_columns = [], [], [], [], []
    q_start = v_start = 0
    for link in links:
        nq, nv = PINOCCHIO_SIZES[link.kind]
        if nv == 1:
            c.append(link.damping)
            k.append(link.stiffness)
            rest.append(link.rest)
            q_columns.append(q_start)
            v_columns.append(v_start)
        q_start, v_start = q_start + nq, v_start + nv
    return (np.array(c, dtype=np.float64), np.array(k, dtype=np.float64), np.array(rest, dtype=np.float64),
            np.array(q_columns, dtype=int), np.array(v_columns, dtype=int))


def reference(links: Sequence[Link], q0: F64, v0: F64, times: F64) -> tuple[F64, F64]:
    """Joint positions and rates (liemech's coordinates) at ``times`` from pinocchio's ABA and
    DOP853 on the state (q, v), q̇ by each joint's kinematic map; quaternions and (cos θ, sin θ) are
    normalised only where ABA reads them and where the result is compared. Revolute and prismatic
    joints with springs and dampers are driven by τ = −c v − k (q − rest)."""
    kinds = [link.kind for link in links]
    model = pinocchio_model(links)
    data = model.createData()
    qp, vp = _to_pinocchio(kinds, q0, v0)
    c, k, rest, q_columns, v_columns = _spring_damper(links)

    def rhs(t: float, y: F64) -> F64:
        q, v = y[: model.nq], y[model.nq:]
        qn = _normalised(kinds, q)
        tau = np.zeros(model.nv)
        tau[v_columns] = -c * v[v_columns] - k * (q[q_columns] - rest)
        return np.concatenate([_configuration_rate(kinds, q, v), np.asarray(pin.aba(model, data, qn, v, tau))])

    sol = solve_ivp(rhs, (float(times[0]), float(times[-1])), np.concatenate([qp, vp]), method="DOP853",
                    rtol=1e-12, atol=1e-12, t_eval=times)
    assert sol.success, sol.message
    qs, vs = zip(*(_from_pinocchio(kinds, y[: model.nq], y[model.nq:]) for y in sol.y.T))
    q_out = np.array(qs)
    for slot in _angle_columns(kinds):  # planar θ from atan2: continue it along the nodes
        q_out[:, slot] = np.unwrap(q_out[:, slot])
    return q_out, np.array(vs)


def _angle_columns(kinds: Sequence[str]) -> list[int]:
    columns, start = [], 0
    for kind in kinds:
        if kind == "planar":
            columns.append(start + 2)
        start += LIEMECH_SIZES[kind][0]
    return columns


def position_errors(kinds: Sequence[str], q: F64, q_ref: F64) -> F64:
    """|q − q_ref| per node, max over the joints: angles and displacements entrywise, quaternions
    as the smaller of |q − q_ref| and |q + q_ref| (the same rotation)."""
    errors = []
    for kind, a, b in zip(kinds, _split(q, kinds, LIEMECH_SIZES, 0), _split(q_ref, kinds, LIEMECH_SIZES, 0)):
        if kind in QUATERNION_KINDS:
            qa, qb = a[..., -4:], b[..., -4:]
            errors.append(np.minimum(np.linalg.norm(qa - qb, axis=-1), np.linalg.norm(qa + qb, axis=-1)))
            if kind == "free":
                errors.append(np.max(np.abs(a[..., :3] - b[..., :3]), axis=-1))
        else:
            errors.append(np.max(np.abs(a - b), axis=-1))
    return np.asarray(np.max(errors, axis=0), dtype=np.float64)


# -- mechanisms -----------------------------------------------------------------------------------

AXIS = _unit((0.3, -0.5, 0.8))
AXIS2 = _unit(np.cross(AXIS, (1.0, 0.0, 0.0)))
QUAT_A = _unit((0.2, -0.4, 0.3, 0.8))
QUAT_B = _unit((-0.5, 0.1, 0.6, 0.4))


@dataclass(frozen=True)
class Case:
    """A mechanism and its initial joint state (liemech's coordinates)."""

    links: list[Link]
    q0: F64
    v0: F64

    @property
    def kinds(self) -> list[str]:
        return [link.kind for link in self.links]


def _sliding_pendulum() -> list[Link]:
    """A slider on a spring along AXIS from the world, a pendulum on it, and a second slider along
    the pendulum (prismatic joints in a fixed and in a rotating frame; a prismatic chain under
    gravity alone would fall with constant acceleration, which every method of order ≥ 2 integrates
    exactly)."""
    first, second = _links("revolute", _unit((0.6, 0.2, -0.4)))
    return [Link("prismatic", -1, _origin((0.0, 0.1, -0.1), (0.5, 0.2, -0.6)), 1.1, np.array([0.05, 0.05, -0.05]),
                 _inertia((0.03, 0.05, 0.04), (0.3, -0.2, 0.1)), AXIS, stiffness=40.0, rest=0.1),
            Link("revolute", 0, second.origin, first.mass, first.com, first.inertia, first.axis),
            Link("prismatic", 1, second.origin, second.mass, second.com, second.inertia, _unit((0.2, -0.3, 1.0)))]


CASES = {
    "revolute": Case(_links("revolute", AXIS), np.array([0.7, -1.1]), np.array([1.3, -0.8])),
    "prismatic": Case(_sliding_pendulum(), np.array([0.2, 0.6, -0.1]), np.array([0.5, -1.0, 0.3])),
    "spherical": Case(_links("spherical", AXIS), np.concatenate([QUAT_A, QUAT_B]),
                      np.array([0.5, -1.0, 0.8, -0.7, 0.4, 1.2])),
    "universal": Case(_links("universal", AXIS, AXIS2), np.array([0.4, -0.9, 1.2, 0.3]),
                      np.array([1.1, 0.6, -0.7, 0.9])),
    "planar": Case(_links("planar", np.array([0.0, 0.0, 1.0])), np.array([0.3, -0.2, 0.8, -0.1, 0.25, -2.0]),
                   np.array([0.5, 0.4, -1.2, -0.3, 0.6, 0.9])),
    "free": Case(_links("free", AXIS), np.concatenate([[0.1, 0.2, -0.3], QUAT_A, [0.2, -0.1, 0.05], QUAT_B]),
                 np.array([0.4, -0.3, 0.2, 0.9, -0.5, 1.1, -0.2, 0.3, 0.1, 0.6, 0.8, -0.4])),
    # a nonlinear chain: revolute from the world, universal, spherical
    "chain": Case([
        Link("revolute", -1, _origin((0.1, 0.0, 0.2), (0.4, 0.1, -0.3)), 1.2, np.array([0.1, -0.05, -0.35]),
             _inertia((0.09, 0.07, 0.04), (0.1, -0.3, 0.5)), AXIS),
        Link("universal", 0, _origin((0.05, -0.1, -0.6), (-0.2, 0.5, 0.1)), 0.9, np.array([0.0, 0.08, -0.3]),
             _inertia((0.05, 0.06, 0.02), (0.6, 0.2, -0.4)), _unit((1.0, 0.2, 0.0)), _unit((-0.2, 1.0, 0.3))),
        Link("spherical", 1, _origin((0.0, 0.05, -0.5), (0.3, -0.6, 0.2)), 0.6, np.array([0.04, -0.02, -0.25]),
             _inertia((0.02, 0.03, 0.025), (-0.3, 0.4, 0.8)))],
        np.concatenate([[0.9, 0.5, -0.7], QUAT_B]), np.array([1.0, -0.8, 1.4, 0.6, -1.5, 0.9])),
    # one body on a revolute joint with viscous damping and a spring about rest
    "damped": Case([Link("revolute", -1, _origin((0.1, -0.2, 0.3), (0.3, -0.5, 0.7)), 1.3, np.array([0.05, -0.1, -0.4]),
                         _inertia((0.08, 0.11, 0.05), (0.2, 0.4, -0.3)), AXIS, damping=0.4, stiffness=6.0, rest=0.3)],
                   np.array([-0.6]), np.array([2.0])),
}
KINDS = ("revolute", "prismatic", "spherical", "universal", "planar", "free")
CHAIN_LENGTH = 1.0
"""m: the size of the chain (joint offsets up to 0.6 m, centres of mass up to 0.4 m from their frames)."""


@dataclass
class Run:
    """A case integrated by liemech (VPRK Lobatto-3, Cayley, h = 0.01, T = 1) and by the reference,
    both read at liemech's nodes."""

    case: Case
    model: Model
    problem: lm.Problem[Any]
    solution: lm.Solution[Any]
    q: F64
    v: F64
    q_ref: F64
    v_ref: F64

    def errors(self) -> tuple[float, float]:
        """Max over the nodes of the position error (quaternions up to sign) and the rate error."""
        return (float(np.max(position_errors(self.case.kinds, self.q, self.q_ref))),
                float(np.max(np.abs(self.v - self.v_ref))))


class Runs:
    """Each case's model and problem built once and integrated once (jax compiles a step per
    problem), shared by the tests of this module."""

    def __init__(self) -> None:
        self._models: dict[str, tuple[Model, lm.Problem[Any]]] = {}
        self._runs: dict[str, Run] = {}

    def model(self, name: str) -> tuple[Model, lm.Problem[Any]]:
        if name not in self._models:
            case = CASES[name]
            model = liemech_model(case.links)
            self._models[name] = (model, model.problem(case.q0, case.v0))
        return self._models[name]

    def run(self, name: str) -> Run:
        if name not in self._runs:
            case = CASES[name]
            model, problem = self.model(name)
            sol = lm.integrate(problem, lm.VPRK(lm.lobatto(3)), h=H, t_final=T_FINAL)
            q_ref, v_ref = reference(case.links, case.q0, case.v0, np.asarray(sol.t))
            self._runs[name] = Run(case, model, problem, sol, model.joint_positions(sol),
                                   model.joint_velocities(sol), q_ref, v_ref)
        return self._runs[name]


@pytest.fixture(scope="module")
def runs() -> Runs:
    return Runs()


# -- tests ----------------------------------------------------------------------------------------

TOLERANCES = {  # (positions, rates), ~3× the errors measured (max over the 101 nodes) in comments
    "revolute": (2.5e-7, 1.2e-6),  # 8.3e-8, 3.8e-7
    "prismatic": (2.5e-8, 3.5e-8),  # 8.4e-9, 1.1e-8
    "spherical": (1e-5, 1e-4),  # 3.5e-6, 3.1e-5
    "universal": (2.3e-6, 9e-6),  # 7.6e-7, 2.9e-6
    "planar": (7e-8, 6e-7),  # 2.3e-8, 2.0e-7
    "free": (1.3e-9, 7e-9),  # 4.2e-10, 2.3e-9
    "chain": (2.5e-6, 3e-5),  # 8.3e-7, 9.5e-6
    "damped": (7e-8, 4e-7),  # 2.2e-8, 1.3e-7
}


@pytest.mark.parametrize("kind", [*KINDS, "chain"])
def test_joint_kind_against_pinocchio(runs: Runs, kind: str) -> None:
    """Bodies hanging from the world by ``kind`` joints (two, each hung from the one before; the
    prismatic case a slider–pendulum–slider; "chain" revolute–universal–spherical), joint frames
    rotated and shifted in their parents, offset centres of mass, full inertia tensors, gravity:
    joint positions and rates at every node agree with pinocchio's ABA integrated by DOP853, to
    ~3× the error measured for this fourth-order method (quaternions up to sign)."""
    q_error, v_error = runs.run(kind).errors()
    print(f"{kind}: q error {q_error:.3e}, v error {v_error:.3e}")
    q_tol, v_tol = TOLERANCES[kind]
    assert q_error <= q_tol and v_error <= v_tol, (q_error, v_error)


def test_constraint_residual_at_round_off(runs: Runs) -> None:
    """Every node of the chain run satisfies the joints' holonomic constraints, Φ(g) = 0 (the
    truth), to round-off at the length scale of the chain."""
    run = runs.run("chain")
    holonomic = run.problem.holonomic
    assert holonomic is not None
    residual = np.asarray(jax.jit(jax.vmap(holonomic.value))(run.solution.g))
    worst = float(np.max(np.abs(residual)))
    print(f"chain: constraint residual {worst:.3e}")
    assert residual.shape == (len(run.solution.t), 5 + 4 + 3)
    assert worst <= 1e-12 * CHAIN_LENGTH


def test_damped_spring_joint_against_pinocchio(runs: Runs) -> None:
    """A revolute joint with damping c and a spring k about ``rest``: positions and rates agree
    with pinocchio + DOP853 driven by τ = −c v − k (q − rest), to ~3× the error measured."""
    q_error, v_error = runs.run("damped").errors()
    print(f"damped: q error {q_error:.3e}, v error {v_error:.3e}")
    q_tol, v_tol = TOLERANCES["damped"]
    assert q_error <= q_tol and v_error <= v_tol, (q_error, v_error)


@pytest.mark.parametrize("kind", KINDS)
def test_round_trip(runs: Runs, kind: str) -> None:
    """``model.problem(q, v)`` places the bodies by forward kinematics; ``positions`` and
    ``velocities`` read q and v back from the placed bodies (quaternions up to sign) to 1e-12: the
    truth is the q and v given."""
    case = CASES[kind]
    model, problem = runs.model(kind)
    q = np.asarray(model.positions(problem.g0))
    v = np.asarray(model.velocities(problem.g0, jnp.asarray(problem.eta0)))
    q_error = float(np.max(position_errors(case.kinds, q, case.q0)))
    v_error = float(np.max(np.abs(v - case.v0)))
    print(f"round trip {kind}: q error {q_error:.1e}, v error {v_error:.1e}")
    assert q_error <= 1e-12 and v_error <= 1e-12


@pytest.mark.slow
@pytest.mark.parametrize(("stages", "order"), [(2, 2), (3, 4)])
def test_order_on_chain(runs: Runs, stages: int, order: int) -> None:
    """Fitted order of the joint positions at T = 1 on the revolute–universal–spherical chain,
    errors against pinocchio + DOP853 (the truth): Lobatto-2 has order 2, Lobatto-3 order 4, each
    slope within ±0.3. (h = 0.1 is left out: there the default simplified Newton iteration, with
    the Jacobian of the starting guess, does not reach round-off within 50 iterations.)"""
    case = CASES["chain"]
    model, problem = runs.model("chain")
    steps = [1 / 20, 1 / 40, 1 / 80, 1 / 160]
    q_ref, _ = reference(case.links, case.q0, case.v0, np.array([0.0, T_FINAL]))
    errors = []
    for h in steps:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(stages)), h=h, t_final=T_FINAL)
        errors.append(float(position_errors(case.kinds, model.joint_positions(sol)[-1], q_ref[-1])))
    estimate = estimate_order(steps, errors)
    print(f"Lobatto-{stages}: errors {[f'{e:.3e}' for e in errors]}; {estimate}")
    assert len(estimate.steps_used) == len(steps), estimate
    assert abs(estimate.slope - order) <= 0.3, estimate
