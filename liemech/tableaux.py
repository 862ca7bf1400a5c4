"""Butcher tableaux: Lobatto IIIA–IIIB pairs, Gauss–Legendre, Radau IIA, and their checks.

Every family is built by collocation (Martín de Diego & Sato Martín de Almagro 2018, App. A.3,
eq. (41)): with ℓ_j the Lagrange basis on the nodes c₁..c_s,

    a_ij = ∫₀^{c_i} ℓ_j(t) dt,    b_j = ∫₀¹ ℓ_j(t) dt.

The symplectic conjugate (ibid., proof of Theorem 4.2) is â_ij = b_j (1 − a_ji / b_i), b̂ = b. The nodes
are eigenvalues of a symmetric Jacobi matrix (Golub–Welsch) polished by Newton's method on the
defining Legendre polynomial, and the integrals of ℓ_j use Gauss–Legendre quadrature exact for
their degree, so every coefficient is exact to a few units of round-off for any s.
"""

import math
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.polynomial import legendre
from numpy.typing import ArrayLike, NDArray

from liemech.types import Matrix, Vector

HYPOTHESIS_TOL: Final = 1e-12
"""Default tolerance of the hypothesis checks H1–H3, H1′–H2′ (absolute, on coefficients of size ~1)."""

_H2_MAX_CONDITION: Final = 1e12


def _readonly_float_array(owner: str, field: str, value: ArrayLike, ndim: int) -> NDArray[np.float64]:
    try:
        if np.iscomplexobj(value):
            raise TypeError("complex entries")
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{owner}: {field} must be a real float array, got {value!r} ({exc})") from None
    if array.ndim != ndim:
        raise ValueError(f"{owner}: {field} must be {ndim}-dimensional, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{owner}: {field} must be finite, got {array.tolist()}")
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class Tableau:
    """A Runge–Kutta tableau (A, b, c) with s stages and classical order ``order``.

    The step is Y_i = y₀ + h Σ_j a_ij f(Y_j), y₁ = y₀ + h Σ_j b_j f(Y_j) (Martín de Diego & Sato
    Martín de Almagro 2018, eq. (42)). The arrays are copied to read-only float64 arrays. The
    row-sum condition Σ_j a_ij = c_i is C(1), checked by ``simplifying_C(t, 1)`` and not imposed
    here: Lobatto IIIB(2) breaks it.
    """

    A: Matrix
    b: Vector
    c: Vector
    order: int
    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ValueError(f"Tableau: name must be a str, got {self.name!r}")
        owner = f"Tableau {self.name!r}"
        b = _readonly_float_array(owner, "b", self.b, 1)
        s = b.shape[0]
        if s < 1:
            raise ValueError(f"{owner}: b must have at least one stage, got shape {b.shape}")
        A = _readonly_float_array(owner, "A", self.A, 2)
        if A.shape != (s, s):
            raise ValueError(f"{owner}: A must have shape (s, s) = ({s}, {s}) with s = len(b), got {A.shape}")
        c = _readonly_float_array(owner, "c", self.c, 1)
        if c.shape != (s,):
            raise ValueError(f"{owner}: c must have shape (s,) = ({s},) with s = len(b), got {c.shape}")
        if not isinstance(self.order, (int, np.integer)) or isinstance(self.order, bool) or self.order < 1:
            raise ValueError(f"{owner}: order must be an integer ≥ 1, got {self.order!r}")
        object.__setattr__(self, "A", A)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "c", c)
        object.__setattr__(self, "order", int(self.order))

    @property
    def stages(self) -> int:
        """The number of stages s = len(b)."""
        return int(self.b.shape[0])


