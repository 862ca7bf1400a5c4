"""First integrals of rolling bodies beyond the energy, along long runs (T = 200): Jellett's and
Routh's integrals of the Routh sphere (``RollingBody`` with a spherical surface and an offset centre
of mass) and the two Appell–Korteweg integrals of the rolling disc (``RollingDisc``).

Each integral is first shown to be one of the continuous motion, against a reference independent of
liemech's variational machinery (Newton–Euler equations by DOP853 at rtol 1e-12), and then measured
along Lobatto-2 runs at two step sizes: its deviation stays bounded (no drift: the largest deviation
over the second half of the run is within 1.5 times that over the first) and shrinks with h at the
method's order 2.

**Routh sphere.** A ball of radius ρ whose centre of mass C lies at distance a from its geometric
centre O on its symmetry axis e₃, with inertia 𝕀 = diag(I₁, I₁, I₃) about C, rolling without
slipping on a horizontal plane (Routh 1884, *Advanced rigid dynamics*, §§ 238–244; Borisov &
Mamaev 2002, "Rolling of a rigid body on a plane and sphere. Hierarchy of dynamics", Regul. Chaotic
Dyn. 7, 177–200; Lynch & Bustamante 2009, "Precession and recession of the rock'n'roller",
J. Phys. A 42, 425203). In the body frame at C, with γ = Rᵀe_z the upward vertical, ω = Ω the body
angular velocity and r = a e₃ − ρ γ the vector from C to the contact point P (liemech:
``body.contact_offset(R)``, the sphere built with ``com = (0, 0, −a)``):

- Jellett: J = ⟨M, r⟩ = ⟨𝕀ω, r⟩, M = 𝕀ω + m r × (ω × r) the angular momentum about P (the second
  term is orthogonal to r). From 𝕀ω̇ = 𝕀ω × ω + r × F and ṙ = −ρ γ̇ = (r − a e₃) × ω:
  dJ/dt = −a ⟨𝕀ω, e₃ × ω⟩ = −a (I₂ − I₁) ω₁ω₂ = 0.
- Routh: R = ω₃ √(I₁I₃ + m ⟨r, 𝕀r⟩) = ω₃ √(I₁I₃ + m (I₁ ρ²(1 − γ₃²) + I₃ (a − ργ₃)²)). The third
  component of the Newton–Euler equations, the contact force eliminated, is ω̇₃ = −½ ω₃ γ̇₃ D′(γ₃)/D(γ₃)
  with D = I₁I₃ + m ⟨r, 𝕀r⟩ a function of γ₃ alone; ``test_routh_sphere_integrals_of_newton_euler``
  checks both rate identities at random states to round-off.

**Rolling disc** (Appell 1900, Rend. Circ. Mat. Palermo 14; Korteweg 1899, Nieuw Arch. Wisk. 4;
Chaplygin 1897; see O'Reilly 1996, "The dynamics of rolling disks and sliding disks", Nonlinear
Dyn. 10, 287–305, and Borisov, Mamaev & Kilin 2003, "Dynamics of rolling disk", Regul. Chaotic Dyn.
8, 201–212). Radius r, mass m, moments I₁ (diameter) and I₃ (axis) about the centre. With n = Re₃
the normal, θ = arccos n_z ∈ (0, π) its angle to the vertical (θ = π/2 upright), the Resal frame
E₃ = n, E₂ = (e_z − cos θ n)/sin θ (in the disc's plane, from the contact point to the centre),
E₁ = E₂ × E₃ (horizontal), and the components ω_i = ⟨RΩ, E_i⟩ of the angular velocity: ω₁ = θ̇,
ω₃ = Ω₃ (the spin about the axis), ω₂ = ψ̇ sin θ (ψ the precession angle). Newton's equation for the
centre, v = ω × r E₂, and Euler's about it, the contact force eliminated, give in the E₃ and E₂
components (the frame turns at (ω₁, ω₂, ω₂ cot θ))

    (I₃ + m r²) ω̇₃ = m r² ω₁ω₂,        I₁ ω̇₂ = ω₁ (I₃ ω₃ − I₁ ω₂ cot θ),

and the E₁ component, at ω₁ = 0, is the steady-motion relation of ``RollingDisc.steady``. Dividing
by ω₁ = θ̇ eliminates time: (ω₃, ω₂) is a function of θ along every motion, the solution of

    dω₃/dθ = m r² ω₂/(I₃ + m r²),      dω₂/dθ = (I₃/I₁) ω₃ − ω₂ cot θ,

equivalently ω₃″ + cot θ ω₃′ − k ω₃ = 0 with k = m r² I₃/(I₁(I₃ + m r²)) (Appell's and Korteweg's
hypergeometric equation). With Φ(θ) its fundamental matrix (Φ(θ₀) = 1), the two Appell–Korteweg
integrals, linear in the angular velocity, are (c₃, c₂) = Φ(θ)⁻¹(ω₃, ω₂); here Φ comes from DOP853
at rtol 1e-12."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import liemech as lm
from liemech.groups.so3 import exp_matrix
from liemech.systems import RollingBody, RollingDisc
from liemech.systems.body_on_plane import Pose
from tests.perturbation import Perturbation

E3 = np.array([0.0, 0.0, 1.0])

# The Routh sphere: radius 1, the centre of mass 0.3 below the geometric centre along e₃, m = g = 1,
# 𝕀 = diag(0.35, 0.35, 0.5). From a tilt of 1.5 rad it rocks over its equator: γ₃ runs between
# −0.41 and 0.92 and ω₃ between 0.52 and 0.69 over T = 200.
SPHERE_RADIUS, OFFSET, MASS, GRAVITY = 1.0, 0.3, 1.0, 1.0
I1, I3 = 0.35, 0.5
SPHERE_INERTIA = np.diag([I1, I1, I3])
SPHERE = RollingBody.ellipsoid((SPHERE_RADIUS,) * 3, MASS, SPHERE_INERTIA, (0.0, 0.0, -OFFSET), gravity=GRAVITY)
SPHERE_R0 = exp_matrix(np.array([1.5, 0.0, 0.0]))
SPHERE_OMEGA0 = np.array([0.8, 0.3, 0.6])

# The thin uniform disc (r = m = g = 1, I₁ = 1/4, I₃ = 1/2), tilted by 1.4 rad, rolling and
# wobbling: θ runs between 0.85 and 1.90 (it leans to both sides of upright), ω₂ between −1.4 and 1.1.
DISC = RollingDisc()
DISC_R0 = exp_matrix(np.array([1.4, 0.0, 0.0]))
DISC_OMEGA0 = np.array([0.8, 0.0, 1.0])

T_LONG = 200.0
STEPS = (0.2, 0.1)


# ----------------------------------------------------------------------------------------------
# Routh sphere
# ----------------------------------------------------------------------------------------------

def sphere_rates(gamma: lm.Vector, omega: lm.Vector) -> tuple[lm.Vector, lm.Vector]:
    """(γ̇, ω̇) of the rolling sphere by Newton–Euler in the body frame at the centre of mass: with
    r = a e₃ − ργ and V = r × ω the velocity of the centre of mass, Newton m(V̇ + ω × V) = F − m g γ
    and Euler 𝕀ω̇ + ω × 𝕀ω = r × F give, F eliminated,
    (𝕀 + m(|r|² 1 − r rᵀ)) ω̇ = 𝕀ω × ω + m r × (g γ − ω × ṙ − ω × (ω × r)), γ̇ = γ × ω, ṙ = −ρ γ̇.
    Written with Python floats (DOP853 calls it ~10⁵ times)."""
    g1, g2, g3 = (float(v) for v in gamma)
    w1, w2, w3 = (float(v) for v in omega)
    rho, a, m, g = SPHERE_RADIUS, OFFSET, MASS, GRAVITY
    r1, r2, r3 = -rho * g1, -rho * g2, a - rho * g3
    d1, d2, d3 = g2 * w3 - g3 * w2, g3 * w1 - g1 * w3, g1 * w2 - g2 * w1          # γ̇ = γ × ω
    s1, s2, s3 = -rho * d1, -rho * d2, -rho * d3                                     # ṙ
    q1, q2, q3 = w2 * s3 - w3 * s2, w3 * s1 - w1 * s3, w1 * s2 - w2 * s1             # ω × ṙ
    u1, u2, u3 = w2 * r3 - w3 * r2, w3 * r1 - w1 * r3, w1 * r2 - w2 * r1             # ω × r
    p1 = g * g1 - q1 - (w2 * u3 - w3 * u2)
    p2 = g * g2 - q2 - (w3 * u1 - w1 * u3)
    p3 = g * g3 - q3 - (w1 * u2 - w2 * u1)
    j1, j2, j3 = I1 * w1, I1 * w2, I3 * w3
    rhs = np.array([j2 * w3 - j3 * w2 + m * (r2 * p3 - r3 * p2),
                    j3 * w1 - j1 * w3 + m * (r3 * p1 - r1 * p3),
                    j1 * w2 - j2 * w1 + m * (r1 * p2 - r2 * p1)])
    r = np.array([r1, r2, r3])
    lhs = SPHERE_INERTIA + m * (float(r @ r) * np.eye(3) - np.outer(r, r))
    return np.array([d1, d2, d3]), np.linalg.solve(lhs, rhs)


def sphere_reference(gamma0: lm.Vector, omega0: lm.Vector, times: lm.Vector) -> tuple[lm.Matrix, lm.Matrix]:
    """γ and ω at ``times`` by DOP853 (rtol 1e-12, atol 1e-14) on ``sphere_rates``."""

    def rates(t: float, y: lm.Vector) -> lm.Vector:
        return np.concatenate(sphere_rates(y[:3], y[3:]))

    solution = solve_ivp(rates, (0.0, float(times[-1])), np.concatenate([gamma0, omega0]), method="DOP853",
                         t_eval=times, rtol=1e-12, atol=1e-14)
    assert solution.success, solution.message
    return solution.y[:3].T.copy(), solution.y[3:].T.copy()


def contact_vectors(gamma: lm.Matrix) -> lm.Matrix:
    """r = a e₃ − ργ, from the centre of mass to the contact point (body frame), one row per state."""
    return OFFSET * E3[None, :] - SPHERE_RADIUS * gamma


def jellett(gamma: lm.Matrix, omega: lm.Matrix) -> lm.Vector:
    """J = ⟨𝕀ω, r⟩ = ⟨M, r⟩ per row."""
    values: lm.Vector = np.einsum("ki,ij,kj->k", omega, SPHERE_INERTIA, contact_vectors(gamma))
    return values


def routh_factor(gamma3: lm.Vector) -> lm.Vector:
    """D(γ₃) = I₁I₃ + m⟨r, 𝕀r⟩ = I₁I₃ + m(I₁ρ²(1 − γ₃²) + I₃(a − ργ₃)²)."""
    rho, a = SPHERE_RADIUS, OFFSET
    values: lm.Vector = I1 * I3 + MASS * (I1 * rho**2 * (1.0 - gamma3**2) + I3 * (a - rho * gamma3) ** 2)
    return values


def routh(gamma: lm.Matrix, omega: lm.Matrix) -> lm.Vector:
    """R = ω₃ √D(γ₃) per row."""
    values: lm.Vector = omega[:, 2] * np.sqrt(routh_factor(gamma[:, 2]))
    return values


def sphere_energy(gamma: lm.Matrix, omega: lm.Matrix) -> lm.Vector:
    """½⟨𝕀ω, ω⟩ + ½ m|r × ω|² + m g (ρ − aγ₃) (the centre of mass at height ρ − aγ₃)."""
    velocity = np.cross(contact_vectors(gamma), omega)
    values: lm.Vector = (0.5 * np.einsum("ki,ij,kj->k", omega, SPHERE_INERTIA, omega)
                         + 0.5 * MASS * np.einsum("ki,ki->k", velocity, velocity)
                         + MASS * GRAVITY * (SPHERE_RADIUS - OFFSET * gamma[:, 2]))
    return values


def test_routh_sphere_integrals_of_newton_euler() -> None:
    """The formulas are integrals of the continuous motion. (1) At 20 random states (γ on the unit
    sphere, ω normal), the rates dJ/dt = ⟨𝕀ω̇, r⟩ + ⟨𝕀ω, ṙ⟩ and dR/dt = ω̇₃√D + ω₃ D′(γ₃)γ̇₃/(2√D)
    from the Newton–Euler right-hand side vanish to 1e-14 (measured ≤ 3e-16). (2) Along DOP853 over
    T = 200 from the test's initial state, J, R and the energy stay within 1e-10 of their initial
    values (measured 1.5e-12, 1.5e-12 and 9e-12), while ω₃ alone varies by 0.16 and ω₃√(I₁I₃ + m I₃|r|²) (⟨r, 𝕀r⟩ with
    I₃ for I₁) by 0.047: the check has teeth. (3) The conventions are liemech's: r is ``SPHERE.contact_offset(R)``, and the energy
    is ``SPHERE.energy`` at the problem's initial state."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        gamma = rng.normal(size=3)
        gamma /= np.linalg.norm(gamma)
        omega = rng.normal(size=3)
        gamma_rate, omega_rate = sphere_rates(gamma, omega)
        r = OFFSET * E3 - SPHERE_RADIUS * gamma
        jellett_rate = float(SPHERE_INERTIA @ omega_rate @ r - SPHERE_RADIUS * SPHERE_INERTIA @ omega @ gamma_rate)
        D = float(routh_factor(np.array([gamma[2]]))[0])
        D_prime = MASS * (-2.0 * I1 * SPHERE_RADIUS**2 * gamma[2] - 2.0 * I3 * SPHERE_RADIUS * (OFFSET
                                                                                                  - SPHERE_RADIUS * gamma[2]))
        routh_rate = omega_rate[2] * math.sqrt(D) + omega[2] * D_prime * gamma_rate[2] / (2.0 * math.sqrt(D))
        assert abs(jellett_rate) <= 1e-14 and abs(routh_rate) <= 1e-14, (jellett_rate, routh_rate)

    problem = SPHERE.problem(SPHERE_R0, SPHERE_OMEGA0)
    gamma0 = SPHERE_R0[2]
    assert np.max(np.abs(np.asarray(SPHERE.contact_offset(SPHERE_R0)) - (OFFSET * E3 - SPHERE_RADIUS * gamma0))) <= 1e-15
    start_energy = sphere_energy(gamma0[None, :], SPHERE_OMEGA0[None, :])[0]
    assert abs(start_energy - SPHERE.energy(problem.g0, problem.mu0)) <= 1e-14

    gamma, omega = sphere_reference(gamma0, SPHERE_OMEGA0, np.linspace(0.0, T_LONG, 2001))
    for values in (jellett(gamma, omega), routh(gamma, omega), sphere_energy(gamma, omega)):
        assert float(np.max(np.abs(values - values[0]))) <= 1e-10
    assert float(np.ptp(omega[:, 2])) >= 0.15
    r = contact_vectors(gamma)
    isotropic = omega[:, 2] * np.sqrt(I1 * I3 + MASS * I3 * np.einsum("ki,ki->k", r, r))   # 𝕀 → I₃ in ⟨r, 𝕀r⟩
    assert float(np.ptp(isotropic)) >= 0.03, float(np.ptp(isotropic))
    assert float(np.min(gamma[:, 2])) <= -0.4 and float(np.max(gamma[:, 2])) >= 0.9


