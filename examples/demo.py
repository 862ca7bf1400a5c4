"""Flagship demo: the conformance of every configuration space and retraction, as a table.

Run with ``make demo``. Each row is a group × retraction; the columns are the largest defects
measured by liemech.testing.check_retraction over ‖ξ‖ from 1e-8 to 2.
"""

import numpy as np

import liemech as lm
from liemech.testing import check_retraction

GROUPS: list[lm.LieGroup[lm.Matrix] | lm.LieGroup[lm.ProductPoint]] = [
    lm.Rn(3),
    lm.SO2(),
    lm.SO3(),
    lm.SE2(),
    lm.SE3(),
    lm.ProductGroup(lm.SO3(), lm.Rn(2)),
    lm.ProductGroup(lm.SE2(), lm.Rn(1)),
]

COLUMNS = {
    "dτ vs FD": "dτ: finite differences",
    "ddτ vs FD": "ddτ: finite differences",
    "τ⁻¹∘τ": "τ⁻¹(τ(ξ)) = ξ",
    "dτ(−ξ)=Ad dτ(ξ)": "dτ(−ξ) = Ad(τ(ξ)) dτ(ξ)",
    "ddτ(0)=½ad": "ddτ(0, η)δ = ½[η, δ]",
}


def main() -> None:
    header = f"{'group':<28}{'τ':<5}" + "".join(f"{c:>17}" for c in COLUMNS) + f"{'checks':>9}"
    print(header)
    print("-" * len(header))
    for group in GROUPS:
        for kind in lm.RETRACTION_KINDS:
            report = check_retraction(group.retraction(kind), np.random.default_rng(0), raise_on_failure=False)
            cells = "".join(f"{report.worst(name):>17.1e}" for name in COLUMNS.values())
            status = f"{len(report.checks) - len(report.failures)}/{len(report.checks)}"
            print(f"{group!r:<28}{kind:<5}{cells}{status:>9}")


if __name__ == "__main__":
    main()
