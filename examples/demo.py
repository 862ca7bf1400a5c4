"""Flagship demo (``make demo``): the heavy top on SO(3) integrated with VPRK, then the
conformance of every configuration space and retraction.

The first table shows fitted convergence orders 2s − 2 for Lobatto-s with the Cayley map and the
exponential, the energy error and the Noether momentum drift; the second the largest defects the
conformance suite measures for each group × retraction over ‖ξ‖ from 1e-8 to 2.
"""

import os

import numpy as np
from heavy_top_so3 import main as heavy_top_table

import liemech as lm
from liemech.testing import check_retraction

# LIEMECH_EXAMPLES_FAST=1, the test suite's quick run: the heavy-top table's fast mode and the conformance of SO(3) only
FAST = os.environ.get("LIEMECH_EXAMPLES_FAST") == "1"

COLUMNS = {
    "dτ vs FD": "dτ: finite differences",
    "ddτ vs FD": "ddτ: finite differences",
    "τ⁻¹∘τ": "τ⁻¹(τ(ξ)) = ξ",
    "dτ(−ξ)=Ad dτ(ξ)": "dτ(−ξ) = Ad(τ(ξ)) dτ(ξ)",
}


def retraction_row(name: str, tau: lm.Retraction[lm.Matrix] | lm.Retraction[tuple[lm.Matrix, lm.Vector]]) -> str:
    report = check_retraction(tau, np.random.default_rng(0), raise_on_failure=False)  # type: ignore[misc]
    cells = "".join(f"{report.worst(column):>17.1e}" for column in COLUMNS.values())
    return f"{name:<28}{tau.kind:<5}{cells}{len(report.checks) - len(report.failures):>6}/{len(report.checks)}"


def main() -> None:
    heavy_top_table()
    print()
    groups: list[lm.LieGroup[lm.Matrix] | lm.LieGroup[tuple[lm.Matrix, lm.Vector]]] = [
        lm.Rn(3), lm.SO2(), lm.SO3(), lm.SE2(), lm.SE3(),
        lm.ProductGroup(lm.SO3(), lm.Rn(2)), lm.ProductGroup(lm.SE2(), lm.Rn(1)),
    ]
    if FAST:
        groups = groups[2:3]  # SO(3)
    header = f"{'group':<28}{'τ':<5}" + "".join(f"{c:>17}" for c in COLUMNS) + f"{'checks passed':>14}"
    print("Conformance of the retractions (largest defects over ‖ξ‖ = 1e-8 … 2)")
    print(header)
    print("-" * len(header))
    for group in groups:
        for kind in lm.RETRACTION_KINDS:
            print(retraction_row(repr(group), group.retraction(kind)))


if __name__ == "__main__":
    main()
