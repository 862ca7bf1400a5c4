"""A smooth, strictly convex rigid body rolling without slipping on a plane, on SO(3) × R³: an
ellipsoid, an egg, a rattleback, on the horizontal plane z = 0 (the default), an inclined plane
or a turntable (``Plane``).

The surface is given by its **support function** in the body frame, h(u) = max over the body of
u·y: positively homogeneous of degree one and convex, and smooth away from 0 for a smooth, strictly
convex body. The surface point whose outward normal is u is ∇h(u). For an ellipsoid with semi-axes
(a, b, c) along the body axes, centred at the body origin, A = diag(a, b, c):
h(u) = |A u| and ∇h(u) = A²u/|A u| (the closed-form support map).

Configuration (R, x): the attitude and the centre of mass; body velocity (Ω, v = ẋ), Ω the body
angular velocity. The plane passes through the origin with unit normal n (e_z by default) and
spins at the constant rate Ω_t about the axis n through the origin (0 by default); t₁, t₂ is a
fixed orthonormal basis of it (``Plane.tangents``). Gravity is −g e_z in space. With c the centre of
mass in the body frame and d = −Rᵀn the direction towards the plane in the body frame, the lowest
point of the body (along −n) is ∇h(d), at ρ = R(∇h(d) − c) from the centre of mass, and in space at
p_c = x + ρ:

    ℓ = ½ Ωᵀ𝕀Ω + ½ m |v|² − m g x_z                  (𝕀 about the centre of mass, body frame),
    Φ(R, x) = n·x − h(d) + d·c                         (holonomic: the lowest point is on the plane),
    φ(R, x, Ω, v) = tᵢ·[v + R(Ω × (∇h(d) − c)) − Ω_t n × p_c],  i = 1, 2
                                                       (nonholonomic: the material contact point
                                                        moves with the table, at rest if Ω_t = 0).

Φ = n·(x + ρ) because d·∇h(d) = h(d) (Euler's relation). The normal component of the contact
velocity is dΦ/dt (∇²h(d) d = 0, again by homogeneity, and n·(n × p_c) = 0), so only the two
tangential components are nonholonomic constraints. The table's velocity field Ω_t n × p does not
depend on time, so neither do the constraints. Every derivative the schemes need (∇h, ∇²h, ∇³h
inside the constraint Jacobians and the Newton matrix) comes from automatic differentiation of h
(or of ∇h where it is given in closed form, as for the ellipsoid).

The rattleback (``RollingBody.rattleback``) is an ellipsoid whose principal axes of inertia are
turned about the body's vertical axis by a small angle δ against the axes of the surface, with the
parameters of Kane & Levinson (1982), "Realistic mathematical modeling of the rattleback",
Int. J. Non-Linear Mech. 17, 175–186.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from liemech.groups.so3 import SO3, cross
from liemech.input_checks import as_float_array, checked_real, checked_vector
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.nonholonomic import NonholonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.owned_compilation import OwnsCompiledCode, owned_jit
from liemech.run.solution import Solution
from liemech.systems.body_on_plane import Pose, RollsOnThePlane, energy
from liemech.systems.built_once import built_once
from liemech.systems.rolling_plane import HORIZONTAL, Plane
from liemech.systems.rolling_reference import RollingTrajectory, rolling_reference
from liemech.types import Matrix, Vector

SupportFunction: TypeAlias = Callable[[jax.Array], jax.Array]
"""u ↦ h(u), the support function of the body in the body frame, written with ``jax.numpy``."""
SupportMap: TypeAlias = Callable[[jax.Array], jax.Array]
"""u ↦ ∇h(u), the surface point with outward normal u (body frame), written with ``jax.numpy``."""

# Kane & Levinson (1982), per unit mass in cm² and cm, here in SI for m = 1 kg: semi-axes
# (20, 3, 2) cm, the centre of mass 1 cm below the centre of the ellipsoid, inertia about the
# centre of mass [[A, D, 0], [D, B, 0], [0, 0, C]] with A = 2, B = 16, C = 17, D = −0.2 (cm²).
KANE_LEVINSON_SEMI_AXES = (0.20, 0.03, 0.02)
KANE_LEVINSON_COM_DEPTH = 0.01
_KL_A, _KL_B, _KL_C, _KL_D = 2e-4, 16e-4, 17e-4, -2e-5
_KL_HALF_SPREAD = math.hypot(0.5 * (_KL_B - _KL_A), _KL_D)
KANE_LEVINSON_PRINCIPAL_MOMENTS = (0.5 * (_KL_A + _KL_B) - _KL_HALF_SPREAD, 0.5 * (_KL_A + _KL_B) + _KL_HALF_SPREAD,
                                   _KL_C)
"""(I₁, I₂, I₃) ≈ (1.99714e-4, 1.600286e-3, 1.7e-3) kg m²: the eigenvalues of Kane & Levinson's inertia."""
KANE_LEVINSON_MISALIGNMENT = 0.5 * math.asin(2.0 * _KL_D / (KANE_LEVINSON_PRINCIPAL_MOMENTS[0]
                                                            - KANE_LEVINSON_PRINCIPAL_MOMENTS[1]))
