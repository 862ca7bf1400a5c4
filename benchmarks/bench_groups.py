"""Per-call cost of the group operations that sit on integrators' hot paths.

Run: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_groups.py
"""

import os
import timeit

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import liemech as lm  # noqa: E402


def per_call_us(stmt: str, env: dict[str, object], number: int = 20000) -> float:
    best = min(timeit.repeat(stmt, globals=env, number=number, repeat=5))
    return 1e6 * best / number


def main() -> None:
    rng = np.random.default_rng(0)
    rows: list[tuple[str, str, float]] = []
    for group in (lm.SO3(), lm.SE2(), lm.SE3(), lm.ProductGroup(lm.SO3(), lm.Rn(3))):
        g, h = group.random_point(rng), group.random_point(rng)
        xi, eta = 0.1 * rng.normal(size=group.dim), rng.normal(size=group.dim)
        env: dict[str, object] = {"G": group, "g": g, "h": h, "xi": xi, "eta": eta}
        rows.append((repr(group), "compose", per_call_us("G.compose(g, h)", env)))
        for kind in lm.RETRACTION_KINDS:
            env["T"] = group.retraction(kind)
            for op in ("tau(xi)", "dtau(xi)", "dtau_inv(xi)", "ddtau(xi, eta)"):
                rows.append((repr(group), f"{kind}.{op}", per_call_us(f"T.{op}", env)))
    env = {"a": rng.normal(size=3), "b": rng.normal(size=3), "np": np}
    rows.append(("reference", "np.cross(a, b)", per_call_us("np.cross(a, b)", env)))
    rows.append(("reference", "a @ b", per_call_us("a @ b", env)))
    for group_name, op, us in rows:
        print(f"{group_name:<28}{op:<22}{us:8.2f} µs")


if __name__ == "__main__":
    main()
