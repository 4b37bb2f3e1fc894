"""Compiled command responses for a batch of vehicles (brake, handbrake, steer with Ackermann).

Every drivetrain turns the brake pedal, the handbrake and the steer command into per-wheel brake
torques and steer angles the same way (``PxVehicleBrakeCommandResponseUpdate``,
``PxVehicleSteerCommandResponseUpdate``, ``PxVehicleAckermannSteerUpdate``); only the throttle
response differs. :class:`BrakeSteerResponseBatch` does the shared part for a whole fleet in one
kernel call, and the ``njit`` building blocks below (:func:`normalised_response`,
:func:`brake_steer_response`, :func:`longitudinal_speed`) let a drivetrain's own kernel do the same
work inline, so a command-response component stays one kernel call.

Packing (shapes depend on the wheel count only; the nonlinear tables are padded to Vehicle2's
limits, the Ackermann axles to ``max(nb_wheels // 2, entries)``):

* ``resp_f`` (n, channels, RF_MULT + nb_wheels) float64, per channel: ``max_response``, the
  command values, speeds and responses of the nonlinear table, then the wheel multipliers;
* ``resp_i`` (n, channels, RI_WIDTH) int64, per channel: table count, start and length of each
  command value's speed curve inside the speed/response slots;
* ``ack`` (n, axles, ACK_WIDTH) float64: wheel ids, wheel base, track width, strength. Padding
  rows have strength 0, which the update skips exactly as the reference skips a zero strength.

Channels 0 and 1 are the brake pedal and the handbrake (``VehicleParams.brake_command_response``),
channel 2 the steer; a drivetrain may append its own (the direct drive's throttle is channel 3).

The arithmetic mirrors :mod:`simcore.commands.functions`, :mod:`simcore.braking.functions` and
:mod:`simcore.steering.functions` operation by operation, so results equal the per-vehicle path.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from pvdkit.jit import njit
from simcore.commands.params import MAX_NB_COMMAND_VALUES, MAX_NB_SPEED_RESPONSES, CommandResponseParams
from simcore.frame import Frame
from simcore.maths import qrot

_JIT = {"cache": True, "nogil": True}

#: Channels of the packed command responses.
BRAKE, HANDBRAKE, STEER = 0, 1, 2
NB_BRAKE_STEER_CHANNELS = 3

# Columns of resp_f: max response, command values, speeds, responses, then one multiplier per wheel.
RF_MAX = 0
RF_COMMAND = 1
RF_SPEED = RF_COMMAND + MAX_NB_COMMAND_VALUES
RF_RESPONSE = RF_SPEED + MAX_NB_SPEED_RESPONSES
RF_MULT = RF_RESPONSE + MAX_NB_SPEED_RESPONSES
# Columns of resp_i: number of command values, start and length of each one's speed curve.
RI_NB_TABLES = 0
RI_START = 1
RI_LENGTH = RI_START + MAX_NB_COMMAND_VALUES
RI_WIDTH = RI_LENGTH + MAX_NB_COMMAND_VALUES
# Columns of ack.
ACK_W0, ACK_W1, ACK_WHEEL_BASE, ACK_TRACK_WIDTH, ACK_STRENGTH = 0, 1, 2, 3, 4
ACK_WIDTH = 5


# --- packing ---------------------------------------------------------------------------------


def pack_command_response(params: CommandResponseParams, nb_wheels: int) -> tuple[np.ndarray, np.ndarray]:
    """One channel's (float row, int row) for ``resp_f`` / ``resp_i`` (see the module docstring)."""
    f = np.zeros(RF_MULT + nb_wheels)
    i = np.zeros(RI_WIDTH, dtype=np.int64)
    f[RF_MAX] = params.max_response
    m = params.wheel_response_multipliers
    if m.shape[0] != nb_wheels:
        raise ValueError(f"{type(params).__name__}.wheel_response_multipliers has {m.shape[0]} entries; "
                         f"the batch has {nb_wheels} wheels")
    f[RF_MULT:] = m
    tables = params.nonlinear_response.tables
    if len(tables) > MAX_NB_COMMAND_VALUES or sum(len(t.speeds) for t in tables) > MAX_NB_SPEED_RESPONSES:
        params.nonlinear_response.validate(type(params).__name__)  # raises, naming the limit
    i[RI_NB_TABLES] = len(tables)
    start = 0
    for k, t in enumerate(tables):
        count = len(t.speeds)
        f[RF_COMMAND + k] = t.command_value
        f[RF_SPEED + start:RF_SPEED + start + count] = t.speeds
        f[RF_RESPONSE + start:RF_RESPONSE + start + count] = t.responses
        i[RI_START + k] = start
        i[RI_LENGTH + k] = count
        start += count
    return f, i


