"""The motorcycle's OmniPVD classes (declared in simcore.pvd's style) and its recorder.

==============================  ======  ======================================================
class                           when    attributes
==============================  ======  ======================================================
``MotorcycleParams``            params  type (string), mass, pitchInertia, wheelbase,
                                        cgToFrontAxle, cgHeight, rake, friction,
                                        rollingResistance, dragArea, maxDriveTorque
``MotorcycleWheelParams{i}``    params  per wheel (0 front, 1 rear): radius, suspensionLength,
                                        suspensionTravel, freeLength, springStiffness, damping,
                                        maxBrakeTorque
``MotorcycleBodyState``         state   pos[3] (SAE: X fwd, Y right, Z down; Z < 0 above ground),
                                        quat[4] (x, y, z, w) of the pitch about +Y, pitch,
                                        velocity[3], pitchRate, acceleration[3]
``MotorcycleWheelState{i}``     state   suspensionLength, compression, compressionSpeed,
                                        suspensionForce, normalForce, longitudinalForce,
                                        brakeTorque, driveTorque, rotationSpeed, rotationAngle,
                                        locked (0/1), inContact (0/1)
``MotorcycleCommandState``      state   frontBrake, rearBrake, throttle
``MotorcyclePose``              state   translation[12], rotation[12] (the block's 4x3 arrays,
                                        row-major), lights[5] (UINT8: high beam, low beam,
                                        brake, left, right)
``Motorcycle``                  once    links to all of the above
==============================  ======  ======================================================

plus simcore's ``Simulation`` clock (time, dt, step) listing the motorcycle.
"""

from __future__ import annotations

import dataclasses
import math
from operator import attrgetter
from typing import Any

import numpy as np

from pvdkit.types import DataType
from simcore.motorcycle.simulation import Motorcycle, MotorcycleTrace, run_scenario
from simcore.pvd.recorder import PvdRecorder
from simcore.pvd.schema import (
    SIMULATION,
    STRING,
    AttrDecl,
    ClassDecl,
    Role,
    Schema,
    Scope,
    f64,
    link,
    link_set,
)

_SCALARS = (("mass", "mass"), ("pitchInertia", "pitch_inertia"), ("wheelbase", "wheelbase"),
            ("cgToFrontAxle", "cg_to_front_axle"), ("cgHeight", "cg_height"), ("rake", "rake"),
            ("friction", "friction"), ("rollingResistance", "rolling_resistance"), ("dragArea", "drag_area"),
            ("maxDriveTorque", "max_drive_torque"))
_WHEEL_PARAMS = (("radius", "wheel_radius"), ("suspensionLength", "suspension_length"),
                 ("suspensionTravel", "suspension_travel"), ("freeLength", "free_length"),
                 ("springStiffness", "spring_stiffness"), ("damping", "damping"),
                 ("maxBrakeTorque", "max_brake_torque"))
_WHEEL_STATE = (("suspensionLength", "suspension_length"), ("compression", "compression"),
                ("compressionSpeed", "compression_speed"), ("suspensionForce", "suspension_force"),
                ("normalForce", "normal_force"), ("longitudinalForce", "longitudinal_force"),
                ("brakeTorque", "brake_torque"), ("driveTorque", "drive_torque"),
                ("rotationSpeed", "rotation_speed"), ("rotationAngle", "rotation_angle"))


def _u8(name: str, get: Any, count: int = 1) -> AttrDecl:
    """A UINT8 attribute (booleans as 0/1); ``get`` an accessor or an attribute name."""
    return AttrDecl(name, DataType.UINT8, count, attrgetter(get) if isinstance(get, str) else get)


def _pitch_quat(body: Any) -> np.ndarray:
    h = 0.5 * body.pitch
    return np.array([0.0, math.sin(h), 0.0, math.cos(h)])


