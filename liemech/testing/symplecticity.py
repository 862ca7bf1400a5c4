"""Numerical symplecticity of any one-step map Ψ: R²ᵈ → R²ᵈ, z = (q, p) (Kinon, Betsch & Schneider
2023, §2.2.3 and §3.2.3).

The symplectic form, with the sign of Kinon, Betsch & Schneider (GGL conference paper, eq. (12)), is

    ω(ξ, η) = ξ_p·η_q − ξ_q·η_p = ξᵀ 𝕁⁻¹ η,    𝕁⁻¹ = [[0, −I], [I, 0]],

and Ψ is symplectic on a set of variations V if ω(DΨ ξ, DΨ η) = ω(ξ, η) for all ξ, η ∈ V.
Conservation does not depend on the sign of ω. Constrained schemes are symplectic only on
constrained variations (G(qⁿ) dq = 0, or the tangent space of the constraint manifold M), so the
check takes the variations as an argument:

    J = one_step_jacobian(step_map(problem, method, h), z)
    symplecticity_defect(J, tangent_variations(G, Gv_q, Gv_p, 6, rng))

``one_step_jacobian`` differentiates a black-box map by finite differences: it needs nothing but
evaluations, so it checks any integrator, including ones without an analytic tangent.
"""

from collections.abc import Callable
from typing import Final, TypeVar, cast

import jax.numpy as jnp
import numpy as np
import scipy.linalg

from liemech.groups.euclidean import Rn
from liemech.input_checks import as_float_array, expect_finite
from liemech.mechanics.problem import Problem
from liemech.methods.compiled import CompiledMethod, StepStatus, compiled_for, convergence_error
from liemech.methods.method import Method, NodeState
from liemech.types import Matrix, Vector
from liemech.xla_options import jit

P = TypeVar("P")

DEFAULT_JACOBIAN_STEP: Final = 1e-2
"""Relative step δ of the 9-point stencil: truncation δ⁸/630 ≈ 1.6e-19, round-off ≈ 2e-14 (see
``one_step_jacobian``)."""

NULL_SPACE_RCOND: Final = 1e-10
"""Singular values below NULL_SPACE_RCOND × the largest count as zero when a null space is taken."""

_STENCIL: Final = ((1.0, 4.0 / 5.0), (2.0, -1.0 / 5.0), (3.0, 4.0 / 105.0), (4.0, -1.0 / 280.0))
"""f′(0) ≈ Σₖ cₖ [f(kδ) − f(−kδ)] / δ: the central 9-point stencil of order 8."""


# ---- the Jacobian ------------------------------------------------------------------------------


def one_step_jacobian(
    step_map: Callable[[Vector], Vector], z: Vector, step: float = DEFAULT_JACOBIAN_STEP
) -> Matrix:
    """DΨ(z) of a black-box map Ψ: R^N → R^N by the central 9-point stencil of order 8.

    Column j is Σₖ₌₁⁴ cₖ [Ψ(z + kδⱼeⱼ) − Ψ(z − kδⱼeⱼ)] / δⱼ with c = (4/5, −1/5, 4/105, −1/280)
    and δⱼ = ``step`` · max(1, |zⱼ|); this costs 8N evaluations of Ψ.

    Error of each entry, for a map that varies on a length scale ℓ and whose evaluations carry an
    absolute error ε (round-off, or the stopping error of a Newton solve):

    - truncation: δ⁸ |Ψ⁽⁹⁾| / 630, i.e. about (δ/ℓ)⁸/630 relative to |DΨ|; 1.6e-19 at the
      default δ = 1e-2 and ℓ = 1, still below 1e-12 for ℓ down to δ/0.14 ≈ 0.07;
    - round-off: Σₖ 2|cₖ| · ε/δ ≈ 2.08 ε/δ, i.e. 2e-14 at the default for ε = 1e-16 |Ψ|.

    The default step minimises the sum for ℓ ~ 1 (δ ~ ε^(1/9)): for a smooth map evaluated to
    round-off the Jacobian is accurate to ~1e-13 relative. Implicit schemes must solve their
    equations to round-off (liemech's Newton does by default: it stops at 16 eps and then applies
    one more update); with a Newton tolerance τ the round-off term becomes ≈ 2τ/δ. Pass a smaller
    ``step`` for a map that varies on a scale shorter than 0.1 (large h·‖∇²H‖, many steps of a
    chaotic flow), a larger one for a noisy map. Off its constraint manifold a discrete-gradient
    step varies on the scale ~|Δz|² of its quotient (e.g. DiscreteGradientMultiplier on the
    Cartesian pendulum at h = 0.1 needs δ ≈ 1e-5, where the default does not even converge). To
    check the resolution, compare the results of two steps. Ψ is evaluated up to 4δⱼ away from z,
    so it must be defined there (an implicit step must still converge).
    """
    if not callable(step_map):
        raise TypeError(f"step_map must be callable (z ↦ Ψ(z)), got {type(step_map).__name__}")
    z = as_float_array(z, "z")
    if z.ndim != 1 or z.size == 0:
        raise ValueError(f"z must be a non-empty 1-D vector, got shape {z.shape}")
    expect_finite(z, "z")
    if not isinstance(step, (int, float)) or isinstance(step, bool) or not np.isfinite(step) or step <= 0.0:
        raise ValueError(f"step must be a positive finite number, got {step!r}")
    n = z.size

    def evaluate(x: Vector) -> Vector:
        value = as_float_array(step_map(x), "step_map(z)")
        if value.shape != (n,):
            raise ValueError(f"step_map must return a vector of shape ({n},) like z, got {value.shape}")
        return value

    jacobian = np.empty((n, n))
    for j in range(n):
        delta = float(step) * max(1.0, abs(float(z[j])))
        column = np.zeros(n)
        for k, c in _STENCIL:
            plus, minus = z.copy(), z.copy()
            plus[j] += k * delta
            minus[j] -= k * delta
            column += c * (evaluate(plus) - evaluate(minus))
        jacobian[:, j] = column / delta
    expect_finite(jacobian, "the finite-difference Jacobian of step_map")
    return jacobian


