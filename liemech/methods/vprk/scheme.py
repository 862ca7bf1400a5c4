"""The variational Hamilton–Pontryagin RKMK integrator (VPRK) on any configuration space,
unconstrained, with holonomic or nonholonomic constraints or both, and with external forces
(Martín de Diego & Sato Martín de Almagro 2018, Theorem 6.1 and §6.2).

One step (g_k, μ_k) ↦ (g_{k+1}, μ_{k+1}): with unknown chart velocities H¹..Hˢ ∈ 𝔤,
    Ξⁱ = h Σ_j a_ij Hʲ,  ξ = h Σ_j b_j Hʲ,  Gⁱ = g_k τ(Ξⁱ),  ηⁱ = dτ(Ξⁱ) Hⁱ,  tⁱ = t_k + c_i h,
    fⁱ = f(Gⁱ, ηⁱ) + F(Gⁱ, ηⁱ, tⁱ) + Bⁱᵀ Λⁱ,  Nⁱ = dτ(Ξⁱ)ᵀ fⁱ,  Πⁱ = dτ(Ξⁱ)ᵀ μ(Gⁱ, ηⁱ),
    μ_{k+1} = Ad(τ(ξ))ᵀ [μ_k + h Σ_j b_j Ad(τ(Ξʲ)⁻¹)ᵀ fʲ]                                   (28)
    Πⁱ + h Σ_j (b_j a_ji / b_i) [Nʲ + ddτ(Ξʲ, Hʲ)ᵀ Πʲ] − dτ(ξ)ᵀ μ_{k+1} = 0,  i = 1..s      (26)
and g_{k+1} = g_k τ(ξ). On Rⁿ (τ = id, Ad = I, ddτ = 0) this is the vector-space VPRK, eq. (9).

External force F (``Problem(force=...)``): the discrete Lagrange–d'Alembert principle, the
action's variation plus the stage quadrature h Σ_i b_i ⟨Fⁱ, ζⁱ⟩ of the virtual work, adds F
wherever the trivialised ∂ℓ/∂g enters, as above (the forced variational integrators of Marsden &
West 2001, in the chart of the retraction). The step reports the work of F from t = 0 by the
same quadrature, W_{k+1} = W_k + h Σ_i b_i ⟨Fⁱ, ηⁱ⟩ (``sol.extras["work"]``); on Rⁿ with a quadratic
energy and the Gauss pair (collocation) E_{k+1} − E_k = W_{k+1} − W_k holds exactly, otherwise to
the order of the method.

Holonomic Φ (B = L*DΦ, §6.1 and eq. (13) of the vector-space scheme): Λ¹..Λˢ are unknown too, and
Φ(Gⁱ) = 0 for i = 2..s and the tangency B(g_{k+1}) ∂h/∂μ (g_{k+1}, μ_{k+1}) = 0 close the system.

Nonholonomic φ (B = ∂φ/∂η, §6.2): φ(Gⁱ, ∂h/∂μ(Gⁱ, μⁱ)) = 0 for i = 2..s on the IIIA momentum
stages μⁱ = Ad(τ(Ξⁱ))ᵀ[μ_k + h Σ_j a_ij Ad(τ(Ξʲ)⁻¹)ᵀ fʲ]. These (s − 1)m equations fix the s
stage multipliers up to one direction, along which, as h → 0, Λˢ = ρΛ¹ with ρ = R(∞), the
stability function of (A, b) at infinity ((−1)^{s−1} for Lobatto IIIA): A Λ-profile with
Σ_j a_ij Λʲ = 0 for i ≥ 2 has Λˢ = ρΛ¹. Two closures of that direction:

- "carried" (the paper's, §5 and App. F–G): Λ¹ = λ_k is carried from the previous step and
  λ_{k+1} = Λˢ. The multiplier is then part of the state and obeys λ_{k+1} ≈ ρλ_k + (terms set by
  g, μ), only marginally stable (|ρ| = 1). Near an attracting relative equilibrium (the Chaplygin
  sleigh's straight-line motion, ω ∝ e^{−ct}) the step map linearised on (μ, λ) has the physical
  root e^{−ch} and a parasitic root ρe^{+ch} (their product is ρ): λ grows like e^{ct} and takes
  the motion away. So that this never passes unseen, each step compares the carried λ_{k+1} with
  the continuous λ(g_{k+1}, η_{k+1}) (``sol.extras["multiplier_deviation"]``, the relative
  deviation ‖λ_{k+1} − λ(g_{k+1}, η_{k+1})‖∞ / max(1, ‖λ(g_{k+1}, η_{k+1})‖∞), O(h^{s−1}) on a
  stable run), and a step whose deviation exceeds ``carried_drift_limit`` fails with a
  ``ConvergenceError`` that names the instability.
- "consistent" (the default): Λ¹..Λˢ are all unknown, closed by
      Λˢ + ρΛ¹ = λ(g_{k+1}, η_{k+1}) + ρ λ(g_k, η_k),
  with λ(g, η) the multiplier of the continuous equations (``consistent_multiplier``). The closure
  fixes exactly the undetermined direction (its row meets the null profile in 2ρ ≠ 0), the state
  is (g, μ) alone (no parasitic root), and since ρ² = 1 it is unchanged under
  (k, h) ↔ (k + 1, −h), so the step keeps the time symmetry of the paper's scheme (exact on Rⁿ;
  on a Lie group both lose it at O(h^{2s}) to the chart centred at g_k) and with it the bounded
  long-time energy error on reversible systems. ``sol.lam[k]`` is λ(g_k, η_k).

Both kinds at once (a disc rolling on a plane: holonomic contact Φ, nonholonomic rolling φ), with
stage multipliers Λⁱ = (Λⁱ_Φ, Λⁱ_φ), all unknown: fⁱ gets B_Φ(Gⁱ)ᵀΛⁱ_Φ + ∂φ/∂η(Gⁱ, ηⁱ)ᵀΛⁱ_φ, and
the rows of each kind close the system as they do alone: Φ(Gⁱ) = 0 (i = 2..s) and
B_Φ(g_{k+1}) ∂h/∂μ(g_{k+1}, μ_{k+1}) = 0; φ(Gⁱ, ∂h/∂μ(Gⁱ, μⁱ)) = 0 (i = 2..s) and the consistent
closure on Λ_φ, with λ(g, η) the multiplier of the continuous equations with both constraints
(``consistent_multiplier``). Unknowns and equations are s(dim + m_Φ + m_φ) each. The hypotheses
are those of each kind alone (Lobatto: H1–H3, H1′–H2′ and R(∞) = ±1) and a full-rank stack
[B_Φ; ∂φ/∂η], which ``Problem`` checks; with Lobatto IIIA, Gˢ = g_{k+1} and μˢ = μ_{k+1}, so both
constraints hold at every node. ``sol.lam[k]`` = λ(g_k, η_k), both parts (for a rolling body, the
contact force; of order 2s − 2, where the stage multiplier Λˢ_Φ is of order s − 1). The paper's "carried"
closure is defined for nonholonomic constraints alone and refuses problems with both.

Every derivative (f, μ, B, ∂φ/∂η, λ(g, η) and Newton's Jacobian) comes from automatic
differentiation of ℓ, Φ and φ; the step is compiled once per problem and method. Constraint forces
Bᵀλ and the tangency Bv take one reverse or forward pass through Φ, never the whole B. A holonomic
problem with a ``sparsity`` whose bodies form a tree has its Newton Jacobian built from one
directional derivative per colour of its columns and solved body by body (``numerics.block_tree``);
with the Lobatto IIIA pair of s = 2 and holonomic constraints alone, as a position stage and then
a velocity stage, the same roots in fewer unknowns per body (``rattle_stages``).
"""

