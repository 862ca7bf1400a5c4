"""Models from URDF robot descriptions, parsed by ``yourdfpy``.

The URDF's root link is the world (fixed in space) unless ``free_base`` puts a free joint between
them. Links tied by ``fixed`` joints are lumped into one body, their masses and inertias combined
about the common centre of mass (as pinocchio's URDF reader does), so that a model has one body per
link that moves. ``revolute``, ``continuous``, ``prismatic``, ``fixed`` and ``floating`` joints are
read with their ``<dynamics damping>`` (viscous, on the joint's rate), ``<limit>`` (reported in
``Model.limits``, not enforced) and ``<mimic>`` (a holonomic constraint between joint positions).
"""

import os
from collections.abc import Mapping, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np

from liemech.multibody.body import Body
from liemech.multibody.joint import WORLD, Joint
from liemech.multibody.joint_kinds import rotation_about
from liemech.multibody.model import GRAVITY, Actuation, Model
from liemech.types import Matrix, Vector

SUPPORTED = ("revolute", "continuous", "prismatic", "fixed", "floating")


class _Rigid:
    """Mass, centre of mass and inertia (about it) of lumped links, in the frame of their body."""

    def __init__(self) -> None:
        self.mass, self.first_moment, self.second_moment = 0.0, np.zeros(3), np.zeros((3, 3))

    def add(self, mass: float, com: Vector, inertia: Matrix) -> None:
        """Add a link: its inertia about its centre of mass is shifted to the body's origin
        (parallel axes, J_o = J_c + m(|c|²I − ccᵀ))."""
        self.mass += mass
        self.first_moment += mass * com
        self.second_moment += inertia + mass * (com @ com * np.eye(3) - np.outer(com, com))

    def body(self, name: str) -> Body:
        if not self.mass > 0.0:
            raise ValueError(f"link {name!r} moves but has no mass (with the links fixed to it): a moving body "
                             f"needs a positive mass and inertia")
        com = self.first_moment / self.mass
        inertia = self.second_moment - self.mass * (com @ com * np.eye(3) - np.outer(com, com))
        return Body(name, self.mass, inertia, com)


