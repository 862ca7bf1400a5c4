"""No silent wrong results: every input liemech cannot honour is refused by name (issue 15).

``CASES`` mirrors the table of docs/errors.md row by row (``test_the_docs_table_mirrors_the_cases``
keeps them equal): category, example input, and the error the user sees. Each case asserts the
error's type and message, and no case returns a result. Validation errors are raised before
anything is compiled; the few cases that need a run share small problems and take one or two steps.
"""

import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import liemech as lm
from liemech.mechanics import point_masses
from liemech.methods.compiled import convergence_error
from liemech.solvers.compiled_newton import Status
from liemech.systems import CartesianPendulum, GyroscopicTop, HeavyTop, NonholonomicParticle

NAN, INF = math.nan, math.inf
DOCS = Path(__file__).resolve().parents[1] / "docs" / "errors.md"

Attempt = Callable[[], object]
set_config: Callable[[str, object], None] = jax.config.update  # jax.config is untyped


@dataclass(frozen=True)
class Refusal:
    """One row of docs/errors.md: every attempt must raise ``error`` with a message matching
    ``message``."""

    category: str
    example: str
    error: type[Exception]
    message: str
    attempts: Sequence[Attempt]


def row(category: str, example: str, error: type[Exception], message: str, *attempts: Attempt) -> Refusal:
    return Refusal(category, example, error, message, attempts)


# ---- shared problems (built on first use) -----------------------------------------------------


@functools.cache
def nonholonomic() -> lm.Problem[lm.Vector]:
    return NonholonomicParticle().problem()


@functools.cache
def pendulum() -> lm.Problem[lm.Vector]:
    return CartesianPendulum().problem()


@functools.cache
def free_particle() -> lm.Problem[lm.Vector]:
    return lm.Problem(plane(), np.array([1.0, 0.0]), np.zeros(2))


def damping(q: lm.Vector, v: lm.Vector, t: float) -> lm.Vector:
    return -v


@functools.cache
def damped_pendulum() -> lm.Problem[lm.Vector]:
    problem = pendulum()
    return lm.Problem(problem.system, problem.g0, problem.eta0, holonomic=problem.holonomic, force=damping)


@functools.cache
def damped_particle() -> lm.Problem[lm.Vector]:
    return lm.Problem(plane(), np.array([1.0, 0.0]), np.zeros(2), force=damping)


@functools.cache
def rolling_on_a_line() -> lm.Problem[lm.Vector]:
    """y = 0 (holonomic) and ẋ = 0 (nonholonomic) on R²: both kinds at once."""
    return lm.Problem(plane(), np.array([1.0, 0.0]), np.zeros(2), holonomic=lm.HolonomicConstraint(lambda q: q[1:]),
                      nonholonomic=lm.NonholonomicConstraint(lambda q, v: v[:1]))


@functools.cache
def plane() -> lm.MechanicalSystem[lm.Vector]:
    return lm.MechanicalSystem(lm.Rn(2), np.eye(2), lambda q: q[1])


@functools.cache
def top_on_so3() -> lm.Problem[lm.Matrix]:
    return HeavyTop().problem()


@functools.cache
def varying_mass() -> lm.Problem[lm.Vector]:
    """M(q) = (1 + q₀²) I on R²."""
    system = lm.MechanicalSystem(lm.Rn(2), lambda q: (1.0 + q[0] ** 2) * jnp.eye(2), lambda q: q[1])
    return lm.Problem(system, np.array([1.0, 0.0]), np.zeros(2))


@functools.cache
def varying_mass_pendulum() -> lm.Problem[lm.Vector]:
    system = lm.MechanicalSystem(lm.Rn(2), lambda q: (1.0 + q[0] ** 2) * jnp.eye(2), lambda q: q[1])
    return lm.Problem(system, np.array([1.0, 0.0]), np.zeros(2), holonomic=CartesianPendulum.constraint())


@functools.cache
def edge() -> lm.Problem[lm.Vector]:
    """M(q) = 1 + √(1 − q) on R¹, NaN beyond q = 1: from q = 0.9 at speed 1 a step of 0.15 ends at
    q ≈ 1.05 while the midpoint stays inside, so Newton converges and the new node is NaN."""
    system = lm.MechanicalSystem(lm.Rn(1), lambda q: jnp.reshape(1.0 + jnp.sqrt(1.0 - q[0]), (1, 1)),
                                 lambda q: 0.0 * q[0])
    return lm.Problem(system, np.array([0.9]), np.array([1.0]))


@functools.cache
def wall() -> lm.Problem[lm.Vector]:
    """V = √(1 − q) on R¹ pulls the particle to q = 1, beyond which V is NaN."""
    system = lm.MechanicalSystem(lm.Rn(1), np.eye(1), lambda q: jnp.sqrt(1.0 - q[0]))
    return lm.Problem(system, np.array([0.0]), np.array([1.0]))


@functools.cache
def director_top() -> GyroscopicTop:
    return GyroscopicTop()


def spinning_top_with_fixed_axis() -> lm.Problem[lm.Vector]:
    """The director top spinning about d₃, with the extra constraint d₃ = d₃⁰ (consistent data)."""
    top = director_top()
    d3 = top.q0[9:]
    v = point_masses.rigid_rotation_velocity(5.0 * d3, top.q0)
    fixed_axis: lm.HolonomicConstraint[lm.Vector] = lm.HolonomicConstraint(lambda q: q[9:] - d3)
    return lm.Problem(top.system(), top.q0, v, holonomic=fixed_axis)


class FreeLagrangian(lm.Lagrangian[lm.Vector]):
    """ℓ = ½(η₀² + s η₁²) − q₁ on R², written directly (not a MechanicalSystem)."""

    def __init__(self, s: float, wrong_velocity: bool = False) -> None:
        self._s, self._wrong = s, wrong_velocity

    @property
    def group(self) -> lm.LieGroup[lm.Vector]:
        return lm.Rn(2)

    def lagrangian(self, g: lm.Vector, eta: jax.typing.ArrayLike) -> jax.Array:
        e = jnp.asarray(eta)
        out: jax.Array = 0.5 * (e[0] ** 2 + self._s * e[1] ** 2) - g[1]
        return out

    def velocity(self, g: lm.Vector, mu: lm.VectorLike) -> lm.Vector:
        m = jnp.asarray(mu)
        return jnp.stack([m[0], m[1] if self._wrong else m[1] / self._s])  # type: ignore[return-value]


