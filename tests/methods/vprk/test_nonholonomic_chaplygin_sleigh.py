"""The Chaplygin sleigh (m = 1, a = 0.5, I_c = 0.2, ξ₀ = (1, 0, 2)): its reduced equations against
their closed form, the nonholonomic VPRK against them, the parasitic root of the paper's carried
multiplier at the attracting straight-line motion, and long runs of the default consistent
closure (energy error without growth, the limit velocity, a multiplier that decays)."""

import math
from typing import cast

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import liemech as lm
from liemech.methods.method import NodeState
from liemech.methods.vprk.scheme import NonholonomicMultiplier, VPRKEquations
from liemech.systems import ChaplyginSleigh
from tests.perturbation import Perturbation

SLEIGH = ChaplyginSleigh()
SPRUNG = ChaplyginSleigh(stiffness=1.3, pose0=np.array([0.7, -0.4, 0.9]), velocity0=np.array([0.8, 0.0, -1.1]),
                         t_final=2.0)
V_INF, RATE = math.sqrt(2.8), 0.5 * math.sqrt(2.8) / 0.45  # √(2E/m) with E = 1.4; c = m a v∞ / (I_c + m a²)
LAM_MAX = (0.2 / 0.45) * math.sqrt(1.0 / 0.45) * 2.8 / 2.0  # max of λ = (I_c/I) m v ω, at tanh·sech = ½


def test_reference_follows_the_closed_form() -> None:
    """Without the spring, v² + (I/m)ω² = v∞² and v̇ = (ma/I)(v∞² − v²) (I = I_c + ma²) give
    v = v∞ tanh(ct + t₀), ω = √(m/I) v∞ sech(ct + t₀), tanh t₀ = v₀/v∞; DOP853 on the reduced
    equations follows them, and E, λ₀, the limit velocity and c are those of the data."""
    assert abs(SLEIGH.energy(np.eye(3), SLEIGH.velocity0) - 1.4) <= 1e-15
    assert np.max(np.abs(SLEIGH.limit_velocity() - np.array([V_INF, 0.0, 0.0]))) <= 1e-15
    assert abs(SLEIGH.decay_rate() - RATE) <= 1e-14 and abs(RATE - 1.85924) <= 1e-5
    times = np.array([0.0, 0.5, 1.0, 2.0, 5.0, 10.0])
    gs, xis, lams = SLEIGH.reference(times)
    phase = RATE * times + math.atanh(1.0 / V_INF)
    assert np.max(np.abs(xis[:, 0] - V_INF * np.tanh(phase))) <= 1e-10
    assert np.max(np.abs(xis[:, 2] - math.sqrt(1.0 / 0.45) * V_INF / np.cosh(phase))) <= 1e-10
    assert max(abs(SLEIGH.energy(g, xi) - 1.4) for g, xi in zip(gs, xis)) <= 1e-10
    lam0 = SLEIGH.problem().lam0
    assert lam0 is not None and abs(float(lam0[0]) - lams[0]) <= 1e-15 and abs(lams[0] - 8.0 / 9.0) <= 1e-15


def test_multiplier_formula_with_the_spring() -> None:
    """λ = m v ω I_c/(I_c + m a²) + k(y cos θ − x sin θ) equals the library's λ of the continuous
    equations at a state with the spring stretched."""
    lam0 = SPRUNG.problem().lam0
    x, y, theta = (float(c) for c in SPRUNG.pose0)
    assert lam0 is not None
    assert abs(float(lam0[0]) - SPRUNG.multiplier(x, y, theta, 0.8, -1.1)) <= 1e-14


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="mass must be positive and finite, got 0"):
        ChaplyginSleigh(mass=0.0)
    with pytest.raises(ValueError, match="stiffness must be non-negative"):
        ChaplyginSleigh(stiffness=-1.0)
    with pytest.raises(ValueError, match="offset must be a finite number"):
        ChaplyginSleigh(offset=math.nan)
    with pytest.raises(ValueError, match="straight-line sliding only with stiffness = 0"):
        SPRUNG.limit_velocity()


