"""A mechanism of rigid bodies and joints as a constrained Lagrangian system in redundant coordinates.

Every body is free in space, on SO(3) × R³ (its orientation and centre of mass), and every joint is
a holonomic constraint between two bodies (or a body and the world): the configuration space is
SO(3)ᴺ × R³ᴺ, the kinetic energy block diagonal, gravity linear, and the joints' rows stack into
one constraint Φ(g) = 0. This is the multibody formulation in absolute coordinates of Betsch &
Leyendecker (2006) and of the GGL papers behind liemech (Betsch & Steinmann 2002), so that every
constrained family integrates a model unchanged. Joint coordinates (angles, displacements, the
quaternions of spherical and free joints) are read from the relative poses of the bodies, and set
them at the start by forward kinematics along the tree of joints.
"""

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import jax
import jax.numpy as jnp
import numpy as np
from numpy.typing import NDArray

from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.mechanics.sparsity import BodySparsity
from liemech.mechanics.trivialised import trivialised_jacobian, trivialised_vjp
from liemech.multibody.body import Body
from liemech.multibody.joint import WORLD, Joint
from liemech.multibody.joint_kinds import KINDS, Frames, apply, apply_transposed, compose, compose_transposed, cross
from liemech.multibody.rigid_bodies import Configuration, RigidBodies
from liemech.run.solution import Solution
from liemech.types import Vector

Actuation: TypeAlias = Callable[[jax.Array, jax.Array, jax.Array], jax.Array]
"""τ(t, q, v) -> (nv,): generalised joint forces (torques of revolute joints, forces of prismatic
ones) in the order of ``Model.joint_names``, written with jax.numpy."""

GRAVITY = (0.0, 0.0, -9.81)
REDUNDANCY_TOL = 1e-8
"""A loop's or mimic's constraint row is dropped as redundant when its part outside the span of the
rows kept before it is below REDUNDANCY_TOL × its norm (at the initial configuration)."""
CONSISTENCY_TOL = 1e-9
"""Joint coordinates read back from the placed bodies must match the given ones to this tolerance."""


class _KindBatch:
    """The joints of one kind, as arrays indexed by joint: parent and child (0 is the world, body i
    is i + 1), the joint frame's pose in the parent's frame, the parent's and child's centres of
    mass in their frames, the (a, b₁, b₂) frames, and where their coordinates go in q and v."""

    def __init__(self, kind: str, joints: list[Joint], index: dict[str, int], bodies: Sequence[Body],
                 q_slots: dict[str, slice], v_slots: dict[str, slice]) -> None:
        self.spec = KINDS[kind]
        self.names = [joint.name for joint in joints]
        self.parent = np.array([index[j.parent] for j in joints])
        self.child = np.array([index[j.child] for j in joints])
        self.R_origin = np.array([j.origin[:3, :3] for j in joints])
        self.p_origin = np.array([j.origin[:3, 3] for j in joints])
        self.R_child_origin = np.array([j.child_origin[:3, :3] for j in joints])
        self.p_child_origin = np.array([j.child_origin[:3, 3] for j in joints])
        coms = np.concatenate([np.zeros((1, 3)), [b.com for b in bodies]])
        self.parent_com, self.child_com = coms[self.parent], coms[self.child]
        a, b1, b2 = (np.array(vectors) for vectors in zip(*(j.frame() for j in joints)))
        self.frames = Frames(jnp.asarray(a), jnp.asarray(b1), jnp.asarray(b2))
        self.q_index = np.array([np.arange(q_slots[j.name].start, q_slots[j.name].stop) for j in joints], dtype=int)
        self.v_index = np.array([np.arange(v_slots[j.name].start, v_slots[j.name].stop) for j in joints], dtype=int)

    def relative_pose(self, R: jax.Array, p: jax.Array) -> tuple[jax.Array, jax.Array]:
        """R_rel = R_jᵀR_c' and p_rel = R_jᵀ(p_c' − p_j) from the link poses (world first), with
        (R_c', p_c') the joint frame on the child's side."""
        R_joint, p_joint = _placed(_take(R, self.parent), _take(p, self.parent), self.R_origin, self.p_origin)
        R_child, p_child = _placed(_take(R, self.child), _take(p, self.child), self.R_child_origin, self.p_child_origin)
        return compose_transposed(R_joint, R_child), apply_transposed(R_joint, p_child - p_joint)


