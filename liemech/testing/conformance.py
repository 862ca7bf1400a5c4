"""Conformance checks for any LieGroup and Retraction, including a user's own.

Every check compares with an independent truth: a five-point central finite difference,
automatic differentiation (``jax.jacfwd``) of τ and of dτ, an algebraic identity, scipy's matrix
exponential, or the power series of d^L exp in ad_ξ. The autodiff
references need the retraction's operations to be traceable, as the compiled integrators do.
Each returns a ConformanceReport and, by default, raises ConformanceError naming every failed
check with its measured defect. Groups of dimension above ``MAX_DIM`` are refused (ValueError):
the checks' cost grows like dim³ to dim⁴.
"""

import functools
import math
from collections.abc import Sequence
from typing import Final, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg
import scipy.special

from liemech.groups.base import LieGroup, Retraction
from liemech.testing.finite_differences import derivative_along, jacobian
from liemech.testing.report import ConformanceReport
from liemech.types import Matrix, Vector

P = TypeVar("P")

IDENTITY_TOL: Final = 1e-12
"""Algebraic identities (axioms, τ(−ξ) = τ(ξ)⁻¹, dτ⁻¹dτ = I, …), relative to max(1, size)."""
FD_TOL: Final = 1e-7
"""Finite-difference checks of Ad, ad and dτ, relative to max(1, ‖reference‖)."""
DDTAU_FD_TOL: Final = 5e-9
"""Finite-difference check of ddτ, relative to max(1, ‖ddτ‖)."""
AUTODIFF_TOL: Final = 1e-12
"""Autodiff checks of dτ and ddτ, relative to max(1, ‖reference‖): exact derivatives, so only
round-off separates them from the closed forms."""
SERIES_TOL: Final = 1e-14
"""Agreement of exp's dτ, dτ⁻¹, ddτ with their ad-series at small ‖ξ‖."""
SERIES_UP_TO: Final = 1e-1
"""The ad-series are compared at every radius up to this one."""

DEFAULT_RADII: Final = (1e-8, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 2.0)
"""Norms ‖ξ‖ at which retractions are checked (plus ξ = 0 for the identities at the origin)."""

_SERIES_TERMS: Final = 30

MAX_DIM: Final = 100
"""The largest group dimension d checked: the checks form d×d Jacobians by finite differences
(4d evaluations each), d×d×d tensors (``ddtau_tensor``) and 30-term series of d×d matrices, so
their time grows like d³ to d⁴ and their memory like d³.
Check a smaller instance of the same code (Rn(3), PowerGroup(G, 2)) instead."""


def _check_dim(group: LieGroup[P], name: str) -> None:
    """ValueError naming ``name`` if the group is too large to check in reasonable time and memory."""
    if group.dim > MAX_DIM:
        raise ValueError(f"{name} has dimension {group.dim}, above the {MAX_DIM} that the conformance checks "
                         f"handle (their cost grows like dim³ to dim⁴, and ddτ_tensor needs dim³ numbers); check a "
                         f"smaller instance of the same group code, e.g. Rn(3) or PowerGroup(G, 2)")


def flatten_point(g: object) -> Vector:
    """All numbers of a point (an array, or nested tuples of arrays) as one flat vector."""
    if isinstance(g, tuple):
        return np.concatenate([flatten_point(x) for x in g]) if g else np.zeros(0)
    return np.asarray(g, dtype=np.float64).ravel()


def point_distance(g: object, h: object) -> float:
    """max |g − h| over the numbers of two points of the same group."""
    return float(np.max(np.abs(flatten_point(g) - flatten_point(h)), initial=0.0))


def _relative(error: Matrix, reference: Matrix) -> float:
    return float(np.max(np.abs(error), initial=0.0) / max(1.0, float(np.max(np.abs(reference), initial=0.0))))


def _direction(rng: np.random.Generator, dim: int, radius: float) -> Vector:
    xi = rng.normal(size=dim)
    return xi * (radius / float(np.linalg.norm(xi)))


