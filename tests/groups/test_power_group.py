"""PowerGroup(G, N): the conformance suite, agreement with ProductGroup(G, …, G), compile size
independent of N, refusals, and an integration that matches the product group to round-off."""

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import liemech as lm
from liemech.methods.vprk.scheme import VPRKEquations
from liemech.testing import check_group, check_retraction
from tests.chain_of_tops import chain_potential, sparse_chain_of_tops

POWERS: list[lm.PowerGroup[Any]] = [
    lm.PowerGroup(lm.SO3(), 3),
    lm.PowerGroup(lm.SE3(), 2),
    lm.PowerGroup(lm.Rn(2), 3),
    lm.PowerGroup(lm.SE2(), 2),
]


@pytest.mark.parametrize("group", POWERS, ids=repr)
def test_group_conformance(group: lm.PowerGroup[Any]) -> None:
    assert check_group(group, np.random.default_rng(3), n_samples=2).passed


@pytest.mark.parametrize("kind", lm.RETRACTION_KINDS)
@pytest.mark.parametrize("group", POWERS, ids=repr)
def test_retraction_conformance(group: lm.PowerGroup[Any], kind: lm.RetractionKind) -> None:
    assert check_retraction(group.retraction(kind), np.random.default_rng(4), n_samples=1).passed


def product_of(group: lm.PowerGroup[Any]) -> lm.ProductGroup:
    return lm.ProductGroup(*[group.group] * group.N)


def as_tuple(g: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(g)[i] for i in range(len(g)))


def close(a: object, b: object, tol: float = 1e-13) -> bool:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) <= tol


@pytest.mark.parametrize("kind", lm.RETRACTION_KINDS)
@pytest.mark.parametrize("group", POWERS, ids=repr)
def test_agrees_with_the_product_of_n_copies(group: lm.PowerGroup[Any], kind: lm.RetractionKind) -> None:
    product = product_of(group)
    assert product.dim == group.dim
    rng = np.random.default_rng(7)
    for _ in range(3):
        g, h = group.random_point(rng), group.random_point(rng)
        xi, eta, mu = (0.7 * rng.normal(size=group.dim) for _ in range(3))
        gt, ht = as_tuple(g), as_tuple(h)
        assert close(np.stack(product.compose(gt, ht)), group.compose(g, h))
        assert close(np.stack(product.inverse(gt)), group.inverse(g))
        assert close(np.stack(product.identity()), group.identity())
        assert close(np.stack(product.hat(xi)), group.hat(xi))
        assert close(product.vee(product.hat(xi)), group.vee(group.hat(xi)))
        assert close(product.Ad(gt), group.Ad(g))
        assert close(product.ad(xi), group.ad(xi))
        assert close(product.ad_star(xi, mu), group.ad_star(xi, mu))
        # the block-by-block products against the dense matrices, on the power and on the product
        for space, point in ((group, g), (product, gt)):
            assert close(space.Ad(point).T @ mu, space.Ad_star(point, mu))
        tau, tau_p = group.retraction(kind), product.retraction(kind)
        assert close(np.stack(tau_p.tau(xi)), tau.tau(xi))
        assert close(tau_p.tau_inv(tau_p.tau(xi)), tau.tau_inv(tau.tau(xi)))
        assert close(tau_p.dtau(xi), tau.dtau(xi))
        assert close(tau_p.dtau_inv(xi), tau.dtau_inv(xi))
        assert close(tau_p.ddtau(xi, eta), tau.ddtau(xi, eta))
        assert close(tau_p.ddtau_tensor(xi), tau.ddtau_tensor(xi))
        for retraction in (tau, tau_p):
            assert close(retraction.dtau(xi) @ eta, retraction.dtau_times(xi, eta))
            assert close(retraction.dtau(xi).T @ mu, retraction.dtau_star(xi, mu))
            assert close(retraction.ddtau(xi, eta).T @ mu, retraction.ddtau_star(xi, eta, mu))
            assert close((retraction.dtau(xi) @ retraction.ddtau(xi, eta)).T @ mu,
                         retraction.dtau_derivative_star(xi, eta, mu))


def equations(n: int, build: Callable[[lm.PowerGroup[Any]], Callable[[jax.Array], jax.Array]]) -> int:
    group = lm.PowerGroup(lm.SE3(), n)
    xi = jnp.asarray(np.random.default_rng(0).normal(size=group.dim))
    return len(jax.make_jaxpr(build(group))(xi).jaxpr.eqns)


