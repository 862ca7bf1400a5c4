"""Splitting and composition methods on Lie groups for ℓ(g, η) = ½⟨η, 𝕀η⟩ − V(g) with a constant
inertia 𝕀: H = T + V is split into the potential kick and the free flow, both solved exactly, and
composed symmetrically (``coefficients``).

    kick K(t):  g fixed,  μ ← μ − t ∇V(g)           (⟨∇V(g), ζ⟩ = d/dε V(g τ(εζ))|₀; the exact
                                                       flow of V: ġ = g ∂V/∂μ = 0, μ̇ = −∇V)
    free F(t):  ġ = g η, μ̇ = ad*_η μ, η = 𝕀⁻¹μ      (``free_flow``: a drift on Rⁿ, the free rigid
                                                       body on SO(2), SO(3), SE(2), SE(3))
    Ψ_h = K(b₀h) ∘ F(a₁h) ∘ K(b₁h) ∘ … ∘ F(a_m h) ∘ K(b_m h).

On Rⁿ "strang" is Störmer–Verlet; on SO(3) a symplectic splitting of the rigid body in the manner
of Dullweber, Leimkuhler & McLachlan 1997 (the free flow exact for an axisymmetric or spherical
body; otherwise a symmetric top's exact flow between half rotations about the remaining axis).
"""

from collections.abc import Hashable
from typing import Any, Final, NamedTuple, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from liemech.groups.base import LieGroup
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.methods.compiled import CompiledMethod, CompiledStep, Node, StepStatus, node
from liemech.methods.method import NodeState, Scope, Traits
from liemech.methods.splitting.coefficients import COMPOSITIONS, SEQUENCES, Composition, KickFreeSequence
from liemech.methods.splitting.free_flow import FreeFlow, UnsupportedFreeFlow, free_flow
from liemech.owned_compilation import kept, owned_jit

P = TypeVar("P")