def from_urdf(path: str | os.PathLike[str], gravity: Sequence[float] = GRAVITY, free_base: bool = False,
              actuation: Actuation | None = None, locked: Mapping[str, float] | None = None) -> Model:
    """The ``Model`` of the URDF file at ``path`` (module docstring). ``joint_names`` are the URDF's
    movable joints in the file's order (a floating joint has 7 positions (x, y, z, qx, qy, qz, qw)
    and 6 rates, the others one). ``locked`` maps joints to positions at which they are fixed (a
    gripper's fingers), like pinocchio's reduced models; they leave ``joint_names``."""
    try:
        import yourdfpy  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ImportError("from_urdf reads URDF with yourdfpy: pip install 'liemech[urdf]'") from exc

    robot = _parsed(yourdfpy, os.fspath(path))
    locked = dict(locked or {})
    links = {link.name: link for link in robot.links}
    unknown = sorted(set(locked) - {joint.name for joint in robot.joints if joint.type in ("revolute", "continuous",
                                                                                        "prismatic")})
    if unknown:
        raise ValueError(f"locked names {unknown}, which are no revolute, continuous or prismatic joints of {path}")
    for joint in robot.joints:
        if joint.type not in SUPPORTED:
            raise ValueError(f"{path}: joint {joint.name!r} has type {joint.type!r}; liemech reads {SUPPORTED}")
        for end in (joint.parent, joint.child):
            if end not in links:
                raise ValueError(f"{path}: joint {joint.name!r} names the link {end!r}, which the file does not define")
    children = {joint.child for joint in robot.joints}
    roots = [name for name in links if name not in children]
    if len(roots) != 1:
        raise ValueError(f"{path}: the links must form one tree with one root, found roots {roots}")
    root = roots[0]
    # Each link's body (the nearest link up the tree reached by a moving joint; None for the world)
    # and its pose in that body's frame.
    owner: dict[str, str | None] = {root: None if not free_base else root}
    placement: dict[str, Matrix] = {root: np.eye(4)}
    order = [root]
    for name in order:
        for joint in robot.joints:
            if joint.parent == name:
                fixed = joint.type == "fixed" or joint.name in locked
                owner[joint.child] = owner[name] if fixed else joint.child
                placement[joint.child] = placement[name] @ _origin(joint) @ _motion(joint, locked.get(joint.name, 0.0)) \
                    if fixed else np.eye(4)
                order.append(joint.child)
    rigid: dict[str, _Rigid] = {}
    for name in order:
        inertial = links[name].inertial
        body = owner[name]
        if body is None:
            continue
        if inertial is None:
            rigid.setdefault(body, _Rigid())
            continue
        T = placement[name] @ np.asarray(inertial.origin if inertial.origin is not None else np.eye(4))
        R = T[:3, :3]
        rigid.setdefault(body, _Rigid()).add(float(inertial.mass), T[:3, 3],
                                                    R @ np.asarray(inertial.inertia, dtype=float) @ R.T)
    bodies = [rigid[name].body(name) for name in order if owner[name] == name]
    if not bodies:
        raise ValueError(f"{path}: no link moves (every joint is fixed or locked)")
    joints = [Joint(f"{root}_free", "free", WORLD, root)] if free_base else []
    for joint in robot.joints:
        if joint.type == "fixed" or joint.name in locked:
            continue
        if joint.mimic is not None and joint.mimic.joint in locked:
            raise ValueError(f"joint {joint.name!r} mimics the locked joint {joint.mimic.joint!r}: lock both")
        joints.append(Joint(
            joint.name, joint.type, owner[joint.parent] or WORLD, joint.child,
            origin=placement[joint.parent] @ _origin(joint),
            axis=np.asarray(joint.axis if joint.axis is not None else [1.0, 0.0, 0.0], dtype=float),
            damping=float(joint.dynamics.damping or 0.0) if joint.dynamics is not None else 0.0,
            limits=_limits(joint),
            mimic=None if joint.mimic is None else (joint.mimic.joint, float(joint.mimic.multiplier or 1.0),
                                                    float(joint.mimic.offset or 0.0))))
    return Model(bodies, joints, gravity, actuation)


def _parsed(yourdfpy: Any, path: str) -> Any:
    """The URDF's robot description, or ValueError naming the file."""
    if not os.path.isfile(path):
        raise ValueError(f"path {path!r} is no URDF file: it does not exist")
    try:
        urdf = yourdfpy.URDF.load(path, build_scene_graph=False, build_collision_scene_graph=False,
                                  load_meshes=False, load_collision_meshes=False)
    except Exception as exc:  # the parser's own errors are of many kinds (XML, schema, values)
        raise ValueError(f"{path}: not a readable URDF file ({type(exc).__name__}: {exc})") from exc
    return urdf.robot


def _origin(joint: Any) -> Matrix:
    return np.asarray(joint.origin if joint.origin is not None else np.eye(4), dtype=float)


def _motion(joint: Any, q: float) -> Matrix:
    """The pose of a locked joint at position q in its joint frame."""
    T = np.eye(4)
    if joint.type == "fixed":
        return T
    axis = Joint(joint.name, joint.type, WORLD, joint.child,
                 axis=np.asarray(joint.axis if joint.axis is not None else [1.0, 0.0, 0.0], dtype=float)).axis
    if joint.type == "prismatic":
        T[:3, 3] = q * axis
    else:
        T[:3, :3] = np.asarray(rotation_about(jnp.asarray(axis)[None], jnp.asarray([q]))[0])
    return T


def _limits(joint: Any) -> tuple[float, float] | None:
    limit = joint.limit
    if joint.type == "continuous" or limit is None or limit.lower is None or limit.upper is None:
        return None
    return float(limit.lower), float(limit.upper)