def pack_command_responses(
    params: Sequence[Any],
    nb_wheels: int,
    extra: Sequence[Callable[[Any], CommandResponseParams]] = (),
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(resp_f, resp_i, ack)`` for a batch of :class:`~simcore.vehicle.VehicleParams`.

    Channels: brake pedal, handbrake, steer, then ``extra[k](vehicle_params)`` for each ``k``
    (e.g. ``lambda p: p.direct_drive_throttle_response``).
    """
    n = len(params)
    nb_channels = NB_BRAKE_STEER_CHANNELS + len(extra)
    resp_f = np.zeros((n, nb_channels, RF_MULT + nb_wheels))
    resp_i = np.zeros((n, nb_channels, RI_WIDTH), dtype=np.int64)
    active = [[a for a in p.ackermann if a.strength > 0.0] for p in params]
    ack = np.zeros((n, max([nb_wheels // 2] + [len(a) for a in active]), ACK_WIDTH))
    for v, p in enumerate(params):
        brakes = p.brake_command_response
        if len(brakes) != 2:
            raise ValueError(f"vehicle {v}: brake_command_response needs 2 entries (brake, handbrake), "
                             f"got {len(brakes)}")
        channels = [brakes[0], brakes[1], p.steer_command_response] + [get(p) for get in extra]
        for c, cp in enumerate(channels):
            resp_f[v, c], resp_i[v, c] = pack_command_response(cp, nb_wheels)
        for k, a in enumerate(active[v]):
            ack[v, k] = (a.wheel_ids[0], a.wheel_ids[1], a.wheel_base, a.track_width, a.strength)
    return resp_f, resp_i, ack


def _blas_dot_is_fused() -> bool:
    """Whether numpy's 3-vector dot (BLAS ``ddot``) accumulates with fused multiply-adds.

    The reference longitudinal speed is ``linear_velocity @ lng_axis`` (BLAS); OpenBLAS's
    Haswell-and-later kernels fuse, older ones do not. The kernels round the same way.
    """
    x = 1.0 + 2.0 ** -30
    a = np.array([-(1.0 + 2.0 ** -29), x, 0.0])
    b = np.array([1.0, x, 0.0])
    return float(a @ b) != 0.0  # fused: exactly 2**-60; unfused: 0


def speed_axis(frame: Frame) -> np.ndarray:
    """(4,): the frame's longitudinal axis, then 1.0 if the dot product is fused (see
    :func:`longitudinal_speed`)."""
    out = np.zeros(4)
    out[:3] = frame.lng
    out[3] = 1.0 if _blas_dot_is_fused() else 0.0
    return out


# --- compiled building blocks ----------------------------------------------------------------


@intrinsic
def fma(typingctx, a, b, c):  # noqa: ANN001, ANN201 - numba intrinsic
    """``a * b + c`` with one rounding (LLVM ``llvm.fma.f64``), for compiled kernels."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        f64 = ir.DoubleType()
        fn = builder.module.declare_intrinsic("llvm.fma", [f64], ir.FunctionType(f64, [f64, f64, f64]))
        return builder.call(fn, args)

    return sig, codegen


@njit(**_JIT)
def longitudinal_speed(axis, lin_vel, quat, v):  # pragma: no cover - compiled
    """Vehicle ``v``'s velocity along its forward axis (``RigidBodyState.longitudinal_speed``).

    ``axis`` is :func:`speed_axis`; the dot product rounds as the reference's BLAS does.
    """
    fx, fy, fz = qrot(quat[v, 0], quat[v, 1], quat[v, 2], quat[v, 3], axis[0], axis[1], axis[2])
    if axis[3] != 0.0:
        return fma(fz, lin_vel[v, 2], fma(fy, lin_vel[v, 1], fma(fx, lin_vel[v, 0], 0.0)))
    return lin_vel[v, 0] * fx + lin_vel[v, 1] * fy + lin_vel[v, 2] * fz


