"""The tumbling egg and an independent reference for it: the Newton–Euler equations of a rigid
ellipsoid rolling without slipping on a plane (still or a turntable, horizontal or inclined),
integrated by DOP853 at rtol 1e-12. Shared by tests/systems/test_rolling_body.py and
tests/systems/test_rolling_plane.py."""

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp

import liemech as lm
from liemech.groups.so3 import exp_matrix
from liemech.systems import RollingBody
from liemech.systems.body_on_plane import Pose

# A tumbling egg: an ellipsoid with its centre of mass off every axis and its principal axes of
# inertia turned away from the surface's, in units with m = g = 1 (motions of period ~ 1).
EGG_AXES = np.array([1.0, 0.7, 0.5])
EGG_COM = np.array([0.04, -0.03, -0.12])
_TURN = exp_matrix(np.array([0.1, -0.2, 0.3]))
EGG_INERTIA = _TURN @ np.diag([0.15, 0.25, 0.30]) @ _TURN.T
EGG = RollingBody.ellipsoid(EGG_AXES, 1.0, EGG_INERTIA, EGG_COM, gravity=1.0)
EGG_R0 = exp_matrix(np.array([0.15, -0.1, 0.5]))      # tumbles: its tilt reaches 76° within T = 200
EGG_OMEGA0 = np.array([0.4, -0.3, 1.5])
E3 = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True)
class Reference:
    """Newton–Euler states and contact forces at the requested times, and the first zero of the
    vertical spin."""

    t: lm.Vector
    R: lm.Tensor
    x: lm.Matrix
    omega: lm.Matrix
    force: lm.Matrix          # the contact force on the body, in space
    reversal: float | None


