"""Three mechanisms in redundant coordinates (liemech.multibody), VPRK Lobatto-2:

1. A 32-link pendulum chain released at rest from a bent shape: snapshots of the chain, joint
   angles, energy error and joint residual.
2. A closed four-bar linkage (a parallelogram): snapshots over the first swing, crank and rocker
   angles, energy error and the residual of the joints and the loop.
3. The Panda arm from example-robot-data's URDF (fingers locked, no actuation) swinging under
   gravity from a posture at rest: the torques its joints carry (the constraint torques, from the
   multipliers), its joint angles, its energy (falling by the joints' damping, against the work the
   damping dissipates) and the joints' residual.

Each prints its figures; plotted (when matplotlib is installed, into figures/): one figure per
mechanism, ``multibody_chain.png``, ``multibody_four_bar.png`` and ``multibody_panda.png`` (the
gallery's figures).

Run: .venv/bin/python examples/multibody.py
"""

import importlib.util
import os
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jax
import numpy as np
from numpy.typing import NDArray

import liemech as lm
from figures import FIGURES
from liemech.multibody import Body, Configuration, Joint, Model, from_urdf, pose

if TYPE_CHECKING:  # matplotlib is optional (the plot extra)
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: 8 links, shorter runs
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"
LINKS, T_CHAIN, T_LOOP, T_ARM = (8, 0.2, 0.5, 0.1) if FAST else (32, 2.0, 4.0, 2.0)
H_CHAIN, H_LOOP, H_ARM = 0.005, 0.005, 0.002
LENGTH, SPAN = 0.5, 0.8               # the chain's and the four-bar's links, the four-bar's coupler (m)
ROBOTS = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
X = np.array([1.0, 0.0, 0.0])
METHOD = "VPRK Lobatto-2"
EPSILON = float(np.finfo(np.float64).eps)

Array = NDArray[np.float64]


def rod(mass: float, length: float, along: int) -> Body:
    """A uniform rod hanging along −z (along = 2) or lying along +y (along = 1) from its frame's origin."""
    moments = np.full(3, mass * length ** 2 / 12)
    moments[along] = 1e-3
    com = np.array([0.0, 0.0, -length / 2]) if along == 2 else np.array([0.0, length / 2, 0.0])
    return Body("rod", mass, np.diag(moments), com)


def energies(model: Model, sol: lm.Solution[Configuration]) -> Array:
    return np.array([model.system.energy(p, e) for p, e in zip(sol.points(), sol.eta)])


def residuals(problem: lm.Problem[Configuration], sol: lm.Solution[Configuration]) -> Array:
    """max |Φ| over the joints' rows at every node."""
    assert problem.holonomic is not None
    return np.array([np.max(np.abs(problem.holonomic.value(p))) for p in sol.points()])


def link_frames(model: Model, sol: lm.Solution[Configuration]) -> tuple[Array, Array]:
    """Every body frame's rotation (nodes, N + 1, 3, 3) and origin (nodes, N + 1, 3), the world first."""
    R, p = jax.vmap(model.link_poses)(sol.g)
    return np.asarray(R), np.asarray(p)


def chain() -> tuple[Model, lm.Problem[Configuration]]:
    bodies = [Body(f"rod{i}", 1.0, rod(1.0, LENGTH, 2).inertia, rod(1.0, LENGTH, 2).com) for i in range(LINKS)]
    joints = [Joint(f"hinge{i}", "revolute", "world" if i == 0 else f"rod{i - 1}", f"rod{i}",
                    origin=pose((0.0, 0.0, 0.0 if i == 0 else -LENGTH)), axis=X) for i in range(LINKS)]
    model = Model(bodies, joints)
    return model, model.problem(np.where(np.arange(LINKS) % 2 == 0, 0.3, -0.3), np.zeros(LINKS))


