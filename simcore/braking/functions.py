"""Brake command response (``PxVehicleBrakeCommandResponseUpdate``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simcore.braking.params import BrakeCommandResponseParams
from simcore.commands.functions import nonlinear_response


def brake_command_response_update(
    brakes: np.ndarray | Sequence[float],
    nb_brakes: int,
    longitudinal_speed: float,
    params: Sequence[BrakeCommandResponseParams],
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Total brake torque per wheel, shape (n,): the sum over brake channels ``i < nb_brakes`` of
    the response of ``brakes[i]`` through ``params[i]``.

    Writes into ``out`` when given (and returns it). Raises ``ValueError`` if more channels are
    read than there are params, as Vehicle2 refuses the same call.
    """
    if nb_brakes > len(params):
        raise ValueError(f"brake_command_response_update: nb_brakes={nb_brakes} but only {len(params)} "
                         "BrakeCommandResponseParams are given")
    n = params[0].nb_wheels
    total = np.zeros(n) if out is None else out
    if out is not None:
        total[:] = 0.0
    for i in range(nb_brakes):
        cmd = float(brakes[i])
        if cmd != 0.0 or not params[i].nonlinear_response.is_linear:
            total += nonlinear_response(cmd, longitudinal_speed, params[i])
    return total
