"""liemech.plot on hand-made solutions with closed-form data: the lines of each figure hold exactly
the data computed here independently, and every figure saves to a PNG (Agg, headless)."""

import subprocess
import sys
from pathlib import Path
from typing import Protocol, TypeVar, cast

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.quiver import Quiver
import pytest
from scipy.spatial.transform import Rotation

import liemech as lm
from liemech import plot
from liemech.systems import CartesianPendulum, RollingDisc, VerticalDisc

matplotlib.use("Agg")

P = TypeVar("P")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
T = np.linspace(0.0, 2.0, 41)


class Line3D(Protocol):
    def get_data_3d(self) -> tuple[lm.Vector, lm.Vector, lm.Vector]: ...


def solution(g: P, eta: lm.Matrix, mu: lm.Matrix, method: str = "", t: lm.Vector = T) -> lm.Solution[P]:
    stats = lm.SolverStats(np.zeros(len(t)), np.zeros(len(t)), 0.0)
    return lm.Solution(t, g, eta, mu, None, stats, metadata={"method": method} if method else {})


def saves_png(fig: Figure, path: Path) -> bool:
    fig.savefig(path)
    return path.read_bytes()[:8] == PNG_SIGNATURE


def rotations(t: lm.Vector = T) -> lm.Matrix:
    """R(t) = exp(t ω̂), a uniform rotation about a tilted axis (scipy's rotation vectors)."""
    return Rotation.from_rotvec(np.outer(t, [0.3, -0.8, 1.1])).as_matrix()


def planar_poses(t: lm.Vector = T) -> lm.Matrix:
    """Points of SE(2) along a spiral with heading θ = 1.5 t."""
    theta = 1.5 * t
    g = np.zeros((len(t), 3, 3))
    g[:, 0, 0], g[:, 0, 1], g[:, 1, 0], g[:, 1, 1] = np.cos(theta), -np.sin(theta), np.sin(theta), np.cos(theta)
    g[:, 0, 2], g[:, 1, 2], g[:, 2, 2] = (1 + t) * np.cos(t), (1 + t) * np.sin(t), 1.0
    return g


def test_energy_plots_the_energy_error_and_each_first_integral(tmp_path: Path) -> None:
    """q = cos t, p = −1.1 sin t: H = ½(p² + q²) gives H − H₀ = 0.105 sin²t; I = p + q gives
    I − I₀ = cos t − 1.1 sin t − 1 and I = q² gives cos²t − 1."""
    q, p = np.cos(T)[:, None], -1.1 * np.sin(T)[:, None]
    sol = solution(q, p, p)
    fig = plot.energy(sol, lambda q, p: 0.5 * float(p[0] ** 2 + q[0] ** 2),
                      {"p + q": lambda q, p: float(p[0] + q[0]), "q²": lambda q, p: float(q[0] ** 2)})
    energy_axes, invariant_axes = fig.axes
    assert np.array_equal(energy_axes.lines[0].get_xdata(), T)
    assert np.allclose(energy_axes.lines[0].get_ydata(), 0.105 * np.sin(T) ** 2, rtol=0.0, atol=1e-15)
    first, second = invariant_axes.lines
    assert first.get_label() == "p + q" and second.get_label() == "q²"
    assert np.allclose(first.get_ydata(), np.cos(T) - 1.1 * np.sin(T) - 1.0, rtol=0.0, atol=1e-15)
    assert np.allclose(second.get_ydata(), np.cos(T) ** 2 - 1.0, rtol=0.0, atol=1e-15)
    assert saves_png(fig, tmp_path / "energy.png")
    assert len(plot.energy(sol, lambda q, p: float(q[0])).axes) == 1


def test_constraint_residuals_of_a_holonomic_problem(tmp_path: Path) -> None:
    """Cartesian pendulum, Φ = ½(|q|² − 1), B = qᵀ: for q_k = (1 + ε_k)(sin t, −cos t) and
    v_k = (cos t, sin t) + δ_k q̂, |Φ| = |ε + ε²/2| and |Bv| = |(1 + ε) δ| (to round-off)."""
    problem = CartesianPendulum().problem()
    eps, delta = 1e-4 * np.sin(3 * T), 1e-6 * np.cos(T)
    direction = np.column_stack([np.sin(T), -np.cos(T)])
    q = (1 + eps)[:, None] * direction
    v = np.column_stack([np.cos(T), np.sin(T)]) + delta[:, None] * direction
    fig = plot.constraint_residuals(solution(q, v, v), problem)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    position, velocity = ax.lines
    assert np.allclose(position.get_ydata(), np.abs(eps + 0.5 * eps**2), rtol=0.0, atol=1e-15)
    assert np.allclose(velocity.get_ydata(), np.abs((1 + eps) * delta), rtol=0.0, atol=1e-15)
    assert saves_png(fig, tmp_path / "holonomic.png")