def four_bar() -> tuple[Model, lm.Problem[Configuration]]:
    crank, coupler = rod(1.0, LENGTH, 2), rod(2.0, SPAN, 1)
    bodies = [Body("crank", 1.0, crank.inertia, crank.com), Body("rocker", 1.0, crank.inertia, crank.com),
              Body("coupler", 2.0, coupler.inertia, coupler.com)]
    joints = [Joint("ground_crank", "revolute", "world", "crank", axis=X),
              Joint("ground_rocker", "revolute", "world", "rocker", origin=pose((0, SPAN, 0)), axis=X),
              Joint("crank_coupler", "revolute", "crank", "coupler", origin=pose((0, 0, -LENGTH)), axis=X),
              Joint("rocker_coupler", "revolute", "rocker", "coupler", origin=pose((0, 0, -LENGTH)),
                    child_origin=pose((0, SPAN, 0)), axis=X)]
    model = Model(bodies, joints)
    return model, model.problem([0.9, 0.9, -0.9, -0.9], np.zeros(4))


def arm() -> tuple[Model, lm.Problem[Configuration]]:
    model = from_urdf(ROBOTS / "panda_description/urdf/panda.urdf",
                      locked={"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02})
    return model, model.problem([0.0, 0.3, 0.0, -1.8, 0.0, 1.9, 0.8], np.zeros(7))


@dataclass
class Run:
    """What a figure shows of one mechanism's run."""

    t: Array
    q: Array                          # joint positions (nodes, nq)
    energy: Array
    residual: Array                   # max |Φ| at every node
    shapes: Array | None = None       # (nodes, points, 3): the mechanism's outline, for snapshots
    torques: dict[str, Array] | None = None
    dissipated: Array | None = None   # work done against the joints' damping since t = 0


def run_chain(method: lm.VPRK) -> Run:
    model, problem = chain()
    sol = lm.integrate(problem, method, h=H_CHAIN, t_final=T_CHAIN)
    R, p = link_frames(model, sol)
    tip = p[:, -1] + R[:, -1] @ np.array([0.0, 0.0, -LENGTH])
    out = Run(sol.t, model.joint_positions(sol), energies(model, sol), residuals(problem, sol),
              shapes=np.concatenate([p[:, 1:], tip[:, None]], axis=1))
    print(f"{LINKS}-link chain, h = {H_CHAIN}, T = {T_CHAIN}: max |E − E0| = "
          f"{np.max(np.abs(out.energy - out.energy[0])):.2e} J (E0 = {out.energy[0]:.3f} J), "
          f"max joint residual {np.max(out.residual):.1e}")
    return out


def run_four_bar(method: lm.VPRK) -> Run:
    model, problem = four_bar()
    sol = lm.integrate(problem, method, h=H_LOOP, t_final=T_LOOP)
    R, p = link_frames(model, sol)
    coupler = 1 + [body.name for body in model.bodies].index("coupler")   # frames: the world first
    far_end = p[:, coupler] + R[:, coupler] @ np.array([0.0, SPAN, 0.0])
    ground = np.zeros_like(far_end)
    pivot = np.broadcast_to(np.array([0.0, SPAN, 0.0]), far_end.shape)
    out = Run(sol.t, model.joint_positions(sol), energies(model, sol), residuals(problem, sol),
              shapes=np.stack([ground, p[:, coupler], far_end, pivot], axis=1))
    q = out.q
    print(f"four-bar, h = {H_LOOP}, T = {T_LOOP}: max loop residual {np.max(out.residual):.1e}, max |E − E0| = "
          f"{np.max(np.abs(out.energy - out.energy[0])):.2e} J (E0 = {out.energy[0]:.3f} J), crank angle "
          f"{np.min(q[:, 0]):.3f}…{np.max(q[:, 0]):.3f} rad, rocker − crank "
          f"{np.max(np.abs(q[:, 1] - q[:, 0])):.1e} rad")
    return out


def run_arm(method: lm.VPRK) -> Run:
    model, problem = arm()
    sol = lm.integrate(problem, method, h=H_ARM, t_final=T_ARM)
    wrenches = model.joint_wrenches(problem, sol)
    torques = {name: np.linalg.norm(wrenches[name][:, 3:], axis=1) for name in model.joint_names}
    damping = {j.name: j.damping for j in model.joints}
    v = model.joint_velocities(sol)
    power = v ** 2 @ np.array([damping[name] for name in model.joint_names])
    dissipated = np.concatenate([[0.0], np.cumsum((power[1:] + power[:-1]) / 2 * np.diff(sol.t))])
    out = Run(sol.t, model.joint_positions(sol), energies(model, sol), residuals(problem, sol),
              torques=torques, dissipated=dissipated)
    peak = max(torques, key=lambda name: float(np.max(torques[name][1:])))
    balance = out.energy - out.energy[0] + dissipated
    print(f"Panda arm (7 joints), h = {H_ARM}, T = {T_ARM}: E {out.energy[0]:.3f} → {out.energy[-1]:.3f} J, "
          f"joint rates up to {np.max(np.abs(v)):.0f} rad/s, "
          f"dissipated by the damping {dissipated[-1]:.2e} J, max |E − E0 + dissipated| = "
          f"{np.max(np.abs(balance)):.1e} J, max joint residual {np.max(out.residual):.1e}, largest joint torque "
          f"{np.max(torques[peak][1:]):.1f} N m ({peak})")
    return out


def panels(title: str, tall: bool) -> tuple["Figure", dict[str, "Axes"]]:
    """A figure of four panels: "left" (the mechanism or its torques), "angles", "energy" and
    "residual"; "left" is tall (beside the three others) or in a 2 × 2 grid."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if tall:
        fig, axes = plt.subplot_mosaic([["left", "angles"], ["left", "energy"], ["left", "residual"]],
                                       figsize=(9.0, 8.0), width_ratios=[0.5, 1.0], layout="constrained")
    else:
        fig, axes = plt.subplot_mosaic([["left", "angles"], ["energy", "residual"]], figsize=(10.0, 7.0),
                                       layout="constrained")
    fig.suptitle(title)
    for ax in axes.values():
        ax.grid(True, which="both", alpha=0.3)
    return fig, axes


def on_log_scale(ax: "Axes", t: Array, values: Array, title: str, ylabel: str, epsilon: bool = False) -> None:
    ax.plot(t, values, linewidth=0.8)
    if epsilon:
        ax.axhline(EPSILON, color="grey", linestyle=":", label="machine ε = 2.2e-16")
        ax.legend(fontsize=8, loc="upper right")
    ax.set_yscale("log", nonpositive="mask")      # an exact 0 leaves a gap
    ax.set(title=title, xlabel="t (s)", ylabel=ylabel)


def angles(ax: "Axes", run: Run, columns: dict[str, int], title: str) -> None:
    for label, column in columns.items():
        ax.plot(run.t, run.q[:, column], "--" if label.startswith("rocker") else "-", label=label)
    ax.set(title=title, xlabel="t (s)", ylabel="angle (rad)")
    ax.legend(fontsize=8, ncol=2 if len(columns) > 4 else 1)


def snapshots(ax: "Axes", run: Run, title: str, nodes: Sequence[int], pivots: Sequence[float] = (0.0,),
              legend: dict[str, Any] | None = None) -> None:
    """The mechanism's outline in the y–z plane at the given nodes, coloured by time; triangles mark
    the hinges to the world, at y = ``pivots`` on z = 0."""
    import matplotlib.pyplot as plt

    assert run.shapes is not None
    colours = plt.get_cmap("viridis")(np.linspace(0.0, 0.9, len(nodes)))
    for colour, k in zip(colours, nodes):
        ax.plot(run.shapes[k, :, 1], run.shapes[k, :, 2], "o-", color=colour, markersize=2.5, linewidth=1.2,
                label=f"t = {run.t[k]:.2f} s")
    ax.plot(pivots, np.zeros(len(pivots)), "k^", markersize=8)
    ax.set(title=title, xlabel="y (m)", ylabel="z (m)", aspect="equal")
    ax.legend(fontsize=8, **(legend or {}))


def evenly(run: Run, count: int, until: float) -> list[int]:
    """``count`` nodes evenly spaced in time from t = 0 to t = ``until``."""
    return sorted({int(np.argmin(np.abs(run.t - t))) for t in np.linspace(0.0, until, count)})


def errors(axes: dict[str, "Axes"], run: Run, energy0: str, residual_title: str) -> None:
    """The energy error and the constraint residual of a conservative run, on log scales."""
    on_log_scale(axes["energy"], run.t, np.abs(run.energy - run.energy[0]), f"energy error (E0 = {energy0} J)",
                 "|E − E0| (J)")
    on_log_scale(axes["residual"], run.t, run.residual, residual_title, "max |Φ| (m, rad)", epsilon=True)


def save(fig: "Figure", name: str) -> Path:
    import matplotlib.pyplot as plt

    FIGURES.mkdir(exist_ok=True)
    path = FIGURES / f"{name}.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def draw_chain(run: Run) -> Path:
    fig, axes = panels(f"{LINKS}-link pendulum chain, {METHOD}, h = {H_CHAIN} s", tall=True)
    snapshots(axes["left"], run, "the chain in its plane", evenly(run, 5, run.t[-1]),
              legend={"loc": "upper right"})
    axes["left"].set_ylim(top=0.22 * LINKS * LENGTH)       # room for the legend above the hinge
    angles(axes["angles"], run, {"hinge 1 (top)": 0, f"hinge {LINKS // 2 + 1}": LINKS // 2,
                                 f"hinge {LINKS} (bottom)": LINKS - 1}, "joint angles (relative to the parent)")
    errors(axes, run, f"{run.energy[0]:.1f}", "joint residual (5 rows per hinge)")
    return save(fig, "multibody_chain")


def draw_four_bar(run: Run) -> Path:
    fig, axes = panels(f"closed four-bar linkage (parallelogram), {METHOD}, h = {H_LOOP} s", tall=False)
    turns = np.flatnonzero(np.diff(run.q[:, 0]) > 0)      # the crank's first swing ends where it turns back
    swing = run.t[turns[0]] if turns.size else run.t[-1]
    snapshots(axes["left"], run, "crank (left), coupler and rocker over the first swing", evenly(run, 5, swing),
              pivots=(0.0, SPAN), legend={"loc": "lower center", "ncol": 3})
    axes["left"].set_ylim(-0.95, 0.1)
    angles(axes["angles"], run, {"crank": 0, "rocker": 1}, "crank and rocker angles (equal in a parallelogram)")
    errors(axes, run, f"{run.energy[0]:.2f}", "residual of the joints and the loop")
    return save(fig, "multibody_four_bar")


def draw_arm(run: Run) -> Path:
    assert run.torques is not None and run.dissipated is not None
    fig, axes = panels(f"Panda arm (URDF, 7 joints) swinging under gravity, {METHOD}, h = {H_ARM} s", tall=False)
    for joint, torque in run.torques.items():
        axes["left"].plot(run.t[1:], torque[1:], label=joint.removeprefix("panda_"))
    axes["left"].set(title="constraint torque carried by each joint", xlabel="t (s)", ylabel="|torque| (N m)")
    axes["left"].legend(fontsize=8)
    angles(axes["angles"], run, {name.removeprefix("panda_"): k for k, name in enumerate(run.torques)},
           "joint angles (unwrapped; limits not enforced)")
    axes["energy"].plot(run.t, run.energy - run.energy[0], label="E − E0")
    axes["energy"].plot(run.t, -run.dissipated, "--", label="− work dissipated by the joints' damping")
    axes["energy"].plot(run.t, run.energy - run.energy[0] + run.dissipated, color="grey", linewidth=0.8,
                        label="balance: E − E0 + dissipated work")
    axes["energy"].set(title=f"energy (E0 = {run.energy[0]:.2f} J)", xlabel="t (s)", ylabel="J")
    axes["energy"].legend(fontsize=8)
    on_log_scale(axes["residual"], run.t, run.residual, "joint residual", "max |Φ| (m, rad)", epsilon=True)
    return save(fig, "multibody_panda")


def main() -> None:
    method = lm.VPRK(lm.lobatto(2))
    runs = (run_chain(method), run_four_bar(method), run_arm(method))
    if importlib.util.find_spec("matplotlib") is None:
        return
    for draw, run in zip((draw_chain, draw_four_bar, draw_arm), runs):
        print(f"figure: {draw(run)}")


if __name__ == "__main__":
    main()
