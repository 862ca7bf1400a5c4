"""An initial-value problem: a Lagrangian system, optional constraints and external force,
consistent initial data."""

import functools
from collections.abc import Hashable
from typing import Generic, SupportsFloat, TypeAlias, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from liemech.groups.base import LieGroup
from liemech.input_checks import checked_real, checked_vector
from liemech.jax_support import require_float64
from liemech.mechanics.callbacks import checked_call, require_callable
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.nonholonomic import NonholonomicConstraint
from liemech.mechanics.sparsity import BodySparsity
from liemech.mechanics.trivialised import derivative_in_eta, trivialised_jacobian, trivialised_jvp
from liemech.numerics.lu import solve
from liemech.owned_compilation import owned_jit
from liemech.types import ForceFunction, Matrix, Vector

P = TypeVar("P")

RANK_TOL = 1e-10
"""A constraint Jacobian whose smallest singular value is below RANK_TOL × the largest is rank-deficient."""

ExternalForce: TypeAlias = ForceFunction[P]
"""F(g, η, t) ∈ 𝔤*, left-trivialised: ⟨F, ζ⟩ is the virtual work of the force on the variation
g τ(εζ), so that μ̇ = ad*_η μ + f + F (+ constraint forces) and its power is ⟨F, η⟩."""


class Problem(Generic[P]):
    """A system with initial configuration g₀ and initial body velocity η₀ or body momentum μ₀.

    Exactly one of ``eta0`` and ``mu0`` is given; the other follows from the Legendre map
    μ₀ = ∂ℓ/∂η (g₀, η₀). g₀ is checked with ``group.check_point``. With a ``holonomic``
    constraint, its Jacobian B(g₀) must have full row rank and the data must be consistent:
    |Φ(g₀)| and |B(g₀)η₀| at most ``constraint_tol`` (``project_to_constraints`` repairs nearly
    consistent data). With a ``nonholonomic`` constraint φ, ∂φ/∂η must have full row rank
    (admissibility), C = ∂φ/∂η M⁻¹ ∂φ/∂ηᵀ must be regular (compatibility), and |φ(g₀, η₀)| at
    most ``constraint_tol`` (a finite number ≥ 0). A problem may carry both kinds at once (a disc
    rolling on a plane: a holonomic contact and nonholonomic rolling); then the stacked rows
    [B; ∂φ/∂η] must have full rank too (a rolling condition that repeats dΦ/dt = 0 is refused),
    and multipliers are ordered (λ_Φ, λ_φ).

    ``force(g, η, t)`` is an external force (``ExternalForce``): the continuous equations become
    μ̇ = ad*_η μ + f + F(g, η, t) (+ constraint forces), the Lagrange–d'Alembert principle.

    ``sparsity`` (a ``BodySparsity``) tells implicit methods which body each coordinate and
    holonomic row belongs to and which bodies couple, so that they solve a mechanism's step in
    O(bodies).
    """

    def __init__(
        self,
        system: Lagrangian[P],
        g0: P,
        eta0: Vector | None = None,
        *,
        mu0: Vector | None = None,
        holonomic: HolonomicConstraint[P] | None = None,
        nonholonomic: NonholonomicConstraint[P] | None = None,
        force: ExternalForce[P] | None = None,
        constraint_tol: SupportsFloat = 1e-10,
        sparsity: BodySparsity | None = None,
    ) -> None:
        require_float64()
        if not isinstance(system, Lagrangian):
            raise TypeError(f"system must be a Lagrangian (e.g. MechanicalSystem), got {type(system).__name__}")
        group = system.group
        self.system = system
        self.constraint_tol = checked_real(constraint_tol, "constraint_tol", 0.0, open_low=False)
        self.g0: P = group.check_point(g0, "g0")
        if (eta0 is None) == (mu0 is None):
            raise ValueError("give exactly one of eta0 (body velocity) and mu0 (body momentum)")
        system.check_at(self.g0, np.zeros(group.dim))
        if eta0 is not None:
            self.eta0 = checked_vector(eta0, group.dim, "eta0")
            self.mu0 = system.momentum(self.g0, self.eta0)
        else:
            self.mu0 = checked_vector(mu0, group.dim, "mu0")
            self.eta0 = system.velocity(self.g0, self.mu0)
        if not np.all(np.isfinite(self.mu0)):
            raise ValueError("the initial momentum ∂ℓ/∂η (g0, eta0) is not finite")
        system.check_velocity(self.g0, self.mu0)
        if holonomic is not None and not isinstance(holonomic, HolonomicConstraint):
            raise TypeError(f"holonomic must be a HolonomicConstraint, got {type(holonomic).__name__}")
        if nonholonomic is not None and not isinstance(nonholonomic, NonholonomicConstraint):
            raise TypeError(f"nonholonomic must be a NonholonomicConstraint, got {type(nonholonomic).__name__}")
        require_callable(force, "force", "(g, eta, t) -> (dim,) array", optional=True)
        self.holonomic = holonomic
        self.nonholonomic = nonholonomic
        self.force = force
        if sparsity is not None and not isinstance(sparsity, BodySparsity):
            raise TypeError(f"sparsity must be a BodySparsity or None, got {type(sparsity).__name__}")
        self.sparsity = sparsity
        if sparsity is not None and (sparsity.coordinate_body.size != group.dim
                                     or sparsity.row_body.size != self.n_holonomic):
            raise ValueError(f"sparsity must label {group.dim} coordinates and {self.n_holonomic} holonomic rows, got "
                             f"{sparsity.coordinate_body.size} and {sparsity.row_body.size}")
        if force is not None:
            checked_call("force", force, self.g0, (group.dim,), self.eta0, 0.0)
        if holonomic is not None:
            holonomic.check_at(group, self.g0)
            _check_holonomic(group, holonomic, self.g0, self.eta0, self.constraint_tol)
        if nonholonomic is not None:
            nonholonomic.check_at(group, self.g0, self.eta0)
            _check_nonholonomic(system, nonholonomic, self.g0, self.eta0, self.constraint_tol)
        if holonomic is not None and nonholonomic is not None:
            both = np.concatenate([holonomic.trivialised_jacobian(group, self.g0),
                                   nonholonomic.derivative_eta(self.g0, self.eta0)])
            _full_row_rank(both, both.shape[0], group.dim, "the holonomic B(g0) and nonholonomic ∂φ/∂η stacked",
                           "a nonholonomic row repeats dΦ/dt = 0 of the holonomic constraint (for rolling on a "
                           "surface, keep only the tangential components of the contact velocity)")

    @property
    def group(self) -> LieGroup[P]:
        """The configuration space."""
        return self.system.group

    @property
    def step_key(self) -> tuple[Hashable, ...]:
        """What of the problem, besides its system (which keeps the compiled steps), changes a
        method's step equations: the constraints, the external force and the body sparsity. Every
        cache of compiled steps keys on it; a new field of ``Problem`` that changes the step joins
        it here."""
        return (self.holonomic, self.nonholonomic, self.force, self.sparsity)

    @functools.cached_property
    def lam0(self) -> Vector | None:
        """The consistent multiplier λ(0) of the continuous equations (None without constraints);
        see ``consistent_multiplier``."""
        if self.holonomic is None and self.nonholonomic is None:
            return None
        # Compiled once per system and constraints (kept on the system): problems that share them,
        # as an ensemble's members or a loop over initial data do, pay one compiled call rather
        # than an op-by-op evaluation of the derivatives.
        parts = (self.system, self.holonomic, self.nonholonomic, self.force)
        multiplier = owned_jit(self.system, ("multiplier", *parts[1:]), functools.partial(consistent_multiplier, *parts))
        lam = multiplier(self.g0, self.eta0, 0.0)
        assert lam is not None  # there are constraints
        if not np.all(np.isfinite(lam)):
            raise ValueError("the consistent multiplier λ(0) is not finite: the constraint forces are undetermined "
                             "at (g0, eta0) (a constraint's second derivative or the force is not finite there)")
        return np.array(lam, dtype=np.float64)

    @functools.cached_property
    def n_holonomic(self) -> int:
        """The number of holonomic constraints (0 without)."""
        return 0 if self.holonomic is None else int(self.holonomic.value(self.g0).shape[0])

    @functools.cached_property
    def n_constraints(self) -> int:
        """m, the number of holonomic and nonholonomic constraints together (0 without)."""
        if self.nonholonomic is None:
            return self.n_holonomic
        return self.n_holonomic + int(self.nonholonomic.value(self.g0, self.eta0).shape[0])