"""δ ≈ 0.0142818 rad (0.818°, tan 2δ = 2D/(A − B)): R_z(δ) diag(I₁, I₂, I₃) R_z(δ)ᵀ is Kane & Levinson's inertia."""


@dataclass(frozen=True, eq=False)
class EllipsoidSupport:
    """h(u) = |A u|, A = diag(a, b, c): the support function of the ellipsoid
    (x/a)² + (y/b)² + (z/c)² ≤ 1 (a module-level class, so that bodies pickle)."""

    semi_axes: tuple[float, float, float]

    def __call__(self, u: jax.Array) -> jax.Array:
        return jnp.sqrt(jnp.sum(jnp.asarray(self.semi_axes) ** 2 * u * u))


@dataclass(frozen=True, eq=False)
class EllipsoidSupportMap:
    """∇h(u) = A²u/|A u|: the point of the ellipsoid whose outward normal is u (the closed-form
    support map)."""

    semi_axes: tuple[float, float, float]

    def __call__(self, u: jax.Array) -> jax.Array:
        squares = jnp.asarray(self.semi_axes) ** 2
        return squares * u / jnp.sqrt(jnp.sum(squares * u * u))


def _checked_inertia(value: object, name: str) -> Matrix:
    """A symmetric positive definite 3×3 inertia whose principal moments satisfy the triangle
    inequality I_i ≤ I_j + I_k (that of a mass distribution), else ValueError naming ``name``."""
    inertia = as_float_array(value, name)
    if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
        raise ValueError(f"{name} must be a finite 3×3 matrix, got shape {inertia.shape}")
    scale = max(float(np.max(np.abs(inertia))), 1e-300)
    if np.max(np.abs(inertia - inertia.T)) > 1e-12 * scale:
        raise ValueError(f"{name} must be symmetric, got {inertia.tolist()}")
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    if moments[0] <= 1e-12 * scale:
        raise ValueError(f"{name} must be positive definite, got principal moments {moments.tolist()}")
    if moments[2] > (moments[0] + moments[1]) * (1.0 + 1e-12):
        raise ValueError(f"{name} violates the triangle inequality of a rigid body, I₃ ≤ I₁ + I₂: principal "
                         f"moments {moments.tolist()}")
    return 0.5 * (inertia + inertia.T)


def _sphere_directions(n: int = 2000) -> Matrix:
    """n nearly uniform unit vectors (a Fibonacci lattice)."""
    k = np.arange(n) + 0.5
    z = 1.0 - 2.0 * k / n
    angle = math.pi * (3.0 - math.sqrt(5.0)) * k
    s = np.sqrt(1.0 - z * z)
    return np.stack([s * np.cos(angle), s * np.sin(angle), z], axis=1)


