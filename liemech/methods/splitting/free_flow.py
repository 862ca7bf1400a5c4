"""The flow of the kinetic energy T = ½⟨μ, 𝕀⁻¹μ⟩ alone (the free flow) on each configuration space,
left-trivialised: ġ = g η, μ̇ = ad*_η μ, η = 𝕀⁻¹μ.

- Rⁿ (and its powers): ad = 0, so μ is constant and g ← g + t 𝕀⁻¹μ (a drift), for any constant 𝕀.
- SO(3): ad*_η μ = μ × η (Euler's equations of the free rigid body). Each body's 𝕀 = J is
  taken to its principal axes a_i (J a_i = I_i a_i) and T is split into parts ½⟨μ, C μ⟩ whose flow
  is exact: the angular velocity ω = Cμ stays constant along it, so
      R ← R exp(t ω̂),   μ ← exp(−t ω̂) μ           (the spatial momentum Rμ is unchanged),
  for C = c a_i a_iᵀ (a rotation about a principal axis) and for C = I / I₀ (a spherical part: μ
  constant, R turns about μ). The spherical part commutes with every other (|μ|² is a Casimir).
  With I₁ = I₂ = I₀ (axisymmetric) T = |μ|²/(2I₀) + ½(1/I₃ − 1/I₀)⟨a₃, μ⟩², two commuting parts:
  the free flow is exact, and so it is for a spherical body. With three distinct moments, I₀ the
  intermediate one, a the axis of the largest and b of the smallest,
      T = T_top + T_b,   T_top = |μ|²/(2I₀) + ½(1/I_a − 1/I₀)⟨a, μ⟩²,   T_b = ½(1/I_b − 1/I₀)⟨b, μ⟩²,
  T_top a symmetric top's (exact, as above), and the symmetric splitting
      F(t) = R_b(t/2) ∘ T_top(t) ∘ R_b(t/2),   T_top(t) = S(t) ∘ R_a(t),
  replaces the free flow: symmetric (F(−t) = F(t)⁻¹) and of order 2, which is all the
  compositions need. Dullweber, Leimkuhler & McLachlan 1997 split T into the three ⟨a_i, μ⟩²/(2I_i)
  (R₁R₂R₃R₂R₁); Fassò 2003 compares second-order splittings of the asymmetric rigid body by their
  energy errors, which differ by orders of magnitude. This one's commutators carry the differences
  1/I − 1/I₀ instead of the 1/I themselves, and μ changes along three of its four rotations (the
  spherical one turns R about μ, leaving μ as it is), against five: errors 2–26 times smaller with
  kahan_li8, and a cheaper step (``SYMMETRIC_TOP_AXIS``).
- SE(3), ξ = (v, ω), with 𝕀 = diag(m I₃, J) (the body frame at the centre of mass): ad*_η μ =
  (p_v × ω, p_v × v + p_ω × ω) and p_v × v = 0 for an isotropic mass, so T = |p_v|²/(2m) + T_rot
  splits into two commuting exact parts: the drift x ← x + t R p_v / m (R and μ fixed; the spatial
  momentum R p_v is constant), and the rotations above, which turn p_v with p_ω
  (μ ← (exp(−tω̂) p_v, exp(−tω̂) p_ω)). A coupled 𝕀 (off-diagonal blocks, a body frame away from
  the centre of mass) or an anisotropic mass block has no exact split here and is refused.
- SO(2): so(2) is abelian, ad = 0: μ = Jω is constant and R ← R R(tω) (the angle advances by tω).
- SE(2), ξ = (v₁, v₂, ω), with 𝕀 = diag(m, m, J) (the body frame at the centre of mass): the
  Euler–Poincaré equations μ̇ = ad*_η μ = ad_ηᵀμ read ṗ_v = −ω J₂ p_v (J₂ the rotation by π/2) and
  ṗ_ω = v₂p₁ − v₁p₂ = (p₁p₂ − p₂p₁)/m = 0. So ω is constant, the body momentum p_v turns back
  as the body turns (the spatial momentum R p_v is constant) and the centre moves on a straight
  line: R ← R R(tω), x ← x + t R p_v/m, p_v ← R(−tω) p_v, exactly (a planar free rigid body).
  This is not g₀ exp(tξ₀): the body velocity v = p_v/m turns in the body frame. A coupled 𝕀 or
  an anisotropic mass block (then ṗ_ω ≠ 0) is refused.
- Products and powers: factor by factor (body by body, vectorised over a power group's bodies),
  for an 𝕀 that is block-diagonal over the factors (bodies); the kinetic energies of the factors
  commute.

Every part is the exact flow of a Hamiltonian of μ alone (left-invariant), so it keeps every
spatial momentum map Ad*_{g⁻¹}μ of the left action.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Final, Literal, cast

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.base import LieGroup
from liemech.groups.euclidean import Rn
from liemech.groups.power import PowerGroup
from liemech.groups.product import ProductGroup
from liemech.groups.se2 import SE2
from liemech.groups.se3 import SE3
from liemech.groups.so2 import SO2
from liemech.groups.so3 import SO3, hat3
from liemech.types import Matrix, Vector

EQUAL_MOMENTS: Final = 1e-12
"""Principal moments within this relative distance count as equal (an axisymmetric or spherical
body, whose free flow is then exact)."""

ZERO_BLOCK: Final = 1e-14
"""Entries of 𝕀 below this times max|𝕀| count as zero when its block structure is checked."""

SYMMETRIC_TOP_AXIS: Final[Literal["largest", "smallest"]] = "largest"
"""The axis of the symmetric top in the split of an asymmetric body's free flow (its other two
moments set to the intermediate one): the axis of the largest moment. With kahan_li8
(h = 1/6) and Strang (h = 1/40) on the heavy top for T = 100 with 𝕀 = diag(1, 2, 3.5), (3, 1, 1.5),
(1, 1.2, 5) and (2, 2.6, 3): kahan_li8's energy errors 7.8e-11, 8.8e-11, 2.2e-9, 1.6e-12 (with the
smallest moment's axis 1.3e-10, 9.4e-11, 1.2e-9, 1.7e-12; with Dullweber, Leimkuhler & McLachlan's
R₁R₂R₃R₂R₁ 2.2e-10, 2.1e-10, 2.0e-8, 4.2e-11). Taking the smallest or the largest moment as I₀
instead of the intermediate gives errors 1.4–14 times larger on diag(1, 2, 3.5).
Strang's energy errors, with its own T–V splitting error on top: 2.4e-4, 2.2e-4, 3.9e-4, 1.3e-4
(Dullweber et al.: 2.1e-4, 3.2e-4, 6.5e-4, 4.4e-4)."""


class UnsupportedFreeFlow(Exception):
    """A configuration space or inertia whose free flow this family cannot split exactly; the
    message says why (``Splitting.check`` turns it into TypeError or ValueError)."""

    def __init__(self, message: str, kind: type[Exception]) -> None:
        super().__init__(message)
        self.kind = kind


class FreeFlow(ABC):
    """(g, μ, t) ↦ the flow of T for time t (traceable; t may be negative)."""

    exact: bool
    """True if this is the exact flow of T, False for the symmetric order-2 rigid-body splitting."""

    @abstractmethod
    def __call__(self, g: object, mu: jax.Array, t: jax.Array) -> tuple[object, jax.Array]:
        """The point and momentum after time t."""


class Drift(FreeFlow):
    """g ← g + t 𝕀⁻¹μ, μ unchanged (Rⁿ and its powers, whose point is μ's shape or (N, n))."""

    exact = True

    def __init__(self, inertia: Matrix) -> None:
        diagonal = np.array_equal(inertia, np.diag(np.diag(inertia)))
        self._inverse_diagonal = 1.0 / np.diag(inertia) if diagonal else None
        self._inverse = np.linalg.inv(inertia)

    def __call__(self, g: object, mu: jax.Array, t: jax.Array) -> tuple[object, jax.Array]:
        q = jnp.asarray(g)
        v = mu * self._inverse_diagonal if self._inverse_diagonal is not None else jnp.asarray(self._inverse) @ mu
        return q + t * jnp.reshape(v, q.shape), mu


@dataclass(frozen=True)
class RigidBodySplit:
    """T_rot split into parts T_j = ½ c_j⟨a_j, μ⟩² + ½ s_j|μ|² for one body, applied as the flows of
    the T_j for times f_j t in order: ``axes`` a_j (k, 3), ``rates`` c_j (k,), ``spherical`` s_j
    (k,), ``fractions`` f_j (k,); along each, ω = c_j⟨a_j, μ⟩a_j + s_jμ is constant. ``exact`` if the
    parts commute and sum to T_rot, else the symmetric order-2 splitting."""

    axes: Matrix
    rates: Vector
    spherical: Vector
    fractions: Vector
    exact: bool


_EXACT_FRACTIONS: Final = np.array([1.0, 1.0])
_SPLIT_FRACTIONS: Final = np.array([1.0, 0.5, 1.0, 0.5])


def rigid_body_split(J: Matrix, symmetric_length: bool) -> RigidBodySplit:
    """The split of ½⟨μ, J⁻¹μ⟩ in J's principal axes: exact (spherical: |μ|²/(2I₀); axisymmetric:
    |μ|²/(2I₀) + ½(1/I₃ − 1/I₀)⟨a₃, μ⟩², two commuting parts) or, for three distinct moments,
    S(t) ∘ R_b(t/2) ∘ R_a(t) ∘ R_b(t/2) (module docstring; S commutes with the rest, so it comes
    first). ``symmetric_length`` writes an exact split in the four slots of the other (S, X/2, 0,
    X/2: its parts commute), so that bodies of every kind stack along a power group."""
    moments, principal = np.linalg.eigh(J)
    moments = np.asarray(moments, dtype=np.float64)
    axes = [np.asarray(principal[:, k], dtype=np.float64) for k in range(3)]
    equal = [abs(moments[i] - moments[j]) <= EQUAL_MOMENTS * moments[2] for i, j in ((0, 1), (1, 2))]
    if equal[0] or equal[1]:
        # the odd axis is the one outside the equal pair (for a sphere its part vanishes)
        odd = 2 if equal[0] else 0
        base = float(np.mean([moments[k] for k in range(3) if k != odd]))
        axial = 0.0 if (equal[0] and equal[1]) else 1.0 / moments[odd] - 1.0 / base
        a = axes[odd]
        if symmetric_length:
            return RigidBodySplit(np.stack([a, a, a, a]), np.array([0.0, axial, 0.0, axial]),
                                  np.array([1.0 / base, 0.0, 0.0, 0.0]), _SPLIT_FRACTIONS, True)
        return RigidBodySplit(np.stack([a, a]), np.array([0.0, axial]), np.array([1.0 / base, 0.0]),
                              _EXACT_FRACTIONS, True)
    # eigh orders the moments: 0 the smallest, 1 the intermediate (I₀), 2 the largest
    top, rest = (2, 0) if SYMMETRIC_TOP_AXIS == "largest" else (0, 2)
    inverse = 1.0 / moments
    rates = np.array([0.0, inverse[rest] - inverse[1], inverse[top] - inverse[1], inverse[rest] - inverse[1]])
    return RigidBodySplit(np.stack([axes[rest], axes[rest], axes[top], axes[rest]]), rates,
                          np.array([inverse[1], 0.0, 0.0, 0.0]), _SPLIT_FRACTIONS, False)


def _coordinate_axis(axes: Matrix) -> int | None:
    """k if every row a of ``axes`` (N, 3) has its only nonzero entry at k (then ⟨a, μ⟩ = a_k μ_k
    exactly), else None."""
    nonzero = axes != 0.0
    if not np.all(np.count_nonzero(nonzero, axis=1) == 1):
        return None
    k = np.argmax(nonzero, axis=1)
    return int(k[0]) if np.all(k == k[0]) else None


def _rotation(omega_t: jax.Array) -> jax.Array:
    """exp(ŵ) = I + (sin θ/θ) ŵ + (2 sin²(θ/2)/θ²) ŵ² for any rotation vector w = ω t, θ = |w|: no
    series (the library's exponential sums one below θ = 2); neither quotient cancels. At w = 0 the
    coefficients take their limits 1 and ½ (both even in θ, so their derivatives vanish there), and
    no derivative divides by θ."""
    squared = omega_t @ omega_t
    nonzero = squared > 0.0
    angle = jnp.sqrt(jnp.where(nonzero, squared, 1.0))
    sinc = jnp.where(nonzero, jnp.sin(angle) / angle, 1.0)
    half = jnp.where(nonzero, jnp.sin(0.5 * angle) / angle, 0.5)
    return _rodrigues(hat3(omega_t), sinc, 2.0 * half * half)


def _axis_rotation(a: jax.Array, theta: jax.Array) -> jax.Array:
    """exp(θ â) = I + sin θ â + (1 − cos θ) â² for a unit vector a (Rodrigues)."""
    return _rodrigues(hat3(a), jnp.sin(theta), 2.0 * jnp.sin(0.5 * theta) ** 2)


def _rodrigues(A: jax.Array, first: jax.Array, second: jax.Array) -> jax.Array:
    """I + first · A + second · A²."""
    return jnp.eye(3) + first * A + second * (A @ A)


class RigidBodies(FreeFlow):
    """The free flow of N rigid bodies on SO(3) or SE(3) (a single group: N = 1, points unstacked),
    vectorised over the bodies. A part that is a rotation about a fixed principal axis in every
    body uses Rodrigues' formula with that axis; a part with a spherical term Rodrigues' formula
    in its rotation vector (``_rotation``), and leaves μ as it is if it is spherical alone."""

    def __init__(self, kind: Literal["SO3", "SE3"], blocks: Matrix, stacked: bool) -> None:
        self._kind, self._stacked = kind, stacked
        rotational = blocks if kind == "SO3" else blocks[:, 3:, 3:]
        splits = [rigid_body_split(J, symmetric_length=False) for J in rotational]
        self.exact = all(split.exact for split in splits)
        if not self.exact or len({split.fractions.size for split in splits}) > 1:
            splits = [rigid_body_split(J, symmetric_length=True) for J in rotational]
        self._axes = np.stack([split.axes for split in splits])  # (N, k, 3)
        # ⟨a, μ⟩ is read as a_k μ_k where a is a coordinate axis ±e_k in every body (a body given in
        # its principal frame): XLA does not fold a product with a constant axis, and each stands on
        # the chain of μ's updates.
        self._components = tuple(_coordinate_axis(self._axes[:, j]) for j in range(self._axes.shape[1]))
        self._rates = np.stack([split.rates for split in splits])  # (N, k)
        self._spherical = np.stack([split.spherical for split in splits])  # (N, k)
        self._fractions = tuple(float(f) for f in splits[0].fractions)
        # per part: does any body have a spherical term (then the exponential), or only axis rotations
        self._with_spherical = tuple(bool(np.any(self._spherical[:, j] != 0.0)) for j in range(len(self._fractions)))
        self._with_axis = tuple(bool(np.any(self._rates[:, j] != 0.0)) for j in range(len(self._fractions)))
        self._inverse_mass = 1.0 / blocks[:, 0, 0] if kind == "SE3" else np.zeros(len(blocks))

    def _body(self, g: jax.Array, mu: jax.Array, axes: jax.Array, rates: jax.Array, spherical: jax.Array,
              inverse_mass: jax.Array, t: jax.Array) -> tuple[jax.Array, jax.Array]:
        if self._kind == "SO3":
            R, p_omega, p_v = g, mu, None
        else:
            R, p_omega, p_v = g[:3, :3], mu[3:], mu[:3]
            x = g[:3, 3] + (t * inverse_mass) * (R @ p_v)
        for j, fraction in enumerate(self._fractions):
            if not (self._with_axis[j] or self._with_spherical[j]):
                continue
            tj = fraction * t
            k = self._components[j]
            along = axes[j, k] * p_omega[k] if k is not None else axes[j] @ p_omega  # axes[j, k] = ±1
            if not self._with_spherical[j]:
                E = _axis_rotation(axes[j], tj * rates[j] * along)
            elif self._with_axis[j]:
                E = _rotation(tj * (rates[j] * along * axes[j] + spherical[j] * p_omega))
            else:
                E = _rotation(tj * (spherical[j] * p_omega))
            R = R @ E
            if self._with_axis[j]:
                p_omega = E.T @ p_omega
            # else a rotation about μ itself, which leaves μ as it is: off the chain of μ's updates,
            # whose sines are a splitting step's cost
            if p_v is not None:
                p_v = E.T @ p_v
        if p_v is None:
            return R, p_omega
        return jnp.eye(4).at[:3, :3].set(R).at[:3, 3].set(x), jnp.concatenate([p_v, p_omega])

    def __call__(self, g: object, mu: jax.Array, t: jax.Array) -> tuple[object, jax.Array]:
        points = jnp.asarray(g)
        axes, rates, spherical, inverse_mass = (jnp.asarray(x) for x in (
            self._axes, self._rates, self._spherical, self._inverse_mass))
        if not self._stacked:
            return self._body(points, mu, axes[0], rates[0], spherical[0], inverse_mass[0], t)
        n = len(self._axes)
        new_gs, new_mus = jax.vmap(self._body, in_axes=(0, 0, 0, 0, 0, 0, None))(
            points, jnp.reshape(mu, (n, -1)), axes, rates, spherical, inverse_mass, t)
        return new_gs, jnp.reshape(new_mus, (-1,))


def _plane_rotation(theta: jax.Array) -> jax.Array:
    """R(θ) = [[cos θ, −sin θ], [sin θ, cos θ]]."""
    c, s = jnp.cos(theta), jnp.sin(theta)
    return jnp.stack([jnp.stack([c, -s]), jnp.stack([s, c])])


class PlanarBodies(FreeFlow):
    """The exact free flow of N planar rigid bodies on SO(2) or SE(2) (module docstring; a single
    group: N = 1, points unstacked), vectorised over the bodies: ω = μ_ω/J constant,
    R ← R R(tω), and on SE(2) x ← x + t R p_v/m, p_v ← R(−tω) p_v."""

    exact = True

    def __init__(self, kind: Literal["SO2", "SE2"], blocks: Matrix, stacked: bool) -> None:
        self._kind, self._stacked = kind, stacked
        self._inverse_moment = 1.0 / blocks[:, -1, -1]
        self._inverse_mass = 1.0 / blocks[:, 0, 0] if kind == "SE2" else np.zeros(len(blocks))

    def _body(self, g: jax.Array, mu: jax.Array, inverse_moment: jax.Array, inverse_mass: jax.Array,
              t: jax.Array) -> tuple[jax.Array, jax.Array]:
        E = _plane_rotation(t * inverse_moment * mu[-1])
        if self._kind == "SO2":
            return g @ E, mu
        R, p_v = g[:2, :2], mu[:2]
        x = g[:2, 2] + (t * inverse_mass) * (R @ p_v)
        return jnp.eye(3).at[:2, :2].set(R @ E).at[:2, 2].set(x), jnp.concatenate([E.T @ p_v, mu[2:]])

    def __call__(self, g: object, mu: jax.Array, t: jax.Array) -> tuple[object, jax.Array]:
        points = jnp.asarray(g)
        inverse_moment, inverse_mass = jnp.asarray(self._inverse_moment), jnp.asarray(self._inverse_mass)
        if not self._stacked:
            return self._body(points, mu, inverse_moment[0], inverse_mass[0], t)
        n = len(self._inverse_moment)
        new_gs, new_mus = jax.vmap(self._body, in_axes=(0, 0, 0, 0, None))(
            points, jnp.reshape(mu, (n, -1)), inverse_moment, inverse_mass, t)
        return new_gs, jnp.reshape(new_mus, (-1,))


class ProductFlow(FreeFlow):
    """Factor by factor: the free flows of the factors of a product group (their T's commute)."""

    def __init__(self, flows: list[FreeFlow], slices: tuple[slice, ...]) -> None:
        self._flows, self._slices = flows, slices
        self.exact = all(flow.exact for flow in flows)

    def __call__(self, g: object, mu: jax.Array, t: jax.Array) -> tuple[object, jax.Array]:
        assert isinstance(g, tuple)
        outs = [flow(point, mu[part], t) for flow, point, part in zip(self._flows, g, self._slices, strict=True)]
        return tuple(out[0] for out in outs), jnp.concatenate([out[1] for out in outs])


SUPPORTED: Final = "Rn(n), SO2(), SO3(), SE2(), SE3(), and products and powers of them"


def _diagonal_blocks(inertia: Matrix, sizes: list[int], what: str) -> list[Matrix]:
    """The diagonal blocks of 𝕀 for the given sizes, after checking that every other entry is zero."""
    edges = np.cumsum([0, *sizes])
    mask = np.ones(inertia.shape, dtype=bool)
    for a, b in zip(edges[:-1], edges[1:]):
        mask[a:b, a:b] = False
    coupling = float(np.max(np.abs(inertia[mask]), initial=0.0))
    if coupling > ZERO_BLOCK * float(np.max(np.abs(inertia))):
        raise UnsupportedFreeFlow(
            f"the inertia couples the {what} (an off-diagonal block entry of size {coupling:.3g}): the free flow "
            "splits exactly only for an inertia that is block-diagonal over them", ValueError)
    return [inertia[a:b, a:b] for a, b in zip(edges[:-1], edges[1:])]


_RIGID_MOTION_FORM: Final = {2: ("SE(2)", "diag(m, m, J) with ξ = (v₁, v₂, ω)"),
                              3: ("SE(3)", "diag(m·I₃, J) with ξ = (v, ω)")}
"""The inertia whose free flow splits exactly on SE(n), by n."""


def _check_rigid_motion(block: Matrix, where: str) -> None:
    """𝕀 = diag(m I_n, J) on se(n), n = 2, 3, with ξ = (v, ω) (v ∈ Rⁿ first), else UnsupportedFreeFlow."""
    n = 2 if len(block) == 3 else 3
    scale = float(np.max(np.abs(block)))
    coupling = float(np.max(np.abs(block[:n, n:])))
    mass = block[:n, :n]
    m = float(mass[0, 0])
    anisotropic = float(np.max(np.abs(mass - m * np.eye(n))))
    if coupling > ZERO_BLOCK * scale or anisotropic > EQUAL_MOMENTS * m:
        group, form = _RIGID_MOTION_FORM[n]
        raise UnsupportedFreeFlow(
            f"on {group} the free flow splits exactly only for an inertia {form}, the body frame at the centre of "
            f"mass{where}; got a translation–rotation coupling of size {coupling:.3g} and a mass block "
            f"{np.array2string(mass, precision=4)}: use VPRK for this body", ValueError)


_RIGID_BODY_GROUPS: Final = (SO2, SO3, SE2, SE3)


def _bodies(body: SO2 | SO3 | SE2 | SE3, blocks: Matrix, stacked: bool) -> FreeFlow:
    """The free flow of the rigid bodies on SO(n) or SE(n) with inertias ``blocks`` (N, d, d); a
    single body unstacked, or those of a power group stacked."""
    if isinstance(body, (SE2, SE3)):
        for k, block in enumerate(blocks):
            _check_rigid_motion(block, f" (body {k})" if stacked else "")
    if isinstance(body, (SO3, SE3)):
        return RigidBodies("SO3" if isinstance(body, SO3) else "SE3", blocks, stacked)
    return PlanarBodies("SO2" if isinstance(body, SO2) else "SE2", blocks, stacked)


def free_flow(group: LieGroup[object], inertia: Matrix) -> FreeFlow:
    """The free flow of ½⟨μ, 𝕀⁻¹μ⟩ on ``group`` (module docstring), or UnsupportedFreeFlow."""
    if isinstance(group, Rn):
        return Drift(inertia)
    if isinstance(group, _RIGID_BODY_GROUPS):
        return _bodies(group, inertia[None], stacked=False)
    if isinstance(group, PowerGroup):
        body = group.group
        if isinstance(body, Rn):
            return Drift(inertia)
        if isinstance(body, _RIGID_BODY_GROUPS):
            blocks = np.stack(_diagonal_blocks(inertia, [body.dim] * group.N, "bodies of the power group"))
            return _bodies(body, blocks, stacked=True)
        raise UnsupportedFreeFlow(f"no exact split of the free flow on {group!r}; it works on {SUPPORTED}", TypeError)
    if isinstance(group, ProductGroup):
        sizes = [factor.dim for factor in group.factors]
        factor_blocks = _diagonal_blocks(inertia, sizes, "factors of the product")
        return ProductFlow([free_flow(cast(LieGroup[object], factor), block)
                            for factor, block in zip(group.factors, factor_blocks)], group.slices)
    raise UnsupportedFreeFlow(f"no exact split of the free flow on {group!r}; it works on {SUPPORTED}", TypeError)
