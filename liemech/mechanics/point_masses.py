"""Momentum maps of configurations q = (q₁, …, q_k) ∈ R³ᵏ stacked from 3-vectors (particles, a
centre of mass and directors) with momenta p = (p₁, …, p_k): the symmetries are the rotations and
translations acting on every block (Kinon, Betsch & Schneider 2023, eqs. (105)–(107),
(118)–(121))."""

import numpy as np

from liemech.types import Vector


def angular_momentum(q: Vector, p: Vector) -> Vector:
    """Σ_i q_i × p_i, the momentum map of the rotations q_i ↦ Rq_i."""
    qs, ps = q.reshape(-1, 3), p.reshape(-1, 3)
    return np.array([
        float(np.sum(qs[:, 1] * ps[:, 2] - qs[:, 2] * ps[:, 1])),
        float(np.sum(qs[:, 2] * ps[:, 0] - qs[:, 0] * ps[:, 2])),
        float(np.sum(qs[:, 0] * ps[:, 1] - qs[:, 1] * ps[:, 0])),
    ])


def linear_momentum(p: Vector) -> Vector:
    """Σ_i p_i, the momentum map of the translations q_i ↦ q_i + a."""
    return np.asarray(p.reshape(-1, 3).sum(axis=0), dtype=np.float64)


def rigid_rotation_velocity(omega: Vector, q: Vector) -> Vector:
    """q̇ = (ω × q₁, …, ω × q_k): the velocity of every block under the spatial angular velocity ω."""
    qs = q.reshape(-1, 3)
    return np.stack([omega[1] * qs[:, 2] - omega[2] * qs[:, 1], omega[2] * qs[:, 0] - omega[0] * qs[:, 2],
                     omega[0] * qs[:, 1] - omega[1] * qs[:, 0]], axis=1).ravel()
