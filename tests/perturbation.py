"""Initial states perturbed at the round-off level, for the tests that follow a long or chaotic run.

A different compilation, BLAS or processor changes a step's result in its last bits, and a chaotic
motion amplifies that difference until, after some time, the trajectory is another one. A test of
such a run holds on every machine only if it bounds what theory bounds for every nearby trajectory;
``pytest -m long_run --perturb N`` checks that by running each ``long_run`` test N times, each from
initial data moved by a relative 1e-12 (more than a different rounding of the first steps does).
A test marked ``long_run`` takes the ``perturb`` fixture and passes its initial data through it;
outside ``--perturb`` the fixture returns the data unchanged."""

from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

import liemech as lm

P = TypeVar("P")

SIZE = 1e-12
"""The relative size of a perturbation: about 4500 ulps, more than the round-off of a step."""

LONG_SPAN = 50.0
"""A test whose run spans more time than this (n_steps·h, in the problem's units) is a long run: it is
marked ``long_run`` and takes ``perturb``, or it fails (the periods of the test systems are of order 1
to 10, so such a run covers at least a few periods, enough for a chaotic motion to lose its digits)."""


class Perturbation:
    """``perturb(x)``: x + SIZE · max(|x|∞, 1) · z with z standard normal entries, a fresh z per call
    from a generator seeded by ``seed``; seed 0 is the identity (the unperturbed test)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._random = np.random.default_rng(seed)

    def __call__(self, x: ArrayLike) -> NDArray[np.float64]:
        values = np.array(x, dtype=np.float64)
        if self.seed == 0:
            return values
        scale = max(float(np.max(np.abs(values), initial=0.0)), 1.0)
        return values + SIZE * scale * self._random.standard_normal(values.shape)

    def problem(self, problem: lm.Problem[P]) -> lm.Problem[P]:
        """``problem`` from g₀ τ(ξ) and η₀ + δη (ξ, δη perturbations as above) moved back onto its
        constraints: g₀ and η₀ by ``project_to_constraints`` with a holonomic constraint, then η₀ by
        Newton steps on the stacked velocity rows [B(g₀)η; φ(g₀, η)] = 0 (the minimum-norm change)."""
        if self.seed == 0:
            return problem
        group = problem.group
        g = group.compose(problem.g0, group.retraction("exp").tau(self(np.zeros(group.dim))))
        eta = self(problem.eta0)
        if problem.holonomic is not None:
            g, eta = lm.project_to_constraints(problem.system, problem.holonomic, g, eta)
        for _ in range(3):
            rows, residual = _velocity_rows(problem, g, eta)
            if rows.shape[0] == 0:
                break
            eta = eta - rows.T @ np.linalg.solve(rows @ rows.T, residual)
        return lm.Problem(problem.system, g, eta, holonomic=problem.holonomic, nonholonomic=problem.nonholonomic,
                          force=problem.force, constraint_tol=problem.constraint_tol, sparsity=problem.sparsity)

    def __repr__(self) -> str:
        return f"Perturbation(seed={self.seed})"


def _velocity_rows(problem: lm.Problem[P], g: P, eta: NDArray[np.float64]) -> tuple[NDArray[np.float64],
                                                                                     NDArray[np.float64]]:
    """The velocity constraints' rows at (g, η) and their values: [B(g); ∂φ/∂η] and [B(g)η; φ(g, η)]."""
    rows, values = [np.zeros((0, eta.size))], [np.zeros(0)]
    if problem.holonomic is not None:
        B = np.asarray(problem.holonomic.trivialised_jacobian(problem.group, g), dtype=np.float64)
        rows.append(B)
        values.append(B @ eta)
    if problem.nonholonomic is not None:
        rows.append(np.asarray(problem.nonholonomic.derivative_eta(g, eta), dtype=np.float64))
        values.append(np.asarray(problem.nonholonomic.value(g, eta), dtype=np.float64))
    return np.concatenate(rows), np.concatenate(values)