@dataclass(frozen=True, eq=False)
class TableauPair:
    """A partitioned RK pair: ``position`` (a, b, c), e.g. Lobatto IIIA, used for q̇ = v, and
    ``momentum`` (â, b̂, ĉ), e.g. Lobatto IIIB, used for ṗ (Martín de Diego & Sato Martín de
    Almagro 2018, eqs. (9), (13)).

    ``order`` is the classical order of the partitioned method, taken as the smaller of the two
    tableaux' orders (the constructors set both to the order of the pair).
    """

    position: Tableau
    momentum: Tableau
    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ValueError(f"TableauPair: name must be a str, got {self.name!r}")
        for field, value in (("position", self.position), ("momentum", self.momentum)):
            if not isinstance(value, Tableau):
                raise ValueError(f"TableauPair {self.name!r}: {field} must be a Tableau, got {type(value).__name__}")
        if self.position.stages != self.momentum.stages:
            raise ValueError(
                f"TableauPair {self.name!r}: position and momentum need the same number of stages, "
                f"got {self.position.stages} and {self.momentum.stages}"
            )

    @property
    def A(self) -> Matrix:
        """a_ij, the position (IIIA) matrix."""
        return self.position.A

    @property
    def b(self) -> Vector:
        """b_i, the position weights."""
        return self.position.b

    @property
    def c(self) -> Vector:
        """c_i, the nodes."""
        return self.position.c

    @property
    def A_hat(self) -> Matrix:
        """â_ij, the momentum (IIIB) matrix."""
        return self.momentum.A

    @property
    def b_hat(self) -> Vector:
        """b̂_i, the momentum weights."""
        return self.momentum.b

    @property
    def c_hat(self) -> Vector:
        """ĉ_i, the momentum nodes (equal to c for every pair built here)."""
        return self.momentum.c

    @property
    def order(self) -> int:
        """Classical order of the pair: min(position.order, momentum.order)."""
        return min(self.position.order, self.momentum.order)

    @property
    def stages(self) -> int:
        """The number of stages s."""
        return self.position.stages


# ---- construction ---------------------------------------------------------------------------


def _stage_count(s: object, minimum: int, family: str) -> int:
    if not isinstance(s, (int, np.integer)) or isinstance(s, bool) or s < minimum:
        raise ValueError(f"s must be an integer ≥ {minimum} for {family}, got {s!r}")
    return int(s)


def _condition_count(name: str, k: object) -> int:
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 0:
        raise ValueError(f"{name} must be an integer ≥ 0, got {k!r}")
    return int(k)


def _jacobi_zeros(n: int, alpha: float, beta: float) -> Vector:
    """Zeros of the Jacobi polynomial P_n^{(α,β)} on [−1, 1]: eigenvalues of its Jacobi matrix."""
    if n == 0:
        return np.zeros(0)
    k = np.arange(n, dtype=np.float64)
    ab = alpha + beta
    diag = np.empty(n)
    diag[0] = (beta - alpha) / (ab + 2.0)
    kk = k[1:]
    diag[1:] = (beta**2 - alpha**2) / ((2 * kk + ab) * (2 * kk + ab + 2.0))
    m = np.arange(1, n, dtype=np.float64)
    off = np.sqrt(
        4.0 * m * (m + alpha) * (m + beta) * (m + ab)
        / ((2 * m + ab) ** 2 * (2 * m + ab + 1.0) * (2 * m + ab - 1.0))
    )
    J = np.diag(diag) + np.diag(off, 1) + np.diag(off, -1)
    return np.asarray(np.linalg.eigvalsh(J), dtype=np.float64)


def _newton_polish(x: Vector, coef: Vector) -> Vector:
    """Newton's method on the Legendre series ``coef`` from the starting zeros x (already close)."""
    d_coef = legendre.legder(coef)
    for _ in range(4):
        step = legendre.legval(x, coef) / legendre.legval(x, d_coef)
        x = x - step
        if np.max(np.abs(step), initial=0.0) <= 4.0 * np.finfo(np.float64).eps:
            break
    return np.asarray(x, dtype=np.float64)


def _symmetric(x: Vector) -> Vector:
    """Impose x_k = −x_{n−1−k} exactly on zeros of an even or odd polynomial (sorted ascending)."""
    return np.asarray(0.5 * (x - x[::-1]), dtype=np.float64)


def _legendre_basis(n: int) -> Vector:
    coef = np.zeros(n + 1)
    coef[n] = 1.0
    return coef