import functools
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Generic, Literal, NamedTuple, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike
from numpy.typing import NDArray

from liemech.groups.base import RETRACTION_KINDS, LieGroup, Retraction, RetractionKind
from liemech.groups.euclidean import TranslationRetraction
from liemech.groups.product import ProductGroup
from liemech.groups.se3 import SE3
from liemech.input_checks import checked_real
from liemech.jax_support import traced_once
from liemech.mechanics.problem import Problem, consistent_multiplier
from liemech.mechanics.trivialised import trivialised_jvp, trivialised_vjp, vjp_in_eta
from liemech.methods.compiled import CompiledMethod, CompiledStep, Node, StepStatus, node
from liemech.methods.method import NodeState, Scope, Traits
from liemech.methods.vprk.rattle_stages import RattleStages, splits
from liemech.methods.vprk.reverse_jvp import reverse_mode_jvp
from liemech.methods.vprk.stage_force import stage_force
from liemech.methods.vprk.step_pattern import stage_trees, step_tree
from liemech.numerics import block_tree
from liemech.owned_compilation import kept
from liemech.solvers import compiled_newton, starting_guess
from liemech.solvers.newton import NewtonOptions, newton_options
from liemech.tableaux import TableauPair, check_constrained_hypotheses, stability_at_infinity
from liemech.types import VectorLike

P = TypeVar("P")
R = TypeVar("R")

NonholonomicMultiplier = Literal["consistent", "carried"]
NONHOLONOMIC_MULTIPLIERS: Final[tuple[NonholonomicMultiplier, ...]] = ("consistent", "carried")
CARRIED_DRIFT_LIMIT: Final = 1.0
"""The default bound of the carried λ's relative deviation from λ(g, η): stable runs stay at
O(h^{s−1}) (at most 0.04 on the vertical disc, the particle, the ball and the CVT at h = 0.1)."""


@dataclass(frozen=True)
class VPRKTraits(Traits):
    """``Traits`` and the closure of the nonholonomic multipliers: "consistent" (time-symmetric,
    λ_k = λ(g_k, η_k)) or "carried" (the paper's Λ¹ = λ_k); see the ``vprk`` module."""

    nonholonomic_multiplier: NonholonomicMultiplier = "consistent"