def _placed(R: jax.Array, p: jax.Array, R_offset: NDArray[np.float64],
            p_offset: NDArray[np.float64]) -> tuple[jax.Array, jax.Array]:
    """The frames (R R_offset, p + R p_offset) of stacks of link poses. Where every offset is the
    identity or zero (a URDF's child frames; joints without rpy or xyz) the product is left out:
    XLA keeps products with a constant identity or zero, which the step then differentiates along
    every tangent of its Jacobian."""
    return _rotated(R, R_offset), (p + apply(R, jnp.asarray(p_offset)) if np.any(p_offset) else p)


def _rotated(R: jax.Array, R_offset: NDArray[np.float64]) -> jax.Array:
    """R R_offset for stacks, R itself where every offset is the identity (``_placed``)."""
    return R if _identities(R_offset) else compose(R, jnp.asarray(R_offset))


def _unrotated(R_offset: NDArray[np.float64], w: jax.Array) -> jax.Array:
    """R_offsetᵀ w for stacks, w itself where every offset is the identity (``_placed``)."""
    return w if _identities(R_offset) else apply_transposed(jnp.asarray(R_offset), w)


def _take(stack: jax.Array, indices: NDArray[np.int64]) -> jax.Array:
    """stack[indices] for static indices: a slice where they run consecutively (the parents and the
    children of a chain's joints), whose transpose in the step's derivatives is a pad; a gather
    elsewhere, which those derivatives transpose into a scatter-add (a scatter keeps XLA from
    compiling a loop around it into one kernel)."""
    if indices.size and np.array_equal(indices, np.arange(indices[0], indices[0] + indices.size)):
        return jax.lax.slice_in_dim(stack, int(indices[0]), int(indices[0]) + indices.size)
    return stack[indices]


def _identities(R_offset: NDArray[np.float64]) -> bool:
    return np.array_equal(R_offset, np.broadcast_to(np.eye(3), R_offset.shape))


