"""Steering (Vehicle2 ``steering/``): steer angle response and Ackermann correction."""

from simcore.steering.functions import (
    ackermann_outer_angle,
    ackermann_steer_update,
    steer_command_response_update,
)
from simcore.steering.params import AckermannParams, SteerCommandResponseParams

__all__ = [
    "AckermannParams",
    "SteerCommandResponseParams",
    "ackermann_outer_angle",
    "ackermann_steer_update",
    "steer_command_response_update",
]