def _lagrange_integrals(c: Vector, upper: Vector) -> Matrix:
    """M[i, j] = ∫₀^{upper_i} ℓ_j(t) dt, by s-point Gauss–Legendre quadrature (exact for degree s − 1)."""
    s = c.shape[0]
    x, w = legendre.leggauss(s)
    t = 0.5 * upper[:, None] * (x[None, :] + 1.0)  # quadrature points on [0, upper_i]
    out = np.empty((upper.shape[0], s))
    for j in range(s):
        others = np.delete(c, j)
        basis = np.prod((t[:, :, None] - others) / (c[j] - others), axis=2)  # ℓ_j at the points
        out[:, j] = 0.5 * upper * (basis @ w)
    return out


def collocation(c: Vector, order: int, name: str) -> Tableau:
    """The collocation method on distinct nodes c: a_ij = ∫₀^{c_i} ℓ_j, b_j = ∫₀¹ ℓ_j (eq. (41)).

    ``order`` is recorded as given (it depends on the nodes: 2s for Gauss, 2s − 2 for Lobatto).
    """
    nodes = _readonly_float_array(f"collocation {name!r}", "c", c, 1)
    if nodes.shape[0] < 1 or np.unique(nodes).shape[0] != nodes.shape[0]:
        raise ValueError(f"collocation {name!r}: c must hold at least one node, all distinct, got {nodes.tolist()}")
    A = _lagrange_integrals(nodes, nodes)
    # With c_s = 1 (Lobatto, Radau IIA), b is the last row of A: H3 (a_sj = b_j) then holds exactly.
    b = A[-1].copy() if nodes[-1] == 1.0 else _lagrange_integrals(nodes, np.ones(1))[0]
    return Tableau(A, b, nodes, order, name)


def symplectic_conjugate(t: Tableau, name: str | None = None) -> Tableau:
    """The symplectic conjugate: â_ij = b_j (1 − a_ji / b_i), b̂ = b, ĉ = c (Martín de Diego & Sato
    Martín de Almagro 2018, proof of Theorem 4.2).

    It needs every b_i ≠ 0 and has the order of t. The row sums of Â need not equal c: Lobatto
    IIIB(2) has (½, ½) on the nodes (0, 1). Written this way, a_si = b_i gives â_is = 0 exactly.
    """
    if not isinstance(t, Tableau):
        raise ValueError(f"symplectic_conjugate needs a Tableau, got {type(t).__name__}")
    if np.any(t.b == 0.0):
        raise ValueError(
            f"tableau {t.name!r}: the symplectic conjugate â_ij = b_j (1 − a_ji / b_i) needs every b_i ≠ 0, "
            f"got b = {t.b.tolist()}"
        )
    A_hat = t.b[None, :] * (1.0 - t.A.T / t.b[:, None])
    return Tableau(A_hat, t.b, t.c, t.order, f"{t.name} conjugate" if name is None else name)


def lobatto(s: int) -> TableauPair:
    """The s-stage Lobatto IIIA–IIIB pair ("Lobatto-s"), s ≥ 2, classical order 2s − 2.

    Nodes c = 0, the zeros of P′_{s−1}(2x − 1), 1 (the Lobatto nodes of Martín de Diego & Sato Martín
    de Almagro 2018, App. A.1). IIIA (position) by
    collocation, eq. (41); IIIB (momentum) its symplectic conjugate â_ij = b_j (1 − a_ji / b_i).
    H1 (a_1j = 0), H3 (a_sj = b_j), H1′ (â_is = 0) and H2′ (â_i1 = b_1) hold exactly.
    """
    s = _stage_count(s, 2, "Lobatto IIIA–IIIB")
    interior = _jacobi_zeros(s - 2, 1.0, 1.0)  # P′_{s−1} ∝ P^{(1,1)}_{s−2}
    if s > 2:
        derivative = np.asarray(legendre.legder(_legendre_basis(s - 1)), dtype=np.float64)  # P′_{s−1}
        interior = _symmetric(_newton_polish(interior, derivative))
    c = np.concatenate([[0.0], 0.5 * (1.0 + interior), [1.0]])
    iiia = collocation(c, 2 * s - 2, f"Lobatto IIIA({s})")
    iiib = symplectic_conjugate(iiia, f"Lobatto IIIB({s})")
    return TableauPair(iiia, iiib, f"lobatto({s})")


