"""Stingray ``.physics`` vehicle descriptions mapped onto simcore's Vehicle2 params.

A ``.physics`` file (SJSON, see :mod:`simcore.stingray.sjson`) holds ``vehicles = [ {...} ]``;
:func:`load_physics` reads every entry into a :class:`StingrayVehicle` holding validated
:class:`~simcore.vehicle.VehicleParams` (an engine drive: four-wheel differential for a
``"vehicle"``, tank differential for a ``"tank"``), the input smoothing, and the descriptive
fields. ``docs/stingray.md`` lists every property, its simcore counterpart and its default.

Frame: Stingray units are Z up and Y forward, so X points right; the params are built in that
frame (:data:`STINGRAY_FRAME`: lng +Y, lat -X, vrt +Z) and metres, and converted on request.

Geometry: Stingray takes the chassis centre of mass and the wheel positions and radii from the
unit's physics shapes (``scene_graph_shape_node``), which live in the ``.unit`` file. simcore has
no unit files, so a ``.physics`` file read here carries a top-level ``shapes`` object (a simcore
extension) giving, for each shape node name, its ``position`` and either ``half_extents`` (a box:
the chassis) or ``radius`` and ``half_width`` (a wheel), in the unit's frame.

Errors: :class:`StingrayError` (``file:line:column: property.path: message``) for values that
are missing, of the wrong type or out of range; unknown keys raise a :class:`StingrayWarning`
and are ignored.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simcore.axle import AxleDescription
from simcore.braking.params import BrakeCommandResponseParams
from simcore.drivetrain.engine_drive.params import (
    AutoboxParams,
    ClutchCommandResponseParams,
    ClutchParams,
    EngineParams,
    FourWheelDriveDifferentialParams,
    GearboxParams,
    TankDriveDifferentialParams,
    TankDriveModel,
)
from simcore.frame import Axis, Frame, Scale
from simcore.limits import MAX_NB_WHEELS, is_finite_number
from simcore.rigid_body.params import RigidBodyParams
from simcore.steering.params import AckermannParams, SteerCommandResponseParams
from simcore.stingray.sjson import Location, SjsonArray, SjsonError, SjsonObject, SjsonWarning, child_path
from simcore.stingray.sjson import load as load_sjson
from simcore.stingray.smoothing import (
    CHANNELS,
    DEFAULT_FALL_RATES,
    DEFAULT_RISE_RATES,
    DriverInputParams,
    InputSmoothingParams,
)
from simcore.suspension.params import (
    JounceCalculationType,
    SuspensionComplianceParams,
    SuspensionForceParams,
    SuspensionParams,
    SuspensionStateCalculationParams,
)
from simcore.tire.params import TireForceParams
from simcore.vehicle import VehicleParams
from simcore.wheel.params import WheelParams

#: Stingray's unit frame: X right, Y forward, Z up (lng +Y, lat = left = -X, vrt +Z).
STINGRAY_FRAME = Frame(Axis.POS_Y, Axis.NEG_X, Axis.POS_Z)
#: Gravity (m/s^2) used for tire rest loads and "per unit gravity" stiffnesses.
GRAVITY = 9.81
#: Most forward gears a Stingray gearbox may have (plus reverse and neutral: Vehicle2's 32).
MAX_FORWARD_GEARS = 30
#: Most (speed, steer) pairs of ``steer_vs_forward_speed`` (Vehicle2 allows 64 speed responses in
#: all, and the table becomes two curves, at command 0 and 1).
MAX_STEER_VS_SPEED_POINTS = 32

#: Defaults for properties a file leaves out: PhysX 3's vehicle SDK defaults (whose data model
#: the ``.physics`` format follows), by property path below a vehicle entry.
DEFAULTS: dict[str, Any] = {
    "enabled": True,
    "vehicle_physics_model": "vehicle",
    "chassis.center_of_mass_offset": (0.0, 0.0, 0.0),
    "chassis.moment_of_inertia.mass_factor": 1.0 / 12.0,
    "chassis.moment_of_inertia.responsiveness": 0.8,
    "chassis.moment_of_inertia.cuboid.scale": (1.0, 1.0, 1.0),
    "engine.peak_torque": 500.0,
    "engine.max_omega": 600.0,
    "engine.damping_rate.full_throttle": 0.15,
    "engine.damping_rate.zero_throttle_clutch_engaged": 2.0,
    "engine.damping_rate.zero_throttle_clutch_disengaged": 0.35,
    "differential.type": "ls_4wd",
    "differential.front_rear_split": 0.45,
    "differential.front_left_right_split": 0.5,
    "differential.rear_left_right_split": 0.5,
    "differential.center_bias": 1.3,
    "differential.front_bias": 1.3,
    "differential.rear_bias": 1.3,
    "gears.auto_gears_enabled": True,
    "gears.final_ratio": 4.0,
    "gears.switch_time": 0.5,
    "gears.ratios": (-4.0, 0.0, 4.0, 2.0, 1.5, 1.1, 1.0),
    "clutch.strength": 10.0,
    "ackermann_correction.accuracy": 1.0,
    "wheels[].mass": 20.0,
    "wheels[].radius_scale": 1.0,
    "wheels[].damping_rate": 0.25,
    "wheels[].max_brake_torque": 1500.0,
    "wheels[].max_handbrake_torque": 0.0,
    "wheels[].max_steer": 0.0,
    "wheels[].position_offset": (0.0, 0.0, 0.0),
    "wheels[].tire.lateral_stiffness_x": 2.0,
    "wheels[].tire.lateral_stiffness_y": 18.0,
    "wheels[].tire.longitudinal_stiffness": 1000.0,
    "wheels[].tire.friction_versus_slip": ((0.0, 1.0), (0.1, 1.0), (1.0, 1.0)),
    "wheels[].tire.force_application_offset": (0.0, 0.0, 0.0),
    "wheels[].suspension.sprung_mass": 0.0,
    "wheels[].suspension.max_compression": 0.3,
    "wheels[].suspension.max_droop": 0.1,
    "wheels[].suspension.camber_rest": 0.0,
    "wheels[].suspension.camber_max_compression": 0.0,
    "wheels[].suspension.camber_max_droop": 0.0,
    "wheels[].suspension.spring_strength": 35000.0,
    "wheels[].suspension.spring_damper_rate": 4500.0,
    "wheels[].suspension.travel_direction": (0.0, 0.0, -1.0),
    "wheels[].suspension.force_application_offset": (0.0, 0.0, 0.0),
}
#: Engine values the format does not carry (PhysX 3's defaults): torque curve of (normalised
#: speed, normalised torque) points, engine inertia (kg m^2), idle speed (rad/s).
ENGINE_TORQUE_CURVE = ((0.0, 0.8), (0.33, 1.0), (1.0, 0.8))
ENGINE_MOI = 1.0
ENGINE_IDLE_OMEGA = 0.0
#: Automatic gearbox thresholds (PhysX's defaults): shift up above 65 % of max omega, down below 50 %,
#: at most one automatic shift per ``AUTOBOX_LATENCY`` seconds.
AUTOBOX_UP_RATIO = 0.65
AUTOBOX_DOWN_RATIO = 0.5
AUTOBOX_LATENCY = 2.0
#: Limited-slip differentials: Vehicle2 pulls a breached speed ratio back to a target just below the
#: bias (PhysX's own data: bias 1.3 -> target 1.29) at this rate (1/s).
LIMITED_SLIP_TARGET_FRACTION = 29.0 / 30.0
LIMITED_SLIP_RATE = 10.0
#: Tire load filter (PhysX's default): normalised loads clamped to [0, 3], 0 filtered to 0.2308.
TIRE_LOAD_FILTER = ((0.0, 0.2308), (3.0, 3.0))

DIFFERENTIAL_TYPES = ("ls_4wd", "open_4wd", "ls_frontwd", "ls_rearwd", "open_frontwd", "open_rearwd")
PHYSICS_MODELS = ("vehicle", "tank")


class StingrayError(SjsonError):
    """A ``.physics`` value that is missing, mistyped or out of range (file:line:column: path)."""


class StingrayWarning(SjsonWarning):
    """An ignored or suspicious ``.physics`` value (unknown key, property that does not apply)."""


# --------------------------------------------------------------------------------------------
# Typed, located access to a section
# --------------------------------------------------------------------------------------------


class _Section:
    """One SJSON object being read: typed getters with located errors; unknown keys warn."""

    def __init__(self, node: Any, path: str, where: Location, known_metadata: Sequence[str] = ()) -> None:
        if not isinstance(node, dict):
            raise StingrayError(f"expected an object {{ ... }}, got {_show(node)}", where, path)
        self.node = node
        self.path = path
        self.where = where
        self.used: set[str] = set(known_metadata)

    def loc(self, key: str | None = None) -> Location:
        if isinstance(self.node, SjsonObject):
            return self.node.location(key)
        return self.where

    def fail(self, key: str | None, message: str) -> StingrayError:
        return StingrayError(message, self.loc(key), child_path(self.path, key) if key else self.path)

    def warn(self, key: str | None, message: str) -> None:
        where = self.loc(key)
        path = child_path(self.path, key) if key else self.path
        warnings.warn(StingrayWarning(f"{where}: {path}: {message}"), stacklevel=3)

    def has(self, *keys: str) -> bool:
        return any(k in self.node for k in keys)

    def raw(self, key: str) -> Any:
        self.used.add(key)
        return self.node.get(key)

    def number(self, key: str, default: float | None = None, *, gt: float | None = None,
               ge: float | None = None, le: float | None = None) -> float:
        if key not in self.node:
            if default is None:
                raise self.fail(None, f"{key!r} is missing (required)")
            return float(default)
        value = self.raw(key)
        if not is_finite_number(value):
            raise self.fail(key, f"expected a number, got {_show(value)}")
        v = float(value)
        if gt is not None and not v > gt:
            raise self.fail(key, f"must be greater than {gt:g}, got {v:g}")
        if ge is not None and not v >= ge:
            raise self.fail(key, f"must be at least {ge:g}, got {v:g}")
        if le is not None and not v <= le:
            raise self.fail(key, f"must be at most {le:g}, got {v:g}")
        return v

    def boolean(self, key: str, default: bool) -> bool:
        if key not in self.node:
            return default
        value = self.raw(key)
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {_show(value)}")
        return value

    def string(self, key: str, default: str | None = None,
               choices: Sequence[str] | None = None) -> str | None:
        if key not in self.node:
            return default
        value = self.raw(key)
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {_show(value)}")
        if choices is not None and value not in choices:
            raise self.fail(key, f"expected one of {', '.join(repr(c) for c in choices)}, got {value!r}")
        return value

    def numbers(self, key: str, size: int | None, default: Sequence[float] | None = None) -> np.ndarray:
        """A flat array of numbers (of ``size`` if given)."""
        if key not in self.node:
            if default is None:
                raise self.fail(None, f"{key!r} is missing (required)")
            return np.array(default, dtype=np.float64)
        return _numbers(self.raw(key), child_path(self.path, key), self.loc(key), size)

    def pairs(self, key: str, default: Sequence[Sequence[float]] | None = None) -> np.ndarray:
        """(k, 2) pairs written flat (``0 1 5 0.75``) or nested (``[0 1] [5 0.75]``)."""
        if key not in self.node:
            if default is None:
                raise self.fail(None, f"{key!r} is missing (required)")
            return np.array(default, dtype=np.float64).reshape(-1, 2)
        value = self.raw(key)
        path = child_path(self.path, key)
        if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
            return np.array([
                _numbers(v, child_path(path, i), value.location(i) if isinstance(value, SjsonArray) else
                         self.loc(key), 2) for i, v in enumerate(value)])
        flat = _numbers(value, path, self.loc(key), None)
        if flat.size % 2:
            raise self.fail(key, f"expected pairs of numbers, got an odd count ({flat.size})")
        return flat.reshape(-1, 2)

    def section(self, key: str, known_metadata: Sequence[str] = ()) -> _Section | None:
        if key not in self.node:
            return None
        value = self.raw(key)
        return _Section(value, child_path(self.path, key), self.loc(key), known_metadata)

    def array(self, key: str) -> list[Any]:
        value = self.raw(key)
        if not isinstance(value, list):
            raise self.fail(key, f"expected an array [ ... ], got {_show(value)}")
        return value

    def finish(self) -> None:
        """Warn about every key that was never read."""
        for key in self.node:
            if key not in self.used:
                self.warn(key, "unknown property, ignored")


def _numbers(value: Any, path: str, where: Location, size: int | None) -> np.ndarray:
    """``value`` as a float array: a list of finite numbers (``size`` of them if given)."""
    if not isinstance(value, list):
        raise StingrayError(f"expected an array of numbers, got {_show(value)}", where, path)
    out = []
    for i, v in enumerate(value):
        if not is_finite_number(v):
            at = value.location(i) if isinstance(value, SjsonArray) else where
            raise StingrayError(f"expected a number, got {_show(v)}", at, child_path(path, i))
        out.append(float(v))
    if size is not None and len(out) != size:
        raise StingrayError(f"expected {size} numbers, got {len(out)}", where, path)
    return np.array(out)


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_render_nodes(sec: _Section) -> tuple[str, ...]:
    """``scene_graph_render_nodes``: an array of {node, transform_type} (display only)."""
    if not sec.has("scene_graph_render_nodes"):
        return ()
    items = sec.array("scene_graph_render_nodes")
    names = []
    for i, item in enumerate(items):
        where = items.location(i) if isinstance(items, SjsonArray) else sec.loc("scene_graph_render_nodes")
        s = _Section(item, child_path(child_path(sec.path, "scene_graph_render_nodes"), i), where)
        names.append(s.string("node") or "")
        s.string("transform_type")
        s.finish()
    return tuple(names)


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """A physics shape of the unit (the ``shapes`` extension): ``position`` (3,) in the unit frame
    (m); a box has ``half_extents`` (3,), a wheel ``radius`` and ``half_width`` (m)."""

    name: str
    position: np.ndarray
    half_extents: np.ndarray | None = None
    radius: float | None = None
    half_width: float | None = None


@dataclass(frozen=True)
class WheelInfo:
    """Descriptive per-wheel fields (not simulated): shape node, render nodes, raycast filter,
    tire type."""

    shape_node: str
    render_nodes: tuple[str, ...] = ()
    raycast_filter: str | None = None
    tire_type: str | None = None


@dataclass(frozen=True)
class StingrayVehicle:
    """One entry of a ``.physics`` file mapped onto simcore.

    ``params``: validated engine-drive :class:`~simcore.vehicle.VehicleParams` (frame
    :data:`STINGRAY_FRAME` unless converted). ``driver_inputs``: the steer-vs-speed limit and
    input smoothing (see :mod:`simcore.stingray.smoothing`), None when the file has neither.
    ``physics_model``: ``"vehicle"`` or ``"tank"``; ``tank_drive_model`` for tanks. The rest is
    descriptive.
    """

    name: str
    params: VehicleParams
    physics_model: str = "vehicle"
    tank_drive_model: str | None = None
    driver_inputs: DriverInputParams | None = None
    enabled: bool = True
    actor_name: str | None = None
    chassis_shape: str = ""
    chassis_render_nodes: tuple[str, ...] = ()
    wheels: tuple[WheelInfo, ...] = ()
    source: str = ""
    index: int = 0

    @property
    def label(self) -> str:
        """A file-name-safe label (the vehicle's name)."""
        return "".join(c if c.isalnum() or c in "-_" else "_" for c in self.name) or f"vehicle{self.index}"

    def to(self, frame: Frame, scale: Scale | float | None = None) -> StingrayVehicle:
        """The same vehicle with its params in ``frame`` (and ``scale``)."""
        from dataclasses import replace

        params = self.params.to(frame, scale)
        inputs = self.driver_inputs
        if inputs is not None:
            inputs = inputs.transform_and_scale(self.params.frame, frame, self.params.scale, params.scale)
        return replace(self, params=params, driver_inputs=inputs)

    def make_vehicle(self, road: Any = None, context: Any = None, nb_substeps: int | None = None,
                     place_on_road: bool = True) -> Any:
        """A :class:`~simcore.vehicle.Vehicle` for these params, with the driver-input stage
        (steer limit, smoothing) installed when the file asks for it; by default at rest on the
        road in first gear (automatic gear selected when the gearbox is automatic)."""
        from simcore.drivetrain.engine_drive.components import engage_first_gear
        from simcore.stingray.smoothing import install_driver_inputs
        from simcore.vehicle import DEFAULT_NB_SUBSTEPS, Vehicle

        vehicle = Vehicle(self.params, road=road, context=context,
                          nb_substeps=DEFAULT_NB_SUBSTEPS if nb_substeps is None else nb_substeps)
        if self.driver_inputs is not None:
            install_driver_inputs(vehicle, self.driver_inputs)
        if place_on_road:
            vehicle.place_on_road()
            engage_first_gear(vehicle)
        return vehicle


@dataclass(frozen=True)
class StingrayPhysicsFile:
    """Every vehicle of a ``.physics`` file, and its shapes."""

    source: str
    vehicles: tuple[StingrayVehicle, ...]
    shapes: dict[str, Shape] = field(default_factory=dict)

    def vehicle(self, name: str | None = None) -> StingrayVehicle:
        """The vehicle called ``name``, or the first enabled one; ``KeyError`` listing the names."""
        if name is None:
            for v in self.vehicles:
                if v.enabled:
                    return v
            raise KeyError(f"{self.source}: no enabled vehicle")
        for v in self.vehicles:
            if v.name == name:
                return v
        raise KeyError(f"{self.source}: no vehicle named {name!r}; have {[v.name for v in self.vehicles]}")


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def _read_shapes(top: _Section) -> dict[str, Shape]:
    sec = top.section("shapes")
    if sec is None:
        return {}
    shapes = {}
    for name in list(sec.node):
        s = sec.section(name)
        assert s is not None
        kind = s.string("type", None, ("box", "wheel"))
        pos = s.numbers("position", 3)
        if kind == "box" or (kind is None and s.has("half_extents")):
            he = s.numbers("half_extents", 3)
            if np.any(he <= 0.0):
                raise s.fail("half_extents", f"must be three numbers > 0, got {he.tolist()}")
            shapes[name] = Shape(name, pos, half_extents=he)
        elif kind == "wheel" or s.has("radius"):
            shapes[name] = Shape(name, pos, radius=s.number("radius", gt=0.0),
                                 half_width=s.number("half_width", 0.15, gt=0.0))
        else:
            raise s.fail(None, "a shape needs half_extents (a box) or radius (a wheel)")
        s.finish()
    return shapes


def _shape(sec: _Section, shapes: dict[str, Shape], want: str) -> Shape:
    name = sec.string("scene_graph_shape_node")
    if name is None:
        raise sec.fail(None, "'scene_graph_shape_node' is missing (required: it gives the shape's position)")
    if name not in shapes:
        raise sec.fail("scene_graph_shape_node",
                       f"shape node {name!r} has no entry in the top-level 'shapes' object (simcore reads "
                       f"the {want} position and size from it; Stingray reads them from the unit)")
    shape = shapes[name]
    if want == "wheel" and shape.radius is None:
        raise sec.fail("scene_graph_shape_node", f"shape {name!r} is not a wheel (it needs a radius)")
    return shape


def _chassis_moi(sec: _Section | None, mass: float, shape: Shape, path_sec: _Section) -> np.ndarray:
    """Moment of inertia by raw > cuboid > default (see docs/stingray.md)."""
    dims = None if shape.half_extents is None else 2.0 * shape.half_extents  # W (x), L (y), H (z)
    if sec is None:
        sec = _Section({}, child_path(path_sec.path, "moment_of_inertia"), path_sec.loc())
    mass_factor = sec.number("mass_factor", DEFAULTS["chassis.moment_of_inertia.mass_factor"], gt=0.0)
    responsiveness = sec.number("responsiveness", DEFAULTS["chassis.moment_of_inertia.responsiveness"],
                                gt=0.0)
    cuboid = sec.section("cuboid")
    cub_scale = np.array(DEFAULTS["chassis.moment_of_inertia.cuboid.scale"])
    cub_factor = mass_factor
    if cuboid is not None:
        cub_factor = cuboid.number("mass_factor", mass_factor, gt=0.0)
        cub_scale = cuboid.numbers("scale", 3, DEFAULTS["chassis.moment_of_inertia.cuboid.scale"])
        if np.any(cub_scale <= 0.0):
            raise cuboid.fail("scale", f"must be three numbers > 0, got {cub_scale.tolist()}")
        cuboid.finish()
    raw = None
    if sec.has("raw"):
        raw = sec.numbers("raw", 3)
        if np.any(raw <= 0.0):
            raise sec.fail("raw", f"must be three moments > 0, got {raw.tolist()}")
    sec.finish()
    if raw is not None:
        return raw
    if dims is None:
        raise path_sec.fail("scene_graph_shape_node",
                            f"the chassis shape {shape.name!r} is not a box: the cuboid and default moment "
                            "of inertia need its half_extents (or give moment_of_inertia.raw)")
    w, length, h = dims
    base = mass * np.array([length * length + h * h, w * w + h * h, w * w + length * length])
    if cuboid is not None:
        return cub_factor * base * cub_scale
    return mass_factor * base * np.array([1.0, 1.0, responsiveness])


def _steer_table(sec: _Section) -> np.ndarray:
    pts = sec.pairs("steer_vs_forward_speed")
    key = "steer_vs_forward_speed"
    if len(pts) == 0:
        raise sec.fail(key, "expected at least one (speed, max steer) pair")
    if len(pts) > MAX_STEER_VS_SPEED_POINTS:
        raise sec.fail(key, f"at most {MAX_STEER_VS_SPEED_POINTS} (speed, steer) pairs, got {len(pts)}")
    speeds, factors = pts[:, 0], pts[:, 1]
    if np.any(speeds < 0.0):
        raise sec.fail(key, f"speeds must be >= 0, got {speeds.tolist()}")
    if np.any(np.diff(speeds) <= 0.0):
        raise sec.fail(key, f"speeds must increase from pair to pair, got {speeds.tolist()}")
    if np.any((factors < 0.0) | (factors > 1.0)):
        raise sec.fail(key, "max steer values must be in [0, 1] (fractions of full lock), got "
                            f"{factors.tolist()}")
    return pts


def _smoothing(sec: _Section) -> InputSmoothingParams:
    rates = []
    for key, default in (("rise_rates", DEFAULT_RISE_RATES), ("fall_rates", DEFAULT_FALL_RATES)):
        s = sec.section(key)
        if s is None:
            rates.append(np.array(default))
            continue
        values = []
        for ch, d in zip(CHANNELS, default, strict=True):
            if ch == "acceleration" and not s.has("acceleration") and s.has("accelerate"):
                values.append(s.number("accelerate", d, gt=0.0))
            else:
                values.append(s.number(ch, d, gt=0.0))
        s.finish()
        rates.append(np.array(values))
    sec.finish()
    return InputSmoothingParams(rates[0], rates[1])


@dataclass
class _Wheel:
    info: WheelInfo
    centre: np.ndarray  # rest position relative to the centre of mass (unit frame)
    radius: float
    half_width: float
    mass: float
    moi: float
    damping: float
    brake: float
    handbrake: float
    steer: float
    lat_x: float
    lat_y: float
    long_stiff: float
    friction: np.ndarray
    tire_offset: np.ndarray
    sprung_mass: float
    compression: float
    droop: float
    camber: tuple[float, float, float]  # rest, max compression, max droop
    spring: float
    damper: float
    travel_dir: np.ndarray
    susp_offset: np.ndarray
    where: _Section


def _read_wheel(sec: _Section, shapes: dict[str, Shape], com: np.ndarray) -> _Wheel:
    d = "wheels[]."
    shape = _shape(sec, shapes, "wheel")
    info_nodes = _check_render_nodes(sec)
    raycast = sec.string("wheel_raycast_filter")
    offset = sec.numbers("position_offset", 3, DEFAULTS[d + "position_offset"])
    radius = float(shape.radius) * sec.number("radius_scale", DEFAULTS[d + "radius_scale"], gt=0.0)
    mass = sec.number("mass", DEFAULTS[d + "mass"], gt=0.0)
    moi = sec.number("moi", mass * radius * radius, gt=0.0)
    damping = sec.number("damping_rate", DEFAULTS[d + "damping_rate"], gt=0.0)
    brake = sec.number("max_brake_torque", DEFAULTS[d + "max_brake_torque"], ge=0.0)
    handbrake = sec.number("max_handbrake_torque", DEFAULTS[d + "max_handbrake_torque"], ge=0.0)
    steer = sec.number("max_steer", DEFAULTS[d + "max_steer"], ge=-math.pi, le=math.pi)

    tire = sec.section("tire") or _Section({}, child_path(sec.path, "tire"), sec.loc())
    tire_type = tire.string("type")
    lat_x = tire.number("lateral_stiffness_x", DEFAULTS[d + "tire.lateral_stiffness_x"], ge=0.0)
    lat_y = tire.number("lateral_stiffness_y", DEFAULTS[d + "tire.lateral_stiffness_y"], gt=0.0)
    long_key = "longitudal_stiffness" if tire.has("longitudal_stiffness") else "longitudinal_stiffness"
    if tire.has("longitudal_stiffness") and tire.has("longitudinal_stiffness"):
        raise tire.fail("longitudinal_stiffness", "given twice (also spelt 'longitudal_stiffness')")
    long_stiff = tire.number(long_key, DEFAULTS[d + "tire.longitudinal_stiffness"], gt=0.0)
    friction = tire.pairs("friction_versus_slip", DEFAULTS[d + "tire.friction_versus_slip"])
    if friction.shape != (3, 2):
        raise tire.fail("friction_versus_slip", f"expected 3 (slip, friction) pairs, got {len(friction)}")
    if np.any(friction < 0.0) or np.any(np.diff(friction[:, 0]) < 0.0):
        raise tire.fail("friction_versus_slip",
                        f"slips must be >= 0 and non-decreasing and frictions >= 0, got {friction.tolist()}")
    tire_offset = tire.numbers("force_application_offset", 3, DEFAULTS[d + "tire.force_application_offset"])
    tire.finish()

    susp = sec.section("suspension") or _Section({}, child_path(sec.path, "suspension"), sec.loc())
    sprung = susp.number("sprung_mass", DEFAULTS[d + "suspension.sprung_mass"], ge=0.0)
    compression = susp.number("max_compression", DEFAULTS[d + "suspension.max_compression"], ge=0.0)
    droop = susp.number("max_droop", DEFAULTS[d + "suspension.max_droop"], ge=0.0)
    if not compression + droop > 0.0:
        raise susp.fail("max_droop", "max_compression + max_droop must be greater than 0 (no travel)")
    camber = tuple(susp.number(k, DEFAULTS[d + "suspension." + k], ge=-math.pi, le=math.pi)
                   for k in ("camber_rest", "camber_max_compression", "camber_max_droop"))
    spring = susp.number("spring_strength", DEFAULTS[d + "suspension.spring_strength"], gt=0.0)
    damper = susp.number("spring_damper_rate", DEFAULTS[d + "suspension.spring_damper_rate"], ge=0.0)
    travel = susp.numbers("travel_direction", 3, DEFAULTS[d + "suspension.travel_direction"])
    norm = float(np.linalg.norm(travel))
    if not norm > 1e-6:
        raise susp.fail("travel_direction", f"must be a non-zero vector, got {travel.tolist()}")
    if abs(norm - 1.0) > 1e-3:
        susp.warn("travel_direction", f"not a unit vector (length {norm:.4g}); normalised")
    susp_offset = susp.numbers("force_application_offset", 3,
                               DEFAULTS[d + "suspension.force_application_offset"])
    susp.finish()
    sec.finish()
    return _Wheel(
        info=WheelInfo(shape.name, info_nodes, raycast, tire_type),
        centre=shape.position + offset - com, radius=radius, half_width=float(shape.half_width or 0.15),
        mass=mass, moi=moi, damping=damping, brake=brake, handbrake=handbrake, steer=steer, lat_x=lat_x,
        lat_y=lat_y, long_stiff=long_stiff, friction=friction, tire_offset=tire_offset, sprung_mass=sprung,
        compression=compression, droop=droop, camber=camber,  # type: ignore[arg-type]
        spring=spring, damper=damper, travel_dir=travel / norm, susp_offset=susp_offset, where=sec)


def _response(values: np.ndarray, cls: type) -> Any:
    top = float(np.max(np.abs(values))) if values.size else 0.0
    mult = values / top if top > 0.0 else np.zeros_like(values)
    return cls(max_response=top, wheel_response_multipliers=mult)


def _differential(sec: _Section | None, n: int, where: _Section) -> FourWheelDriveDifferentialParams:
    if sec is None:
        sec = _Section({}, child_path(where.path, "differential"), where.loc())
    kind = sec.string("type", DEFAULTS["differential.type"], DIFFERENTIAL_TYPES)
    assert kind is not None
    frs = sec.number("front_rear_split", DEFAULTS["differential.front_rear_split"], ge=0.0, le=1.0)
    flr = sec.number("front_left_right_split", DEFAULTS["differential.front_left_right_split"], ge=0.0,
                     le=1.0)
    rlr = sec.number("rear_left_right_split", DEFAULTS["differential.rear_left_right_split"], ge=0.0, le=1.0)
    biases = {k: sec.number(f"{k}_bias", DEFAULTS[f"differential.{k}_bias"], ge=1.0)
              for k in ("center", "front", "rear")}
    four, front_only = kind.endswith("4wd"), kind.endswith("frontwd")
    applies = {
        "front_rear_split": four,
        "front_left_right_split": four or front_only,
        "rear_left_right_split": four or not front_only,
        "center_bias": kind == "ls_4wd",
        "front_bias": kind in ("ls_4wd", "ls_frontwd"),
        "rear_bias": kind in ("ls_4wd", "ls_rearwd"),
    }
    for key, ok in applies.items():
        if not ok and sec.has(key):
            sec.warn(key, f"does not apply to a {kind!r} differential; ignored")
    sec.finish()
    ratios = np.zeros(n)
    if four:
        ratios[:4] = (frs * flr, frs * (1 - flr), (1 - frs) * rlr, (1 - frs) * (1 - rlr))
    elif front_only:
        ratios[:2] = (flr, 1 - flr)
    else:
        ratios[2:4] = (rlr, 1 - rlr)

    def limited(key: str) -> tuple[float, float]:
        if not kind.startswith("ls") or not applies[f"{key}_bias"]:
            return 0.0, 0.0
        b = biases[key]
        return b, (1.0 if b == 1.0 else 1.0 + LIMITED_SLIP_TARGET_FRACTION * (b - 1.0))

    cb, ct = limited("center")
    fb, ft = limited("front")
    rb, rt = limited("rear")
    return FourWheelDriveDifferentialParams(
        torque_ratios=ratios, ave_wheel_speed_ratios=ratios.copy(), front_wheel_ids=(0, 1),
        rear_wheel_ids=(2, 3),
        front_bias=fb, front_target=ft, rear_bias=rb, rear_target=rt, center_bias=cb, center_target=ct,
        rate=LIMITED_SLIP_RATE if kind.startswith("ls") else 0.0)


def _gearbox(sec: _Section | None, where: _Section) -> tuple[GearboxParams, bool]:
    if sec is None:
        sec = _Section({}, child_path(where.path, "gears"), where.loc())
    if sec.has("auto_gears_enabled") and sec.has("use_auto_gears"):
        a, b = sec.boolean("auto_gears_enabled", True), sec.boolean("use_auto_gears", True)
        if a != b:
            raise sec.fail("use_auto_gears", "contradicts auto_gears_enabled (they name the same setting)")
    auto = sec.boolean("use_auto_gears" if sec.has("use_auto_gears") else "auto_gears_enabled",
                       DEFAULTS["gears.auto_gears_enabled"])
    final = sec.number("final_ratio", DEFAULTS["gears.final_ratio"], gt=0.0)
    switch = sec.number("switch_time", DEFAULTS["gears.switch_time"], ge=0.0)
    ratios = sec.numbers("ratios", None, DEFAULTS["gears.ratios"])
    key = "ratios"
    if ratios.size < 3:
        raise sec.fail(key, "expected reverse, neutral and at least one forward ratio, got "
                            f"{ratios.size} values")
    if ratios.size - 2 > MAX_FORWARD_GEARS:
        raise sec.fail(key, f"at most {MAX_FORWARD_GEARS} forward gears, got {ratios.size - 2}")
    if not ratios[0] < 0.0:
        raise sec.fail(key, f"the first ratio is the reverse gear and must be < 0, got {ratios[0]:g}")
    if ratios[1] != 0.0:
        raise sec.fail(key, f"the second ratio is neutral and must be 0, got {ratios[1]:g}")
    fwd = ratios[2:]
    if np.any(fwd <= 0.0) or np.any(np.diff(fwd) >= 0.0):
        raise sec.fail(key, f"forward ratios must be > 0 and decrease gear by gear, got {fwd.tolist()}")
    sec.finish()
    return GearboxParams(ratios, 1, final, switch), auto


def _read_vehicle(entry: _Section, index: int, shapes: dict[str, Shape], source: str) -> StingrayVehicle:
    name = entry.string("name", f"vehicle{index}") or f"vehicle{index}"
    enabled = entry.boolean("enabled", True)
    actor = entry.string("actor_name")
    model = entry.string("vehicle_physics_model", DEFAULTS["vehicle_physics_model"], PHYSICS_MODELS)
    tank = model == "tank"
    drive_model = entry.string("tank_drive_model", None, ("standard", "special"))
    if tank and drive_model is None:
        raise entry.fail(None, "'tank_drive_model' is missing: a tank needs \"standard\" or \"special\"")
    if not tank and drive_model is not None:
        entry.warn("tank_drive_model", "applies to tanks only; ignored")

    chassis = entry.section("chassis")
    if chassis is None:
        raise entry.fail(None, "'chassis' is missing (required)")
    mass = chassis.number("mass", gt=0.0)
    body_shape = _shape(chassis, shapes, "chassis")
    render = _check_render_nodes(chassis)
    com = body_shape.position + chassis.numbers("center_of_mass_offset", 3,
                                                DEFAULTS["chassis.center_of_mass_offset"])
    moi = _chassis_moi(chassis.section("moment_of_inertia"), mass, body_shape, chassis)
    chassis.finish()

    if not entry.has("wheels"):
        raise entry.fail(None, "'wheels' is missing (required)")
    raw_wheels = entry.array("wheels")
    n = len(raw_wheels)
    lo = 4
    if not lo <= n <= MAX_NB_WHEELS or (tank and n % 2):
        what = "an even number of wheels, 4 to 20" if tank else "4 to 20 wheels"
        raise entry.fail("wheels", f"a {model} needs {what}, got {n}")
    wheels = []
    for i, w in enumerate(raw_wheels):
        where = raw_wheels.location(i) if isinstance(raw_wheels, SjsonArray) else entry.loc("wheels")
        sec = _Section(w, child_path(child_path(entry.path, "wheels"), i), where)
        wheels.append(_read_wheel(sec, shapes, com))

    # -- wheels, suspension, tires --------------------------------------------------------------
    sprung = np.array([w.sprung_mass if w.sprung_mass > 0.0 else mass / n for w in wheels])
    if abs(sprung.sum() - mass) > 0.01 * mass:
        entry.warn("wheels", f"the sprung masses add up to {sprung.sum():.6g} kg but the chassis mass is "
                             f"{mass:.6g} kg (they should match)")
    centre = np.array([w.centre for w in wheels])
    dirs = np.array([w.travel_dir for w in wheels])
    comp = np.array([w.compression for w in wheels])
    droop = np.array([w.droop for w in wheels])
    attach = centre - comp[:, None] * dirs
    travel = comp + droop
    suspension = SuspensionParams.from_wheels([
        {"suspension_attachment_pos": attach[i], "suspension_travel_dir": dirs[i],
         "suspension_travel_dist": travel[i]} for i in range(n)])
    rows = []
    for i, w in enumerate(wheels):
        rest_x = w.droop / travel[i]
        rest, at_comp, at_droop = w.camber
        if 0.0 < rest_x < 1.0:
            camber = [(0.0, at_droop), (rest_x, rest), (1.0, at_comp)]
        elif rest_x <= 0.0:
            camber = [(0.0, rest), (1.0, at_comp)]
        else:
            camber = [(0.0, at_droop), (1.0, rest)]
        origin = np.array([centre[i, 0], centre[i, 1], 0.0])  # (wheel_x, wheel_y, chassis_z)
        rows.append({
            "wheel_camber_angle": camber,
            "susp_force_app_point": [(0.0, origin + w.susp_offset - attach[i])],
            "tire_force_app_point": [(0.0, origin + w.tire_offset - attach[i])],
        })
    compliance = SuspensionComplianceParams.from_wheels(rows)
    force = SuspensionForceParams(np.array([w.spring for w in wheels]), np.array([w.damper for w in wheels]),
                                  sprung)
    wmass = np.array([w.mass for w in wheels])
    rest_load = (sprung + wmass) * GRAVITY
    tire = TireForceParams(
        lat_stiff_x=np.array([w.lat_x for w in wheels]),
        lat_stiff_y=np.array([w.lat_y for w in wheels]) * rest_load,
        long_stiff=np.array([w.long_stiff for w in wheels]) * GRAVITY,
        camber_stiff=np.zeros(n),
        friction_vs_slip=np.array([w.friction for w in wheels]),
        rest_load=rest_load,
        load_filter=np.tile(np.array(TIRE_LOAD_FILTER), (n, 1, 1)))
    wheel = WheelParams(np.array([w.radius for w in wheels]), np.array([w.half_width for w in wheels]), wmass,
                        np.array([w.moi for w in wheels]), np.array([w.damping for w in wheels]))
    axles = AxleDescription([list(range(k, min(k + 2, n))) for k in range(0, n, 2)])

    # -- driver controls ------------------------------------------------------------------------
    brake_t = np.array([w.brake for w in wheels])
    hand_t = np.array([w.handbrake for w in wheels])
    steer_a = np.array([w.steer for w in wheels])
    steer_table = None
    if entry.has("steer_vs_forward_speed"):
        if tank:
            entry.raw("steer_vs_forward_speed")
            entry.warn("steer_vs_forward_speed", "a tank does not steer its wheels; ignored")
        else:
            steer_table = _steer_table(entry)
    ackermann: tuple[AckermannParams, ...] = ()
    ack = entry.section("ackermann_correction")
    accuracy = DEFAULTS["ackermann_correction.accuracy"]
    if ack is not None:
        accuracy = ack.number("accuracy", accuracy, ge=0.0, le=1.0)
        ack.finish()
        if tank:
            entry.warn("ackermann_correction", "a tank does not steer its wheels; ignored")
    if tank:
        if np.any(steer_a != 0.0):
            entry.warn("wheels", "max_steer is ignored for a tank (it turns by its tracks)")
        if np.any(hand_t != 0.0):
            entry.warn("wheels", "max_handbrake_torque is ignored for a tank (brake 0 and 1 are its left and "
                                 "right track brakes)")
        left = np.array([1.0 if i % 2 == 0 else 0.0 for i in range(n)])
        brakes = (BrakeCommandResponseParams(float(np.max(brake_t)), _ratio(brake_t * left)),
                  BrakeCommandResponseParams(float(np.max(brake_t)), _ratio(brake_t * (1.0 - left))))
        steer = SteerCommandResponseParams(0.0, np.zeros(n))
    else:
        brakes = (_response(brake_t, BrakeCommandResponseParams),
                  _response(hand_t, BrakeCommandResponseParams))
        base = _response(steer_a, SteerCommandResponseParams)
        steer = SteerCommandResponseParams(base.max_response, base.wheel_response_multipliers)
        if accuracy > 0.0 and steer_a[0] != 0.0 and steer_a[1] != 0.0:
            lat = centre[:, 0]  # unit X is right: the wheel with the larger X is on the negative lateral side
            ids = (0, 1) if lat[0] > lat[1] else (1, 0)
            wheel_base = abs(0.5 * (centre[0, 1] + centre[1, 1]) - 0.5 * (centre[2, 1] + centre[3, 1]))
            ackermann = (AckermannParams(ids, wheel_base, abs(lat[0] - lat[1]), accuracy),)

    # -- engine drive ---------------------------------------------------------------------------
    eng = entry.section("engine") or _Section({}, child_path(entry.path, "engine"), entry.loc())
    peak = eng.number("peak_torque", DEFAULTS["engine.peak_torque"], ge=0.0)
    max_omega = eng.number("max_omega", DEFAULTS["engine.max_omega"], gt=0.0)
    damp = eng.section("damping_rate") or _Section({}, child_path(eng.path, "damping_rate"), eng.loc())
    damping_keys = ("full_throttle", "zero_throttle_clutch_engaged", "zero_throttle_clutch_disengaged")
    rates = [damp.number(k, DEFAULTS[f"engine.damping_rate.{k}"], ge=0.0) for k in damping_keys]
    for k, v in zip(damping_keys, rates, strict=True):
        if v == 0.0:
            damp.warn(k, "a damping rate of 0 can make the engine simulation unstable")
    damp.finish()
    eng.finish()
    engine = EngineParams(np.array(ENGINE_TORQUE_CURVE), ENGINE_MOI, peak, ENGINE_IDLE_OMEGA, max_omega,
                          *rates)
    gearbox, auto = _gearbox(entry.section("gears"), entry)
    autobox = None
    if auto:
        autobox = AutoboxParams(np.full(gearbox.nb_ratios, AUTOBOX_UP_RATIO),
                                np.full(gearbox.nb_ratios, AUTOBOX_DOWN_RATIO), AUTOBOX_LATENCY)
    clutch_sec = entry.section("clutch") or _Section({}, child_path(entry.path, "clutch"), entry.loc())
    clutch = ClutchCommandResponseParams(clutch_sec.number("strength", DEFAULTS["clutch.strength"], ge=0.0))
    clutch_sec.finish()
    if tank:
        if entry.has("differential"):
            entry.raw("differential")
            entry.warn("differential", "a tank drives all wheels through its tracks; ignored")
        share = np.full(n, 1.0 / n)
        differential: Any = TankDriveDifferentialParams(
            share, share.copy(), tracks=(tuple(range(0, n, 2)), tuple(range(1, n, 2))),
            drive_model=TankDriveModel.parse(drive_model or "special"))
    else:
        differential = _differential(entry.section("differential"), n, entry)

    smoothing = None
    sm = entry.section("input_smoothing")
    if sm is not None:
        smoothing = _smoothing(sm)
    inputs = None
    if smoothing is not None or steer_table is not None:
        inputs = DriverInputParams(smoothing, steer_table)
    entry.finish()

    params = VehicleParams(
        axle_description=axles, rigid_body=RigidBodyParams(mass, moi),
        suspension_state_calculation=SuspensionStateCalculationParams(JounceCalculationType.RAYCAST, False),
        suspension=suspension, suspension_compliance=compliance, suspension_force=force, tire_force=tire,
        wheel=wheel, brake_command_response=brakes, steer_command_response=steer, ackermann=ackermann,
        frame=STINGRAY_FRAME, scale=Scale(1.0), engine=engine, gearbox=gearbox, autobox=autobox,
        clutch_command_response=clutch, clutch=ClutchParams(), differential=differential)
    try:
        params.validate()
    except ValueError as exc:
        raise entry.fail(None, f"the mapped params are invalid: {exc}") from None
    return StingrayVehicle(
        name=name, params=params, physics_model=model or "vehicle", tank_drive_model=drive_model,
        driver_inputs=inputs, enabled=enabled, actor_name=actor, chassis_shape=body_shape.name,
        chassis_render_nodes=render, wheels=tuple(w.info for w in wheels), source=source, index=index)


def _ratio(values: np.ndarray) -> np.ndarray:
    top = float(np.max(values)) if values.size else 0.0
    return values / top if top > 0.0 else np.zeros_like(values)


def physics_from_sjson(doc: SjsonObject, source: str | None = None) -> StingrayPhysicsFile:
    """Map a parsed ``.physics`` document (see :func:`load_physics`)."""
    source = source or doc.start.source
    top = _Section(doc, "", doc.start)
    shapes = _read_shapes(top)
    if not top.has("vehicles"):
        raise top.fail(None, "'vehicles' is missing (a .physics file lists its vehicles in "
                             "'vehicles = [ ... ]')")
    entries = top.array("vehicles")
    vehicles = []
    for i, item in enumerate(entries):
        where = entries.location(i) if isinstance(entries, SjsonArray) else top.loc("vehicles")
        vehicles.append(_read_vehicle(_Section(item, f"vehicles[{i}]", where), i, shapes, source))
    top.finish()
    if not vehicles:
        raise top.fail("vehicles", "no vehicles")
    return StingrayPhysicsFile(source, tuple(vehicles), shapes)


def load_physics(path: str | os.PathLike, frame: Frame | None = None,
                 scale: Scale | float | None = None) -> StingrayPhysicsFile:
    """Read and map every vehicle of a ``.physics`` file; params converted to ``frame`` / ``scale``
    if given (default: :data:`STINGRAY_FRAME`, metres)."""
    result = physics_from_sjson(load_sjson(path))
    if frame is None and scale is None:
        return result
    from dataclasses import replace

    target = frame if frame is not None else STINGRAY_FRAME
    return replace(result, vehicles=tuple(v.to(target, scale) for v in result.vehicles))


def load_physics_vehicle(path: str | os.PathLike, name: str | None = None, frame: Frame | None = None,
                         scale: Scale | float | None = None) -> StingrayVehicle:
    """One vehicle of a ``.physics`` file: the one called ``name``, or the first enabled one."""
    return load_physics(path, frame, scale).vehicle(name)