class NumpyLagrangian(FreeLagrangian):
    """FreeLagrangian with ℓ (``part='lagrangian'``) or its velocity written with numpy."""

    def __init__(self, part: str) -> None:
        super().__init__(1.0)
        self._part = part

    def lagrangian(self, g: lm.Vector, eta: jax.typing.ArrayLike) -> jax.Array:
        value = super().lagrangian(g, eta)
        return jnp.asarray(float(value)) if self._part == "lagrangian" else value

    def velocity(self, g: lm.Vector, mu: lm.VectorLike) -> lm.Vector:
        return np.array([mu[0], mu[1]]) if self._part == "velocity" else super().velocity(g, mu)


def without_x64(attempt: Attempt) -> Attempt:
    """``attempt`` with jax_enable_x64 switched off after importing liemech (switched on again after)."""
    def switched_off() -> object:
        set_config("jax_enable_x64", False)
        try:
            return attempt()
        finally:
            set_config("jax_enable_x64", True)

    return switched_off


def ensemble_of(free: Callable[[], lm.Problem[lm.Vector]], **options: Any) -> Attempt:
    """integrate_ensemble of two members of ``free()`` over one step, with these options."""
    arguments: dict[str, Any] = {"initial": (None, np.zeros((2, 2))), **options}
    return lambda: lm.integrate_ensemble(free(), lm.VPRK(lm.lobatto(2)), h=0.1, n_steps=1, **arguments)


class NoCompiledStep(lm.Method):
    """A user's subclass of ``lm.Method`` with traits and no compiled step."""

    name = "NoCompiledStep()"

    @property
    def traits(self) -> lm.Traits:
        return lm.Traits(order=1, symplectic=False, conserves_energy=False, conserves_momentum_maps=False)


def fast_free_body() -> lm.Problem[lm.Matrix]:
    """A free body on SE(3) (m = 2, √(I_min/m) = 0.5) translating at |v| = 40."""
    body = lm.MechanicalSystem(lm.SE3(), np.diag([2.0, 2.0, 2.0, 0.5, 0.7, 1.1]), lambda g: jnp.zeros(()))
    return lm.Problem(body, np.eye(4), np.array([40.0, 0.0, 0.0, 0.3, -0.7, 0.2]))


def run(problem: Callable[[], lm.Problem[lm.Vector]], method: lm.Method, h: float = 0.1,
        n_steps: int = 1) -> Attempt:
    return lambda: lm.integrate(problem(), method, h=h, n_steps=n_steps)


def problem_with(system: Callable[[], lm.Lagrangian[lm.Vector]], **constraints: object) -> Attempt:
    return lambda: lm.Problem(system(), np.array([1.0, 0.0]), np.zeros(2), **constraints)  # type: ignore[arg-type]


def on_plane(potential: Callable[[lm.Vector], object] = lambda q: q[1], inertia: object = None,
             **derivatives: object) -> Attempt:
    """Building a problem on R² at q = (1, 0), η = 0 from these callbacks."""
    return lambda: lm.Problem(lm.MechanicalSystem(lm.Rn(2), np.eye(2) if inertia is None else inertia,  # type: ignore[arg-type]
                                                  potential, **derivatives),  # type: ignore[arg-type]
                              np.array([1.0, 0.0]), np.zeros(2))


def constrained(**constraints: object) -> Attempt:
    return problem_with(plane, **constraints)


WITHOUT_NONHOLONOMIC_FORM: list[lm.Method] = [
    lm.GGLVariationalEuler(), lm.GGLThetaA(), lm.GGLThetaB(), lm.GGLEnergyMomentum(), lm.GonzalezEnergyMomentum(),
    lm.DiscreteGradientMultiplier(), lm.DiscreteGradientPenalty(10.0), lm.DiscreteGradientAugmentedLagrange(10.0),
    lm.SimpsonVI(), lm.MidpointVI(), lm.RK4(), lm.BobenkoSurisTop(),
]
HOLONOMIC_ONLY: list[lm.Method] = WITHOUT_NONHOLONOMIC_FORM[:8]
UNCONSTRAINED_ONLY: list[lm.Method] = [lm.SimpsonVI(), lm.MidpointVI(), lm.RK4()]
GROUPS: list[lm.LieGroup[lm.Matrix]] = [lm.Rn(2), lm.SO2(), lm.SO3(), lm.SE2(), lm.SE3(),
                                        lm.ProductGroup(lm.SO3(), lm.Rn(2))]  # type: ignore[list-item]


def every_group(attempt: Callable[[lm.LieGroup[lm.Matrix]], object]) -> list[Attempt]:
    return [functools.partial(attempt, G) for G in GROUPS]


def every_retraction(attempt: Callable[[lm.Retraction[lm.Matrix], int], object]) -> list[Attempt]:
    return [functools.partial(attempt, G.retraction(kind), G.dim) for G in GROUPS for kind in lm.RETRACTION_KINDS]


def identity_with(G: lm.LieGroup[lm.Matrix], value: complex) -> object:
    """The identity of G with ``value`` added to its first array's first entry."""
    e = G.identity()
    first = np.asarray(e[0] if isinstance(e, tuple) else e) + np.zeros(1, dtype=type(value))
    first.flat[0] += value
    return (first, *e[1:]) if isinstance(e, tuple) else first