def test_constraint_residuals_of_a_nonholonomic_problem_and_refusal() -> None:
    """Vertical disc, φ(g, ξ) = ξ₂: the residual is |ξ₂| at every node."""
    disc = VerticalDisc()
    problem = disc.problem()
    xi = np.column_stack([np.ones_like(T), 1e-9 * T**2, np.cos(T)])
    ax = plot.constraint_residuals(solution(planar_poses(), xi, xi), problem).axes[0]
    assert len(ax.lines) == 1 and np.array_equal(ax.lines[0].get_ydata(), 1e-9 * T**2)
    free = lm.Problem(disc.system(), problem.g0, problem.eta0)
    with pytest.raises(ValueError, match="problem: constraint residuals need"):
        plot.constraint_residuals(solution(planar_poses(), xi, xi), free)


def test_constraint_residuals_of_a_rolling_disc_include_the_no_slip_residual(tmp_path: Path) -> None:
    """Rolling disc (holonomic contact and nonholonomic rolling) on its exact steady motion with the
    centre's velocity pushed by δ(t) = (10⁻³ sin t, −2·10⁻³ cos t, 0): |Φ| and |Bη| stay at
    round-off, and the no-slip residual is the max norm of φ = [v + (RΩ) × r u]_{x, y} evaluated
    here with numpy at each node, which is |δ| (the steady velocity does not slip)."""
    disc = RollingDisc()
    steady = disc.steady(lean=0.25, precession=1.5)
    poses = [steady.pose(float(t)) for t in T]
    delta = np.column_stack([1e-3 * np.sin(T), -2e-3 * np.cos(T), np.zeros_like(T)])
    eta = np.array([steady.velocity(float(t)) for t in T])
    eta[:, 3:] += delta
    g = (np.array([R for R, _ in poses]), np.array([x for _, x in poses]))
    slips = []
    for (R, _), velocity in zip(poses, eta):
        n = R[:, 2]
        down = np.array([0.0, 0.0, 1.0]) - n[2] * n
        contact = -disc.radius * down / np.linalg.norm(down)
        slips.append(np.max(np.abs((velocity[3:] + np.cross(R @ velocity[:3], contact))[:2])))
    norms = plot.residual_norms(solution(g, eta, eta), steady.problem())
    assert list(norms) == ["|Φ(g)|", "|B(g)η|", "|φ(g, η)|"]
    assert np.max(norms["|Φ(g)|"]) <= 1e-15 and np.max(norms["|B(g)η|"]) <= 1e-14
    assert np.allclose(norms["|φ(g, η)|"], slips, rtol=0.0, atol=1e-15)
    assert np.allclose(norms["|φ(g, η)|"], np.max(np.abs(delta[:, :2]), axis=1), rtol=0.0, atol=1e-14)
    fig = plot.constraint_residuals(solution(g, eta, eta, "VPRK(lobatto(3))"), steady.problem())
    assert [line.get_label() for line in fig.axes[0].lines] == ["|Φ(g)|", "|B(g)η|", "|φ(g, η)|"]
    assert fig.get_suptitle() == "VPRK(lobatto(3))"
    assert saves_png(fig, tmp_path / "rolling.png")