def newton_euler(semi_axes: lm.Vector, mass: float, inertia: lm.Matrix, com: lm.Vector, gravity: float,
                 R0: lm.Matrix, x0: lm.Vector, omega0: lm.Vector, times: lm.Vector, *,
                 normal: lm.Vector = E3, table_spin: float = 0.0) -> Reference:
    """The rolling ellipsoid by the Newton–Euler equations in the body frame, on the plane through
    the origin with unit normal n = ``normal`` spinning at Ω_t = ``table_spin`` about it.

    With γ = Rᵀe_z (gravity), ν = Rᵀn (the plane's normal), the lowest point p = −A²ν/√(νᵀA²ν)
    (the support map in the direction −ν), r = p − c (from the centre of mass) and V = Rᵀẋ: rolling
    is V + Ω × r = Ω_t ν × P with P = Rᵀx + r the contact point (the material contact point moves
    with the table, v + ω × ρ = Ω_t n × p_c in space), Newton m(V̇ + Ω × V) = F − m g γ, Euler
    𝕀Ω̇ + Ω × 𝕀Ω = r × F. Differentiating the rolling condition in space and eliminating F:
    (𝕀 − m r̂ r̂) Ω̇ = 𝕀Ω × Ω + m r × (g γ − Ω × ṙ − Ω × (Ω × r) + Ω_t ν × (V + Ω × r + ṙ)), with
    ν̇ = ν × Ω and ṙ = ṗ from the derivative of the support map, (A²/ε − A²ννᵀA²/ε³)(−ν̇),
    ε = √(νᵀA²ν). With "pull" the bracket, this is Euler's equation with the contact force
    F = m(pull − Ω̇ × r) in the body frame (R F in space, ``Reference.force``; m g e_z at rest)."""
    a2, b2, c2 = (float(v) ** 2 for v in semi_axes)
    J = [[float(inertia[i][j]) for j in range(3)] for i in range(3)]
    cx, cy, cz = (float(v) for v in com)
    m, g = float(mass), float(gravity)
    n1, n2, n3 = (float(v) for v in normal)
    spin_t = float(table_spin)

    def cross(u: tuple[float, float, float], w: tuple[float, float, float]) -> tuple[float, float, float]:
        return u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]

    def motion(y: lm.Vector) -> tuple[lm.Vector, tuple[float, float, float], tuple[float, float, float]]:
        """(ẏ, r, pull): the contact force is F = m(pull − Ω̇ × r) in the body frame."""
        # Written with Python floats (3-vectors as tuples): DOP853 calls it ~10⁵ times.
        (R11, R12, R13, R21, R22, R23, R31, R32, R33, x1, x2, x3, w1, w2, w3) = y.tolist()
        omega = (w1, w2, w3)
        gamma = (R31, R32, R33)
        nu = (R11 * n1 + R21 * n2 + R31 * n3, R12 * n1 + R22 * n2 + R32 * n3, R13 * n1 + R23 * n2 + R33 * n3)
        eps = math.sqrt(a2 * nu[0] * nu[0] + b2 * nu[1] * nu[1] + c2 * nu[2] * nu[2])
        s = (a2 * nu[0], b2 * nu[1], c2 * nu[2])                              # A²ν
        r = (-s[0] / eps - cx, -s[1] / eps - cy, -s[2] / eps - cz)
        nu_rate = cross(nu, omega)
        # ṙ = (A²/ε − A²ννᵀA²/ε³)(−ν̇)
        sg = s[0] * nu_rate[0] + s[1] * nu_rate[1] + s[2] * nu_rate[2]
        r_rate = (-(a2 * nu_rate[0]) / eps + s[0] * sg / eps**3, -(b2 * nu_rate[1]) / eps + s[1] * sg / eps**3,
                  -(c2 * nu_rate[2]) / eps + s[2] * sg / eps**3)
        Jw = (J[0][0] * w1 + J[0][1] * w2 + J[0][2] * w3, J[1][0] * w1 + J[1][1] * w2 + J[1][2] * w3,
              J[2][0] * w1 + J[2][1] * w2 + J[2][2] * w3)
        wr = cross(omega, r)
        wwr = cross(omega, wr)
        wrr = cross(omega, r_rate)
        # the table: the contact point P = Rᵀx + r moves at Ω_t ν × P, the centre at V = Ω_t ν × P − Ω × r
        contact = (R11 * x1 + R21 * x2 + R31 * x3 + r[0], R12 * x1 + R22 * x2 + R32 * x3 + r[1],
                   R13 * x1 + R23 * x2 + R33 * x3 + r[2])
        carried = cross(nu, contact)
        V = (spin_t * carried[0] - wr[0], spin_t * carried[1] - wr[1], spin_t * carried[2] - wr[2])
        drag = cross(nu, (V[0] + wr[0] + r_rate[0], V[1] + wr[1] + r_rate[1], V[2] + wr[2] + r_rate[2]))
        pull = (g * gamma[0] - wrr[0] - wwr[0] + spin_t * drag[0], g * gamma[1] - wrr[1] - wwr[1] + spin_t * drag[1],
                g * gamma[2] - wrr[2] - wwr[2] + spin_t * drag[2])
        torque = cross(r, pull)
        gyro = cross(Jw, omega)
        rhs = np.array([gyro[k] + m * torque[k] for k in range(3)])
        rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
        # 𝕀 − m r̂ r̂ = 𝕀 + m(|r|² I − r rᵀ)
        lhs = np.array([[J[i][j] + m * ((rr if i == j else 0.0) - r[i] * r[j]) for j in range(3)] for i in range(3)])
        omega_rate = np.linalg.solve(lhs, rhs)
        # Ṙ = R Ω̂ and ẋ = R V
        out = np.empty(15)
        out[0:9] = (R12 * w3 - R13 * w2, R13 * w1 - R11 * w3, R11 * w2 - R12 * w1,
                    R22 * w3 - R23 * w2, R23 * w1 - R21 * w3, R21 * w2 - R22 * w1,
                    R32 * w3 - R33 * w2, R33 * w1 - R31 * w3, R31 * w2 - R32 * w1)
        out[9:12] = (R11 * V[0] + R12 * V[1] + R13 * V[2], R21 * V[0] + R22 * V[1] + R23 * V[2],
                     R31 * V[0] + R32 * V[1] + R33 * V[2])
        out[12:] = omega_rate
        return out, r, pull

    def rates(t: float, y: lm.Vector) -> lm.Vector:
        return motion(y)[0]

    def contact_force(y: lm.Vector) -> lm.Vector:
        """R m(pull − Ω̇ × r): Newton's m(V̇ + Ω × V) + m g γ with the rolling V̇, in space."""
        out, r, pull = motion(y)
        force: lm.Vector = y[:9].reshape(3, 3) @ (m * (np.array(pull) - np.cross(out[12:], r)))
        return force

    def spin(t: float, y: lm.Vector) -> float:
        return float(y[6:9] @ y[12:])

    spin_event: Any = spin
    spin_event.terminal = False
    solution = solve_ivp(rates, (0.0, float(times[-1])), np.concatenate([R0.ravel(), x0, omega0]), method="DOP853",
                         t_eval=times, rtol=1e-12, atol=1e-14, events=spin_event)
    assert solution.success, solution.message
    assert solution.t_events is not None
    crossings = solution.t_events[0]
    y = solution.y.T
    return Reference(solution.t, y[:, :9].reshape(-1, 3, 3), y[:, 9:12], y[:, 12:],
                     np.array([contact_force(state) for state in y]), float(crossings[0]) if crossings.size else None)


def reference_for(body_axes: lm.Vector, body: RollingBody, problem: lm.Problem[Pose], times: lm.Vector) -> Reference:
    """The reference from the problem's initial data, on the body's plane."""
    (R0, x0), eta0 = problem.g0, problem.eta0
    return newton_euler(body_axes, body.mass, body.body_inertia, body.com, body.gravity, R0, x0, eta0[:3], times,
                        normal=body.plane.unit_normal, table_spin=body.plane.spin)


def constraint_defects(problem: lm.Problem[Pose], sol: lm.Solution[Pose]) -> tuple[float, float]:
    """max over the nodes of |Φ(g_k)| and of |φ(g_k, η_k)|."""
    assert problem.holonomic is not None and problem.nonholonomic is not None
    points = sol.points()
    return (max(float(np.max(np.abs(problem.holonomic.value(g)))) for g in points),
            max(float(np.max(np.abs(problem.nonholonomic.value(g, eta)))) for g, eta in zip(points, sol.eta)))
