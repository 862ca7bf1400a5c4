"""BS99, the Bobenko–Suris scheme for the Lagrange top (Kinon, Betsch & Schneider 2023, §6.2; their
App. A.8 is missing from the text, so the scheme is reconstructed from their code metis), in the
spatial symmetry axis d₃ and the angular momentum m about the fixed tip:

    m^{n+1} = mⁿ + h mgℓ e₃ × d₃ⁿ,      d₃^{n+1} = d₃ⁿ + (h/I₁′) m^{n+1} × ½(d₃ⁿ + d₃^{n+1}),

with I₁′ = I₁ + mℓ² the transverse inertia about the tip. The second equation is the Cayley
rotation d₃^{n+1} = cay(h m^{n+1}/I₁′) d₃ⁿ. The scheme is first order, keeps |d₃| = 1, m·e₃ = L₃ and
m·d₃ exactly, and does not conserve energy.

liemech runs it on the director-formulated symmetric heavy top (q = [φ; d₁; d₂; d₃] ∈ R¹²,
M = diag(m I, E₁I, E₂I, E₃I) with E₁ = E₂, V = mg φ₃, tip at the origin, as
``liemech.systems.GyroscopicTop``). BS99 does not carry the spin angle about d₃, so the frame is
advanced as R^{n+1} = cay(h m^{n+1}/I₁′) Rⁿ exp(hσ ê₃) with the (exactly conserved) spin rate
σ = (m·d₃)(1/I₃ − 1/I₁′); this leaves d₃ and m exactly those of BS99. Then q^{n+1} = [ℓd₃; d₁; d₂; d₃]
and p^{n+1} = M(ω × q_i)_i with ω = m/I₁′ + σd₃, which satisfy all nine position and velocity
constraints and give back Σ_i q_i × p_i = m^{n+1} to round-off.
"""

from collections.abc import Hashable
from typing import Any, NamedTuple, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.matrix_checks import check_rotation
from liemech.groups.so3 import exp_matrix, skew
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.methods.compiled import CompiledMethod, CompiledStep, Node, StepStatus, node
from liemech.methods.method import NodeState, Scope, Traits
from liemech.types import Vector

P = TypeVar("P")

_TOL = 1e-10


def _cayley(a: jax.Array) -> jax.Array:
    """cay(â) = I + 4/(4 + |a|²) (â + â²/2)."""
    A = jnp.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return jnp.eye(3) + 4.0 / (4.0 + a @ a) * (A + 0.5 * (A @ A))


class BobenkoSurisTop(CompiledMethod):
    """BS99 (Kinon, Betsch & Schneider 2023, §6.2) on a director-formulated symmetric heavy top with its tip
    fixed at the origin. Its parameters (m, ℓ, E_i, mg) are read from the problem. Explicit (no
    Newton); ``sol.eta`` is M⁻¹p; ``sol.lam`` is None."""

    def __init__(self) -> None:
        self.name = "BobenkoSurisTop()"

    @property
    def traits(self) -> Traits:
        return Traits(order=1, symplectic=True, conserves_energy=False, conserves_momentum_maps=True,
                      constraints_at_step_end=("position", "velocity"))

    @property
    def cache_key(self) -> Hashable:
        return ("BobenkoSurisTop",)

    @property
    def scope(self) -> Scope:
        return Scope(groups="Rn", holonomic="optional", nonholonomic="refused", inertia="constant")

    def check(self, problem: Problem[P]) -> None:
        """The scope, and a configuration space Rn(12) (the director top's)."""
        super().check(problem)
        if problem.group.dim != 12:
            raise TypeError(f"{self.name} works on the director top, q = [φ; d₁; d₂; d₃] in Rn(12); "
                            f"got {problem.group!r}")

    def compiled_step(self, problem: Problem[P]) -> CompiledStep:
        self.check(problem)
        scheme = BobenkoSurisStep(cast(Problem[Vector], problem))
        return CompiledStep(scheme.step, scheme.start)


def _check_rigid(problem: Problem[Vector], ell: float) -> None:
    """ValueError unless g0 holds an orthonormal right-handed frame, η₀ is a rigid rotation of it
    about the tip (q̇_i = ω × q_i), and the problem's holonomic constraint holds on every rotated
    frame: BS99 keeps the frame rigid and ignores any other constraint."""
    q0, v0 = problem.g0, problem.eta0
    frame = q0[3:].reshape(3, 3)  # rows d₁, d₂, d₃
    check_rotation(frame, "the director frame (d₁, d₂, d₃) of g0")
    # v_i = ω × q_i = −q̂_i ω for the four blocks: ω by least squares, then the defect.
    stacked = np.concatenate([-skew(q) for q in q0.reshape(4, 3)])
    omega = np.linalg.lstsq(stacked, v0, rcond=None)[0]
    defect = float(np.max(np.abs(stacked @ omega - v0)))
    if defect > 1e-9 * max(1.0, float(np.max(np.abs(v0)))):
        raise ValueError(f"BobenkoSurisTop needs a rigid rotation about the tip, q̇_i = ω × q_i: eta0 differs "
                         f"from the nearest one by {defect:.3e}")
    if problem.holonomic is not None:
        for angle in (np.array([0.3, -0.2, 0.5]), np.array([-1.1, 0.4, 0.7]), np.array([0.0, 2.0, -0.3])):
            rotated = (q0.reshape(4, 3) @ exp_matrix(angle).T).ravel()
            violation = float(np.max(np.abs(problem.holonomic.value(rotated))))
            if violation > 1e-8 * max(1.0, ell):
                raise ValueError("BobenkoSurisTop honours only the director top's constraints (an orthonormal "
                                 "frame with φ = ℓd₃); the problem's holonomic constraint is violated by a rigid "
                                 f"rotation of g0 about the tip (|Φ| = {violation:.3e})")


