"""Command response functions (``PxVehicleLinearResponseCompute``, ``PxVehicleNonLinearResponseCompute``).

Vectorised over wheels: the normalised response depends only on the command and the speed,
so it is computed once and multiplied by ``max_response * wheel_response_multipliers``.
"""

from __future__ import annotations

import numpy as np

from simcore.commands.params import CommandNonLinearResponseParams, CommandResponseParams


def _interp_clamped(x: np.ndarray, y: np.ndarray, v: float) -> float:
    """Piecewise-linear lookup clamped at both ends (one point = constant)."""
    if x.shape[0] == 1 or v <= x[0]:
        return float(y[0])
    if v >= x[-1]:
        return float(y[-1])
    return float(np.interp(v, x, y))


def normalised_response(command: float, speed: float, table: CommandNonLinearResponseParams) -> float:
    """The normalised response (dimensionless) to ``command`` at longitudinal ``speed``.

    Linear (the command itself) when ``table`` is empty; else the speed curve of each bracketing
    command value is sampled at ``speed`` and the two results are interpolated in command value;
    commands outside the table use its first/last curve. This is Vehicle2's bilinear scheme.
    """
    tables = table.tables
    if not tables:
        return float(command)
    if len(tables) == 1 or command <= tables[0].command_value:
        t = tables[0]
        return _interp_clamped(t.speeds, t.responses, speed)
    if command >= tables[-1].command_value:
        t = tables[-1]
        return _interp_clamped(t.speeds, t.responses, speed)
    upper = 1
    while tables[upper].command_value < command:
        upper += 1
    lo, hi = tables[upper - 1], tables[upper]
    z_lo = _interp_clamped(lo.speeds, lo.responses, speed)
    z_hi = _interp_clamped(hi.speeds, hi.responses, speed)
    return z_lo + (command - lo.command_value) * (z_hi - z_lo) / (hi.command_value - lo.command_value)


def linear_response(command: float, params: CommandResponseParams) -> np.ndarray:
    """``command * max_response * multipliers`` per wheel, shape (n,) (``PxVehicleLinearResponseCompute``)."""
    return (command * params.max_response) * params.wheel_response_multipliers


def nonlinear_response(command: float, speed: float, params: CommandResponseParams) -> np.ndarray:
    """(n,) responses through the optional speed/command table (``PxVehicleNonLinearResponseCompute``)."""
    return linear_response(normalised_response(command, speed, params.nonlinear_response), params)
