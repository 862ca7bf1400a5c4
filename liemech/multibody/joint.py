"""A joint between two bodies of a mechanism (or a body and the world)."""

from dataclasses import dataclass, field

import numpy as np

from liemech.input_checks import as_float_array, checked_real, checked_vector, expect_finite, expect_shape
from liemech.multibody.joint_kinds import KINDS, JointKind
from liemech.types import Matrix, Vector

WORLD = "world"
"""The name of the fixed frame a joint's ``parent`` may name."""

ALIASES = {"continuous": "revolute", "floating": "free"}
"""URDF's names of kinds liemech knows by another name."""


def pose(xyz: Vector | tuple[float, float, float] = (0.0, 0.0, 0.0),
         rpy: Vector | tuple[float, float, float] = (0.0, 0.0, 0.0)) -> Matrix:
    """The 4 × 4 homogeneous pose of a URDF ``<origin xyz rpy>``: R = R_z(yaw) R_y(pitch) R_x(roll)."""
    x = checked_vector(xyz, 3, "xyz")
    roll, pitch, yaw = checked_vector(rpy, 3, "rpy")
    cr, sr, cp, sp, cy, sy = np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch), np.cos(yaw), np.sin(yaw)
    T = np.eye(4)
    T[:3, :3] = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]]) @ np.array(
        [[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]]) @ np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    T[:3, 3] = x
    return T


@dataclass(frozen=True, eq=False)
class Joint:
    """A joint ``name`` of ``kind`` between the bodies named ``parent`` (or "world") and ``child``.

    ``origin`` is the 4 × 4 pose of the joint frame in the parent's frame (``pose(xyz, rpy)``) and
    ``child_origin`` its pose in the child's frame (the identity in URDF: the child's frame is the
    joint frame; elsewhere where a loop closes); at zero joint position the two coincide. ``axis`` (joint axes) is the axis of a
    revolute, prismatic or universal joint (its first axis) and the normal of a planar one;
    ``axis2`` a universal joint's second axis (in the child's frame, ⟂ ``axis``). Kinds:
    "revolute" (URDF "continuous" too), "prismatic", "fixed", "spherical", "universal", "planar",
    "free" (URDF "floating").

    A one-degree-of-freedom joint may carry a spring τ = −``stiffness`` (q − ``rest``) (for a revolute
    joint q − rest taken in (−π, π], so that the spring pulls the short way round), viscous
    ``damping`` τ = −c q̇ (a URDF ``<dynamics damping>``), reported ``limits`` (lower, upper) that
    are not enforced, and ``mimic`` = (leader, multiplier, offset): the holonomic constraint
    q = multiplier · q_leader + offset (a URDF ``<mimic>``).
    """

    name: str
    kind: str
    parent: str
    child: str
    origin: Matrix = field(default_factory=lambda: np.eye(4))
    child_origin: Matrix = field(default_factory=lambda: np.eye(4))
    axis: Vector = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    axis2: Vector | None = None
    damping: float = 0.0
    stiffness: float = 0.0
    rest: float = 0.0
    limits: tuple[float, float] | None = None
    mimic: tuple[str, float, float] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a joint's name must be a non-empty string, got {self.name!r}")
        kind = ALIASES.get(self.kind, self.kind)
        if kind not in KINDS:
            raise ValueError(f"joint {self.name!r}: kind must be one of {sorted([*KINDS, *ALIASES])}, "
                             f"got {self.kind!r}")
        object.__setattr__(self, "kind", kind)
        for name in ("origin", "child_origin"):
            object.__setattr__(self, name, _rigid_motion(getattr(self, name), f"joint {self.name!r}: {name}"))
        object.__setattr__(self, "axis", _unit(self.axis, f"joint {self.name!r}: axis"))
        if kind == "universal":
            if self.axis2 is None:
                raise ValueError(f"joint {self.name!r}: a universal joint needs axis2")
            second = _unit(self.axis2, f"joint {self.name!r}: axis2")
            if abs(second @ self.axis) > 1e-9:
                raise ValueError(f"joint {self.name!r}: axis2 must be perpendicular to axis, got "
                                 f"⟨axis, axis2⟩ = {second @ self.axis:.3g}")
            object.__setattr__(self, "axis2", second)
        for name in ("damping", "stiffness"):
            object.__setattr__(self, name, checked_real(getattr(self, name), f"joint {self.name!r}: {name}", 0.0,
                                                        open_low=False))
        object.__setattr__(self, "rest", checked_real(self.rest, f"joint {self.name!r}: rest"))
        one_dof = self.spec.nv == 1
        if not one_dof and (self.damping or self.stiffness or self.mimic is not None):
            raise ValueError(f"joint {self.name!r}: damping, stiffness and mimic are for joints with one degree "
                             f"of freedom, not {kind!r}")

    @property
    def spec(self) -> JointKind:
        """The formulas of the joint's kind."""
        return KINDS[self.kind]

    def frame(self) -> tuple[Vector, Vector, Vector]:
        """(a, b₁, b₂): the axis, a unit b₁ ⟂ a (a universal joint's axis2, else a × e_k normalised for
        the coordinate axis e_k least aligned with a) and b₂ = a × b₁."""
        a = self.axis
        if self.axis2 is not None:
            b1 = self.axis2
        else:
            helper = np.eye(3)[int(np.argmin(np.abs(a)))]
            b1 = np.cross(a, helper)
            b1 = b1 / np.linalg.norm(b1)
        return a, b1, np.asarray(np.cross(a, b1), dtype=np.float64)


def _rigid_motion(T: object, name: str) -> Matrix:
    pose = as_float_array(T, name)
    expect_shape(pose, (4, 4), name)
    expect_finite(pose, name)
    R = pose[:3, :3]
    if not (np.allclose(R.T @ R, np.eye(3), atol=1e-9) and np.linalg.det(R) > 0
            and np.array_equal(pose[3], [0.0, 0.0, 0.0, 1.0])):
        raise ValueError(f"{name} must be a rigid motion (a rotation and a translation in homogeneous form)")
    return pose


def _unit(axis: object, name: str) -> Vector:
    a = checked_vector(axis, 3, name)
    norm = float(np.linalg.norm(a))
    if not norm > 1e-12:
        raise ValueError(f"{name} must be a nonzero vector, got {a.tolist()}")
    return a / norm