def composite(group: lm.PowerGroup[Any]) -> Callable[[jax.Array], jax.Array]:
    tau = group.retraction("exp")

    def f(xi: jax.Array) -> jax.Array:
        g = tau.tau(xi)
        out = (group.Ad(group.compose(g, group.inverse(g))) @ tau.dtau_inv(xi) @ tau.ddtau(xi, xi)
                          + group.ad(group.vee(group.hat(xi))) + group.ad_star(xi, xi)[:, None])
        return jnp.asarray(out)

    return f


def dtau_of(group: lm.PowerGroup[Any]) -> Callable[[jax.Array], jax.Array]:
    tau = group.retraction("cay")
    return lambda xi: jnp.asarray(tau.dtau(xi))


@pytest.mark.parametrize("build", [dtau_of, composite], ids=["dtau", "composite"])
def test_traced_size_does_not_grow_with_n(build: Callable[[lm.PowerGroup[Any]], Callable[[jax.Array], jax.Array]]
                                          ) -> None:
    """No Python loop over the bodies: the jaxpr has as many equations for N = 4 as for N = 64."""
    counts = [equations(n, build) for n in (1, 4, 64)]
    assert counts[0] == counts[1] == counts[2], counts


def test_refuses_bad_arguments() -> None:
    with pytest.raises(ValueError, match="N must be an integer ≥ 1, got 0"):
        lm.PowerGroup(lm.SO3(), 0)
    with pytest.raises(ValueError, match=r"N must be an integer ≥ 1, got 2\.0"):
        lm.PowerGroup(lm.SO3(), 2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="N must be an integer ≥ 1, got True"):
        lm.PowerGroup(lm.SO3(), True)
    with pytest.raises(TypeError, match="group must be a LieGroup, got str"):
        lm.PowerGroup("SO3", 2)  # type: ignore[arg-type]
    group = lm.PowerGroup(lm.SO3(), 4)
    g = group.random_point(np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"g must stack 4 points of SO3\(\).*got \(3, 3, 3\)"):
        group.check_point(g[:3])
    flipped = g.copy()
    flipped[3] = -flipped[3]
    with pytest.raises(ValueError, match=r"^g\[3\] must be a rotation with det = \+1"):
        group.check_point(flipped)
    with pytest.raises(ValueError, match=r"^g0\[1\]\[3\] must be a rotation with det = \+1"):
        group.check_points(np.stack([g, flipped]), "g0")
    bad = g.copy()
    bad[1, 0, 0] = np.nan
    with pytest.raises(ValueError, match=r"^g0\[1\] must be finite"):
        group.check_point(bad, "g0")
    assert group.check_points(np.stack([g, g])).shape == (2, 4, 3, 3)
    with pytest.raises(ValueError, match=r"xi must have shape \(12,\)"):
        group.hat(np.zeros(9))
    with pytest.raises(ValueError, match="g must stack 4 points"):
        group.compose(g[:2], g[:2])
    assert np.all(group.check_point(g) == g)


def test_value_semantics_and_repr() -> None:
    assert repr(lm.PowerGroup(lm.SO3(), 4)) == "PowerGroup(SO3(), 4)"
    assert lm.PowerGroup(lm.SO3(), 4) == lm.PowerGroup(lm.SO3(), 4)
    assert hash(lm.PowerGroup(lm.SO3(), 4)) == hash(lm.PowerGroup(lm.SO3(), 4))
    assert lm.PowerGroup(lm.SO3(), 4) != lm.PowerGroup(lm.SO3(), 3)
    assert lm.PowerGroup(lm.SO3(), 2) != lm.ProductGroup(lm.SO3(), lm.SO3())
    assert lm.PowerGroup(lm.SO3(), 2).retraction("exp") == lm.PowerGroup(lm.SO3(), 2).retraction("exp")
    with pytest.raises(ValueError, match="kind must be one of"):
        lm.PowerGroup(lm.SO3(), 2).retraction("log")  # type: ignore[arg-type]


def test_tau_inv_names_the_body_outside_the_image() -> None:
    group = lm.PowerGroup(lm.SO3(), 3)
    g = group.identity()
    g[2] = np.diag([1.0, -1.0, -1.0])  # a rotation by π: no Cayley preimage
    with pytest.raises(ValueError, match=r"^g\[2\]: cay⁻¹ is undefined"):
        group.retraction("cay").tau_inv(g)


# ---- a chain of three heavy tops coupled by springs (tests/chain_of_tops.py) --------------------

INERTIA = np.diag(np.tile([1.0, 2.0, 3.5], 3))


def chain_potential_tuple(g: tuple[lm.Matrix, lm.Matrix, lm.Matrix]) -> jax.Array:
    return chain_potential(jnp.stack(g))


