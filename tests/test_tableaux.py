"""Tableaux against the exact tables of spec 004-vector §3.5 and the properties it claims."""

import math

import numpy as np
import pytest

import liemech as lm
from liemech.tableaux import (
    check_constrained_hypotheses,
    satisfies_constrained_hypotheses,
    simplifying_B,
    simplifying_C,
    simplifying_CC,
    simplifying_D,
    simplifying_DD,
    stability_function,
    symplectic_conjugate,
    symplecticity_defect,
)

R5, R3, R15, R21 = math.sqrt(5), math.sqrt(3), math.sqrt(15), math.sqrt(21)

EXACT_LOBATTO: dict[int, tuple[lm.Matrix, lm.Matrix, list[float], list[float]]] = {
    2: (np.array([[0, 0], [1 / 2, 1 / 2]]), np.array([[1 / 2, 0], [1 / 2, 0]]), [1 / 2, 1 / 2], [0, 1]),
    3: (
        np.array([[0, 0, 0], [5 / 24, 1 / 3, -1 / 24], [1 / 6, 2 / 3, 1 / 6]]),
        np.array([[1 / 6, -1 / 6, 0], [1 / 6, 1 / 3, 0], [1 / 6, 5 / 6, 0]]),
        [1 / 6, 2 / 3, 1 / 6],
        [0, 1 / 2, 1],
    ),
    4: (
        np.array([
            [0, 0, 0, 0],
            [(11 + R5) / 120, (25 - R5) / 120, (25 - 13 * R5) / 120, (-1 + R5) / 120],
            [(11 - R5) / 120, (25 + 13 * R5) / 120, (25 + R5) / 120, (-1 - R5) / 120],
            [1 / 12, 5 / 12, 5 / 12, 1 / 12],
        ]),
        np.array([
            [1 / 12, (-1 - R5) / 24, (-1 + R5) / 24, 0],
            [1 / 12, (25 + R5) / 120, (25 - 13 * R5) / 120, 0],
            [1 / 12, (25 + 13 * R5) / 120, (25 - R5) / 120, 0],
            [1 / 12, (11 - R5) / 24, (11 + R5) / 24, 0],
        ]),
        [1 / 12, 5 / 12, 5 / 12, 1 / 12],
        [0, (5 - R5) / 10, (5 + R5) / 10, 1],
    ),
}


@pytest.mark.parametrize("s", [2, 3, 4])
def test_lobatto_equals_the_exact_tables(s: int) -> None:
    A, A_hat, b, c = EXACT_LOBATTO[s]
    pair = lm.lobatto(s)
    assert np.max(np.abs(pair.A - A)) <= 1e-15
    assert np.max(np.abs(pair.A_hat - A_hat)) <= 2e-15
    assert np.max(np.abs(pair.b - b)) <= 1e-15 and np.max(np.abs(pair.b_hat - b)) <= 1e-15
    assert np.max(np.abs(pair.c - c)) <= 1e-15
    assert pair.order == 2 * s - 2


def test_lobatto_5_spot_values() -> None:
    pair = lm.lobatto(5)
    assert np.max(np.abs(pair.c - [0, 0.5 - R21 / 14, 0.5, 0.5 + R21 / 14, 1])) <= 1e-15
    assert np.max(np.abs(pair.b - [1 / 20, 49 / 180, 16 / 45, 49 / 180, 1 / 20])) <= 1e-15
    a3 = [13 / 320, 49 / 360 + 7 * R21 / 192, 8 / 45, 49 / 360 - 7 * R21 / 192, 3 / 320]
    assert np.max(np.abs(pair.A[2] - a3)) <= 1e-15
    a_hat5 = [1 / 20, 119 / 360 - R21 / 120, 13 / 45, 119 / 360 + R21 / 120, 0]
    assert np.max(np.abs(pair.A_hat[4] - a_hat5)) <= 1e-15


@pytest.mark.parametrize("s", [2, 3, 4, 5, 6])
def test_lobatto_properties(s: int) -> None:
    """B(2s−2), C(s), D(s−2), Ĉ(s−2), D̂(s), CĈ(s), DD̂(s), ĈC(s−2), D̂D(s−2), symplectic, H1–H3, H1′–H2′."""
    pair = lm.lobatto(s)
    P, M = pair.position, pair.momentum
    tol = 1e-14
    assert simplifying_B(P, 2 * s - 2) <= tol and simplifying_B(M, 2 * s - 2) <= tol
    assert simplifying_C(P, s) <= tol
    assert simplifying_D(M, s) <= tol
    if s > 2:
        assert simplifying_D(P, s - 2) <= tol and simplifying_C(M, s - 2) <= tol
        assert simplifying_CC(M, P, s - 2) <= tol and simplifying_DD(M, P, s - 2) <= tol
    assert simplifying_CC(P, M, s) <= tol and simplifying_DD(P, M, s) <= tol
    assert simplifying_B(P, 2 * s - 1) > 1e-6  # and no more: order exactly 2s − 2
    assert simplifying_C(P, s + 1) > 1e-6
    assert symplecticity_defect(pair) <= tol
    assert satisfies_constrained_hypotheses(pair)
    inner_det = abs(float(np.linalg.det(pair.A[1:, 1:])))
    assert inner_det > 0.0
    assert abs(stability_function(P, -1e9) - (-1) ** (s - 1)) <= 1e-6  # R_A(∞) = (−1)^{s−1}