# ---- the defect --------------------------------------------------------------------------------


def symplectic_form(xi: Matrix, eta: Matrix) -> Matrix:
    """The matrix ω(ξᵢ, ηⱼ) = ξᵢ,p·ηⱼ,q − ξᵢ,q·ηⱼ,p for the columns of two (2d, ·) arrays."""
    d = xi.shape[0] // 2
    return np.asarray(xi[d:].T @ eta[:d] - xi[:d].T @ eta[d:], dtype=np.float64)


def symplecticity_defect(jacobian: Matrix, variations: Matrix) -> float:
    """The relative symplecticity defect of a linear map A = DΨ(z) on the columns ξᵢ of
    ``variations``:

        max_ij |ω(Aξᵢ, Aξⱼ) − ω(ξᵢ, ξⱼ)| / max_ij |ω(ξᵢ, ξⱼ)|.

    The normalisation is the size of the quantity being conserved on the same variations, so the
    defect does not depend on how the variations are scaled, and a map Ψ = c·id has defect |c² − 1|
    whatever the variations. A symplectic map gives ~1e-15 with an exact Jacobian; the floor grows
    like eps·‖A‖²·|ξ|²/max|ω(ξᵢ, ξⱼ)| plus the Jacobian's own error (~1e-13 from
    ``one_step_jacobian``). ω vanishes identically on an isotropic set (for instance variations of q
    only), where no relative defect exists: that raises ValueError.

    ``jacobian`` is (2d, 2d) with z = (q, p); ``variations`` is (2d, k) with k ≥ 2.
    """
    A = as_float_array(jacobian, "jacobian")
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0 or A.shape[0] % 2:
        raise ValueError(f"jacobian must be a square (2d, 2d) matrix for z = (q, p), got shape {A.shape}")
    expect_finite(A, "jacobian")
    X = as_float_array(variations, "variations")
    if X.ndim != 2 or X.shape[0] != A.shape[0] or X.shape[1] < 2:
        raise ValueError(f"variations must be a ({A.shape[0]}, k) matrix of k ≥ 2 columns ξᵢ "
                         f"matching jacobian {A.shape}, got shape {X.shape}")
    expect_finite(X, "variations")
    before = symplectic_form(X, X)
    scale = float(np.max(np.abs(before)))
    if not scale > 0.0:
        raise ValueError("variations: ω(ξᵢ, ξⱼ) = 0 for every pair (an isotropic set, e.g. dp = 0), so the "
                         "relative defect is undefined; include variations that pair q with p")
    AX = A @ X
    after = symplectic_form(AX, AX)
    return float(np.max(np.abs(after - before))) / scale


# ---- variations --------------------------------------------------------------------------------


def _checked_count(count: object) -> int:
    if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or int(count) < 1:
        raise ValueError(f"count must be a positive integer, got {count!r}")
    return int(count)


def _checked_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), "
                        f"got {type(rng).__name__}")
    return rng


def _checked_matrix(x: object, name: str, columns: int | None = None) -> Matrix:
    A = as_float_array(x, name)
    if A.ndim != 2 or (columns is not None and A.shape[1] != columns) or A.shape[1] == 0:
        wanted = "(m, d)" if columns is None else f"(m, {columns})"
        raise ValueError(f"{name} must be a {wanted} matrix, got shape {A.shape}")
    expect_finite(A, name)
    return A


def _null_space(A: Matrix) -> Matrix:
    """An orthonormal basis of ker A (numerical rank with NULL_SPACE_RCOND); ker of 0 rows is Rⁿ."""
    if A.shape[0] == 0:
        return np.eye(A.shape[1])
    return np.asarray(scipy.linalg.null_space(A, rcond=NULL_SPACE_RCOND), dtype=np.float64)


