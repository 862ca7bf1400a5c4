"""Butcher tableaux: Lobatto IIIA–IIIB pairs, Gauss–Legendre, Radau IIA, and their checks.

Collocation (spec 004-vector App. A, eq. (41)): with ℓ_j the Lagrange basis on the nodes c,
a_ij = ∫₀^{c_i} ℓ_j and b_j = ∫₀¹ ℓ_j. The symplectic conjugate is â_ij = b_j (1 − a_ji / b_i),
b̂ = b (§3.4 of the vector spec).
"""

from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.polynomial import legendre

from liemech.types import Matrix, Vector

_HYPOTHESIS_TOL: Final = 1e-12


@dataclass(frozen=True)
class Tableau:
    """A Runge–Kutta tableau (A, b, c) of classical order ``order``."""

    A: Matrix
    b: Vector
    c: Vector
    order: int
    name: str

    def __post_init__(self) -> None:
        s = self.b.shape[0] if self.b.ndim == 1 else -1
        if s < 1 or self.A.shape != (s, s) or self.c.shape != (s,):
            raise ValueError(
                f"tableau {self.name}: A must be (s, s), b and c (s,); got {self.A.shape}, {self.b.shape}, {self.c.shape}"
            )
        for field_name, value in (("A", self.A), ("b", self.b), ("c", self.c)):
            if not np.all(np.isfinite(value)):
                raise ValueError(f"tableau {self.name}: {field_name} must be finite")

    @property
    def stages(self) -> int:
        return int(self.b.shape[0])


@dataclass(frozen=True)
class TableauPair:
    """A partitioned pair: ``position`` (A, b, c: IIIA-like) and ``momentum`` (Â, b̂: IIIB-like)."""

    position: Tableau
    momentum: Tableau
    name: str

    @property
    def A(self) -> Matrix:
        return self.position.A

    @property
    def b(self) -> Vector:
        return self.position.b

    @property
    def c(self) -> Vector:
        return self.position.c

    @property
    def A_hat(self) -> Matrix:
        return self.momentum.A

    @property
    def b_hat(self) -> Vector:
        return self.momentum.b

    @property
    def order(self) -> int:
        return min(self.position.order, self.momentum.order)

    @property
    def stages(self) -> int:
        return self.position.stages


def _stages(s: object, minimum: int, family: str) -> int:
    if not isinstance(s, int) or isinstance(s, bool) or s < minimum:
        raise ValueError(f"s must be an integer ≥ {minimum} for {family}, got {s!r}")
    return s


def _lagrange_integrals(c: Vector, upper: Vector) -> Matrix:
    """M[i, j] = ∫₀^{upper_i} ℓ_j(t) dt, by Gauss–Legendre quadrature exact for degree s − 1."""
    s = c.shape[0]
    x, w = legendre.leggauss(s)
    out = np.empty((upper.shape[0], s))
    for i, u in enumerate(upper):
        t = 0.5 * u * (x + 1.0)
        for j in range(s):
            others = np.delete(c, j)
            basis = np.prod((t[:, None] - others[None, :]) / (c[j] - others[None, :]), axis=1)
            out[i, j] = 0.5 * u * float(w @ basis)
    return out


def collocation(c: Vector, order: int, name: str) -> Tableau:
    """The collocation method on nodes c: a_ij = ∫₀^{c_i} ℓ_j, b_j = ∫₀¹ ℓ_j (eq. (41))."""
    c = np.asarray(c, dtype=np.float64)
    A = _lagrange_integrals(c, c)
    b = _lagrange_integrals(c, np.ones(1))[0]
    return Tableau(A, b, c, order, name)


def symplectic_conjugate(t: Tableau) -> Tableau:
    """â_ij = b_j (1 − a_ji / b_i), b̂ = b, on the same nodes c (needs every b_i ≠ 0).

    The row sums of Â need not equal c: for Lobatto IIIB(2) they are (½, ½) on nodes (0, 1).
    """
    if np.any(t.b == 0.0):
        raise ValueError(f"tableau {t.name}: the symplectic conjugate needs every b_i ≠ 0")
    A_hat = t.b[None, :] * (1.0 - t.A.T / t.b[:, None])
    return Tableau(A_hat, t.b.copy(), t.c.copy(), t.order, f"{t.name} conjugate")


def _interval_nodes(roots_on_minus1_1: Vector) -> Vector:
    return np.sort(0.5 * (np.asarray(roots_on_minus1_1, dtype=np.float64) + 1.0))


def lobatto(s: int) -> TableauPair:
    """Lobatto IIIA–IIIB, s ≥ 2 ("Lobatto-s"): nodes 0, 1 and the zeros of P′_{s−1}(2x − 1);
    IIIA by collocation, IIIB its symplectic conjugate. Order 2s − 2."""
    s = _stages(s, 2, "Lobatto IIIA–IIIB")
    interior = np.asarray(legendre.Legendre.basis(s - 1).deriv().roots().real, dtype=np.float64)
    c = np.concatenate([[0.0], _interval_nodes(interior), [1.0]])
    iiia = collocation(c, 2 * s - 2, f"Lobatto IIIA({s})")
    # The conjugate of IIIA is IIIB; a_1j = 0 and a_sj = b_j hold exactly by construction.
    iiia.A[0] = 0.0
    iiia.A[-1] = iiia.b
    iiib = symplectic_conjugate(iiia)
    iiib.A[:, -1] = 0.0
    return TableauPair(iiia, Tableau(iiib.A, iiib.b, iiib.c, 2 * s - 2, f"Lobatto IIIB({s})"), f"lobatto({s})")