@pytest.mark.slow
def test_sprung_sleigh_follows_its_reduced_equations() -> None:
    """With the spring (k = 1.3), Lobatto-4 at h = 0.025 to T = 2 against DOP853: g, ξ and λ agree
    to 1e-9 (errors ~1e-12), v₂ = 0 at every node, and the energy is conserved to 1e-10."""
    times = np.array([SPRUNG.t_final])
    g_ref, xi_ref, lam_ref = SPRUNG.reference(times)
    sol = lm.integrate(SPRUNG.problem(), lm.VPRK(lm.lobatto(4)), h=0.025, t_final=SPRUNG.t_final)
    assert sol.lam is not None
    assert float(np.max(np.abs(sol.g[-1] - g_ref[-1]))) <= 1e-9
    assert float(np.max(np.abs(sol.eta[-1] - xi_ref[-1]))) <= 1e-9
    assert abs(float(sol.lam[-1, 0]) - float(lam_ref[-1])) <= 1e-9
    assert float(np.max(np.abs(sol.eta[:, 1]))) <= 1e-14
    energy = np.array([SPRUNG.energy(g, xi) for g, xi in zip(sol.points(), sol.eta)])
    assert float(np.max(np.abs(energy - energy[0]))) <= 1e-10


def step_map_roots(s: int, multiplier: NonholonomicMultiplier, h: float) -> lm.Vector:
    """Eigenvalues of the linearised step map (μ_k, λ_k) ↦ (μ_{k+1}, λ_{k+1}) at the straight-line
    motion ξ = (v∞, 0, 0), λ = 0 (g does not enter: no potential, left-invariant), by modulus;
    jax.jacfwd through Newton's root."""
    equations = VPRKEquations(lm.VPRK(lm.lobatto(s), nonholonomic_multiplier=multiplier), SLEIGH.problem())
    inertia = jnp.asarray(SLEIGH.inertia_matrix())

    def step(z: jax.Array) -> jax.Array:
        mu, lam = z[:3], z[3:]
        # Traced arrays stand in for the node's numpy arrays.
        state = NodeState(np.eye(3), cast(lm.Vector, mu), cast(lm.Vector, jnp.linalg.solve(inertia, mu)),
                          cast(lm.Vector, lam))
        _, node = equations.step(equations.start(state), jnp.asarray(h))
        return jnp.concatenate([node.mu, node.lam])

    z = jnp.concatenate([inertia @ jnp.array([V_INF, 0.0, 0.0]), jnp.zeros(1)])
    roots = np.linalg.eigvals(np.asarray(jax.jit(jax.jacfwd(step))(z)))
    return np.asarray(roots[np.argsort(-np.abs(roots))], dtype=np.complex128)


@pytest.mark.slow
@pytest.mark.parametrize("s", [2, 3])
def test_the_carried_multiplier_has_a_parasitic_root(s: int) -> None:
    """The cause of the paper's scheme's instability: besides 1 (the family of straight lines) and
    the physical e^{−ch} (c = 1.8592), its step map on (μ, λ) has ρe^{+ch}, ρ = R(∞) = (−1)^{s−1}:
    the two multiply to ρ (to 1e-14 for s = 2, 5e-8 for s = 3 at h = 0.05), so λ grows like e^{ct}
    (it takes the Lobatto-2 sleigh at h = 0.05 from E = 1.40 to 0.42 by t = 5, sliding backwards by
    t = 8). The consistent closure has no such root: below 1 only the physical one, then zeros."""
    h = 0.05
    carried = step_map_roots(s, "carried", h)
    rho = (-1.0) ** (s - 1)
    assert abs(carried[0] - rho * math.exp(RATE * h)) <= 1e-4
    assert abs(carried[1] - 1.0) <= 1e-10 and abs(carried[2] - math.exp(-RATE * h)) <= 1e-4
    assert abs(carried[0] * carried[2] - rho) <= 1e-7 and abs(carried[3]) <= 1e-10
    consistent = step_map_roots(s, "consistent", h)
    assert abs(consistent[0] - 1.0) <= 1e-10 and abs(consistent[1] - math.exp(-RATE * h)) <= 1e-4
    assert np.max(np.abs(consistent[2:])) <= 1e-10