CASES: list[Refusal] = [
    # ---- 1: a method that cannot honour the problem ------------------------------------------
    row("method", "nonholonomic problem → every method but VPRK", ValueError,
        r"\) does not handle nonholonomic constraints; use VPRK",
        *[run(nonholonomic, m) for m in WITHOUT_NONHOLONOMIC_FORM]),
    row("method", "holonomic problem → SimpsonVI(), MidpointVI(), RK4()", ValueError,
        r"\) does not handle holonomic constraints; use VPRK", *[run(pendulum, m) for m in UNCONSTRAINED_ONLY]),
    row("method", "unconstrained problem → GGL and discrete-gradient schemes", ValueError,
        r"\) needs a holonomic constraint", *[run(free_particle, m) for m in HOLONOMIC_ONLY]),
    row("method", "problem on SO(3) → every method but VPRK", TypeError, r"\) works on Rn\(n\) configuration spaces",
        *[lambda m=m: lm.integrate(top_on_so3(), m, h=0.1, n_steps=1) for m in WITHOUT_NONHOLONOMIC_FORM]),
    row("method", "configuration-dependent inertia → GGL and discrete-gradient schemes", TypeError,
        r"needs a MechanicalSystem with a constant inertia matrix, got a configuration-dependent inertia",
        *[run(varying_mass_pendulum, m) for m in HOLONOMIC_ONLY]),
    row("method", "a Lagrangian that is not a MechanicalSystem → GGLEnergyMomentum()", TypeError,
        r"needs a MechanicalSystem with a constant inertia matrix, got a FreeLagrangian",
        lambda: lm.integrate(lm.Problem(FreeLagrangian(1.0), np.array([1.0, 0.0]), np.array([0.0, 1.0]),
                                        holonomic=CartesianPendulum.constraint()),
                             lm.GGLEnergyMomentum(), h=0.1, n_steps=1)),
    row("method", "constrained problem → VPRK(gauss(2))", ValueError, r"tableau gauss\(2\) violates H1",
        run(pendulum, lm.VPRK(lm.gauss(2))), run(nonholonomic, lm.VPRK(lm.gauss(2)))),
    row("method", "BobenkoSurisTop() on a problem that is not the director top", TypeError,
        r"works on the director top", run(pendulum, lm.BobenkoSurisTop())),
    row("method", "BobenkoSurisTop(): directors not orthonormal", ValueError,
        r"the director frame \(d₁, d₂, d₃\) of g0 must be a rotation",
        lambda: lm.integrate(lm.Problem(director_top().system(), director_top().q0 * np.repeat([1.0, 1.1, 1.0, 1.0], 3),
                                        director_top().v0), lm.BobenkoSurisTop(), h=1e-3, n_steps=1)),
    row("method", "BobenkoSurisTop(): velocity not a rigid rotation", ValueError,
        r"needs a rigid rotation about the tip",
        lambda: lm.integrate(lm.Problem(director_top().system(), director_top().q0, director_top().v0 + 0.1),
                             lm.BobenkoSurisTop(), h=1e-3, n_steps=1)),
    row("method", "BobenkoSurisTop(): a constraint beyond the director top's (d₃ fixed)", ValueError,
        r"honours only the director top's constraints",
        lambda: lm.integrate(spinning_top_with_fixed_axis(), lm.BobenkoSurisTop(), h=1e-3, n_steps=1)),
    row("method", "GGLEnergyMomentum(invariants=…) of another potential", ValueError,
        r"invariants must describe the system's potential",
        lambda: lm.integrate(pendulum(), lm.GGLEnergyMomentum(invariants=lm.QuadraticInvariantPotential(
            [np.eye(2)], [lambda s: s], [lambda s: 1.0])), h=0.1, n_steps=1)),
    row("method", "lm.flow(nonholonomic problem, SimpsonVI())", ValueError,
        r"SimpsonVI\(\) does not handle nonholonomic constraints",
        lambda: lm.flow(nonholonomic(), lm.SimpsonVI(), h=0.1, n_steps=1)),
    row("method", "external force → every method but VPRK", ValueError, r"\) does not take an external force; use VPRK",
        *[run(damped_pendulum, m) for m in HOLONOMIC_ONLY], *[run(damped_particle, m) for m in UNCONSTRAINED_ONLY]),
    row("method", "holonomic and nonholonomic constraints → VPRK(…, nonholonomic_multiplier='carried')", ValueError,
        r"nonholonomic_multiplier='carried' \(the paper's closure\) handles nonholonomic constraints alone",
        run(rolling_on_a_line, lm.VPRK(lm.lobatto(2), nonholonomic_multiplier="carried"))),
    # ---- 2: numerical options ------------------------------------------------------------------
    row("option", "NewtonOptions(tol=inf), tol=nan, tol=0, tol='1e-9'", ValueError,
        r"tol must be None or a finite number > 0",
        *[functools.partial(lm.NewtonOptions, tol=t) for t in (INF, NAN, 0.0, "1e-9")]),  # type: ignore[arg-type]
    row("option", "NewtonOptions(max_iterations=2.5), 0, True", ValueError, r"max_iterations must be a positive integer",
        *[functools.partial(lm.NewtonOptions, max_iterations=n) for n in (2.5, 0, True)]),  # type: ignore[arg-type]
    row("option", "NewtonOptions(roundoff_factor=nan), 0, inf", ValueError,
        r"roundoff_factor must be a finite number > 0",
        *[functools.partial(lm.NewtonOptions, roundoff_factor=r) for r in (NAN, 0.0, INF)]),
    row("option", "NewtonOptions(jacobian='never')", ValueError, r"jacobian must be 'first', 'every', 'refreshed' or 'carried'",
        lambda: lm.NewtonOptions(jacobian="never")),  # type: ignore[arg-type]
    row("option", "NewtonOptions(update_after_check='yes')", ValueError,
        r"update_after_check must be True or False", lambda: lm.NewtonOptions(update_after_check="yes")),  # type: ignore[arg-type]
    row("option", "newton='papers' for a GGL, discrete-gradient, Simpson or midpoint scheme", TypeError,
        r"newton must be a NewtonOptions",
        *[functools.partial(cls, newton="papers") for cls in (  # type: ignore[arg-type]
            lm.GGLVariationalEuler, lm.GGLThetaA, lm.GGLThetaB, lm.GGLEnergyMomentum, lm.GonzalezEnergyMomentum,
            lm.SimpsonVI, lm.MidpointVI)],
        lambda: lm.DiscreteGradientPenalty(10.0, newton="papers"),  # type: ignore[arg-type]
        lambda: lm.DiscreteGradientAugmentedLagrange(10.0, newton="papers")),  # type: ignore[arg-type]
    row("option", "NewtonOptions(jacobian='carried') for a GGL, discrete-gradient, Simpson or midpoint scheme",
        ValueError, r"jacobian='carried'\) needs a method that carries Newton's factors from step to step; this one",
        *[functools.partial(cls, newton=lm.NewtonOptions(jacobian="carried")) for cls in (
            lm.GGLVariationalEuler, lm.GGLThetaA, lm.GGLThetaB, lm.GGLEnergyMomentum, lm.GonzalezEnergyMomentum,
            lm.SimpsonVI, lm.MidpointVI, lm.DiscreteGradientMultiplier)],
        lambda: lm.DiscreteGradientPenalty(10.0, newton=lm.NewtonOptions(jacobian="carried")),
        lambda: lm.DiscreteGradientAugmentedLagrange(10.0, newton=lm.NewtonOptions(jacobian="carried"))),
    row("option", "VPRK(lobatto(3), newton={'tol': 1e-9}), DiscreteGradientMultiplier(newton='papers')", TypeError,
        r"newton must be a NewtonOptions",
        lambda: lm.VPRK(lm.lobatto(3), newton={"tol": 1e-9}),  # type: ignore[arg-type]
        lambda: lm.DiscreteGradientMultiplier(newton="papers")),  # type: ignore[arg-type]
    row("option", "DiscreteGradientPenalty(mu=nan), inf, 0, -1, '10'", ValueError,
        r"mu must be a positive finite penalty parameter",
        *[functools.partial(lm.DiscreteGradientPenalty, mu) for mu in (NAN, INF, 0.0, -1.0, "10")]),  # type: ignore[arg-type]
    row("option", "DiscreteGradientAugmentedLagrange(mu=10, tol=inf), nan, 0", ValueError,
        r"tol must be a finite number > 0",
        *[functools.partial(lm.DiscreteGradientAugmentedLagrange, 10.0, t) for t in (INF, NAN, 0.0)]),
    row("option", "DiscreteGradientAugmentedLagrange(mu=10, max_iterations=2.5), 0", ValueError,
        r"max_iterations must be a positive integer",
        *[functools.partial(lm.DiscreteGradientAugmentedLagrange, 10.0, max_iterations=n) for n in (2.5, 0)]),  # type: ignore[arg-type]
    row("option", "DiscreteGradientAugmentedLagrange(mu=10, warm_start='no')", ValueError,
        r"warm_start must be True or False",
        lambda: lm.DiscreteGradientAugmentedLagrange(10.0, warm_start="no")),  # type: ignore[arg-type]
    row("option", "DiscreteGradientAugmentedLagrange(mu=10, variant='fast')", ValueError,
        r"variant must be 'paper' \(eq. \(40\)\) or 'modified'",
        lambda: lm.DiscreteGradientAugmentedLagrange(10.0, variant="fast")),  # type: ignore[arg-type]
    row("option", "GGLThetaA(theta=nan), 0, 1, inf", ValueError, r"theta must lie in \(0, 1\), got",
        *[functools.partial(lm.GGLThetaA, t) for t in (NAN, 0.0, 1.0, INF)]),
    row("option", "GGLThetaB(theta=1.5), GGLThetaB(vartheta=0), GGLThetaB(vartheta=nan)", ValueError,
        r"(theta must lie in \[0, 1\]|vartheta must lie in \(0, 1\]), got",
        lambda: lm.GGLThetaB(theta=1.5), lambda: lm.GGLThetaB(vartheta=0.0), lambda: lm.GGLThetaB(vartheta=NAN)),
    row("option", "GGLVariationalEuler(initial_guess='clever')", ValueError,
        r"initial_guess must be 'simple' or 'advanced'",
        lambda: lm.GGLVariationalEuler(initial_guess="clever")),  # type: ignore[arg-type]
    row("option", "RK4('lagrangian')", ValueError, r"variables must be 'canonical' or 'velocity'",
        lambda: lm.RK4("lagrangian")),  # type: ignore[arg-type]
    row("option", "VPRK(lobatto(3), retraction='log')", ValueError, r"retraction must be one of \('exp', 'cay'\)",
        lambda: lm.VPRK(lm.lobatto(3), retraction="log")),  # type: ignore[arg-type]
    row("option", "integrate(h=0), h=-0.1, h=nan, h=inf, h=True, h='0.1'", ValueError,
        r"h must be a positive finite step",
        *[lambda h=h: lm.integrate(free_particle(), lm.MidpointVI(), h=h, n_steps=1)
          for h in (0.0, -0.1, NAN, INF, True, "0.1")]),
    row("option", "integrate(h=1e-300), h=5e-324", ValueError, r"h = .* is too small: h must be at least 1\.49e-154",
        *[lambda h=h: lm.integrate(free_particle(), lm.MidpointVI(), h=h, n_steps=1) for h in (1e-300, 5e-324)]),
    row("option", "integrate(n_steps=2⁵³ + 1)", ValueError, r"n_steps = \d+ is too large: at most 2\*\*53 steps",
        lambda: lm.integrate(free_particle(), lm.MidpointVI(), h=0.1, n_steps=2**53 + 1)),
    row("option", "integrate(t_final=nan), inf, -1, '1'", ValueError, r"t_final must be positive and finite",
        *[lambda t=t: lm.integrate(free_particle(), lm.MidpointVI(), h=0.1, t_final=t)
          for t in (NAN, INF, -1.0, "1")]),
    row("option", "integrate(h=0.3, t_final=1.0)", ValueError, r"not a whole number of steps.*pass n_steps=",
        lambda: lm.integrate(free_particle(), lm.MidpointVI(), h=0.3, t_final=1.0)),
    row("option", "integrate with both or neither of t_final and n_steps", ValueError,
        r"give exactly one of t_final and n_steps",
        lambda: lm.integrate(free_particle(), lm.MidpointVI(), h=0.1),
        lambda: lm.integrate(free_particle(), lm.MidpointVI(), h=0.1, t_final=1.0, n_steps=10)),
    row("option", "integrate(n_steps=2.0), 0, True", ValueError, r"n_steps must be a positive integer",
        *[lambda n=n: lm.integrate(free_particle(), lm.MidpointVI(), h=0.1, n_steps=n)
          for n in (2.0, 0, True)]),
    row("option", "integrate(store_every=1.5), 0, True", ValueError, r"store_every must be a positive integer",
        *[lambda n=n: lm.integrate(free_particle(), lm.MidpointVI(), h=0.1, n_steps=2, store_every=n)
          for n in (1.5, 0, True)]),
    row("option", "integrate(progress='yes')", ValueError, r"progress must be True or False",
        lambda: lm.integrate(free_particle(), lm.MidpointVI(), h=0.1, n_steps=1, progress="yes")),  # type: ignore[arg-type]
    row("option", "flow(h=nan), flow(n_steps=2.0)", ValueError,
        r"(h must be a positive finite step|n_steps must be a positive integer)",
        lambda: lm.flow(free_particle(), lm.MidpointVI(), h=NAN, n_steps=1),
        lambda: lm.flow(free_particle(), lm.MidpointVI(), h=0.1, n_steps=2.0)),  # type: ignore[arg-type]
    row("option", "Problem(constraint_tol=nan), inf, -1e-10, '1e-3'", ValueError,
        r"constraint_tol must be a finite number ≥ 0",
        *[lambda t=t: lm.Problem(plane(), np.array([2.0, 0.0]), np.zeros(2),
                                 holonomic=CartesianPendulum.constraint(), constraint_tol=t)
          for t in (NAN, INF, -1e-10, "1e-3")]),
    row("option", "project_to_constraints(max_iterations=2.5), 0", ValueError,
        r"max_iterations must be a positive integer",
        *[lambda n=n: lm.project_to_constraints(plane(), CartesianPendulum.constraint(),
                                                np.array([1.1, 0.0]), np.zeros(2), max_iterations=n)
          for n in (2.5, 0)]),
    row("option", "Rn(3.0), Rn(0), Rn(True)", ValueError, r"n must be a positive integer",
        *[functools.partial(lm.Rn, n) for n in (3.0, 0, True)]),  # type: ignore[arg-type]
    row("option", "jax.config.update('jax_enable_x64', False) after importing liemech → Problem, integrate, flow "
        "(or calling a Flow made before), integrate_ensemble", RuntimeError,
        r"jax_enable_x64 is off: liemech computes in float64.*keep it on",
        without_x64(lambda: lm.Problem(plane(), np.array([1.0, 0.0]), np.zeros(2))),
        without_x64(lambda: lm.integrate(free_particle(), lm.MidpointVI(), h=0.1, n_steps=1)),
        without_x64(lambda: lm.flow(free_particle(), lm.MidpointVI(), h=0.1, n_steps=1)),
        lambda: without_x64(lm.flow(free_particle(), lm.MidpointVI(), h=0.1, n_steps=1))(),
        without_x64(ensemble_of(free_particle))),
    # ---- 3: user callbacks, checked at the initial point ---------------------------------------
    row("callback", "potential returning a vector, or shape (1,)", ValueError,
        r"potential must return shape \(\) at the initial point, got shape \((2|1),\)",
        on_plane(lambda q: q), on_plane(lambda q: q[1:])),
    row("callback", "potential returning a complex number", ValueError,
        r"potential at the initial point must be real, got complex values", on_plane(lambda q: q[1] + 1j)),
    row("callback", "potential NaN at g0", ValueError, r"potential returned non-finite values at the initial point",
        on_plane(lambda q: jnp.log(q[1]))),
    row("callback", "potential whose gradient is infinite at g0 (√q₁ at q₁ = 0)", ValueError,
        r"the force f = L\*_g D₁ℓ \(the potential's gradient\) returned non-finite values",
        on_plane(lambda q: jnp.sqrt(q[1]))),
    row("callback", "potential raising IndexError", ValueError,
        r"potential raised IndexError at the initial point: list index out of range", on_plane(lambda q: [q[0]][3])),
    row("callback", "potential taking two arguments", TypeError, r"potential raised TypeError at the initial point",
        on_plane(lambda q, t: q[0])),  # type: ignore[arg-type, misc]
    row("callback", "potential written with numpy (float(x))", TypeError,
        r"potential cannot be traced by JAX.*float\(x\) → x", on_plane(lambda q: float(q[1]))),
    row("callback", "a callback indexing out of range: potential q[2] or q[-3] on R², q[jnp.array([0, 5])], "
        "q.at[5].set(…), jnp.take(q, 3); force w[7]; holonomic phi q[3]; nonholonomic phi v[5]", ValueError,
        r"(potential|force|holonomic phi|nonholonomic phi) indexes out of range: (update at )?index -?\d on axis 0 of an "
        r"array of shape \(2,\).*JAX would clamp",
        on_plane(lambda q: q[2]), on_plane(lambda q: q[-3]), on_plane(lambda q: q[jnp.array([0, 5])].sum()),
        on_plane(lambda q: jnp.asarray(q).at[5].set(1.0)[1]), on_plane(lambda q: jnp.take(q, 3)),
        constrained(force=lambda q, w, t: -w[7] * w),
        constrained(holonomic=lm.HolonomicConstraint(lambda q: jnp.array([0.5 * (q @ q - 1.0) + q[3]]))),
        constrained(nonholonomic=lm.NonholonomicConstraint(lambda q, v: v[jnp.array([0, 5])]))),
    row("callback", "a callback computing in float32 or float16: jnp.asarray(q, jnp.float32), a float16 constant array",
        ValueError, r"(potential|force) computes in float(32|16) \(.*\): liemech integrates in float64",
        on_plane(lambda q: jnp.asarray(q, jnp.float32)[1]),
        constrained(force=lambda q, w, t: -w * jnp.array([2.1, 1.0], dtype=jnp.float16))),
    row("callback", "potential NaN or inf beyond a boundary as a constant: jnp.where(q[0] < 2, 0.0, jnp.nan), jnp.inf",
        ValueError, r"potential is (nan|inf) on part of the configuration space.*its gradient there is 0",
        on_plane(lambda q: jnp.where(q[0] < 2, 0.0, jnp.nan)), on_plane(lambda q: q[1] + jnp.where(q[0] < 2, 0.0, jnp.inf))),
    row("callback", "force written with numpy: np.linalg.norm(w), if t > 1, math.exp(-t)", TypeError,
        r"force cannot be traced by JAX \((TracerArrayConversionError|TracerBoolConversionError|"
        r"ConcretizationTypeError)\): liemech differentiates and compiles it",
        constrained(force=lambda q, w, t: -np.linalg.norm(w) * w), constrained(force=lambda q, w, t: w if t > 1 else -w),
        constrained(force=lambda q, w, t: -math.exp(-t) * w)),
    row("callback", "a Lagrangian, or its velocity, written with numpy", TypeError,
        r"(lagrangian|velocity) cannot be traced by JAX",
        problem_with(lambda: NumpyLagrangian("lagrangian")), problem_with(lambda: NumpyLagrangian("velocity"))),
    row("callback", "integrate_ensemble: an observable or a Sweep builder written with numpy",
        TypeError, r"(observables\['r'\]|parameters.build \(or the system it returns\)) cannot be traced by JAX",
        ensemble_of(free_particle, observables={"r": lambda system, q, mu, v: np.linalg.norm(q)}),
        ensemble_of(free_particle, initial=None, parameters=lm.Sweep(
            lambda p: lm.MechanicalSystem(lm.Rn(2), np.eye(2), lambda q: float(p[0]) * q[1]), np.ones((2, 1))))),
    row("callback", "integrate_ensemble: an observable or a Sweep builder indexing out of range", ValueError,
        r"(observables\['r'\]|parameters.build \(or the system it returns\)) indexes out of range",
        ensemble_of(free_particle, observables={"r": lambda system, q, mu, v: q[4]}),
        ensemble_of(free_particle, initial=None, parameters=lm.Sweep(
            lambda p: lm.MechanicalSystem(lm.Rn(2), np.eye(2), lambda q: p[3] * q[1]), np.ones((2, 1))))),
    row("callback", "potential that is not callable", TypeError, r"potential must be a callable g -> float",
        lambda: lm.MechanicalSystem(lm.Rn(2), np.eye(2), 3.0)),  # type: ignore[arg-type]
    row("callback", "constant inertia: scalar, complex, NaN, text", ValueError,
        r"inertia must (have shape \(2, 2\), got \(\)|be real|be finite|be a real array, got str)",
        *[functools.partial(lm.MechanicalSystem, lm.Rn(2), M, lambda q: q[1])  # type: ignore[arg-type]
          for M in (2.0, (1.0 + 1j) * np.eye(2), np.full((2, 2), NAN), "eye")]),
    row("callback", "constant inertia not symmetric, or indefinite", ValueError,
        r"inertia must be (symmetric|positive definite)",
        *[functools.partial(lm.MechanicalSystem, lm.Rn(2), M, lambda q: q[1])
          for M in (np.array([[2.0, 1.0], [0.0, 2.0]]), np.diag([1.0, -1.0]))]),
    row("callback", "inertia(g) returning a scalar", ValueError,
        r"inertia must return shape \(2, 2\) at the initial point, got shape \(\)",
        on_plane(inertia=lambda q: 1.0 + q[0] ** 2)),
    row("callback", "inertia(g0) not symmetric, or indefinite", ValueError,
        r"inertia\(g0\) must be (symmetric|positive definite)",
        on_plane(inertia=lambda q: jnp.array([[2.0, 1.0], [0.0, 2.0]])),
        on_plane(inertia=lambda q: jnp.diag(jnp.array([1.0, q[1] - 1.0])))),
    row("callback", "inertia(g0) complex, or NaN", ValueError,
        r"inertia (at the initial point must be real|returned non-finite values)",
        on_plane(inertia=lambda q: (1.0 + 1j) * jnp.eye(2)), on_plane(inertia=lambda q: jnp.log(q[1]) * jnp.eye(2))),
    row("callback", "a Lagrangian whose mass matrix ∂²ℓ/∂η² is indefinite", ValueError,
        r"the mass matrix ∂²ℓ/∂η² at g0 must be positive definite",
        lambda: lm.Problem(FreeLagrangian(-1.0), np.array([1.0, 0.0]), np.zeros(2))),
    row("callback", "a Lagrangian whose velocity does not invert its momentum", ValueError,
        r"velocity does not invert the momentum ∂ℓ/∂η at the initial point",
        lambda: lm.Problem(FreeLagrangian(2.0, wrong_velocity=True), np.array([1.0, 0.0]), np.array([0.0, 1.0]))),
    row("callback", "potential_gradient returning a scalar, or complex values", ValueError,
        r"potential_gradient (must return shape \(2,\)|at the initial point must be real)",
        on_plane(potential_gradient=lambda q: 1.0), on_plane(potential_gradient=lambda q: np.array([0.0, 1.0 + 1j]))),
    row("callback", "potential_gradient that disagrees with autodiff", ValueError,
        r"potential_gradient disagrees with automatic differentiation",
        on_plane(potential_gradient=lambda q: np.array([0.0, -1.0]))),
    row("callback", "a given derivative that is not callable", TypeError,
        r"(potential_gradient|jacobian|hessians|d_eta|d_g) must be a callable .* or None, got ndarray",
        lambda: lm.MechanicalSystem(lm.Rn(2), np.eye(2), lambda q: q[1], potential_gradient=np.zeros(2)),  # type: ignore[arg-type]
        lambda: lm.HolonomicConstraint(lambda q: q[:1], jacobian=np.zeros((1, 2))),  # type: ignore[arg-type]
        lambda: lm.HolonomicConstraint(lambda q: q[:1], hessians=np.zeros((1, 2, 2))),  # type: ignore[arg-type]
        lambda: lm.NonholonomicConstraint(lambda q, v: v[:1], d_eta=np.zeros((1, 2))),  # type: ignore[arg-type]
        lambda: lm.NonholonomicConstraint(lambda q, v: v[:1], d_g=np.zeros((1, 2)))),  # type: ignore[arg-type]
    row("callback", "inertia_gradient of the wrong shape", ValueError,
        r"inertia_gradient must return shape \(2, 2, 2\) at the initial point",
        on_plane(inertia=lambda q: (1.0 + q[0] ** 2) * jnp.eye(2), inertia_gradient=lambda q: np.zeros((2, 2)))),
    row("callback", "holonomic phi returning a scalar, shape (1, 1), or nothing", ValueError,
        r"holonomic phi must return a nonempty 1-D array at the initial point, got shape \((|1, 1|0,)\)",
        *[constrained(holonomic=lm.HolonomicConstraint(phi)) for phi in (
            lambda q: 0.5 * (q @ q - 1.0), lambda q: jnp.array([[0.5 * (q @ q - 1.0)]]), lambda q: jnp.zeros(0))]),
    row("callback", "holonomic phi complex", ValueError, r"holonomic phi at the initial point must be real",
        constrained(holonomic=lm.HolonomicConstraint(lambda q: jnp.array([0.5 * (q @ q - 1.0) + 0j])))),
    row("callback", "holonomic phi with an infinite Jacobian at g0 (√q₁)", ValueError,
        r"the Jacobian of holonomic phi returned non-finite values",
        constrained(holonomic=lm.HolonomicConstraint(lambda q: jnp.array([jnp.sqrt(q[1])])))),
    row("callback", "holonomic jacobian returning a scalar or a vector", ValueError,
        r"holonomic jacobian must return shape \(1, 2\) at the initial point",
        *[constrained(holonomic=lm.HolonomicConstraint(lambda q: jnp.array([0.5 * (q @ q - 1.0)]), jacobian=J))
          for J in (lambda q: 1.0, lambda q: q)]),
    row("callback", "holonomic phi that is not callable", TypeError, r"phi must be a callable g -> \(m,\) array",
        lambda: lm.HolonomicConstraint(np.zeros(1))),  # type: ignore[arg-type]
    row("callback", "redundant holonomic constraints", ValueError, r"has rank 1 < m = 3.*remove redundant constraints",
        constrained(holonomic=lm.HolonomicConstraint(lambda q: jnp.stack([q[1], 2.0 * q[1], 3.0 * q[1]])))),
    row("callback", "nonholonomic phi returning a scalar", ValueError,
        r"nonholonomic phi must return a nonempty 1-D array at the initial point, got shape \(\)",
        constrained(nonholonomic=lm.NonholonomicConstraint(lambda q, v: v[1]))),
    row("callback", "nonholonomic phi taking one argument", TypeError,
        r"nonholonomic phi raised TypeError at the initial point",
        constrained(nonholonomic=lm.NonholonomicConstraint(lambda q: q[1:]))),  # type: ignore[arg-type]
    row("callback", "nonholonomic d_eta returning a scalar", ValueError,
        r"nonholonomic d_eta must return shape \(1, 2\) at the initial point",
        constrained(nonholonomic=lm.NonholonomicConstraint(lambda q, v: v[1:], d_eta=lambda q, v: 1.0))),
    row("callback", "nonholonomic phi independent of η", ValueError, r"the constraints are not admissible",
        constrained(nonholonomic=lm.NonholonomicConstraint(lambda q, v: q[1:]))),
    row("callback", "a nonholonomic row repeating dΦ/dt = 0 of a holonomic constraint", ValueError,
        r"stacked has rank 1 < m = 2.*repeats dΦ/dt = 0",
        constrained(holonomic=lm.HolonomicConstraint(lambda q: q[1:]),
                    nonholonomic=lm.NonholonomicConstraint(lambda q, v: v[1:]))),
    row("callback", "force returning shape (3,) on R²", ValueError,
        r"force must return shape \(2,\) at the initial point, got shape \(3,\)",
        constrained(force=lambda q, v, t: jnp.zeros(3))),
    row("callback", "force that is not a function", TypeError, r"force must be a callable \(g, eta, t\)",
        constrained(force=1.0)),
    row("callback", "initial data off the constraints", ValueError, r"inconsistent initial data: \|Φ\(g0\)\| = 1\.500e\+00",
        lambda: lm.Problem(plane(), np.array([2.0, 0.0]), np.zeros(2), holonomic=CartesianPendulum.constraint())),
    # ---- 4: every returned array is finite -----------------------------------------------------
    row("result", "last node NaN (inertia NaN past q = 1), VPRK(gauss(1)), n_steps=1", lm.ConvergenceError,
        r"step 0 \(t = 0\) failed: the step produced a non-finite state.*potential, force, inertia or constraint",
        run(edge, lm.VPRK(lm.gauss(1)), h=0.15)),
    row("result", "the same through lm.flow(…, MidpointVI(), n_steps=1)", lm.ConvergenceError,
        r"step 0 \(t = 0\) failed: the step produced a non-finite state",
        lambda: lm.flow(edge(), lm.MidpointVI(), h=0.15, n_steps=1)()),
    row("result", "RK4() run into the NaN region of V = √(1 − q)", lm.ConvergenceError,
        r"failed: the step produced a non-finite state.*A potential, force, inertia or constraint returned NaN",
        run(wall, lm.RK4(), n_steps=30)),
    row("result", "a user's subclass of lm.Method without a compiled step", TypeError,
        r"method must be one of liemech's integrators such as VPRK\(lobatto\(3\)\), got NoCompiledStep",
        run(free_particle, NoCompiledStep(), n_steps=2)),
    # ---- 5: points and algebra vectors ---------------------------------------------------------
    row("point", "check_point with a complex entry, every group", ValueError, r"g(\[0\])? must be real",
        *every_group(lambda G: G.check_point(identity_with(G, 1e-3j)))),
    row("point", "check_point with a NaN entry, every group", ValueError, r"g(\[0\])? must be finite",
        *every_group(lambda G: G.check_point(identity_with(G, NAN)))),
    row("point", "check_algebra with complex entries, every group", ValueError, r"xi must be real",
        *every_group(lambda G: G.check_algebra(np.zeros(G.dim) + 1j))),
    row("point", "tau, dtau, dtau_inv, ddtau, ddtau_tensor with ξ one entry too long, every retraction",
        ValueError, r"xi must have shape \(\d+,\)",
        *[a for method in ("tau", "dtau", "dtau_inv", "ddtau_tensor")
          for a in every_retraction(lambda t, d, method=method: getattr(t, method)(np.zeros(d + 1)))],  # type: ignore[misc]
        *every_retraction(lambda t, d: t.ddtau(np.zeros(d + 1), np.zeros(d)))),
    row("point", "ddtau with η one entry too long, every retraction", ValueError, r"eta must have shape \(\d+,\)",
        *every_retraction(lambda t, d: t.ddtau(np.zeros(d), np.zeros(d + 1)))),
    row("point", "tau with a complex ξ, every retraction", ValueError, r"xi must be real",
        *every_retraction(lambda t, d: t.tau(np.zeros(d) + 0.1j))),  # type: ignore[arg-type]
    row("point", "ad_star with μ one entry too long, every group", ValueError, r"mu must have shape",
        *every_group(lambda G: G.ad_star(np.zeros(G.dim), np.zeros(G.dim + 1)))),
    row("point", "Problem(eta0=0.0), eta0 complex, mu0 NaN, g0 complex", ValueError,
        r"(eta0 must have shape \(2,\), got \(\)|eta0 must be real|mu0 must be finite|g0 must be real)",
        lambda: lm.Problem(plane(), np.array([1.0, 0.0]), 0.0),  # type: ignore[arg-type]
        lambda: lm.Problem(plane(), np.array([1.0, 0.0]), np.zeros(2) + 1j),  # type: ignore[arg-type]
        lambda: lm.Problem(plane(), np.array([1.0, 0.0]), mu0=np.array([NAN, 0.0])),
        lambda: lm.Problem(plane(), np.array([1.0, 1j]), np.zeros(2))),
    row("point", "a Flow called with g0 NaN, eta0 complex or of the wrong length", ValueError,
        r"(g0 must be finite|eta0 must be real|eta0 must have shape \(2,\))",
        lambda: lm.flow(free_particle(), lm.MidpointVI(), h=0.1, n_steps=1)(g0=np.array([NAN, 0.0])),
        lambda: lm.flow(free_particle(), lm.MidpointVI(), h=0.1, n_steps=1)(eta0=np.zeros(2) + 1j),
        lambda: lm.flow(free_particle(), lm.MidpointVI(), h=0.1, n_steps=1)(eta0=np.zeros(3))),
    row("point", "a Flow of a constrained problem called with η₀ off the constraint", ValueError,
        r"inconsistent initial data",
        lambda: lm.flow(pendulum(), lm.VPRK(lm.lobatto(2)), h=0.1, n_steps=1)(eta0=np.array([1.0, 0.0]))),
    row("point", "project_to_constraints with eta of the wrong length", ValueError, r"eta must have shape \(2,\)",
        lambda: lm.project_to_constraints(plane(), CartesianPendulum.constraint(), np.array([1.1, 0.0]), np.zeros(3))),
    # ---- 6: the hint of ConvergenceError fits the cause -----------------------------------------
    row("hint", "V NaN past q = 1 reached by MidpointVI()", lm.ConvergenceError,
        r"non-finite residual.*A potential, force or constraint returned NaN or inf at a stage point",
        run(wall, lm.MidpointVI(), n_steps=30)),
    row("hint", "NewtonOptions(tol=1e-300), below round-off", lm.ConvergenceError,
        r"no convergence in 50 iterations.*stalled near round-off above tol = 1e-300: loosen tol, or use tol=None",
        run(wall, lm.MidpointVI(newton=lm.NewtonOptions(tol=1e-300)))),
    row("hint", "NewtonOptions(max_iterations=1), far from round-off", lm.ConvergenceError,
        r"no convergence in 1 iterations.*Try a smaller step h or a larger max_iterations",
        run(wall, lm.MidpointVI(newton=lm.NewtonOptions(max_iterations=1)))),
    row("hint", "a free body on SE(3) moving 2 = 4√(I/m) per step, VPRK(lobatto(2)) with cay", lm.ConvergenceError,
        r"Newton's iterates diverged.*on SE\(3\) the Cayley retraction ties translation to rotation.*use "
        r"retraction='exp'",
        lambda: lm.integrate(fast_free_body(), lm.VPRK(lm.lobatto(2)), h=0.05, n_steps=1)),
]