def check_group(
    group: LieGroup[P],
    rng: np.random.Generator | None = None,
    n_samples: int = 3,
    raise_on_failure: bool = True,
) -> ConformanceReport:
    """Check the group axioms, hat/vee, Ad and ad on random points and algebra vectors.

    - e·g = g·e = g, g·g⁻¹ = e, (gh)k = g(hk); check_point accepts e, g and g·h;
    - vee(hat(ξ)) = ξ; perturbed(g, ξ) = g·(e + hat(ξ));
    - Ad(gh) = Ad(g)Ad(h); Ad(g)ξ = d/dε τ⁻¹(g τ(εξ) g⁻¹)|₀ (finite differences);
    - ad(ξ)η = d/dε Ad(τ(εξ))η|₀ (finite differences), ad(ξ)η = −ad(η)ξ,
      Jacobi ad([ξ, η]) = [ad ξ, ad η], ad_star(ξ, μ) = ad(ξ)ᵀμ.
    """
    _check_dim(group, f"group {group!r}")
    rng = np.random.default_rng(0) if rng is None else rng
    report = ConformanceReport(repr(group))
    chart = group.retraction("cay")
    e = group.identity()
    group.check_point(e, "identity()")
    d = group.dim
    for k in range(n_samples):
        where = f"sample {k}"
        g, h, m = (group.random_point(rng) for _ in range(3))
        xi, eta, mu = rng.normal(size=d), rng.normal(size=d), rng.normal(size=d)
        group.check_point(g, "random_point()")
        group.check_point(group.compose(g, h), "compose(g, h)")
        scale = max(1.0, float(np.max(np.abs(flatten_point(g)))), float(np.max(np.abs(flatten_point(h)))))
        report.add("axiom: e·g = g·e = g", where,
                   max(point_distance(group.compose(e, g), g), point_distance(group.compose(g, e), g)) / scale,
                   IDENTITY_TOL)
        report.add("axiom: g·g⁻¹ = g⁻¹·g = e", where,
                   max(point_distance(group.compose(g, group.inverse(g)), e),
                       point_distance(group.compose(group.inverse(g), g), e)) / scale**2,
                   IDENTITY_TOL)
        report.add("axiom: (gh)m = g(hm)", where,
                   point_distance(group.compose(group.compose(g, h), m), group.compose(g, group.compose(h, m)))
                   / scale**3,
                   IDENTITY_TOL)
        report.add("vee(hat(ξ)) = ξ", where, float(np.max(np.abs(group.vee(group.hat(xi)) - xi))), IDENTITY_TOL)
        line = group.compose(g, jax.tree.map(lambda a, b: a + b, e, group.hat(xi)))
        report.add("perturbed(g, ξ) = g·(e + hat(ξ))", where,
                   point_distance(group.perturbed(g, xi), line) / (scale * max(1.0, float(np.max(np.abs(xi))))),
                   IDENTITY_TOL)
        Ad_g, Ad_h = group.Ad(g), group.Ad(h)
        report.add("Ad(gh) = Ad(g)Ad(h)", where, _relative(group.Ad(group.compose(g, h)) - Ad_g @ Ad_h, Ad_g @ Ad_h),
                   IDENTITY_TOL)
        g_inv = group.inverse(g)
        Ad_fd = jacobian(lambda x: chart.tau_inv(group.compose(group.compose(g, chart.tau(x)), g_inv)), np.zeros(d))
        report.add("Ad(g) = d/dε τ⁻¹(g τ(εξ) g⁻¹)", where, _relative(Ad_fd - Ad_g, Ad_g), FD_TOL)
        ad_xi = group.ad(xi)
        ad_fd = derivative_along(lambda eps: group.Ad(chart.tau(eps * xi)))
        report.add("ad(ξ) = d/dε Ad(τ(εξ))", where, _relative(ad_fd - ad_xi, ad_xi), FD_TOL)
        report.add("ad(ξ)η = −ad(η)ξ", where, _relative(ad_xi @ eta + group.ad(eta) @ xi, ad_xi), IDENTITY_TOL)
        ad_eta = group.ad(eta)
        jacobi = group.ad(ad_xi @ eta) - (ad_xi @ ad_eta - ad_eta @ ad_xi)
        report.add("Jacobi: ad([ξ,η]) = [ad ξ, ad η]", where, _relative(jacobi, ad_xi @ ad_eta), IDENTITY_TOL)
        report.add("ad_star(ξ, μ) = ad(ξ)ᵀμ", where, _relative(group.ad_star(xi, mu) - ad_xi.T @ mu, ad_xi),
                   IDENTITY_TOL)
    return report.raise_on_failure() if raise_on_failure else report


def dexp_series(ad_xi: Matrix) -> Matrix:
    """d^L exp_ξ = Σ_k (−ad_ξ)^k/(k+1)!."""
    n = ad_xi.shape[0]
    term, total = np.eye(n), np.eye(n)
    for k in range(1, _SERIES_TERMS):
        term = term @ (-ad_xi) / (k + 1)
        total = total + term
    return total