class VPRK(CompiledMethod):
    """VPRK(tableau_pair, retraction="cay", nonholonomic_multiplier="consistent"): the variational
    PRK method on a Lie group.

    Only the position tableau (A, b) enters; the momentum tableau is its symplectic conjugate by
    construction. Order: that of the pair (2s − 2 for Lobatto-s, 2s for Gauss-s); symplectic;
    preserves the momentum maps of symmetries of ℓ (and of Φ). A problem with a constraint needs a
    tableau with H1–H3 and H1′–H2′ (Lobatto; s = 2 is RATTLE). With a holonomic constraint
    ``sol.lam[k]`` is the last stage multiplier Λˢ of the step ending at t_k (its stage sits at
    t_k). ``nonholonomic_multiplier`` chooses how a nonholonomic step closes its multipliers (module
    docstring): "consistent" (default; stable near attracting motions, orders 2s − 2 in g, μ and
    λ; ``sol.lam[k]`` = λ(g_k, η_k)) or "carried", Martín de Diego & Sato Martín de Almagro's
    scheme (Λ¹ = λ_k; λ of order s for even s and s − 1 for odd s, Cor. 5.2.1; ``sol.lam[k]`` the
    carried λ_k), unstable near attracting relative equilibria: a run whose carried λ leaves the
    continuous λ(g, η) by more than ``carried_drift_limit`` (relative; None: no limit, to
    reproduce the paper's figures) stops with a ConvergenceError, and
    ``sol.extras["multiplier_deviation"]`` records the deviation at every step. ``sol.lam[0]`` is the consistent
    λ(0) of the continuous equations. The option does not change unconstrained or holonomic steps.
    Holonomic and nonholonomic constraints together (a rolling disc) take the consistent closure;
    ``sol.lam[k]`` is then λ(g_k, η_k) of both kinds. An external force ``Problem(force=...)``
    enters every variant (the discrete Lagrange–d'Alembert principle); ``sol.extras["work"][i]`` is
    its work from t = 0 to ``sol.t[i + 1]`` (module docstring).
    """

    def __init__(
        self,
        tableau: TableauPair,
        retraction: RetractionKind = "cay",
        newton: NewtonOptions | None = None,
        nonholonomic_multiplier: NonholonomicMultiplier = "consistent",
        carried_drift_limit: float | None = CARRIED_DRIFT_LIMIT,
    ) -> None:
        if not isinstance(tableau, TableauPair):
            raise TypeError(f"tableau must be a TableauPair (e.g. lobatto(3)), got {type(tableau).__name__}")
        if retraction not in RETRACTION_KINDS:
            raise ValueError(f"retraction must be one of {RETRACTION_KINDS}, got {retraction!r}")
        if nonholonomic_multiplier not in NONHOLONOMIC_MULTIPLIERS:
            raise ValueError(f"nonholonomic_multiplier must be one of {NONHOLONOMIC_MULTIPLIERS}, "
                             f"got {nonholonomic_multiplier!r}")
        if np.any(tableau.b == 0.0):
            raise ValueError(f"tableau {tableau.name}: VPRK divides by b_i, which must all be nonzero")
        self.tableau = tableau
        self.retraction: RetractionKind = retraction
        self.newton = newton_options(newton, NewtonOptions(), carries=True)
        self.nonholonomic_multiplier: NonholonomicMultiplier = nonholonomic_multiplier
        self.carried_drift_limit = None if carried_drift_limit is None else checked_real(
            carried_drift_limit, "carried_drift_limit", 0.0, requirement="be None or a positive finite number")
        carried = ", nonholonomic_multiplier='carried'" if nonholonomic_multiplier == "carried" else ""
        self.name = f"VPRK({tableau.name}, retraction={retraction!r}{carried})"

    @property
    def traits(self) -> VPRKTraits:
        return VPRKTraits(order=self.tableau.order, symplectic=True, conserves_energy=False,
                          conserves_momentum_maps=True,
                          constraints_at_step_end=("position", "velocity", "nonholonomic"),
                          nonholonomic_multiplier=self.nonholonomic_multiplier)

    @property
    def scope(self) -> Scope:
        return Scope(forces="optional")

    def own_failure(self) -> tuple[str, str, str]:
        """The carried closure's guard (``carried_drift_limit``): its multiplier left λ(g, η)."""
        return ("the carried multiplier λ left the continuous λ(g, η)",
                "the paper's carried closure is unstable near attracting motions (its multiplier has a parasitic "
                "root): use nonholonomic_multiplier='consistent', or carried_drift_limit=None to run on regardless",
                "relative deviation")

    def failure_hint(self, status: int, group: LieGroup[Any] | None) -> str | None:
        """On SE(3) the Cayley chart ties translation to rotation: cay(ξ) moves the origin by
        (I − ω̂/2)⁻¹v, so the step's kinetic energy carries m|ω × hv|²/4, and for a body that
        translates far within one step its equations lose their solution: on free bodies (Lobatto-2,
        any mass, inertia and step) at h|v| ≈ 3.1–3.7 √(I_min/m), with I_min the smallest principal
        moment; exp shows no such limit."""
        failed_to_solve = status in (StepStatus.NO_CONVERGENCE, StepStatus.DIVERGED, StepStatus.SINGULAR_JACOBIAN)
        if self.retraction != "cay" or not failed_to_solve or group is None:
            return None
        factors = group.factors if isinstance(group, ProductGroup) else (group,)
        if not any(isinstance(factor, SE3) for factor in factors):
            return None
        return ("on SE(3) the Cayley retraction ties translation to rotation, and its step equations have no "
                "solution once a body moves about 3√(I/m) or more within one step (I its smallest principal "
                "moment, m its mass): use retraction='exp', or a step h with h·|v| well below 3√(I/m)")

    def check(self, problem: Problem[P]) -> None:
        """``Method.check``, and refuse the carried closure on a problem with both constraint kinds."""
        super().check(problem)
        both = problem.holonomic is not None and problem.nonholonomic is not None
        if both and self.nonholonomic_multiplier == "carried":
            raise ValueError("nonholonomic_multiplier='carried' (the paper's closure) handles nonholonomic "
                             "constraints alone; a problem with holonomic and nonholonomic constraints needs "
                             "the default nonholonomic_multiplier='consistent'")

    @property
    def cache_key(self) -> Hashable:
        return ("VPRK", self.tableau.A.tobytes(), self.tableau.b.tobytes(), self.retraction, self.newton,
                self.nonholonomic_multiplier, self.carried_drift_limit)

    def compiled_step(self, problem: Problem[P]) -> CompiledStep:
        return self._step(problem, unrolled=False)

    def batched_step(self, problem: Problem[P]) -> CompiledStep:
        """The step with its stages unrolled: under vmap a batched stage axis makes XLA transpose
        the stage data around every product, where a run alone is fastest with the stages batched."""
        return self._step(problem, unrolled=True)

    def _step(self, problem: Problem[P], unrolled: bool) -> CompiledStep:
        # Kept with the system: the equations depend on the problem's system, constraints, force and
        # sparsity only, and building them again at every ``integrate`` would cost as much as many of
        # their steps (most for the nonholonomic and rolling systems).
        key = (_STEP, self.cache_key, unrolled, *problem.step_key)
        return kept(problem.system, key, lambda: self._built_step(problem, unrolled))

    def _built_step(self, problem: Problem[P], unrolled: bool) -> CompiledStep:
        if problem.holonomic is not None or problem.nonholonomic is not None:
            check_constrained_hypotheses(self.tableau)
        scheme = VPRKEquations(self, problem, unrolled)
        # On the block tree (a mechanism of 3 bodies or more) an ensemble's members run one after
        # another, since vectorised a member-step takes longer than a run alone.
        return CompiledStep(scheme.step, scheme.start, "vectorised" if scheme.tree is None else "sequential")


