"""PhysX Vehicle2's OmniPVD schema, declared once as data, plus simcore's own recorded classes.

One declaration drives both registration and writing: each :class:`ClassDecl` names a class as
PhysX registers it (``VhPvdWriter.cpp``: names, attribute names — typos included, such as
``wheelStatess4To7`` and ``wheelLocalPosetate`` —, data types, element counts, enum classes
and their values, flags, object-handle attributes and unique lists) and, next to every
attribute, the small accessor that reads its value from simcore's params or states. The
registration order is PhysX's (``PxVehiclePvdAttributesCreate``), so a simcore recording holds
the same Vehicle2 classes with the same relative handle numbering as a PhysX recording.

Where PhysX registers one element count but writes another (it registers
``SuspensionParams.wheelAttachmentQuat`` with 3 floats and writes a 4-float quaternion; it
registers ``SuspensionForce.normalForce``, ``TireForce.aligningMoment`` and
``TireForce.wheelTorque`` with 3 floats and writes one), the declaration keeps PhysX's
registration and PhysX's payload (:attr:`AttrDecl.wire_count`), so readers built for PhysX
recordings read simcore recordings the same way.

Accessors take the *source* of a PVD object — the simcore params or state object it mirrors,
found by :attr:`ClassDecl.source` from the :class:`~simcore.vehicle.Vehicle` — and return plain
numbers or arrays. Per-wheel classes (``scope=WHEEL``) read struct-of-arrays sources and return
arrays with a leading wheel axis, so one accessor call serves every wheel. State accessors index
from the end (``forces[..., 0, :]``, not ``forces[:, 0]``) so that, handed a fleet's batch
(:mod:`simcore.fleet.states`, a leading vehicle axis), they return every vehicle's values in one
call; the fleet recorder checks this per accessor and falls back to one call per vehicle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from operator import attrgetter
from typing import Any

import numpy as np

from pvdkit.types import DataType

#: ``PX_MAX_F32``: what PhysX writes into unused slots of fixed-size arrays (wheel multipliers,
#: gear ratios, torque curve points) and what Vehicle2 uses for "no value" (jounce, timers).
PX_MAX_F32 = float(np.finfo(np.float32).max)
#: ``PxVehicleLimits::eMAX_NB_WHEELS``: PhysX writes per-wheel arrays of vehicle-level objects
#: padded to this length, in chunks of four (``...0To3`` … ``...16To19``).
MAX_NB_WHEELS = 20
_CHUNKS = ((0, 4), (4, 8), (8, 12), (12, 16), (16, 20))

F32 = DataType.FLOAT32
F64 = DataType.FLOAT64
U32 = DataType.UINT32
U64 = DataType.UINT64
HANDLE = DataType.OBJECT_HANDLE
FLAGS = DataType.FLAGS_WORD
STRING = DataType.STRING

#: An accessor: source object -> value (number, sequence or ndarray; leading wheel axis for
#: per-wheel classes).
Getter = Callable[[Any], Any]


class Scope(Enum):
    """How many PVD objects of a class a vehicle (or a recording) has."""

    VEHICLE = "vehicle"  #: one per vehicle
    WHEEL = "wheel"  #: one per wheel; the source is struct-of-arrays with a leading wheel axis
    ITEMS = "items"  #: one per item of a sequence (brake responses, anti-roll bars)
    RECORDING = "recording"  #: one per recording, shared by all vehicles (context, clock, road)
    NONE = "none"  #: registered only: simcore has no such object (PhysX actors, enum classes)


class Role(Enum):
    """When the values of a class's objects are written."""

    PARAMS = "params"  #: on the first frame, then whenever a value changes
    STATE = "state"  #: every frame
    GRAPH = "graph"  #: object handles only, written once when the objects are created


class Phase(Enum):
    """Which of a step's frames a class is written in.

    A PhysX recording writes two frames per simulation step (Vehicle2's states after the vehicle
    update, then the scene's results); with the PhysX actor layer simcore does the same.
    """

    VEHICLE = "vehicle"  #: frame 2i (the only frame without the PhysX layout): Vehicle2's states
    SCENE = "scene"  #: frame 2i+1 (PhysX layout only): the PhysX scene's results (``PxRigidDynamic``)


@dataclass(frozen=True)
class EnumDecl:
    """An enum class: registered as a class whose attributes are ``(name, value)`` enum values.

    PhysX registers one enum class per use (``WheelStateBool``, ``RoadGeomStateBool`` … all with
    False/True), right before the class whose flags attribute uses it.
    """

    name: str
    values: tuple[tuple[str, int], ...]


def _bool_enum(name: str) -> EnumDecl:
    return EnumDecl(name, (("False", 0), ("True", 1)))


@dataclass(frozen=True)
class AttrDecl:
    """One attribute of a class.

    ``count`` is the element count PhysX registers (0 = variable length); ``wire_count`` the
    number of elements PhysX actually writes when it differs. ``get`` reads the value from the
    object's source (None for attributes simcore never writes); ``chunk`` takes a slice of the
    getter's result along its last axis (the getters of ``...0To3`` … ``...16To19`` share one
    function, evaluated once). ``links`` names the classes an object-handle attribute or unique
    list may point at; ``first`` the classes PhysX registers just before this attribute.
    ``role`` overrides the class's role for this attribute (PhysX's actor mixes params —
    damping, mass — and states — pose, velocities — in one object).
    """

    name: str
    dtype: DataType
    count: int = 1
    get: Getter | None = None
    enum: EnumDecl | None = None
    unique_list: bool = False
    links: tuple[str, ...] = ()
    wire_count: int | None = None
    chunk: tuple[int, int] | None = None
    first: tuple[ClassDecl, ...] = ()
    role: Role | None = None

    @property
    def kind(self) -> str:
        """``"plain"``, ``"flags"`` or ``"unique_list"`` — how the attribute is registered."""
        if self.unique_list:
            return "unique_list"
        return "flags" if self.dtype == FLAGS else "plain"

    @property
    def is_link(self) -> bool:
        """True for object-handle attributes and unique lists naming other PVD objects."""
        return bool(self.links)

    @property
    def elements(self) -> int:
        """Elements in one written value (``wire_count`` if set, else ``count``; 0 = variable)."""
        return self.count if self.wire_count is None else self.wire_count


@dataclass(frozen=True)
class ClassDecl:
    """One PVD class: registration (name, base, attributes) and where its objects come from.

    ``source(vehicle)`` returns the simcore object the PVD object mirrors, or None when the
    vehicle has none (then no object is created); for ``Scope.ITEMS`` it returns a sequence, one
    PVD object per item; for ``Scope.RECORDING`` it is called with the recorder instead of a
    vehicle. ``object_name`` is the name PhysX gives the object (``{i}`` = wheel or item index).
    ``origin`` is ``"physx"`` for Vehicle2's classes and ``"simcore"`` for classes PhysX does not
    record (simulation clock, context, road). ``shared``: vehicles whose sources are the same
    Python object (one road, one context) share one PVD object.
    ``phase``: the frame of a step the class is written in (:class:`Phase`). ``params_source``:
    for a class mixing params and states, ``params_source(vehicle params, vehicle name)`` gives
    the source of its params-role attributes (re-made only when the params object changes, so
    unchanged params cost one identity test per frame); None: ``source`` serves both.
    """

    name: str
    attrs: tuple[AttrDecl, ...] = ()
    role: Role = Role.STATE
    scope: Scope = Scope.NONE
    source: Callable[[Any], Any] | None = None
    object_name: str = ""
    base: ClassDecl | None = None
    origin: str = "physx"
    shared: bool = False
    doc: str = ""
    phase: Phase = Phase.VEHICLE
    params_source: Callable[[Any, str], Any] | None = None

    def all_attrs(self) -> tuple[tuple[ClassDecl, AttrDecl], ...]:
        """``(declaring class, attribute)`` for the base class's attributes, then this class's."""
        return self._all_attrs

    @cached_property
    def _all_attrs(self) -> tuple[tuple[ClassDecl, AttrDecl], ...]:
        # Made once per class: a 256-vehicle fleet's first frame walks it ~40,000 times.
        inherited = self.base.all_attrs() if self.base is not None else ()
        return inherited + tuple((self, a) for a in self.attrs)

    @cached_property
    def link_attrs(self) -> tuple[tuple[ClassDecl, AttrDecl], ...]:
        """The :meth:`all_attrs` that are links to other PVD objects (:attr:`AttrDecl.is_link`)."""
        return tuple((d, a) for d, a in self.all_attrs() if a.is_link)

    def role_of(self, a: AttrDecl) -> Role:
        """The role of attribute ``a`` of this class (its own, else the class's)."""
        return self.role if a.role is None else a.role

    def attr(self, name: str) -> AttrDecl:
        """The attribute ``name`` of this class or its base; KeyError naming both if absent."""
        for _, a in self.all_attrs():
            if a.name == name:
                return a
        raise KeyError(f"class {self.name!r} has no attribute {name!r}")