MOTORCYCLE_PARAMS = ClassDecl(
    "MotorcycleParams",
    (AttrDecl("type", STRING, 1, lambda p: p.name),) + tuple(f64(n, a) for n, a in _SCALARS),
    Role.PARAMS, Scope.VEHICLE, lambda v: v.params, "MotorcycleParams", origin="simcore",
    doc="Type (preset name), mass (kg), pitch inertia (kg m^2), geometry (m, rad), resistances.",
)
MOTORCYCLE_WHEEL_PARAMS = ClassDecl(
    "MotorcycleWheelParams", tuple(f64(n, a) for n, a in _WHEEL_PARAMS),
    Role.PARAMS, Scope.WHEEL, lambda v: v.params, "MotorcycleWheelParams{i}", origin="simcore",
    doc="Per wheel (0 front, 1 rear): radius, suspension geometry (m), spring (N/m), damper (N s/m), "
        "brake (N m).",
)
MOTORCYCLE_BODY_STATE = ClassDecl(
    "MotorcycleBodyState",
    (f64("pos", "pos", 3), f64("quat", _pitch_quat, 4), f64("pitch", "pitch"), f64("velocity", "velocity", 3),
     f64("pitchRate", "pitch_rate"), f64("acceleration", "acceleration", 3)),
    Role.STATE, Scope.VEHICLE, lambda v: v.states.body, "MotorcycleBodyState", origin="simcore",
    doc="Centre of mass in the inertial SAE J670 frame (X fwd, Y right, Z down), pitch about +Y.",
)
MOTORCYCLE_WHEEL_STATE = ClassDecl(
    "MotorcycleWheelState",
    tuple(f64(n, a) for n, a in _WHEEL_STATE)
    + (_u8("locked", lambda w: w.locked), _u8("inContact", lambda w: w.in_contact)),
    Role.STATE, Scope.WHEEL, lambda v: v.states.wheels, "MotorcycleWheelState{i}", origin="simcore",
    doc="Per wheel (0 front, 1 rear): suspension, contact forces (N), torques (N m), spin (rad/s, rad).",
)
MOTORCYCLE_COMMAND_STATE = ClassDecl(
    "MotorcycleCommandState",
    (f64("frontBrake", "front_brake"), f64("rearBrake", "rear_brake"), f64("throttle", "throttle")),
    Role.STATE, Scope.VEHICLE, lambda v: v.states.commands, "MotorcycleCommandState", origin="simcore",
    doc="Rider inputs in [0, 1].",
)
MOTORCYCLE_POSE = ClassDecl(
    "MotorcyclePose",
    (f64("translation", lambda s: s.translation.reshape(-1), 12),
     f64("rotation", lambda s: s.rotation.reshape(-1), 12),
     _u8("lights", "lights", 5)),
    Role.STATE, Scope.VEHICLE, lambda v: v.states.pose, "MotorcyclePose", origin="simcore",
    doc="The Simulation 3D Motorcycle block's inputs: 4x3 Translation (m) and Rotation (rad) arrays, "
        "row-major (rows: body, handlebar, front wheel, rear wheel; columns X, Y, Z), and the 1x5 light "
        "vector.",
)
MOTORCYCLE = ClassDecl(
    "Motorcycle",
    (
        link("params", "MotorcycleParams"),
        link_set("wheelParamsSet", "MotorcycleWheelParams"),
        link("bodyState", "MotorcycleBodyState"),
        link_set("wheelStateSet", "MotorcycleWheelState"),
        link("commandState", "MotorcycleCommandState"),
        link("pose", "MotorcyclePose"),
    ),
    Role.GRAPH, Scope.VEHICLE, lambda v: v, "Motorcycle", origin="simcore",
    doc="The root object of a motorcycle recording.",
)
#: simcore's clock class, listing motorcycles.
MOTORCYCLE_SIMULATION = dataclasses.replace(SIMULATION, attrs=tuple(
    link_set("vehicles", "Motorcycle") if a.name == "vehicles" else a for a in SIMULATION.attrs))

#: The schema of a motorcycle recording.
MOTORCYCLE_SCHEMA = Schema((MOTORCYCLE_PARAMS, MOTORCYCLE_WHEEL_PARAMS, MOTORCYCLE_BODY_STATE,
                            MOTORCYCLE_WHEEL_STATE, MOTORCYCLE_COMMAND_STATE, MOTORCYCLE_POSE, MOTORCYCLE,
                            MOTORCYCLE_SIMULATION))


def motorcycle_recorder(writer: Any, *, context: int = 1, timestamps: str = "ns") -> PvdRecorder:
    """A :class:`~simcore.pvd.recorder.PvdRecorder` with :data:`MOTORCYCLE_SCHEMA`."""
    return PvdRecorder(writer, context=context, timestamps=timestamps, schema=MOTORCYCLE_SCHEMA)


def record_motorcycle(writer: Any, bike: Motorcycle | str = "sports_bike", scenario: str = "brake-test",
                      dt: float = 0.01, duration: float | None = None, *, timestamps: str = "ns",
                      progress: Any = None) -> tuple[MotorcycleTrace, PvdRecorder]:
    """Run ``scenario`` on ``bike`` (a preset name or a :class:`Motorcycle`) and record every step
    through ``writer`` (closed at the end). ``progress(step, steps)`` is called after every step."""
    model = Motorcycle(bike) if isinstance(bike, str) else bike
    from simcore.motorcycle.simulation import get_motorcycle_scenario

    sc = get_motorcycle_scenario(scenario)
    total = max(1, int(round((sc.duration if duration is None else duration) / dt)))
    with motorcycle_recorder(writer, timestamps=timestamps) as recorder:
        recorder.attach(model)
        _, trace = run_scenario(model, scenario, dt, duration,
                                (lambda i: progress(i + 1, total)) if progress is not None else None)
    return trace, recorder