class Splitting(CompiledMethod):
    """Splitting(composition="strang"): an explicit symplectic splitting or composition method for
    ℓ(g, η) = ½⟨η, 𝕀η⟩ − V(g) with a constant 𝕀 on Rⁿ, SO(2), SO(3), SE(2), SE(3) and their products
    and powers.

    One step is Ψ_h = K(b₀h) ∘ F(a₁h) ∘ K(b₁h) ∘ … ∘ F(a_m h) ∘ K(b_m h), with the kick
    K(t): μ ← μ − t ∇V(g) (g fixed) and F(t) the free flow ġ = g η, μ̇ = ad*_η μ, η = 𝕀⁻¹μ:
    a drift on Rⁿ (then "strang" is Störmer–Verlet), the free rigid body on SO(3) (exact for an
    axisymmetric or spherical 𝕀; otherwise the symmetric order-2 splitting R_b(t/2) ∘ F_top(t) ∘
    R_b(t/2), F_top the exact flow of the symmetric top with the intermediate moment in place of
    the smallest and R_b a rotation about the smallest moment's axis, in the manner of Dullweber,
    Leimkuhler & McLachlan 1997), on SE(3) with 𝕀 = diag(m I₃, J) a
    drift of the centre along the spatial momentum composed with those rotations; on SO(2) the angle
    advances by tω, and on SE(2) with 𝕀 = diag(m, m, J) (ξ = (v₁, v₂, ω)) the body turns at the
    constant ω while its centre drifts along the constant spatial momentum (exact).

    ``composition`` (one of ``SPLITTING_COMPOSITIONS``) chooses the coefficients: "strang"
    (order 2), "yoshida4" (Yoshida 1990 triple jump), "suzuki4" (Suzuki 1990), "mclachlan4"
    (McLachlan 1995), "blanes_moan_s6" and "blanes_moan_srkn6" (Blanes & Moan 2002; order 4, 6
    stages), "yoshida6" (Yoshida 1990, solution A), "kahan_li6" (Kahan & Li 1997, s9odr6a),
    "yoshida8" (Yoshida 1990, solution D), "kahan_li8" (Kahan & Li 1997, s17odr8a). The
    compositions of the Strang step keep their order with the split free flow of an asymmetric
    body; the two splittings of Blanes & Moan need the exact free flow, and ``check`` refuses them
    on an asymmetric rigid body.

    Traits: the composition's order; symplectic (every sub-step is the exact flow of a Hamiltonian);
    energy not conserved (bounded, O(hᵖ), over exponentially long times); momentum maps conserved:
    every sub-step is the exact Hamiltonian flow of V or of a part of T. A symmetry of ℓ leaves V
    and T invariant; it leaves each part of T invariant too, because the parts are functions of μ
    alone (invariant under every left action g ↦ kg, which leaves μ unchanged), except for the
    principal-axis rotations of an asymmetric body, which only a right (body-frame) action could
    break, and an asymmetric body has no continuous body-frame symmetry (that needs two equal
    moments, where the free flow is exact). Noether's theorem for each sub-flow then keeps the
    momentum map, e.g. the heavy top's vertical angular momentum ⟨μ, Rᵀe₃⟩, to round-off.

    Scope: no holonomic or nonholonomic constraints, no external force, a ``MechanicalSystem`` with
    a constant inertia, block-diagonal over the factors of a product and the bodies of a power
    group; refused by name before anything compiles. ``sol.eta[k]`` = 𝕀⁻¹μ_k; ``sol.stats``
    reports 0 iterations and residual 0 (nothing is solved). Each step costs m gradients of V
    (the last kick's gradient is carried into the next step) and m free flows.
    """

    def __init__(self, composition: Composition = "strang") -> None:
        if composition not in COMPOSITIONS:
            raise ValueError(f"composition must be one of {COMPOSITIONS}, got {composition!r}")
        self.composition: Composition = composition
        self.sequence: KickFreeSequence = SEQUENCES[composition]
        self.name = f"Splitting({composition!r})"

    @property
    def traits(self) -> Traits:
        return Traits(order=self.sequence.order, symplectic=True, conserves_energy=False,
                      conserves_momentum_maps=True)

    @property
    def scope(self) -> Scope:
        return Scope(holonomic="refused", nonholonomic="refused", inertia="constant", forces="refused")

    @property
    def cache_key(self) -> Hashable:
        """The composition is part of the key (the ensemble driver traces ``start``, which sets the
        coefficients); the compiled code is the same for every composition, so the persistent
        compilation cache serves the second one from disk."""
        return ("Splitting", self.composition)

    def check(self, problem: Problem[P]) -> None:
        """``Method.check`` (no constraints or forces; a MechanicalSystem with constant inertia), and a
        configuration space and inertia whose free flow this family splits exactly (TypeError for
        the space, ValueError for the inertia), and for "blanes_moan_s6" and "blanes_moan_srkn6"
        the exact free flow (no asymmetric rigid body)."""
        super().check(problem)
        self._free_flow(problem)

    def _free_flow(self, problem: Problem[P]) -> FreeFlow:
        """The system's free flow, built once per system and kept with it (``integrate`` checks and
        builds the step several times per run; each build takes 𝕀 apart)."""
        system = cast(MechanicalSystem[Any], problem.system)
        inertia = system.constant_inertia
        assert inertia is not None

        def built() -> FreeFlow:
            try:
                return free_flow(cast(LieGroup[object], problem.group), np.asarray(inertia, dtype=np.float64))
            except UnsupportedFreeFlow as exc:
                raise exc.kind(f"{self.name}: {exc}") from None

        flow = kept(system, _FREE_FLOW, built)
        if self.sequence.exact_free_flow and not flow.exact:
            raise ValueError(
                f"{self.name} is a splitting method that needs the exact free flow, which liemech has on Rⁿ, "
                "SO(2) and SE(2) and for axisymmetric or spherical rigid bodies; an asymmetric rigid body (three "
                "distinct principal moments) has only the symmetric order-2 split, under which its order falls to 2: "
                "use a composition, e.g. Splitting('mclachlan4'), Splitting('yoshida4') or Splitting('kahan_li6')")
        return flow

    def compiled_step(self, problem: Problem[P]) -> CompiledStep:
        """The step, built once per system and composition and kept with the system."""
        self.check(problem)
        scheme = kept(problem.system, (_STEP, self.composition, *problem.step_key),
                      lambda: SplittingStep(self.sequence, problem, self._free_flow(problem)))
        return CompiledStep(scheme.step, scheme.start)


