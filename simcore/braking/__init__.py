"""Braking (Vehicle2 ``braking/``): brake and handbrake torque responses."""

from simcore.braking.functions import brake_command_response_update
from simcore.braking.params import BrakeCommandResponseParams

__all__ = ["BrakeCommandResponseParams", "brake_command_response_update"]
