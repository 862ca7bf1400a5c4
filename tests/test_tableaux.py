"""Tableaux against independent truths: the exact tables of spec 004-vector §3.5 (typed in as
fractions and surds), closed-form Lobatto/Radau nodes and weights, the rooted-tree order conditions
(generated here, not by the library), the Padé approximants of exp, and the properties the spec claims
(B, C, D, the mixed CĈ, DD̂, ĈC, D̂D, symplecticity, H1–H3, H1′–H2′).
"""

import math
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import liemech as lm
from liemech.tableaux import (
    check_constrained_hypotheses,
    collocation,
    satisfies_H1_H3,
    satisfies_H1p_H2p,
    simplifying_B,
    simplifying_C,
    simplifying_C_hat,
    simplifying_D,
    simplifying_D_hat,
    stability_at_infinity,
    stability_function,
    symplectic_conjugate,
    symplecticity_defect,
)

R3, R5, R6, R7, R15, R21 = (math.sqrt(k) for k in (3, 5, 6, 7, 15, 21))
EXACT = 1e-15  # "exact to round-off" for coefficients of size ≤ 1


def max_err(x: lm.Matrix, y: object) -> float:
    return float(np.max(np.abs(x - np.asarray(y, dtype=np.float64))))


# ---- exact tables (spec 004-vector §3.5) -----------------------------------------------------

EXACT_LOBATTO: dict[int, tuple[list[list[float]], list[list[float]], list[float], list[float]]] = {
    2: ([[0, 0], [1 / 2, 1 / 2]], [[1 / 2, 0], [1 / 2, 0]], [1 / 2, 1 / 2], [0, 1]),
    3: (
        [[0, 0, 0], [5 / 24, 1 / 3, -1 / 24], [1 / 6, 2 / 3, 1 / 6]],
        [[1 / 6, -1 / 6, 0], [1 / 6, 1 / 3, 0], [1 / 6, 5 / 6, 0]],
        [1 / 6, 2 / 3, 1 / 6],
        [0, 1 / 2, 1],
    ),
    4: (
        [
            [0, 0, 0, 0],
            [(11 + R5) / 120, (25 - R5) / 120, (25 - 13 * R5) / 120, (-1 + R5) / 120],
            [(11 - R5) / 120, (25 + 13 * R5) / 120, (25 + R5) / 120, (-1 - R5) / 120],
            [1 / 12, 5 / 12, 5 / 12, 1 / 12],
        ],
        [
            [1 / 12, (-1 - R5) / 24, (-1 + R5) / 24, 0],
            [1 / 12, (25 + R5) / 120, (25 - 13 * R5) / 120, 0],
            [1 / 12, (25 + 13 * R5) / 120, (25 - R5) / 120, 0],
            [1 / 12, (11 - R5) / 24, (11 + R5) / 24, 0],
        ],
        [1 / 12, 5 / 12, 5 / 12, 1 / 12],
        [0, (5 - R5) / 10, (5 + R5) / 10, 1],
    ),
}


@pytest.mark.parametrize("s", [2, 3, 4])
def test_lobatto_equals_the_exact_tables_of_the_spec(s: int) -> None:
    A, A_hat, b, c = EXACT_LOBATTO[s]
    pair = lm.lobatto(s)
    assert max_err(pair.A, A) <= EXACT
    assert max_err(pair.A_hat, A_hat) <= EXACT
    assert max_err(pair.b, b) <= EXACT and max_err(pair.b_hat, b) <= EXACT
    assert max_err(pair.c, c) <= EXACT and max_err(pair.c_hat, c) <= EXACT
    assert pair.order == 2 * s - 2 and pair.stages == s and pair.name == f"lobatto({s})"


def test_lobatto_5_spot_values_of_the_spec() -> None:
    pair = lm.lobatto(5)
    assert max_err(pair.c, [0, 1 / 2 - R21 / 14, 1 / 2, 1 / 2 + R21 / 14, 1]) <= EXACT
    assert max_err(pair.b, [1 / 20, 49 / 180, 16 / 45, 49 / 180, 1 / 20]) <= EXACT
    assert max_err(pair.A[2], [13 / 320, 49 / 360 + 7 * R21 / 192, 8 / 45, 49 / 360 - 7 * R21 / 192, 3 / 320]) <= EXACT
    assert max_err(pair.A_hat[4], [1 / 20, 119 / 360 - R21 / 120, 13 / 45, 119 / 360 + R21 / 120, 0]) <= EXACT


