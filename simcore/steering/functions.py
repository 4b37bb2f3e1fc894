"""Steer response with Ackermann correction (``PxVehicleSteerCommandResponseUpdate``,
``PxVehicleAckermannSteerUpdate``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from simcore.commands.functions import nonlinear_response
from simcore.steering.params import AckermannParams, SteerCommandResponseParams


def steer_command_response_update(
    steer: float, longitudinal_speed: float, params: SteerCommandResponseParams
) -> np.ndarray:
    """Yaw angle per wheel (radians, shape (n,)): ``sign(steer) * response(|steer|, speed)``."""
    if steer == 0.0 and params.nonlinear_response.is_linear:
        return np.zeros(params.nb_wheels)
    sign = math.copysign(1.0, steer) if steer != 0.0 else 0.0
    return sign * nonlinear_response(abs(steer), longitudinal_speed, params)


def ackermann_outer_angle(inner: float, wheel_base: float, track_width: float) -> float:
    """The perfect-Ackermann angle of the outer wheel (radians) given the inner one (> 0).

    Both wheels point at one turning centre on the reference axle line:
    ``cot(outer) = cot(inner) + track_width / wheel_base``.
    """
    return math.atan(wheel_base / (track_width + wheel_base / math.tan(inner)))


def ackermann_steer_update(
    steer: float,
    steer_params: SteerCommandResponseParams,
    ackermann_params: Sequence[AckermannParams],
    steer_response: np.ndarray,
) -> np.ndarray:
    """Overwrite the two wheels of each Ackermann axle in ``steer_response`` (n,) in place.

    The axle yaw is the mean of the two wheels' *linear* responses. The inner wheel (on the
    side the vehicle turns to) keeps ``|axle yaw|``; the outer wheel's angle moves from it towards
    the perfect Ackermann angle by ``strength``. Signs follow the steer: for positive yaw the
    positive-lateral wheel (``wheel_ids[1]``) is inner. Returns ``steer_response``.
    """
    for ack in ackermann_params:
        if not ack.strength > 0.0:
            continue
        w0, w1 = ack.wheel_ids
        m = steer_params.wheel_response_multipliers
        axle_yaw = 0.5 * steer * steer_params.max_response * (m[w0] + m[w1])
        if axle_yaw == 0.0:
            continue
        inner = abs(axle_yaw)
        perfect_outer = ackermann_outer_angle(inner, ack.wheel_base, ack.track_width)
        outer = inner + ack.strength * (perfect_outer - inner)
        if axle_yaw >= 0.0:
            steer_response[w0] = outer
            steer_response[w1] = inner
        else:
            steer_response[w0] = -inner
            steer_response[w1] = -outer
    return steer_response