@pytest.mark.parametrize("case", CASES, ids=[case.example for case in CASES])
def test_refused_by_name(case: Refusal) -> None:
    assert case.attempts
    for attempt in case.attempts:
        with pytest.raises(case.error, match=case.message):
            attempt()


def test_the_docs_table_mirrors_the_cases() -> None:
    """docs/errors.md lists exactly these rows, in this order: category, example input, error type."""
    rows = []
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if len(cells) == 3 and cells[0] in {"method", "option", "callback", "result", "point", "hint"}:
            rows.append((cells[0], cells[1].replace("\\|", "|"), cells[2].split(":")[0].strip("`")))
    assert rows == [(c.category, c.example, c.error.__name__) for c in CASES]


# ---- what is accepted, and the hints that need no run ---------------------------------------------


def test_numpy_scalars_are_accepted_where_python_numbers_are() -> None:
    options = lm.NewtonOptions(tol=np.float32(1e-9), max_iterations=np.int64(7), roundoff_factor=np.float64(8))  # type: ignore[arg-type]
    assert options == lm.NewtonOptions(tol=float(np.float32(1e-9)), max_iterations=7, roundoff_factor=8.0)
    assert type(options.max_iterations) is int
    assert lm.DiscreteGradientPenalty(np.int64(10)).mu == 10.0
    augmented = lm.DiscreteGradientAugmentedLagrange(np.float32(10), tol=np.float64(1e-8), max_iterations=np.int32(5),
                                                     warm_start=np.bool_(True))  # type: ignore[arg-type]
    assert (augmented.mu, augmented.max_iterations, augmented.warm_start) == (10.0, 5, True)
    assert lm.GGLThetaA(np.float32(0.5)).theta == 0.5 and lm.GGLThetaB(vartheta=np.int64(1)).vartheta == 1.0
    assert lm.Rn(np.int64(3)) == lm.Rn(3)
    problem = lm.Problem(plane(), np.array([1.0, 0.0]), np.zeros(2), holonomic=CartesianPendulum.constraint(),
                         constraint_tol=np.float32(1e-9))
    assert problem.constraint_tol == float(np.float32(1e-9))
    assert lm.flow(free_particle(), lm.MidpointVI(), h=np.float64(0.1), n_steps=np.int64(2)) is not None