def test_lobatto_6_nodes_and_weights_in_closed_form() -> None:
    """6-point Lobatto rule on [−1, 1]: ±1 (weight 1/15), ±√((7 ∓ 2√7)/21) (weights (14 ± √7)/30)."""
    x_in, x_out = math.sqrt((7 - 2 * R7) / 21), math.sqrt((7 + 2 * R7) / 21)
    c = [0, (1 - x_out) / 2, (1 - x_in) / 2, (1 + x_in) / 2, (1 + x_out) / 2, 1]
    b = [1 / 30, (14 - R7) / 60, (14 + R7) / 60, (14 + R7) / 60, (14 - R7) / 60, 1 / 30]
    pair = lm.lobatto(6)
    assert max_err(pair.c, c) <= EXACT and max_err(pair.b, b) <= EXACT
    assert pair.order == 10


def test_gauss_exact_tables() -> None:
    g1 = lm.gauss(1)  # implicit midpoint rule
    assert g1.A.tolist() == [[0.5]] and g1.b.tolist() == [1.0] and g1.c.tolist() == [0.5] and g1.order == 2
    g2 = lm.gauss(2)
    assert max_err(g2.A, [[1 / 4, 1 / 4 - R3 / 6], [1 / 4 + R3 / 6, 1 / 4]]) <= EXACT
    assert max_err(g2.c, [1 / 2 - R3 / 6, 1 / 2 + R3 / 6]) <= EXACT and max_err(g2.b, [1 / 2, 1 / 2]) <= EXACT
    g3 = lm.gauss(3)
    A3 = [
        [5 / 36, 2 / 9 - R15 / 15, 5 / 36 - R15 / 30],
        [5 / 36 + R15 / 24, 2 / 9, 5 / 36 - R15 / 24],
        [5 / 36 + R15 / 30, 2 / 9 + R15 / 15, 5 / 36],
    ]
    assert max_err(g3.A, A3) <= EXACT and max_err(g3.b, [5 / 18, 4 / 9, 5 / 18]) <= EXACT
    assert max_err(g3.c, [1 / 2 - R15 / 10, 1 / 2, 1 / 2 + R15 / 10]) <= EXACT
    for s in (1, 2, 3, 4, 5):
        g = lm.gauss(s)
        assert g.A_hat is g.A and g.b_hat is g.b and g.order == 2 * s  # its own conjugate


def test_radau_iia_exact_tables() -> None:
    r2 = lm.radau_iia(2)
    assert max_err(r2.A, [[5 / 12, -1 / 12], [3 / 4, 1 / 4]]) <= EXACT
    assert max_err(r2.b, [3 / 4, 1 / 4]) <= EXACT and max_err(r2.c, [1 / 3, 1]) <= EXACT and r2.order == 3
    r3 = lm.radau_iia(3)  # Hairer–Wanner II, Table IV.5.6
    A3 = [
        [(88 - 7 * R6) / 360, (296 - 169 * R6) / 1800, (-2 + 3 * R6) / 225],
        [(296 + 169 * R6) / 1800, (88 + 7 * R6) / 360, (-2 - 3 * R6) / 225],
        [(16 - R6) / 36, (16 + R6) / 36, 1 / 9],
    ]
    assert max_err(r3.A, A3) <= EXACT and max_err(r3.c, [(4 - R6) / 10, (4 + R6) / 10, 1]) <= EXACT
    assert lm.radau_iia(1).A.tolist() == [[1.0]]  # implicit Euler


# ---- simplifying assumptions and symplecticity ----------------------------------------------

TOL = 1e-14


