"""A recorded Vehicle2 vehicle's object graph and its params as simcore's :class:`VehicleParams`.

Why: a replay must run simcore with exactly the params PhysX ran with, and PhysX records them in
its own layout (``simcore/pvd/schema.py`` declares it attribute by attribute): per-wheel objects
under ``WheelAttachment{i}``, vehicle-level arrays padded to 20 wheels in chunks of four, gear
ratios padded to 32 and torque curves to 8 points with ``PX_MAX_F32``, compliance tables with
``x = -1`` for unused points, tank tracks as offsets into ``wheelIdsInTrackOrder``. This module
undoes that layout.

Not recorded by PhysX, so set to Vehicle2's behaviour (documented where used): the axle
description (wheels grouped by longitudinal position), command non-linear response tables
(none), the length scale (1), ``FourWheelDriveDifferentialParams.rate`` (0) and
``predict_breach`` (False: Vehicle2 checks the biases at the start of an update only), and the
tank drive model (SPECIAL: Vehicle2's tracks are driven both ways).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pvdkit.recording import Object
from simcore.axle import AxleDescription
from simcore.braking import BrakeCommandResponseParams
from simcore.drivetrain.direct_drive import DirectDriveThrottleCommandResponseParams
from simcore.drivetrain.engine_drive.params import (
    AutoboxParams,
    ClutchCommandResponseParams,
    ClutchParams,
    EngineParams,
    FourWheelDriveDifferentialParams,
    GearboxParams,
    MultiWheelDriveDifferentialParams,
    TankDriveDifferentialParams,
    TankDriveModel,
)
from simcore.frame import Frame
from simcore.replay.recorded_source import UNUSED, RecordingError, Source, _as_bool
from simcore.rigid_body import RigidBodyParams
from simcore.rigid_body.constraints import SuspensionLimitConstraintParams, SuspensionLimitDirection
from simcore.road import RoadGeometryQueryType
from simcore.road.params import RoadGeometryQueryParams
from simcore.steering import SteerCommandResponseParams
from simcore.steering.params import AckermannParams
from simcore.suspension.params import (
    AntiRollBarParams,
    JounceCalculationType,
    SuspensionComplianceParams,
    SuspensionForceParams,
    SuspensionParams,
    SuspensionStateCalculationParams,
)
from simcore.tire.params import TireForceParams
from simcore.vehicle import VehicleParams
from simcore.wheel.params import WheelParams

#: PhysX's names of the chunked per-wheel attributes.
MULTIPLIERS = ("wheelMultipliers0To3", "wheelMultipliers4To7", "wheelMultipliers8To11",
               "wheelMultipliers12To15", "wheelMultipliers16To19")
RESPONSE_STATES = ("wheelStates0To3", "wheelStatess4To7", "wheelStates8To11", "wheelStates12To15",
                   "wheelStates16To19")  # PhysX's spelling, "wheelStatess4To7" included
THROTTLE_STATES = ("responseState0To3", "responseState4To7", "responseState8To11", "responseState12To15",
                   "responseState16To19")
_SUFFIXES = ("0To3", "4To7", "8To11", "12To15", "16To19")
TORQUE_RATIOS = tuple("torqueRatios" + s for s in _SUFFIXES)
AVE_SPEED_RATIOS = tuple("aveWheelSpeedRatios" + s for s in _SUFFIXES)

#: Sticky-tire constraint damping (longitudinal, lateral) of Vehicle2's snippets and Omni's
#: vehicle extension, used when the recording never shows an active sticky row.
DEFAULT_STICKY_DAMPING = (200.0, 20.0)
#: ``FourWheelDriveDifferentialParams.rate`` is not recorded; Vehicle2's ``setToDefault`` leaves
#: it unset and simcore's default is 0 (no limited-slip correction).
DEFAULT_FOUR_WHEEL_RATE = 0.0

#: PhysX's ``SuspJounceCalculationType`` numbers -> simcore's (``none`` = 2 has no counterpart).
_JOUNCE = {0: JounceCalculationType.RAYCAST, 1: JounceCalculationType.SWEEP}


@dataclass
class VehicleGraph:
    """The recorded objects of one vehicle: the Vehicle object, its wheels, drivetrain and actor.

    ``frame`` is the pvdkit frame params are read at (step 0's Vehicle2 frame); ``label`` the
    name errors use (the chassis actor's name once known).
    """

    vehicle: Object
    label: str
    frame: int
    wheels: list[Object]
    physx_wheels: list[Object]
    drivetrain: Object
    kind: str
    actor: Object

    @property
    def nb_wheels(self) -> int:
        return len(self.wheels)


def vehicle_graph(src: Source, vehicle: Object, frame: int) -> VehicleGraph:
    """Find the vehicle's wheels, drivetrain (and its kind) and chassis actor."""
    label = f"Vehicle 0x{vehicle.handle:x}"
    if not src.maybe(vehicle, "physxRigidActor", frame):
        raise src.error(label, "Vehicle.physxRigidActor",
                        f"the PhysX chassis actor, set by frame {frame} (a recording made by PhysX; "
                        "simcore's own recordings have no PhysX actors)")
    holder = src.link(vehicle, "physxRigidActor", frame, label)
    actor = src.link(holder, "rigidActor", frame, label)
    name = src.maybe(actor, "name", frame)
    if isinstance(name, str) and name:
        label = name
    wheels = src.links(vehicle, "wheelAttachmentSet", frame, label)
    if not wheels:
        raise src.error(label, "Vehicle.wheelAttachmentSet", "at least one wheel")
    physx_wheels = src.links(vehicle, "physxWheelAttachmentSet", frame, label)
    engine = src.maybe_link(vehicle, "engineDrivetrain", frame)
    direct = src.maybe_link(vehicle, "directDrivetrain", frame)
    if engine is not None:
        diff = src.link(engine, "differentialParams", frame, label)
        kind = "tank" if diff.cls is not None and diff.cls.is_a("TankDiffParams") else "engine"
        drivetrain = engine
    elif direct is not None:
        has_commands = src.maybe_link(direct, "commandState", frame) is not None
        kind = "direct" if has_commands else "raw"
        drivetrain = direct
    else:
        raise src.error(label, "Vehicle.directDrivetrain/engineDrivetrain", "a drivetrain object")
    return VehicleGraph(vehicle, label, frame, wheels, physx_wheels, drivetrain, kind, actor)


# ----------------------------------------------------------------------------------------------
# Per-wheel params
# ----------------------------------------------------------------------------------------------


def _wheel_objects(src: Source, g: VehicleGraph, attr: str) -> list[Object]:
    return [src.link(w, attr, g.frame, g.label) for w in g.wheels]


def _table(values: np.ndarray, vector: bool) -> list[tuple[float, object]]:
    """A compliance table ``x0 y0 x1 y1 …`` (``y`` a 3-vector for points); ``x = -1``: unused."""
    step = 4 if vector else 2
    rows = values.reshape(-1, step)
    return [(float(r[0]), r[1:].copy() if vector else float(r[1])) for r in rows if r[0] != -1.0]


def _suspension(src: Source, g: VehicleGraph) -> SuspensionParams:
    f, v = g.frame, g.label
    rows = []
    for w in _wheel_objects(src, g, "suspParams"):
        rows.append({
            "suspension_attachment_pos": src.floats(w, "suspAttachmentPos", f, v, 3),
            "suspension_attachment_quat": src.floats(w, "suspAttachmentQuat", f, v, 4),
            "suspension_travel_dir": src.floats(w, "suspDir", f, v, 3),
            "suspension_travel_dist": src.number(w, "suspTravelDist", f, v),
            "wheel_attachment_pos": src.floats(w, "wheelAttachmentPos", f, v, 3),
            # PhysX registers 3 elements and writes the whole quaternion.
            "wheel_attachment_quat": src.floats(w, "wheelAttachmentQuat", f, v, 4),
        })
    return SuspensionParams.from_wheels(rows)


def _compliance(src: Source, g: VehicleGraph) -> SuspensionComplianceParams:
    f, v = g.frame, g.label
    rows = []
    for w in _wheel_objects(src, g, "suspComplianceParams"):
        rows.append({
            "wheel_toe_angle": _table(src.floats(w, "toeAngle", f, v, 6), False),
            "wheel_camber_angle": _table(src.floats(w, "camberAngle", f, v, 6), False),
            "susp_force_app_point": _table(src.floats(w, "suspForceAppPoint", f, v, 12), True),
            "tire_force_app_point": _table(src.floats(w, "tireForceAppPoint", f, v, 12), True),
        })
    return SuspensionComplianceParams.from_wheels(rows)


def _suspension_force(src: Source, g: VehicleGraph) -> SuspensionForceParams:
    f, v = g.frame, g.label
    return SuspensionForceParams.from_wheels([
        {"stiffness": src.number(w, "stiffness", f, v), "damping": src.number(w, "damping", f, v),
         "sprung_mass": src.number(w, "sprungMass", f, v)}
        for w in _wheel_objects(src, g, "suspForceParams")])


def _tire(src: Source, g: VehicleGraph) -> TireForceParams:
    f, v = g.frame, g.label
    return TireForceParams.from_wheels([
        {"lat_stiff_x": src.number(w, "latStiffX", f, v), "lat_stiff_y": src.number(w, "latStiffY", f, v),
         "long_stiff": src.number(w, "longStiff", f, v), "camber_stiff": src.number(w, "camberStiff", f, v),
         "friction_vs_slip": src.floats(w, "frictionVsSlip", f, v, 6).reshape(3, 2),
         "rest_load": src.number(w, "restLoad", f, v),
         "load_filter": src.floats(w, "loadFilter", f, v, 4).reshape(2, 2)}
        for w in _wheel_objects(src, g, "tireParams")])


def _wheel(src: Source, g: VehicleGraph) -> WheelParams:
    f, v = g.frame, g.label
    return WheelParams.from_wheels([
        {"radius": src.number(w, "radius", f, v), "half_width": src.number(w, "halfWidth", f, v),
         "mass": src.number(w, "mass", f, v), "moi": src.number(w, "moi", f, v),
         "damping_rate": src.number(w, "dampingRate", f, v)}
        for w in _wheel_objects(src, g, "wheelParams")])


def axle_description(suspension: SuspensionParams, frame: Frame) -> AxleDescription:
    """Wheels grouped into axles by longitudinal attachment position (PhysX does not record the
    axle description): wheels within 1 cm of each other share an axle; axles in order of their
    lowest wheel id, wheels in id order — ``((0, 1), (2, 3))`` for a car."""
    lng = np.asarray(suspension.suspension_attachment_pos, dtype=np.float64) @ frame.lng
    axles: list[list[int]] = []
    keys: list[float] = []
    for w, x in enumerate(lng.tolist()):
        for a, k in enumerate(keys):
            if abs(x - k) < 0.01:
                axles[a].append(w)
                break
        else:
            keys.append(x)
            axles.append([w])
    return AxleDescription(axles)


# ----------------------------------------------------------------------------------------------
# Vehicle-level params
# ----------------------------------------------------------------------------------------------


def _response(src: Source, obj: Object, g: VehicleGraph) -> tuple[float, np.ndarray]:
    return (src.number(obj, "maxResponse", g.frame, g.label),
            src.chunks(obj, MULTIPLIERS, g.frame, g.label, g.nb_wheels))


def _ackermann(src: Source, g: VehicleGraph) -> tuple[AckermannParams, ...]:
    obj = src.maybe_link(g.vehicle, "ackermannParams", g.frame)
    if obj is None:
        return ()
    f, v = g.frame, g.label
    ids = src.floats(obj, "wheelIds", f, v, 2).astype(int)
    return (AckermannParams((int(ids[0]), int(ids[1])), src.number(obj, "wheelBase", f, v),
                            src.number(obj, "trackWidth", f, v), src.number(obj, "strength", f, v)),)


def _anti_roll(src: Source, g: VehicleGraph) -> tuple[AntiRollBarParams, ...]:
    f, v = g.frame, g.label
    bars = src.links(g.vehicle, "antiRollSet", f, v) if src.maybe(g.vehicle, "antiRollSet", f) else []
    return tuple(AntiRollBarParams(src.integer(b, "wheel0", f, v), src.integer(b, "wheel1", f, v),
                                   src.number(b, "stiffness", f, v)) for b in bars)


def _state_calculation(src: Source, g: VehicleGraph) -> SuspensionStateCalculationParams:
    obj = src.link(g.vehicle, "suspStateCalcParams", g.frame, g.label)
    code = src.raw(obj, "suspJounceCalculationType", g.frame, g.label)
    if code not in _JOUNCE:
        raise src.error(g.label, "SuspStateCalculationParams.suspJounceCalculationType",
                        f"raycast (0) or sweep (1), got {code}")
    limit = src.value(obj, "limitSuspensionExpansionVelocity", g.frame, g.label)
    try:
        flag = bool(_as_bool(limit))
    except ValueError:
        raise src.error(g.label, "SuspStateCalculationParams.limitSuspensionExpansionVelocity",
                        f"a boolean, got {limit!r}") from None
    return SuspensionStateCalculationParams(_JOUNCE[code], flag)


def _road_query(src: Source, g: VehicleGraph) -> RoadGeometryQueryParams:
    obj = src.maybe_link(g.vehicle, "physxRoadGeomQryParams", g.frame)
    if obj is None:  # Vehicle2's snippets' choice, and simcore's default
        return RoadGeometryQueryParams()
    code = src.raw(obj, "physxQueryType", g.frame, g.label)
    try:
        return RoadGeometryQueryParams(RoadGeometryQueryType(code))
    except ValueError:
        raise src.error(g.label, "PhysXRoadGeomQueryParams.physxQueryType",
                        f"none (0), raycast (1) or sweep (2), got {code}") from None


def suspension_limit(src: Source, g: VehicleGraph) -> SuspensionLimitConstraintParams:
    """The suspension-limit constraint setting; PhysX has one per wheel, simcore one per vehicle,
    so the wheels must agree."""
    settings = set()
    for w in g.physx_wheels:
        obj = src.link(w, "physxConstraintParams", g.frame, g.label)
        settings.add((src.number(obj, "restitution", g.frame, g.label),
                      src.raw(obj, "directionMode", g.frame, g.label)))
    if not settings:
        return SuspensionLimitConstraintParams()
    if len(settings) > 1:
        raise src.error(g.label, "PhysXSuspLimitConstraintParams.restitution/directionMode",
                        f"one setting for every wheel (simcore has one per vehicle), got {sorted(settings)}")
    restitution, mode = settings.pop()
    try:
        return SuspensionLimitConstraintParams(restitution, SuspensionLimitDirection(mode))
    except ValueError:
        raise src.error(g.label, "PhysXSuspLimitConstraintParams.directionMode",
                        f"0 (suspension), 1 (road normal) or 2 (none), got {mode}") from None


def _engine_parts(src: Source, g: VehicleGraph) -> dict[str, object]:
    f, v, dt = g.frame, g.label, g.drivetrain
    eng = src.link(dt, "engineParams", f, v)
    curve = src.floats(eng, "torqueCurve", f, v).reshape(-1, 2)
    curve = curve[(np.abs(curve[:, 0]) < UNUSED) & (np.abs(curve[:, 1]) < UNUSED)]
    engine = EngineParams(
        torque_curve=curve,
        moi=src.number(eng, "moi", f, v),
        peak_torque=src.number(eng, "peakTorque", f, v),
        idle_omega=src.number(eng, "idleOmega", f, v),
        max_omega=src.number(eng, "maxOmega", f, v),
        damping_rate_full_throttle=src.number(eng, "dampingRateFullThrottleAH", f, v),  # PhysX's spelling
        damping_rate_zero_throttle_clutch_engaged=src.number(
            eng, "dampingRateZeroThrottleClutchEngaged", f, v),
        damping_rate_zero_throttle_clutch_disengaged=src.number(
            eng, "dampingRateZeroThrottleClutchDisengaged", f, v),
    )
    box = src.link(dt, "gearboxParams", f, v)
    nb = src.integer(box, "nbRatios", f, v)
    ratios = src.floats(box, "ratios", f, v)
    if not 1 <= nb <= ratios.shape[0]:
        raise src.error(v, "GearboxParams.nbRatios", f"1..{ratios.shape[0]}, got {nb}")
    gearbox = GearboxParams(ratios[:nb], src.integer(box, "neutralGear", f, v),
                            src.number(box, "finalRatio", f, v), src.number(box, "switchTime", f, v))
    auto = src.link(dt, "autoboxParams", f, v)
    autobox = AutoboxParams(src.floats(auto, "upRatios", f, v)[:nb],
                            src.floats(auto, "downRatios", f, v)[:nb], src.number(auto, "latency", f, v))
    clutch_response = ClutchCommandResponseParams(
        src.number(src.link(dt, "clutchResponseParams", f, v), "MaxResponse", f, v))  # PhysX's capital M
    cp = src.link(dt, "clutchParams", f, v)
    clutch = ClutchParams(src.raw(cp, "accuracyMode", f, v), src.integer(cp, "iterations", f, v))
    return {"engine": engine, "gearbox": gearbox, "autobox": autobox,
            "clutch_command_response": clutch_response, "clutch": clutch,
            "differential": _differential(src, g)}


def _differential(src: Source, g: VehicleGraph) -> object:
    f, v, n = g.frame, g.label, g.nb_wheels
    d = src.link(g.drivetrain, "differentialParams", f, v)
    torque = src.chunks(d, TORQUE_RATIOS, f, v, n)
    ave = src.chunks(d, AVE_SPEED_RATIOS, f, v, n)
    cls = d.cls
    if cls is not None and cls.is_a("TankDiffParams"):
        nb_tracks = src.integer(d, "nbTracks", f, v)
        per_track = src.floats(d, "nbWheelsPerTrack", f, v).astype(int)
        starts = src.floats(d, "trackToWheelIds", f, v).astype(int)  # offsets into the next array
        order = src.floats(d, "wheelIdsInTrackOrder", f, v).astype(int)
        thrust = src.floats(d, "thrustIdPerTrack", f, v).astype(int)
        if min(len(per_track), len(starts), len(thrust)) < nb_tracks:
            raise src.error(v, "TankDiffParams.nbWheelsPerTrack/trackToWheelIds/thrustIdPerTrack",
                            f"{nb_tracks} entries (nbTracks)")
        tracks = []
        for t in range(nb_tracks):
            a, k = int(starts[t]), int(per_track[t])
            if a < 0 or a + k > len(order):
                raise src.error(v, "TankDiffParams.trackToWheelIds",
                                f"track {t} within wheelIdsInTrackOrder ({len(order)} ids), got {a}..{a + k}")
            tracks.append(tuple(int(w) for w in order[a:a + k]))
        return TankDriveDifferentialParams(torque, ave, tracks=tuple(tracks),
                                           thrust_id_per_track=tuple(int(x) for x in thrust[:nb_tracks]),
                                           drive_model=TankDriveModel.SPECIAL)
    if cls is not None and cls.is_a("FourWheelDiffParams"):
        front = src.floats(d, "frontWheels", f, v, 2).astype(int)
        rear = src.floats(d, "rearWheels", f, v, 2).astype(int)
        return FourWheelDriveDifferentialParams(
            torque, ave, front_wheel_ids=(int(front[0]), int(front[1])),
            rear_wheel_ids=(int(rear[0]), int(rear[1])),
            front_bias=src.number(d, "frontBias", f, v), front_target=src.number(d, "frontTarget", f, v),
            rear_bias=src.number(d, "rearBias", f, v), rear_target=src.number(d, "rearTarget", f, v),
            center_bias=src.number(d, "centerBias", f, v), center_target=src.number(d, "centerTarget", f, v),
            rate=DEFAULT_FOUR_WHEEL_RATE, predict_breach=False)
    return MultiWheelDriveDifferentialParams(torque, ave)


def _raw_responses(responses: dict[str, np.ndarray], n: int) -> dict[str, object]:
    """Synthetic command-response params for a vehicle driven by per-wheel torques only (PhysX
    records none; the replay overwrites the responses every step): the largest recorded value
    as ``max_response``, multiplier 1 on every wheel, the handbrake 0."""
    def peak(a: np.ndarray) -> float:
        return float(np.max(np.abs(a))) if a.size else 0.0

    ones = np.ones(n)
    return {
        "brake_command_response": (BrakeCommandResponseParams(peak(responses["brake"]), ones),
                                   BrakeCommandResponseParams(0.0, np.zeros(n))),
        "steer_command_response": SteerCommandResponseParams(min(peak(responses["steer"]), np.pi), ones),
        "direct_drive_throttle_response": DirectDriveThrottleCommandResponseParams(
            peak(responses["drive"]), ones),
    }


def vehicle_params(src: Source, g: VehicleGraph, frame: Frame,
                   raw_responses: dict[str, np.ndarray] | None = None) -> VehicleParams:
    """The vehicle's :class:`VehicleParams` in ``frame`` (validated; RecordingError if simcore
    refuses them). ``raw_responses``: the recorded per-wheel responses of a 'raw' vehicle."""
    f, v, n = g.frame, g.label, g.nb_wheels
    rb = src.link(g.vehicle, "rigidBodyParams", f, v)
    suspension = _suspension(src, g)
    parts: dict[str, object] = {
        "axle_description": axle_description(suspension, frame),
        "rigid_body": RigidBodyParams(src.number(rb, "mass", f, v), src.floats(rb, "moi", f, v, 3)),
        "suspension_state_calculation": _state_calculation(src, g),
        "suspension": suspension,
        "suspension_compliance": _compliance(src, g),
        "suspension_force": _suspension_force(src, g),
        "tire_force": _tire(src, g),
        "wheel": _wheel(src, g),
        "ackermann": _ackermann(src, g),
        "anti_roll_bars": _anti_roll(src, g),
        "road_geometry_query": _road_query(src, g),
        "suspension_limit_constraint": suspension_limit(src, g),
        "frame": frame,
    }
    if g.kind == "raw":
        if raw_responses is None:
            raise src.error(v, "Vehicle", "the recorded per-wheel responses of a raw vehicle")
        parts.update(_raw_responses(raw_responses, n))
    else:
        brakes = [BrakeCommandResponseParams(*_response(src, b, g))
                  for b in src.links(g.vehicle, "brakeResponseParamsSet", f, v)]
        if len(brakes) != 2:
            raise src.error(v, "Vehicle.brakeResponseParamsSet",
                            f"2 brake responses (brake, handbrake), got {len(brakes)}")
        parts["brake_command_response"] = tuple(brakes)
        parts["steer_command_response"] = SteerCommandResponseParams(
            *_response(src, src.link(g.vehicle, "steerResponseParams", f, v), g))
        if g.kind == "direct":
            parts["direct_drive_throttle_response"] = DirectDriveThrottleCommandResponseParams(
                *_response(src, src.link(g.drivetrain, "throttleResponseParams", f, v), g))
        else:
            parts.update(_engine_parts(src, g))
    try:
        params = VehicleParams(**parts)  # type: ignore[arg-type]
        params.validate()
    except (ValueError, TypeError) as exc:
        if isinstance(exc, RecordingError):
            raise
        raise src.error(v, "params", f"params simcore accepts ({exc})") from None
    return params
