"""Stingray's driver-input stage: steer limit vs forward speed, and input smoothing.

Vehicle2 applies commands as given; Stingray (like PhysX 3's vehicle SDK, which it wraps) filters
the raw controller values first:

1. **Steer limit** (``steer_vs_forward_speed``): the raw steer is clamped to
   ``±table(|forward speed|)`` (piecewise linear in speed, clamped at the table's ends), so full
   lock at 30 m/s asks for only 22 % of the wheels' max steer. This is done here rather than with
   Vehicle2's nonlinear steer response because Vehicle2's Ackermann correction recomputes the
   steered axle from the *linear* response and would drop the table.
2. **Smoothing** (``input_smoothing``), so that a trigger slammed to full does not spin the wheels
   at once. Five channels, each with a rise rate and a fall rate (units of command per second, > 0):

=================  ===================================================================
channel            raw value
=================  ===================================================================
``acceleration``   throttle, [0, 1]
``brake``          brake pedal, [0, 1]
``handbrake``      handbrake, [0, 1]
``steer_left``     ``max(steer, 0)``: steer to the left (positive steer), [0, 1]
``steer_right``    ``max(-steer, 0)``: steer to the right (negative steer), [0, 1]
=================  ===================================================================

Each step a channel moves from its smoothed value towards its target (the raw value, the steer
channels after the limit) by at most ``rise_rate * dt`` when the target is higher and
``fall_rate * dt`` when it is lower, never overshooting. The steer command is
``steer_left - steer_right``: swinging the wheel from full left to full right lets the left
channel fall while the right one rises, as two keys would. Without smoothing the targets are
applied directly.

:class:`DriverInputComponent` runs this just before the vehicle's command response, reading the
raw inputs that :class:`SmoothedVehicleCommands` (the vehicle's ``commands`` facade) records, and
writing the results into ``vehicle.states.commands`` (which the command response and the PVD
recording then see).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from simcore.component import Component
from simcore.context import SimulationContext
from simcore.frame import Frame, Scale
from simcore.vehicle import VehicleCommands

if TYPE_CHECKING:
    from simcore.vehicle import Vehicle

#: Channel names, in the order of the rate arrays.
CHANNELS = ("acceleration", "brake", "handbrake", "steer_left", "steer_right")
#: PhysX 3's key-smoothing defaults (``gKeySmoothingData`` of its vehicle snippets), per channel.
DEFAULT_RISE_RATES = (6.0, 6.0, 6.0, 2.5, 2.5)
DEFAULT_FALL_RATES = (10.0, 10.0, 10.0, 5.0, 5.0)


@dataclass(frozen=True, eq=False)
class InputSmoothingParams:
    """Rise and fall rates of the five channels (:data:`CHANNELS` order), each (0, inf) in
    ``1 / time`` (command units per second). Frame- and scale-free."""

    rise_rates: np.ndarray = field(default_factory=lambda: np.array(DEFAULT_RISE_RATES))
    fall_rates: np.ndarray = field(default_factory=lambda: np.array(DEFAULT_FALL_RATES))

    def __post_init__(self) -> None:
        for name in ("rise_rates", "fall_rates"):
            a = np.array(getattr(self, name), dtype=np.float64)
            if a.shape != (len(CHANNELS),):
                raise ValueError(f"InputSmoothingParams.{name} needs {len(CHANNELS)} rates {CHANNELS}, "
                                 f"got shape {a.shape}")
            a.setflags(write=False)
            object.__setattr__(self, name, a)

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first rate that is not a finite number > 0."""
        for name in ("rise_rates", "fall_rates"):
            for ch, v in zip(CHANNELS, getattr(self, name), strict=True):
                if not (np.isfinite(v) and v > 0.0):
                    raise ValueError(f"InputSmoothingParams.{name}.{ch} must be greater than zero, got {v}")

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> InputSmoothingParams:
        """Rates per time only: unchanged."""
        return self