def test_lobatto_inner_determinants() -> None:
    """det Ã = 1/2, 1/12, 1/120, 1/1680 for s = 2..5 (spec §4.4)."""
    dets = [float(np.linalg.det(lm.lobatto(s).A[1:, 1:])) for s in (2, 3, 4, 5)]
    assert np.max(np.abs(np.array(dets) - [1 / 2, 1 / 12, 1 / 120, 1 / 1680])) <= 1e-15


def test_gauss_tables_and_properties() -> None:
    g1 = lm.gauss(1)
    assert g1.A.tolist() == [[0.5]] and g1.b.tolist() == [1.0] and g1.order == 2
    g2 = lm.gauss(2)
    A2 = np.array([[1 / 4, 1 / 4 - R3 / 6], [1 / 4 + R3 / 6, 1 / 4]])
    assert np.max(np.abs(g2.A - A2)) <= 1e-15 and np.max(np.abs(g2.c - [0.5 - R3 / 6, 0.5 + R3 / 6])) <= 1e-15
    g3 = lm.gauss(3)
    A3 = np.array([
        [5 / 36, 2 / 9 - R15 / 15, 5 / 36 - R15 / 30],
        [5 / 36 + R15 / 24, 2 / 9, 5 / 36 - R15 / 24],
        [5 / 36 + R15 / 30, 2 / 9 + R15 / 15, 5 / 36],
    ])
    assert np.max(np.abs(g3.A - A3)) <= 1e-15
    for s in (1, 2, 3, 4, 5):
        g = lm.gauss(s)
        assert np.array_equal(g.A_hat, g.A)
        assert symplecticity_defect(g) <= 1e-15
        assert simplifying_B(g.position, 2 * s) <= 1e-14 and simplifying_C(g.position, s) <= 1e-14
        assert simplifying_D(g.position, s) <= 1e-14
        assert not satisfies_constrained_hypotheses(g)


def test_gauss_stability_is_the_diagonal_pade_approximant() -> None:
    """R(z) = P(z)/P(−z) with P(z) = Σ_j (2s−j)! s! / ((2s)! j! (s−j)!) z^j, and |R(iy)| = 1."""
    f = math.factorial
    for s in (1, 2, 3, 4):
        t = lm.gauss(s).position

        def pade(z: complex) -> complex:
            P = sum(f(2 * s - j) * f(s) / (f(2 * s) * f(j) * f(s - j)) * z**j for j in range(s + 1))
            Q = sum(f(2 * s - j) * f(s) / (f(2 * s) * f(j) * f(s - j)) * (-z) ** j for j in range(s + 1))
            return P / Q

        for z in (0.3, -2.0, 5.0 + 1.0j, -40.0):
            assert abs(stability_function(t, z) - pade(z)) <= 1e-13 * max(1.0, abs(pade(z)))
        for y in (0.3, 2.0, 40.0):
            assert abs(abs(stability_function(t, 1j * y)) - 1.0) <= 1e-13


def test_radau_iia() -> None:
    r2 = lm.radau_iia(2)
    assert np.max(np.abs(r2.A - [[5 / 12, -1 / 12], [3 / 4, 1 / 4]])) <= 1e-15
    assert np.max(np.abs(r2.c - [1 / 3, 1])) <= 1e-15 and r2.order == 3
    for s in (1, 2, 3, 4):
        r = lm.radau_iia(s)
        assert simplifying_B(r, 2 * s - 1) <= 1e-14 and simplifying_C(r, s) <= 1e-14
        assert abs(stability_function(r, -1e9)) <= 1e-6  # L-stable


def test_conjugate_of_conjugate_is_the_original() -> None:
    P = lm.lobatto(4).position
    back = symplectic_conjugate(symplectic_conjugate(P))
    assert np.max(np.abs(back.A - P.A)) <= 1e-15


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="s must be an integer ≥ 2 for Lobatto"):
        lm.lobatto(1)
    with pytest.raises(ValueError, match="s must be an integer ≥ 1 for Gauss"):
        lm.gauss(0)
    with pytest.raises(ValueError, match="s must be an integer"):
        lm.gauss(2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"gauss\(2\) violates H1 \(defect .*\), H3"):
        check_constrained_hypotheses(lm.gauss(2))
    check_constrained_hypotheses(lm.lobatto(3))
    with pytest.raises(ValueError, match="A must be"):
        lm.Tableau(np.zeros((2, 3)), np.ones(2), np.ones(2), 1, "bad")
    with pytest.raises(ValueError, match="needs every b_i ≠ 0"):
        symplectic_conjugate(lm.Tableau(np.zeros((2, 2)), np.array([1.0, 0.0]), np.zeros(2), 1, "zero b"))