def halves(deviation: lm.Vector) -> tuple[float, float]:
    """The largest deviation over the first and the second half of the run."""
    half = deviation.size // 2
    return float(deviation[:half].max()), float(deviation[half:].max())


@pytest.mark.slow
@pytest.mark.long_run
def test_routh_sphere_long_run(perturb: Perturbation) -> None:
    """Lobatto-2 on the Routh sphere over T = 200 at h = 0.2 and 0.1 (1000 and 2000 steps):
    Jellett's J is kept to round-off at every node (measured ≤ 2e-15, J = −0.036); Routh's R
    (= 0.445) deviates by at most 8.5e-4 and 2.1e-4 (ratio 4.1: order 2), with no drift (the
    largest deviation over the second half equals that over the first); the energy (1.75) by
    6.4e-3 and 1.6e-3, likewise."""
    problem = perturb.problem(SPHERE.problem(SPHERE_R0, SPHERE_OMEGA0))
    routh_errors = []
    for h in STEPS:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=h, t_final=T_LONG)
        R, omega = SPHERE.orientation(sol), SPHERE.angular_velocity(sol)
        gamma = R[:, 2, :]
        J, routh_values = jellett(gamma, omega), routh(gamma, omega)
        energy = np.array([SPHERE.energy(g, mu) for g, mu in zip(sol.points(), sol.mu)])
        assert float(np.max(np.abs(J - J[0]))) <= 1e-13
        for values in (routh_values, energy):
            first, second = halves(np.abs(values - values[0]))
            assert second <= 1.5 * first, (h, first, second)
        routh_errors.append(float(np.max(np.abs(routh_values - routh_values[0]))))
        assert float(np.min(gamma[:, 2])) <= -0.4                 # it still rocks over its equator
    ratio = routh_errors[0] / routh_errors[1]
    assert routh_errors[1] <= 4e-4 and 3.5 <= ratio <= 4.6, (routh_errors, ratio)


