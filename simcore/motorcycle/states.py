"""States of the in-plane motorcycle model (SAE J670 axes: X forward, Y right, Z down)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class MotorcycleBodyState:
    """Body (bike + rider) motion in the X-Z plane of an inertial SAE frame whose origin is on the
    ground below the centre of mass's starting point.

    - ``pos`` (3,): centre of mass (m); ``pos[2]`` is negative above the ground; ``pos[1]`` stays 0.
    - ``pitch``: rotation about +Y, positive nose up (rad).
    - ``velocity`` (3,): of the centre of mass (m/s); ``velocity[0]`` is the forward speed.
    - ``pitch_rate``: rad/s. ``acceleration`` (3,): of the centre of mass at the end of the last
      step (m/s^2; negative ``acceleration[0]`` while braking). ``time``: s.
    """

    pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    pitch: float = 0.0
    velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    pitch_rate: float = 0.0
    acceleration: np.ndarray = field(default_factory=lambda: np.zeros(3))
    time: float = 0.0


@dataclass
class MotorcycleWheelState:
    """Per wheel, struct of arrays (2,): 0 front, 1 rear.

    - ``suspension_length``: attachment to wheel centre along the suspension axis (m).
    - ``compression``: free length minus length (m); ``compression_speed`` (m/s, > 0 compressing).
    - ``suspension_force``: along the axis, spring + damper + bump stop (N, >= 0).
    - ``normal_force``: ground reaction (N, >= 0); ``longitudinal_force``: ground force along +X on
      the wheel (N; negative while braking).
    - ``brake_torque``, ``drive_torque``: applied (N m).
    - ``rotation_speed``: wheel spin, positive rolling forwards (rad/s); ``rotation_angle``: its
      integral (rad). In SAE axes a forward-rolling wheel turns about -Y (see the pose arrays).
    - ``locked``: braking force at the friction limit (the wheel slides, spin 0);
      ``in_contact``: the tire touches the ground.
    """

    suspension_length: np.ndarray = field(default_factory=lambda: np.zeros(2))
    compression: np.ndarray = field(default_factory=lambda: np.zeros(2))
    compression_speed: np.ndarray = field(default_factory=lambda: np.zeros(2))
    suspension_force: np.ndarray = field(default_factory=lambda: np.zeros(2))
    normal_force: np.ndarray = field(default_factory=lambda: np.zeros(2))
    longitudinal_force: np.ndarray = field(default_factory=lambda: np.zeros(2))
    brake_torque: np.ndarray = field(default_factory=lambda: np.zeros(2))
    drive_torque: np.ndarray = field(default_factory=lambda: np.zeros(2))
    rotation_speed: np.ndarray = field(default_factory=lambda: np.zeros(2))
    rotation_angle: np.ndarray = field(default_factory=lambda: np.zeros(2))
    locked: np.ndarray = field(default_factory=lambda: np.zeros(2, dtype=bool))
    in_contact: np.ndarray = field(default_factory=lambda: np.zeros(2, dtype=bool))


@dataclass
class MotorcycleCommands:
    """Rider inputs: ``front_brake`` (lever) and ``rear_brake`` (pedal) in [0, 1] of the max brake
    torques, ``throttle`` in [0, 1] of the max drive torque, and the light switches."""

    front_brake: float = 0.0
    rear_brake: float = 0.0
    throttle: float = 0.0
    high_beam: bool = False
    low_beam: bool = True
    left_indicator: bool = False
    right_indicator: bool = False

    def validate(self) -> None:
        """Raise ``ValueError`` for a command outside [0, 1]."""
        for name in ("front_brake", "rear_brake", "throttle"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"MotorcycleCommands.{name} must be in [0, 1], got {v!r}")


@dataclass
class MotorcyclePose:
    """What the Simulation 3D Motorcycle block takes each frame.

    - ``translation`` (4, 3), m: row 0 the motorcycle (centre of mass) in the inertial SAE frame;
      rows 1, 2, 3 the handlebar, front wheel and rear wheel relative to their design positions on
      the vehicle, in vehicle SAE axes (X, Y, Z columns).
    - ``rotation`` (4, 3), rad: row 0 (roll, pitch, yaw) of the motorcycle in the inertial frame;
      rows 1-3 those of the handlebar, front and rear wheel relative to the vehicle.
    - ``lights`` (5,) uint8: high beam, low beam, brake, left indicator, right indicator (1 = on).
    """

    translation: np.ndarray = field(default_factory=lambda: np.zeros((4, 3)))
    rotation: np.ndarray = field(default_factory=lambda: np.zeros((4, 3)))
    lights: np.ndarray = field(default_factory=lambda: np.zeros(5, dtype=np.uint8))


@dataclass
class MotorcycleStates:
    """Every state of a :class:`~simcore.motorcycle.simulation.Motorcycle`."""

    body: MotorcycleBodyState = field(default_factory=MotorcycleBodyState)
    wheels: MotorcycleWheelState = field(default_factory=MotorcycleWheelState)
    commands: MotorcycleCommands = field(default_factory=MotorcycleCommands)
    pose: MotorcyclePose = field(default_factory=MotorcyclePose)
