"""A recorded vehicle's per-step Vehicle2 states and commands under simcore's names.

Why tables: a replay compares simcore with PhysX step by step, so every recorded state is read
once, for all steps, into arrays ``(nb_steps, ...)`` keyed like :class:`~simcore.vehicle.VehicleStates`
(state name -> field name). The tables below are ``simcore/pvd/schema.py`` inverted: for every
simcore field, the recorded attribute(s) it comes from.

Field kinds: ``F`` float64 as recorded (float32 widened), ``B`` boolean (PhysX writes bool enums),
``I`` integer, ``E`` an enum's number. A tuple of attribute names is stacked on a new axis
before the vector axis: ``("lngDir", "latDir")`` -> ``directions (nb_steps, n, 2, 3)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pvdkit.recording import Object
from simcore.replay.recorded_params import (
    AVE_SPEED_RATIOS,
    RESPONSE_STATES,
    THROTTLE_STATES,
    TORQUE_RATIOS,
    VehicleGraph,
)
from simcore.replay.recorded_source import UNUSED, Source

F, B, I, E = "f", "b", "i", "e"

#: Per-wheel states: simcore state -> (WheelAttachment link, {simcore field: (attribute(s), kind)}).
WHEEL_STATES: dict[str, tuple[str, dict[str, tuple[str | tuple[str, str], str]]]] = {
    "wheel_actuation": ("wheelActuationState", {
        "is_brake_applied": ("isBrakeApplied", B), "is_drive_applied": ("isDriveApplied", B)}),
    "wheel_rigid_body_1d": ("wheelRigidBody1dState", {
        "rotation_speed": ("rotationSpeed", F), "corrected_rotation_speed": ("correctedRotationSpeed", F),
        "rotation_angle": ("rotationAngle", F)}),
    "wheel_local_pose": ("wheelLocalPosetate", {  # PhysX's spelling
        "pos": ("posInRbodyFrame", F), "quat": ("quatInRbodyFrame", F)}),
    "road_geometry": ("roadGeomState", {
        "plane": ("plane", F), "friction": ("friction", F), "velocity": ("hitVelocity", F),
        "hit_state": ("hitState", B)}),
    "suspension": ("suspState", {
        "jounce": ("jounce", F), "jounce_speed": ("jounceSpeed", F), "separation": ("separation", F)}),
    "suspension_compliance": ("suspComplianceState", {
        "toe": ("toe", F), "camber": ("camber", F), "tire_force_app_point": ("tireForceAppPoint", F),
        "susp_force_app_point": ("suspForceAppPoint", F)}),
    "suspension_force": ("suspForce", {
        "force": ("force", F), "torque": ("torque", F), "normal_force": ("normalForce", F)}),
    "tire_direction": ("tireDirectionState", {"directions": (("lngDir", "latDir"), F)}),
    "tire_speed": ("tireSpeedState", {"speed_states": (("lngSpeed", "latSpeed"), F)}),
    "tire_slip": ("tireSlipState", {"slips": (("lngSlip", "latSlip"), F)}),
    "tire_sticky": ("tireStickyState", {
        "low_speed_time": (("lngStickyTimer", "latStickyTimer"), F),
        "active_status": (("lngStickyStatus", "latStickyStatus"), B)}),
    "tire_grip": ("tireGripState", {"load": ("load", F), "friction": ("friction", F)}),
    "tire_camber": ("tireCamberState", {"camber_angle": ("camberAngle", F)}),
    "tire_force": ("tireForce", {
        "forces": (("lngForce", "latForce"), F), "torques": (("lngTorque", "latTorque"), F),
        "aligning_moment": ("aligningMoment", F), "wheel_torque": ("wheelTorque", F)}),
}

#: The PhysX constraint rows (``PhysXWheelAttachment.physxConstraintState``) -> ``constraints``.
CONSTRAINT_FIELDS: dict[str, tuple[str | tuple[str, str], str]] = {
    "tire_active_status": (("tireLongitudinalActiveStatus", "tireLateralActiveStatus"), B),
    "tire_linears": (("tireLongitudinalLinear", "tireLateralLinear"), F),
    "tire_angulars": (("tireLongitudinalAngular", "tireLateralAngular"), F),
    "tire_damping": (("tireLongitudinalDamping", "tireLateralDamping"), F),
    "susp_active_status": ("suspActiveStatus", B),
    "susp_linear": ("suspLinear", F),
    "susp_angular": ("suspAngular", F),
    "susp_geometric_error": ("suspGeometricError", F),
    "restitution": ("suspRestitution", F),
}

#: Vehicle-level states: simcore state -> (link from the Vehicle, {field: (attribute, kind)}).
VEHICLE_STATES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "rigid_body": ("rigidBodyState", {
        "pos": ("pos", F), "quat": ("quat", F), "linear_velocity": ("linvel", F),
        "angular_velocity": ("angvel", F), "previous_linear_velocity": ("prevLinvel", F),
        "previous_angular_velocity": ("prevAngvel", F), "external_force": ("extForce", F),
        "external_torque": ("extTorque", F)}),
    "anti_roll_force": ("antiRollForce", {"torque": ("torque", F)}),
}

#: Engine-drive states: simcore state -> (link from the EngineDrivetrain, {field: (attribute, kind)}).
ENGINE_STATES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "clutch_command_response": ("clutchResponseState", {
        "normalised_command_response": ("normalisedResponse", F), "command_response": ("response", F)}),
    "throttle_command_response": ("throttleResponseState", {"command_response": ("response", F)}),
    "engine": ("engineState", {"rotation_speed": ("rotationSpeed", F)}),
    "gearbox": ("gearboxState", {
        "current_gear": ("currentGear", I), "target_gear": ("targetGear", I),
        "gear_switch_time": ("switchTime", F)}),
    "autobox": ("autoboxState", {
        "time_since_last_shift": ("timeSinceLastShift", F),
        "active_autobox_gear_shift": ("activeAutoboxShift", B)}),
    "clutch_slip": ("clutchSlipState", {"clutch_slip": ("clutchSlip", F)}),
}


def _field(src: Source, obj: Object, attrs: str | tuple[str, str], kind: str, frames: np.ndarray,
           label: str) -> np.ndarray:
    """One simcore field for every frame; a pair of attributes is stacked on axis 1."""
    if isinstance(attrs, tuple):
        parts = [_field(src, obj, a, kind, frames, label) for a in attrs]
        return np.stack(parts, axis=1)
    if kind == B:
        return src.sample_bools(obj, attrs, frames, label)
    if kind == E:
        return src.sample_raw(obj, attrs, frames, label)
    values = src.sample_floats(obj, attrs, frames, label)
    return values.astype(np.int64) if kind == I else values


def _object_fields(src: Source, obj: Object, spec: dict[str, Any], frames: np.ndarray,
                   label: str) -> dict[str, np.ndarray]:
    return {name: _field(src, obj, attrs, kind, frames, label) for name, (attrs, kind) in spec.items()}


def _wheel_fields(src: Source, objs: list[Object], spec: dict[str, Any], frames: np.ndarray,
                  label: str) -> dict[str, np.ndarray]:
    """Per-wheel fields stacked to ``(nb_steps, n, ...)``."""
    per_wheel = [_object_fields(src, o, spec, frames, label) for o in objs]
    return {name: np.stack([w[name] for w in per_wheel], axis=1) for name in spec}


def _brakes(src: Source, obj: Object, frames: np.ndarray, label: str) -> dict[str, np.ndarray]:
    """``brakes (nb_steps, 2)`` with PhysX's unused slots (``PX_MAX_F32``) as 0, and ``nb_brakes``
    the number of used slots."""
    brakes = src.sample_floats(obj, "brakes", frames, label, 2)
    used = np.abs(brakes) < UNUSED
    return {"brakes": np.where(used, brakes, 0.0), "nb_brakes": used.sum(axis=1).astype(np.int64),
            "throttle": src.sample_floats(obj, "throttle", frames, label, 1),
            "steer": src.sample_floats(obj, "steer", frames, label, 1)}


def commands(src: Source, g: VehicleGraph, frames: np.ndarray) -> dict[str, dict[str, np.ndarray]]:
    """The commands in force during each step: ``commands`` plus the drivetrain's transmission
    state (``direct_drive_transmission``, ``engine_drive_transmission`` or
    ``tank_drive_transmission``); none for a 'raw' vehicle (PhysX records no command state)."""
    if g.kind == "raw":
        return {}
    f, v, dt = g.frame, g.label, g.drivetrain
    out = {"commands": _brakes(src, src.link(dt, "commandState", f, v), frames, v)}
    tx = src.link(dt, "transmissionCommandState", f, v)
    if g.kind == "direct":
        out["direct_drive_transmission"] = {"gear": src.sample_raw(tx, "gear", frames, v)}
        return out
    fields = {"target_gear": _field(src, tx, "targetGear", I, frames, v),
              "clutch": _field(src, tx, "clutch", F, frames, v)}
    if g.kind == "tank":
        fields["thrusts"] = src.sample_floats(tx, "thrusts", frames, v, 2)
        out["tank_drive_transmission"] = fields
    else:
        out["engine_drive_transmission"] = fields
    return out


def responses(src: Source, g: VehicleGraph, frames: np.ndarray) -> dict[str, np.ndarray]:
    """The per-wheel command responses ``brake``, ``steer`` and (direct drive) ``drive``,
    each ``(nb_steps, n)`` (an engine drive records its throttle response per vehicle)."""
    f, v, n = g.frame, g.label, g.nb_wheels
    brake = src.link(g.vehicle, "brakeResponseState", f, v)
    steer = src.link(g.vehicle, "steerResponseState", f, v)
    out = {"brake": src.sample_chunks(brake, RESPONSE_STATES, frames, v, n),
           "steer": src.sample_chunks(steer, RESPONSE_STATES, frames, v, n)}
    if g.kind in ("direct", "raw"):
        drive = src.link(g.drivetrain, "throttleResponseState", f, v)
        out["drive"] = src.sample_chunks(drive, THROTTLE_STATES, frames, v, n)
    return out


def _connected_wheels(torque: np.ndarray, ave: np.ndarray,
                      axle_order: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Vehicle2's connected wheels (not recorded): wheels with a non-zero torque or speed ratio,
    in axle order, padded with -1; and their count."""
    steps, n = torque.shape
    wheels = np.full((steps, n), -1, dtype=np.int64)
    counts = np.zeros(steps, dtype=np.int64)
    order = np.asarray(axle_order, dtype=np.int64)
    on = (torque[:, order] != 0.0) | (ave[:, order] != 0.0)
    for i in range(steps):
        ids = order[on[i]]
        wheels[i, : len(ids)] = ids
        counts[i] = len(ids)
    return wheels, counts