# ----------------------------------------------------------------------------------------------
# Rolling disc
# ----------------------------------------------------------------------------------------------

def disc_problem(R0: lm.Matrix, omega0: lm.Vector) -> lm.Problem[Pose]:
    """The disc at attitude R0 with body angular velocity Ω₀, its contact point at the origin
    (x₀ = −r u) and rolling (v₀ = −(R₀Ω₀) × r u, u the unit vector from the centre to the contact)."""
    n = R0[:, 2]
    u = -(E3 - n[2] * n) / math.sqrt(1.0 - n[2] ** 2)
    offset = DISC.radius * u
    return DISC.problem(R0, -offset, np.concatenate([omega0, -np.cross(R0 @ omega0, offset)]))


def resal_rates(R: lm.Tensor, omega: lm.Matrix) -> tuple[lm.Vector, lm.Vector, lm.Vector]:
    """θ = arccos n_z, ω₃ = Ω₃ and ω₂ = ⟨RΩ, E₂⟩, E₂ = (e_z − cos θ n)/sin θ, per row."""
    n = R[:, :, 2]
    cos = n[:, 2]
    up = (E3[None, :] - cos[:, None] * n) / np.sqrt(1.0 - cos**2)[:, None]
    spatial = np.einsum("kij,kj->ki", R, omega)
    return np.arccos(cos), omega[:, 2].copy(), np.einsum("ki,ki->k", spatial, up)