class Model:
    """A mechanism: ``bodies`` tied by ``joints`` under ``gravity`` (m/s², in space), with
    optional ``actuation`` τ(t, q, v) on the joints' coordinates (``Actuation``).

    The joints form a tree rooted at the world (each body reached from the world through one
    joint, the first in the order given); further joints close loops. A loop's rows that repeat
    others (a planar four-bar closed by a revolute joint repeats three of its five rows) are
    dropped at the initial state of each problem. Joint springs (``stiffness``) enter the potential,
    damping and actuation the external force F = (∂v/∂η)ᵀ τ, whose virtual work is τ·δq.

    ``joint_names`` lists the joints with degrees of freedom in the order given; ``problem(q, v)``
    places the bodies from those joints' positions q and rates v by forward kinematics, and
    ``joint_positions(sol)`` / ``joint_velocities(sol)`` read them back at every node.
    """

    def __init__(self, bodies: Sequence[Body], joints: Sequence[Joint], gravity: Sequence[float] = GRAVITY,
                 actuation: Actuation | None = None) -> None:
        self.bodies, self.joints = tuple(bodies), tuple(joints)
        if not self.bodies:
            raise ValueError("bodies must hold at least one Body")
        for name, items, cls in (("bodies", self.bodies, Body), ("joints", self.joints, Joint)):
            for item in items:
                if not isinstance(item, cls):
                    raise TypeError(f"{name} must hold {cls.__name__} objects, got {type(item).__name__}")
        _require_unique([b.name for b in self.bodies] + [WORLD], "body")
        _require_unique([j.name for j in self.joints], "joint")
        self.gravity = np.asarray(gravity, dtype=np.float64)
        if self.gravity.shape != (3,) or not np.all(np.isfinite(self.gravity)):
            raise ValueError(f"gravity must be a finite 3-vector, got {gravity!r}")
        if actuation is not None and not callable(actuation):
            raise TypeError("actuation must be a callable (t, q, v) -> (nv,) array or None")
        self.actuation = actuation
        self._index = {WORLD: 0, **{b.name: i + 1 for i, b in enumerate(self.bodies)}}
        for joint in self.joints:
            for end in ("parent", "child"):
                if getattr(joint, end) not in self._index:
                    raise ValueError(f"joint {joint.name!r}: {end} {getattr(joint, end)!r} names no body (bodies: "
                                     f"{[b.name for b in self.bodies]} or {WORLD!r})")
            if joint.child == WORLD or joint.child == joint.parent:
                raise ValueError(f"joint {joint.name!r}: child must be a body other than its parent, got "
                                 f"{joint.child!r}")
        self.tree_joints = _spanning_tree(self.bodies, self.joints)
        movable = [j for j in self.joints if j.spec.nv > 0]
        self.joint_names: tuple[str, ...] = tuple(j.name for j in movable)
        self._q_slots = _slots([(j.name, j.spec.nq) for j in movable])
        self._v_slots = _slots([(j.name, j.spec.nv) for j in movable])
        self.nq = sum(j.spec.nq for j in movable)
        self.nv = sum(j.spec.nv for j in movable)
        self.limits = {j.name: j.limits for j in movable if j.limits is not None}
        self._batches = [_KindBatch(kind, [j for j in self.joints if j.kind == kind], self._index, self.bodies,
                                    self._q_slots, self._v_slots)
                         for kind in KINDS if any(j.kind == kind for j in self.joints)]
        self._constraints: dict[tuple[int, ...], HolonomicConstraint[Configuration]] = {}
        self._sparsities: dict[tuple[int, ...], BodySparsity | None] = {}
        by_name = {j.name: j for j in self.joints}
        for joint in self.joints:
            leader = None if joint.mimic is None else by_name.get(joint.mimic[0])
            if joint.mimic is not None and (leader is None or leader.spec.nv != 1):
                raise ValueError(f"joint {joint.name!r}: mimic names {joint.mimic[0]!r}, which is no joint with one "
                                 f"degree of freedom")
        mimics = [(j, j.mimic) for j in self.joints if j.mimic is not None]
        self._mimic_follower = np.array([self._v_slots[j.name].start for j, _ in mimics], dtype=np.int64)
        self._mimic_leader = np.array([self._v_slots[m[0]].start for _, m in mimics], dtype=np.int64)
        self._mimic_affine = np.array([m[1:] for _, m in mimics], dtype=np.float64).reshape(-1, 2)
        self._mimic_angular = np.array([j.kind == "revolute" for j, _ in mimics], dtype=np.bool_)
        self._angular_rates = np.zeros(self.nv, dtype=bool)
        for joint in movable:
            if joint.kind == "revolute":
                self._angular_rates[self._v_slots[joint.name]] = True
        self._damping = np.zeros(self.nv)
        self._stiffness, self._rest = np.zeros(self.nv), np.zeros(self.nv)
        for joint in movable:
            if joint.spec.nv == 1:
                slot = self._v_slots[joint.name].start
                self._damping[slot], self._stiffness[slot], self._rest[slot] = (joint.damping, joint.stiffness,
                                                                                 joint.rest)
        self.system = RigidBodies(np.array([b.mass for b in self.bodies]), np.array([b.inertia for b in self.bodies]),
                                  self._potential)
        self.group = self.system.group
        self._joint_rows = sum(len(batch.names) * batch.spec.n_constraints for batch in self._batches)
        self.row_joints: tuple[str, ...] = tuple(
            [name for batch in self._batches for name in batch.names for _ in range(batch.spec.n_constraints)]
            + [j.name for j, _ in mimics])
        """The joint each row of the full constraint (before redundant rows are dropped) belongs to."""

    # -- traced kinematics --------------------------------------------------------------------

    def link_poses(self, g: Configuration) -> tuple[jax.Array, jax.Array]:
        """Every body frame's rotation (N + 1, 3, 3) and origin (N + 1, 3) in space, the world first."""
        R, x = jnp.asarray(g[0]), jnp.asarray(g[1])
        coms = jnp.asarray(np.array([b.com for b in self.bodies]))
        origins = x.reshape(-1, 3) - apply(R, coms)
        return (jnp.concatenate([jnp.eye(3)[None], R]), jnp.concatenate([jnp.zeros((1, 3)), origins]))

    def _relative_motions(self, g: Configuration, eta: jax.Array | None) -> list[tuple[jax.Array, ...]]:
        R, p = self.link_poses(g)
        out: list[tuple[jax.Array, ...]] = []
        for batch in self._batches:
            R_rel, p_rel = batch.relative_pose(R, p)
            if eta is None:
                out.append((R_rel, p_rel))
                continue
            n = len(self.bodies)
            omega = jnp.concatenate([jnp.zeros((1, 3)), eta[: 3 * n].reshape(n, 3)])
            v = jnp.concatenate([jnp.zeros((1, 3)), eta[3 * n:].reshape(n, 3)])
            out.append((R_rel, p_rel, *_relative_velocity(batch, R, omega, v, R_rel, p_rel)))
        return out

    def positions(self, g: Configuration) -> jax.Array:
        """q(g): the joint positions in the order of ``joint_names`` (angles in (−π, π])."""
        q = jnp.zeros(self.nq)
        for batch, (R_rel, p_rel) in zip(self._batches, self._relative_motions(g, None)):
            if batch.spec.nq:
                q = q.at[batch.q_index.ravel()].set(batch.spec.position(R_rel, p_rel, batch.frames).ravel())
        return q

    def velocities(self, g: Configuration, eta: jax.Array) -> jax.Array:
        """v(g, η): the joint rates in the order of ``joint_names``."""
        v = jnp.zeros(self.nv)
        for batch, (R_rel, p_rel, w, pd) in zip(self._batches, self._relative_motions(g, jnp.asarray(eta))):
            if batch.spec.nv:
                v = v.at[batch.v_index.ravel()].set(batch.spec.velocity(R_rel, p_rel, w, pd, batch.frames).ravel())
        return v

    def constraint_rows(self, g: Configuration) -> jax.Array:
        """Φ(g): every joint's rows (by kind, in the order of ``row_joints``) and the mimic rows."""
        rows = [batch.spec.constraint(R_rel, p_rel, batch.frames).ravel()
                for batch, (R_rel, p_rel) in zip(self._batches, self._relative_motions(g, None))]
        if len(self._mimic_follower):
            q = self._one_dof_positions(g)
            gap = q[self._mimic_follower] - self._mimic_affine[:, 0] * q[self._mimic_leader] - self._mimic_affine[:, 1]
            rows.append(jnp.where(self._mimic_angular, jnp.arctan2(jnp.sin(gap), jnp.cos(gap)), gap))
        return jnp.concatenate(rows)

    def _one_dof_positions(self, g: Configuration) -> jax.Array:
        """q(g) indexed by the rate slots (v's order), for joints with one degree of freedom."""
        return self.positions(g)[self._position_of_rate]

    @functools.cached_property
    def _position_of_rate(self) -> NDArray[np.int64]:
        """For each rate slot of a one-degree-of-freedom joint, its position slot (0 elsewhere)."""
        slots = np.zeros(self.nv, dtype=np.int64)
        for name in self.joint_names:
            if self._v_slots[name].stop - self._v_slots[name].start == 1:
                slots[self._v_slots[name].start] = self._q_slots[name].start
        return slots

    def _potential(self, g: Configuration) -> jax.Array:
        """V = −Σ mᵢ ⟨gravity, xᵢ⟩ + Σ ½ k (q − q_rest)² over the joints with springs."""
        masses = jnp.asarray(np.array([b.mass for b in self.bodies]))
        V = -jnp.sum(masses * jnp.sum(g[1].reshape(-1, 3) * jnp.asarray(self.gravity), axis=-1))
        if np.any(self._stiffness):
            stretch = self._one_dof_positions(g) - self._rest
            # an angle's stretch from rest, in (−π, π]: the spring has no jump where q wraps
            stretch = jnp.where(self._angular_rates, jnp.arctan2(jnp.sin(stretch), jnp.cos(stretch)), stretch)
            V = V + 0.5 * jnp.sum(jnp.asarray(self._stiffness) * stretch ** 2)
        return V

    def _force(self, g: Configuration, eta: jax.Array, t: jax.Array) -> jax.Array:
        """F = (∂v/∂η)ᵀ τ with τ = −c v + actuation(t, q, v)."""
        rates, pullback = jax.vjp(lambda e: self.velocities(g, e), jnp.asarray(eta))
        tau = -jnp.asarray(self._damping) * rates
        if self.actuation is not None:
            tau = tau + jnp.asarray(self.actuation(jnp.asarray(t), self.positions(g), rates), dtype=float)
        (F,) = pullback(tau)
        return jnp.asarray(F)

    # -- problems and results -------------------------------------------------------------------

    def configuration(self, q: Vector) -> Configuration:
        """The bodies placed from joint positions q by forward kinematics along the tree."""
        R, p = self._place(self._checked(q, self.nq, "q"), np.zeros(self.nv))[:2]
        return self._body_state(R, p)

    def _place(self, q: Vector, v: Vector) -> tuple[NDArray[np.float64], ...]:
        """Link rotations, origins, angular velocities (space axes) and origin velocities of every
        body (world first) from q and v, joint by joint along the tree (setup, not traced)."""
        n = len(self.bodies) + 1
        R, p = np.tile(np.eye(3), (n, 1, 1)), np.zeros((n, 3))
        w, pd = np.zeros((n, 3)), np.zeros((n, 3))
        for joint in self.tree_joints:
            parent, child = self._index[joint.parent], self._index[joint.child]
            qj = q[self._q_slots[joint.name]] if joint.spec.nq else np.zeros(0)
            vj = v[self._v_slots[joint.name]] if joint.spec.nv else np.zeros(0)
            R_rel, p_rel, w_rel, pd_rel = (np.asarray(a)[0] for a in _joint_motion(joint.kind)(
                qj[None], vj[None], *(f[None] for f in joint.frame())))
            R_joint = R[parent] @ joint.origin[:3, :3]
            p_joint = p[parent] + R[parent] @ joint.origin[:3, 3]
            R_child_joint = R_joint @ R_rel  # the joint frame on the child's side
            w[child] = w[parent] + R_child_joint @ w_rel
            joint_origin_velocity = pd[parent] + np.cross(w[parent], p_joint - p[parent])
            child_joint_velocity = joint_origin_velocity + R_joint @ pd_rel + np.cross(w[parent], R_joint @ p_rel)
            R[child] = R_child_joint @ joint.child_origin[:3, :3].T
            lever = R[child] @ joint.child_origin[:3, 3]
            p[child] = p_joint + R_joint @ p_rel - lever
            pd[child] = child_joint_velocity - np.cross(w[child], lever)
        return R, p, w, pd

    def _body_state(self, R: NDArray[np.float64], p: NDArray[np.float64]) -> Configuration:
        coms = np.array([b.com for b in self.bodies])
        x = p[1:] + np.einsum("kij,kj->ki", R[1:], coms)
        return R[1:].copy(), x.ravel()

    def problem(self, q: Vector | Sequence[float], v: Vector | Sequence[float]) -> Problem[Configuration]:
        """The initial-value problem from joint positions q (length ``nq``) and rates v (``nv``), in
        the order of ``joint_names``; loops and mimics must close at that state."""
        q, v = self._checked(q, self.nq, "q"), self._checked(v, self.nv, "v")
        R, p, w, pd = self._place(q, v)
        g0 = self._body_state(R, p)
        coms = np.array([b.com for b in self.bodies])
        x_dot = pd[1:] + np.cross(w[1:], np.einsum("kij,kj->ki", R[1:], coms))
        omega = np.einsum("kji,kj->ki", R[1:], w[1:])
        eta0 = np.concatenate([omega.ravel(), x_dot.ravel()])
        self._check_closes(g0, eta0, q, v)
        rows = self._independent_rows(g0)
        return Problem(self.system, g0, eta0, holonomic=self._constraint(rows) if len(rows) else None,
                       force=self._force if self.actuation is not None or np.any(self._damping) else None,
                       sparsity=self._sparsities.setdefault(rows, self._sparsity(rows)))

    def _sparsity(self, rows: tuple[int, ...]) -> BodySparsity | None:
        """The bodies numbered in the tree's order (the world's children first), each joint's rows
        given to its child and coupling it with its parent; a mimic couples the bodies of both
        joints. None with an actuation, which may couple any joints. Only a damped joint couples its
        bodies through their velocities (each body's kinetic energy is its own)."""
        if self.actuation is not None:
            return None
        rank = {joint.child: k for k, joint in enumerate(self.tree_joints)}
        bodies = np.array([rank[b.name] for b in self.bodies])
        by_name = {j.name: j for j in self.joints}
        row_bodies = self._row_bodies(rank, by_name)
        edges = [(rank[j.parent], rank[j.child]) for j in self.joints if j.parent != WORLD]
        for ends in row_bodies[self._joint_rows:]:  # a mimic row couples the bodies of both its joints
            edges += [(int(a), int(b)) for a in ends for b in ends if a != b and min(a, b) >= 0]
        owners = np.array([rank[by_name[name].child] for name in self.row_joints])[list(rows)]
        damped = [(rank[j.parent], rank[j.child]) for j in self.joints if j.parent != WORLD and j.damping != 0.0]
        return BodySparsity(self.system.coordinate_bodies(bodies), owners, np.array(edges, dtype=np.int64),
                            row_bodies[list(rows)], np.array(damped, dtype=np.int64))

    def _row_bodies(self, rank: dict[str, int], by_name: dict[str, Joint]) -> NDArray[np.int64]:
        """The bodies (ranked, padded with −1, the world left out) each full constraint row involves:
        a joint's parent and child; a mimic row both joints' parents and children."""
        table = np.full((len(self.row_joints), 4), -1, dtype=np.int64)
        for r, name in enumerate(self.row_joints):
            joint = by_name[name]
            names = {joint.parent, joint.child}
            if r >= self._joint_rows:  # the mimic rows come after every joint's own rows
                leader = by_name[joint.mimic[0]]  # type: ignore[index]
                names |= {leader.parent, leader.child}
            ranked = sorted(rank[body] for body in names - {WORLD})
            table[r, :len(ranked)] = ranked
        return table

    def _check_closes(self, g0: Configuration, eta0: Vector, q: Vector, v: Vector) -> None:
        """Loops and mimics close: every row of Φ vanishes, and the joints read back q and v."""
        residual = np.abs(np.asarray(self._compiled("constraint_rows")(g0)))
        if residual.size and not np.max(residual) <= CONSISTENCY_TOL * max(1.0, self._size):
            worst = int(np.argmax(residual))
            raise ValueError(f"the initial state does not close joint {self.row_joints[worst]!r}: a constraint row "
                             f"is {residual[worst]:.3e} off (a loop or mimic needs joint positions that close it)")
        read_q = np.asarray(self._compiled("positions")(g0))
        read_v = np.asarray(self._compiled("velocities")(g0, jnp.asarray(eta0)))
        angle_gap = np.abs(np.remainder(q - read_q + np.pi, 2 * np.pi) - np.pi)
        q_gap = np.where(self._angular_mask, angle_gap, np.abs(q - read_q))
        for joint in self.joints:  # a quaternion and its negative are one rotation
            if joint.name in self._q_slots and joint.kind in ("spherical", "free"):
                block = slice(self._q_slots[joint.name].stop - 4, self._q_slots[joint.name].stop)
                q_gap[block] = min(np.max(np.abs(q[block] - read_q[block])), np.max(np.abs(q[block] + read_q[block])))
        for name, given, read, gap, slots in (("q", q, read_q, q_gap, self._q_slots),
                                              ("v", v, read_v, np.abs(v - read_v), self._v_slots)):
            bad = [joint for joint in self.joint_names if np.max(gap[slots[joint]], initial=0.0)
                   > CONSISTENCY_TOL * max(1.0, float(np.max(np.abs(given), initial=0.0)))]
            if bad:
                raise ValueError(f"{name} of joint {bad[0]!r} cannot be reached from the tree of joints: a closed "
                                 f"loop or mimic sets it to {read[slots[bad[0]]]}, not {given[slots[bad[0]]]}")

    def _compiled(self, name: str) -> Callable[..., jax.Array]:
        """A compiled form of a kinematic function (eager JAX would dispatch it operation by operation)."""
        cache: dict[str, Callable[..., jax.Array]] = self.__dict__.setdefault("_jitted", {})
        if name not in cache:
            functions: dict[str, Callable[..., jax.Array]] = {
                "constraint_jacobian": functools.partial(trivialised_jacobian, self.group, self.constraint_rows),
                "positions_at_nodes": jax.vmap(self.positions),
                "velocities_at_nodes": jax.vmap(self.velocities)}
            function = functions.get(name) or getattr(self, name)
            cache[name] = jax.jit(function)
        return cache[name]

    @functools.cached_property
    def _size(self) -> float:
        """A length of the mechanism, the scale of its position rows."""
        offsets = [np.linalg.norm(j.origin[:3, 3]) for j in self.joints] + [np.linalg.norm(b.com) for b in self.bodies]
        return float(max(offsets, default=1.0))

    def _independent_rows(self, g0: Configuration) -> tuple[int, ...]:
        """The rows of Φ kept: all of the tree's joints, then each loop or mimic row that is not in
        the span of those before it at g0."""
        B = np.asarray(self._compiled("constraint_jacobian")(g0))
        tree = {j.name for j in self.tree_joints}
        kept = [k for k in range(self._joint_rows) if self.row_joints[k] in tree]
        basis = np.linalg.qr(B[kept].T)[0] if kept else np.zeros((B.shape[1], 0))
        for k in range(len(self.row_joints)):
            if k in kept:
                continue
            rest = B[k] - basis @ (basis.T @ B[k])
            if np.linalg.norm(rest) > REDUNDANCY_TOL * max(float(np.linalg.norm(B[k])), 1e-300):
                kept.append(k)
                basis = np.column_stack([basis, rest / np.linalg.norm(rest)])
        return tuple(sorted(kept))

    def _constraint(self, rows: tuple[int, ...]) -> HolonomicConstraint[Configuration]:
        """Φ restricted to ``rows`` (one object per selection, so that compiled steps are reused)."""
        if rows not in self._constraints:
            selected = np.array(rows)
            self._constraints[rows] = HolonomicConstraint(lambda g: _take(self.constraint_rows(g), selected))
        return self._constraints[rows]

    def joint_positions(self, sol: Solution[Any]) -> NDArray[np.float64]:
        """q at every stored node, shape (nodes, nq); revolute angles unwrapped along the nodes."""
        q = np.array(self._compiled("positions_at_nodes")(sol.g))
        q[:, self._angular_mask] = np.unwrap(q[:, self._angular_mask], axis=0)
        return q

    def joint_velocities(self, sol: Solution[Any]) -> NDArray[np.float64]:
        """v at every stored node, shape (nodes, nv)."""
        return np.asarray(self._compiled("velocities_at_nodes")(sol.g, jnp.asarray(sol.eta)))

    @functools.cached_property
    def _angular_mask(self) -> NDArray[np.bool_]:
        """Which joint positions are angles (of revolute, universal and planar joints)."""
        mask = np.zeros(self.nq, dtype=bool)
        for joint in self.joints:
            if joint.name in self._q_slots and joint.kind in ("revolute", "universal", "planar"):
                slot = self._q_slots[joint.name]
                mask[slot.stop - 1 if joint.kind == "planar" else slot] = True
        return mask

    def joint_wrenches(self, problem: Problem[Configuration], sol: Solution[Any]) -> dict[str, NDArray[np.float64]]:
        """What each joint exerts on its child at every node: (nodes, 6) arrays of the force in space
        and the torque about the joint frame's origin in space, by joint name.

        They come from the multipliers ``sol.lam`` of the constraint forces Bᵀλ (each joint's rows,
        restricted to its child's coordinates: a torque about the child's centre of mass in its own
        axes and a force in space, then moved to the joint's origin). Where a loop's rows were dropped
        as redundant, the rows kept carry the loop's force."""
        rows = next((rows for rows, constraint in self._constraints.items() if constraint is problem.holonomic), None)
        if rows is None or sol.lam is None:
            raise ValueError("problem must come from this model's problem() and carry its joints, and sol must be "
                             "its solution (with multipliers)")
        selected = np.array(rows)
        owners = [self.row_joints[r] for r in rows]
        masks = np.array([[owner == joint.name for owner in owners] for joint in self.joints], dtype=np.float64)
        parent = np.array([self._index[j.parent] for j in self.joints])
        child = np.array([self._index[j.child] for j in self.joints]) - 1
        origin = np.array([j.origin[:3, 3] for j in self.joints])

        def at_node(g: Configuration, lam: jax.Array) -> jax.Array:
            forces = jax.vmap(lambda mask: trivialised_vjp(
                self.group, lambda x: self.constraint_rows(x)[selected], g, lam * mask))(jnp.asarray(masks))
            parts = forces.reshape(len(self.joints), 2, len(self.bodies), 3)[np.arange(len(self.joints)), :, child]
            R, p = self.link_poses(g)
            joint_origin = p[parent] + apply(R[parent], jnp.asarray(origin))
            centre = jnp.asarray(g[1]).reshape(-1, 3)[child]
            torque = apply(jnp.asarray(g[0])[child], parts[:, 0]) + cross(centre - joint_origin, parts[:, 1])
            return jnp.concatenate([parts[:, 1], torque], axis=-1)

        wrenches = np.asarray(jax.jit(jax.vmap(at_node))(sol.g, jnp.asarray(sol.lam)))
        return {joint.name: wrenches[:, k] for k, joint in enumerate(self.joints)}

    @staticmethod
    def _checked(values: object, n: int, name: str) -> Vector:
        arr = np.asarray(values, dtype=np.float64)
        if arr.shape != (n,):
            raise ValueError(f"{name} must have length {n} (the joints' {'positions' if name == 'q' else 'rates'} in "
                             f"the order of joint_names), got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite")
        return arr