def test_convergence_fits_the_slope_rings_the_plateau_and_draws_reference_lines(tmp_path: Path) -> None:
    """e = 3h⁴ has slope 4 (legend); e = max(2h², 1e-14) has slope 2 over the points above the
    plateau 1e-13, and the one at 1e-14 is ringed; the reference line ∝ h³ has log–log slope 3
    through the largest-h point of the first series."""
    h = np.array([0.1, 0.05, 0.025, 0.0125, 1e-8])
    quartic, quadratic = 3 * h**4, np.maximum(2 * h**2, 1e-14)
    quartic[-1] = 1e-20
    fig = plot.convergence(h, {"g": quartic, "μ": quadratic}, slopes=[3])
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    g_line, mu_line, *rings, reference = ax.lines
    assert np.array_equal(g_line.get_ydata(), quartic) and np.array_equal(mu_line.get_ydata(), quadratic)
    assert g_line.get_label() == "g: fitted slope 4.00" and mu_line.get_label() == "μ: fitted slope 2.00"
    ringed = {float(x) for ring in rings for x in np.asarray(ring.get_xdata())}
    assert ringed == {1e-8}
    x, y = np.asarray(reference.get_xdata()), np.asarray(reference.get_ydata())
    assert np.polyfit(np.log(x), np.log(y), 1)[0] == pytest.approx(3.0, abs=1e-12)
    assert y[0] == pytest.approx(quartic[0], rel=1e-14)
    assert saves_png(fig, tmp_path / "order.png")
    single = plot.convergence(h[:4], 5 * h[:4] ** 2).axes[0].lines[0]
    assert single.get_label() == "error: fitted slope 2.00"


def test_trajectory_on_so3_traces_the_body_axes(tmp_path: Path) -> None:
    R = rotations()
    fig = plot.trajectory(solution(R, np.zeros((len(T), 3)), np.zeros((len(T), 3))), lm.SO3())
    ax = fig.axes[0]
    for j in range(3):
        xs, ys, zs = cast(Line3D, ax.lines[j]).get_data_3d()
        assert np.array_equal(np.column_stack([xs, ys, zs]), R[:, :, j])
        assert np.allclose(xs**2 + ys**2 + zs**2, 1.0, rtol=0.0, atol=1e-14)  # on the unit sphere
    assert saves_png(fig, tmp_path / "so3.png")


def test_trajectory_on_se2_draws_the_path_and_headings(tmp_path: Path) -> None:
    g = planar_poses()
    fig = plot.trajectory(solution(g, np.zeros((len(T), 3)), np.zeros((len(T), 3))), lm.SE2())
    ax = fig.axes[0]
    assert np.array_equal(ax.lines[0].get_xdata(), (1 + T) * np.cos(T))
    assert np.array_equal(ax.lines[0].get_ydata(), (1 + T) * np.sin(T))
    arrows = cast(Quiver, ax.collections[0])
    every = len(T) // 20
    assert np.allclose(arrows.U, np.cos(1.5 * T[::every]), rtol=0.0, atol=1e-15)
    assert np.allclose(arrows.V, np.sin(1.5 * T[::every]), rtol=0.0, atol=1e-15)
    # a unit heading is drawn 1/scale long in data units: at least a tenth of the spiral's extent
    extent = max(np.ptp((1 + T) * np.cos(T)), np.ptp((1 + T) * np.sin(T)))
    assert arrows.scale_units == "xy" and arrows.scale is not None and 1.0 / arrows.scale >= 0.1 * extent
    assert saves_png(fig, tmp_path / "se2.png")


def test_trajectory_on_a_product_draws_each_factor_side_by_side(tmp_path: Path) -> None:
    """SO(3) × R²: body axes on the left, the centre's coordinates x = cos t and y = t² against t
    on the right (named x and y, not q0 and q1); the title is the given one, else the method's
    name."""
    q = np.column_stack([np.cos(T), T**2])
    group = lm.ProductGroup(lm.SO3(), lm.Rn(2))
    sol = solution((rotations(), q), np.zeros((len(T), 5)), np.zeros((len(T), 5)), "VPRK(lobatto(3))")
    fig = plot.trajectory(sol, group)
    rotation_axes, euclidean_axes = fig.axes
    xs, ys, zs = cast(Line3D, rotation_axes.lines[2]).get_data_3d()
    assert np.array_equal(np.column_stack([xs, ys, zs]), rotations()[:, :, 2])
    for i, expected in enumerate((np.cos(T), T**2)):
        assert np.array_equal(euclidean_axes.lines[i].get_xdata(), T)
        assert np.array_equal(euclidean_axes.lines[i].get_ydata(), expected)
    assert [line.get_label() for line in euclidean_axes.lines] == ["x", "y"]
    assert euclidean_axes.get_xlabel() == "time t" and euclidean_axes.get_ylabel() == "centre x, y"
    assert fig.get_suptitle() == "VPRK(lobatto(3))"
    assert plot.trajectory(sol, group, title="rolling ball").get_suptitle() == "rolling ball"
    assert saves_png(fig, tmp_path / "product.png")
    alone = plot.trajectory(solution(q, np.zeros((len(T), 2)), np.zeros((len(T), 2))), lm.Rn(2))
    assert [line.get_label() for line in alone.axes[0].lines] == ["q0", "q1"] and alone.get_suptitle() == ""