def gauss(s: int) -> TableauPair:
    """The s-stage Gauss–Legendre method, s ≥ 1, order 2s: nodes the zeros of P_s(2x − 1), coefficients
    by collocation (eq. (41)). It is its own symplectic conjugate, so ``A_hat`` is ``A``. It
    violates H1 and H3 (and H1′, H2′): constrained schemes reject it.
    """
    s = _stage_count(s, 1, "Gauss–Legendre")
    x = _symmetric(_newton_polish(_jacobi_zeros(s, 0.0, 0.0), _legendre_basis(s)))
    t = collocation(0.5 * (1.0 + x), 2 * s, f"Gauss({s})")
    return TableauPair(t, t, f"gauss({s})")


def radau_iia(s: int) -> Tableau:
    """The s-stage Radau IIA method, s ≥ 1, order 2s − 1 (Martín de Diego & Sato Martín de Almagro
    2018, App. A): nodes the zeros of P_s(2x − 1) − P_{s−1}(2x − 1), so c_s = 1; coefficients by
    collocation (eq. (41)).
    """
    s = _stage_count(s, 1, "Radau IIA")
    interior = _jacobi_zeros(s - 1, 1.0, 0.0)  # (P_s − P_{s−1})(x) ∝ (x − 1) P^{(1,0)}_{s−1}(x)
    if s > 1:
        interior = _newton_polish(interior, _legendre_basis(s) - np.append(_legendre_basis(s - 1), 0.0))
    c = np.concatenate([0.5 * (1.0 + interior), [1.0]])
    return collocation(c, 2 * s - 1, f"Radau IIA({s})")


# ---- simplifying assumptions (each returns the largest defect; 0 means exactly satisfied) ---


def _max_abs(x: NDArray[np.float64]) -> float:
    return float(np.max(np.abs(x), initial=0.0))


def simplifying_B(t: Tableau, p: int) -> float:
    """Largest defect of B(p): Σ_i b_i c_i^{k−1} = 1/k for k = 1..p (Martín de Diego & Sato Martín
    de Almagro 2018, App. A.3).

    B(p) is the quadrature (b, c) being exact for polynomials of degree ≤ p − 1.
    """
    p = _condition_count("p", p)
    return max((abs(float(t.b @ t.c ** (k - 1)) - 1.0 / k) for k in range(1, p + 1)), default=0.0)


def simplifying_C(t: Tableau, q: int) -> float:
    """Largest defect of C(q): Σ_j a_ij c_j^{k−1} = c_i^k / k for all i and k = 1..q (App. A.3).

    C(q) is every stage having order q; C(1) is the row-sum condition Σ_j a_ij = c_i.
    """
    q = _condition_count("q", q)
    return max((_max_abs(t.A @ t.c ** (k - 1) - t.c**k / k) for k in range(1, q + 1)), default=0.0)


def simplifying_D(t: Tableau, r: int) -> float:
    """Largest defect of D(r): Σ_i b_i c_i^{k−1} a_ij = b_j (1 − c_j^k) / k for all j, k = 1..r (App. A.3)."""
    r = _condition_count("r", r)
    return max(
        (_max_abs((t.b * t.c ** (k - 1)) @ t.A - t.b * (1.0 - t.c**k) / k) for k in range(1, r + 1)),
        default=0.0,
    )


def _roles(pair: TableauPair, swapped: bool) -> tuple[Tableau, Tableau]:
    return (pair.momentum, pair.position) if swapped else (pair.position, pair.momentum)


def simplifying_C_hat(pair: TableauPair, q: int, *, swapped: bool = False) -> float:
    """Largest defect of the mixed condition CĈ(q) of a pair (Martín de Diego & Sato Martín de
    Almagro 2018, App. A.3.1):

        Σ_{j,l} a_ij â_jl c_l^{k−2} = c_i^k / (k (k − 1))  for all i and k = 2..q.

    With ``swapped=True``, ĈC(q): the same with (a, c) and (â, ĉ) exchanged. C(q) and Ĉ(q − 1)
    together imply CĈ(q).
    """
    q = _condition_count("q", q)
    first, second = _roles(pair, swapped)
    c = first.c
    return max(
        (_max_abs(first.A @ (second.A @ c ** (k - 2)) - c**k / (k * (k - 1))) for k in range(2, q + 1)),
        default=0.0,
    )


