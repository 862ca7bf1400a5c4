"""Bad input: every group rejects bad points with a ValueError naming the argument and the defect,
and integrate a step count too large to count."""

import math
import re
from collections.abc import Callable

import jax
import numpy as np
import pytest

import liemech as lm

NAN = float("nan")


def rotation2(t: float) -> lm.Matrix:
    return np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])


def test_rn() -> None:
    G = lm.Rn(3)
    with pytest.raises(ValueError, match=r"q0 must have shape \(3,\), got \(2,\)"):
        G.check_point(np.zeros(2), "q0")
    with pytest.raises(ValueError, match="q0 must be finite"):
        G.check_point(np.array([0.0, NAN, 1.0]), "q0")
    with pytest.raises(ValueError, match="q0 must be a real array"):
        G.check_point("abc", "q0")
    with pytest.raises(ValueError, match="n must be a positive integer"):
        lm.Rn(0)


def test_so2() -> None:
    G = lm.SO2()
    with pytest.raises(ValueError, match=r"g0 must have shape \(2, 2\)"):
        G.check_point(np.eye(3), "g0")
    with pytest.raises(ValueError, match=r"g0 must be a rotation: ‖RᵀR − I‖_max = 1\.000e-01"):
        G.check_point(math.sqrt(1.1) * np.eye(2), "g0")
    with pytest.raises(ValueError, match="det = -1"):
        G.check_point(np.diag([1.0, -1.0]), "g0")
    with pytest.raises(ValueError, match="g0 must be finite"):
        G.check_point(np.array([[1.0, 0.0], [0.0, math.inf]]), "g0")


def test_so3() -> None:
    G = lm.SO3()
    with pytest.raises(ValueError, match=r"R0 must have shape \(3, 3\), got \(4, 4\)"):
        G.check_point(np.eye(4), "R0")
    sheared = np.eye(3)
    sheared[0, 1] = 1e-3
    with pytest.raises(ValueError, match=r"R0 must be a rotation: ‖RᵀR − I‖_max = 1\.000e-03"):
        G.check_point(sheared, "R0")
    with pytest.raises(ValueError, match="R0 must be a rotation with det = \\+1, got det = -1"):
        G.check_point(-np.eye(3), "R0")
    with pytest.raises(ValueError, match="R0 must be finite"):
        G.check_point(np.full((3, 3), NAN), "R0")
    # Round-off far below the tolerance is accepted.
    G.check_point(G.retraction("exp").tau(np.array([0.1, 0.2, 0.3])) + 1e-13, "R0")


@pytest.mark.parametrize("group, n", [(lm.SE2(), 2), (lm.SE3(), 3)], ids=repr)
def test_rigid_motions(group: lm.LieGroup[lm.Matrix], n: int) -> None:
    with pytest.raises(ValueError, match=rf"g0 must have shape \({n + 1}, {n + 1}\)"):
        group.check_point(np.eye(n), "g0")
    bad_row = np.eye(n + 1)
    bad_row[n, 0] = 0.5
    with pytest.raises(ValueError, match=r"g0 must be homogeneous with last row \(0, …, 0, 1\)"):
        group.check_point(bad_row, "g0")
    scaled = np.eye(n + 1)
    scaled[0, 0] = 2.0
    with pytest.raises(ValueError, match=r"the rotation block of g0 must be a rotation: ‖RᵀR − I‖_max = 3\.000e\+00"):
        group.check_point(scaled, "g0")
    reflected = np.eye(n + 1)
    reflected[0, 0] = -1.0
    with pytest.raises(ValueError, match="the rotation block of g0 must be a rotation with det = \\+1"):
        group.check_point(reflected, "g0")
    not_finite = np.eye(n + 1)
    not_finite[0, n] = NAN
    with pytest.raises(ValueError, match="g0 must be finite"):
        group.check_point(not_finite, "g0")


def test_product() -> None:
    G = lm.ProductGroup(lm.SO3(), lm.Rn(2))
    with pytest.raises(ValueError, match=r"g0 must be a tuple of 2 factor points \(SO3\(\), Rn\(2\)\)"):
        G.check_point(np.eye(3), "g0")
    with pytest.raises(ValueError, match=r"g0\[1\] must have shape \(2,\)"):
        G.check_point((np.eye(3), np.zeros(3)), "g0")
    with pytest.raises(ValueError, match=r"g0\[0\] must be a rotation with det = \+1"):
        G.check_point((-np.eye(3), np.zeros(2)), "g0")
    with pytest.raises(ValueError, match="factors: a product needs at least one factor"):
        lm.ProductGroup()


@pytest.mark.parametrize("group", [lm.Rn(2), lm.SO2(), lm.SO3(), lm.SE2(), lm.SE3()], ids=repr)
def test_algebra_vectors_and_tau_inv(group: lm.LieGroup[lm.Matrix]) -> None:
    with pytest.raises(ValueError, match=rf"xi must have shape \({group.dim},\)"):
        group.retraction("cay").dtau(np.zeros(group.dim + 1))
    with pytest.raises(ValueError, match="xi must be finite"):
        group.check_algebra(np.full(group.dim, NAN))
    with pytest.raises(ValueError, match="must"):
        group.retraction("exp").tau_inv(np.full((7, 7), 1.0))


def _stack(group: lm.LieGroup[object], count: int) -> object:
    rng = np.random.default_rng(8)
    points = [group.random_point(rng) for _ in range(count)]
    return jax.tree.map(lambda *parts: np.stack(parts), *points)