@njit(**_JIT)
def _interp_clamped(rf, v, c, start, count, speed):  # pragma: no cover - compiled
    """One speed curve of channel ``c`` at ``speed``, clamped at both ends (``np.interp``'s
    arithmetic inside)."""
    xs = RF_SPEED + start
    ys = RF_RESPONSE + start
    last = count - 1
    if count == 1 or speed <= rf[v, c, xs]:
        return rf[v, c, ys]
    if speed >= rf[v, c, xs + last]:
        return rf[v, c, ys + last]
    j = 0
    while rf[v, c, xs + j + 1] <= speed:
        j += 1
    x0 = rf[v, c, xs + j]
    y0 = rf[v, c, ys + j]
    if x0 == speed:
        return y0
    x1 = rf[v, c, xs + j + 1]
    y1 = rf[v, c, ys + j + 1]
    slope = (y1 - y0) / (x1 - x0)
    r = slope * (speed - x0) + y0
    if np.isnan(r):
        r = slope * (speed - x1) + y1
        if np.isnan(r) and y0 == y1:
            r = y0
    return r


@njit(**_JIT)
def normalised_response(rf, ri, v, c, command, speed):  # pragma: no cover - compiled
    """:func:`simcore.commands.functions.normalised_response` of vehicle ``v``'s packed channel ``c``
    (``rf``: ``resp_f``, ``ri``: ``resp_i``)."""
    nb = ri[v, c, RI_NB_TABLES]
    if nb == 0:
        return command
    if nb == 1 or command <= rf[v, c, RF_COMMAND]:
        return _interp_clamped(rf, v, c, ri[v, c, RI_START], ri[v, c, RI_LENGTH], speed)
    if command >= rf[v, c, RF_COMMAND + nb - 1]:
        return _interp_clamped(rf, v, c, ri[v, c, RI_START + nb - 1], ri[v, c, RI_LENGTH + nb - 1], speed)
    upper = 1
    while rf[v, c, RF_COMMAND + upper] < command:
        upper += 1
    lo_value = rf[v, c, RF_COMMAND + upper - 1]
    hi_value = rf[v, c, RF_COMMAND + upper]
    z_lo = _interp_clamped(rf, v, c, ri[v, c, RI_START + upper - 1], ri[v, c, RI_LENGTH + upper - 1], speed)
    z_hi = _interp_clamped(rf, v, c, ri[v, c, RI_START + upper], ri[v, c, RI_LENGTH + upper], speed)
    return z_lo + (command - lo_value) * (z_hi - z_lo) / (hi_value - lo_value)