def simplifying_D_hat(pair: TableauPair, r: int, *, swapped: bool = False) -> float:
    """Largest defect of the mixed condition DD̂(r) of a pair (Martín de Diego & Sato Martín de
    Almagro 2018, App. A.3.1):

        Σ_{i,j} b_i c_i^{k−2} a_ij â_jl = b_l [(k − 1) − (k c_l − c_l^k)] / (k (k − 1))
        for all l and k = 2..r.

    With ``swapped=True``, D̂D(r): the same with (a, b, c) and (â, b̂, ĉ) exchanged. D(r − 1) and
    D̂(r) together imply DD̂(r).
    """
    r = _condition_count("r", r)
    first, second = _roles(pair, swapped)
    b, c = first.b, first.c
    return max(
        (
            _max_abs(((b * c ** (k - 2)) @ first.A) @ second.A - b * ((k - 1) - (k * c - c**k)) / (k * (k - 1)))
            for k in range(2, r + 1)
        ),
        default=0.0,
    )


def symplecticity_defect(pair: TableauPair) -> float:
    """Largest defect of b_i â_ij + b̂_j a_ji = b_i b̂_j (all i, j) and b_i = b̂_i: the pair is
    symplectic iff it is 0 (Martín de Diego & Sato Martín de Almagro 2018, App. A.3.1; Hairer,
    Lubich & Wanner, Thm 4.6)."""
    b, bh = pair.b, pair.b_hat
    cross = b[:, None] * pair.A_hat + bh[None, :] * pair.A.T - b[:, None] * bh[None, :]
    return max(_max_abs(cross), _max_abs(b - bh))


# ---- hypotheses of the constrained schemes (Martín de Diego & Sato Martín de Almagro 2018, §4.3) ---


def _failures_H1_H3(pair: TableauPair, tol: float) -> list[str]:
    A = pair.A
    failures = []
    h1 = _max_abs(A[0])
    if not h1 <= tol:
        failures.append(f"H1 (a_1j = 0: max_j |a_1j| = {h1:.2e})")
    inner = A[1:, 1:]
    cond = float(np.linalg.cond(inner)) if inner.size else 1.0
    if not cond <= min(_H2_MAX_CONDITION, 1.0 / tol):
        failures.append(f"H2 (Ã = (a_ij)_{{i,j≥2}} invertible: cond(Ã) = {cond:.2e})")
    h3 = _max_abs(A[-1] - pair.b)
    if not h3 <= tol:
        failures.append(f"H3 (a_sj = b_j: max_j |a_sj − b_j| = {h3:.2e})")
    return failures


def _failures_H1p_H2p(pair: TableauPair, tol: float) -> list[str]:
    Ah = pair.A_hat
    failures = []
    h1p = _max_abs(Ah[:, -1])
    if not h1p <= tol:
        failures.append(f"H1′ (â_is = 0: max_i |â_is| = {h1p:.2e})")
    h2p = _max_abs(Ah[:, 0] - pair.b_hat[0])
    if not h2p <= tol:
        failures.append(f"H2′ (â_i1 = b̂_1: max_i |â_i1 − b̂_1| = {h2p:.2e})")
    return failures


def _checked_pair(pair: object, tol: float) -> TableauPair:
    if not isinstance(pair, TableauPair):
        raise ValueError(f"expected a TableauPair (e.g. lobatto(3)), got {type(pair).__name__}")
    if not tol > 0.0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    return pair


def satisfies_H1_H3(pair: TableauPair, tol: float = HYPOTHESIS_TOL) -> bool:
    """H1: a_1j = 0 for all j; H2: Ã = (a_ij)_{i,j≥2} invertible (cond(Ã) ≤ min(1e12, 1/tol));
    H3: a_sj = b_j for all j (stiffly accurate). Martín de Diego & Sato Martín de Almagro
    (2018, §4.3); each equality to ``tol``."""
    return not _failures_H1_H3(_checked_pair(pair, tol), tol)


