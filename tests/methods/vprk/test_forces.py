"""External and dissipative forces in VPRK (the discrete Lagrange–d'Alembert principle): the energy
balance E_k − E_0 = W_k, exact for Gauss on a quadratic energy and of the method's order otherwise,
with every constraint kind; orders against DOP853 on a damped, driven heavy top; refusals."""

import math
from collections.abc import Callable
from typing import TypeVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import liemech as lm
from liemech.groups.so3 import cross, exp_matrix, skew
from liemech.systems import CartesianPendulum, ChaplyginSleigh, HeavyTop, RollingBall
from liemech.testing import estimate_order

P = TypeVar("P")

# Two coupled oscillators: quadratic energy E = ½vᵀMv + ½qᵀKq, nonlinear damping and a drive.
MASS = np.diag([1.0, 2.0])
STIFFNESS = np.array([[2.0, 0.5], [0.5, 1.0]])


def oscillator_force(q: lm.Vector, v: lm.Vector, t: float) -> jax.Array:
    """F = −0.3 (1 + |v|²) v + 0.8 cos(1.7 t) e₁."""
    return jnp.asarray(-0.3 * (1.0 + v @ v) * v) + 0.8 * jnp.cos(1.7 * t) * jnp.array([1.0, 0.0])


OSCILLATORS = lm.MechanicalSystem(lm.Rn(2), MASS, lambda q: 0.5 * q @ STIFFNESS @ q)
DRIVEN = lm.Problem(OSCILLATORS, np.array([1.0, -0.5]), np.array([0.3, 1.2]), force=oscillator_force)


def oscillator_energy(q: lm.Vector, p: lm.Vector) -> float:
    return 0.5 * float(p @ np.linalg.solve(MASS, p)) + 0.5 * float(q @ STIFFNESS @ q)


def balance_defect(sol: lm.Solution[P], energy: Callable[[P, lm.Vector], float]) -> float:
    """max_k |E_k − E_0 − W_k| over the stored nodes."""
    E = np.array([energy(g, mu) for g, mu in zip(sol.points(), sol.mu)])
    work = np.concatenate([[0.0], sol.extras["work"]])
    return float(np.max(np.abs(E - E[0] - work)))


@pytest.mark.parametrize("stages", [1, 2, 3])
def test_gauss_energy_balance_is_exact_on_a_quadratic_energy(stages: int) -> None:
    """Gauss-s is collocation: for a quadratic E, E_{k+1} − E_k = h Σ b_i ⟨∇E, f⟩(stage i) exactly, and
    the conservative part drops out, leaving the stage quadrature of the force's power, W_{k+1} − W_k.
    Over 400 steps (h = 0.05) with nonlinear damping and a drive the balance holds to round-off while
    the force does work of order 1."""
    sol = lm.integrate(DRIVEN, lm.VPRK(lm.gauss(stages)), h=0.05, n_steps=400)
    assert balance_defect(sol, oscillator_energy) <= 1e-13
    assert float(np.max(np.abs(sol.extras["work"]))) >= 0.5


def test_work_is_cumulative_with_store_every() -> None:
    """Thinned output keeps the running work at the stored nodes: row i of extras["work"] is the
    work up to t[i + 1] in both runs."""
    every = lm.integrate(DRIVEN, lm.VPRK(lm.gauss(1)), h=0.05, n_steps=40)
    thinned = lm.integrate(DRIVEN, lm.VPRK(lm.gauss(1)), h=0.05, n_steps=40, store_every=8)
    assert np.array_equal(thinned.extras["work"], every.extras["work"][7::8])


class DrivenTop:
    """The heavy top with a damping torque and a periodic drive, F = −0.4 Ω + 0.5 sin(2t) (1, 0, 0) in
    the body frame."""

    top = HeavyTop()

    @staticmethod
    def force(R: lm.Matrix, omega: lm.Vector, t: float) -> jax.Array:
        return jnp.asarray(-0.4 * omega) + 0.5 * jnp.sin(2.0 * t) * jnp.array([1.0, 0.0, 0.0])

    def problem(self) -> lm.Problem[lm.Matrix]:
        return lm.Problem(self.top.system(), exp_matrix(self.top.rotation0), self.top.omega0, force=self.force)

    def reference(self, T: float) -> tuple[lm.Matrix, lm.Vector]:
        """R(T), μ(T) by DOP853 on Ṙ = RΩ̂, μ̇ = μ × Ω + mg Γ × χ + F (rtol 1e-13)."""
        top, I = self.top, self.top.inertia

        def rhs(t: float, y: lm.Vector) -> lm.Vector:
            R, mu = y[:9].reshape(3, 3), y[9:]
            omega = np.asarray(np.linalg.solve(I, mu), dtype=np.float64)
            drive = -0.4 * omega + 0.5 * math.sin(2.0 * t) * np.array([1.0, 0.0, 0.0])
            return np.concatenate([(R @ skew(omega)).ravel(), cross(mu, omega) + top.mg * cross(R[2], top.chi) + drive])

        problem = self.problem()
        sol = solve_ivp(rhs, (0.0, T), np.concatenate([problem.g0.ravel(), problem.mu0]), method="DOP853",
                        rtol=1e-13, atol=1e-14)
        return sol.y[:9, -1].reshape(3, 3), sol.y[9:, -1]