@dataclass(frozen=True, eq=False)
class RollingBody(OwnsCompiledCode, RollsOnThePlane):
    """A convex body with support function ``support`` (module docstring), mass m, inertia
    ``body_inertia`` (3×3 about the centre of mass, body frame, symmetric positive definite, its
    principal moments satisfying the triangle inequality), centre of mass ``com`` (body frame,
    strictly inside the body), under gravity g (−g e_z in space), rolling on ``plane`` (the still
    plane z = 0 by default; ``Plane(normal, spin)`` for an inclined plane or a turntable). Build
    ellipsoids with ``RollingBody.ellipsoid`` and Kane & Levinson's rattleback with
    ``RollingBody.rattleback``. ``support_map`` is ∇h, the surface point with outward normal u,
    when it has a closed form (None: ``jax.grad(support)``; given, it is checked against autodiff);
    the constraints' derivatives come from autodiff either way, and the closed form only makes them
    quicker to compile.

    The support function must be smooth and strictly convex away from 0 (a smooth, strictly convex
    surface); liemech checks that it is finite and that the centre of mass lies inside the body
    (h(u) > u·c) over 2000 directions, and ``problem`` checks that the surface is strictly curved
    at the initial contact."""

    support: SupportFunction
    mass: float
    body_inertia: Matrix
    com: Vector
    gravity: float = 9.81
    support_map: SupportMap | None = None
    plane: Plane = HORIZONTAL

    def __post_init__(self) -> None:
        if not callable(self.support):
            raise TypeError(f"support must be a function u -> h(u), got {type(self.support).__name__}")
        if not isinstance(self.plane, Plane):
            raise TypeError(f"plane must be a Plane (liemech.systems.Plane), got {type(self.plane).__name__}")
        object.__setattr__(self, "mass", checked_real(self.mass, "mass", 0.0))
        object.__setattr__(self, "gravity", checked_real(self.gravity, "gravity"))
        object.__setattr__(self, "body_inertia", _checked_inertia(self.body_inertia, "body_inertia"))
        object.__setattr__(self, "com", checked_vector(self.com, 3, "com"))
        directions = _sphere_directions()
        heights = np.asarray(jax.vmap(self.support)(jnp.asarray(directions)))
        if heights.shape != (len(directions),) or not np.all(np.isfinite(heights)):
            raise ValueError("support must return a finite number h(u) for every direction u")
        if self.support_map is not None:
            if not callable(self.support_map):
                raise TypeError("support_map must be a function u -> ∇h(u) or None, got "
                                f"{type(self.support_map).__name__}")
            given = np.asarray(jax.vmap(self.support_map)(jnp.asarray(directions[:50])))
            derived = np.asarray(jax.vmap(jax.grad(self.support))(jnp.asarray(directions[:50])))
            scale = float(np.max(heights))
            if given.shape != derived.shape or not np.allclose(given, derived, rtol=1e-10, atol=1e-12 * scale):
                raise ValueError("support_map must be the gradient of support (they disagree)")
        depth = heights - directions @ self.com
        if np.min(depth) <= 0.0:
            worst = directions[np.argmin(depth)].round(3).tolist()
            raise ValueError(f"com must lie inside the body, got {self.com.tolist()} (h(u) − u·com = "
                             f"{float(np.min(depth)):.3g} ≤ 0 for u = {worst})")

    @classmethod
    def ellipsoid(cls, semi_axes: Vector | tuple[float, float, float], mass: float, inertia: Matrix,
                  com: Vector | tuple[float, float, float], *, gravity: float = 9.81,
                  plane: Plane = HORIZONTAL) -> "RollingBody":
        """The ellipsoid (x/a)² + (y/b)² + (z/c)² ≤ 1 in the body frame, ``semi_axes`` = (a, b, c);
        ``inertia`` the 3×3 inertia about the centre of mass in the body frame; ``com`` the centre
        of mass in the body frame (strictly inside: |A⁻¹ com| < 1), rolling on ``plane``."""
        axes = checked_vector(semi_axes, 3, "semi_axes")
        if np.any(axes <= 0.0):
            raise ValueError(f"semi_axes must be positive, got {axes.tolist()}")
        centre = checked_vector(com, 3, "com")
        if float(np.sum((centre / axes) ** 2)) >= 1.0:
            raise ValueError(f"com must lie inside the ellipsoid with semi-axes {axes.tolist()}, got "
                             f"{centre.tolist()} (|A⁻¹ com|² = {float(np.sum((centre / axes) ** 2)):.3g} ≥ 1)")
        a, b, c = (float(v) for v in axes)
        return cls(EllipsoidSupport((a, b, c)), mass, _checked_inertia(inertia, "inertia"), centre, gravity,
                   EllipsoidSupportMap((a, b, c)), plane)

    @classmethod
    def rattleback(cls, misalignment: float = KANE_LEVINSON_MISALIGNMENT, *, gravity: float = 9.81,
                   plane: Plane = HORIZONTAL) -> "RollingBody":
        """Kane & Levinson's (1982) rattleback in SI units: m = 1 kg, semi-axes (0.20, 0.03, 0.02) m,
        the centre of mass 0.01 m below the centre of the ellipsoid, com = (0, 0, −0.01), and the
        inertia R_z(δ) diag(I₁, I₂, I₃) R_z(δ)ᵀ with their principal moments
        (1.99714e-4, 1.600286e-3, 1.7e-3) kg m² turned by δ = ``misalignment`` about the body's
        vertical axis against the surface axes. The default δ ≈ 0.01428 rad is theirs (their
        inertia has the product D = −2e-5 kg m² in the 1–2 entries); −δ is the mirror-image body,
        which reverses the other way. ``plane``: as for ``ellipsoid``."""
        delta = checked_real(misalignment, "misalignment", -0.5 * math.pi, 0.5 * math.pi)
        turn = np.array([[math.cos(delta), -math.sin(delta), 0.0], [math.sin(delta), math.cos(delta), 0.0],
                         [0.0, 0.0, 1.0]])
        inertia = turn @ np.diag(KANE_LEVINSON_PRINCIPAL_MOMENTS) @ turn.T
        return cls.ellipsoid(KANE_LEVINSON_SEMI_AXES, 1.0, inertia, (0.0, 0.0, -KANE_LEVINSON_COM_DEPTH),
                             gravity=gravity, plane=plane)

    def surface_point(self, normal: ArrayLike) -> jax.Array:
        """∇h(u): the surface point whose outward normal is u, body frame (traceable)."""
        u = jnp.asarray(normal, dtype=float)
        return jax.grad(self.support)(u) if self.support_map is None else self.support_map(u)

    def towards_plane(self, R: ArrayLike) -> jax.Array:
        """d = −Rᵀn, the direction towards the plane in the body frame (traceable)."""
        return -jnp.asarray(R).T @ jnp.asarray(self.plane.normal)

    def contact_offset(self, R: ArrayLike) -> jax.Array:
        """∇h(d) − c with d = −Rᵀn: the lowest point relative to the centre of mass, body frame (traceable)."""
        return self.surface_point(self.towards_plane(R)) - jnp.asarray(self.com)

    def height(self, g: Pose) -> jax.Array:
        """Φ = n·x − h(d) + d·c, the height of the lowest point above the plane."""
        down = self.towards_plane(g[0])
        normal = jnp.asarray(self.plane.normal)
        return jnp.atleast_1d(normal @ g[1] - self.support(down) + down @ jnp.asarray(self.com))

    def slip(self, g: Pose, eta: Vector) -> jax.Array:
        """φ = tᵢ·[v + R(Ω × (∇h(d) − c)) − Ω_t n × p_c], i = 1, 2: the tangential velocity of the
        material contact point relative to the plane's material point under it."""
        R, velocity = jnp.asarray(g[0]), jnp.asarray(eta)
        offset = self.contact_offset(R)
        relative = velocity[3:] + R @ jnp.cross(velocity[:3], offset)
        if self.plane.spin != 0.0:     # a still plane skips the table's velocity (and its derivatives)
            relative = relative - jnp.asarray(self.plane.velocity_gradient) @ (jnp.asarray(g[1]) + R @ offset)
        return jnp.asarray(self.plane.tangents) @ relative

    @built_once
    def constraints(self) -> tuple[HolonomicConstraint[Pose], NonholonomicConstraint[Pose]]:
        return HolonomicConstraint(self.height), NonholonomicConstraint(self.slip)

    def problem(self, R0: Matrix, omega0: Vector, at: Vector | tuple[float, float, float] = (0.0, 0.0, 0.0)
                ) -> Problem[Pose]:
        """The body at attitude ``R0`` with body angular velocity ``omega0``, resting on the plane with
        its lowest point (along −n) at the point ``at`` of the plane (the origin by default), so
        x₀ = p − R₀(∇h(d₀) − c), and rolling: the material contact point moves with the plane,
        v₀ = Ω_t n × p − R₀(Ω₀ × (∇h(d₀) − c)) (all three components, so both constraints and the
        velocity form of the holonomic one hold).

        Refused with ValueError naming the argument: ``R0`` not a rotation, ``omega0`` not a finite
        3-vector, ``at`` off the plane, and a surface that is not strictly curved at the initial
        contact (``support``: the principal radii of curvature there, the eigenvalues of ∇²h(d₀) on
        the tangent plane d₀^⊥, must be positive and finite; an edge or a vertex has a zero one)."""
        R = SO3().check_point(R0, "R0")
        omega = checked_vector(omega0, 3, "omega0")
        point = checked_vector(at, 3, "at")
        offset, hessian = (np.asarray(a, dtype=np.float64) for a in _contact_geometry(self, jnp.asarray(R)))
        # the curvature first: on a flat face ∇h is undefined (NaN), and so would be x₀ and v₀
        _check_curved(-R.T @ self.plane.unit_normal, hessian, float(np.linalg.norm(offset)))
        if not self.plane.holds(point, float(np.linalg.norm(offset))):
            raise ValueError(f"at must be a point of the plane n·p = 0 (n = {list(self.plane.normal)}), got "
                             f"{point.tolist()} (n·p = {float(self.plane.unit_normal @ point):.3g})")
        x0 = point - R @ offset
        v0 = self.plane.velocity_gradient @ point - R @ cross(omega, offset)
        holonomic, nonholonomic = self.constraints()
        return Problem(self.system(), (R, x0), np.concatenate([omega, v0]), holonomic=holonomic,
                       nonholonomic=nonholonomic)

    def energy(self, g: Pose, mu: Vector) -> float:
        """H = ½ μᵀ𝕀⁻¹μ + m g x_z: conserved on a plane at rest, inclined or not (the contact force
        does no work on a body that rolls without slipping), but not on a spinning table, whose
        contact force works on the body (the moving plane feeds energy in and takes it out)."""
        return energy(self.inertia, self.mass, self.gravity, g, mu)

    @staticmethod
    def orientation(sol: Solution[Pose]) -> Matrix:
        """R at the stored nodes, shape (nodes, 3, 3)."""
        return np.asarray(sol.g[0], dtype=np.float64)

    @staticmethod
    def angular_velocity(sol: Solution[Pose]) -> Matrix:
        """Ω at the stored nodes, body frame, shape (nodes, 3)."""
        return np.asarray(sol.eta[:, :3], dtype=np.float64)

    @staticmethod
    def vertical_spin(sol: Solution[Pose]) -> Vector:
        """ω_z = e_z·RΩ, the spin about the vertical in space, at the stored nodes (its sign change
        is the rattleback's reversal)."""
        R, omega = np.asarray(sol.g[0]), np.asarray(sol.eta[:, :3])
        spin: Vector = np.einsum("kj,kj->k", R[:, 2, :], omega)
        return spin

    def contact_point(self, sol: Solution[Pose]) -> Matrix:
        """The lowest point p_c = x + R(∇h(d) − c) in space at the stored nodes, shape (nodes, 3) (its
        component n·p_c along the plane's normal is the holonomic constraint Φ, zero to round-off)."""
        R, x = np.asarray(sol.g[0], dtype=np.float64), np.asarray(sol.g[1], dtype=np.float64)
        return x + np.asarray(_spatial_offsets(self, jnp.asarray(R)), dtype=np.float64)

    def contact(self, R: Matrix, omega: Vector) -> tuple[Vector, Vector]:
        """ρ = R(∇h(d) − c) and ρ̇ = ω × ρ + R ∇²h(d) ḋ with ḋ = d × Ω (for ``rolling_reference``;
        ω = RΩ in space)."""
        offset, hessian = (np.asarray(a, dtype=np.float64) for a in _contact_geometry(self, jnp.asarray(R)))
        rho = R @ offset
        return rho, cross(omega, rho) + R @ (hessian @ cross(-R.T @ self.plane.unit_normal, R.T @ omega))

    def reference(self, problem: Problem[Pose], times: Vector) -> RollingTrajectory:
        """The motion from the problem's initial data by DOP853 on the Newton–Euler equations
        (``rolling_reference``). Each right-hand side calls compiled JAX code for the contact
        geometry, whose call costs far more than its arithmetic: fine over a few seconds of smooth
        motion, slow over long, fast-rocking runs such as the rattleback's. On a turntable the
        contact force keeps the material contact point moving with the table, v + ω × ρ = Ω_t n × p_c."""
        (R0, x0), eta0 = problem.g0, problem.eta0
        return rolling_reference(self.mass, self.body_inertia, self.gravity, self.contact, R0, x0, eta0[:3],
                                 eta0[3:], times, table_rate=self.plane.velocity_gradient)