def satisfies_H1p_H2p(pair: TableauPair, tol: float = HYPOTHESIS_TOL) -> bool:
    """H1′: â_is = 0 for all i; H2′: â_i1 = b̂_1 for all i. Martín de Diego & Sato Martín de
    Almagro (2018, §4.3); each to ``tol``."""
    return not _failures_H1p_H2p(_checked_pair(pair, tol), tol)


def check_constrained_hypotheses(pair: TableauPair, tol: float = HYPOTHESIS_TOL) -> None:
    """Raise ValueError naming every hypothesis of H1–H3, H1′–H2′ (Martín de Diego & Sato Martín de
    Almagro 2018, §4.3) that the pair violates, with its defect. The holonomic (eq. (13)) and
    nonholonomic (eq. (14)) schemes need all five; Lobatto IIIA–IIIB has them, Gauss does not."""
    pair = _checked_pair(pair, tol)
    failures = _failures_H1_H3(pair, tol) + _failures_H1p_H2p(pair, tol)
    if failures:
        raise ValueError(
            f"tableau {pair.name} violates {', '.join(failures)}; the constrained schemes need H1–H3 and "
            "H1′–H2′ (Martín de Diego & Sato Martín de Almagro 2018, §4.3), which lobatto(s) satisfies"
        )


# ---- linear stability -----------------------------------------------------------------------


def stability_function(t: Tableau, z: complex) -> complex:
    """R(z) = 1 + z bᵀ (I − zA)⁻¹ 𝟙 (Martín de Diego & Sato Martín de Almagro 2018, App. A.3):
    y₁ = R(hλ) y₀ on ẏ = λy.

    Raises ValueError where I − zA is singular (z⁻¹ an eigenvalue of A: a pole of R).
    """
    s = t.stages
    z = complex(z)
    if not math.isfinite(z.real) or not math.isfinite(z.imag):
        raise ValueError(f"z must be finite, got {z!r}; use stability_at_infinity for R(∞)")
    M = np.eye(s, dtype=np.complex128) - z * t.A
    try:
        x = np.linalg.solve(M, np.ones(s, dtype=np.complex128))
    except np.linalg.LinAlgError:
        raise ValueError(f"tableau {t.name!r}: R(z) has a pole at z = {z!r} (I − zA is singular)") from None
    return complex(1.0 + z * complex(t.b @ x))


def _determinant_polynomial(M: Matrix, radius: float) -> NDArray[np.float64]:
    """Coefficients (ascending) of w ↦ det(I − radius·w M), a polynomial of degree ≤ s, by exact
    interpolation at the (s + 1)-th roots of unity (a unitary DFT, so errors stay at round-off)."""
    n = M.shape[0] + 1
    roots = radius * np.exp(2j * np.pi * np.arange(n) / n)
    values = np.array([np.linalg.det(np.eye(n - 1) - z * M) for z in roots])
    return np.asarray(np.fft.fft(values).real / n, dtype=np.float64)


def stability_at_infinity(t: Tableau) -> float:
    """R(∞) = lim_{|z|→∞} R(z), with R(z) = det(I − zA + z𝟙bᵀ) / det(I − zA) [Hairer–Wanner IV.3].

    The limit is the ratio of the leading coefficients of numerator and denominator (coefficients
    below 1e-10 of the largest count as 0); ``math.inf`` when the numerator has the higher degree
    (explicit methods), 0 when the denominator has. Lobatto IIIA: (−1)^{s−1}.
    """
    # Interpolating on |z| = 2s balances the coefficients of collocation methods, whose A has
    # eigenvalues of size ~1/(2s) (for Gauss, den_m = s!(2s − m)!/((2s)! m!(s − m)!)).
    radius = 2.0 * t.stages
    num = _determinant_polynomial(t.A - np.outer(np.ones(t.stages), t.b), radius)
    den = _determinant_polynomial(t.A, radius)

    def degree(p: NDArray[np.float64]) -> int:
        return int(np.flatnonzero(np.abs(p) > 1e-10 * np.max(np.abs(p)))[-1])

    dn, dd = degree(num), degree(den)
    if dn > dd:
        return math.inf
    if dn < dd:
        return 0.0
    return float(num[dn] / den[dd])
