"""Solution.save / Solution.load: one .npz file, bitwise round trips (products, multipliers,
extras), readable by numpy without pickle, refusals naming the path; to_dataframe's columns."""

import importlib.metadata
import json
import sys
from pathlib import Path
from typing import TypeVar

import jax.numpy as jnp
import numpy as np
import pytest

import liemech as lm
from liemech.systems import HeavyTop

P = TypeVar("P")
Pair = tuple[lm.Matrix, lm.Vector]

TOP = HeavyTop()


@pytest.fixture(scope="module")
def top_run() -> lm.Solution[lm.Matrix]:
    return lm.integrate(TOP.problem(), lm.VPRK(lm.lobatto(3)), h=0.1, n_steps=12, store_every=5)


@pytest.fixture(scope="module")
def product_run() -> lm.Solution[Pair]:
    """A hand-built solution on SO(3) × R² with multipliers and extras, every feature the format has."""
    rng = np.random.default_rng(11)
    K = 4
    Rs = np.stack([lm.SO3().random_point(rng) for _ in range(K)])
    group = lm.ProductGroup(lm.SO3(), lm.Rn(2))
    return lm.Solution(np.linspace(0.0, 0.3, K), (Rs, rng.standard_normal((K, 2))), rng.standard_normal((K, 5)),
                       rng.standard_normal((K, 5)), rng.standard_normal((K, 2)),
                       lm.SolverStats(rng.integers(0, 5, K).astype(np.float64), rng.random(K), 0.123456789),
                       {"Lambda": rng.standard_normal((K - 1, 2, 3)), "stage energy": rng.random(K - 1)},
                       {"method": "hand", "group": repr(group), "h": 0.1, "retraction": "exp"}, group)


def assert_bitwise(a: lm.Vector, b: lm.Vector) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def assert_same(loaded: lm.Solution[P], saved: lm.Solution[P]) -> None:
    for x, y in [(loaded.t, saved.t), (loaded.eta, saved.eta), (loaded.mu, saved.mu),
                 (loaded.stats.iterations, saved.stats.iterations), (loaded.stats.residuals, saved.stats.residuals)]:
        assert_bitwise(x, y)
    g_loaded, g_saved = loaded.g, saved.g
    if isinstance(g_saved, tuple):
        assert isinstance(g_loaded, tuple) and len(g_loaded) == len(g_saved)
        for x, y in zip(g_loaded, g_saved):
            assert_bitwise(x, y)
    else:
        assert isinstance(g_loaded, np.ndarray) and isinstance(g_saved, np.ndarray)
        assert_bitwise(g_loaded, g_saved)
    assert (loaded.lam is None) == (saved.lam is None)
    if loaded.lam is not None and saved.lam is not None:
        assert_bitwise(loaded.lam, saved.lam)
    assert list(loaded.extras) == list(saved.extras)
    for name, value in saved.extras.items():
        assert_bitwise(loaded.extras[name], value)
    assert loaded.stats.wall_time == saved.stats.wall_time
    assert loaded.metadata == saved.metadata
    assert loaded.group == saved.group


def test_an_integrated_solution_round_trips_bitwise(top_run: lm.Solution[lm.Matrix], tmp_path: Path) -> None:
    path = tmp_path / "top.npz"
    top_run.save(path)
    loaded: lm.Solution[lm.Matrix] = lm.Solution.load(path)
    assert_same(loaded, top_run)
    assert loaded.group == lm.SO3() and loaded.metadata["h"] == 0.1 and loaded.metadata["store_every"] == 5
    assert np.max(np.abs(loaded.at(0.75).g - top_run.at(0.75).g)) == 0.0


def test_a_product_with_multipliers_and_extras_round_trips_bitwise(
        product_run: lm.Solution[Pair], tmp_path: Path) -> None:
    path = tmp_path / "no suffix"  # written at exactly this path
    product_run.save(str(path))
    assert path.exists() and not Path(f"{path}.npz").exists()
    assert_same(lm.Solution.load(path), product_run)


def test_a_power_group_run_round_trips_with_its_group(tmp_path: Path) -> None:
    """Two free rigid bodies on PowerGroup(SO3(), 2): the loaded solution is bitwise the saved one,
    its group is rebuilt from "PowerGroup(SO3(), 2)", and it interpolates as the saved one does."""
    group = lm.PowerGroup(lm.SO3(), 2)
    bodies = lm.MechanicalSystem(group, np.diag([1.0, 2.0, 3.5, 1.5, 1.0, 2.5]), lambda R: jnp.zeros(()))
    run = lm.integrate(lm.Problem(bodies, group.identity(), np.array([0.8, -0.4, 1.1, 0.2, 0.5, -0.3])),
                       lm.VPRK(lm.lobatto(2)), h=0.1, n_steps=5)
    path = tmp_path / "bodies.npz"
    run.save(path)
    loaded: lm.Solution[lm.Matrix] = lm.Solution.load(path)
    assert_same(loaded, run)
    assert loaded.group == group
    assert np.max(np.abs(loaded.at(0.25).g - run.at(0.25).g)) == 0.0