def dexp_inv_series(ad_xi: Matrix) -> Matrix:
    """(d^L exp_ξ)⁻¹ = Σ_k B_k/k! (−ad_ξ)^k with B₁ = −½: I + ½ad + ad²/12 − ad⁴/720 + …"""
    b = scipy.special.bernoulli(_SERIES_TERMS)
    b[1] = -0.5
    n = ad_xi.shape[0]
    power, total = np.eye(n), np.eye(n)
    for k in range(1, _SERIES_TERMS):
        power = power @ (-ad_xi)
        total = total + (b[k] / math.factorial(k)) * power
    return total


def ddexp_series(group: LieGroup[P], xi: Vector, eta: Vector) -> Matrix:
    """ddτ for exp: (d^L exp_ξ)⁻¹ Σ_{k≥1} (−1)^k/(k+1)! Σ_j ad_ξ^j ad_δ ad_ξ^{k−1−j} η as a matrix in δ,
    using ad_δ x = −ad(x) δ."""
    ad_xi = group.ad(xi)
    n = ad_xi.shape[0]
    powers = [np.eye(n)]
    for _ in range(_SERIES_TERMS):
        powers.append(powers[-1] @ ad_xi)
    total = np.zeros((n, n))
    for k in range(1, _SERIES_TERMS):
        inner = sum((powers[j] @ -group.ad(powers[k - 1 - j] @ eta) for j in range(k)), np.zeros((n, n)))
        total = total + ((-1) ** k / math.factorial(k + 1)) * inner
    return np.asarray(np.linalg.solve(dexp_series(ad_xi), total), dtype=np.float64)


@functools.partial(jax.jit, static_argnums=0)
def _autodiff_dtau(tau: Retraction[P], xi: Vector) -> jax.Array:
    """dτ(ξ) as the Jacobian at ε = 0 of ε ↦ vee(τ(ξ)⁻¹ τ(ξ + ε)), by forward-mode autodiff.

    τ(ξ)⁻¹ τ(ξ + ε) = e + (dτ(ξ) ε)^ + O(ε²) and vee is linear, so its Jacobian is dτ(ξ).
    Compiled once per retraction (a static argument), instead of differentiated op by op.
    """
    group = tau.group
    g_inv = group.inverse(tau.tau(xi))
    jac: jax.Array = jax.jacfwd(lambda x: group.vee(group.compose(g_inv, tau.tau(x))))(xi)
    return jac


@functools.partial(jax.jit, static_argnums=0)
def _autodiff_ddtau(tau: Retraction[P], xi: Vector, eta: Vector) -> jax.Array:
    """ddτ(ξ, η) = dτ⁻¹(ξ) · ∂/∂δ [dτ(ξ + δ) η] at δ = 0, the Jacobian by forward-mode autodiff."""
    jac: jax.Array = jax.jacfwd(lambda x: tau.dtau(x) @ eta)(xi)
    return jnp.matmul(tau.dtau_inv(xi), jac)