DRIVEN_TOP = DrivenTop()


@pytest.mark.slow
@pytest.mark.parametrize("stages", [2, 3, 4])
def test_driven_top_order_against_dop853(stages: int) -> None:
    """Lobatto-s on the damped, driven heavy top, T = 2, h = 0.2 … 0.025: R and μ converge to DOP853
    with order 2s − 2, and so does the energy balance E_k − E_0 − W_k (the exact motion has
    dE/dt = ⟨F, Ω⟩)."""
    problem, T, steps = DRIVEN_TOP.problem(), 2.0, [0.2, 0.1, 0.05, 0.025]
    R_T, mu_T = DRIVEN_TOP.reference(T)
    errors: dict[str, list[float]] = {"R": [], "mu": [], "balance": []}
    for h in steps:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(stages)), h=h, t_final=T)
        errors["R"].append(float(np.max(np.abs(sol.g[-1] - R_T))))
        errors["mu"].append(float(np.max(np.abs(sol.mu[-1] - mu_T))))
        errors["balance"].append(balance_defect(sol, DRIVEN_TOP.top.energy))
    expected = 2 * stages - 2
    for name, e in errors.items():
        order = estimate_order(steps, e, plateau=1e-12).slope
        assert expected - 0.2 <= order <= expected + 0.4, (name, e, order)


def damped(problem: lm.Problem[P], rate: float) -> lm.Problem[P]:
    """The same problem with the force F = −rate · η added."""
    return lm.Problem(problem.system, problem.g0, problem.eta0, holonomic=problem.holonomic,
                      nonholonomic=problem.nonholonomic, force=lambda g, eta, t: -rate * eta)


def check_damped_balance(problem: lm.Problem[P], energy: Callable[[P, lm.Vector], float]) -> None:
    """Lobatto-2 with damping −0.3η, T = 4: the balance defect converges with order 2, the damping
    dissipates, and the constraints hold at every node."""
    problem = damped(problem, 0.3)
    steps, defects = [0.2, 0.1, 0.05], []
    for h in steps:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=h, t_final=4.0)
        defects.append(balance_defect(sol, energy))
        assert float(-sol.extras["work"][-1]) >= 0.1
        for g, eta in zip(sol.points(), sol.eta):
            if problem.holonomic is not None:
                assert float(np.max(np.abs(problem.holonomic.value(g)))) <= 1e-13
            if problem.nonholonomic is not None:
                assert float(np.max(np.abs(problem.nonholonomic.value(g, eta)))) <= 1e-13
    order = estimate_order(steps, defects).slope
    assert 1.8 <= order <= 2.4, (defects, order)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["holonomic", "nonholonomic", "both"])
def test_energy_balance_converges_with_constraints(case: str) -> None:
    """Damping with each constraint kind: ideal constraints do no work, so the exact motion has
    E(t) − E(0) = W(t), and the scheme's defect is of its order (``check_damped_balance``): the
    Cartesian pendulum, the Chaplygin sleigh, the Chaplygin ball."""
    if case == "holonomic":
        check_damped_balance(CartesianPendulum().problem(), lambda q, p: 0.5 * float(p @ p) + float(q[1]))
    elif case == "nonholonomic":
        sleigh = ChaplyginSleigh()
        check_damped_balance(sleigh.problem(), lambda g, mu: sleigh.energy(g, sleigh.system().velocity(g, mu)))
    else:
        ball = RollingBall()
        check_damped_balance(ball.problem(), ball.energy)


def test_methods_without_forces_refuse_them() -> None:
    with pytest.raises(ValueError, match="SimpsonVI.*does not take an external force"):
        lm.integrate(DRIVEN, lm.SimpsonVI(), h=0.1, n_steps=1)


def test_bad_force_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"force must return shape \(2,\)"):
        lm.Problem(OSCILLATORS, np.zeros(2), np.zeros(2), force=lambda q, v, t: jnp.zeros(3))
    with pytest.raises(TypeError, match="force must be a callable"):
        lm.Problem(OSCILLATORS, np.zeros(2), np.zeros(2), force=1.0)  # type: ignore[arg-type]