_STEP: Final = ("VPRK", "step equations")
"""Key prefix of the step equations kept with a system (``VPRK._step``)."""


class _Carry(NamedTuple, Generic[P]):
    g: P
    mu: jax.Array
    lam: jax.Array  # the λ the node reports (see VPRK); empty without constraints
    guess: jax.Array  # Newton's starting point, extrapolated from the last solutions
    t: jax.Array  # the node's time, which an external force depends on
    work: jax.Array  # the external force's work since the run's first node
    history: starting_guess.History  # the unknowns of the last steps (at the start: the guess)
    factors: Any = None  # NewtonOptions(jacobian="carried"): Newton's factors at the end of that step


class _Stages(NamedTuple, Generic[P]):
    g_next: P
    mu_next: jax.Array
    residual: jax.Array
    lam_next: jax.Array  # the λ reported at t_{k+1}
    work: jax.Array  # h Σ_i b_i ⟨Fⁱ, ηⁱ⟩, the external force's work over the step


@functools.partial(jax.jit, static_argnames=("copies", "free_stages", "with_momentum"))
def _start_arrays(mu: ArrayLike, eta: ArrayLike, lam: ArrayLike, t: ArrayLike, *, copies: tuple[float, ...],
                  free_stages: int, with_momentum: bool) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array,
                                                                 jax.Array, starting_guess.History]:
    """μ, λ, Newton's first guess x = (the stage velocities, each copy ``copies[j]`` η; Λʲ = λ; and
    ν = μ if ``with_momentum``) with its history, t, and the work 0, in one compiled call: operation
    by operation their dispatches would cost a good part of a short ``integrate``."""
    mu, eta, lam = (jnp.asarray(x, dtype=float) for x in (mu, eta, lam))
    guess = jnp.concatenate([c * eta for c in copies] + [jnp.tile(lam, free_stages)] + ([mu] if with_momentum else []))
    return mu, lam, guess, jnp.asarray(t, dtype=float), jnp.zeros(()), starting_guess.history(guess)


