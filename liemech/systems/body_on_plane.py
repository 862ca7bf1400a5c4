"""What every rigid body rolling on the plane z = 0 shares: the configuration (R, x) on
SO(3) × R³, R the attitude and x the centre of mass, the body velocity (Ω, v = ẋ), and

    ℓ = ½ Ωᵀ𝕀Ω + ½ m |v|² − m g x_z      (𝕀 about the centre of mass, body frame),

whose energy is H = ½ μᵀ𝕀⁻¹μ + m g x_z. Each body adds its contact and rolling constraints."""

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.euclidean import Rn
from liemech.groups.product import ProductGroup
from liemech.groups.so3 import SO3
from liemech.mechanics.system import MechanicalSystem
from liemech.systems.built_once import built_once
from liemech.types import Matrix, Vector

Pose = tuple[Matrix, Vector]


@dataclass(frozen=True)
class Gravity:
    """V = m g x_z (a class, so that systems built on it pickle)."""

    mass: float
    gravity: float

    def __call__(self, g: Pose) -> jax.Array:
        return jnp.asarray(self.mass * self.gravity * g[1][2])


def body_inertia_blocks(body_inertia: Matrix, mass: float) -> Matrix:
    """The 6 × 6 inertia: blocks 𝕀 for Ω and m I for v."""
    out = np.zeros((6, 6))
    out[:3, :3], out[3:, 3:] = body_inertia, mass * np.eye(3)
    return out


def body_on_plane(inertia: Matrix, mass: float, gravity: float) -> MechanicalSystem[Pose]:
    """ℓ on SO(3) × R³ with the 6 × 6 ``inertia`` (blocks 𝕀 and m I) under gravity g."""
    return MechanicalSystem(ProductGroup(SO3(), Rn(3)), inertia, Gravity(mass, gravity))


def energy(inertia: Matrix, mass: float, gravity: float, g: Pose, mu: Vector) -> float:
    """H = ½ μᵀ𝕀⁻¹μ + m g x_z."""
    return 0.5 * float(mu @ np.linalg.solve(inertia, mu)) + float(Gravity(mass, gravity)(g))


class RollsOnThePlane:
    """What the rolling bodies' classes share: their blocks 𝕀 (for Ω) and m I (for v), from
    ``body_inertia`` (a body with other data overrides ``inertia``), and the Lagrangian ℓ above,
    built once per instance."""

    body_inertia: Matrix
    mass: float
    gravity: float

    @property
    def inertia(self) -> Matrix:
        """Blocks 𝕀 for Ω and m I for v."""
        return body_inertia_blocks(self.body_inertia, self.mass)

    @built_once
    def system(self) -> MechanicalSystem[Pose]:
        return body_on_plane(self.inertia, self.mass, self.gravity)