@pytest.mark.parametrize("s", [2, 3, 4, 5, 6])
def test_lobatto_simplifying_assumptions(s: int) -> None:
    """Spec App. A.3.1: B(2s−2), C(s), D(s−2), B̂(2s−2), Ĉ(s−2), D̂(s), CĈ(s), DD̂(s), ĈC(s−2), D̂D(s−2)."""
    pair = lm.lobatto(s)
    iiia, iiib = pair.position, pair.momentum
    assert simplifying_B(iiia, 2 * s - 2) <= TOL and simplifying_B(iiib, 2 * s - 2) <= TOL
    assert simplifying_C(iiia, s) <= TOL and simplifying_D(iiia, s - 2) <= TOL
    assert simplifying_C(iiib, s - 2) <= 2 * TOL and simplifying_D(iiib, s) <= TOL
    assert simplifying_C_hat(pair, s) <= TOL and simplifying_D_hat(pair, s) <= TOL
    assert simplifying_C_hat(pair, s - 2, swapped=True) <= TOL
    assert simplifying_D_hat(pair, s - 2, swapped=True) <= TOL
    # … and no more: every claimed index is sharp.
    assert simplifying_B(iiia, 2 * s - 1) > 1e-7 and simplifying_C(iiia, s + 1) > 1e-7
    assert simplifying_D(iiia, s - 1) > 1e-7 and simplifying_C(iiib, s - 1) > 1e-7
    assert simplifying_C_hat(pair, s + 1) > 1e-7 and simplifying_D_hat(pair, s + 1) > 1e-7
    if s >= 3:  # ĈC(1), D̂D(1) are vacuous (k runs from 2)
        assert simplifying_C_hat(pair, s - 1, swapped=True) > 1e-7
        assert simplifying_D_hat(pair, s - 1, swapped=True) > 1e-7


@pytest.mark.parametrize("s", [2, 3, 4, 5, 6])
def test_lobatto_is_symplectic_and_iiib_is_the_conjugate(s: int) -> None:
    pair = lm.lobatto(s)
    assert symplecticity_defect(pair) <= TOL
    b, A = pair.b, pair.A
    assert max_err(pair.A_hat, b[None, :] - b[None, :] * A.T / b[:, None]) <= 2 * EXACT


def test_gauss_and_radau_simplifying_assumptions() -> None:
    for s in (1, 2, 3, 4, 5):
        g = lm.gauss(s).position
        assert simplifying_B(g, 2 * s) <= TOL and simplifying_C(g, s) <= TOL and simplifying_D(g, s) <= TOL
        assert simplifying_B(g, 2 * s + 1) > 1e-7
        assert symplecticity_defect(lm.gauss(s)) <= TOL
        r = lm.radau_iia(s)
        assert simplifying_B(r, 2 * s - 1) <= TOL and simplifying_C(r, s) <= TOL and simplifying_D(r, s - 1) <= TOL
        assert simplifying_B(r, 2 * s) > 1e-7


def test_trivial_condition_counts_are_vacuous() -> None:
    t = lm.gauss(2).position
    assert simplifying_B(t, 0) == simplifying_C(t, 0) == simplifying_D(t, 0) == 0.0
    assert simplifying_C_hat(lm.gauss(2), 1) == simplifying_D_hat(lm.gauss(2), 1) == 0.0


# ---- classical order from the rooted-tree order conditions ------------------------------------

Trees = list[tuple[int, int, tuple[int, ...]]]  # (number of vertices, colour, indices of the children)


def rooted_trees(p: int, colours: int) -> Trees:
    """All rooted trees with ≤ p vertices coloured 0..colours−1, each once, ordered by size."""
    trees: Trees = []

    def forests(total: int, start: int) -> Iterator[tuple[int, ...]]:
        if total == 0:
            yield ()
            return
        for i in range(start, len(trees)):
            if trees[i][0] > total:
                break
            for rest in forests(total - trees[i][0], i):
                yield (i, *rest)

    for n in range(1, p + 1):
        trees.extend((n, k, f) for f in list(forests(n - 1, 0)) for k in range(colours))
    return trees


def test_tree_counts() -> None:
    """OEIS A000081 (rooted trees) and 2·A000151 (rooted trees with 2-coloured vertices)."""
    for colours, counts in ((1, [1, 1, 2, 4, 9, 20, 48, 115]), (2, [2, 4, 14, 52, 214, 916])):
        trees = rooted_trees(len(counts), colours)
        assert [sum(1 for t in trees if t[0] == n) for n in range(1, len(counts) + 1)] == counts