class _Carry(NamedTuple):
    g: object
    mu: jax.Array
    lam: jax.Array  # always empty
    force: jax.Array  # f = −∇V(g) at the node, the first kick's (the last kick of the step before computed it)
    first_kick: jax.Array  # b₀
    coefficients: jax.Array  # (MAX_STAGES, 2): (a_i, b_i), i = 1..m, then zeros
    stages: jax.Array  # m


MAX_STAGES: Final = max(sequence.stages for sequence in SEQUENCES.values())

_FREE_FLOW: Final = ("Splitting", "free flow")
_STEP: Final = ("Splitting", "step")
_START: Final = ("Splitting", "start")
"""Keys of what is kept with the system (``kept``): its free flow, the step of each
composition (whose coefficients are device arrays: a run's start then hands XLA only g and μ),
and the compiled start of the carry (the force −∇V at the initial node, which eagerly costs a
dispatch per operation)."""


class SplittingStep:
    """One step Ψ_h of a kick–free-flow sequence for one problem (pure, traceable). The sequence
    travels in the carry (``start``), padded to ``MAX_STAGES``, so that the compiled code is the same
    for every composition (the persistent compilation cache then serves all but the first)."""

    def __init__(self, sequence: KickFreeSequence, problem: Problem[P], flow: FreeFlow) -> None:
        self._system = cast(MechanicalSystem[Any], problem.system)
        self._flow = flow
        self._zero_velocity = np.zeros(problem.group.dim)
        coefficients = np.zeros((MAX_STAGES, 2))
        coefficients[: sequence.stages] = np.stack([sequence.frees, sequence.kicks[1:]], axis=1)
        # device arrays made now even where the step is built inside a trace (an ensemble's, a
        # flow's): it is kept with the system, and a traced value must not outlive its trace
        with jax.ensure_compile_time_eval():
            self._constants = (jnp.asarray(sequence.kicks[0]), jnp.asarray(coefficients),
                               jnp.asarray(sequence.stages))

    def _force(self, g: object) -> jax.Array:
        """f = −∇V(g) (the system's force at zero velocity: constant inertia)."""
        return jnp.asarray(self._system.force(g, self._zero_velocity))

    def start(self, state: NodeState[Any]) -> _Carry:
        start = owned_jit(self._system, _START, self._start)
        return start(state.g, state.mu, *self._constants)

    def _start(self, g: object, mu: ArrayLike, first_kick: ArrayLike, coefficients: ArrayLike,
               stages: ArrayLike) -> _Carry:
        """The carry at (g, μ) (compiled once per system: −∇V depends on the system alone)."""
        g = jax.tree.map(lambda leaf: jnp.asarray(leaf, dtype=float), g)
        return _Carry(g, jnp.asarray(mu, dtype=float), jnp.zeros(0), self._force(g), jnp.asarray(first_kick),
                      jnp.asarray(coefficients), jnp.asarray(stages))

    def step(self, carry: object, h: jax.Array) -> tuple[object, Node]:
        c = cast(_Carry, carry)
        mu = c.mu + (c.first_kick * h) * c.force

        def stage(i: jax.Array, state: tuple[object, jax.Array, jax.Array]) -> tuple[object, jax.Array, jax.Array]:
            g, mu, _ = state
            g, mu = self._flow(g, mu, c.coefficients[i, 0] * h)
            f = self._force(g)
            return g, mu + (c.coefficients[i, 1] * h) * f, f

        # The stages run in a loop, not unrolled: the compiled step, and its compile time, do not
        # grow with the number of stages (17 for kahan_li8).
        g, mu, f = jax.lax.fori_loop(0, c.stages, stage, (c.g, mu, c.force))
        eta = jnp.asarray(self._system.velocity(g, mu))
        return c._replace(g=g, mu=mu, force=f), node(g, mu, eta, c.lam, 0, 0.0, StepStatus.CONVERGED)