@dataclass(frozen=True, eq=False)
class DriverInputParams:
    """What the driver-input stage does: ``smoothing`` (None: none) and ``steer_vs_forward_speed``
    ((k, 2) rows of (speed ``length / time`` >= 0 increasing, max steer in [0, 1]); None: no limit)."""

    smoothing: InputSmoothingParams | None = None
    steer_vs_forward_speed: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.steer_vs_forward_speed is not None:
            t = np.array(self.steer_vs_forward_speed, dtype=np.float64)
            if t.ndim != 2 or t.shape[1] != 2 or t.shape[0] == 0:
                raise ValueError("DriverInputParams.steer_vs_forward_speed must be (k, 2) (speed, max steer) "
                                 f"rows, got shape {t.shape}")
            t.setflags(write=False)
            object.__setattr__(self, "steer_vs_forward_speed", t)

    def validate(self) -> None:
        """Raise ``ValueError`` for bad rates or a bad steer table."""
        if self.smoothing is not None:
            self.smoothing.validate()
        t = self.steer_vs_forward_speed
        if t is not None:
            if np.any(t[:, 0] < 0.0) or np.any(np.diff(t[:, 0]) <= 0.0):
                raise ValueError("DriverInputParams.steer_vs_forward_speed speeds must be >= 0 and "
                                 f"increasing, got {t[:, 0].tolist()}")
            if np.any((t[:, 1] < 0.0) | (t[:, 1] > 1.0)):
                raise ValueError("DriverInputParams.steer_vs_forward_speed max steer values must be in "
                                 f"[0, 1], got {t[:, 1].tolist()}")

    def max_steer(self, forward_speed: float) -> float:
        """The steer limit at ``|forward_speed|`` (1 without a table)."""
        t = self.steer_vs_forward_speed
        if t is None:
            return 1.0
        return float(np.interp(abs(forward_speed), t[:, 0], t[:, 1]))

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> DriverInputParams:
        """Table speeds scale with the length scale; rates are unchanged."""
        t = self.steer_vs_forward_speed
        if t is None or trg_scale.scale == src_scale.scale:
            return self
        r = trg_scale.scale / src_scale.scale
        return DriverInputParams(self.smoothing, np.column_stack([t[:, 0] * r, t[:, 1]]))


@dataclass
class InputSmoothingState:
    """``raw`` (4,): the driver's latest inputs (throttle, brake, handbrake in [0, 1], steer in
    [-1, 1], positive left); ``smoothed`` (5,): the filtered channels (:data:`CHANNELS`)."""

    raw: np.ndarray = field(default_factory=lambda: np.zeros(4))
    smoothed: np.ndarray = field(default_factory=lambda: np.zeros(len(CHANNELS)))

    def set_to_default(self) -> None:
        """All inputs released."""
        self.raw[:] = 0.0
        self.smoothed[:] = 0.0


def raw_channels(raw: np.ndarray, max_steer: float = 1.0) -> np.ndarray:
    """The five channel targets (:data:`CHANNELS`) of raw inputs (throttle, brake, handbrake, steer),
    the steer clamped to ``±max_steer``."""
    t, b, h, s = (float(v) for v in raw)
    return np.array([t, b, h, min(max(s, 0.0), max_steer), min(max(-s, 0.0), max_steer)])


def smooth_channels(target: np.ndarray, current: np.ndarray, params: InputSmoothingParams,
                    dt: float) -> np.ndarray:
    """Each channel moved from ``current`` towards ``target`` by at most rate * dt (rise rate
    upwards, fall rate downwards), without overshoot."""
    up = np.minimum(current + params.rise_rates * dt, target)
    down = np.maximum(current - params.fall_rates * dt, target)
    return np.where(target > current, up, down)


def commands_from_channels(channels: np.ndarray) -> tuple[float, float, float, float]:
    """(throttle, brake, handbrake, steer) from smoothed channels."""
    return (float(channels[0]), float(channels[1]), float(channels[2]),
            float(channels[3] - channels[4]))


