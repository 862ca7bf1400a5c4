"""Three mechanisms in redundant coordinates (liemech.multibody), VPRK Lobatto-2:

1. A 32-link pendulum chain released from a bent shape: energy error and joint residual.
2. A closed four-bar linkage (a parallelogram): the loop's residual and the crank angle.
3. The Panda arm from example-robot-data's URDF (fingers locked) swinging under gravity from a
   posture at rest, with the torques its joints carry (the constraint torques, from the multipliers),
   its energy (falling by the joints' damping) and the joints' residual.

Each prints its figures and draws them into one PNG.

Run: .venv/bin/python examples/multibody.py [output.png]   (default /tmp/multibody.png)
"""

import os
import sys
import sysconfig
from pathlib import Path

import matplotlib
import numpy as np
from numpy.typing import NDArray

import liemech as lm
from liemech.multibody import Body, Configuration, Joint, Model, from_urdf, pose

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: 8 links, shorter runs
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"
LINKS, T_CHAIN, T_LOOP, T_ARM = (8, 0.2, 0.5, 0.1) if FAST else (32, 2.0, 4.0, 2.0)
ROBOTS = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
X = np.array([1.0, 0.0, 0.0])


def rod(mass: float, length: float, along: int) -> Body:
    """A uniform rod hanging along −z (along = 2) or lying along +y (along = 1) from its frame's origin."""
    moments = np.full(3, mass * length ** 2 / 12)
    moments[along] = 1e-3
    com = np.array([0.0, 0.0, -length / 2]) if along == 2 else np.array([0.0, length / 2, 0.0])
    return Body("rod", mass, np.diag(moments), com)


def energies(model: Model, sol: lm.Solution[Configuration]) -> NDArray[np.float64]:
    return np.array([model.system.energy(p, e) for p, e in zip(sol.points(), sol.eta)])


def residuals(problem: lm.Problem[Configuration],
              sol: lm.Solution[Configuration]) -> NDArray[np.float64]:
    assert problem.holonomic is not None
    return np.array([np.max(np.abs(problem.holonomic.value(p))) for p in sol.points()])


def chain() -> tuple[Model, lm.Problem[Configuration]]:
    length = 0.5
    bodies = [Body(f"rod{i}", 1.0, rod(1.0, length, 2).inertia, rod(1.0, length, 2).com) for i in range(LINKS)]
    joints = [Joint(f"hinge{i}", "revolute", "world" if i == 0 else f"rod{i - 1}", f"rod{i}",
                    origin=pose((0.0, 0.0, 0.0 if i == 0 else -length)), axis=X) for i in range(LINKS)]
    model = Model(bodies, joints)
    return model, model.problem(np.where(np.arange(LINKS) % 2 == 0, 0.3, -0.3), np.zeros(LINKS))


def four_bar() -> tuple[Model, lm.Problem[Configuration]]:
    length, span = 0.5, 0.8
    crank, coupler = rod(1.0, length, 2), rod(2.0, span, 1)
    bodies = [Body("crank", 1.0, crank.inertia, crank.com), Body("rocker", 1.0, crank.inertia, crank.com),
              Body("coupler", 2.0, coupler.inertia, coupler.com)]
    joints = [Joint("ground_crank", "revolute", "world", "crank", axis=X),
              Joint("ground_rocker", "revolute", "world", "rocker", origin=pose((0, span, 0)), axis=X),
              Joint("crank_coupler", "revolute", "crank", "coupler", origin=pose((0, 0, -length)), axis=X),
              Joint("rocker_coupler", "revolute", "rocker", "coupler", origin=pose((0, 0, -length)),
                    child_origin=pose((0, span, 0)), axis=X)]
    model = Model(bodies, joints)
    return model, model.problem([0.9, 0.9, -0.9, -0.9], np.zeros(4))


def arm() -> tuple[Model, lm.Problem[Configuration]]:
    model = from_urdf(ROBOTS / "panda_description/urdf/panda.urdf",
                      locked={"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02})
    return model, model.problem([0.0, 0.3, 0.0, -1.8, 0.0, 1.9, 0.8], np.zeros(7))


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/multibody.png")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 2, figsize=(11, 10), constrained_layout=True)
    method = lm.VPRK(lm.lobatto(2))

    model, problem = chain()
    sol = lm.integrate(problem, method, h=0.005, t_final=T_CHAIN)
    energy = energies(model, sol)
    print(f"{LINKS}-link chain, h = 0.005, T = {T_CHAIN}: max |E − E0| = {np.max(np.abs(energy - energy[0])):.2e} "
          f"(E0 = {energy[0]:.3f} J), max joint residual {np.max(residuals(problem, sol)):.1e}")
    axes[0, 0].plot(sol.t, model.joint_positions(sol)[:, [0, LINKS // 2, LINKS - 1]])
    axes[0, 0].set(title=f"{LINKS}-link chain: joint angles (first, middle, last)", xlabel="t", ylabel="rad")
    axes[0, 1].semilogy(sol.t[1:], np.abs(energy - energy[0])[1:] + 1e-16)
    axes[0, 1].set(title="chain: energy error |E − E0|", xlabel="t")

    model, problem = four_bar()
    sol = lm.integrate(problem, method, h=0.005, t_final=T_LOOP)
    loop = residuals(problem, sol)
    q = model.joint_positions(sol)
    print(f"four-bar, h = 0.005, T = {T_LOOP}: max loop residual {np.max(loop):.1e}, crank angle "
          f"{np.min(q[:, 0]):.3f}…{np.max(q[:, 0]):.3f} rad, rocker − crank {np.max(np.abs(q[:, 1] - q[:, 0])):.1e}")
    axes[1, 0].plot(sol.t, q[:, :2])
    axes[1, 0].set(title="four-bar: crank and rocker angles", xlabel="t", ylabel="rad")
    axes[1, 1].semilogy(sol.t, loop + 1e-18)
    axes[1, 1].set(title="four-bar: max |Φ| (joints and loop)", xlabel="t")

    model, problem = arm()
    sol = lm.integrate(problem, method, h=0.002, t_final=T_ARM)
    energy = energies(model, sol)
    wrenches = model.joint_wrenches(problem, sol)
    print(f"Panda arm (7 joints), h = 0.002, T = {T_ARM}: E {energy[0]:.3f} → {energy[-1]:.3f} J, max joint "
          f"residual {np.max(residuals(problem, sol)):.1e}")
    for name in model.joint_names:
        torque = np.linalg.norm(wrenches[name][:, 3:], axis=1)
        axes[2, 0].plot(sol.t[1:], torque[1:], label=name.removeprefix("panda_"))
    axes[2, 0].set(title="Panda: torque carried by each joint (N m)", xlabel="t")
    axes[2, 0].legend(fontsize=7)
    axes[2, 1].plot(sol.t, energy - energy[0])
    axes[2, 1].set(title="Panda: E − E0 (joint damping)", xlabel="t", ylabel="J")
    fig.savefig(out, dpi=90)
    print(f"figure: {out}")


if __name__ == "__main__":
    main()