# --------------------------------------------------------------------------------------------
# Declaration helpers
# --------------------------------------------------------------------------------------------


def _get(path: str) -> Getter:
    """Accessor for a (dotted) attribute path of the source."""
    return attrgetter(path)


def f32(name: str, get: Getter | str | None = None, count: int = 1, **kw: Any) -> AttrDecl:
    """A FLOAT32 attribute (Vehicle2's float values; simcore's float64 is rounded on write)."""
    return AttrDecl(name, F32, count, _get(get) if isinstance(get, str) else get, **kw)


def f64(name: str, get: Getter | str | None = None, count: int = 1) -> AttrDecl:
    """A FLOAT64 attribute (simcore's own classes keep full precision)."""
    return AttrDecl(name, F64, count, _get(get) if isinstance(get, str) else get)


def u32(name: str, get: Getter | str | None = None, count: int = 1) -> AttrDecl:
    """A UINT32 attribute (wheel ids, counts, gears)."""
    return AttrDecl(name, U32, count, _get(get) if isinstance(get, str) else get)


def flags(name: str, enum: EnumDecl, get: Getter | str | None = None, **kw: Any) -> AttrDecl:
    """A flags attribute whose values are ``enum``'s (PhysX writes enums and bools this way)."""
    return AttrDecl(name, FLAGS, 1, _get(get) if isinstance(get, str) else get, enum=enum, **kw)


def link(name: str, *targets: str, first: tuple[ClassDecl, ...] = ()) -> AttrDecl:
    """An object-handle attribute pointing at the object of one of the ``targets`` classes."""
    return AttrDecl(name, HANDLE, 1, links=targets, first=first)


def link_set(name: str, *targets: str) -> AttrDecl:
    """A unique list of object handles (``wheelAttachmentSet``, ``antiRollSet`` …)."""
    return AttrDecl(name, HANDLE, 1, links=targets, unique_list=True)


def chunked(names: Sequence[str], get: Getter) -> tuple[AttrDecl, ...]:
    """Five 4-float attributes holding a 20-element per-wheel array (``get`` returns 20 values)."""
    return tuple(AttrDecl(n, F32, 4, get, chunk=c) for n, c in zip(names, _CHUNKS, strict=True))


def pad_wheels(values: Any, fill: float) -> np.ndarray:
    """A per-wheel array (n,) padded to :data:`MAX_NB_WHEELS` with ``fill`` (PhysX's layout).

    Leading axes are kept (``(vehicles, n)`` → ``(vehicles, 20)``), so a fleet's batch is padded
    in one call."""
    a = np.atleast_1d(np.asarray(values, dtype=np.float64))
    out = np.full(a.shape[:-1] + (MAX_NB_WHEELS,), fill)
    out[..., : a.shape[-1]] = a
    return out


def _lookup_table(table: Any) -> np.ndarray:
    """A per-wheel compliance table as PhysX writes it: (n, 6) ``x0 y0 x1 y1 x2 y2`` for angles,
    (n, 12) ``x0 y0.xyz x1 …`` for points; unused points are ``x = -1`` with zero values."""
    x = np.asarray(table.x, dtype=np.float64)
    y = np.asarray(table.y, dtype=np.float64)
    n = x.shape[0]
    y = y.reshape(n, 3, -1)
    used = np.arange(3)[None, :] < np.asarray(table.nb_points)[:, None]
    x = np.where(used, x, -1.0)
    y = np.where(used[:, :, None], y, 0.0)
    return np.concatenate([x[:, :, None], y], axis=2).reshape(n, -1)


def _brakes(commands: Any) -> np.ndarray:
    """``brakes[2]`` with unused brake slots (beyond ``nb_brakes``) at PX_MAX_F32, as PhysX writes
    (leading axes kept: a fleet's ``(vehicles, 2)`` in one call)."""
    brakes = np.asarray(commands.brakes, dtype=np.float64)
    nb = np.asarray(getattr(commands, "nb_brakes", 2))
    used = np.arange(2) < np.minimum(nb, brakes.shape[-1])[..., None]
    out = np.full(brakes.shape[:-1] + (2,), PX_MAX_F32)
    out[..., : brakes.shape[-1]] = brakes[..., :2]
    return np.where(used, out, PX_MAX_F32)


def _padded_fixed(values: Any, length: int, fill: float) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    out = np.full(length, fill)
    out[: a.shape[0]] = a
    return out


# --------------------------------------------------------------------------------------------
# Sources: which simcore object a PVD object mirrors (None: the vehicle has none)
# --------------------------------------------------------------------------------------------


def _params(name: str) -> Callable[[Any], Any]:
    return lambda v: getattr(v.params, name, None)


def _states(name: str) -> Callable[[Any], Any]:
    return lambda v: getattr(v.states, name, None)


def _has_engine(v: Any) -> bool:
    return getattr(v.params, "engine", None) is not None