def test_trajectory_refuses_other_groups() -> None:
    sol = solution(np.tile(np.eye(4), (len(T), 1, 1)), np.zeros((len(T), 6)), np.zeros((len(T), 6)))
    with pytest.raises(TypeError, match=r"group: trajectory draws SO3\(\), SE2\(\), Rn\(n\) .* got SE3\(\)"):
        plot.trajectory(sol, lm.SE3())


def gif_frames(path: Path) -> int:
    """The number of frames of the GIF at ``path``, read back with Pillow."""
    from PIL import Image

    assert path.read_bytes()[:6] == b"GIF89a"
    with Image.open(path) as image:
        assert image.format == "GIF"
        return int(getattr(image, "n_frames"))


SHORT = T[::5]
"""9 nodes: an animation draws a frame per node, each ≈ 0.2 s."""


@pytest.mark.parametrize(("group", "g", "dim"), [
    (lm.SO3(), rotations(SHORT), 3),
    (lm.ProductGroup(lm.SO3(), lm.Rn(3)),
     (rotations(SHORT), np.column_stack([np.cos(SHORT), np.sin(SHORT), 0.1 * SHORT])), 6),
    (lm.SE2(), planar_poses(SHORT), 3),
])
def test_animate_writes_a_gif_of_the_subsampled_nodes(group: lm.LieGroup[P], g: P, dim: int, tmp_path: Path) -> None:
    """9 nodes: frames=4 gives 4 frames, the default (at most 100) one frame per node."""
    sol = solution(g, np.zeros((len(SHORT), dim)), np.zeros((len(SHORT), dim)), "VPRK(lobatto(3))", SHORT)
    plot.animate(sol, tmp_path / "four.gif", group, frames=4)
    assert gif_frames(tmp_path / "four.gif") == 4
    plot.animate(sol, tmp_path / "all.gif", group)
    assert gif_frames(tmp_path / "all.gif") == len(SHORT)


def test_animate_refuses_a_path_or_group_before_drawing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unknown suffix, a missing folder, .mp4 without ffmpeg and SE(3) are refused before a
    figure is made, and nothing is written."""
    def no_figure(width: float, height: float) -> Figure:
        raise AssertionError("drew before checking")

    monkeypatch.setattr(plot, "_figure", no_figure)
    sol = solution(rotations(), np.zeros((len(T), 3)), np.zeros((len(T), 3)))
    with pytest.raises(ValueError, match=r"path: unknown animation format '\.avi' .*expected a path ending in \.gif"):
        plot.animate(sol, tmp_path / "top.avi", lm.SO3())
    with pytest.raises(ValueError, match="path: the folder .* does not exist"):
        plot.animate(sol, tmp_path / "missing" / "top.gif", lm.SO3())
    with pytest.raises(TypeError, match=r"group: animate draws SO3\(\), ProductGroup\(SO3\(\), Rn\(3\)\) or SE2\(\)"):
        plot.animate(solution(np.tile(np.eye(4), (len(T), 1, 1)), sol.eta, sol.mu), tmp_path / "x.gif", lm.SE3())
    from matplotlib import animation

    if not animation.writers.is_available("ffmpeg"):
        with pytest.raises(ValueError, match=r"path: writing '\.mp4' needs ffmpeg"):
            plot.animate(sol, tmp_path / "top.mp4", lm.SO3())
    assert list(tmp_path.iterdir()) == []


def test_check_figure_path_names_the_argument_and_the_formats(tmp_path: Path) -> None:
    plot.check_figure_path(tmp_path / "fine.svg")
    with pytest.raises(ValueError, match=r"figure: unknown figure format '\.xyz' .* \.pdf, .* \.png, "):
        plot.check_figure_path(tmp_path / "x.xyz", "figure")
    with pytest.raises(ValueError, match=r"path: the folder .* does not exist"):
        plot.check_figure_path(tmp_path / "missing" / "x.png")


def test_matplotlib_is_optional(monkeypatch: pytest.MonkeyPatch) -> None:
    """Importing liemech (and its command line) does not import matplotlib; without it a figure
    asks for the plot extra."""
    code = "import sys, liemech, liemech.cli, liemech.plot; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "False"
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"pip install 'liemech\[plot\]'"):
        plot.convergence([0.1, 0.05], [1e-2, 2.5e-3])
