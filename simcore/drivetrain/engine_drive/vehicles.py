"""Engine-drive vehicles: PhysX's reference car, a multi-axle truck and a tank.

Each ``*_params`` function returns validated :class:`~simcore.vehicle.VehicleParams` (in the
default frame — X forward, Y left, Z up — and metres unless ``frame``/``scale`` are given), and
:func:`make_vehicle` turns params into a :class:`~simcore.vehicle.Vehicle` at rest on the road,
in first gear. The truck and tank are built by :func:`multi_axle_params` from a handful of
physical numbers: axles with two wheels each (even ids on the right / negative lateral side, odd
ids on the left), sprung masses from the centre of mass (``compute_sprung_masses``), springs from
a ride frequency and damping ratio, tires from the rest load with the reference car's stiffness
ratios.

Limits: at most 20 wheels (``MAX_NB_WHEELS``); more raise ``ValueError`` from the axle
description.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from simcore.axle import AxleDescription
from simcore.braking.params import BrakeCommandResponseParams
from simcore.drivetrain.engine_drive.components import engage_first_gear
from simcore.drivetrain.engine_drive.params import (
    AutoboxParams,
    ClutchAccuracyMode,
    ClutchCommandResponseParams,
    ClutchParams,
    EngineParams,
    GearboxParams,
    MultiWheelDriveDifferentialParams,
    TankDriveDifferentialParams,
    TankDriveModel,
)
from simcore.frame import DEFAULT_FRAME, Axis, Frame, Scale
from simcore.io.physx_json import load_physx_vehicle
from simcore.limits import MAX_NB_WHEELS
from simcore.rigid_body.params import RigidBodyParams
from simcore.road.geometry import RoadGeometry
from simcore.steering.params import AckermannParams, SteerCommandResponseParams
from simcore.suspension.helpers import compute_sprung_masses
from simcore.suspension.params import (
    SuspensionComplianceParams,
    SuspensionForceParams,
    SuspensionParams,
    SuspensionStateCalculationParams,
)
from simcore.tire.params import TireForceParams
from simcore.vehicle import DEFAULT_NB_SUBSTEPS, Vehicle, VehicleParams
from simcore.wheel.params import WheelParams

GRAVITY = 9.81

#: Reference car tire stiffnesses relative to its rest load (24525 / 5628.7 and 118700 / 5628.7).
LONG_STIFFNESS_PER_REST_LOAD = 4.357
LAT_STIFFNESS_PER_REST_LOAD = 21.09


def engine_drive_car(differential: str = "multi_wheel", frame: Frame | None = None,
                     scale: Scale | float | None = None) -> VehicleParams:
    """PhysX's snippet sedan (``Base.json``) with the ``EngineDrive.json`` drivetrain.

    ``differential``: ``"multi_wheel"`` (open, four wheels), ``"four_wheel"`` (limited slip,
    biases 1.3 / targets 1.29) or ``"tank"`` (the file's two tracks). Kept in the file's frame
    (Y up, Z forward) unless ``frame``/``scale`` are given.
    """
    return load_physx_vehicle(drivetrain="engine", differential=differential, frame=frame, scale=scale)


@dataclass(frozen=True)
class EngineDriveSpec:
    """Engine, gearbox, autobox and clutch of a built vehicle (units: metres, kg, s)."""

    peak_torque: float = 500.0
    engine_moi: float = 1.0
    max_omega: float = 600.0
    idle_omega: float = 0.0
    torque_curve: tuple[tuple[float, float], ...] = ((0.0, 1.0), (0.33, 1.0), (1.0, 1.0))
    damping_full_throttle: float = 0.15
    damping_zero_throttle_engaged: float = 2.0
    damping_zero_throttle_disengaged: float = 0.35
    ratios: tuple[float, ...] = (-4.0, 0.0, 4.0, 2.0, 1.5, 1.1, 1.0)
    neutral_gear: int = 1
    final_ratio: float = 4.0
    switch_time: float = 0.5
    up_ratio: float = 0.65
    down_ratio: float = 0.5
    latency: float = 2.0
    clutch_strength: float = 10.0
    accuracy_mode: ClutchAccuracyMode = ClutchAccuracyMode.BEST_POSSIBLE
    estimate_iterations: int = 5

    def build(self) -> tuple[EngineParams, GearboxParams, AutoboxParams, ClutchCommandResponseParams,
                             ClutchParams]:
        """The params objects for this spec."""
        n = len(self.ratios)
        return (
            EngineParams(np.array(self.torque_curve), self.engine_moi, self.peak_torque, self.idle_omega,
                         self.max_omega, self.damping_full_throttle, self.damping_zero_throttle_engaged,
                         self.damping_zero_throttle_disengaged),
            GearboxParams(np.array(self.ratios), self.neutral_gear, self.final_ratio, self.switch_time),
            AutoboxParams(np.full(n, self.up_ratio), np.full(n, self.down_ratio), self.latency),
            ClutchCommandResponseParams(self.clutch_strength),
            ClutchParams(self.accuracy_mode, self.estimate_iterations),
        )


def multi_axle_params(
    axle_positions: Sequence[float],
    track_width: float,
    *,
    mass: float,
    moi: Sequence[float],
    wheel_radius: float,
    wheel_mass: float,
    wheel_moi: float,
    wheel_half_width: float = 0.15,
    wheel_damping_rate: float = 0.25,
    attachment_height: float = 0.0,
    travel_dist: float = 0.3,
    ride_frequency: float = 1.5,
    damping_ratio: float = 0.3,
    long_stiffness_per_rest_load: float = LONG_STIFFNESS_PER_REST_LOAD,
    driven_axles: Sequence[int] = (),
    steered_axles: Sequence[int] = (0,),
    max_steer: float = 0.5,
    brake_torque: float = 2000.0,
    handbrake_axles: Sequence[int] = (),
    engine: EngineDriveSpec | None = None,
    differential: str = "multi_wheel",
    tank_drive_model: TankDriveModel | str = TankDriveModel.SPECIAL,
) -> VehicleParams:
    """Params of a vehicle with two wheels per axle, default frame, metres.

    ``axle_positions``: longitudinal position of each axle relative to the centre of mass
    (front first). ``attachment_height``: suspension attachments' height above the centre of
    mass; wheels hang ``travel_dist`` below at full droop. Wheel spin is integrated explicitly in
    the tire torque, so a free-rolling wheel near rest is stable only while
    ``dt * long_stiff * radius^2 / (moi * min_passive_long_slip_denominator) < 2``: heavy axles
    need a large ``wheel_moi`` or a lower ``long_stiffness_per_rest_load``. ``driven_axles`` share the engine
    torque equally (all axles when empty). ``differential``: ``"multi_wheel"`` (open) or
    ``"tank"``, whose two tracks are the right wheels (track 0, thrust 0, brake channel 0) and
    the left wheels (track 1, thrust 1, brake channel 1 = the handbrake slot); a tank does not
    steer its wheels. Raises ``ValueError`` for more than 20 wheels or invalid values.
    """
    nb_axles = len(axle_positions)
    n = 2 * nb_axles
    if n > MAX_NB_WHEELS:
        raise ValueError(
            f"multi_axle_params: {nb_axles} axles make {n} wheels; at most {MAX_NB_WHEELS} wheels")
    tank = differential == "tank"
    if differential not in ("multi_wheel", "tank"):
        raise ValueError(
            f"multi_axle_params: differential must be 'multi_wheel' or 'tank', got {differential!r}")
    axles = AxleDescription([[2 * a, 2 * a + 1] for a in range(nb_axles)])
    half = 0.5 * track_width
    pos = np.array([[x, side * half, attachment_height] for x in axle_positions for side in (-1.0, 1.0)])

    sprung = compute_sprung_masses(pos, mass, Axis.POS_Z)
    omega = 2.0 * math.pi * ride_frequency
    stiffness = sprung * omega * omega
    damping = 2.0 * damping_ratio * np.sqrt(stiffness * sprung)
    sag = sprung * GRAVITY / stiffness
    if np.any(sag >= travel_dist):
        raise ValueError("multi_axle_params: the springs sag beyond travel_dist; raise ride_frequency")
    wheel_centre_drop = travel_dist - sag  # below the attachment at rest

    suspension = SuspensionParams.from_wheels([
        dict(suspension_attachment_pos=p, suspension_travel_dir=(0.0, 0.0, -1.0),
             suspension_travel_dist=travel_dist) for p in pos])
    app = [(0.0, (0.0, 0.0, -float(d))) for d in wheel_centre_drop]
    compliance = SuspensionComplianceParams.from_wheels([
        {"susp_force_app_point": [a], "tire_force_app_point": [a]} for a in app])
    force = SuspensionForceParams(stiffness, damping, sprung)
    rest_load = (sprung + wheel_mass) * GRAVITY
    tire = TireForceParams(
        lat_stiff_x=np.full(n, 0.01), lat_stiff_y=LAT_STIFFNESS_PER_REST_LOAD * rest_load,
        long_stiff=long_stiffness_per_rest_load * rest_load, camber_stiff=np.zeros(n),
        friction_vs_slip=np.tile([[0.0, 1.0], [0.1, 1.0], [1.0, 1.0]], (n, 1, 1)), rest_load=rest_load,
        load_filter=np.tile([[0.0, 0.2308], [3.0, 3.0]], (n, 1, 1)))
    wheel = WheelParams(np.full(n, wheel_radius), np.full(n, wheel_half_width), np.full(n, wheel_mass),
                        np.full(n, wheel_moi), np.full(n, wheel_damping_rate))

    right = np.array([1.0 if w % 2 == 0 else 0.0 for w in range(n)])
    if tank:
        brakes = (BrakeCommandResponseParams(brake_torque, right),
                  BrakeCommandResponseParams(brake_torque, 1.0 - right))
        steer = SteerCommandResponseParams(0.0, np.zeros(n))
        ackermann: tuple[AckermannParams, ...] = ()
    else:
        hand = np.zeros(n)
        for a in handbrake_axles:
            hand[2 * a: 2 * a + 2] = 1.0
        brakes = (BrakeCommandResponseParams(brake_torque, np.ones(n)),
                  BrakeCommandResponseParams(brake_torque if len(handbrake_axles) else 0.0, hand))
        steer_mult = np.zeros(n)
        for a in steered_axles:
            steer_mult[2 * a: 2 * a + 2] = 1.0
        steer = SteerCommandResponseParams(max_steer, steer_mult)
        rear = [a for a in range(nb_axles) if a not in steered_axles]
        ackermann = ()
        if len(steered_axles) == 1 and rear:
            base = axle_positions[steered_axles[0]] - float(np.mean([axle_positions[a] for a in rear]))
            s0 = steered_axles[0]
            ackermann = (AckermannParams((2 * s0, 2 * s0 + 1), abs(base), track_width, 1.0),)

    driven = list(driven_axles) if len(driven_axles) else list(range(nb_axles))
    ratios = np.zeros(n)
    for a in driven:
        ratios[2 * a: 2 * a + 2] = 1.0
    ratios /= ratios.sum()
    spec = engine if engine is not None else EngineDriveSpec()
    eng, gearbox, autobox, clutch_response, clutch = spec.build()
    if tank:
        diff: MultiWheelDriveDifferentialParams = TankDriveDifferentialParams(
            ratios, ratios, tracks=(tuple(range(0, n, 2)), tuple(range(1, n, 2))),
            drive_model=TankDriveModel.parse(tank_drive_model))
    else:
        diff = MultiWheelDriveDifferentialParams(ratios, ratios)

    params = VehicleParams(
        axle_description=axles, rigid_body=RigidBodyParams(mass, np.asarray(moi, dtype=np.float64)),
        suspension_state_calculation=SuspensionStateCalculationParams(),
        suspension=suspension, suspension_compliance=compliance, suspension_force=force, tire_force=tire,
        wheel=wheel, brake_command_response=brakes, steer_command_response=steer, ackermann=ackermann,
        frame=DEFAULT_FRAME, scale=Scale(1.0), engine=eng, gearbox=gearbox, autobox=autobox,
        clutch_command_response=clutch_response, clutch=clutch, differential=diff,
    )
    params.validate()
    return params


def _box_moi(mass: float, length: float, width: float, height: float) -> list[float]:
    """Principal moments of a uniform box, about (forward, left, up)."""
    return [mass / 12.0 * (width ** 2 + height ** 2), mass / 12.0 * (length ** 2 + height ** 2),
            mass / 12.0 * (length ** 2 + width ** 2)]


#: The truck's engine: a torquier, heavier engine than the car's on the same gearbox.
TRUCK_ENGINE = EngineDriveSpec(peak_torque=1500.0, engine_moi=2.0, damping_full_throttle=0.3,
                               damping_zero_throttle_engaged=4.0, damping_zero_throttle_disengaged=0.7,
                               clutch_strength=30.0)
#: The tank's engine.
TANK_ENGINE = EngineDriveSpec(peak_torque=2500.0, engine_moi=3.0, damping_full_throttle=0.45,
                              damping_zero_throttle_engaged=6.0, damping_zero_throttle_disengaged=1.0,
                              clutch_strength=50.0, ratios=(-5.0, 0.0, 5.0, 3.0, 2.0, 1.4),
                              final_ratio=5.0)


def truck_params(nb_axles: int = 3, mass: float = 10000.0, frame: Frame | None = None,
                 scale: Scale | float | None = None, engine: EngineDriveSpec = TRUCK_ENGINE) -> VehicleParams:
    """A rigid truck: a steered front axle and ``nb_axles - 1`` driven rear axles 1.3 m apart
    (``nb_axles`` >= 3, so 6 or more wheels), open multi-wheel differential on the rear axles,
    handbrake on the rear axles. Centre of mass 2.0 m behind the front axle. Wheels of 25 kg m^2
    (hub and brake drum included) and softer tires than the car keep the heavily loaded front
    wheels stable down to rest at 90 substeps per second."""
    if nb_axles < 3:
        raise ValueError(f"truck_params: a truck needs at least 3 axles, got {nb_axles}")
    front = 2.0
    rear0 = -2.0
    positions = [front] + [rear0 - 1.3 * i for i in range(nb_axles - 1)]
    length = front - positions[-1] + 2.0
    params = multi_axle_params(
        positions, 2.0, mass=mass, moi=_box_moi(mass, length, 2.4, 2.0), wheel_radius=0.5, wheel_mass=100.0,
        wheel_moi=25.0, wheel_half_width=0.2, attachment_height=0.3, travel_dist=0.35, ride_frequency=1.6,
        long_stiffness_per_rest_load=2.0,
        driven_axles=range(1, nb_axles), steered_axles=(0,), max_steer=0.5,
        brake_torque=mass * GRAVITY * 0.5 * 0.9 / (2 * nb_axles), handbrake_axles=range(1, nb_axles),
        engine=engine)
    return _convert(params, frame, scale)


def tank_params(nb_wheels: int = 10, drive_model: TankDriveModel | str = TankDriveModel.SPECIAL,
                mass: float = 20000.0, frame: Frame | None = None, scale: Scale | float | None = None,
                engine: EngineDriveSpec = TANK_ENGINE) -> VehicleParams:
    """A tank with ``nb_wheels`` road wheels (even, 4..20) in two tracks 2.6 m apart, 0.9 m wheel
    spacing, every wheel driven through the tank differential.

    Track 0 is the right side (thrust 0, brake channel 0), track 1 the left (thrust 1, brake
    channel 1). ``drive_model``: Stingray's ``"standard"`` (tracks only drive forwards) or
    ``"special"`` (forwards and backwards). The wheels' inertia includes their share of the track.
    """
    if nb_wheels % 2 or not 4 <= nb_wheels <= MAX_NB_WHEELS:
        raise ValueError(f"tank_params: nb_wheels must be even and in 4..{MAX_NB_WHEELS}, got {nb_wheels}")
    per_side = nb_wheels // 2
    spacing = 0.9
    positions = [spacing * (0.5 * (per_side - 1) - i) for i in range(per_side)]
    length = spacing * (per_side - 1) + 2.0
    params = multi_axle_params(
        positions, 2.6, mass=mass, moi=_box_moi(mass, length, 3.4, 2.2), wheel_radius=0.35, wheel_mass=80.0,
        wheel_moi=10.0, wheel_half_width=0.3, attachment_height=0.2, travel_dist=0.3, ride_frequency=1.5,
        brake_torque=mass * GRAVITY * 0.35 * 0.8 / nb_wheels * 2.0, engine=engine, differential="tank",
        tank_drive_model=drive_model)
    return _convert(params, frame, scale)


def _convert(params: VehicleParams, frame: Frame | None, scale: Scale | float | None) -> VehicleParams:
    if frame is None and scale is None:
        return params
    return params.to(frame if frame is not None else params.frame, scale)


def make_vehicle(params: VehicleParams, road: RoadGeometry | None = None,
                 nb_substeps: int = DEFAULT_NB_SUBSTEPS) -> Vehicle:
    """A :class:`Vehicle` for ``params`` at rest on the road (wheels touching at full droop),
    in first gear with the automatic gear selected (first gear without an autobox)."""
    vehicle = Vehicle(params, road=road, nb_substeps=nb_substeps)
    vehicle.place_on_road()
    engage_first_gear(vehicle)
    return vehicle