@pytest.mark.parametrize("newton, hint", [
    (lm.NewtonOptions(), r"stalled near round-off: try NewtonOptions\(jacobian='refreshed'\) or jacobian='every', or "
                         r"a larger max_iterations"),
    (lm.NewtonOptions(jacobian="refreshed"),
     r"stalled near round-off: try NewtonOptions\(jacobian='every'\) or a larger max_iterations"),
    (lm.NewtonOptions(jacobian="every"), r"stalled near round-off: try a larger max_iterations\.$"),
    (lm.NewtonOptions(tol=1e-16), r"stalled near round-off above tol = 1e-16: loosen tol"),
], ids=["simplified", "refreshed", "full", "tol"])
def test_a_stall_near_round_off_suggests_the_jacobian_or_iterations_not_a_smaller_step(
        newton: lm.NewtonOptions, hint: str) -> None:
    error = convergence_error(lm.MidpointVI(newton=newton), 3, 0.3, 2e-15, Status.NO_CONVERGENCE)
    assert re.search(hint, str(error)) and "smaller step" not in str(error)
    diverged = convergence_error(lm.MidpointVI(newton=newton), 3, 0.3, 1e-3, Status.NO_CONVERGENCE)
    assert "smaller step h" in str(diverged)


@functools.cache
def sphere() -> lm.Problem[lm.Vector]:
    """A particle on the unit sphere with V = z + z³/2: L_z is a momentum map."""
    system = lm.MechanicalSystem(lm.Rn(3), np.eye(3), lambda q: q[2] + 0.5 * q[2] ** 3)
    constraint: lm.HolonomicConstraint[lm.Vector] = lm.HolonomicConstraint(lambda q: jnp.array([0.5 * (q @ q - 1.0)]))
    return lm.Problem(system, np.array([0.6, 0.0, 0.8]), np.array([0.0, 1.2, 0.0]), holonomic=constraint)