def _spatial_offsets(body: RollingBody, R: jax.Array) -> jax.Array:
    """R(∇h(d) − c) for a stack of attitudes R, compiled once per body and kept on it."""
    def offsets(stack: jax.Array) -> jax.Array:
        spatial: jax.Array = jax.vmap(lambda Rk: Rk @ body.contact_offset(Rk))(stack)
        return spatial

    return owned_jit(body, "spatial offsets", offsets)(R)


def _contact_geometry(body: RollingBody, R: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(∇h(d) − c, ∇²h(d)) at the attitude R (the reference calls it at every right-hand side),
    compiled once per body and kept on it."""
    def geometry(attitude: jax.Array) -> tuple[jax.Array, jax.Array]:
        return body.contact_offset(attitude), jax.jacfwd(body.surface_point)(body.towards_plane(attitude))

    return owned_jit(body, "contact geometry", geometry)(R)


def _check_curved(direction: Vector, hessian: Matrix, size: float) -> None:
    """ValueError naming ``support`` unless the principal radii of curvature at the surface point
    with outward normal u = ``direction`` (unit), the eigenvalues of ∇²h(u) restricted to the
    tangent plane u^⊥ (``hessian`` = ∇²h(u)), are finite and above 1e-9 of the body's size there:
    rolling needs a strictly convex, smooth surface at the contact (an edge has one zero radius, a
    vertex two, a flat face undefined ones: its normal is a kink of h). The radii are those of
    the surface point ∇h(u): ∇²h(u) u = 0 by homogeneity, and on u^⊥ ∇²h(u) is the inverse of the
    Weingarten map (Schneider 2014, "Convex Bodies: The Brunn–Minkowski Theory", 2nd ed., §2.5)."""
    tangent = np.linalg.svd(direction[None, :])[2][1:]          # an orthonormal basis of u^⊥
    restricted = tangent @ hessian @ tangent.T
    radii = (np.linalg.eigvalsh(0.5 * (restricted + restricted.T)) if np.all(np.isfinite(restricted))
             else np.full(2, np.nan))
    if not np.all(np.isfinite(radii)) or float(np.min(radii)) <= 1e-9 * max(size, float(np.max(radii))):
        raise ValueError("support must describe a smooth, strictly convex surface at the initial contact: the "
                         f"principal radii of curvature at the lowest point (direction {direction.round(4).tolist()} "
                         f"in the body frame) are {radii.round(6).tolist()}, which must be positive "
                         "and finite (an edge has a zero radius, a vertex two; on a flat face h is not "
                         "differentiable and they are undefined)")


def first_sign_change(t: Vector, values: Vector) -> float | None:
    """The first time the sampled ``values`` take the sign opposite to that of ``values[0]``, by
    linear interpolation between the two samples around it (None if they never do, or if
    ``values[0]`` is 0): the rattleback's first reversal from ``vertical_spin``."""
    signs = np.sign(values)
    changes = np.nonzero(signs[1:] * signs[0] < 0.0)[0]
    if changes.size == 0:
        return None
    k = int(changes[0])
    return float(t[k] - values[k] * (t[k + 1] - t[k]) / (values[k + 1] - values[k]))