def consistent_multiplier(system: Lagrangian[P], holonomic: HolonomicConstraint[P] | None,
                          nonholonomic: NonholonomicConstraint[P] | None, force: ExternalForce[P] | None, g: P,
                          eta: ArrayLike, t: ArrayLike = 0.0) -> jax.Array | None:
    """The multiplier λ of the continuous equations at (g, η, t), traceable (None without constraints).

    With μ̇ = ad*_η μ + f + F + Dᵀλ, μ = μ(g, η), M = ∂μ/∂η, M_g = ∂μ/∂g and
    d = ad*_η μ + f + F(g, η, t) − M_g η, each constraint contributes rows D and rates r:
    holonomic Φ, from d²Φ/dt² = 0: D = B = L*DΦ, r = (ηᵀ Hess_k η)_k; nonholonomic φ, from
    dφ/dt = (∂φ/∂g) η + (∂φ/∂η) η̇ = 0: D = ∂φ/∂η, r = (∂φ/∂g) η. With both, the rows stack
    (holonomic first), and λ = −(D M⁻¹ Dᵀ)⁻¹ [r + D M⁻¹ d].
    """
    if holonomic is None and nonholonomic is None:
        return None
    group, eta = system.group, jnp.asarray(eta, dtype=float)
    mu = jnp.asarray(system.momentum(g, eta))
    drive = (jnp.asarray(group.ad_star(eta, mu)) + jnp.asarray(system.force(g, eta))
             - jnp.asarray(system.momentum_d_g(g, eta)) @ eta)
    if force is not None:
        drive = drive + jnp.asarray(force(g, eta, t), dtype=float)  # type: ignore[arg-type]
    rows, rates = [], []
    if holonomic is not None:
        rows.append(trivialised_jacobian(group, holonomic.phi, g))
        # ηᵀHess_k η as the derivative along η of B(x)η: two directional derivatives, never the
        # m × dim × dim Hessians (36 GB for a 128-link chain)
        rates.append(trivialised_jvp(group, lambda x: trivialised_jvp(group, holonomic.phi, x, eta), g, eta))
    if nonholonomic is not None:
        rows.append(derivative_in_eta(nonholonomic.phi, g, eta))
        rates.append(trivialised_jvp(group, lambda x: nonholonomic.phi(x, eta), g, eta))
    D, rate = jnp.concatenate(rows), jnp.concatenate(rates)
    m = D.shape[0]
    solved = jnp.asarray(system.mass_solve(g, eta, jnp.concatenate([D.T, drive[:, None]], axis=1)))
    schur, right = D @ solved[:, :m], rate + D @ solved[:, m]
    # One constraint makes D M⁻¹ Dᵀ a number: the steps evaluate λ in every Newton iteration, where
    # a linear-algebra call would cost more than the division.
    lam: jax.Array = -(right / schur[0, 0] if m == 1 else solve(schur, right))
    return lam