def _velocity_direction(A: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64] | None:
    """v with A v = 0, b·v = 0 and v¹ = 1 (Lobatto IIIA: A's first row is zero and b its last), or
    None: a change of the stage velocities along v moves no stage configuration."""
    if A.shape[0] < 2 or np.any(A[0] != 0.0):
        return None
    try:
        v = np.concatenate([[1.0], np.linalg.solve(A[1:, 1:], -A[1:, 0])])
    except np.linalg.LinAlgError:  # a tableau of the user's own whose null space is not of this kind
        return None
    scale = np.max(np.abs(A)) * np.max(np.abs(v))
    if np.max(np.abs(A @ v)) > 1e-13 * scale or abs(b @ v) > 1e-13 * scale:
        return None
    return v


class VPRKEquations(Generic[P]):
    """The VPRK step equations of one problem as pure functions of the unknowns
    x = (H¹..Hˢ, free multipliers, and ν = μ_{k+1} on the block-tree path; for Lobatto IIIA the
    velocities are y with H = K y, ``step_pattern``): ``residual(x, state, h)`` and the ``step``
    that solves them."""

    def __init__(self, method: VPRK, problem: Problem[P], unrolled: bool = False) -> None:
        self._newton = method.newton
        self._unrolled = unrolled
        self._system = problem.system
        self._group = problem.group
        self._tau: Retraction[P] = self._group.retraction(method.retraction)
        # On Rⁿ (τ(ξ) = ξ: dτ = I, Ad = I, ddτ = 0) the step is eq. (9), written without those
        # matrices, since XLA does not remove products with identity matrices.
        self._vector_space = isinstance(self._tau, TranslationRetraction)
        t = method.tableau
        # numpy constants: they enter the traced step as constants either way, and making device
        # arrays of them would add to every ``integrate``
        self._A, self._b, self._c = np.asarray(t.A), np.asarray(t.b), np.asarray(t.c)
        self._s, self._n = t.stages, self._group.dim
        # C_ij = b_j a_ji / b_i (the boxed residual (26))
        self._C = np.asarray((t.b[None, :] * t.A.T) / t.b[:, None])
        self._null = _velocity_direction(self._A, self._b)
        self._last_is_step = bool(np.all(self._A[-1] == self._b))
        self._holonomic = problem.holonomic
        self._nonholonomic = problem.nonholonomic
        self._force = problem.force
        self._m = problem.n_constraints
        self._m_holonomic = problem.n_holonomic  # Λ's first columns; the nonholonomic ones follow
        self._carried = problem.nonholonomic is not None and method.nonholonomic_multiplier == "carried"
        self._consistent = problem.nonholonomic is not None and not self._carried
        # The first stage whose multiplier is unknown: Λ¹ = λ_k is carried by the paper's scheme.
        self._first_free = 1 if self._carried else 0
        self._drift_limit = method.carried_drift_limit
        self._rho = stability_at_infinity(t.position) if self._consistent else 0.0
        if self._consistent and not abs(abs(self._rho) - 1.0) <= 1e-8:
            raise ValueError(f"nonholonomic_multiplier='consistent' needs a tableau with R(∞) = ±1 (lobatto(s)); "
                             f"{t.name} has R(∞) = {self._rho:.6g}: use nonholonomic_multiplier='carried'")
        # λ at the step's end is in the residual: Newton's Jacobian (one tangent per unknown) would
        # differentiate its second derivatives along each of s(dim + m) tangents, where m reverse
        # passes give them all.
        self._continuous_multiplier = reverse_mode_jvp(self._multiplier)
        self._tree = self._tree_structure(problem)
        self._momentum_unknown = self._tree is not None
        # for Lobatto IIIA the stage velocities are unknown as y with H = K y, K the identity with
        # its first column v = self._y (``step_pattern``): Newton's derivatives along y¹ then skip
        # the stage configurations, on the block tree and on the dense path alike
        # (``_derivative_groups``)
        self._y = self._null
        self._rattle = self._rattle_stages(problem)
        # Ξ¹ = 0 given as a constant outside the stages' batch (``_over_stages``) pays at s = 2,
        # where the first stage is half the step. At s = 3 the stage compiled apart costs more
        # compile time than it saves run time, at s = 4 it costs run time too, and on the block tree
        # each colour's derivative carries the stage again.
        self._first_at_rest = (self._s == 2 and self._tree is None and not self._vector_space
                               and bool(np.all(self._A[0] == 0.0)))

    @property
    def tree(self) -> block_tree.TreeStructure | None:
        """The structure of Newton's Jacobian when it is solved on the block tree, else None."""
        return self._tree

    def _tree_structure(self, problem: Problem[P]) -> block_tree.TreeStructure | None:
        """The block tree of Newton's Jacobian from the problem's ``sparsity`` (holonomic problems):
        unknown and equation i share a body, H^j_k that of coordinate k, Λ^j_r and the rows that
        close them (Φ(G^{j+1})_r, the last the tangency) that of constraint row r, ν_k (the unknown
        momentum at the step's end, see ``_stages``) and its equation that of coordinate k (for
        Lobatto IIIA the velocities as y, ``step_pattern``). None where the dense Jacobian costs no
        more than twice the tree's, counting a directional derivative along H (or the copies of y
        that move configurations) as one of the dense ones and one along y¹, Λ or ν as half. By that
        count a chain keeps the dense Jacobian up to 2 links, where both take as long, and takes the
        tree from 3 links on, where it is faster."""
        sparsity = problem.sparsity
        if sparsity is None or problem.nonholonomic is not None or self._vector_space:
            return None
        local = self._null is not None
        tree = step_tree(sparsity, self._s, local)
        full = 0 if tree is None else tree.part_counts[int(local)]  # along y¹ as cheap as along Λ
        if tree is None or 2 * full + (tree.count - full) >= tree.size:
            return None
        return tree

    def _rattle_stages(self, problem: Problem[P]) -> RattleStages[P] | None:
        """Lobatto-2 on the block tree with holonomic constraints alone: the step solved as a
        position stage and then a velocity stage (``rattle_stages``), else None."""
        if self._tree is None or self._y is None or problem.holonomic is None or not splits(self._A, self._b):
            return None
        assert problem.sparsity is not None  # a block tree comes from the problem's sparsity
        trees = stage_trees(problem.sparsity)
        if trees is None:
            return None
        return RattleStages(self._group, self._tau, self._system, problem.holonomic, self._force, self._b, trees,
                            self._newton)

    def start(self, state: NodeState[P]) -> _Carry[P]:
        """The carry at a node; Newton starts from Hʲ = η and Λʲ = λ."""
        lam = np.zeros(0) if state.lam is None else state.lam
        # Hʲ = η: y¹ = η and yʲ = (1 − vʲ)η for Lobatto IIIA
        copies = (1.0,) * self._s if self._y is None else (1.0, *(1.0 - self._y[1:]))
        mu, lam, guess, t, work, history = _start_arrays(
            state.mu, state.eta, lam, state.t, copies=tuple(float(c) for c in copies),
            free_stages=self._s - self._first_free, with_momentum=self._momentum_unknown)
        c = _Carry(state.g, mu, lam, guess, t, work, history)
        if self._newton.jacobian != "carried":
            return c
        if self._rattle is not None:
            return c._replace(factors=self._rattle.unset_factors(guess))
        return c._replace(factors=compiled_newton.unset_factors(guess, self._tree))

    def _multiplier(self, g: P, mu: jax.Array, t: jax.Array) -> jax.Array:
        """λ(g, η(μ), t), the multiplier of the continuous equations (holonomic part first)."""
        lam = consistent_multiplier(self._system, self._holonomic, self._nonholonomic, self._force, g,
                                    self._system.velocity(g, mu), t)
        assert lam is not None
        return lam

    def _entering(self, c: _Carry[P]) -> jax.Array:
        """What the step takes from the node besides (g_k, μ_k): the carried Λ¹ = λ_k, or λ_φ(g_k, η_k)
        for the consistent closure (recomputed, so that the step is a function of (g_k, μ_k) alone)."""
        if self._consistent:
            return self._continuous_multiplier(c.g, c.mu, c.t)[self._m_holonomic:]
        return c.lam

    @property
    def _parts(self) -> tuple[int, ...]:
        """Where the unknowns split into H (for Lobatto IIIA: y¹ and the other copies of y), Λ and ν
        (``step_pattern.step_parts`` on the tree path)."""
        s, free = self._s, self._s - self._first_free
        return (self._n,) * (self._y is not None) + (s * self._n, s * self._n + free * self._m)

    @property
    def _derivative_groups(self) -> tuple[tuple[int, ...], ...]:
        """For Lobatto IIIA on the dense path, Newton's Jacobian along the velocities y², …, yˢ, which
        move the stage configurations, apart from its Jacobian along y¹ and the multipliers, which
        do not: there the retraction's coefficients and the forces' dependence on the configuration
        are not differentiated (``compiled_newton.jacobian_by_groups``). Else x whole, and so with
        nonholonomic constraints, where the second derivative program costs more compile time than
        it saves run time."""
        if self._y is None or self._tree is not None or self._nonholonomic is not None:
            return ()
        return (1,), (0, *range(2, len(self._parts) + 1))

    def _pieces(self, x: jax.Array) -> list[jax.Array]:
        """The unknowns H (or y¹ and the rest of y), Λ and ν (empty unless on the block-tree path)."""
        return jnp.split(x, self._parts)

    def _velocities(self, pieces: Sequence[jax.Array], h: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array, list[
            jax.Array]]:
        """H (s, n), Ξ = hAH, ξ = hbH and the remaining pieces. For Lobatto IIIA the
        velocities are y with H = K y (K the identity with its first column v, A v = 0, b·v = 0):
        Ξ and ξ then come from y², …, yˢ alone, so that a directional derivative along y¹ skips the
        configurations (``step_pattern``)."""
        s, n = self._s, self._n
        if self._y is None:
            H = pieces[0].reshape(s, n)
            return H, h * (self._A @ H), h * (self._b @ H), list(pieces[1:])
        first, rest = pieces[0], pieces[1].reshape(s - 1, n)
        H = jnp.concatenate([first[None], rest + self._y[1:, None] * first[None]])
        return H, h * (self._A[:, 1:] @ rest), h * (self._b[1:] @ rest), list(pieces[2:])

    def _stages(self, pieces: Sequence[jax.Array], c: _Carry[P], lam_k: jax.Array, h: jax.Array) -> _Stages[P]:
        s, m, m_holonomic = self._s, self._m, self._m_holonomic
        H, Xi, xi, (Lam_flat, nu) = self._velocities(pieces, h)
        group, tau, L, g, mu = self._group, self._tau, self._system, c.g, c.mu
        free = s - self._first_free
        Lam = Lam_flat.reshape(free, m)
        if self._carried:
            Lam = jnp.concatenate([lam_k[None, :], Lam])

        def stage(Xi_j: jax.Array, H_j: jax.Array, Lam_j: jax.Array, t_j: jax.Array) -> tuple[
                P, P, jax.Array, jax.Array, jax.Array, jax.Array, jax.Array]:
            """Gʲ = g τ(Ξʲ) and the stage terms Πʲ, Nʲ + ddτ(Ξʲ, Hʲ)ᵀΠʲ, Ad(τ(Ξʲ)⁻¹)ᵀfʲ, Φ(Gʲ), ⟨Fʲ, ηʲ⟩."""
            T_j = tau.tau(Xi_j)
            G_j = group.compose(g, T_j)
            eta_j = H_j if self._vector_space else jnp.asarray(tau.dtau_times(Xi_j, H_j))
            f_j, power_j = stage_force(L, self._force, G_j, eta_j, t_j)
            phi_j = jnp.zeros(0)
            if self._holonomic is not None:
                f_j = f_j + trivialised_vjp(group, self._holonomic.phi, G_j, Lam_j[:m_holonomic])
                phi_j = self._holonomic.phi(G_j)
            if self._nonholonomic is not None:
                f_j = f_j + vjp_in_eta(self._nonholonomic.phi, G_j, eta_j, Lam_j[m_holonomic:])
            momentum_j = jnp.asarray(L.momentum(G_j, eta_j))
            if self._vector_space:
                return T_j, G_j, momentum_j, f_j, f_j, phi_j, power_j
            # dτ, ddτ and Ad only ever act on vectors: a product or power group applies them block
            # by block, where the dense matrices would cost (dim)² per stage and per tangent.
            Pi_j = jnp.asarray(tau.dtau_star(Xi_j, momentum_j))
            ND_j = (jnp.asarray(tau.dtau_star(Xi_j, f_j))
                    + jnp.asarray(tau.dtau_derivative_star(Xi_j, H_j, momentum_j)))
            pulled_j = self._coadjoint(group.inverse(T_j), f_j)
            return T_j, G_j, Pi_j, ND_j, pulled_j, phi_j, power_j

        T, G, Pi, ND, pulled, phi, power = self._over_stages(stage, Xi, H, Lam, c.t + self._c * h,
                                                             first_at_rest=self._first_at_rest)
        # Ξˢ = ξ where A's last row is b (Lobatto IIIA): τ(ξ) is the last stage's
        T_xi = jax.tree.map(lambda leaf: leaf[-1], T) if self._last_is_step else tau.tau(xi)
        # the last stage's ξ where that stage runs alone (s = 2), so that XLA computes the
        # retraction's coefficients once (a batch of stages computes them apart from a single ξ)
        xi = Xi[-1] if self._last_is_step and self._first_at_rest else xi
        mu_next = self._coadjoint(T_xi, mu + h * (self._b @ pulled))  # (28)
        g_next = group.compose(g, T_xi)
        # On the block-tree path μ_{k+1} is an unknown ν too, closed by ν = μ_{k+1}: the tangency
        # then reads a joint's two bodies alone, where μ_{k+1} would bring in the forces of their
        # other joints, and with them the neighbours' neighbours (the Jacobian would be no tree).
        momentum = nu if self._momentum_unknown else mu_next
        dtau_mu_next = momentum if self._vector_space else jnp.asarray(tau.dtau_star(xi, momentum))
        rows = [(Pi + h * (self._C @ ND) - dtau_mu_next).ravel()]
        lam_next = Lam[-1]
        if self._holonomic is not None:
            v_next = jnp.asarray(L.velocity(g_next, momentum))
            rows += [phi[1:].ravel(), trivialised_jvp(group, self._holonomic.phi, g_next, v_next)]
        if self._nonholonomic is not None:
            constraint = self._nonholonomic

            def momentum_stage(T_i: P, G_i: P, A_i: jax.Array) -> jax.Array:
                """φ(Gⁱ, ∂h/∂μ(Gⁱ, μⁱ)) on the IIIA momentum stage μⁱ."""
                mu_i = self._coadjoint(T_i, mu + h * (A_i @ pulled))
                return constraint.phi(G_i, jnp.asarray(L.velocity(G_i, mu_i)))

            T_later, G_later = jax.tree.map(lambda a: a[1:], (T, G))
            rows.append(self._over_stages(momentum_stage, T_later, G_later, self._A[1:]).ravel())
            if self._consistent:
                lam_next = self._continuous_multiplier(g_next, mu_next, c.t + h)
                rows.append(Lam[-1, m_holonomic:] + self._rho * Lam[0, m_holonomic:] - lam_next[m_holonomic:]
                            - self._rho * lam_k)
        if self._momentum_unknown:
            rows.append(momentum - mu_next)
        return _Stages(g_next, mu_next, jnp.concatenate(rows), lam_next, h * (self._b @ power))

    def _over_stages(self, stage: Callable[..., R], *stacked: object, first_at_rest: bool = False) -> R:
        """``stage`` on each stage's slice of the ``stacked`` arguments, outputs stacked: one traced
        stage batched over the stages (s times less to compile), or a loop (``unrolled``, or a
        single stage: unbatched, its scalar tests are branches, ``series._stacked``).
        ``first_at_rest``: the first argument is Ξ with Ξ¹ = 0 (A's first row is zero), given to the
        first stage as a constant, outside the batch, so that XLA folds the retraction's coefficients
        there (exp's series and closed forms, computed at run time at Ξ¹ = h·0·H)."""
        if first_at_rest:
            Xi, *others = stacked
            assert isinstance(Xi, jax.Array)
            first = stage(jnp.zeros_like(Xi[0]), *jax.tree.map(lambda leaf: leaf[0], others))
            rest = self._over_stages(stage, Xi[1:], *jax.tree.map(lambda leaf: leaf[1:], others))
            joined: R = jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), first, rest)
            return joined
        count = jax.tree.leaves(stacked)[0].shape[0]
        if not self._unrolled and count > 1:
            out: R = jax.vmap(stage)(*stacked)
            return out
        outs = [stage(*jax.tree.map(lambda leaf: leaf[i], stacked)) for i in range(count)]
        stacked_outs: R = jax.tree.map(lambda *leaves: jnp.stack(leaves), *outs)
        return stacked_outs

    def _coadjoint(self, T: P, v: jax.Array) -> jax.Array:
        """Ad(T)ᵀ v."""
        return v if self._vector_space else jnp.asarray(self._group.Ad_star(T, v))

    def residual(self, x: VectorLike, state: NodeState[P], h: float) -> jax.Array:
        """The stacked step equations at x from the node ``state`` (zero at the solution)."""
        c = self.start(state)
        return self._stages(self._pieces(jnp.asarray(x)), c, self._entering(c), jnp.asarray(h)).residual

    def step(self, carry: object, h: jax.Array) -> tuple[object, Node]:
        c = cast(_Carry[P], carry)
        if self._rattle is not None:
            return self._step_by_stages(c, h)
        lam_k = self._entering(c)
        stages = traced_once(lambda *pieces: self._stages(pieces, c, lam_k, h), *self._pieces(c.guess))
        outcome = compiled_newton.solve(lambda *pieces: stages(*pieces).residual, c.guess, self._newton,
                                        jnp.max(jnp.abs(c.mu)), self._tree, self._parts, c.factors,
                                        derivative_groups=self._derivative_groups)
        end = stages(*self._pieces(outcome.x))
        status, residual = outcome.status, outcome.residual
        extras: dict[str, jax.Array] = {}
        if self._carried:
            continuous = self._continuous_multiplier(end.g_next, end.mu_next, c.t + h)
            deviation = jnp.max(jnp.abs(end.lam_next - continuous)) / jnp.maximum(1.0, jnp.max(jnp.abs(continuous)))
            extras["multiplier_deviation"] = deviation
            if self._drift_limit is not None:
                drifted = (status == StepStatus.CONVERGED) & (deviation > self._drift_limit)
                status = jnp.where(drifted, StepStatus.METHOD_FAILURE, status)
                residual = jnp.where(drifted, deviation, residual)
        return self._ended(c, h, outcome.x, end.g_next, end.mu_next, end.lam_next, end.work, outcome.factors,
                           outcome.iterations, residual, status, extras)

    def _step_by_stages(self, c: _Carry[P], h: jax.Array) -> tuple[object, Node]:
        """The step as a position and a velocity stage (``rattle_stages``)."""
        assert self._rattle is not None
        out = self._rattle.solve(c.g, c.mu, c.t, c.guess, h, c.factors)
        return self._ended(c, h, out.x, out.g_next, out.mu_next, out.lam_next, out.work, out.factors,
                           out.iterations, out.residual, out.status, {})

    def _ended(self, c: _Carry[P], h: jax.Array, x: jax.Array, g_next: P, mu_next: jax.Array, lam_next: jax.Array,
               step_work: jax.Array, factors: Any, iterations: jax.Array, residual: jax.Array, status: jax.Array,
               extras: dict[str, jax.Array]) -> tuple[object, Node]:
        """The carry and the node at the step's end from the unknowns x it solved (Newton's next
        guess extrapolated from them), with the external force's work since the run's first node."""
        work = c.work + step_work
        if self._force is not None:
            extras = {"work": work, **extras}
        eta_next = jnp.asarray(self._system.velocity(g_next, mu_next))
        history, guess = starting_guess.extrapolate(c.history, x)
        return _Carry(g_next, mu_next, lam_next, guess, c.t + h, work, history, factors), node(
            g_next, mu_next, eta_next, lam_next, iterations, residual, status, extras)
