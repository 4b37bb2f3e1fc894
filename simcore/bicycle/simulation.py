"""Time simulation of the linear bicycle model.

:class:`BicycleModel` is shaped like a :class:`~simcore.vehicle.Vehicle` (``params``, ``states``,
``sequence``, ``context``, ``step(dt)``) so that the PVD recorder can attach to it; :func:`simulate`
runs it and returns the time series as arrays.

The integrator is the exact discretisation of the linear system for a steer input held constant
over each step (zero-order hold): for a steer step the samples equal the analytic response to
rounding, whatever the step size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from simcore.bicycle.components import BicycleComponent
from simcore.bicycle.params import BicycleParams
from simcore.bicycle.states import BicycleStates
from simcore.component import ComponentSequence
from simcore.context import SimulationContext

#: A steer input: a constant angle (a step at t = 0, rad), a function of time (s -> rad, sampled
#: at the start of every step) or one angle per step.
SteerInput = float | Callable[[float], float] | np.ndarray


class BicycleModel:
    """A bicycle model to step: ``model.steer = 0.02; model.step(0.01)``.

    ``params`` can be replaced between steps (e.g. another speed); ``steer`` is the front-wheel
    angle in rad (positive left) held over the next step.
    """

    def __init__(self, params: BicycleParams, context: SimulationContext | None = None) -> None:
        params.validate()
        self._params = params
        self.context = context if context is not None else SimulationContext()
        self.states = BicycleStates()
        self.steer = 0.0
        self.sequence = ComponentSequence()
        self.sequence.add(BicycleComponent(self), "bicycle")
        self.time = 0.0

    @property
    def params(self) -> BicycleParams:
        """The model's params; assign validated new ones to change them."""
        return self._params

    @params.setter
    def params(self, value: BicycleParams) -> None:
        value.validate()
        self._params = value

    def step(self, dt: float) -> bool:
        """Advance by ``dt`` (time, > 0) with the current steer."""
        if not dt > 0.0:
            raise ValueError(f"BicycleModel.step: dt must be greater than zero, got {dt!r}")
        ok = self.sequence.update(dt, self.context)
        self.time += dt
        return ok

    def reset(self) -> None:
        """Straight running at the origin, steer released, time 0."""
        self.states.set_to_default()
        self.steer = 0.0
        self.time = 0.0


@dataclass(frozen=True)
class BicycleTrace:
    """Samples of a simulation: index 0 is the initial state, index k the state after step k.

    ``steer[k]`` is the angle held during step k (the last one repeats). Axle arrays are (n, 2),
    front then rear. Units as in :class:`~simcore.bicycle.states.BicycleBodyState`.
    """

    time: np.ndarray
    steer: np.ndarray
    sideslip: np.ndarray
    yaw_rate: np.ndarray
    yaw: np.ndarray
    pos: np.ndarray
    lateral_acceleration: np.ndarray
    slip_angle: np.ndarray
    lateral_force: np.ndarray


def steer_schedule(steer: SteerInput, steps: int, dt: float) -> np.ndarray:
    """The angle held during each of ``steps`` steps of ``dt`` for any :data:`SteerInput`."""
    if callable(steer):
        return np.array([float(steer(k * dt)) for k in range(steps)])
    arr = np.asarray(steer, dtype=np.float64)
    if arr.ndim == 0:
        return np.full(steps, float(arr))
    if arr.shape != (steps,):
        raise ValueError(f"bicycle simulate: a steer array needs one angle per step ({steps}), "
                         f"got shape {arr.shape}")
    return arr


def simulate(params: BicycleParams, steer: SteerInput, duration: float, dt: float,
             model: BicycleModel | None = None,
             after_step: Callable[[int], None] | None = None) -> BicycleTrace:
    """Run ``round(duration / dt)`` steps from straight running (or from ``model``'s current state,
    whose params are set to ``params``) and return every sample. ``after_step(k)`` is called after
    step k (e.g. to record)."""
    if not duration > 0.0 or not dt > 0.0:
        raise ValueError(f"bicycle simulate: duration and dt must be > 0, got {duration!r}, {dt!r}")
    steps = max(1, int(round(duration / dt)))
    schedule = steer_schedule(steer, steps, dt)
    if model is None:
        model = BicycleModel(params)
    else:
        model.params = params
    n = steps + 1
    out = {k: np.zeros(n) for k in ("time", "steer", "sideslip", "yaw_rate", "yaw", "lateral_acceleration")}
    pos = np.zeros((n, 2))
    slip = np.zeros((n, 2))
    force = np.zeros((n, 2))

    def sample(i: int) -> None:
        b, a = model.states.body, model.states.axles
        out["time"][i] = b.time
        out["sideslip"][i] = b.sideslip
        out["yaw_rate"][i] = b.yaw_rate
        out["yaw"][i] = b.yaw
        out["lateral_acceleration"][i] = b.lateral_acceleration
        pos[i] = b.pos
        slip[i] = a.slip_angle
        force[i] = a.lateral_force

    sample(0)
    for k in range(steps):
        model.steer = float(schedule[k])
        model.step(dt)
        sample(k + 1)
        if after_step is not None:
            after_step(k)
    out["steer"][:steps] = schedule
    out["steer"][steps] = schedule[-1]
    return BicycleTrace(pos=pos, slip_angle=slip, lateral_force=force, **out)