def _direct_only(get: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: None if _has_engine(v) else get(v)


def _engine_only(get: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: get(v) if _has_engine(v) else None


def _first_ackermann(v: Any) -> Any:
    acks = getattr(v.params, "ackermann", None) or ()
    return acks[0] if len(acks) else None


def _engine_transmission(v: Any) -> Any:
    if not _has_engine(v):
        return None
    t = getattr(v.states, "engine_drive_transmission", None)
    return None if t is None or hasattr(t, "thrusts") else t


def _tank_transmission(v: Any) -> Any:
    if not _has_engine(v):
        return None
    t = getattr(v.states, "tank_drive_transmission", None)
    if t is None:
        t = getattr(v.states, "engine_drive_transmission", None)
    return t if t is not None and hasattr(t, "thrusts") else None


def _differential(kind: str) -> Callable[[Any], Any]:
    """The vehicle's differential params if its type is ``kind`` (multi / four / tank)."""

    def get(v: Any) -> Any:
        d = getattr(v.params, "differential", None) if _has_engine(v) else None
        if d is None:
            return None
        if hasattr(d, "tracks"):
            found = "tank"
        elif hasattr(d, "front_wheel_ids"):
            found = "four"
        else:
            found = "multi"
        return d if found == kind else None

    return get


def _always(v: Any) -> Any:
    return v


# --------------------------------------------------------------------------------------------
# Vehicle2's classes, in PhysX's registration order
# --------------------------------------------------------------------------------------------

_RESPONSE_MULTIPLIERS = ("wheelMultipliers0To3", "wheelMultipliers4To7", "wheelMultipliers8To11",
                         "wheelMultipliers12To15", "wheelMultipliers16To19")
# PhysX's spelling, "wheelStatess4To7" included.
_RESPONSE_STATES = ("wheelStates0To3", "wheelStatess4To7", "wheelStates8To11", "wheelStates12To15",
                    "wheelStates16To19")


def _multipliers(p: Any) -> np.ndarray:
    return pad_wheels(p.wheel_response_multipliers, PX_MAX_F32)


def _response_params_attrs() -> tuple[AttrDecl, ...]:
    return (f32("maxResponse", "max_response"),) + chunked(_RESPONSE_MULTIPLIERS, _multipliers)


def _response_states(s: Any) -> np.ndarray:
    return pad_wheels(s.response, 0.0)


RIGID_BODY_PARAMS = ClassDecl(
    "RigidBodyParams", (f32("mass", "mass"), f32("moi", "moi", 3)),
    Role.PARAMS, Scope.VEHICLE, _params("rigid_body"), "RigidBodyParams",
)
RIGID_BODY_STATE = ClassDecl(
    "RigidBodyState",
    (
        f32("pos", "pos", 3),
        f32("quat", "quat", 4),
        f32("linvel", "linear_velocity", 3),
        f32("angvel", "angular_velocity", 3),
        f32("prevLinvel", "previous_linear_velocity", 3),
        f32("prevAngvel", "previous_angular_velocity", 3),
        f32("extForce", "external_force", 3),
        f32("extTorque", "external_torque", 3),
    ),
    Role.STATE, Scope.VEHICLE, _states("rigid_body"), "RigidBodyState",
)
SUSP_JOUNCE_CALCULATION_TYPE = EnumDecl(
    "SuspJounceCalculationType", (("raycast", 0), ("sweep", 1), ("none", 2)))
SUSP_STATE_CALC_PARAMS = ClassDecl(
    "SuspStateCalculationParams",
    (
        flags("suspJounceCalculationType", SUSP_JOUNCE_CALCULATION_TYPE,
              "suspension_jounce_calculation_type"),
        flags("limitSuspensionExpansionVelocity", _bool_enum("SuspStateCalcParamsBool"),
              "limit_suspension_expansion_velocity"),
    ),
    Role.PARAMS, Scope.VEHICLE, _params("suspension_state_calculation"), "SuspStateCalcParams",
)
STEER_RESPONSE_PARAMS = ClassDecl(
    "SteerResponseParams", _response_params_attrs(),
    Role.PARAMS, Scope.VEHICLE, _params("steer_command_response"), "SteerCommandResponseParams",
)
BRAKE_RESPONSE_PARAMS = ClassDecl(
    "BrakeResponseParams", _response_params_attrs(),
    Role.PARAMS, Scope.ITEMS, _params("brake_command_response"),
    "BrakeComandResponseParams{i}",  # PhysX's spelling
    doc="Item 0 is the brake pedal's response, item 1 the handbrake's.",
)
STEER_RESPONSE_STATE = ClassDecl(
    "SteerResponseState", chunked(_RESPONSE_STATES, _response_states),
    Role.STATE, Scope.VEHICLE, _states("steer_command_response"), "SteerCommandResponseStates",
)
BRAKE_RESPONSE_STATE = ClassDecl(
    "BrakeResponseState", chunked(_RESPONSE_STATES, _response_states),
    Role.STATE, Scope.VEHICLE, _states("brake_command_response"), "BrakeCommandResponseStates",
)
ACKERMANN_PARAMS = ClassDecl(
    "AckermannParams",
    (
        u32("wheelIds", "wheel_ids", 2),
        f32("wheelBase", "wheel_base"),
        f32("trackWidth", "track_width"),
        f32("strength", "strength"),
    ),
    Role.PARAMS, Scope.VEHICLE, _first_ackermann, "AckermannParams",
    doc="PhysX records one Ackermann object; simcore records its first AckermannParams.",
)

WHEEL_PARAMS = ClassDecl(
    "WheelParams",
    (
        f32("radius", "radius"),
        f32("halfWidth", "half_width"),
        f32("mass", "mass"),
        f32("moi", "moi"),
        f32("dampingRate", "damping_rate"),
    ),
    Role.PARAMS, Scope.WHEEL, _params("wheel"), "WheelParams{i}",
)
WHEEL_ACTUATION_STATE = ClassDecl(
    "WheelActuationState",
    (
        flags("isBrakeApplied", _bool_enum("WheelStateBool"), "is_brake_applied"),
        flags("isDriveApplied", _bool_enum("WheelStateBool"), "is_drive_applied"),
    ),
    Role.STATE, Scope.WHEEL, _states("wheel_actuation"), "WheelActuationState{i}",
)
WHEEL_RIGID_BODY_1D_STATE = ClassDecl(
    "WheelRigidBodyState",
    (
        f32("rotationSpeed", "rotation_speed"),
        f32("correctedRotationSpeed", "corrected_rotation_speed"),
        f32("rotationAngle", "rotation_angle"),
    ),
    Role.STATE, Scope.WHEEL, _states("wheel_rigid_body_1d"), "WheelRigidBody1dState{i}",
)
WHEEL_LOCAL_POSE_STATE = ClassDecl(
    "WheelLocalPoseState",
    (f32("posInRbodyFrame", "pos", 3), f32("quatInRbodyFrame", "quat", 4)),
    Role.STATE, Scope.WHEEL, _states("wheel_local_pose"), "WheelLocalPoseState{i}",
)
ROAD_GEOMETRY_STATE = ClassDecl(
    "RoadGeometryState",
    (
        f32("plane", "plane", 4),
        f32("friction", "friction"),
        flags("hitState", _bool_enum("RoadGeomStateBool"), "hit_state"),
        f32("hitVelocity", "velocity", 3),
    ),
    Role.STATE, Scope.WHEEL, _states("road_geometry"), "RoadGeometryState{i}",
)
SUSPENSION_PARAMS = ClassDecl(
    "SuspensionParams",
    (
        f32("suspAttachmentPos", "suspension_attachment_pos", 3),
        f32("suspAttachmentQuat", "suspension_attachment_quat", 4),
        f32("suspDir", "suspension_travel_dir", 3),
        f32("suspTravelDist", "suspension_travel_dist"),
        f32("wheelAttachmentPos", "wheel_attachment_pos", 3),
        # PhysX registers 3 elements and writes the whole quaternion.
        f32("wheelAttachmentQuat", "wheel_attachment_quat", 3, wire_count=4),
    ),
    Role.PARAMS, Scope.WHEEL, _params("suspension"), "SuspParams{i}",
)
SUSPENSION_COMPLIANCE_PARAMS = ClassDecl(
    "SuspensionComplianceParams",
    (
        f32("toeAngle", lambda p: _lookup_table(p.wheel_toe_angle), 6),
        f32("camberAngle", lambda p: _lookup_table(p.wheel_camber_angle), 6),
        f32("suspForceAppPoint", lambda p: _lookup_table(p.susp_force_app_point), 12),
        f32("tireForceAppPoint", lambda p: _lookup_table(p.tire_force_app_point), 12),
    ),
    Role.PARAMS, Scope.WHEEL, _params("suspension_compliance"), "SuspCompParams{i}",
)
SUSPENSION_FORCE_PARAMS = ClassDecl(
    "SuspensionForceParams",
    (f32("stiffness", "stiffness"), f32("damping", "damping"), f32("sprungMass", "sprung_mass")),
    Role.PARAMS, Scope.WHEEL, _params("suspension_force"), "SuspForceParams{i}",
)
SUSPENSION_STATE = ClassDecl(
    "SuspensionState",
    (f32("jounce", "jounce"), f32("jounceSpeed", "jounce_speed"), f32("separation", "separation")),
    Role.STATE, Scope.WHEEL, _states("suspension"), "SuspState{i}",
)
SUSPENSION_COMPLIANCE_STATE = ClassDecl(
    "SuspensionComplianceState",
    (
        f32("toe", "toe"),
        f32("camber", "camber"),
        f32("tireForceAppPoint", "tire_force_app_point", 3),
        f32("suspForceAppPoint", "susp_force_app_point", 3),
    ),
    Role.STATE, Scope.WHEEL, _states("suspension_compliance"), "SuspComplianceState{i}",
)
SUSPENSION_FORCE = ClassDecl(
    "SuspensionForce",
    (
        f32("force", "force", 3),
        f32("torque", "torque", 3),
        # PhysX registers 3 elements and writes the one float.
        f32("normalForce", "normal_force", 3, wire_count=1),
    ),
    Role.STATE, Scope.WHEEL, _states("suspension_force"), "SuspForce{i}",
)
TIRE_PARAMS = ClassDecl(
    "TireParams",
    (
        f32("latStiffX", "lat_stiff_x"),
        f32("latStiffY", "lat_stiff_y"),
        f32("longStiff", "long_stiff"),
        f32("camberStiff", "camber_stiff"),
        f32("frictionVsSlip", lambda p: np.asarray(p.friction_vs_slip).reshape(-1, 6), 6),
        f32("restLoad", "rest_load"),
        f32("loadFilter", lambda p: np.asarray(p.load_filter).reshape(-1, 4), 4),
    ),
    Role.PARAMS, Scope.WHEEL, _params("tire_force"), "TireParams{i}",
)
TIRE_DIRECTION_STATE = ClassDecl(
    "TireDirectionState",
    (f32("lngDir", lambda s: s.directions[..., 0, :], 3),
     f32("latDir", lambda s: s.directions[..., 1, :], 3)),
    Role.STATE, Scope.WHEEL, _states("tire_direction"), "TireDirectionState{i}",
)
TIRE_SPEED_STATE = ClassDecl(
    "TireSpeedState",
    (f32("lngSpeed", lambda s: s.speed_states[..., 0]), f32("latSpeed", lambda s: s.speed_states[..., 1])),
    Role.STATE, Scope.WHEEL, _states("tire_speed"), "TireSpeedState{i}",
)
TIRE_SLIP_STATE = ClassDecl(
    "TireSlipState",
    (f32("lngSlip", lambda s: s.slips[..., 0]), f32("latSlip", lambda s: s.slips[..., 1])),
    Role.STATE, Scope.WHEEL, _states("tire_slip"), "TireSlipState{i}",
)
_STICKY_TIRE_BOOL = _bool_enum("StickyTireBool")
TIRE_STICKY_STATE = ClassDecl(
    "TireStickyState",
    (
        f32("lngStickyTimer", lambda s: s.low_speed_time[..., 0]),
        flags("lngStickyStatus", _STICKY_TIRE_BOOL, lambda s: s.active_status[..., 0]),
        f32("latStickyTimer", lambda s: s.low_speed_time[..., 1]),
        flags("latStickyStatus", _STICKY_TIRE_BOOL, lambda s: s.active_status[..., 1]),
    ),
    Role.STATE, Scope.WHEEL, _states("tire_sticky"), "TireStickyState{i}",
)
TIRE_GRIP_STATE = ClassDecl(
    "TireGripState", (f32("load", "load"), f32("friction", "friction")),
    Role.STATE, Scope.WHEEL, _states("tire_grip"), "TireGripState{i}",
)
TIRE_CAMBER_STATE = ClassDecl(
    "TireCamberState", (f32("camberAngle", "camber_angle"),),
    Role.STATE, Scope.WHEEL, _states("tire_camber"), "TireCamberState{i}",
)
TIRE_FORCE = ClassDecl(
    "TireForce",
    (
        f32("lngForce", lambda s: s.forces[..., 0, :], 3),
        f32("lngTorque", lambda s: s.torques[..., 0, :], 3),
        f32("latForce", lambda s: s.forces[..., 1, :], 3),
        f32("latTorque", lambda s: s.torques[..., 1, :], 3),
        # PhysX registers 3 elements for both and writes one float each.
        f32("aligningMoment", "aligning_moment", 3, wire_count=1),
        f32("wheelTorque", "wheel_torque", 3, wire_count=1),
    ),
    Role.STATE, Scope.WHEEL, _states("tire_force"), "TireForce{i}",
)
WHEEL_ATTACHMENT = ClassDecl(
    "WheelAttachment",
    (
        link("wheelParams", "WheelParams"),
        link("wheelActuationState", "WheelActuationState"),
        link("wheelRigidBody1dState", "WheelRigidBodyState"),
        link("wheelLocalPosetate", "WheelLocalPoseState"),  # PhysX's spelling
        link("roadGeomState", "RoadGeometryState"),
        link("suspParams", "SuspensionParams"),
        link("suspComplianceParams", "SuspensionComplianceParams"),
        link("suspForceParams", "SuspensionForceParams"),
        link("suspState", "SuspensionState"),
        link("suspComplianceState", "SuspensionComplianceState"),
        link("suspForce", "SuspensionForce"),
        link("tireParams", "TireParams"),
        link("tireDirectionState", "TireDirectionState"),
        link("tireSpeedState", "TireSpeedState"),
        link("tireSlipState", "TireSlipState"),
        link("tireStickyState", "TireStickyState"),
        link("tireGripState", "TireGripState"),
        link("tireCamberState", "TireCamberState"),
        link("tireForce", "TireForce"),
    ),
    Role.GRAPH, Scope.WHEEL, _params("wheel"), "WheelAttachment{i}",
)
ANTI_ROLL_PARAMS = ClassDecl(
    "AntiRollParams",
    (u32("wheel0", "wheel0"), u32("wheel1", "wheel1"), f32("stiffness", "stiffness")),
    Role.PARAMS, Scope.ITEMS, _params("anti_roll_bars"), "AntiRollParams{i}",
)
ANTI_ROLL_FORCE = ClassDecl(
    "AntiRollForce", (f32("torque", "torque", 3),),
    Role.STATE, Scope.VEHICLE, _states("anti_roll_force"), "AntiRollTorque",
)

# Direct drivetrain ---------------------------------------------------------------------------

DIRECT_DRIVE_THROTTLE_RESPONSE_PARAMS = ClassDecl(
    "DirectDriveThrottleResponseParams", _response_params_attrs(),
    Role.PARAMS, Scope.VEHICLE, _direct_only(_params("direct_drive_throttle_response")),
    "DirectDriveThrottleResponseParams",
)
DIRECT_DRIVE_COMMAND_STATE = ClassDecl(
    "DirectDriveCommandState",
    (f32("brakes", _brakes, 2), f32("throttle", "throttle"), f32("steer", "steer")),
    Role.STATE, Scope.VEHICLE, _direct_only(_states("commands")), "DirectDriveCommandState",
)
DIRECT_DRIVE_GEAR = EnumDecl("DirectDriveGear", (("reverse", 0), ("neutral", 1), ("forward", 2)))
DIRECT_DRIVE_TRANSMISSION_COMMAND_STATE = ClassDecl(
    "DirectDriveTransmissionCommandState", (flags("gear", DIRECT_DRIVE_GEAR, "gear"),),
    Role.STATE, Scope.VEHICLE, _direct_only(_states("direct_drive_transmission")),
    "DirectDriveTransmissionCommandState",
)
DIRECT_DRIVE_THROTTLE_RESPONSE_STATE = ClassDecl(
    "DirectDriveThrottleResponseState",
    chunked(("responseState0To3", "responseState4To7", "responseState8To11", "responseState12To15",
             "responseState16To19"), _response_states),
    Role.STATE, Scope.VEHICLE, _direct_only(_states("direct_drive_throttle_response")),
    "DirectDriveThrottleResponseState",
)
DIRECT_DRIVETRAIN = ClassDecl(
    "DirectDrivetrain",
    (
        link("throttleResponseParams", "DirectDriveThrottleResponseParams"),
        link("commandState", "DirectDriveCommandState"),
        link("transmissionCommandState", "DirectDriveTransmissionCommandState"),
        link("throttleResponseState", "DirectDriveThrottleResponseState"),
    ),
    Role.GRAPH, Scope.VEHICLE, _direct_only(_always), "DirectDrivetrain",
    doc="Created for every vehicle without an engine, as PhysX's PVD component does.",
)

# Engine drivetrain ---------------------------------------------------------------------------

ENGINE_DRIVE_COMMAND_STATE = ClassDecl(
    "EngineDriveCommandState",
    (f32("brakes", _brakes, 2), f32("throttle", "throttle"), f32("steer", "steer")),
    Role.STATE, Scope.VEHICLE, _engine_only(_states("commands")), "EngineDriveCommandState",
)
ENGINE_DRIVE_TRANSMISSION_COMMAND_STATE = ClassDecl(
    "EngineDriveTransmissionCommandState",
    (u32("targetGear", "target_gear"), f32("clutch", "clutch")),
    Role.STATE, Scope.VEHICLE, _engine_transmission, "EngineDriveTransmissionCommandState",
)
TANK_DRIVE_TRANSMISSION_COMMAND_STATE = ClassDecl(
    "TankDriveTransmissionCommandState", (f32("thrusts", "thrusts", 2),),
    Role.STATE, Scope.VEHICLE, _tank_transmission, "TankDriveTransmissionCommandState",
    base=ENGINE_DRIVE_TRANSMISSION_COMMAND_STATE,
)
CLUTCH_RESPONSE_PARAMS = ClassDecl(
    "ClutchResponseParams", (f32("MaxResponse", "max_response"),),  # PhysX's capital M
    Role.PARAMS, Scope.VEHICLE, _engine_only(_params("clutch_command_response")), "ClutchResponseParams",
)
CLUTCH_ACCURACY_MODE = EnumDecl("ClutchAccuracyMode", (("estimate", 0), ("bestPossible", 1)))
CLUTCH_PARAMS = ClassDecl(
    "ClutchParams",
    (flags("accuracyMode", CLUTCH_ACCURACY_MODE, "accuracy_mode"), u32("iterations", "estimate_iterations")),
    Role.PARAMS, Scope.VEHICLE, _engine_only(_params("clutch")), "ClutchParams",
)
_MAX_TORQUE_CURVE_ENTRIES = 8
_MAX_NB_GEARS = 32
ENGINE_PARAMS = ClassDecl(
    "EngineParams",
    (
        f32("torqueCurve", lambda p: _padded_fixed(p.torque_curve, 2 * _MAX_TORQUE_CURVE_ENTRIES, PX_MAX_F32),
            2 * _MAX_TORQUE_CURVE_ENTRIES),
        f32("peakTorque", "peak_torque"),
        f32("moi", "moi"),
        f32("idleOmega", "idle_omega"),
        f32("maxOmega", "max_omega"),
        f32("dampingRateFullThrottleAH", "damping_rate_full_throttle"),  # PhysX's spelling
        f32("dampingRateZeroThrottleClutchDisengaged", "damping_rate_zero_throttle_clutch_disengaged"),
        f32("dampingRateZeroThrottleClutchEngaged", "damping_rate_zero_throttle_clutch_engaged"),
    ),
    Role.PARAMS, Scope.VEHICLE, _engine_only(_params("engine")), "EngineParams",
)
GEARBOX_PARAMS = ClassDecl(
    "GearboxParams",
    (
        f32("ratios", lambda p: _padded_fixed(p.ratios, _MAX_NB_GEARS, PX_MAX_F32), _MAX_NB_GEARS),
        u32("nbRatios", lambda p: len(p.ratios)),
        u32("neutralGear", "neutral_gear"),
        f32("finalRatio", "final_ratio"),
        f32("switchTime", "switch_time"),
    ),
    Role.PARAMS, Scope.VEHICLE, _engine_only(_params("gearbox")), "GearboxParams",
)
AUTOBOX_PARAMS = ClassDecl(
    "AutoboxParams",
    (
        f32("upRatios", lambda p: _padded_fixed(p.up_ratios, _MAX_NB_GEARS, 0.0), _MAX_NB_GEARS),
        f32("downRatios", lambda p: _padded_fixed(p.down_ratios, _MAX_NB_GEARS, 0.0), _MAX_NB_GEARS),
        f32("latency", "latency"),
    ),
    Role.PARAMS, Scope.VEHICLE, _engine_only(_params("autobox")), "AutoboxParams",
)


def _diff_ratio_attrs(prefix_t: str, prefix_a: str, get_t: Getter, get_a: Getter) -> tuple[AttrDecl, ...]:
    names = ("0To3", "4To7", "8To11", "12To15", "16To19")
    return chunked([prefix_t + n for n in names], get_t) + chunked([prefix_a + n for n in names], get_a)


def _torque_ratios(p: Any) -> np.ndarray:
    return pad_wheels(p.torque_ratios, 0.0)


def _ave_speed_ratios(p: Any) -> np.ndarray:
    return pad_wheels(p.ave_wheel_speed_ratios, 0.0)


MULTI_WHEEL_DIFF_PARAMS = ClassDecl(
    "MultiWheelDiffParams",
    _diff_ratio_attrs("torqueRatios", "aveWheelSpeedRatios", _torque_ratios, _ave_speed_ratios),
    Role.PARAMS, Scope.VEHICLE, _differential("multi"), "MultiWheelDiffParams",
)
FOUR_WHEEL_DIFF_PARAMS = ClassDecl(
    "FourWheelDiffParams",
    (
        f32("frontBias", "front_bias"),
        f32("frontTarget", "front_target"),
        f32("rearBias", "rear_bias"),
        f32("rearTarget", "rear_target"),
        f32("centerBias", "center_bias"),
        f32("centerTarget", "center_target"),
        u32("frontWheels", "front_wheel_ids", 2),
        u32("rearWheels", "rear_wheel_ids", 2),
    ),
    Role.PARAMS, Scope.VEHICLE, _differential("four"), "FourWheelDiffParams", base=MULTI_WHEEL_DIFF_PARAMS,
)
TANK_DIFF_PARAMS = ClassDecl(
    "TankDiffParams",
    (
        u32("nbTracks", "nb_tracks"),
        u32("thrustIdPerTrack", "thrust_id_per_track", 0),
        u32("nbWheelsPerTrack", "nb_wheels_per_track", 0),
        u32("trackToWheelIds", "track_to_wheel_ids", 0),
        u32("wheelIdsInTrackOrder", "wheel_ids_in_track_order", 0),
    ),
    Role.PARAMS, Scope.VEHICLE, _differential("tank"), "TankDiffParams", base=MULTI_WHEEL_DIFF_PARAMS,
)
CLUTCH_RESPONSE_STATE = ClassDecl(
    "ClutchResponseState",
    (f32("normalisedResponse", "normalised_command_response"), f32("response", "command_response")),
    Role.STATE, Scope.VEHICLE, _engine_only(_states("clutch_command_response")), "ClutchResponseState",
)
THROTTLE_RESPONSE_STATE = ClassDecl(
    "ThrottleResponseState", (f32("response", "command_response"),),
    Role.STATE, Scope.VEHICLE, _engine_only(_states("throttle_command_response")), "ThrottleResponseState",
)
ENGINE_STATE = ClassDecl(
    "EngineState", (f32("rotationSpeed", "rotation_speed"),),
    Role.STATE, Scope.VEHICLE, _engine_only(_states("engine")), "EngineState",
)
GEARBOX_STATE = ClassDecl(
    "GearboxState",
    (
        u32("currentGear", "current_gear"),
        u32("targetGear", "target_gear"),
        f32("switchTime", "gear_switch_time"),
    ),
    Role.STATE, Scope.VEHICLE, _engine_only(_states("gearbox")), "GearboxState",
)
AUTOBOX_STATE = ClassDecl(
    "AutoboxState",
    (
        f32("timeSinceLastShift", "time_since_last_shift"),
        flags("activeAutoboxShift", _bool_enum("AutoboxStateBool"), "active_autobox_gear_shift"),
    ),
    Role.STATE, Scope.VEHICLE, _engine_only(_states("autobox")), "AutoboxState",
)
DIFFERENTIAL_STATE = ClassDecl(
    "DifferentialState",
    _diff_ratio_attrs("torqueRatios", "aveWheelSpeedRatios",
                      lambda s: pad_wheels(s.torque_ratios_all_wheels, 0.0),
                      lambda s: pad_wheels(s.ave_wheel_speed_contribution_all_wheels, 0.0)),
    Role.STATE, Scope.VEHICLE, _engine_only(_states("differential")), "DiffState",
)
CLUTCH_SLIP_STATE = ClassDecl(
    "ClutchSlipState", (f32("clutchSlip", "clutch_slip"),),
    Role.STATE, Scope.VEHICLE, _engine_only(_states("clutch_slip")), "ClutchSlipState",
)
ENGINE_DRIVETRAIN = ClassDecl(
    "EngineDrivetrain",
    (
        link("commandState", "EngineDriveCommandState"),
        link("transmissionCommandState", "EngineDriveTransmissionCommandState",
             "TankDriveTransmissionCommandState"),
        link("clutchResponseParams", "ClutchResponseParams"),
        link("clutchParams", "ClutchParams"),
        link("engineParams", "EngineParams"),
        link("gearboxParams", "GearboxParams"),
        link("autoboxParams", "AutoboxParams"),
        link("differentialParams", "MultiWheelDiffParams", "FourWheelDiffParams", "TankDiffParams"),
        link("clutchResponseState", "ClutchResponseState"),
        link("throttleResponseState", "ThrottleResponseState"),
        link("engineState", "EngineState"),
        link("gearboxState", "GearboxState"),
        link("autoboxState", "AutoboxState"),
        link("diffState", "DifferentialState"),
        link("clutchSlipState", "ClutchSlipState"),
    ),
    Role.GRAPH, Scope.VEHICLE, _engine_only(_always), "EngineDrivetrain",
)

# PhysX-actor integration: constraints always; the actor's objects with the actor layer only ---

def _with_actor(get: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``get`` for a vehicle with the PhysX actor layer (params and state), else None."""

    def source(v: Any) -> Any:
        if getattr(v.params, "physx_actor", None) is None or getattr(v.states, "physx_actor", None) is None:
            return None
        return get(v)

    return source


def _unspecified_steer(steer: Any) -> Any:
    """NaN (no update yet) as ``PX_VEHICLE_UNSPECIFIED_STEER_STATE`` (``PX_MAX_F32``)."""
    steer = np.asarray(steer, dtype=np.float64)
    return np.where(np.isnan(steer), PX_MAX_F32, steer)


def _simple_friction_road(v: Any) -> Any:
    """The vehicle's road if it has one plain friction value (plane, heightfield), else None."""
    road = getattr(v, "road", None)
    mu = getattr(road, "friction", None)
    return road if isinstance(mu, int | float | np.floating) and not isinstance(mu, bool) else None


def _per_wheel_limit(v: Any) -> Any:
    """The vehicle's one suspension-limit setting, with its wheel count (PhysX has one per wheel)."""
    p = getattr(v.params, "suspension_limit_constraint", None)
    return None if p is None else (p, v.params.axle_description.nb_wheels)


PHYSX_SUSP_LIMIT_CONSTRAINT_PARAMS = ClassDecl(
    "PhysXSuspLimitConstraintParams",
    (
        f32("restitution", lambda s: np.full(s[1], s[0].restitution)),
        flags("directionMode", EnumDecl("DirectionSpecifier", (
            ("suspensionDir", 0), ("geomNormalDir", 1), ("geomNormalDir", 2))),  # PhysX's duplicate name
            lambda s: np.full(s[1], int(s[0].direction))),
    ),
    Role.PARAMS, Scope.WHEEL, _per_wheel_limit, "PhysXSuspLimtConstraintParams{i}",  # PhysX's spelling
    doc="simcore's SuspensionLimitConstraintParams (one setting for all wheels), per wheel as PhysX.",
)
PHYSX_WHEEL_SHAPE = ClassDecl("PhysXWheelShape", (AttrDecl("pxShapePtr", HANDLE),), Role.PARAMS)
PHYSX_ROAD_GEOM_STATE = ClassDecl(
    "PhysXRoadGeomState",
    (
        f32("hitPosition", count=3),
        AttrDecl("PxActor", HANDLE),
        AttrDecl("PxShape", HANDLE),
        AttrDecl("PxMaterial", HANDLE),
    ),
)
_PHYSX_CONSTRAINT_BOOL = _bool_enum("PhysXConstraintStateBool")
PHYSX_CONSTRAINT_STATE = ClassDecl(
    "PhysXConstraintState",
    (
        flags("tireLongitudinalActiveStatus", _PHYSX_CONSTRAINT_BOOL, lambda s: s.tire_active_status[..., 0]),
        f32("tireLongitudinalLinear", lambda s: s.tire_linears[..., 0, :], 3),
        f32("tireLongitudinalAngular", lambda s: s.tire_angulars[..., 0, :], 3),
        f32("tireLongitudinalDamping", lambda s: s.tire_damping[..., 0]),
        flags("tireLateralActiveStatus", _PHYSX_CONSTRAINT_BOOL, lambda s: s.tire_active_status[..., 1]),
        f32("tireLateralLinear", lambda s: s.tire_linears[..., 1, :], 3),
        f32("tireLateralAngular", lambda s: s.tire_angulars[..., 1, :], 3),
        f32("tireLateralDamping", lambda s: s.tire_damping[..., 1]),
        flags("suspActiveStatus", _PHYSX_CONSTRAINT_BOOL, "susp_active_status"),
        f32("suspLinear", "susp_linear", 3),
        f32("suspAngular", "susp_angular", 3),
        f32("suspRestitution", "restitution"),
        f32("suspGeometricError", "susp_geometric_error"),
    ),
    Role.STATE, Scope.WHEEL, _states("constraints"), "PhysXConstraintState{i}",
    doc="simcore solves the sticky-tire and suspension-limit rows itself; these are the rows.",
)
PHYSX_WHEEL_ATTACHMENT = ClassDecl(
    "PhysXWheelAttachment",
    (
        link("physxConstraintParams", "PhysXSuspLimitConstraintParams"),
        link("physxConstraintState", "PhysXConstraintState"),
        link("physxWheelShape", "PhysXWheelShape"),
        link("physxRoadGeomState", "PhysXRoadGeomState"),
        link_set("physXMaterialFrictions", "PhysXMaterialFriction"),
    ),
    Role.GRAPH, Scope.WHEEL, lambda v: getattr(v.states, "constraints", None), "PhysxWheelAttachment{i}",
)
PHYSX_MATERIAL_FRICTION = ClassDecl(
    "PhysXMaterialFriction", (f32("friction"), AttrDecl("material", HANDLE)), Role.PARAMS,
)
PHYSX_ROAD_GEOMETRY_QUERY_FILTER_DATA = ClassDecl(
    "PhysXRoadGeometryQueryFilterData",
    (
        u32("word0"),
        u32("word1"),
        u32("word2"),
        u32("word3"),
        flags("flags", EnumDecl("PhysXRoadGeometryQueryFlag", (
            ("eSTATIC", 1), ("eDYNAMIC", 2), ("ePREFILTER", 4), ("ePOSTFILTER", 8), ("eANY_HIT", 16),
            ("eNO_BLOCK", 32), ("eBATCH_QUERY_LEGACY_BEHAVIOUR", 64),
            ("eDISABLE_HARDCODED_FILTER", 64),  # the value PhysX registers
        ))),
    ),
    Role.PARAMS,
)
PHYSX_ROAD_GEOM_QUERY_PARAMS = ClassDecl(
    "PhysXRoadGeomQueryParams",
    (
        flags("physxQueryType", EnumDecl("PhysXRoadGeometryQueryTpe", (  # PhysX's spelling
            ("raycast", 1), ("sweep", 2), ("none", 0))), "road_geometry_query_type"),
        # PhysX registers the filter-data class (and its flag enum) between these attributes.
        link("defaultFilterData", "PhysXRoadGeometryQueryFilterData",
             first=(PHYSX_ROAD_GEOMETRY_QUERY_FILTER_DATA,)),
        link_set("filterDataSet", "PhysXRoadGeometryQueryFilterData"),
    ),
    Role.PARAMS, Scope.VEHICLE, _params("road_geometry_query"), "PhysxRoadGeomQryParams",
    doc="simcore's road query type; simcore has no PhysX query filters (no filter-data objects).",
)
PHYSX_RIGID_ACTOR = ClassDecl("PhysXRigidActor", (AttrDecl("rigidActor", HANDLE),), Role.PARAMS)
PHYSX_STEER_STATE = ClassDecl(
    "PhysXSteerState",
    (f32("previousSteerCommand", lambda s: _unspecified_steer(s.previous_steer)),),
    Role.STATE, Scope.VEHICLE, _with_actor(_states("physx_actor")), "PhysXSteerState",
    doc="``PxVehiclePhysXSteerState``: the steer command of the last update (actor layer only).",
)

VEHICLE = ClassDecl(
    "Vehicle",
    (
        link("rigidBodyParams", "RigidBodyParams"),
        link("rigidBodyState", "RigidBodyState"),
        link("suspStateCalcParams", "SuspStateCalculationParams"),
        link_set("wheelAttachmentSet", "WheelAttachment"),
        link_set("antiRollSet", "AntiRollParams"),
        link("antiRollForce", "AntiRollForce"),
        link_set("brakeResponseParamsSet", "BrakeResponseParams"),
        link("steerResponseParams", "SteerResponseParams"),
        link("brakeResponseState", "BrakeResponseState"),
        link("steerResponseState", "SteerResponseState"),
        link("ackermannParams", "AckermannParams"),
        link("directDrivetrain", "DirectDrivetrain"),
        link("engineDrivetrain", "EngineDrivetrain"),
        link_set("physxWheelAttachmentSet", "PhysXWheelAttachment"),
        link("physxRoadGeomQryParams", "PhysXRoadGeomQueryParams"),
        link("physxRigidActor", "PhysXRigidActor"),
        link("physxSteerState", "PhysXSteerState"),
    ),
    Role.GRAPH, Scope.VEHICLE, _always, "Vehicle",
)

#: Vehicle2's classes in ``PxVehiclePvdAttributesCreate`` order (enum classes and the nested
#: filter-data class are registered on the way, where PhysX registers them).
VEHICLE2_CLASSES: tuple[ClassDecl, ...] = (
    RIGID_BODY_PARAMS, RIGID_BODY_STATE, SUSP_STATE_CALC_PARAMS,
    STEER_RESPONSE_PARAMS, BRAKE_RESPONSE_PARAMS, STEER_RESPONSE_STATE, BRAKE_RESPONSE_STATE,
    ACKERMANN_PARAMS,
    WHEEL_PARAMS, WHEEL_ACTUATION_STATE, WHEEL_RIGID_BODY_1D_STATE, WHEEL_LOCAL_POSE_STATE,
    ROAD_GEOMETRY_STATE, SUSPENSION_PARAMS, SUSPENSION_COMPLIANCE_PARAMS, SUSPENSION_FORCE_PARAMS,
    SUSPENSION_STATE, SUSPENSION_COMPLIANCE_STATE, SUSPENSION_FORCE,
    TIRE_PARAMS, TIRE_DIRECTION_STATE, TIRE_SPEED_STATE, TIRE_SLIP_STATE, TIRE_STICKY_STATE,
    TIRE_GRIP_STATE, TIRE_CAMBER_STATE, TIRE_FORCE, WHEEL_ATTACHMENT,
    ANTI_ROLL_PARAMS, ANTI_ROLL_FORCE,
    DIRECT_DRIVE_THROTTLE_RESPONSE_PARAMS, DIRECT_DRIVE_COMMAND_STATE,
    DIRECT_DRIVE_TRANSMISSION_COMMAND_STATE, DIRECT_DRIVE_THROTTLE_RESPONSE_STATE, DIRECT_DRIVETRAIN,
    ENGINE_DRIVE_COMMAND_STATE, ENGINE_DRIVE_TRANSMISSION_COMMAND_STATE,
    TANK_DRIVE_TRANSMISSION_COMMAND_STATE,
    CLUTCH_RESPONSE_PARAMS, CLUTCH_PARAMS, ENGINE_PARAMS, GEARBOX_PARAMS, AUTOBOX_PARAMS,
    MULTI_WHEEL_DIFF_PARAMS, FOUR_WHEEL_DIFF_PARAMS, TANK_DIFF_PARAMS,
    CLUTCH_RESPONSE_STATE, THROTTLE_RESPONSE_STATE, ENGINE_STATE, GEARBOX_STATE, AUTOBOX_STATE,
    DIFFERENTIAL_STATE, CLUTCH_SLIP_STATE, ENGINE_DRIVETRAIN,
    PHYSX_SUSP_LIMIT_CONSTRAINT_PARAMS, PHYSX_WHEEL_SHAPE, PHYSX_ROAD_GEOM_STATE, PHYSX_CONSTRAINT_STATE,
    PHYSX_WHEEL_ATTACHMENT, PHYSX_MATERIAL_FRICTION, PHYSX_ROAD_GEOM_QUERY_PARAMS, PHYSX_RIGID_ACTOR,
    PHYSX_STEER_STATE,
    VEHICLE,
)


@dataclass(frozen=True)
class Schema:
    """An ordered set of class declarations: what :func:`register_schema` registers."""

    classes: tuple[ClassDecl, ...]
    _by_name: dict[str, ClassDecl] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name: dict[str, ClassDecl] = {}
        for c in self.walk():
            if c.name in by_name and by_name[c.name] is not c:
                raise ValueError(f"schema declares two different classes named {c.name!r}")
            by_name[c.name] = c
        object.__setattr__(self, "_by_name", by_name)

    def walk(self) -> Iterator[ClassDecl]:
        """Every declared class (nested ones included) in registration order, enums excluded."""
        seen: set[int] = set()

        def visit(c: ClassDecl) -> Iterator[ClassDecl]:
            if id(c) in seen:
                return
            seen.add(id(c))
            if c.base is not None:
                yield from visit(c.base)
            yield c
            for a in c.attrs:
                for nested in a.first:
                    yield from visit(nested)

        for c in self.classes:
            yield from visit(c)

    def __getitem__(self, name: str) -> ClassDecl:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no class {name!r} in the schema") from None

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def object_classes(self) -> tuple[ClassDecl, ...]:
        """Classes whose objects simcore creates (scope other than NONE)."""
        return tuple(c for c in self.walk() if c.scope != Scope.NONE)


# --------------------------------------------------------------------------------------------
# simcore's own classes: what PhysX does not record (PhysX's scene has these as PxScene data)
# --------------------------------------------------------------------------------------------

#: ``PxVehicleAxes::Enum`` (simcore's :class:`~simcore.frame.Axis`).
VEHICLE_AXES = EnumDecl("VehicleAxes", (
    ("ePosX", 0), ("eNegX", 1), ("ePosY", 2), ("eNegY", 3), ("ePosZ", 4), ("eNegZ", 5)))

SIMULATION_CONTEXT = ClassDecl(
    "SimulationContext",
    (
        f64("gravity", "gravity", 3),
        flags("lngAxis", VEHICLE_AXES, "frame.lng_axis"),
        flags("latAxis", VEHICLE_AXES, "frame.lat_axis"),
        flags("vrtAxis", VEHICLE_AXES, "frame.vrt_axis"),
        f64("scale", "scale.scale"),
        f64("minLatSlipDenominator", "tire_slip_params.min_lat_slip_denominator"),
        f64("minActiveLongSlipDenominator", "tire_slip_params.min_active_long_slip_denominator"),
        f64("minPassiveLongSlipDenominator", "tire_slip_params.min_passive_long_slip_denominator"),
        f64("lngStickyThresholdSpeed", "tire_sticky_params.longitudinal.threshold_speed"),
        f64("lngStickyThresholdTime", "tire_sticky_params.longitudinal.threshold_time"),
        f64("lngStickyDamping", "tire_sticky_params.longitudinal.damping"),
        f64("latStickyThresholdSpeed", "tire_sticky_params.lateral.threshold_speed"),
        f64("latStickyThresholdTime", "tire_sticky_params.lateral.threshold_time"),
        f64("latStickyDamping", "tire_sticky_params.lateral.damping"),
        f64("thresholdForwardSpeedForWheelAngleIntegration",
            "threshold_forward_speed_for_wheel_angle_integration"),
    ),
    Role.PARAMS, Scope.VEHICLE, lambda v: getattr(v, "context", None), "SimulationContext",
    origin="simcore", shared=True,
    doc="``PxVehicleSimulationContext`` (gravity, frame, scale, slip and sticky-tire thresholds), "
        "which PhysX does not record; attribute names are its field names.",
)


def _is_plain_road(kind: str) -> Callable[[Any], Any]:
    def get(v: Any) -> Any:
        road = getattr(v, "road", None)
        if road is None:
            return None
        found = {"PlaneRoad": "plane", "HeightfieldRoad": "heightfield"}.get(type(road).__name__, "other")
        return road if found == kind else None

    return get


def _surface_index(road: Any) -> int:
    return list(type(road.surface)).index(road.surface)


ROAD_GEOMETRY = ClassDecl(
    "RoadGeometry", (AttrDecl("type", STRING, 1, lambda r: type(r).__name__),),
    Role.PARAMS, Scope.VEHICLE, _is_plain_road("other"), "Road", origin="simcore", shared=True,
    doc="The road a vehicle queries; ``type`` is its Python class. Base of the road classes below.",
)
PLANE_ROAD = ClassDecl(
    "PlaneRoad",
    (f64("normal", "normal", 3), f64("d", "d"), f64("friction", "friction")),
    Role.PARAMS, Scope.VEHICLE, _is_plain_road("plane"), "Road", base=ROAD_GEOMETRY,
    origin="simcore", shared=True,
    doc="An infinite plane ``normal . x + d = 0`` (world frame) with one friction value.",
)
HEIGHTFIELD_ROAD = ClassDecl(
    "HeightfieldRoad",
    (
        u32("rows", lambda r: r.heights.shape[0]),
        u32("columns", lambda r: r.heights.shape[1]),
        f64("rowSpacing", "row_spacing"),
        f64("columnSpacing", "column_spacing"),
        f64("origin", "origin", 3),
        flags("lngAxis", VEHICLE_AXES, "frame.lng_axis"),
        flags("latAxis", VEHICLE_AXES, "frame.lat_axis"),
        flags("vrtAxis", VEHICLE_AXES, "frame.vrt_axis"),
        f64("friction", "friction"),
        flags("surface", EnumDecl("HeightfieldSurface", (("triangles", 0), ("bilinear", 1))), _surface_index),
        f64("heights", lambda r: np.asarray(r.heights).reshape(-1), 0),
    ),
    Role.PARAMS, Scope.VEHICLE, _is_plain_road("heightfield"), "Road", base=ROAD_GEOMETRY,
    origin="simcore", shared=True,
    doc="A grid of heights (row-major, ``rows`` x ``columns``) laid out in a vehicle frame.",
)
SIMULATION = ClassDecl(
    "Simulation",
    (
        f64("time", "time"),
        f64("dt", "dt"),
        AttrDecl("step", U64, 1, attrgetter("step")),
        link_set("vehicles", "Vehicle"),
        link_set("contexts", "SimulationContext"),
        link_set("roads", "RoadGeometry", "PlaneRoad", "HeightfieldRoad"),
    ),
    Role.STATE, Scope.RECORDING, _always, "Simulation", origin="simcore",
    doc="One per recording: the simulated time (seconds) at the end of the frame's step, the "
        "step's dt, the number of steps, and the vehicles, contexts and roads recorded.",
)

#: simcore's own classes, registered after Vehicle2's.
SIMCORE_CLASSES: tuple[ClassDecl, ...] = (
    SIMULATION_CONTEXT, ROAD_GEOMETRY, PLANE_ROAD, HEIGHTFIELD_ROAD, SIMULATION,
)

#: What a simcore recording registers: Vehicle2's schema, then simcore's own classes.
SCHEMA = Schema(VEHICLE2_CLASSES + SIMCORE_CLASSES)


# --------------------------------------------------------------------------------------------
# PhysX's scene classes for the chassis actor (PhysX layout: the actor layer is on)
# --------------------------------------------------------------------------------------------

U8 = DataType.UINT8

#: ``PxActorType``, ``PxActorFlag``, ``PxRigidBodyFlag``, ``PxRigidDynamicLockFlag`` as PhysX
#: registers them (values copied from ``tests/data/vehicles_short.ovd``).
PX_ACTOR_TYPE = EnumDecl("PxActorType", (
    ("eRIGID_STATIC", 0), ("eRIGID_DYNAMIC", 1), ("eARTICULATION_LINK", 2), ("eDEFORMABLE_SURFACE", 3),
    ("eDEFORMABLE_VOLUME", 4), ("ePBD_PARTICLESYSTEM", 5)))
PX_ACTOR_FLAG = EnumDecl("PxActorFlag", (
    ("eVISUALIZATION", 1), ("eDISABLE_GRAVITY", 2), ("eSEND_SLEEP_NOTIFIES", 4), ("eDISABLE_SIMULATION", 8)))
PX_RIGID_BODY_FLAG = EnumDecl("PxRigidBodyFlag", (
    ("eKINEMATIC", 1), ("eUSE_KINEMATIC_TARGET_FOR_SCENE_QUERIES", 2), ("eENABLE_CCD", 4),
    ("eENABLE_CCD_FRICTION", 8), ("eENABLE_POSE_INTEGRATION_PREVIEW", 32), ("eENABLE_SPECULATIVE_CCD", 16),
    ("eENABLE_CCD_MAX_CONTACT_IMPULSE", 64), ("eRETAIN_ACCELERATIONS", 128),
    ("eFORCE_KINE_KINE_NOTIFICATIONS", 256), ("eFORCE_STATIC_KINE_NOTIFICATIONS", 512),
    ("eENABLE_GYROSCOPIC_FORCES", 1024), ("eRESERVED", 32768)))
PX_RIGID_DYNAMIC_LOCK_FLAG = EnumDecl("PxRigidDynamicLockFlag", (
    ("eLOCK_LINEAR_X", 1), ("eLOCK_LINEAR_Y", 2), ("eLOCK_LINEAR_Z", 4), ("eLOCK_ANGULAR_X", 8),
    ("eLOCK_ANGULAR_Y", 16), ("eLOCK_ANGULAR_Z", 32)))
_ERIGID_DYNAMIC = 1
_EDISABLE_GRAVITY = 2
_EENABLE_GYROSCOPIC_FORCES = 1024


@dataclass(frozen=True)
class PhysXActorSource:
    """What the actor's params-role attributes read: the vehicle's params and its name (the
    ``PxRigidDynamic``'s ``name``, which PhysX sets to the vehicle's prim path)."""

    params: Any
    name: str

    @property
    def actor(self) -> Any:
        """The vehicle's :class:`~simcore.physx_actor.params.PhysXActorParams`."""
        return self.params.physx_actor


def _actor_params_source(params: Any, name: str) -> PhysXActorSource | None:
    return None if getattr(params, "physx_actor", None) is None else PhysXActorSource(params, name)


def _global_pose(v: Any) -> np.ndarray:
    """``[qx, qy, qz, qw, px, py, pz]`` of the actor origin (PhysX's PxTransform layout)."""
    a = v.states.physx_actor
    return np.concatenate([np.asarray(a.quat), np.asarray(a.pos)], axis=-1)


def _cmass_local_pose(s: PhysXActorSource) -> np.ndarray:
    return np.concatenate([s.actor.cmass_local_quat, s.actor.cmass_local_pos])


def _actor_state(name: str) -> Getter:
    return lambda v: getattr(v.states.physx_actor, name)


PX_ACTOR = ClassDecl(
    "PxActor",
    (
        flags("type", PX_ACTOR_TYPE, lambda s: _ERIGID_DYNAMIC),
        flags("flags", PX_ACTOR_FLAG, lambda s: _EDISABLE_GRAVITY),  # Vehicle2 applies gravity itself
        AttrDecl("name", STRING, 1, attrgetter("name")),
        f32("worldBounds", count=6),
        AttrDecl("dominance", U8),
        AttrDecl("ownerClient", U8),
        u32("environmentID"),
    ),
    Role.PARAMS, phase=Phase.SCENE,
)
PX_RIGID_ACTOR = ClassDecl(
    "PxRigidActor",
    (
        f32("globalPose", _global_pose, 7, role=Role.STATE),
        AttrDecl("shapes", HANDLE, unique_list=True),
    ),
    Role.PARAMS, base=PX_ACTOR, phase=Phase.SCENE,
)
PX_RIGID_BODY = ClassDecl(
    "PxRigidBody",
    (
        f32("cMassLocalPose", _cmass_local_pose, 7),
        f32("mass", "params.rigid_body.mass"),
        f32("massSpaceInertiaTensor", "params.rigid_body.moi", 3),
        f32("linearDamping", "actor.linear_damping"),
        f32("angularDamping", "actor.angular_damping"),
        f32("linearVelocity", _actor_state("linear_velocity"), 3, role=Role.STATE),
        f32("angularVelocity", _actor_state("angular_velocity"), 3, role=Role.STATE),
        f32("maxLinearVelocity", "actor.max_linear_velocity"),
        f32("maxAngularVelocity", "actor.max_angular_velocity"),
        flags("rigidBodyFlags", PX_RIGID_BODY_FLAG,
              lambda s: _EENABLE_GYROSCOPIC_FORCES if s.actor.gyroscopic else 0),
        f32("minCCDAdvanceCoefficient"),
        f32("maxDepenetrationVelocity"),
        f32("maxContactImpulse"),
        f32("contactSlopCoefficient"),
        f32("force", count=3),
        f32("torque", count=3),
    ),
    Role.PARAMS, base=PX_RIGID_ACTOR, phase=Phase.SCENE,
)
PX_RIGID_DYNAMIC = ClassDecl(
    "PxRigidDynamic",
    (
        AttrDecl("isSleeping", U8, 1, _actor_state("is_sleeping"), role=Role.STATE),
        f32("sleepThreshold", "actor.sleep_threshold"),
        f32("stabilizationThreshold"),
        flags("rigidDynamicLockFlags", PX_RIGID_DYNAMIC_LOCK_FLAG),
        f32("wakeCounter", _actor_state("wake_counter"), role=Role.STATE),
        u32("positionIterations", "actor.position_iterations"),
        u32("velocityIterations", "actor.velocity_iterations"),
        f32("contactReportThreshold"),
    ),
    Role.PARAMS, Scope.VEHICLE, _with_actor(_always), "", base=PX_RIGID_BODY, phase=Phase.SCENE,
    params_source=_actor_params_source,
    doc="The chassis actor after the scene's solve (frame 2i+1): ``states.physx_actor`` for pose, "
        "velocities and sleep state; ``params.physx_actor`` and ``params.rigid_body`` for the rest. "
        "Object name '' and attribute ``name`` = the vehicle's name, as PhysX names its actors.",
)

# The PhysX layout gives two registered-only Vehicle2 classes objects: the same registration
# (names, types, counts), declared with sources. They stay registered-only in SCHEMA, where no
# PxRigidDynamic exists to link to and no PxMaterial to name.
PHYSX_RIGID_ACTOR_OBJECTS = ClassDecl(
    "PhysXRigidActor", (link("rigidActor", "PxRigidDynamic"),),
    Role.GRAPH, Scope.VEHICLE, _with_actor(_always), "PhysXRigidActor",
    doc="The Vehicle's link to its chassis actor (PhysX layout).",
)
PHYSX_MATERIAL_FRICTION_OBJECTS = ClassDecl(
    "PhysXMaterialFriction", (f32("friction", "friction"), AttrDecl("material", HANDLE)),
    Role.PARAMS, Scope.WHEEL, _with_actor(_simple_friction_road), "PhysxMaterialFriction{i}_0",
    doc="The road's one friction value, one object per wheel as PhysX (``material`` is not written: "
        "simcore has no PxMaterial to point at).",
)
_PHYSX_LAYOUT_SWAP = {id(PHYSX_RIGID_ACTOR): PHYSX_RIGID_ACTOR_OBJECTS,
                      id(PHYSX_MATERIAL_FRICTION): PHYSX_MATERIAL_FRICTION_OBJECTS}
PHYSX_LAYOUT_VEHICLE2_CLASSES: tuple[ClassDecl, ...] = tuple(
    _PHYSX_LAYOUT_SWAP.get(id(c), c) for c in VEHICLE2_CLASSES)

#: ``PxPhysics`` as PhysX registers it (21 unique lists and the tolerances scale). The recorder
#: creates its one object (name '') first and lists every chassis actor in ``rigidDynamics``: in
#: PhysX's recordings that is the actors' shortest graph path, so ``pvdkit diff`` pairs a
#: simcore actor with PhysX's at ``PxPhysics/rigidDynamics[k]``.
PX_PHYSICS = ClassDecl(
    "PxPhysics",
    tuple(AttrDecl(n, HANDLE, unique_list=True) for n in (
        "scenes", "constraints", "heightFields", "convexMeshes", "triangleMeshes", "tetrahedronMeshes",
        "deformableVolumeMeshes", "shapes", "bvhs", "materials", "deformableSurfaceMaterials",
        "deformableVolumeMaterials", "PBDMaterials", "rigidDynamics", "rigidStatics", "deformableVolumes",
        "deformableSurfaces", "pbdParticleSystems", "particleBuffers", "aggregates", "articulations"))
    + (f32("tolerancesScale", count=2),),
    doc="Created by the recorder in the PhysX layout; ``rigidDynamics`` lists the chassis actors.",
)

#: PhysX's scene classes a simcore recording registers in the PhysX layout (before Vehicle2's,
#: where PhysX registers them): ``PxPhysics`` and the actor's class hierarchy.
PHYSX_SCENE_CLASSES: tuple[ClassDecl, ...] = (PX_PHYSICS, PX_ACTOR, PX_RIGID_ACTOR, PX_RIGID_BODY,
                                              PX_RIGID_DYNAMIC)

#: What a simcore recording of vehicles with the PhysX actor layer registers (the PhysX layout).
PHYSX_SCHEMA = Schema(PHYSX_SCENE_CLASSES + PHYSX_LAYOUT_VEHICLE2_CLASSES + SIMCORE_CLASSES)
