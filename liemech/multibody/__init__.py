"""Mechanisms of rigid bodies and joints in redundant coordinates, built by hand or from URDF."""

from liemech.multibody.body import Body
from liemech.multibody.joint import WORLD, Joint, pose
from liemech.multibody.model import Actuation, Model
from liemech.multibody.rigid_bodies import Configuration, RigidBodies
from liemech.multibody.urdf import from_urdf

__all__ = ["WORLD", "Actuation", "Body", "Configuration", "Joint", "Model", "RigidBodies", "from_urdf", "pose"]