@njit(**_JIT)
def brake_steer_response(
    v, resp_f, resp_i, ack, speed, brakes, nb_brakes, steer, brake_out, steer_out
):  # pragma: no cover - compiled
    """Vehicle ``v``'s brake torques and steer angles (rows of ``brake_out`` / ``steer_out``).

    Brake: the sum over channels ``c < nb_brakes`` of ``response(brakes[c])``, skipping a released
    linear channel. Steer: ``sign(steer) * response(|steer|)``, then the Ackermann correction of
    each axle with a positive strength.
    """
    nb_wheels = brake_out.shape[1]
    nb = nb_brakes[v]
    if nb > 2:
        raise ValueError("brake_command_response_update: nb_brakes exceeds the 2 BrakeCommandResponseParams")
    for w in range(nb_wheels):
        brake_out[v, w] = 0.0
    for c in range(nb):
        cmd = brakes[v, c]
        if cmd != 0.0 or resp_i[v, c, RI_NB_TABLES] != 0:
            scale = normalised_response(resp_f, resp_i, v, c, cmd, speed) * resp_f[v, c, RF_MAX]
            for w in range(nb_wheels):
                brake_out[v, w] += scale * resp_f[v, c, RF_MULT + w]
    s = steer[v]
    if s == 0.0 and resp_i[v, STEER, RI_NB_TABLES] == 0:
        for w in range(nb_wheels):
            steer_out[v, w] = 0.0
    else:
        sign = math.copysign(1.0, s) if s != 0.0 else 0.0
        # np.int64, not the literal: another specialization of normalised_response otherwise
        scale = (normalised_response(resp_f, resp_i, v, np.int64(STEER), abs(s), speed)
                 * resp_f[v, STEER, RF_MAX])
        for w in range(nb_wheels):
            steer_out[v, w] = sign * (scale * resp_f[v, STEER, RF_MULT + w])
    max_steer = resp_f[v, STEER, RF_MAX]
    for k in range(ack.shape[1]):
        strength = ack[v, k, ACK_STRENGTH]
        if not strength > 0.0:
            continue
        w0 = int(ack[v, k, ACK_W0])
        w1 = int(ack[v, k, ACK_W1])
        axle_yaw = 0.5 * s * max_steer * (resp_f[v, STEER, RF_MULT + w0] + resp_f[v, STEER, RF_MULT + w1])
        if axle_yaw == 0.0:
            continue
        inner = abs(axle_yaw)
        wheel_base = ack[v, k, ACK_WHEEL_BASE]
        perfect_outer = math.atan(wheel_base / (ack[v, k, ACK_TRACK_WIDTH] + wheel_base / math.tan(inner)))
        outer = inner + strength * (perfect_outer - inner)
        if axle_yaw >= 0.0:
            steer_out[v, w0] = outer
            steer_out[v, w1] = inner
        else:
            steer_out[v, w0] = -inner
            steer_out[v, w1] = -outer


@njit(**_JIT)
def _k_brake_steer(resp_f, resp_i, ack, axis, lin_vel, quat, brakes, nb_brakes, steer, speed, brake_out,
                   steer_out):  # pragma: no cover - compiled
    for v in range(brake_out.shape[0]):
        speed[v] = longitudinal_speed(axis, lin_vel, quat, v)
        brake_steer_response(v, resp_f, resp_i, ack, speed[v], brakes, nb_brakes, steer, brake_out, steer_out)


# --- batch -----------------------------------------------------------------------------------


class BrakeSteerResponseBatch:
    """Brake and steer command responses of a whole fleet, one kernel call (not a Component).

    A drivetrain's batched command-response component owns one and calls :meth:`update`; it writes
    ``brake_command_response.response`` and ``steer_command_response.response`` (n, nb_wheels) and
    leaves each vehicle's forward speed in :attr:`speed` (n,) for the drivetrain's own responses.
    """

    def __init__(self, fleet: Any) -> None:
        self.fleet = fleet
        s = fleet.states
        self._lin_vel = s.rigid_body.arrays["linear_velocity"]
        self._quat = s.rigid_body.arrays["quat"]
        self._brakes = s.commands.arrays["brakes"]
        self._nb_brakes = s.commands.arrays["nb_brakes"]
        self._steer = s.commands.arrays["steer"]
        self._brake_out = s.brake_command_response.arrays["response"]
        self._steer_out = s.steer_command_response.arrays["response"]
        #: Forward speed of each vehicle (``length / time``) at the last :meth:`update`.
        self.speed = np.zeros(fleet.n_vehicles)
        self.repack()

    def repack(self) -> None:
        """Pack the brake, handbrake, steer and Ackermann params of every vehicle."""
        self.resp_f, self.resp_i, self.ack = pack_command_responses(self.fleet.params, self.fleet.nb_wheels)
        self.axis = speed_axis(self.fleet.frame)

    def update(self, dt: float) -> None:
        """Brake torques and steer angles of every vehicle from the current commands and speed."""
        _k_brake_steer(self.resp_f, self.resp_i, self.ack, self.axis, self._lin_vel, self._quat, self._brakes,
                       self._nb_brakes, self._steer, self.speed, self._brake_out, self._steer_out)


__all__ = [
    "BRAKE",
    "HANDBRAKE",
    "STEER",
    "BrakeSteerResponseBatch",
    "brake_steer_response",
    "fma",
    "longitudinal_speed",
    "normalised_response",
    "pack_command_response",
    "pack_command_responses",
    "speed_axis",
]