def order_defects(pair: tuple[lm.Tableau, ...], p: int) -> list[float]:
    """max |Φ(τ) − 1/γ(τ)| over the trees of each size 1..p, for an RK method (one tableau) or a
    partitioned one (two tableaux, bicoloured trees): Φ(τ) = b^{(κ)}ᵀ u(τ), u(τ) = Π_children
    A^{(κ')} u(τ'), the colour κ of a vertex selecting its tableau."""
    trees = rooted_trees(p, len(pair))
    s = pair[0].stages
    v: list[lm.Vector] = []
    gamma: list[float] = []
    worst = [0.0] * p
    for n, k, children in trees:
        u = np.ones(s)
        g = float(n)
        for child in children:
            u = u * v[child]
            g *= gamma[child]
        v.append(pair[k].A @ u)
        gamma.append(g)
        worst[n - 1] = max(worst[n - 1], abs(float(pair[k].b @ u) - 1.0 / g))
    return worst


def test_order_conditions_recognise_rk4() -> None:
    rk4 = lm.Tableau(
        np.array([[0, 0, 0, 0], [0.5, 0, 0, 0], [0, 0.5, 0, 0], [0, 0, 1, 0]]),
        np.array([1, 2, 2, 1]) / 6, np.array([0, 0.5, 0.5, 1]), 4, "RK4",
    )
    defects = order_defects((rk4,), 5)
    assert max(defects[:4]) <= EXACT and defects[4] > 1e-3


@pytest.mark.parametrize("s", [2, 3, 4])
def test_lobatto_pair_has_order_2s_minus_2_as_a_partitioned_method(s: int) -> None:
    pair = lm.lobatto(s)
    defects = order_defects((pair.position, pair.momentum), pair.order + 1)
    assert max(defects[: pair.order]) <= 1e-14
    assert defects[pair.order] > 1e-6  # exactly order 2s − 2


@pytest.mark.parametrize("s", [2, 3, 4, 5, 6])
def test_lobatto_iiia_and_iiib_each_have_order_2s_minus_2(s: int) -> None:
    pair = lm.lobatto(s)
    for t in (pair.position, pair.momentum):
        defects = order_defects((t,), min(2 * s - 1, 9))
        assert max(defects[: 2 * s - 2]) <= 1e-14
        if 2 * s - 1 <= 9:
            assert defects[2 * s - 2] > 1e-7


def test_lobatto_5_pair_to_order_6() -> None:
    """The bicoloured trees of size ≤ 6 for s = 5 (order 8 is covered tableau by tableau above)."""
    pair = lm.lobatto(5)
    assert max(order_defects((pair.position, pair.momentum), 6)) <= 1e-14


@pytest.mark.parametrize("s", [1, 2, 3, 4])
def test_gauss_and_radau_orders(s: int) -> None:
    g = lm.gauss(s).position
    dg = order_defects((g,), 2 * s + 1)
    assert max(dg[: 2 * s]) <= 1e-14 and dg[2 * s] > 1e-7
    r = lm.radau_iia(s)
    dr = order_defects((r,), 2 * s)
    assert max(dr[: 2 * s - 1]) <= 1e-14 and dr[2 * s - 1] > 1e-7


# ---- hypotheses of the constrained schemes (spec §4.4) ----------------------------------------


@pytest.mark.parametrize("s", [2, 3, 4, 5, 6])
def test_lobatto_satisfies_h1_h3_and_h1p_h2p_exactly(s: int) -> None:
    pair = lm.lobatto(s)
    assert satisfies_H1_H3(pair) and satisfies_H1p_H2p(pair)
    check_constrained_hypotheses(pair)
    assert np.all(pair.A[0] == 0.0) and np.array_equal(pair.A[-1], pair.b)  # H1, H3
    assert np.all(pair.A_hat[:, -1] == 0.0) and np.all(pair.A_hat[:, 0] == pair.b_hat[0])  # H1′, H2′
    assert pair.c[0] == 0.0 and pair.c[-1] == 1.0