def axial_invariant() -> lm.QuadraticInvariantPotential:
    """The sphere's V through the invariant π = z (linear, A = 0), Ṽ(π) = π + π³/2."""
    return lm.QuadraticInvariantPotential([np.zeros((3, 3))], [lambda s: s + 0.5 * s**3], [lambda s: 1.0 + 1.5 * s**2],
                                          linear=[np.array([0.0, 0.0, 1.0])])


def axial_momentum_drift(method: lm.Method) -> float:
    sol = lm.integrate(sphere(), method, h=0.02, n_steps=100)
    L_z = sol.g[:, 0] * sol.mu[:, 1] - sol.g[:, 1] * sol.mu[:, 0]
    return float(np.max(np.abs(L_z - L_z[0])))


def test_momentum_map_traits_say_what_the_discrete_gradient_delivers() -> None:
    """The generic Gonzalez discrete gradient is not equivariant: the traits of EM, EM-G and the
    discrete-gradient schemes promise momentum maps only with the invariant discrete gradient, and
    the multiplier scheme indeed loses L_z on the sphere."""
    for method in (lm.GGLEnergyMomentum(), lm.GonzalezEnergyMomentum(), lm.DiscreteGradientMultiplier(),
                   lm.DiscreteGradientPenalty(10.0), lm.DiscreteGradientAugmentedLagrange(10.0)):
        assert not method.traits.conserves_momentum_maps, method
    assert lm.GGLEnergyMomentum(invariants=axial_invariant()).traits.conserves_momentum_maps
    assert lm.GonzalezEnergyMomentum(invariants=axial_invariant()).traits.conserves_momentum_maps
    assert axial_momentum_drift(lm.DiscreteGradientMultiplier()) > 1e-6  # measured 3.4e-5


@pytest.mark.slow
def test_energy_momentum_keeps_the_momentum_map_only_with_the_invariant_discrete_gradient() -> None:
    assert axial_momentum_drift(lm.GonzalezEnergyMomentum()) > 1e-6  # measured 3.7e-5
    assert axial_momentum_drift(lm.GonzalezEnergyMomentum(invariants=axial_invariant())) <= 1e-13