def constraint_defect(group: LieGroup[P], holonomic: HolonomicConstraint[P] | None,
                      nonholonomic: NonholonomicConstraint[P] | None, g: P, eta: ArrayLike) -> jax.Array:
    """max(|Φ(g)|, |B(g)η| / s, |φ(g, η)| / s) with s = max(1, |η|∞) over the given constraints
    (0 without), traceable: the defect of initial data that ``constraint_tol`` bounds."""
    eta = jnp.asarray(eta, dtype=float)
    scale = jnp.maximum(1.0, jnp.max(jnp.abs(eta)))
    defects = [jnp.zeros(())]
    if holonomic is not None:
        velocity = trivialised_jacobian(group, holonomic.phi, g) @ eta
        defects += [jnp.max(jnp.abs(holonomic.phi(g))), jnp.max(jnp.abs(velocity)) / scale]
    if nonholonomic is not None:
        defects.append(jnp.max(jnp.abs(nonholonomic.phi(g, eta))) / scale)
    return jnp.max(jnp.stack(defects))


def _full_row_rank(J: Matrix, m: int, dim: int, what: str, remedy: str) -> None:
    """Raise ValueError unless the (m, dim) matrix J has shape (m, dim) and rank m (to RANK_TOL)."""
    if J.shape != (m, dim):
        raise ValueError(f"{what} must have shape ({m}, {dim}), got {J.shape}")
    sigma = np.linalg.svd(J, compute_uv=False)
    cutoff = RANK_TOL * max(float(sigma[0]), 1e-300)
    if m > dim or sigma[-1] <= cutoff:
        raise ValueError(
            f"{what} has rank {int(np.sum(sigma > cutoff))} < m = {m} "
            f"(singular values {np.array2string(sigma, precision=3)}); {remedy}"
        )


def _check_holonomic(
    group: LieGroup[P], constraint: HolonomicConstraint[P], g0: P, eta0: Vector, tol: float
) -> None:
    phi = constraint.value(g0)
    B = constraint.trivialised_jacobian(group, g0)
    _full_row_rank(B, phi.shape[0], group.dim, "holonomic: the constraint Jacobian at g0",
                   "remove redundant constraints")
    position_defect = float(np.max(np.abs(phi)))
    velocity_defect = float(np.max(np.abs(B @ eta0)))
    if position_defect > tol or velocity_defect > tol * max(1.0, float(np.max(np.abs(eta0)))):
        raise ValueError(
            f"inconsistent initial data: |Φ(g0)| = {position_defect:.3e}, |B(g0) eta0| = {velocity_defect:.3e} "
            f"(tolerance {tol:.0e}); use lm.project_to_constraints(system, constraint, g0, eta0) to repair "
            "nearly consistent data"
        )


def _check_nonholonomic(
    system: Lagrangian[P], constraint: NonholonomicConstraint[P], g0: P, eta0: Vector, tol: float
) -> None:
    phi = constraint.value(g0, eta0)
    D = constraint.derivative_eta(g0, eta0)
    _full_row_rank(D, phi.shape[0], system.group.dim, "nonholonomic: ∂φ/∂η at (g0, eta0)",
                   "the constraints are not admissible")
    C = D @ np.linalg.solve(system.momentum_d_eta(g0, eta0), D.T)
    if np.linalg.cond(C) > 1.0 / RANK_TOL:
        raise ValueError(f"nonholonomic: C = ∂φ/∂η M⁻¹ ∂φ/∂ηᵀ is singular (cond {np.linalg.cond(C):.3e}): "
                         "the constraints are not compatible with the kinetic energy")
    defect = float(np.max(np.abs(phi)))
    if defect > tol * max(1.0, float(np.max(np.abs(eta0)))):
        raise ValueError(f"inconsistent initial data: |φ(g0, eta0)| = {defect:.3e} (tolerance {tol:.0e}); "
                         "choose eta0 on the constraint")