def _spoiled(group: lm.LieGroup[object], stack: object, member: int) -> object:
    """The stack with one member made invalid (a NaN in Rⁿ, a reflection in a rotation block)."""
    if isinstance(stack, tuple):
        return (_spoiled(group.factors[0], stack[0], member), *stack[1:])  # type: ignore[attr-defined]
    bad = np.array(stack)
    if isinstance(group, lm.Rn):
        bad[member, 0] = NAN
    else:
        bad[member, 0, :] *= -1.0
    return bad


@pytest.mark.parametrize("group", [lm.Rn(3), lm.SO2(), lm.SO3(), lm.SE2(), lm.SE3(),
                                   lm.ProductGroup(lm.SO3(), lm.Rn(2))], ids=repr)
def test_stacks_of_points_are_checked_member_by_member(group: lm.LieGroup[object]) -> None:
    """check_points (vectorised) and the generic loop over check_point agree: a good stack comes back
    unchanged, and a stack with member 3 spoiled is refused naming g0[3]. On a product the stack is a
    tuple of factor stacks, named by factor then member (g0[0][3]); the loop names member then factor."""
    stack = _stack(group, 5)
    product = isinstance(group, lm.ProductGroup)
    def generic_loop(points: object, name: str) -> object:
        return lm.LieGroup.check_points(group, points, name)

    checks: list[tuple[Callable[[object, str], object], str]] = [
        (group.check_points, r"g0\[0\]\[3\]" if product else r"g0\[3\]"),
        (generic_loop, r"g0\[3\]\[0\]" if product else r"g0\[3\]")]
    for check, named in checks:
        for got, given in zip(jax.tree.leaves(check(stack, "g0")), jax.tree.leaves(stack)):
            assert np.array_equal(got, given)
        with pytest.raises(ValueError, match=named + " must be"):
            check(_spoiled(group, stack, 3), "g0")


def test_stacks_of_points_need_a_member_axis() -> None:
    with pytest.raises(ValueError, match=r"g0 must stack points of shape \(3, 3\) along a first axis of members"):
        lm.SO3().check_points(np.eye(3), "g0")
    with pytest.raises(ValueError, match=r"g0 must stack one or more points along a first axis of members"):
        lm.LieGroup.check_points(lm.SO3(), np.eye(3)[0, 0], "g0")
    with pytest.raises(ValueError, match=r"the factors of g0 must stack as many members each, got \[2, 3\]"):
        lm.ProductGroup(lm.SO3(), lm.Rn(2)).check_points((np.stack([np.eye(3)] * 2), np.zeros((3, 2))), "g0")
    with pytest.raises(ValueError, match=r"g0\[1\] must be homogeneous with last row"):
        lm.SE2().check_points(np.stack([np.eye(3), np.ones((3, 3))]), "g0")


def test_integrate_refuses_a_step_count_too_large_to_count() -> None:
    """t_final / h = 2e30 (and ∞) steps cannot be counted in 64 bits: a ValueError naming h, t_final
    and the step count, before any step (no OverflowError from deep inside the run)."""
    problem = lm.Problem(lm.MechanicalSystem(lm.Rn(1), np.eye(1), lambda q: 0.5 * q @ q), np.zeros(1), np.ones(1))
    method = lm.VPRK(lm.lobatto(3))
    with pytest.raises(ValueError, match=r"h = 1e-30 and t_final = 2\.0: the step count t_final / h = 2e\+30 is too "
                                         r"large"):
        lm.integrate(problem, method, h=1e-30, t_final=2)
    with pytest.raises(ValueError, match=r"the step count t_final / h = inf is too large"):
        lm.integrate(problem, method, h=1e-150, t_final=1e300)
    with pytest.raises(ValueError, match=r"n_steps = 9223372036854775808 is too large"):
        lm.integrate(problem, method, h=0.1, n_steps=2**63)


def test_steps_too_small_for_float64_are_refused_by_name() -> None:
    """h = 5e-324 (subnormal: 1/h overflows) and 1e-300 (h² underflows: a constrained step's
    Jacobian turns singular, "try a smaller step h") are refused naming h and its floor √tiny, with
    t_final= or n_steps=, in integrate, integrate_ensemble and flow; the floor itself is accepted.
    More than 2**53 steps are refused: beyond, t_k = k·h of consecutive k round to one float64."""
    problem = lm.Problem(lm.MechanicalSystem(lm.Rn(1), np.eye(1), lambda q: 0.5 * q @ q), np.zeros(1), np.ones(1))
    method = lm.VPRK(lm.lobatto(3))
    floor = math.sqrt(float(np.finfo(np.float64).tiny))
    too_small = r"h = {} is too small: h must be at least 1\.49e-154 .*h² underflows"
    for h in (5e-324, 1e-300, floor * (1.0 - 1e-15)):
        message = too_small.format(re.escape(repr(h)))
        for when in ({"t_final": 1e-290}, {"n_steps": 10}):
            with pytest.raises(ValueError, match=message):
                lm.integrate(problem, method, h, **when)
            with pytest.raises(ValueError, match=message):
                lm.integrate_ensemble(problem, method, h, initial=(None, problem.eta0[None]),
                                      **when)
        with pytest.raises(ValueError, match=message):
            lm.flow(problem, method, h, n_steps=10)
    assert lm.integrate(problem, method, floor, n_steps=1).t[-1] == floor
    with pytest.raises(ValueError, match=r"n_steps = 9007199254740993 is too large: at most 2\*\*53 steps"):
        lm.integrate(problem, method, h=0.1, n_steps=2**53 + 1)
    with pytest.raises(ValueError, match=r"t_final / h = 1e\+16 is too large \(at most 2\*\*53 steps"):
        lm.integrate(problem, method, h=1e-16, t_final=1.0)