def test_lobatto_inner_determinants() -> None:
    """det Ã = 1/2, 1/12, 1/120, 1/1680 for s = 2..5 (spec §4.4)."""
    dets = [float(np.linalg.det(lm.lobatto(s).A[1:, 1:])) for s in (2, 3, 4, 5)]
    assert max_err(np.array(dets), [1 / 2, 1 / 12, 1 / 120, 1 / 1680]) <= EXACT


@pytest.mark.parametrize("s", [1, 2, 3, 4, 5])
def test_gauss_fails_the_constrained_hypotheses(s: int) -> None:
    g = lm.gauss(s)
    assert not satisfies_H1_H3(g) and not satisfies_H1p_H2p(g)
    with pytest.raises(ValueError, match=rf"gauss\({s}\) violates H1 .*H3 .*H1′ .*H2′"):
        check_constrained_hypotheses(g)


def test_check_reports_which_hypothesis_fails_and_by_how_much() -> None:
    with pytest.raises(ValueError, match=r"H1 \(a_1j = 0: max_j \|a_1j\| = 2\.50e-01\)"):
        check_constrained_hypotheses(lm.gauss(2))
    # H2 alone: rows 1 and s as Lobatto's, but Ã = (a_ij)_{i,j≥2} singular.
    b = np.array([1 / 6, 2 / 3, 1 / 6])
    t = lm.Tableau(np.array([[0, 0, 0], [0, 0, 0], b]), b, np.array([0, 0.5, 1]), 1, "singular")
    pair = lm.TableauPair(t, symplectic_conjugate(t), "singular pair")
    assert not satisfies_H1_H3(pair) and satisfies_H1p_H2p(pair)
    with pytest.raises(ValueError, match=r"singular pair violates H2 \(Ã = .* invertible: cond\(Ã\) = .*\);"):
        check_constrained_hypotheses(pair)


# ---- stability function -----------------------------------------------------------------------


def pade(k: int, j: int, z: complex) -> complex:
    """(k, j) Padé approximant of exp: P(z)/Q(z), deg P = k, deg Q = j (Hairer–Wanner IV (3.30))."""
    f = math.factorial
    P = sum(f(j + k - i) * f(k) / (f(j + k) * f(i) * f(k - i)) * z**i for i in range(k + 1))
    Q = sum(f(j + k - i) * f(j) / (f(j + k) * f(i) * f(j - i)) * (-z) ** i for i in range(j + 1))
    return complex(P / Q)


POINTS = (0.3, -2.0, 5.0 + 1.0j, -40.0, 3.0j, -0.5 + 7.0j)


@pytest.mark.parametrize("s", [1, 2, 3, 4, 5])
def test_stability_functions_are_pade_approximants(s: int) -> None:
    """Gauss: (s, s); Lobatto IIIA and IIIB: (s−1, s−1); Radau IIA: (s−1, s)."""
    cases: list[tuple[lm.Tableau, int, int]] = [(lm.gauss(s).position, s, s), (lm.radau_iia(s), s - 1, s)]
    if s >= 2:
        cases += [(lm.lobatto(s).position, s - 1, s - 1), (lm.lobatto(s).momentum, s - 1, s - 1)]
    for t, k, j in cases:
        for z in POINTS:
            exact = pade(k, j, z)
            assert abs(stability_function(t, z) - exact) <= 1e-13 * max(1.0, abs(exact)), (t.name, z)


@pytest.mark.parametrize("s", [1, 2, 3, 4])
def test_gauss_stability_is_an_order_2s_approximation_of_exp_on_the_unit_circle(s: int) -> None:
    """|R(iy)| = 1, and R(z) − eᶻ = O(z^{2s+1}): its odd part is z^{2s+1} (E + F z² + O(z⁴)) with
    E = (−1)^{s+1} (s!)² / ((2s)! (2s+1)!), measured by Richardson extrapolation from z = 0.4, 0.2."""
    t = lm.gauss(s).position
    for y in (0.3, 2.0, 40.0, 1e4):
        assert abs(abs(stability_function(t, 1j * y)) - 1.0) <= 1e-14
    f = math.factorial
    E = (-1) ** (s + 1) * f(s) ** 2 / (f(2 * s) * f(2 * s + 1))

    def scaled_odd_error(z: float) -> float:
        odd = ((stability_function(t, z) - math.exp(z)) - (stability_function(t, -z) - math.exp(-z))) / 2
        return odd.real / z ** (2 * s + 1)

    z = 0.4
    assert abs((4 * scaled_odd_error(z / 2) - scaled_odd_error(z)) / 3 - E) <= 2e-3 * abs(E)