class _Carry(NamedTuple):
    g: jax.Array
    mu: jax.Array
    lam: jax.Array  # always empty
    ell: jax.Array  # ℓ = |φ| of the initial node (tip at the origin, φ = ℓ d₃)


class BobenkoSurisStep:
    """The explicit BS99 step of one director top, checked once (ValueError if the problem is not
    one: mass matrix, potential, tip, an orthonormal frame moving rigidly, and constraints that a
    rigid rotation about the tip keeps, the only ones BS99 honours)."""

    def __init__(self, problem: Problem[Vector]) -> None:
        system = cast(MechanicalSystem[Vector], problem.system)
        q0 = problem.g0
        M = system.constant_inertia
        assert M is not None
        blocks = [M[3 * i : 3 * i + 3, 3 * i : 3 * i + 3] for i in range(4)]
        scalars = [float(B[0, 0]) for B in blocks]
        off_block = M.copy()
        for i in range(4):
            off_block[3 * i : 3 * i + 3, 3 * i : 3 * i + 3] = 0.0
        if any(not np.allclose(B, s * np.eye(3), rtol=_TOL, atol=0.0) for B, s in zip(blocks, scalars)) or np.any(off_block):
            raise ValueError("BobenkoSurisTop needs the director mass matrix diag(m I, E₁I, E₂I, E₃I)")
        mass, E1, E2, E3 = scalars
        if not np.isclose(E1, E2, rtol=_TOL, atol=0.0):
            raise ValueError(f"BobenkoSurisTop needs a symmetric top, E₁ = E₂; got {E1!r}, {E2!r}")
        weight = system.potential_gradient(q0)
        if np.any(np.delete(weight, 2)) or not np.allclose(system.potential_gradient(2.0 * q0 + 1.0), weight):
            raise ValueError("BobenkoSurisTop needs the gravity potential V = mg φ₃")
        ell = float(np.linalg.norm(q0[:3]))
        if not np.allclose(q0[:3], ell * q0[9:], rtol=0.0, atol=_TOL * max(1.0, ell)):
            raise ValueError("BobenkoSurisTop needs the tip at the origin, φ = ℓ d₃")
        _check_rigid(problem, ell)
        self.M = jnp.asarray(M)
        self.weight = float(weight[2])  # mg
        self.mass, self.transverse_at_centre = mass, E2 + E3  # I₁′ = I₁ + mℓ², I₁ = E₂ + E₃
        self.axial = E1 + E2  # I₃

    def start(self, state: NodeState[Any]) -> _Carry:
        q = jnp.asarray(state.g, dtype=float)
        return _Carry(q, jnp.asarray(state.mu, dtype=float), jnp.zeros(0), jnp.sqrt(q[:3] @ q[:3]))

    def step(self, carry: object, h: jax.Array) -> tuple[object, Node]:
        c = cast(_Carry, carry)
        q, p, ell = c.g, c.mu, c.ell
        transverse = self.transverse_at_centre + self.mass * ell**2
        frame = q[3:].reshape(3, 3)  # rows d₁, d₂, d₃
        d3 = frame[2]
        kick = h * self.weight * ell * jnp.array([-d3[1], d3[0], 0.0])  # h mgℓ e₃ × d₃
        momentum = jnp.sum(jnp.cross(q.reshape(4, 3), p.reshape(4, 3)), axis=0) + kick  # Σ q_i × p_i + kick
        spin = (momentum @ d3) * (1.0 / self.axial - 1.0 / transverse)
        angle = h * spin
        rotated = frame @ _cayley(h / transverse * momentum).T  # rows: cay(·) d_i
        d3 = rotated[2]
        d1 = jnp.cos(angle) * rotated[0] + jnp.sin(angle) * rotated[1]  # R exp(hσ ê₃): the body axes turn about d₃
        # Re-orthonormalise about BS99's d₃ so that the frame's round-off does not accumulate.
        d1 = d1 - (d1 @ d3) / (d3 @ d3) * d3
        d1 = d1 / jnp.sqrt(d1 @ d1)
        d2 = jnp.cross(d3, d1) / jnp.sqrt(d3 @ d3)
        omega = momentum / transverse + spin * d3
        q1 = jnp.concatenate([ell * d3, d1, d2, d3])
        v1 = jnp.cross(omega, q1.reshape(4, 3)).ravel()  # ω × q_i for every block
        p1 = self.M @ v1
        lam = c.lam
        return _Carry(q1, p1, lam, ell), node(q1, p1, v1, lam, 0, 0.0, StepStatus.CONVERGED)
