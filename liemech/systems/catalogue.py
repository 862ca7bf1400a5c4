"""The systems of ``liemech.systems`` by name, as the ``liemech`` command line runs them.

Each ``Entry`` holds a one-line description, the problem, the energy H(g, μ) and the first
integrals I(g, μ) of the system (functions of a configuration and its body momentum, as
``sol.points()`` and ``sol.mu`` give them), a default step h and end time T (T / 8h is a whole
number, so a convergence study at 8h, 4h, 2h, h fits), and the configuration g(T) of an accurate
reference solution where the system has one (DOP853 at rtol 1e-13, or its closed form).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Generic, Protocol, TypeVar

import numpy as np

from liemech.mechanics import point_masses
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.plot import Observable
from liemech.systems.ball_on_turntable import BallOnTurntable
from liemech.systems.body_on_plane import Pose
from liemech.systems.cartesian_pendulum import CartesianPendulum
from liemech.systems.chaplygin_sleigh import ChaplyginSleigh
from liemech.systems.constrained_reference import index1_reference
from liemech.systems.cvt import CVT
from liemech.systems.director_top import DirectorTop
from liemech.systems.double_pendulum import DoublePendulum
from liemech.systems.double_spherical_pendulum import DoubleSphericalPendulum
from liemech.systems.four_particles import FourParticles
from liemech.systems.gyroscopic_top import GyroscopicTop
from liemech.systems.heavy_top import HeavyTop
from liemech.systems.heavy_top_constrained import ConstrainedHeavyTop
from liemech.systems.henon_heiles import HenonHeiles
from liemech.systems.lagrange_top import LagrangeTop
from liemech.systems.nonholonomic_particle import NonholonomicParticle
from liemech.systems.pendulum import Pendulum
from liemech.systems.rolling_ball import RollingBall
from liemech.systems.rolling_disc import RollingDisc
from liemech.systems.spherical_pendulum import SphericalPendulum
from liemech.systems.vertical_disc import VerticalDisc
from liemech.types import Matrix, Vector

P = TypeVar("P")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class EntryAction(Protocol[R_co]):
    """Something done with an entry whatever its configuration space (see ``Entry.apply``)."""

    def __call__(self, entry: "Entry[P]", /) -> R_co: ...


@dataclass(frozen=True)
class Entry(Generic[P]):
    """A runnable system: ``problem()``, ``energy(g, μ)``, ``invariants`` (name → I(g, μ)), the
    default step ``h`` and end time ``t_final``, and ``reference(T)``, g(T) of an accurate solution
    (None where the system has none)."""

    description: str
    problem: Callable[[], Problem[P]]
    energy: Observable[P]
    h: float
    t_final: float
    invariants: Mapping[str, Observable[P]] = field(default_factory=dict)
    reference: Callable[[float], P] | None = None

    def apply(self, action: EntryAction[R]) -> R:
        """action(self): lets a table of entries on different spaces be used by one generic function."""
        return action(self)


def _with_velocity(fn: Callable[[P, Vector], float], inertia: Matrix) -> Observable[P]:
    """fn(g, η) of the body velocity as a function of the momentum μ = 𝕀η (constant 𝕀)."""
    return lambda g, mu: fn(g, np.asarray(np.linalg.solve(inertia, mu), dtype=np.float64))


def _index1_reference(system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector],
                      initial: Callable[[], tuple[Vector, Vector]]) -> Callable[[float], Vector]:
    """q(T) from DOP853 on the index-1 equations of a holonomic system on Rⁿ from (q₀, v₀) = initial()."""
    return lambda T: index1_reference(system, constraint, *initial(), np.array([T]))[0][-1]


def _heavy_top() -> Entry[Matrix]:
    top = HeavyTop()
    return Entry("heavy top on SO(3): V = mg e₃ᵀRχ, asymmetric body", top.problem, top.energy, 0.01, 2.0,
                 {"Noether momentum ⟨μ, Rᵀe₃⟩": top.noether_momentum},
                 lambda T: top.reference(np.array([T]))[0][-1])


def _lagrange_top() -> Entry[Vector]:
    top = LagrangeTop.table6()

    def p_phi(q: Vector, p: Vector) -> float:
        return float(p[0])

    def p_psi(q: Vector, p: Vector) -> float:
        return float(p[2])

    return Entry("Lagrange top in Euler angles on R³ (configuration-dependent inertia, a motion with cusps)",
                 top.problem, top.energy, 0.0125, 2.0, {"p_φ": p_phi, "p_ψ": p_psi})


def _pendulum() -> Entry[Vector]:
    pendulum = Pendulum()
    return Entry("planar pendulum in angle form on R¹: H = ½p² + 1 − cos q", pendulum.problem, pendulum.energy,
                 0.025, 2.0, reference=lambda T: pendulum.reference(np.array([T]))[0][-1])


def _double_pendulum() -> Entry[Vector]:
    pendulum = DoublePendulum()
    return Entry("planar double pendulum in absolute angles on R² (configuration-dependent inertia)",
                 pendulum.problem, pendulum.energy, 0.005, 2.0,
                 reference=lambda T: pendulum.reference(np.array([T]))[0][-1])


def _henon_heiles() -> Entry[Vector]:
    system = HenonHeiles()
    return Entry("Hénon–Heiles on R²: U = ½(x² + y²) + x²y − y³/3", system.problem, system.energy, 0.05,
                 10.0, reference=lambda T: system.reference(np.array([T]))[0][-1])


def _spherical_pendulum() -> Entry[Vector]:
    pendulum = SphericalPendulum()
    return Entry("spherical pendulum on R³ with the holonomic constraint ½(|q|² − 1) = 0", pendulum.problem,
                 pendulum.energy, 0.005, 1.0, {"J₃ = e₃·(q × p)": pendulum.vertical_angular_momentum},
                 _index1_reference(pendulum.system(), pendulum.constraint(), lambda: (pendulum.q0, pendulum.v0)))


def _cartesian_pendulum() -> Entry[Vector]:
    pendulum = CartesianPendulum()
    return Entry("planar pendulum in Cartesian coordinates on R² with ½(|q|² − 1) = 0", pendulum.problem,
                 pendulum.energy, 0.025, 2.0, reference=lambda T: pendulum.reference(np.array([T]))[0][-1])


def _double_spherical_pendulum() -> Entry[Vector]:
    pendulum = DoubleSphericalPendulum()
    return Entry("double spherical pendulum on R⁶ with two rods", pendulum.problem, pendulum.energy, 0.005, 1.0,
                 {"e₂·Σ qⁱ × pⁱ": pendulum.angular_momentum},
                 lambda T: pendulum.reference(np.array([T]))[-1, :6])


def _director_top() -> Entry[Vector]:
    top = DirectorTop()

    def initial() -> tuple[Vector, Vector]:
        problem = top.problem()
        return problem.g0, problem.eta0

    return Entry("heavy symmetric top as three directors on R⁹ with six orthonormality constraints",
                 top.problem, top.energy, 0.005, 1.0, {"e₃·Σ dᵢ × πᵢ": top.vertical_angular_momentum},
                 _index1_reference(top.system(), top.constraint(), initial))


def _gyroscopic_top() -> Entry[Vector]:
    top = GyroscopicTop()

    def vertical_momentum(q: Vector, p: Vector) -> float:
        return float(top.angular_momentum(q, p)[2])

    return Entry("gyroscopic top (director cone in steady precession) on R¹² with nine constraints",
                 top.problem, top.energy, 0.001, 0.2, {"L₃ = e₃·Σ qᵢ × pᵢ": vertical_momentum},
                 _index1_reference(top.system(), top.constraint(), lambda: (top.q0, top.v0)))


def _four_particles() -> Entry[Vector]:
    system = FourParticles()

    def component(momentum: Callable[[Vector, Vector], Vector], i: int) -> Observable[Vector]:
        return lambda q, p: float(momentum(q, p)[i])

    def linear(q: Vector, p: Vector) -> Vector:
        return system.linear_momentum(p)

    invariants = {f"L{i + 1}": component(linear, i) for i in range(3)}
    invariants |= {f"J{i + 1}": component(system.angular_momentum, i) for i in range(3)}
    return Entry("four particles on R¹² joined by two springs and two rigid bars", system.problem, system.energy,
                 0.005, 1.0, invariants, lambda T: system.reference(np.array([T]))[0][-1])


def _constrained_heavy_top() -> Entry[Pose]:
    top = ConstrainedHeavyTop()

    def energy(g: Pose, mu: Vector) -> float:
        """½ μ_Rᵀ𝕀_c⁻¹μ_R + |μ_x|²/2m + m g x₃."""
        x = np.asarray(g[1])
        return (0.5 * float(mu[:3] @ np.linalg.solve(top.inertia_centre, mu[:3]))
                + 0.5 * float(mu[3:] @ mu[3:]) / top.mass + top.mass * top.gravity * float(x[2]))

    def vertical_momentum(g: Pose, mu: Vector) -> float:
        """e₃·(Rμ_R + x × μ_x): rotations about the vertical act on R and x alike."""
        R, x = np.asarray(g[0]), np.asarray(g[1])
        return float((R @ mu[:3])[2] + point_masses.angular_momentum(x, mu[3:])[2])

    def reference(T: float) -> Pose:
        R = top.reduced().reference(np.array([T]))[0][-1]
        return (R, R @ top.chi)

    return Entry("heavy top as a free body on SO(3) × R³ held at its pivot by x − Rχ = 0", top.problem, energy,
                 0.01, 2.0, {"e₃·(Rμ_R + x × μ_x)": vertical_momentum}, reference)


def _vertical_disc() -> Entry[Matrix]:
    disc = VerticalDisc()
    inertia = np.diag([disc.mass, disc.mass, disc.inertia])

    def spin(g: Matrix, xi: Vector) -> float:
        return float(xi[2])

    return Entry("vertical rolling disc on SE(2) tied to the origin by a spring (nonholonomic v₂ = 0)",
                 disc.problem, _with_velocity(disc.energy, inertia), 0.0125, 1.0,
                 {"ω": _with_velocity(spin, inertia)}, lambda T: disc.reference(np.array([T]))[0][-1])


def _chaplygin_sleigh() -> Entry[Matrix]:
    sleigh = ChaplyginSleigh()
    return Entry("Chaplygin sleigh on SE(2): a knife edge, nonholonomic v₂ = 0", sleigh.problem,
                 _with_velocity(sleigh.energy, sleigh.inertia_matrix()), 0.025, 5.0,
                 reference=lambda T: sleigh.reference(np.array([T]))[0][-1])


def _ball_on_turntable() -> Entry[Pose]:
    ball = BallOnTurntable()
    inertia = ball.inertia()
    names = ("ω̃₃", "rω̃₁ − Ωx/(1+a)", "rω̃₂ − Ωy/(1+a)", "moving energy")

    def kinetic(g: Pose, mu: Vector) -> float:
        return 0.5 * float(mu @ np.linalg.solve(inertia, mu))

    def integral(i: int) -> Observable[Pose]:
        return _with_velocity(lambda g, eta: float(ball.first_integrals(g, eta)[i]), inertia)

    return Entry("ball rolling on a spinning turntable on SO(3) × R² (the turntable does work: the kinetic "
                 "energy H changes, four first integrals do not)", ball.problem,
                 kinetic, 0.0125, 1.0, {name: integral(i) for i, name in enumerate(names)},
                 lambda T: ball.reference(np.array([T]))[0][-1])


def _rolling_disc() -> Entry[Pose]:
    disc = RollingDisc()
    steady = disc.steady(lean=0.25, precession=1.5)
    return Entry("thin disc rolling on a plane on SO(3) × R³ (holonomic contact and nonholonomic rolling), "
                 "in an exact steady circular motion", steady.problem, disc.energy, 0.025, 2.0,
                 reference=steady.pose)


def _rolling_ball() -> Entry[Pose]:
    ball = RollingBall()

    def contact_momentum(i: int) -> Observable[Pose]:
        return lambda g, mu: float(ball.contact_momentum(g, mu)[i])

    def reference(T: float) -> Pose:
        trajectory = ball.reference(np.array([0.0, T]))
        return trajectory.R[-1], trajectory.x[-1]

    return Entry("Chaplygin ball rolling on a plane on SO(3) × R³ (holonomic contact and nonholonomic rolling)",
                 ball.problem, ball.energy, 0.025, 2.0,
                 {f"K_{axis} (angular momentum about the contact point)": contact_momentum(i)
                  for i, axis in enumerate("xyz")}, reference)


def _nonholonomic_particle() -> Entry[Vector]:
    particle = NonholonomicParticle()
    return Entry("particle on R³ with the nonholonomic constraint ż = y ẋ (unit mass: μ = v)",
                 particle.problem, particle.energy, 0.025, 2.0,
                 reference=lambda T: particle.reference(np.array([T]))[0][-1])


def _cvt() -> Entry[Vector]:
    cvt = CVT()

    def energy(q: Vector, v: Vector) -> float:
        """Passenger and driver energies: ½|v|² + V (unit mass: μ = v)."""
        return cvt.passenger_energy(q, v) + cvt.driver_energy(q, v)

    return Entry("pendulum-driven continuously variable transmission on R³ (nonholonomic)", cvt.problem, energy,
                 0.025, 2.0)


SYSTEMS: Final[Mapping[str, Entry[Vector] | Entry[Pose] | Entry[Pose]]] = {
    "heavy-top": _heavy_top(),
    "lagrange-top": _lagrange_top(),
    "pendulum": _pendulum(),
    "double-pendulum": _double_pendulum(),
    "henon-heiles": _henon_heiles(),
    "spherical-pendulum": _spherical_pendulum(),
    "cartesian-pendulum": _cartesian_pendulum(),
    "double-spherical-pendulum": _double_spherical_pendulum(),
    "director-top": _director_top(),
    "gyroscopic-top": _gyroscopic_top(),
    "four-particles": _four_particles(),
    "constrained-heavy-top": _constrained_heavy_top(),
    "vertical-disc": _vertical_disc(),
    "chaplygin-sleigh": _chaplygin_sleigh(),
    "ball-on-turntable": _ball_on_turntable(),
    "rolling-disc": _rolling_disc(),
    "rolling-ball": _rolling_ball(),
    "nonholonomic-particle": _nonholonomic_particle(),
    "cvt": _cvt(),
}
"""Every runnable system by name."""