@pytest.mark.parametrize("s", [2, 3, 4, 5, 6])
def test_lobatto_stability_at_infinity(s: int) -> None:
    """R_A(∞) = (−1)^{s−1} (spec App. A.3); the same for IIIB; Gauss (−1)^s; Radau IIA 0 (L-stable)."""
    pair = lm.lobatto(s)
    assert abs(stability_at_infinity(pair.position) - (-1) ** (s - 1)) <= 1e-13
    assert abs(stability_at_infinity(pair.momentum) - (-1) ** (s - 1)) <= 1e-13
    assert abs(stability_function(pair.position, -1e8) - (-1) ** (s - 1)) <= 1e-6
    assert abs(stability_at_infinity(lm.gauss(s).position) - (-1) ** s) <= 1e-13
    assert stability_at_infinity(lm.radau_iia(s)) == 0.0


def test_stability_of_explicit_and_singular_cases() -> None:
    euler = lm.Tableau(np.zeros((1, 1)), np.ones(1), np.zeros(1), 1, "explicit Euler")
    assert stability_function(euler, -0.5 + 2j) == 0.5 + 2j and stability_at_infinity(euler) == math.inf
    with pytest.raises(ValueError, match="pole"):
        stability_function(lm.gauss(1).position, 2.0)  # R = (1 + z/2)/(1 − z/2)
    with pytest.raises(ValueError, match="finite"):
        stability_function(lm.gauss(1).position, complex(math.inf, 0.0))


# ---- random tableaux (hypothesis) -------------------------------------------------------------


@st.composite
def tableaux(draw: st.DrawFn) -> lm.Tableau:
    s = draw(st.integers(1, 5))
    entries = st.floats(-1.0, 1.0, allow_nan=False)
    A = np.array(draw(st.lists(entries, min_size=s * s, max_size=s * s))).reshape(s, s)
    b = np.array(draw(st.lists(st.floats(0.1, 1.0), min_size=s, max_size=s)))
    sign = np.array(draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=s, max_size=s)))
    return lm.Tableau(A, sign * b, A.sum(axis=1), 1, "random")


@settings(max_examples=40, deadline=None)
@given(tableaux())
def test_symplectic_conjugate_is_an_involution_and_makes_a_symplectic_pair(t: lm.Tableau) -> None:
    conj = symplectic_conjugate(t)
    assert max_err(symplectic_conjugate(conj).A, t.A) <= 1e-13
    assert symplecticity_defect(lm.TableauPair(t, conj, "random pair")) <= 1e-13


@settings(max_examples=40, deadline=None)
@given(tableaux(), st.complex_numbers(max_magnitude=3.0, allow_nan=False, allow_infinity=False))
def test_stability_function_equals_the_determinant_ratio(t: lm.Tableau, z: complex) -> None:
    """R(z) = det(I − zA + z𝟙bᵀ) / det(I − zA) (Hairer–Wanner IV Prop. 3.2)."""
    s = t.stages
    den = complex(np.linalg.det(np.eye(s) - z * t.A))
    if abs(den) < 1e-3:
        return  # near a pole: both sides are ill-conditioned
    num = complex(np.linalg.det(np.eye(s) - z * (t.A - np.outer(np.ones(s), t.b))))
    assert abs(stability_function(t, z) - num / den) <= 1e-9 * max(1.0, abs(num / den))


# ---- construction and bad input ---------------------------------------------------------------