def _relative_velocity(batch: _KindBatch, R: jax.Array, omega: jax.Array, v: jax.Array,
                       R_rel: jax.Array, p_rel: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(ω_rel, ṗ_rel) of the module docstring of ``joint_kinds``, from the bodies' rotations R,
    angular velocities ω (own axes) and centre-of-mass velocities v (world first, at rest), and the
    joints' relative poses: ω_rel = R_coᵀω_c − R_relᵀ R_oᵀ ω_p, ṗ_rel = R_jᵀ(ṗ_c' − ṗ_j) − ω_j × p_rel,
    with R_co, p_co the joint frame in the child's frame and ṗ_c' = v_c + R_c (ω_c × (p_co − c_c))
    its origin's velocity."""
    Rp, Rc = _take(R, batch.parent), _take(R, batch.child)
    omega_p, omega_c = _take(omega, batch.parent), _take(omega, batch.child)
    R_joint = _rotated(Rp, batch.R_origin)
    omega_joint = _unrotated(batch.R_origin, omega_p)
    omega_rel = _unrotated(batch.R_child_origin, omega_c) - apply_transposed(R_rel, omega_joint)
    child_lever = jnp.asarray(batch.p_child_origin - batch.child_com)
    child_origin = _take(v, batch.child) + apply(Rc, cross(omega_c, child_lever))
    lever = jnp.asarray(batch.p_origin - batch.parent_com)
    joint_origin = _take(v, batch.parent) + apply(Rp, cross(omega_p, lever))
    p_dot = apply_transposed(R_joint, child_origin - joint_origin) - cross(omega_joint, p_rel)
    return omega_rel, p_dot