def appell_korteweg(theta: lm.Vector, spin: lm.Vector, rate: lm.Vector) -> lm.Matrix:
    """(c₃, c₂) = Φ(θ)⁻¹(ω₃, ω₂) per row, Φ the fundamental matrix of the θ-ODE with Φ(θ[0]) = 1,
    by DOP853 (rtol 1e-12) from θ[0] down to min θ and up to max θ, with its dense output."""
    I1_disc, _, I3_disc = DISC.principal_moments
    m, r = DISC.mass, DISC.radius
    k3 = m * r**2 / (I3_disc + m * r**2)

    def rates(th: float, y: lm.Vector) -> lm.Vector:
        # two solutions (ω₃, ω₂) side by side
        cot = 1.0 / math.tan(th)
        return np.array([k3 * y[1], I3_disc / I1_disc * y[0] - cot * y[1],
                         k3 * y[3], I3_disc / I1_disc * y[2] - cot * y[3]])

    theta0 = float(theta[0])
    branches = []
    for end in (float(theta.min()) - 0.01, float(theta.max()) + 0.01):
        solution = solve_ivp(rates, (theta0, end), np.array([1.0, 0.0, 0.0, 1.0]), method="DOP853", rtol=1e-12,
                             atol=1e-14, dense_output=True)
        assert solution.success and solution.sol is not None, solution.message
        branches.append(solution.sol)
    below = theta < theta0
    columns = np.empty((theta.size, 4))
    columns[below] = branches[0](theta[below]).T
    columns[~below] = branches[1](theta[~below]).T
    fundamental = columns[:, [0, 2, 1, 3]].reshape(-1, 2, 2)     # [[ω₃ of sol. 1, ω₃ of sol. 2], [ω₂ …, ω₂ …]]
    solved = np.linalg.solve(fundamental, np.stack([spin, rate], axis=1)[:, :, None])
    integrals: lm.Matrix = np.asarray(solved[:, :, 0], dtype=np.float64)
    return integrals


