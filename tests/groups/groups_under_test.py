"""The configuration spaces every group test runs on."""

import liemech as lm

GROUPS: list[lm.LieGroup[lm.Vector] | lm.LieGroup[tuple[lm.Matrix, lm.Vector]]] = [
    lm.Rn(3),
    lm.SO2(),
    lm.SO3(),
    lm.SE2(),
    lm.SE3(),
    lm.ProductGroup(lm.SO3(), lm.Rn(2)),
    lm.ProductGroup(lm.SE2(), lm.Rn(1)),
]