class DriverInputComponent(Component):
    """Limit and smooth the raw driver inputs into ``vehicle.states.commands``, then run the wrapped
    command-response component (the vehicle's own, which it replaces under the same name)."""

    def __init__(self, vehicle: Vehicle, params: DriverInputParams, state: InputSmoothingState,
                 inner: Component) -> None:
        params.validate()
        self.vehicle = vehicle
        self.params = params
        self.state = state
        self.inner = inner

    def update(self, dt: float, context: SimulationContext) -> bool:
        s = self.state
        p = self.params
        limit = 1.0
        if p.steer_vs_forward_speed is not None:
            v = self.vehicle
            limit = p.max_steer(v.states.rigid_body.longitudinal_speed(v.params.frame))
        target = raw_channels(s.raw, limit)
        if p.smoothing is None:
            s.smoothed[:] = target
        else:
            s.smoothed[:] = smooth_channels(target, s.smoothed, p.smoothing, dt)
        throttle, brake, handbrake, steer = commands_from_channels(s.smoothed)
        cmd = self.vehicle.states.commands
        cmd.throttle = throttle
        cmd.brakes[0] = brake
        cmd.brakes[1] = handbrake
        cmd.steer = steer
        return self.inner.update(dt, context)


class SmoothedVehicleCommands(VehicleCommands):
    """The ``vehicle.commands`` facade of a vehicle with a driver-input stage: throttle, brake,
    handbrake and steer read and write the *raw* inputs (the limited, smoothed values are in
    ``vehicle.states.commands``); the gear goes straight through."""

    def __init__(self, vehicle: Vehicle, state: InputSmoothingState) -> None:
        super().__init__(vehicle)
        self._smoothing = state

    def _set(self, index: int, name: str, value: float, lo: float) -> None:
        v = float(value)
        if not lo <= v <= 1.0:
            raise ValueError(f"{name} command must be in [{lo}, 1.0], got {value!r}")
        self._smoothing.raw[index] = v

    @property  # type: ignore[override]
    def throttle(self) -> float:
        return float(self._smoothing.raw[0])

    @throttle.setter
    def throttle(self, value: float) -> None:
        self._set(0, "throttle", value, 0.0)

    @property  # type: ignore[override]
    def brake(self) -> float:
        return float(self._smoothing.raw[1])

    @brake.setter
    def brake(self, value: float) -> None:
        self._set(1, "brake", value, 0.0)

    @property  # type: ignore[override]
    def handbrake(self) -> float:
        return float(self._smoothing.raw[2])

    @handbrake.setter
    def handbrake(self, value: float) -> None:
        self._set(2, "handbrake", value, 0.0)

    @property  # type: ignore[override]
    def steer(self) -> float:
        return float(self._smoothing.raw[3])

    @steer.setter
    def steer(self, value: float) -> None:
        self._set(3, "steer", value, -1.0)

    def release(self) -> None:
        """Raw throttle, brakes and steer back to zero (they then fall at the fall rates)."""
        self._smoothing.raw[:] = 0.0


def install_driver_inputs(vehicle: Vehicle, params: DriverInputParams,
                          state: InputSmoothingState | None = None) -> InputSmoothingState:
    """Give ``vehicle`` Stingray's driver-input stage: wrap its ``command_response`` component and
    replace its ``commands`` facade. Returns the state (raw and smoothed inputs)."""
    state = state if state is not None else InputSmoothingState()
    inner = vehicle.sequence.get("command_response")
    if isinstance(inner, DriverInputComponent):
        raise ValueError("install_driver_inputs: this vehicle already has a driver-input stage")
    vehicle.sequence.replace("command_response", DriverInputComponent(vehicle, params, state, inner))
    vehicle.commands = SmoothedVehicleCommands(vehicle, state)
    return state


def smoothing_state(vehicle: Any) -> InputSmoothingState | None:
    """The input state of a vehicle set up by :func:`install_driver_inputs` (else None)."""
    commands = getattr(vehicle, "commands", None)
    return commands._smoothing if isinstance(commands, SmoothedVehicleCommands) else None