def random_variations(dimension: int, count: int, rng: np.random.Generator) -> Matrix:
    """``count`` standard normal columns in R^dimension, dimension = 2d (unconstrained variations)."""
    if not isinstance(dimension, (int, np.integer)) or isinstance(dimension, bool) \
            or int(dimension) < 2 or int(dimension) % 2:
        raise ValueError(f"dimension must be an even positive integer 2d, got {dimension!r}")
    count = _checked_count(count)
    return np.asarray(_checked_rng(rng).standard_normal((int(dimension), count)), dtype=np.float64)


def constrained_variations(G: Matrix, count: int, rng: np.random.Generator) -> Matrix:
    """``count`` random columns (dq, dp) ∈ R²ᵈ with G dq = 0 and dp free.

    G is the (m, d) constraint Jacobian at qⁿ. dq is standard normal in an orthonormal basis of
    ker G (redundant rows are harmless), dp standard normal in Rᵈ.
    """
    G = _checked_matrix(G, "G")
    count = _checked_count(count)
    rng = _checked_rng(rng)
    N = _null_space(G)
    d = G.shape[1]
    dq = N @ rng.standard_normal((N.shape[1], count))
    dp = rng.standard_normal((d, count))
    return np.asarray(np.vstack([dq, dp]), dtype=np.float64)


def tangent_variations(G: Matrix, Gv_q: Matrix, Gv_p: Matrix, count: int, rng: np.random.Generator) -> Matrix:
    """``count`` random columns tangent to M = {g(q) = 0, gᵛ(q, p) = 0} at (qⁿ, pⁿ).

    T M = ker [[G, 0], [Gv_q, Gv_p]] with G = Dg (m, d), Gv_q = ∂gᵛ/∂q and Gv_p = ∂gᵛ/∂p (m′, d);
    for gᵛ = G(q) M⁻¹ p, Gv_p = G M⁻¹ and row k of Gv_q is (∇²g_k M⁻¹ p)ᵀ. The columns are
    standard normal in an orthonormal basis of that kernel. ValueError if the kernel is {0}.
    """
    G = _checked_matrix(G, "G")
    d = G.shape[1]
    Gv_q = _checked_matrix(Gv_q, "Gv_q", d)
    Gv_p = _checked_matrix(Gv_p, "Gv_p", d)
    if Gv_p.shape != Gv_q.shape:
        raise ValueError(f"Gv_p must have the shape of Gv_q {Gv_q.shape}, got {Gv_p.shape}")
    count = _checked_count(count)
    rng = _checked_rng(rng)
    C = np.block([[G, np.zeros_like(G)], [Gv_q, Gv_p]])
    N = _null_space(C)
    if N.shape[1] == 0:
        raise ValueError(f"G, Gv_q, Gv_p: the constraints [[G, 0], [Gv_q, Gv_p]] {C.shape} have full column "
                         "rank, so M has no tangent directions")
    return np.asarray(N @ rng.standard_normal((N.shape[1], count)), dtype=np.float64)


# ---- the one-step map of a liemech method ------------------------------------------------------


def step_map(problem: Problem[P], method: Method, h: float) -> Callable[[Vector], Vector]:
    """The map z = (q, p) ↦ (q₁, p₁) of one step of ``method`` with step ``h`` on a problem on Rn(d).

    The step starts from NodeState(q, p, η, λ) with η = problem.system.velocity(q, p) and
    λ = problem.lam0 (None without constraints); on Rⁿ the body momentum μ is p. It is the
    method's compiled step, compiled once and started afresh from that state at every call, so the
    map is a function of z alone. For nonholonomic VPRK, λ_k is an input of the step and stays
    problem.lam0. A step that fails raises ConvergenceError; non-Rn problems raise TypeError.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a liemech Problem, got {type(problem).__name__}")
    if not isinstance(problem.group, Rn):
        raise TypeError(f"step_map needs a problem on Rn(d) with z = (q, p), got one on {problem.group!r}")
    if not isinstance(method, CompiledMethod):
        raise TypeError(f"method must be a liemech Method (e.g. lm.VPRK(lm.lobatto(2))), got {type(method).__name__}")
    if not isinstance(h, (int, float)) or isinstance(h, bool) or not np.isfinite(h) or h <= 0.0:
        raise ValueError(f"h must be a positive finite step size, got {h!r}")
    flat = cast(Problem[Vector], problem)  # on Rn the point type is Vector
    d = flat.group.dim
    lam0 = flat.lam0
    system = flat.system
    compiled, step = compiled_for(flat, method, "single", jit)
    step_size = jnp.asarray(float(h))

    def psi(z: Vector) -> Vector:
        z = as_float_array(z, "z")
        if z.shape != (2 * d,):
            raise ValueError(f"z must be (q, p) of shape ({2 * d},), got {z.shape}")
        q, p = z[:d].copy(), z[d:].copy()
        lam = None if lam0 is None else lam0.copy()
        _, node = step(compiled.start(NodeState(q, p, system.velocity(q, p), lam)), step_size)
        if int(node.status) != StepStatus.CONVERGED:
            raise convergence_error(method, 0, 0.0, float(node.residual), int(node.status), flat.group)
        return np.concatenate([np.asarray(node.g, dtype=np.float64), np.asarray(node.mu, dtype=np.float64)])

    return psi
