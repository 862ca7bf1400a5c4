"""Mechanisms built by hand, shared by tests/multibody/test_robots_linkages_and_tree_step.py and
tests/multibody/test_long_runs_ensembles_and_flows.py: a parallelogram four-bar linkage and a chain
of rods on hinges."""

import numpy as np
from numpy.typing import NDArray

from liemech.multibody import Body, Joint, Model, pose

X = np.array([1.0, 0.0, 0.0])


def parallelogram(crank_mass: float = 1.0, coupler_mass: float = 2.0, length: float = 0.5,
                  span: float = 0.8) -> Model:
    """A four-bar linkage in the y–z plane, hinges along x: two equal cranks hang from the world at
    y = 0 and y = span, a coupler joins their tips; the last joint closes the loop."""
    def rod(mass: float, along: int, size: float) -> NDArray[np.float64]:
        moments = np.full(3, mass * size ** 2 / 12)
        moments[along] = 1e-3
        return np.diag(moments)

    bodies = [Body("crank", crank_mass, rod(crank_mass, 2, length), com=np.array([0, 0, -length / 2])),
              Body("rocker", crank_mass, rod(crank_mass, 2, length), com=np.array([0, 0, -length / 2])),
              Body("coupler", coupler_mass, rod(coupler_mass, 1, span), com=np.array([0, span / 2, 0]))]
    joints = [Joint("ground_crank", "revolute", "world", "crank", axis=X),
              Joint("ground_rocker", "revolute", "world", "rocker", origin=pose((0, span, 0)), axis=X),
              Joint("crank_coupler", "revolute", "crank", "coupler", origin=pose((0, 0, -length)), axis=X),
              Joint("rocker_coupler", "revolute", "rocker", "coupler", origin=pose((0, 0, -length)),
                    child_origin=pose((0, span, 0)), axis=X)]
    return Model(bodies, joints)


def chain(n: int, damping: float = 0.0) -> Model:
    """n uniform rods (mass 1, length 0.5) hanging from hinges along x."""
    length = 0.5
    bodies = [Body(f"rod{i}", 1.0, np.diag([length ** 2 / 12, length ** 2 / 12, 1e-3]),
                   com=np.array([0.0, 0.0, -length / 2])) for i in range(n)]
    joints = [Joint(f"hinge{i}", "revolute", "world" if i == 0 else f"rod{i - 1}", f"rod{i}",
                    origin=pose((0.0, 0.0, 0.0 if i == 0 else -length)), axis=X, damping=damping) for i in range(n)]
    return Model(bodies, joints)
