"""The three motorcycle types of the Simulation 3D Motorcycle block: sports bike, motor bike and
scooter.

The block's documentation names the types and links to mesh dimensions that the seed does not
include, so the numbers here are simcore's own, chosen to be typical of each class with an
80 kg (scooter 75 kg) rider: a light, short, front-biased sports bike with a steep fork; a
heavier, longer standard motor bike; a small-wheeled, rear-biased scooter. Springs are sized from
a static sag (30 % of travel) so that the design geometry is the static pose, and damped at
half of critical for the share of the weight each wheel carries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simcore.motorcycle.params import GRAVITY, MotorcycleParams

#: Fraction of the suspension travel used by the static load.
STATIC_SAG = 0.30
#: Damping as a fraction of critical, per wheel.
DAMPING_RATIO = 0.5


@dataclass(frozen=True)
class MotorcycleDesign:
    """Class-typical numbers from which :func:`design_params` derives springs and free lengths
    (units as :class:`~simcore.motorcycle.params.MotorcycleParams`; ``rake_deg`` in degrees)."""

    name: str
    mass: float
    pitch_inertia: float
    wheelbase: float
    front_load_fraction: float
    cg_height: float
    wheel_radius: tuple[float, float]
    rake_deg: float
    suspension_length: tuple[float, float]
    suspension_travel: tuple[float, float]
    max_brake_torque: tuple[float, float]
    max_drive_torque: float
    drag_area: float


def design_params(d: MotorcycleDesign, sag: float = STATIC_SAG,
                  zeta: float = DAMPING_RATIO) -> MotorcycleParams:
    """Params whose static equilibrium on level ground is the design pose: each spring's static
    compression is ``sag`` of its travel under the static wheel load (along the fork for the front:
    axial force = load x cos(rake))."""
    a = d.wheelbase * (1.0 - d.front_load_fraction)  # centre of mass to the front axle
    b = d.wheelbase - a
    w = d.mass * GRAVITY
    loads = np.array([w * b, w * a]) / d.wheelbase
    rake = math.radians(d.rake_deg)
    axial = loads * np.array([math.cos(rake), 1.0])
    travel = np.array(d.suspension_travel)
    static_compression = sag * travel
    k = axial / static_compression
    c = 2.0 * zeta * np.sqrt(k * loads / GRAVITY)
    return MotorcycleParams(
        name=d.name, mass=d.mass, pitch_inertia=d.pitch_inertia, wheelbase=d.wheelbase, cg_to_front_axle=a,
        cg_height=d.cg_height, wheel_radius=np.array(d.wheel_radius), rake=rake,
        suspension_length=np.array(d.suspension_length), suspension_travel=travel,
        free_length=np.array(d.suspension_length) + static_compression, spring_stiffness=k, damping=c,
        max_brake_torque=np.array(d.max_brake_torque), max_drive_torque=d.max_drive_torque,
        drag_area=d.drag_area)


SPORTS_BIKE = MotorcycleDesign(
    name="sports_bike", mass=270.0, pitch_inertia=55.0, wheelbase=1.40, front_load_fraction=0.52,
    cg_height=0.60, wheel_radius=(0.30, 0.31), rake_deg=24.0, suspension_length=(0.55, 0.30),
    suspension_travel=(0.12, 0.13), max_brake_torque=(1200.0, 400.0), max_drive_torque=900.0, drag_area=0.35)
MOTOR_BIKE = MotorcycleDesign(
    name="motor_bike", mass=330.0, pitch_inertia=85.0, wheelbase=1.50, front_load_fraction=0.50,
    cg_height=0.65, wheel_radius=(0.32, 0.33), rake_deg=27.0, suspension_length=(0.60, 0.32),
    suspension_travel=(0.13, 0.12), max_brake_torque=(1000.0, 450.0), max_drive_torque=800.0, drag_area=0.50)
SCOOTER = MotorcycleDesign(
    name="scooter", mass=200.0, pitch_inertia=30.0, wheelbase=1.30, front_load_fraction=0.44,
    cg_height=0.55, wheel_radius=(0.22, 0.22), rake_deg=27.0, suspension_length=(0.40, 0.25),
    suspension_travel=(0.09, 0.08), max_brake_torque=(500.0, 350.0), max_drive_torque=300.0, drag_area=0.45)

#: Preset name -> design. Names follow the block's "Type" values (Sports bike, Motor bike, Scooter).
PRESETS: dict[str, MotorcycleDesign] = {d.name: d for d in (SPORTS_BIKE, MOTOR_BIKE, SCOOTER)}
#: The block's default type.
DEFAULT_PRESET = "sports_bike"


def motorcycle_preset(name: str = DEFAULT_PRESET) -> MotorcycleParams:
    """Params of a preset: ``sports_bike``, ``motor_bike`` or ``scooter`` (also accepted: the block's
    spellings "Sports bike", "Motor bike", "Scooter", any case, with spaces or dashes)."""
    key = name.strip().lower().replace(" ", "_").replace("-", "_")
    if key not in PRESETS:
        raise ValueError(f"unknown motorcycle type {name!r}; available: {', '.join(PRESETS)}")
    return design_params(PRESETS[key])