def energies(sol: lm.Solution[Any]) -> np.ndarray:
    return np.array([0.5 * eta @ INERTIA @ eta + float(chain_potential(jnp.asarray(R)))
                     for R, eta in zip(sol.g, sol.eta, strict=True)])


def test_chain_of_heavy_tops_matches_the_product_group() -> None:
    power = lm.PowerGroup(lm.SO3(), 3)
    product = lm.ProductGroup(lm.SO3(), lm.SO3(), lm.SO3())
    rng = np.random.default_rng(1)
    g0 = power.retraction("exp").tau(0.4 * rng.normal(size=9))
    eta0 = rng.normal(size=9)
    method = lm.VPRK(lm.lobatto(2))

    def run(h: float, n_steps: int) -> lm.Solution[Any]:
        system = lm.MechanicalSystem(power, INERTIA, chain_potential)
        return lm.integrate(lm.Problem(system, g0, eta0), method, h=h, n_steps=n_steps)

    sol = run(0.01, 50)
    system_p = lm.MechanicalSystem(product, INERTIA, chain_potential_tuple)
    sol_p = lm.integrate(lm.Problem(system_p, as_tuple(g0), eta0), method, h=0.01, n_steps=50)
    assert np.shape(sol.g) == (51, 3, 3, 3)
    assert np.max(np.abs(np.asarray(sol.g) - np.stack(sol_p.g, axis=1))) <= 1e-12
    assert np.max(np.abs(sol.eta - sol_p.eta)) <= 1e-12
    assert np.max(np.abs(sol.mu - sol_p.mu)) <= 1e-12
    # Energy error O(h²): bounded, and a quarter of it at half the step.
    error = np.max(np.abs(energies(sol) - energies(sol)[0]))
    half = run(0.005, 100)
    error_half = np.max(np.abs(energies(half) - energies(half)[0]))
    assert error <= 1e-2
    assert 2.5 <= error / error_half <= 6.0, (error, error_half)


@pytest.mark.slow
def test_flow_derivatives_on_the_tree_are_those_of_the_dense_solve() -> None:
    """∂μ(T)/∂η₀ of the chain of tops over 10 steps, forward and reverse mode: with the sparsity
    the tangent systems are built and solved on the block tree (``compiled_newton._tree_root``),
    without it by ``lax.custom_root`` and a dense LU; both give the same Jacobians to round-off, and
    so does the tree with Newton's factors carried from step to step (an argument of the root that
    is never differentiated)."""
    problem = sparse_chain_of_tops()
    assert VPRKEquations(lm.VPRK(lm.lobatto(2)), problem)._tree is not None
    eta0 = jnp.asarray(problem.eta0)
    jacobians = []
    newton = (lm.NewtonOptions(jacobian="first"), lm.NewtonOptions(jacobian="carried"))
    for sparsity, options in ((problem.sparsity, newton[0]), (problem.sparsity, newton[1]), (None, newton[0])):
        final = lm.flow(lm.Problem(problem.system, problem.g0, problem.eta0, sparsity=sparsity),
                        lm.VPRK(lm.lobatto(2), newton=options), h=0.01, n_steps=10)
        forward = np.asarray(jax.jacfwd(lambda eta: final(eta0=eta).mu)(eta0))
        reverse = np.asarray(jax.jacrev(lambda eta: final(eta0=eta).mu)(eta0))
        np.testing.assert_allclose(reverse, forward, rtol=0, atol=1e-12 * np.max(np.abs(forward)))
        jacobians.append(forward)
    for tree in jacobians[:2]:
        np.testing.assert_allclose(tree, jacobians[2], rtol=0, atol=1e-12 * np.max(np.abs(jacobians[2])))


def test_chain_of_heavy_tops_with_its_sparsity_takes_the_same_steps() -> None:
    """Told that each top couples to its neighbours only (``BodySparsity``), VPRK builds Newton's
    Jacobian from 3 colours × 2 stages × 3 directional derivatives and solves it top by top: the
    trajectory is that of the dense solve to round-off."""
    problem = sparse_chain_of_tops()
    system, g0, eta0 = problem.system, problem.g0, problem.eta0
    method = lm.VPRK(lm.lobatto(2))
    sparse, dense = (lm.integrate(lm.Problem(system, g0, eta0, sparsity=s), method, h=0.01, n_steps=40)
                     for s in (problem.sparsity, None))
    np.testing.assert_allclose(sparse.mu, dense.mu, atol=1e-12 * np.max(np.abs(dense.mu)))
    with pytest.raises(ValueError, match="sparsity must label 18 coordinates"):
        lm.Problem(system, g0, eta0, sparsity=lm.BodySparsity(np.zeros(3, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 2), dtype=np.int64)))