def test_the_file_is_plain_numpy_with_a_header(top_run: lm.Solution[lm.Matrix], tmp_path: Path) -> None:
    path = tmp_path / "top.npz"
    top_run.save(path)
    with np.load(path, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    assert all(a.dtype != object for a in arrays.values())
    assert_bitwise(arrays["g_0"], top_run.g)
    header = json.loads(str(arrays["header"]))
    assert header["format"] == "liemech.Solution" and header["format_version"] == 1
    assert header["liemech_version"] == importlib.metadata.version("liemech")
    assert header["metadata"] == {"method": "VPRK(lobatto(3), retraction='cay')", "group": "SO3()", "h": 0.1,
                                  "retraction": "cay", "store_every": 5}


def test_groups_of_your_own_are_given_at_load(product_run: lm.Solution[Pair], tmp_path: Path) -> None:
    path = tmp_path / "own.npz"
    mystery = lm.Solution(product_run.t, product_run.g, product_run.eta, product_run.mu, None, product_run.stats,
                          metadata={"group": "MyGroup(3)"})
    mystery.save(path)
    assert lm.Solution.load(path).group is None
    group = lm.ProductGroup(lm.SO3(), lm.Rn(2))
    with_group = lm.Solution.load(path, group=group)
    assert with_group.group == group
    R, x = with_group.at(0.05).g
    assert R.shape == (3, 3) and x.shape == (2,)


def test_files_that_are_not_solutions_are_refused_by_path(top_run: lm.Solution[lm.Matrix], tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not an archive")
    other = tmp_path / "other.npz"
    np.savez(other, t=np.zeros(3))
    single = tmp_path / "single.npy"
    np.save(single, np.zeros(3))
    for path in (text, other, single, tmp_path / "missing.npz"):
        with pytest.raises(ValueError, match=f"'{path}' is not a liemech solution file"):
            lm.Solution.load(path)
    saved = tmp_path / "top.npz"
    top_run.save(saved)
    with np.load(saved, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    header = json.loads(str(arrays["header"]))
    future = tmp_path / "future.npz"
    np.savez(future, **{**arrays, "header": np.array(json.dumps({**header, "format_version": 99}))})
    with pytest.raises(ValueError, match=f"'{future}' has solution format version 99, this liemech reads version 1"):
        lm.Solution.load(future)
    damaged = tmp_path / "damaged.npz"
    np.savez(damaged, **{name: value for name, value in arrays.items() if name != "mu"})
    with pytest.raises(ValueError, match=f"'{damaged}' is a damaged liemech solution file: KeyError"):
        lm.Solution.load(damaged)
    with pytest.raises(TypeError, match="path must be a str or os.PathLike, got int"):
        top_run.save(3)  # type: ignore[arg-type]


def test_dataframe_columns_are_the_flattened_nodes(top_run: lm.Solution[lm.Matrix],
                                                   product_run: lm.Solution[Pair]) -> None:
    frame = top_run.to_dataframe()
    assert list(frame.columns) == (["t"] + [f"g_{i}_{j}" for i in range(3) for j in range(3)]
                                   + [f"eta_{i}" for i in range(3)] + [f"mu_{i}" for i in range(3)])
    assert len(frame) == len(top_run.t) == 4
    assert np.array_equal(frame["g_1_2"].to_numpy(), top_run.g[:, 1, 2])
    assert np.array_equal(frame["mu_2"].to_numpy(), top_run.mu[:, 2])
    product = product_run.to_dataframe()
    R, x = product_run.g
    assert np.array_equal(product["g0_2_1"].to_numpy(), R[:, 2, 1])
    assert np.array_equal(product["g1_1"].to_numpy(), x[:, 1])
    assert product_run.lam is not None and np.array_equal(product["lam_1"].to_numpy(), product_run.lam[:, 1])
    assert product.shape == (4, 1 + 9 + 2 + 5 + 5 + 2)


def test_dataframe_without_pandas_says_how_to_install_it(top_run: lm.Solution[lm.Matrix],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(ImportError, match="pip install pandas"):
        top_run.to_dataframe()