def test_tableau_arrays_are_read_only_copies() -> None:
    A = np.array([[0.5]])
    t = lm.Tableau(A, np.array([1.0]), np.array([0.5]), 2, "midpoint")
    A[0, 0] = 7.0
    assert t.A[0, 0] == 0.5 and t.stages == 1
    with pytest.raises(ValueError):
        t.A[0, 0] = 1.0
    pair = lm.lobatto(3)
    with pytest.raises(ValueError):
        pair.A_hat[0, 0] = 1.0


def test_collocation_on_arbitrary_nodes_satisfies_c_of_s() -> None:
    nodes = np.array([0.1, 0.45, 0.7, 0.95])
    t = collocation(nodes, 4, "arbitrary")
    assert simplifying_C(t, 4) <= TOL and simplifying_B(t, 4) <= TOL


@pytest.mark.parametrize(
    "factory, bad, message",
    [
        (lm.lobatto, 1, "s must be an integer ≥ 2 for Lobatto IIIA–IIIB, got 1"),
        (lm.lobatto, 0, "s must be an integer ≥ 2 for Lobatto"),
        (lm.lobatto, 3.0, "s must be an integer ≥ 2 for Lobatto IIIA–IIIB, got 3.0"),
        (lm.lobatto, "3", "s must be an integer"),
        (lm.lobatto, True, "s must be an integer"),
        (lm.gauss, 0, "s must be an integer ≥ 1 for Gauss–Legendre, got 0"),
        (lm.gauss, 2.5, "s must be an integer ≥ 1 for Gauss"),
        (lm.radau_iia, -1, "s must be an integer ≥ 1 for Radau IIA, got -1"),
    ],
)
def test_bad_stage_counts(factory: object, bad: object, message: str) -> None:
    assert callable(factory)
    with pytest.raises(ValueError, match=message):
        factory(bad)


def test_numpy_integer_stage_counts_are_accepted() -> None:
    assert lm.lobatto(np.int64(3)).stages == 3  # type: ignore[arg-type]


def test_bad_tableaux_name_the_field() -> None:
    one = np.ones(2)
    with pytest.raises(ValueError, match=r"A must have shape \(s, s\) = \(2, 2\)"):
        lm.Tableau(np.zeros((2, 3)), one, one, 1, "bad")
    with pytest.raises(ValueError, match=r"c must have shape \(s,\) = \(2,\)"):
        lm.Tableau(np.zeros((2, 2)), one, np.ones(3), 1, "bad")
    with pytest.raises(ValueError, match="b must be 1-dimensional"):
        lm.Tableau(np.zeros((2, 2)), np.ones((2, 1)), one, 1, "bad")
    with pytest.raises(ValueError, match="A must be finite"):
        lm.Tableau(np.array([[0.0, np.nan], [0.0, 0.0]]), one, one, 1, "bad")
    with pytest.raises(ValueError, match="b must be finite"):
        lm.Tableau(np.zeros((2, 2)), np.array([1.0, np.inf]), one, 1, "bad")
    with pytest.raises(ValueError, match="order must be an integer ≥ 1"):
        lm.Tableau(np.zeros((2, 2)), one, one, 0, "bad")
    with pytest.raises(ValueError, match="A must be a real float array"):
        lm.Tableau(np.zeros((2, 2)) + 1j, one, one, 1, "bad")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="b must have at least one stage"):
        lm.Tableau(np.zeros((0, 0)), np.zeros(0), np.zeros(0), 1, "bad")
    with pytest.raises(ValueError, match="momentum must be a Tableau"):
        lm.TableauPair(lm.gauss(2).position, "x", "bad")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="same number of stages, got 2 and 3"):
        lm.TableauPair(lm.gauss(2).position, lm.gauss(3).position, "bad")
    with pytest.raises(ValueError, match="needs every b_i ≠ 0"):
        symplectic_conjugate(lm.Tableau(np.zeros((2, 2)), np.array([1.0, 0.0]), np.zeros(2), 1, "zero b"))
    with pytest.raises(ValueError, match="p must be an integer ≥ 0"):
        simplifying_B(lm.gauss(2).position, -1)
    with pytest.raises(ValueError, match="expected a TableauPair"):
        check_constrained_hypotheses(lm.gauss(2).position)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="all distinct"):
        collocation(np.array([0.0, 0.5, 0.5]), 1, "repeated")
