"""The kinematics of each joint kind, batched over the joints of that kind.

A joint ties a child body's frame (pose R_c, p_c in space) to its joint frame, fixed in the parent
at ``origin`` (R_o, p_o): R_j = R_p R_o, p_j = p_p + R_p p_o. Everything below is a function of the
relative pose

    R_rel = R_jᵀ R_c,    p_rel = R_jᵀ (p_c − p_j),

and of the relative velocity (ω_rel, ṗ_rel) = (vee(R_relᵀ Ṙ_rel), d/dt p_rel): the child's angular
velocity relative to the joint frame in the child's axes, and the velocity of its origin in the
joint frame's axes. Each joint carries an orthonormal frame (a, b₁, b₂) in joint axes: a the axis
(the normal of a planar joint), b₁ ⟂ a (a universal joint's second axis), b₂ = a × b₁.

Per kind: the holonomic constraint rows Φ (zero when the joint holds; the rows of a revolute joint
are p_rel = 0, ⟨a, R_rel b₁⟩ = ⟨a, R_rel b₂⟩ = 0, those of the others likewise), the joint positions
q and rates v read from the relative motion, and the inverse maps q ↦ (R_rel, p_rel) and
(q, v) ↦ (ω_rel, ṗ_rel) that place the bodies from joint coordinates. Quaternions are (x, y, z, w)
and velocities of spherical and free joints are in the child's axes (pinocchio's conventions).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import jax
import jax.numpy as jnp

Array = jax.Array


class Frames:
    """The (a, b₁, b₂) of k joints, each of shape (k, 3)."""

    def __init__(self, a: Array, b1: Array, b2: Array) -> None:
        self.a, self.b1, self.b2 = a, b1, b2


def _dot(u: Array, v: Array) -> Array:
    return jnp.sum(u * v, axis=-1)


# Products of stacks of 3 × 3 blocks (and 3-vectors) as elementwise products and sums, which XLA
# fuses: as batched dots, under a step's vmaps (tangents, stages, joints), it transposes their
# operands around every one.
def apply(R: Array, v: Array) -> Array:
    """R v for stacks R (..., 3, 3), v (..., 3)."""
    return jnp.sum(R * v[..., None, :], axis=-1)


def apply_transposed(R: Array, v: Array) -> Array:
    """Rᵀ v for stacks R (..., 3, 3), v (..., 3)."""
    return jnp.sum(R * v[..., :, None], axis=-2)


def compose(A: Array, B: Array) -> Array:
    """A B for stacks of 3 × 3 matrices."""
    return jnp.sum(A[..., :, :, None] * B[..., None, :, :], axis=-2)


def compose_transposed(A: Array, B: Array) -> Array:
    """Aᵀ B for stacks of 3 × 3 matrices."""
    return jnp.sum(A[..., :, :, None] * B[..., :, None, :], axis=-3)


def cross(u: Array, v: Array) -> Array:
    """u × v for stacks of 3-vectors."""
    return jnp.stack([u[..., 1] * v[..., 2] - u[..., 2] * v[..., 1], u[..., 2] * v[..., 0] - u[..., 0] * v[..., 2],
                      u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]], axis=-1)


def _angle_about(R: Array, axis_b1: Array, axis_b2: Array) -> Array:
    """θ with R b₁ = cos θ b₁ + sin θ b₂ (the rotation angle about a = b₁ × b₂)."""
    Rb1 = apply(R, axis_b1)
    return jnp.arctan2(_dot(axis_b2, Rb1), _dot(axis_b1, Rb1))


def _locked(R: Array) -> Array:
    """The antisymmetric part of R as a vector: zero (with full rank) at R = I."""
    return 0.5 * jnp.stack([R[:, 2, 1] - R[:, 1, 2], R[:, 0, 2] - R[:, 2, 0], R[:, 1, 0] - R[:, 0, 1]], axis=-1)


def rotation_about(axis: Array, angle: Array) -> Array:
    """Rodrigues: the rotations by ``angle`` (k,) about unit ``axis`` (k, 3)."""
    x, y, z = axis[:, 0], axis[:, 1], axis[:, 2]
    zero = jnp.zeros_like(x)
    K = jnp.stack([jnp.stack([zero, -z, y], -1), jnp.stack([z, zero, -x], -1), jnp.stack([-y, x, zero], -1)], -2)
    s, c = jnp.sin(angle)[:, None, None], jnp.cos(angle)[:, None, None]
    return jnp.eye(3) + s * K + (1.0 - c) * compose(K, K)


def quaternion_to_rotation(q: Array) -> Array:
    """The rotation of the unit quaternions q = (x, y, z, w), shape (k, 4)."""
    q = q / jnp.linalg.norm(q, axis=-1, keepdims=True)
    x, y, z, w = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    return jnp.stack([
        jnp.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        jnp.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        jnp.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], -2)


def rotation_to_quaternion(R: Array) -> Array:
    """A unit quaternion (x, y, z, w) with w ≥ 0 of each rotation (k, 3, 3), by the largest of
    w, x, y, z (Shepperd 1978), so that no square root is taken of a small number."""
    trace = R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2]
    candidates = jnp.stack([  # rows: 4w², 4x², 4y², 4z² each times the quaternion, up to scale
        jnp.stack([R[:, 2, 1] - R[:, 1, 2], R[:, 0, 2] - R[:, 2, 0], R[:, 1, 0] - R[:, 0, 1], 1 + trace], -1),
        jnp.stack([1 + R[:, 0, 0] - R[:, 1, 1] - R[:, 2, 2], R[:, 0, 1] + R[:, 1, 0], R[:, 0, 2] + R[:, 2, 0],
                   R[:, 2, 1] - R[:, 1, 2]], -1),
        jnp.stack([R[:, 0, 1] + R[:, 1, 0], 1 - R[:, 0, 0] + R[:, 1, 1] - R[:, 2, 2], R[:, 1, 2] + R[:, 2, 1],
                   R[:, 0, 2] - R[:, 2, 0]], -1),
        jnp.stack([R[:, 0, 2] + R[:, 2, 0], R[:, 1, 2] + R[:, 2, 1], 1 - R[:, 0, 0] - R[:, 1, 1] + R[:, 2, 2],
                   R[:, 1, 0] - R[:, 0, 1]], -1)], 1)
    largest = jnp.argmax(jnp.stack([trace, R[:, 0, 0], R[:, 1, 1], R[:, 2, 2]], -1), axis=-1)
    q = jnp.take_along_axis(candidates, largest[:, None, None], axis=1)[:, 0]
    q = q / jnp.linalg.norm(q, axis=-1, keepdims=True)
    return jnp.asarray(q * jnp.where(q[:, 3:] < 0, -1.0, 1.0))


@dataclass(frozen=True)
class JointKind:
    """The formulas of one kind of joint (module docstring); every function is batched over joints."""

    name: str
    n_constraints: int
    nq: int
    nv: int
    constraint: Callable[[Array, Array, Frames], Array]
    position: Callable[[Array, Array, Frames], Array]
    velocity: Callable[[Array, Array, Array, Array, Frames], Array]
    placement: Callable[[Array, Frames], tuple[Array, Array]]
    motion: Callable[[Array, Array, Frames], tuple[Array, Array]]


def _zeros(k: int, n: int) -> Array:
    return jnp.zeros((k, n))


def _identity(k: int) -> Array:
    return jnp.broadcast_to(jnp.eye(3), (k, 3, 3))


def _revolute_motion(q: Array, v: Array, f: Frames) -> tuple[Array, Array]:
    return f.a * v, jnp.zeros_like(f.a)


REVOLUTE = JointKind(
    "revolute", 5, 1, 1,
    constraint=lambda R, p, f: jnp.concatenate(
        [p, _dot(f.a, apply(R, f.b1))[:, None], _dot(f.a, apply(R, f.b2))[:, None]], axis=-1),
    position=lambda R, p, f: _angle_about(R, f.b1, f.b2)[:, None],
    velocity=lambda R, p, w, pd, f: _dot(f.a, w)[:, None],
    placement=lambda q, f: (rotation_about(f.a, q[:, 0]), jnp.zeros_like(f.a)),
    motion=lambda q, v, f: _revolute_motion(q, v, f),
)

PRISMATIC = JointKind(
    "prismatic", 5, 1, 1,
    constraint=lambda R, p, f: jnp.concatenate([_dot(f.b1, p)[:, None], _dot(f.b2, p)[:, None], _locked(R)], -1),
    position=lambda R, p, f: _dot(f.a, p)[:, None],
    velocity=lambda R, p, w, pd, f: _dot(f.a, pd)[:, None],
    placement=lambda q, f: (_identity(len(q)), f.a * q),
    motion=lambda q, v, f: (jnp.zeros_like(f.a), f.a * v),
)

FIXED = JointKind(
    "fixed", 6, 0, 0,
    constraint=lambda R, p, f: jnp.concatenate([p, _locked(R)], -1),
    position=lambda R, p, f: _zeros(len(p), 0),
    velocity=lambda R, p, w, pd, f: _zeros(len(p), 0),
    placement=lambda q, f: (_identity(len(q)), jnp.zeros((len(q), 3))),
    motion=lambda q, v, f: (jnp.zeros((len(q), 3)), jnp.zeros((len(q), 3))),
)

SPHERICAL = JointKind(
    "spherical", 3, 4, 3,
    constraint=lambda R, p, f: p,
    position=lambda R, p, f: rotation_to_quaternion(R),
    velocity=lambda R, p, w, pd, f: w,
    placement=lambda q, f: (quaternion_to_rotation(q), jnp.zeros((len(q), 3))),
    motion=lambda q, v, f: (v, jnp.zeros_like(v)),
)


def _universal_position(R: Array, f: Frames) -> Array:
    """(θ₁, θ₂) with R = Rot(a, θ₁) Rot(b₁, θ₂): R b₁ = cos θ₁ b₁ + sin θ₁ b₂ and
    Rᵀa = cos θ₂ a + sin θ₂ b₂ (a, b₁ orthonormal, b₂ = a × b₁)."""
    Rb1 = apply(R, f.b1)
    RTa = apply_transposed(R, f.a)
    return jnp.stack([jnp.arctan2(_dot(f.b2, Rb1), _dot(f.b1, Rb1)), jnp.arctan2(_dot(f.b2, RTa), _dot(f.a, RTa))],
                     -1)


UNIVERSAL = JointKind(
    "universal", 4, 2, 2,
    constraint=lambda R, p, f: jnp.concatenate([p, _dot(f.a, apply(R, f.b1))[:, None]], -1),
    position=lambda R, p, f: _universal_position(R, f),
    # ω_rel = Rot(b₁, θ₂)ᵀ a θ̇₁ + b₁ θ̇₂ = Rᵀa θ̇₁ + b₁ θ̇₂, with Rᵀa ⟂ b₁
    velocity=lambda R, p, w, pd, f: jnp.stack([_dot(apply_transposed(R, f.a), w), _dot(f.b1, w)], -1),
    placement=lambda q, f: (compose(rotation_about(f.a, q[:, 0]), rotation_about(f.b1, q[:, 1])), jnp.zeros_like(f.a)),
    motion=lambda q, v, f: (
        apply_transposed(compose(rotation_about(f.a, q[:, 0]), rotation_about(f.b1, q[:, 1])), f.a) * v[:, :1]
        + f.b1 * v[:, 1:], jnp.zeros_like(f.a)),
)

PLANAR = JointKind(
    "planar", 3, 3, 3,
    constraint=lambda R, p, f: jnp.stack([_dot(f.a, p), _dot(f.a, apply(R, f.b1)), _dot(f.a, apply(R, f.b2))], -1),
    position=lambda R, p, f: jnp.stack([_dot(f.b1, p), _dot(f.b2, p), _angle_about(R, f.b1, f.b2)], -1),
    velocity=lambda R, p, w, pd, f: jnp.stack([_dot(f.b1, pd), _dot(f.b2, pd), _dot(f.a, w)], -1),
    placement=lambda q, f: (rotation_about(f.a, q[:, 2]), f.b1 * q[:, :1] + f.b2 * q[:, 1:2]),
    motion=lambda q, v, f: (f.a * v[:, 2:], f.b1 * v[:, :1] + f.b2 * v[:, 1:2]),
)

FREE = JointKind(
    "free", 0, 7, 6,
    constraint=lambda R, p, f: _zeros(len(p), 0),
    position=lambda R, p, f: jnp.concatenate([p, rotation_to_quaternion(R)], -1),
    velocity=lambda R, p, w, pd, f: jnp.concatenate([apply_transposed(R, pd), w], -1),
    placement=lambda q, f: (quaternion_to_rotation(q[:, 3:]), q[:, :3]),
    motion=lambda q, v, f: (v[:, 3:], apply(quaternion_to_rotation(q[:, 3:]), v[:, :3])),
)

KINDS: Final[dict[str, JointKind]] = {kind.name: kind for kind in (
    REVOLUTE, PRISMATIC, FIXED, SPHERICAL, UNIVERSAL, PLANAR, FREE)}
"""Every kind by name; URDF's "continuous" is a revolute joint without limits and "floating" a free one."""
