"""Downstream-style use of the public API with precise types; mypy --strict must accept it."""

import jax
import jax.numpy as jnp
import numpy as np

import liemech as lm
from liemech.systems import HeavyTop
from liemech.testing import ConformanceReport, check_retraction

E3 = np.array([0.0, 0.0, 1.0])


def spin(R: lm.Matrix, omega: lm.Vector, h: float) -> lm.Matrix:
    G = lm.SO3()
    tau: lm.Retraction[lm.Matrix] = G.retraction("cay")
    return G.compose(R, tau.tau(h * omega))


def rigid_body_step(g: tuple[lm.Matrix, lm.Vector], xi: lm.Vector) -> tuple[lm.Matrix, lm.Vector]:
    G = lm.ProductGroup(lm.SO3(), lm.Rn(3))
    R, x = G.compose(g, G.retraction("exp").tau(xi))
    return R, R.T @ x


def certify(group: lm.LieGroup[lm.Matrix]) -> ConformanceReport:
    return check_retraction(group.retraction("exp"), np.random.default_rng(0), radii=(1e-3,))


def top_on_a_slider(h: float) -> tuple[lm.Matrix, lm.Matrix, lm.Matrix]:
    """A heavy top whose pivot slides on a spring: SO(3) × R³, integrated with VPRK."""

    def potential(g: tuple[lm.Matrix, lm.Vector]) -> jax.Array:
        R, x = g
        return 1.5 * jnp.dot(R @ np.array([0.2, -0.1, 0.6]), E3) + 0.5 * jnp.dot(x, x)

    G = lm.ProductGroup(lm.SO3(), lm.Rn(3))
    system = lm.MechanicalSystem(G, inertia=np.diag([1.0, 2.0, 3.5, 1.0, 1.0, 1.0]), potential=potential)
    problem: lm.Problem[tuple[lm.Matrix, lm.Vector]] = lm.Problem(system, G.identity(), np.ones(6))
    sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=h, t_final=10 * h)
    Rs, xs = sol.g
    return Rs, xs, sol.mu


def callbacks_typed_with_jax_arrays() -> lm.Problem[lm.Matrix]:
    """Callbacks may be annotated with jax.Array (liemech calls them with traced arrays) and return
    JAX arrays, derivatives included."""

    def potential(R: jax.Array) -> jax.Array:
        return 1.5 * R[2, 2]

    def height(R: jax.Array) -> jax.Array:
        return R[2:, 2] - 1.0

    def height_jacobian(R: jax.Array) -> jax.Array:
        return jnp.stack([jnp.array([R[2, 1], -R[2, 0], 0.0])])

    def no_spin(R: jax.Array, omega: jax.Array) -> jax.Array:
        return omega[2:]

    def damping(R: jax.Array, omega: jax.Array, t: jax.Array) -> jax.Array:
        return -0.1 * omega * jnp.cos(t)

    system = lm.MechanicalSystem(lm.SO3(), np.eye(3), potential)
    lm.HolonomicConstraint(height, jacobian=height_jacobian)
    return lm.Problem(system, np.eye(3), np.zeros(3), nonholonomic=lm.NonholonomicConstraint(no_spin), force=damping)


def heavy_top_kinetic_energy() -> float:
    top = HeavyTop()
    sol: lm.Solution[lm.Matrix] = lm.integrate(top.problem(), lm.VPRK(lm.gauss(2)), h=0.01, n_steps=10)
    return 0.5 * float(sol.mu[-1] @ sol.eta[-1])


tangent: lm.Matrix = lm.SE3().retraction("cay").ddtau(np.zeros(6), np.ones(6))