def states(src: Source, g: VehicleGraph, frames: np.ndarray, axle_order: list[int],
           cmds: dict[str, dict[str, np.ndarray]]) -> dict[str, dict[str, np.ndarray]]:
    """Every recorded Vehicle2 state at each of ``frames`` (step i's frame 2i), as
    state name -> field -> ``(nb_steps, ...)`` array (commands included)."""
    f, v, n = g.frame, g.label, g.nb_wheels
    out: dict[str, dict[str, np.ndarray]] = {}
    for name, (link, spec) in VEHICLE_STATES.items():
        obj = src.maybe_link(g.vehicle, link, f)
        if obj is not None:
            out[name] = _object_fields(src, obj, spec, frames, v)
    for name, (link, spec) in WHEEL_STATES.items():
        out[name] = _wheel_fields(src, [src.link(w, link, f, v) for w in g.wheels], spec, frames, v)
    if g.physx_wheels:
        rows = [src.link(w, "physxConstraintState", f, v) for w in g.physx_wheels]
        out["constraints"] = _wheel_fields(src, rows, CONSTRAINT_FIELDS, frames, v)
    resp = responses(src, g, frames)
    out["brake_command_response"] = {"response": resp["brake"]}
    out["steer_command_response"] = {"response": resp["steer"]}
    if g.kind in ("direct", "raw"):
        out["direct_drive_throttle_response"] = {"response": resp["drive"]}
    else:
        for name, (link, spec) in ENGINE_STATES.items():
            out[name] = _object_fields(src, src.link(g.drivetrain, link, f, v), spec, frames, v)
        diff = src.link(g.drivetrain, "diffState", f, v)
        torque = src.sample_chunks(diff, TORQUE_RATIOS, frames, v, n)
        ave = src.sample_chunks(diff, AVE_SPEED_RATIOS, frames, v, n)
        wheels, counts = _connected_wheels(torque, ave, axle_order)
        out["differential"] = {"connected_wheels": wheels, "nb_connected_wheels": counts,
                               "torque_ratios_all_wheels": torque,
                               "ave_wheel_speed_contribution_all_wheels": ave}
    out.update(cmds)
    return out


def sticky_damping(src: Source, g: VehicleGraph, frames: np.ndarray,
                   default: tuple[float, float]) -> tuple[float, float]:
    """Sticky-tire constraint damping (longitudinal, lateral): the recorded row damping in the
    first step where a wheel's row is active (the damping is 0 on inactive rows); ``default``
    for an axis never active."""
    axes = (("tireLongitudinalActiveStatus", "tireLongitudinalDamping"),
            ("tireLateralActiveStatus", "tireLateralDamping"))
    found: list[float | None] = [None, None]
    for w in g.physx_wheels:
        rows = src.link(w, "physxConstraintState", g.frame, g.label)
        for axis, (status, damping) in enumerate(axes):
            if found[axis] is not None:
                continue
            active = np.flatnonzero(src.sample_bools(rows, status, frames, g.label))
            if active.size:
                found[axis] = float(src.sample_floats(rows, damping, frames, g.label, 1)[active[0]])
    lng, lat = (d if f is None else f for f, d in zip(found, default, strict=True))
    return lng, lat