@functools.cache
def _joint_motion(kind: str) -> Callable[..., tuple[jax.Array, ...]]:
    """(q, v, a, b₁, b₂) ↦ (R_rel, p_rel, ω_rel, ṗ_rel) of joints of ``kind``, compiled."""
    spec = KINDS[kind]

    def motion(q: jax.Array, v: jax.Array, a: jax.Array, b1: jax.Array, b2: jax.Array) -> tuple[jax.Array, ...]:
        frames = Frames(a, b1, b2)
        return (*spec.placement(q, frames), *spec.motion(q, v, frames))

    return jax.jit(motion)


def _require_unique(names: list[str], what: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"two {what}s are named {name!r}" + (" (the world's name is reserved)"
                                                                  if name == WORLD else ""))
        seen.add(name)


def _slots(sizes: list[tuple[str, int]]) -> dict[str, slice]:
    slots, start = {}, 0
    for name, size in sizes:
        slots[name] = slice(start, start + size)
        start += size
    return slots


def _spanning_tree(bodies: Sequence[Body], joints: Sequence[Joint]) -> tuple[Joint, ...]:
    """The joints that reach each body from the world (breadth first, in the order given), in an
    order where a parent is placed before its children; ValueError for a body that no joint reaches."""
    reached, tree = {WORLD}, []
    frontier = [WORLD]
    while frontier:
        nxt = []
        for name in frontier:
            for joint in joints:
                if joint.parent == name and joint.child not in reached:
                    reached.add(joint.child)
                    tree.append(joint)
                    nxt.append(joint.child)
        frontier = nxt
    missing = [b.name for b in bodies if b.name not in reached]
    if missing:
        raise ValueError(f"body {missing[0]!r} is not connected to the world by joints (from parent to child); "
                         f"give a floating body a 'free' joint to the world")
    return tuple(tree)