def check_retraction(
    tau: Retraction[P],
    rng: np.random.Generator | None = None,
    radii: Sequence[float] = DEFAULT_RADII,
    n_samples: int = 2,
    raise_on_failure: bool = True,
) -> ConformanceReport:
    """Check a retraction and its tangents at random ξ of each norm in ``radii``.

    - τ(0) = e, τ(−ξ) = τ(ξ)⁻¹, τ⁻¹(τ(ξ)) = ξ;
    - dτ(ξ) = d/dε τ⁻¹(τ(ξ)⁻¹ τ(ξ + εv)) (finite differences) and = d/dε vee(τ(ξ)⁻¹ τ(ξ + εv))
      (autodiff, also at ξ = 0);
    - ddτ(ξ, η) = dτ(ξ)⁻¹ d/dε [dτ(ξ + εδ) η] (finite differences, and autodiff also at ξ = 0), and
      ``dtau_derivative_star``(ξ, η, m) = (d/dε [dτ(ξ + εδ) η])ᵀ m (finite differences);
    - dτ⁻¹(ξ) dτ(ξ) = I, dτ(−ξ) = Ad(τ(ξ)) dτ(ξ), ddτ(0, η) δ = ½[η, δ], ddτ_tensor(ξ) @ η = ddτ(ξ, η);
    - for exp: Ad(τ(ξ)) = expm(ad ξ), and dτ, dτ⁻¹, ddτ equal their ad-series for ‖ξ‖ ≤ 0.1.
    """
    group = tau.group
    _check_dim(group, f"the group {group!r} of tau")
    rng = np.random.default_rng(0) if rng is None else rng
    report = ConformanceReport(f"{tau.kind} on {group!r}")
    d = group.dim
    e = group.identity()
    zero = np.zeros(d)
    report.add("τ(0) = e", "ξ = 0", point_distance(tau.tau(zero), e), IDENTITY_TOL)
    A0 = tau.dtau(zero)
    report.add("dτ(0) = I", "ξ = 0", float(np.max(np.abs(A0 - np.eye(d)))), IDENTITY_TOL)
    report.add("dτ: autodiff", "ξ = 0", _relative(_autodiff_dtau(tau, zero) - A0, A0), AUTODIFF_TOL)
    for k in range(n_samples):
        eta = rng.normal(size=d)
        D0 = tau.ddtau(zero, eta)
        report.add("ddτ(0, η)δ = ½[η, δ]", f"sample {k}", _relative(D0 - 0.5 * group.ad(eta), group.ad(eta)),
                   IDENTITY_TOL)
        report.add("ddτ: autodiff", f"ξ = 0, sample {k}", _relative(_autodiff_ddtau(tau, zero, eta) - D0, D0),
                   AUTODIFF_TOL)
    for radius in radii:
        for k in range(n_samples):
            where = f"‖ξ‖ = {radius:.0e}, sample {k}"
            xi, eta = _direction(rng, d, radius), rng.normal(size=d)
            g = tau.tau(xi)
            g_inv = group.inverse(g)
            scale = max(1.0, radius)
            report.add("τ(−ξ) = τ(ξ)⁻¹", where, point_distance(tau.tau(-xi), g_inv) / scale, IDENTITY_TOL)
            report.add("τ⁻¹(τ(ξ)) = ξ", where, float(np.max(np.abs(tau.tau_inv(g) - xi))) / scale, IDENTITY_TOL)
            A = tau.dtau(xi)
            A_fd = jacobian(lambda x: tau.tau_inv(group.compose(g_inv, tau.tau(x))), xi)
            report.add("dτ: finite differences", where, _relative(A_fd - A, A), FD_TOL)
            report.add("dτ: autodiff", where, _relative(_autodiff_dtau(tau, xi) - A, A), AUTODIFF_TOL)
            report.add("dτ⁻¹(ξ) dτ(ξ) = I", where, float(np.max(np.abs(tau.dtau_inv(xi) @ A - np.eye(d)))),
                       IDENTITY_TOL)
            Ad_g = group.Ad(g)
            report.add("dτ(−ξ) = Ad(τ(ξ)) dτ(ξ)", where, _relative(tau.dtau(-xi) - Ad_g @ A, A), IDENTITY_TOL)
            D = tau.ddtau(xi, eta)
            K_fd = jacobian(lambda x: tau.dtau(x) @ eta, xi)
            D_fd = np.linalg.solve(A, K_fd)
            report.add("ddτ: finite differences", where, _relative(D_fd - D, D), DDTAU_FD_TOL)
            m = rng.normal(size=d)
            K_m = K_fd.T @ m
            report.add("ddτᵀdτᵀm = Kᵀm: finite differences", where,
                       _relative(tau.dtau_derivative_star(xi, eta, m) - K_m, K_m), DDTAU_FD_TOL)
            report.add("ddτ: autodiff", where, _relative(_autodiff_ddtau(tau, xi, eta) - D, D), AUTODIFF_TOL)
            report.add("ddτ_tensor(ξ) @ η = ddτ(ξ, η)", where, _relative(tau.ddtau_tensor(xi) @ eta - D, D),
                       IDENTITY_TOL)
            if tau.kind != "exp":
                continue
            ad_xi = group.ad(xi)
            report.add("exp: Ad(τ(ξ)) = expm(ad ξ)", where, _relative(Ad_g - scipy.linalg.expm(ad_xi), Ad_g),
                       IDENTITY_TOL)
            if radius <= SERIES_UP_TO:
                report.add("exp: dτ = Σ(−ad)^k/(k+1)!", where, _relative(A - dexp_series(ad_xi), A), SERIES_TOL)
                A_inv = tau.dtau_inv(xi)
                report.add("exp: dτ⁻¹ = Σ B_k(−ad)^k/k!", where, _relative(A_inv - dexp_inv_series(ad_xi), A_inv),
                           SERIES_TOL)
                report.add("exp: ddτ = ad-series", where, _relative(D - ddexp_series(group, xi, eta), D),
                           SERIES_TOL)
    return report.raise_on_failure() if raise_on_failure else report