def test_disc_theta_ode_on_newton_euler() -> None:
    """The θ-ODE is right: along ``RollingDisc.reference`` (DOP853 on the Newton–Euler equations
    in space, the contact force from the rolling condition) over T = 20, the disc leans to both sides
    of upright (θ from 0.85 to 1.90) and ω₂ changes sign (−1.4 … 1.1), yet both Appell–Korteweg
    integrals stay within 1e-10 of their initial values (measured 7e-13 and 9e-13)."""
    problem = disc_problem(DISC_R0, DISC_OMEGA0)
    reference = DISC.reference(problem, np.linspace(0.0, 20.0, 401))
    theta, spin, rate = resal_rates(np.array(reference.R), reference.omega)
    integrals = appell_korteweg(theta, spin, rate)
    assert np.max(np.abs(integrals - integrals[0])) <= 1e-10
    assert np.max(np.abs(integrals[0] - [spin[0], rate[0]])) <= 1e-15
    assert theta.min() <= 0.9 and theta.max() >= 1.85
    assert rate.min() <= -1.3 and rate.max() >= 1.0 and np.ptp(spin) >= 0.2


@pytest.mark.slow
@pytest.mark.long_run
def test_disc_appell_korteweg_long_run(perturb: Perturbation) -> None:
    """Lobatto-2 on the wobbling disc over T = 200 at h = 0.2 and 0.1 (1000 and 2000 steps): at
    every node, (ω₃, ω₂) is the θ-ODE's solution at the node's θ, i.e. the two Appell–Korteweg
    integrals (c₃, c₂) = (1, 0) are kept: they deviate by at most 4.3e-3 / 4.4e-3 and 1.04e-3 /
    1.08e-3 (ratio 4.1 and 4.0: order 2), with no drift (the largest deviation over the second
    half equals that over the first)."""
    problem = perturb.problem(disc_problem(DISC_R0, DISC_OMEGA0))
    errors = []
    for h in STEPS:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=h, t_final=T_LONG)
        theta, spin, rate = resal_rates(np.asarray(sol.g[0], dtype=np.float64),
                                        np.asarray(sol.eta[:, :3], dtype=np.float64))
        integrals = appell_korteweg(theta, spin, rate)
        deviation = np.abs(integrals - integrals[0])
        for column in deviation.T:
            first, second = halves(column)
            assert second <= 1.5 * first, (h, first, second)
        errors.append(deviation.max(axis=0))
        assert theta.min() <= 0.9 and theta.max() >= 1.85
    ratios = errors[0] / errors[1]
    assert np.all(errors[1] <= 2e-3) and np.all((3.5 <= ratios) & (ratios <= 4.6)), (errors, ratios)
