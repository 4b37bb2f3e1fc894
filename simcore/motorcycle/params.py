"""Parameters of the in-plane (longitudinal) motorcycle model.

Axes are SAE J670's, as the Simulation 3D Motorcycle block's inputs: X forward, Y right, Z down;
pitch is the rotation about +Y, positive nose up. Body coordinates are relative to the centre of
mass of bike plus rider. Per-wheel arrays have shape (2,): index 0 the front wheel, 1 the rear.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

import numpy as np

from simcore.axle import AxleDescription
from simcore.frame import Frame, Scale, scale_ratio

#: Wheel indices of per-wheel arrays.
FRONT, REAR = 0, 1
#: Standard gravity (m/s^2).
GRAVITY = 9.81

#: Front wheel 0 on axle 0, rear wheel 1 on axle 1.
MOTORCYCLE_AXLES = AxleDescription(((FRONT,), (REAR,)))

_PER_WHEEL = ("wheel_radius", "suspension_length", "suspension_travel", "free_length", "spring_stiffness",
              "damping", "max_brake_torque")


@dataclass(frozen=True, eq=False)
class MotorcycleParams:
    """Geometry, mass, suspension, brakes and resistances of a motorcycle with its rider.

    Geometry at the design pose (static equilibrium on level ground, pitch 0):

    - ``mass``: bike + rider, (0, inf) kg. ``pitch_inertia``: about the Y axis through the centre
      of mass, (0, inf) kg m^2.
    - ``wheelbase``: axle to axle, (0, inf) m; ``cg_to_front_axle``: horizontal distance from the
      centre of mass forward to the front axle, (0, wheelbase) m; ``cg_height``: above the ground,
      (0, inf) m.
    - ``wheel_radius`` (2,): (0, cg_height) m.
    - ``rake``: angle of the front fork (steering axis) from the vertical, [0, pi/3) rad; the fork
      runs from the steering head forwards and down to the front axle. The rear suspension is
      modelled as a spring acting vertically at the rear axle (an equivalent wheel rate).
    - ``suspension_length`` (2,): attachment (steering head; rear shock top) to wheel centre along
      the suspension axis at the design pose, (0, inf) m.
    - ``suspension_travel`` (2,): usable compression from full extension, (0, inf) m; beyond it a
      bump stop ``bump_stop_factor`` times stiffer takes over.
    - ``free_length`` (2,): length at full extension, where the spring force is 0 (> the design
      length: the static compression carries the bike's weight), m.
    - ``spring_stiffness`` (2,): along the suspension axis, (0, inf) N/m; ``damping`` (2,): along
      the axis, [0, inf) N s/m.

    Brakes, drive and resistances:

    - ``max_brake_torque`` (2,): at full lever / pedal, [0, inf) N m.
    - ``max_drive_torque``: at the rear wheel at full throttle, [0, inf) N m.
    - ``friction``: tire-road friction coefficient, (0, inf); ``rolling_resistance``: coefficient,
      [0, 1); ``drag_area``: C_d A, [0, inf) m^2; ``air_density``: [0, inf) kg/m^3.
    - ``brake_light_threshold``: a brake command above this lights the brake light, [0, 1).
    """

    name: str
    mass: float
    pitch_inertia: float
    wheelbase: float
    cg_to_front_axle: float
    cg_height: float
    wheel_radius: np.ndarray
    rake: float
    suspension_length: np.ndarray
    suspension_travel: np.ndarray
    free_length: np.ndarray
    spring_stiffness: np.ndarray
    damping: np.ndarray
    max_brake_torque: np.ndarray
    max_drive_torque: float = 0.0
    friction: float = 1.0
    rolling_resistance: float = 0.015
    drag_area: float = 0.4
    air_density: float = 1.2
    bump_stop_factor: float = 20.0
    brake_light_threshold: float = 0.02
    gravity: float = field(default=GRAVITY)

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name == "name":
                continue
            value = getattr(self, f.name)
            if f.name in _PER_WHEEL:
                a = np.array(value, dtype=np.float64)
                if a.shape != (2,):
                    raise ValueError(f"MotorcycleParams.{f.name} needs two values (front, rear), got shape "
                                     f"{a.shape}")
                a.setflags(write=False)
                object.__setattr__(self, f.name, a)
            else:
                object.__setattr__(self, f.name, float(value))

    @property
    def cg_to_rear_axle(self) -> float:
        """Horizontal distance from the centre of mass back to the rear axle (m)."""
        return self.wheelbase - self.cg_to_front_axle

    @property
    def axle_description(self) -> AxleDescription:
        """Two axles of one wheel each (front 0, rear 1): what per-wheel PVD objects are made from."""
        return MOTORCYCLE_AXLES

    @property
    def static_loads(self) -> np.ndarray:
        """(2,) wheel loads at rest on level ground (N): m g b / L front, m g a / L rear."""
        w = self.mass * self.gravity
        return np.array([w * self.cg_to_rear_axle, w * self.cg_to_front_axle]) / self.wheelbase

    def replace(self, **changes: object) -> MotorcycleParams:
        """A copy with some fields replaced."""
        return replace(self, **changes)

    def validate(self) -> None:
        """Raise ``ValueError`` naming the field (and wheel) that is out of range."""
        c = "MotorcycleParams"

        def positive(name: str, value: float) -> None:
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"{c}.{name} must be a finite number greater than zero, got {value!r}")

        def non_negative(name: str, value: float) -> None:
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"{c}.{name} must be a finite number >= 0, got {value!r}")

        for name in ("mass", "pitch_inertia", "wheelbase", "cg_to_front_axle", "cg_height", "friction",
                     "bump_stop_factor", "gravity"):
            positive(name, getattr(self, name))
        for name in ("max_drive_torque", "drag_area", "air_density", "rolling_resistance",
                     "brake_light_threshold"):
            non_negative(name, getattr(self, name))
        if not self.cg_to_front_axle < self.wheelbase:
            raise ValueError(f"{c}.cg_to_front_axle ({self.cg_to_front_axle}) must be less than the "
                             f"wheelbase ({self.wheelbase})")
        if not 0.0 <= self.rake < math.pi / 3:
            raise ValueError(f"{c}.rake must be in [0, pi/3) rad, got {self.rake}")
        if not self.rolling_resistance < 1.0 or not self.brake_light_threshold < 1.0:
            raise ValueError(f"{c}.rolling_resistance and brake_light_threshold must be < 1")
        for name in _PER_WHEEL:
            a = getattr(self, name)
            for i, label in enumerate(("front", "rear")):
                check = non_negative if name in ("damping", "max_brake_torque") else positive
                check(f"{name}[{i}] ({label})", float(a[i]))
        for i, label in enumerate(("front", "rear")):
            if not self.wheel_radius[i] < self.cg_height:
                raise ValueError(f"{c}.wheel_radius[{i}] ({label}) must be below cg_height")
            if not self.free_length[i] >= self.suspension_length[i]:
                raise ValueError(f"{c}.free_length[{i}] ({label}) must be at least suspension_length "
                                 "(the spring cannot pull)")
            if not self.free_length[i] - self.suspension_travel[i] > 0.0:
                raise ValueError(f"{c}.suspension_travel[{i}] ({label}) must be shorter than free_length")

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> MotorcycleParams:
        """Lengths x s, inertia and torques x s^2, stiffness unchanged (force/length: mass/time^2),
        damping unchanged, forces' areas x s^2, density / s^3; the model's axes are SAE J670 by
        definition, so frames do not change the numbers."""
        s = scale_ratio(src_scale, trg_scale)
        return replace(
            self, pitch_inertia=self.pitch_inertia * s * s, wheelbase=self.wheelbase * s,
            cg_to_front_axle=self.cg_to_front_axle * s, cg_height=self.cg_height * s,
            wheel_radius=self.wheel_radius * s, suspension_length=self.suspension_length * s,
            suspension_travel=self.suspension_travel * s, free_length=self.free_length * s,
            max_brake_torque=self.max_brake_torque * s * s, max_drive_torque=self.max_drive_torque * s * s,
            drag_area=self.drag_area * s * s, air_density=self.air_density / s ** 3, gravity=self.gravity * s)