@pytest.mark.slow
@pytest.mark.parametrize("s", [2, 3])
def test_the_carried_closure_stops_before_it_goes_wrong(s: int) -> None:
    """h = 0.05, T = 8. Without a limit, the carried λ's deviation from λ(g, η) grows like the
    parasitic root, e^{ct} (c = RATE, the decay rate of the physical motion): its fitted rate over
    t ∈ [2, 4.5] is c to 5 %. With the default limit the run stops with a ConvergenceError naming the
    carried multiplier at the first step whose deviation exceeds 1, while the energy is still
    right to 1e-3 (unguarded, it is off by 1 % (s = 3) to 70 % (s = 2) by t = 5)."""
    free = lm.VPRK(lm.lobatto(s), nonholonomic_multiplier="carried", carried_drift_limit=None)
    sol = lm.integrate(SLEIGH.problem(), free, h=0.05, t_final=4.5)
    deviation, t = sol.extras["multiplier_deviation"], sol.t[1:]
    window = t >= 2.0
    rate = np.polyfit(t[window], np.log(deviation[window]), 1)[0]
    assert abs(rate / RATE - 1.0) <= 0.05
    with pytest.raises(lm.ConvergenceError, match="carried multiplier λ left the continuous λ.*consistent") as failure:
        lm.integrate(SLEIGH.problem(), lm.VPRK(lm.lobatto(s), nonholonomic_multiplier="carried"), h=0.05, t_final=8.0)
    first_over = int(np.argmax(deviation > 1.0))
    assert deviation[first_over] > 1.0 and failure.value.step == first_over
    kept = lm.integrate(SLEIGH.problem(), free, h=0.05, n_steps=failure.value.step)
    energy = 0.5 * np.einsum("ki,ij,kj->k", kept.eta, SLEIGH.inertia_matrix(), kept.eta)
    assert float(np.max(np.abs(energy / 1.4 - 1.0))) <= 1e-3


@pytest.mark.slow
@pytest.mark.long_run
@pytest.mark.parametrize(("s", "retraction"), [(2, "cay"), (3, "cay"), (4, "cay"), (3, "exp")])
def test_consistent_closure_keeps_the_sleigh(s: int, retraction: lm.RetractionKind, perturb: Perturbation) -> None:
    """Default VPRK, h = 0.1 … 0.01, T = 50: the relative energy error after t = 5 stays at its
    level up to t = 5 (the transient, where it is made); the sleigh ends at ξ∞ = (v∞, 0, 0), its
    multiplier bounded by the exact maximum 0.9275 (+5%) and tending to 0. The final velocity is
    within 1e-3 of v∞ except for Lobatto-2 at h = 0.1, whose O(h²) transient costs 1.6e-3 of the
    energy and so 1.3e-3 of v∞ (the paper's carried closure loses the same energy by t = 2)."""
    problem, inertia = perturb.problem(SLEIGH.problem()), SLEIGH.inertia_matrix()
    method = lm.VPRK(lm.lobatto(s), retraction)
    for h in (0.1, 0.05, 0.02, 0.01):
        sol = lm.integrate(problem, method, h=h, t_final=50.0)
        assert sol.lam is not None
        error = np.abs(0.5 * np.einsum("ki,ij,kj->k", sol.eta, inertia, sol.eta) / 1.4 - 1.0)  # no potential
        transient = sol.t <= 5.0
        assert float(np.max(error[~transient])) <= 1.01 * float(np.max(error[transient])) + 1e-13
        speed_error = abs(float(sol.eta[-1, 0]) - V_INF)
        assert speed_error <= (1.5e-3 if (s, h) == (2, 0.1) else 1e-3)
        assert speed_error <= 0.5 * V_INF * float(error[-1]) * 1.01 + 1e-12  # all of it from the energy
        assert abs(float(sol.eta[-1, 2])) <= 1e-12 and float(np.max(np.abs(sol.eta[:, 1]))) <= 1e-14
        assert float(np.max(np.abs(sol.lam))) <= 1.05 * LAM_MAX and abs(float(sol.lam[-1, 0])) <= 1e-12