def gauss(s: int) -> TableauPair:
    """Gauss–Legendre collocation, s ≥ 1: nodes the zeros of P_s(2x − 1); order 2s; its own
    symplectic conjugate (Â = A)."""
    s = _stages(s, 1, "Gauss–Legendre")
    nodes, _ = legendre.leggauss(s)
    t = collocation(_interval_nodes(nodes), 2 * s, f"Gauss({s})")
    return TableauPair(t, t, f"gauss({s})")


def radau_iia(s: int) -> Tableau:
    """Radau IIA, s ≥ 1: nodes the zeros of P_s(2x − 1) − P_{s−1}(2x − 1) (c_s = 1); order 2s − 1."""
    s = _stages(s, 1, "Radau IIA")
    poly = legendre.Legendre.basis(s) - legendre.Legendre.basis(s - 1)
    c = _interval_nodes(np.asarray(poly.roots().real, dtype=np.float64))
    c[-1] = 1.0
    return collocation(c, 2 * s - 1, f"Radau IIA({s})")


# ---- checks (each returns the largest defect; 0 means exactly satisfied) --------------------


def simplifying_B(t: Tableau, p: int) -> float:
    """B(p): Σ_i b_i c_i^{k−1} = 1/k, k = 1..p."""
    return max(abs(float(t.b @ t.c ** (k - 1)) - 1.0 / k) for k in range(1, p + 1))


def simplifying_C(t: Tableau, q: int) -> float:
    """C(q): Σ_j a_ij c_j^{k−1} = c_i^k / k for all i, k = 1..q."""
    return max(float(np.max(np.abs(t.A @ t.c ** (k - 1) - t.c**k / k))) for k in range(1, q + 1))


def simplifying_D(t: Tableau, r: int) -> float:
    """D(r): Σ_i b_i c_i^{k−1} a_ij = b_j (1 − c_j^k) / k for all j, k = 1..r."""
    return max(
        float(np.max(np.abs((t.b * t.c ** (k - 1)) @ t.A - t.b * (1.0 - t.c**k) / k))) for k in range(1, r + 1)
    )


def simplifying_CC(first: Tableau, second: Tableau, q: int) -> float:
    """CĈ(q) for (first, second) = (a, â): Σ_{j,l} a_ij â_jl c_l^{k−2} = c_i^k / (k(k−1)), k = 2..q.
    Swap the arguments for ĈC."""
    c = first.c
    return max(
        (float(np.max(np.abs(first.A @ second.A @ c ** (k - 2) - c**k / (k * (k - 1))))) for k in range(2, q + 1)),
        default=0.0,
    )


def simplifying_DD(first: Tableau, second: Tableau, r: int) -> float:
    """DD̂(r): Σ_{i,j} b_i c_i^{k−2} a_ij â_jl = b_l [(k−1) − (k c_l − c_l^k)] / (k(k−1)), k = 2..r."""
    b, c = first.b, first.c
    return max(
        (
            float(np.max(np.abs((b * c ** (k - 2)) @ first.A @ second.A
                                - b * ((k - 1) - (k * c - c**k)) / (k * (k - 1)))))
            for k in range(2, r + 1)
        ),
        default=0.0,
    )


def symplecticity_defect(pair: TableauPair) -> float:
    """max |b_i â_ij + b̂_j a_ji − b_i b̂_j| and |b − b̂| (symplectic iff 0)."""
    b, bh = pair.b, pair.b_hat
    cross = b[:, None] * pair.A_hat + bh[None, :] * pair.A.T - b[:, None] * bh[None, :]
    return max(float(np.max(np.abs(cross))), float(np.max(np.abs(b - bh))))


def constrained_hypothesis_defects(pair: TableauPair) -> dict[str, float]:
    """Defects of H1 (a_1j = 0), H2 (Ã = (a_ij)_{i,j≥2} invertible: 1/cond), H3 (a_sj = b_j),
    H1′ (â_is = 0) and H2′ (â_i1 = b̂_1), spec 004-vector §4.4. H2 reports 0 when Ã is well
    conditioned and 1 when singular."""
    A, Ah = pair.A, pair.A_hat
    inner = A[1:, 1:]
    singular = 1.0 if inner.size == 0 or np.linalg.cond(inner) > 1e12 else 0.0
    return {
        "H1": float(np.max(np.abs(A[0]))),
        "H2": singular,
        "H3": float(np.max(np.abs(A[-1] - pair.b))),
        "H1'": float(np.max(np.abs(Ah[:, -1]))),
        "H2'": float(np.max(np.abs(Ah[:, 0] - pair.b_hat[0]))),
    }


def satisfies_constrained_hypotheses(pair: TableauPair) -> bool:
    """H1–H3 and H1′–H2′ all hold (to 1e-12)."""
    return all(d <= _HYPOTHESIS_TOL for d in constrained_hypothesis_defects(pair).values())


def check_constrained_hypotheses(pair: TableauPair) -> None:
    """Raise ValueError naming every violated hypothesis of H1–H3, H1′–H2′ and its defect."""
    failed = {k: d for k, d in constrained_hypothesis_defects(pair).items() if not d <= _HYPOTHESIS_TOL}
    if failed:
        detail = ", ".join(f"{k} (defect {d:.2e})" for k, d in failed.items())
        raise ValueError(
            f"tableau {pair.name} violates {detail}; constrained schemes need H1–H3 and H1′–H2′ "
            "(spec 004-vector §4.4), e.g. lobatto(s)"
        )


def stability_function(t: Tableau, z: complex) -> complex:
    """R(z) = 1 + z bᵀ (I − zA)⁻¹ 𝟙."""
    s = t.stages
    return complex(1.0 + z * (t.b @ np.linalg.solve(np.eye(s) - z * t.A, np.ones(s))))


