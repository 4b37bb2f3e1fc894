"""Loader for PhysX's own vehicle description JSON (the snippets' ``Base.json`` + drivetrain file).

Layout: PhysX's ``snippetvehiclecommon/serialization`` (``BaseSerialization.cpp``,
``DirectDrivetrainSerialization.cpp``). ``Base.json`` declares its ``Frame`` (``LngAxis``,
``LatAxis``, ``VrtAxis`` as ``PxVehicleAxes`` integers 0..5 = +X -X +Y -Y +Z -Z) and ``Scale``;
the result is expressed in that frame and scale (``VehicleParams.frame/scale``) and
:func:`load_physx_vehicle` converts it to any other with ``transform_and_scale``. The reference
sedan (PhysX snippets' data, Y up / Z forward, metres) ships in ``simcore/data``.

Drivetrains: ``"direct"`` reads ``DirectDrive.json`` (``ThrottleCommandResponseParams``);
``"engine"`` reads ``EngineDrive.json`` through the engine-drive package's reader and picks one
differential. :data:`DRIVETRAIN_READERS` maps a kind to its reader, so other drivetrain files
can be plugged in.

Extensions (optional, not written by PhysX): ``AntiRollBarParams``: a list of
``{"Wheel0", "Wheel1", "Stiffness"}``; ``AckermannParams`` may also be a list of such objects.

Every error is a :class:`PhysXJsonError` naming the file, the JSON path and what was expected.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from simcore.axle import AxleDescription
from simcore.braking.params import BrakeCommandResponseParams
from simcore.commands.params import CommandNonLinearResponseParams, CommandResponseParams
from simcore.drivetrain.direct_drive import DirectDriveThrottleCommandResponseParams
from simcore.frame import Axis, Frame, Scale
from simcore.limits import (
    MAX_INT_FIELD,
    MAX_NB_WHEELS,
    ParamBoundsError,
    check_param_bounds,
    is_finite_number,
    is_int_field,
)
from simcore.rigid_body.params import RigidBodyParams
from simcore.steering.params import AckermannParams, SteerCommandResponseParams
from simcore.suspension.params import (
    AntiRollBarParams,
    SuspensionComplianceParams,
    SuspensionForceParams,
    SuspensionParams,
    SuspensionStateCalculationParams,
)
from simcore.tire.params import TireForceParams
from simcore.vehicle import VehicleParams
from simcore.wheel.params import WheelParams

__all__ = [
    "DRIVETRAIN_READERS",
    "PhysXJsonError",
    "base_params_from_dict",
    "direct_drive_params_from_dict",
    "load_physx_vehicle",
    "read_json",
]


#: The package data folder holding the reference car's JSON files.
DATA_DIR = Path(__file__).resolve().parent.parent / "data"


class PhysXJsonError(ValueError):
    """A vehicle description that cannot be read; the message names the file and JSON path."""


# --------------------------------------------------------------------------------------------
# Small typed readers with located errors
# --------------------------------------------------------------------------------------------


class _Doc:
    """Typed access to a parsed JSON document; errors name ``source`` and the JSON path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, path: str, message: str) -> PhysXJsonError:
        return PhysXJsonError(f"{self.source}: {path}: {message}")

    def expected(self, path: str, what: str, got: object) -> PhysXJsonError:
        shown = repr(got)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        return self.error(path, f"expected {what}, got {shown}")

    def member(self, node: Any, key: str, path: str) -> Any:
        if not isinstance(node, Mapping):
            raise self.expected(path, "a JSON object", node)
        if key not in node:
            raise self.error(_join(path, key), "missing (required)")
        return node[key]

    def obj(self, node: Any, key: str, path: str) -> Mapping[str, Any]:
        value = self.member(node, key, path)
        if not isinstance(value, Mapping):
            raise self.expected(_join(path, key), "a JSON object", value)
        return value

    def array(self, node: Any, key: str, path: str) -> list[Any]:
        value = self.member(node, key, path)
        if not isinstance(value, list):
            raise self.expected(_join(path, key), "a JSON array", value)
        return value

    def number_value(self, value: Any, path: str) -> float:
        if not is_finite_number(value):
            raise self.expected(path, "a finite number", value)
        return float(value)

    def number(self, node: Any, key: str, path: str) -> float:
        return self.number_value(self.member(node, key, path), _join(path, key))

    def integer_value(self, value: Any, path: str) -> int:
        if not is_int_field(value):
            raise self.expected(path, f"an integer of magnitude at most {MAX_INT_FIELD}", value)
        return int(value)

    def integer(self, node: Any, key: str, path: str) -> int:
        return self.integer_value(self.member(node, key, path), _join(path, key))

    def boolean(self, node: Any, key: str, path: str) -> bool:
        value = self.member(node, key, path)
        if not isinstance(value, bool):
            raise self.expected(_join(path, key), "true or false", value)
        return value

    def vector(self, node: Any, key: str, path: str, size: int) -> list[float]:
        value = self.member(node, key, path)
        full = _join(path, key)
        if not isinstance(value, list) or len(value) != size:
            raise self.expected(full, f"an array of {size} numbers", value)
        return [self.number_value(v, f"{full}[{i}]") for i, v in enumerate(value)]

    def numbers(self, value: Any, path: str, size: int | None = None) -> list[float]:
        if not isinstance(value, list) or (size is not None and len(value) != size):
            what = "an array of numbers" if size is None else f"an array of {size} numbers"
            raise self.expected(path, what, value)
        return [self.number_value(v, f"{path}[{i}]") for i, v in enumerate(value)]

    def transform(self, node: Any, key: str, path: str) -> tuple[list[float], list[float]]:
        t = self.obj(node, key, path)
        full = _join(path, key)
        return self.vector(t, "Pos", full, 3), self.vector(t, "Quat", full, 4)


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def read_json(path: str | Path | None, default_name: str) -> tuple[Any, str]:
    """Parse a JSON file (``None``: the shipped ``simcore/data/<default_name>``); return (data, source)."""
    if path is None:
        source = f"simcore/data/{default_name}"
        file = DATA_DIR / default_name
    else:
        source = str(path)
        file = Path(path)
    return parse_json_file(file, source, PhysXJsonError), source


def parse_json_file(path: Path, source: str, error: type[ValueError]) -> Any:
    """Parse a JSON file; every way it can be unreadable — I/O, not UTF-8, invalid or too
    deeply nested JSON — raises ``error`` with one line naming ``source``."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise error(f"{source}: cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise error(f"{source}: line {line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                    f"{exc.start}); vehicle JSON files are UTF-8") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"{source}: line {exc.lineno} column {exc.colno}"
        raise error(f"{where}: invalid JSON ({exc.msg})") from None
    except RecursionError:
        raise error(f"{source}: JSON nested too deeply to read (arrays or objects inside each other "
                    f"more than about {sys.getrecursionlimit()} levels); not a vehicle description") from None


# --------------------------------------------------------------------------------------------
# Base.json
# --------------------------------------------------------------------------------------------


def _axles(doc: _Doc, data: Mapping[str, Any]) -> AxleDescription:
    axles_raw = doc.array(data, "AxleDescription", "")
    axles = []
    for i, axle in enumerate(axles_raw):
        path = f"AxleDescription[{i}]"
        ids = doc.array(axle, "WheelIds", path)
        axles.append([doc.integer_value(w, f"{path}.WheelIds[{j}]") for j, w in enumerate(ids)])
    try:
        return AxleDescription(axles)
    except ValueError as exc:
        raise doc.error("AxleDescription", str(exc)) from exc


def _frame(doc: _Doc, data: Mapping[str, Any]) -> Frame:
    node = doc.obj(data, "Frame", "")
    axes = []
    for key in ("LngAxis", "LatAxis", "VrtAxis"):
        v = doc.integer(node, key, "Frame")
        if not 0 <= v <= 5:
            raise doc.expected(f"Frame.{key}", "an axis 0..5 (+X, -X, +Y, -Y, +Z, -Z)", v)
        axes.append(Axis(v))
    try:
        return Frame(*axes)
    except ValueError as exc:
        raise doc.error("Frame", f"{exc}") from exc


def _scale(doc: _Doc, data: Mapping[str, Any]) -> Scale:
    v = doc.number(doc.obj(data, "Scale", ""), "Scale", "Scale")
    if not v > 0.0:
        raise doc.expected("Scale.Scale", "a number > 0", v)
    return Scale(v)


def _per_wheel(doc: _Doc, data: Mapping[str, Any], key: str, n: int) -> list[tuple[Mapping[str, Any], str]]:
    """The entries of a per-wheel array, ordered by their ``WheelId``, with their JSON paths."""
    items = doc.array(data, key, "")
    if len(items) != n:
        raise doc.error(key, f"expected one entry per wheel ({n}), got {len(items)}")
    by_id: dict[int, tuple[Mapping[str, Any], str]] = {}
    for i, item in enumerate(items):
        path = f"{key}[{i}]"
        w = doc.integer(item, "WheelId", path)
        if not 0 <= w < n:
            raise doc.expected(f"{path}.WheelId", f"a wheel id in [0, {n - 1}]", w)
        if w in by_id:
            raise doc.error(f"{path}.WheelId", f"wheel {w} appears twice (also at {by_id[w][1]})")
        by_id[w] = (item, path)
    return [by_id[w] for w in range(n)]


def _command_response(doc: _Doc, node: Any, path: str, n: int, cls: type[CommandResponseParams],
                      ) -> CommandResponseParams:
    max_response = doc.number(node, "MaxResponse", path)
    mult = doc.numbers(doc.member(node, "WheelResponseMultipliers", path), f"{path}.WheelResponseMultipliers")
    if not n <= len(mult) <= MAX_NB_WHEELS:
        raise doc.error(f"{path}.WheelResponseMultipliers",
                        f"expected between {n} (one per wheel) and {MAX_NB_WHEELS} numbers, got {len(mult)}")
    tables: list[tuple[float, list[list[float]]]] = []
    if isinstance(node, Mapping) and "NonLinearResponse" in node:
        nl = doc.array(node, "NonLinearResponse", path)
        for i, entry in enumerate(nl):
            epath = f"{path}.NonLinearResponse[{i}]"
            value = doc.number(entry, "Throttle", epath)
            curve = doc.array(entry, "ResponseCurve", epath)
            pts = [doc.numbers(pt, f"{epath}.ResponseCurve[{j}]", 2) for j, pt in enumerate(curve)]
            tables.append((value, pts))
    params = cls(max_response=max_response, wheel_response_multipliers=np.array(mult[:n]),
                 nonlinear_response=CommandNonLinearResponseParams.from_pairs(tables))
    try:
        params.validate()
    except ValueError as exc:
        raise doc.error(path, str(exc)) from exc
    return params


def _ackermann(doc: _Doc, node: Any, path: str) -> AckermannParams:
    ids = doc.array(node, "WheelIds", path)
    if len(ids) != 2:
        raise doc.expected(f"{path}.WheelIds", "exactly 2 wheel ids", ids)
    return AckermannParams(
        wheel_ids=(doc.integer_value(ids[0], f"{path}.WheelIds[0]"),
                   doc.integer_value(ids[1], f"{path}.WheelIds[1]")),
        wheel_base=doc.number(node, "WheelBase", path),
        track_width=doc.number(node, "TrackWidth", path),
        strength=doc.number(node, "Strength", path),
    )


def _table(doc: _Doc, node: Any, key: str, path: str, vector: bool) -> list[tuple[float, Any]]:
    full = _join(path, key)
    raw = doc.array(node, key, path)
    if len(raw) > 3:
        raise doc.error(full, f"at most 3 points, got {len(raw)}")
    size = 4 if vector else 2
    pts = []
    for i, pt in enumerate(raw):
        vals = doc.numbers(pt, f"{full}[{i}]", size)
        pts.append((vals[0], vals[1:] if vector else vals[1]))
    return pts


def base_params_from_dict(data: Mapping[str, Any], source: str = "<dict>") -> VehicleParams:
    """Everything of ``Base.json`` as :class:`VehicleParams` (no drivetrain yet), in the file's frame.

    The result has ``direct_drive_throttle_response=None``; add a drivetrain with
    :func:`direct_drive_params_from_dict` or :func:`load_physx_vehicle`.
    """
    doc = _Doc(source)
    if not isinstance(data, Mapping):
        raise doc.expected("(top level)", "a JSON object", data)
    axles = _axles(doc, data)
    n = axles.nb_wheels
    frame = _frame(doc, data)
    scale = _scale(doc, data)

    rb = doc.obj(data, "RigidBodyParams", "")
    rigid_body = RigidBodyParams(doc.number(rb, "Mass", "RigidBodyParams"),
                                 doc.vector(rb, "MOI", "RigidBodyParams", 3))

    sc = doc.obj(data, "SuspensionStateCalculationParams", "")
    jct = doc.integer(sc, "JounceCalculationType", "SuspensionStateCalculationParams")
    if jct not in (0, 1):
        raise doc.expected("SuspensionStateCalculationParams.JounceCalculationType",
                           "0 (raycast) or 1 (sweep)", jct)
    state_calc = SuspensionStateCalculationParams(
        jct, doc.boolean(sc, "LimitSuspensionExpansionVelocity", "SuspensionStateCalculationParams"))

    brake = _command_response(doc, doc.obj(data, "BrakeCommandResponseParams", ""),
                              "BrakeCommandResponseParams", n, BrakeCommandResponseParams)
    handbrake = _command_response(doc, doc.obj(data, "HandbrakeCommandResponseParams", ""),
                                  "HandbrakeCommandResponseParams", n, BrakeCommandResponseParams)
    steer = _command_response(doc, doc.obj(data, "SteerCommandResponseParams", ""),
                              "SteerCommandResponseParams", n, SteerCommandResponseParams)

    ack_raw = doc.member(data, "AckermannParams", "")
    if isinstance(ack_raw, list):
        ackermann = tuple(_ackermann(doc, a, f"AckermannParams[{i}]") for i, a in enumerate(ack_raw))
    else:
        ackermann = (_ackermann(doc, ack_raw, "AckermannParams"),)

    susp_rows = []
    for item, path in _per_wheel(doc, data, "SuspensionParams", n):
        sa_pos, sa_quat = doc.transform(item, "SuspensionAttachment", path)
        wa_pos, wa_quat = doc.transform(item, "WheelAttachment", path)
        susp_rows.append({
            "suspension_attachment_pos": sa_pos, "suspension_attachment_quat": sa_quat,
            "suspension_travel_dir": doc.vector(item, "SuspensionTravelDir", path, 3),
            "suspension_travel_dist": doc.number(item, "SuspensionTravelDist", path),
            "wheel_attachment_pos": wa_pos, "wheel_attachment_quat": wa_quat,
        })
    suspension = SuspensionParams.from_wheels(susp_rows)

    comp_rows = []
    for item, path in _per_wheel(doc, data, "SuspensionComplianceParams", n):
        comp_rows.append({
            "wheel_toe_angle": _table(doc, item, "WheelToeAngle", path, False),
            "wheel_camber_angle": _table(doc, item, "WheelCamberAngle", path, False),
            "susp_force_app_point": _table(doc, item, "SuspForceAppPoint", path, True),
            "tire_force_app_point": _table(doc, item, "TireForceAppPoint", path, True),
        })
    compliance = SuspensionComplianceParams.from_wheels(comp_rows)

    force_rows = []
    for item, path in _per_wheel(doc, data, "SuspensionForceParams", n):
        force_rows.append({"stiffness": doc.number(item, "Stiffness", path),
                           "damping": doc.number(item, "Damping", path),
                           "sprung_mass": doc.number(item, "SprungMass", path)})
    susp_force = SuspensionForceParams.from_wheels(force_rows)

    tire_rows = []
    for item, path in _per_wheel(doc, data, "TireForceParams", n):
        fvs = doc.array(item, "FrictionVsSlip", path)
        if len(fvs) != 3:
            raise doc.error(f"{path}.FrictionVsSlip", f"expected 3 [slip, friction] points, got {len(fvs)}")
        lf = doc.array(item, "TireLoadFilter", path)
        if len(lf) != 2:
            raise doc.error(f"{path}.TireLoadFilter", f"expected 2 [load, filtered] points, got {len(lf)}")
        tire_rows.append({
            "long_stiff": doc.number(item, "LongitudinalStiffness", path),
            "lat_stiff_x": doc.number(item, "LateralStiffnessX", path),
            "lat_stiff_y": doc.number(item, "LateralStiffnessY", path),
            "camber_stiff": doc.number(item, "CamberStiffness", path),
            "rest_load": doc.number(item, "RestLoad", path),
            "friction_vs_slip": [doc.numbers(p, f"{path}.FrictionVsSlip[{j}]", 2) for j, p in enumerate(fvs)],
            "load_filter": [doc.numbers(p, f"{path}.TireLoadFilter[{j}]", 2) for j, p in enumerate(lf)],
        })
    tire = TireForceParams.from_wheels(tire_rows)

    wheel_rows = []
    for item, path in _per_wheel(doc, data, "WheelParams", n):
        wheel_rows.append({"radius": doc.number(item, "Radius", path),
                           "half_width": doc.number(item, "HalfWidth", path),
                           "mass": doc.number(item, "Mass", path),
                           "moi": doc.number(item, "MOI", path),
                           "damping_rate": doc.number(item, "DampingRate", path)})
    wheel = WheelParams.from_wheels(wheel_rows)

    bars: tuple[AntiRollBarParams, ...] = ()
    if "AntiRollBarParams" in data:
        raw = doc.array(data, "AntiRollBarParams", "")
        bars = tuple(AntiRollBarParams(doc.integer(b, "Wheel0", f"AntiRollBarParams[{i}]"),
                                       doc.integer(b, "Wheel1", f"AntiRollBarParams[{i}]"),
                                       doc.number(b, "Stiffness", f"AntiRollBarParams[{i}]"))
                     for i, b in enumerate(raw))

    params = VehicleParams(
        axle_description=axles, rigid_body=rigid_body, suspension_state_calculation=state_calc,
        suspension=suspension, suspension_compliance=compliance, suspension_force=susp_force,
        tire_force=tire, wheel=wheel, brake_command_response=(brake, handbrake),
        steer_command_response=steer, ackermann=ackermann, anti_roll_bars=bars, frame=frame, scale=scale,
    )
    _validate_parts(doc, params)
    return params


_PART_KEYS = {
    "rigid_body": "RigidBodyParams", "suspension": "SuspensionParams",
    "suspension_compliance": "SuspensionComplianceParams", "suspension_force": "SuspensionForceParams",
    "tire_force": "TireForceParams", "wheel": "WheelParams",
}


#: JSON key of each ``VehicleParams`` field a physical bound (simcore.limits) can refuse.
_BOUND_KEYS = {
    **_PART_KEYS,
    "brake_command_response": "BrakeCommandResponseParams / HandbrakeCommandResponseParams",
    "anti_roll_bars": "AntiRollBarParams",
    "direct_drive_throttle_response": "ThrottleCommandResponseParams",
    "engine": "EngineParams",
    "gearbox": "GearboxParams",
}


def _bounds_error(exc: ParamBoundsError, source: str) -> PhysXJsonError:
    """A physical-bounds error located at its file and JSON key."""
    return PhysXJsonError(f"{source}: {_BOUND_KEYS.get(exc.part, exc.part)}: {exc}")


def _validate_parts(doc: _Doc, params: VehicleParams) -> None:
    """Run each part's ``validate`` and re-raise its error located at the part's JSON key; then
    the physical bounds of :data:`simcore.limits.PARAM_BOUNDS`."""
    for name, key in _PART_KEYS.items():
        try:
            getattr(params, name).validate()
        except ValueError as exc:
            raise doc.error(key, str(exc)) from exc
    try:
        check_param_bounds(params)
    except ParamBoundsError as exc:
        raise _bounds_error(exc, doc.source) from None
    for i, a in enumerate(params.ackermann):
        try:
            a.validate(params.axle_description)
        except ValueError as exc:
            where = "AckermannParams" if len(params.ackermann) == 1 else f"AckermannParams[{i}]"
            raise doc.error(where, str(exc)) from exc
    for i, b in enumerate(params.anti_roll_bars):
        try:
            b.validate(params.axle_description)
        except ValueError as exc:
            raise doc.error(f"AntiRollBarParams[{i}]", str(exc)) from exc


# --------------------------------------------------------------------------------------------
# Drivetrain files
# --------------------------------------------------------------------------------------------


def direct_drive_params_from_dict(data: Mapping[str, Any], base: VehicleParams,
                                  source: str = "<dict>") -> VehicleParams:
    """``base`` with the throttle response of a ``DirectDrive.json`` document added."""
    doc = _Doc(source)
    if not isinstance(data, Mapping):
        raise doc.expected("(top level)", "a JSON object", data)
    throttle = _command_response(doc, doc.obj(data, "ThrottleCommandResponseParams", ""),
                                 "ThrottleCommandResponseParams", base.nb_wheels,
                                 DirectDriveThrottleCommandResponseParams)
    assert isinstance(throttle, DirectDriveThrottleCommandResponseParams)
    return replace(base, direct_drive_throttle_response=throttle)


_Reader = Callable[[str | Path | None, VehicleParams, Mapping[str, Any]], VehicleParams]


def _engine_drive_params(path: str | Path | None, base: VehicleParams,
                         options: Mapping[str, Any]) -> VehicleParams:
    from simcore.drivetrain.engine_drive.loader import engine_drivetrain_params_from_dict

    data, source = read_json(path, "EngineDrive.json")
    try:
        ed = engine_drivetrain_params_from_dict(data, source, base.nb_wheels)
    except ValueError as exc:
        raise PhysXJsonError(str(exc)) from exc
    kind = options.get("differential", "multi_wheel")
    return replace(base, direct_drive_throttle_response=None, engine=ed.engine, gearbox=ed.gearbox,
                   autobox=ed.autobox, clutch_command_response=ed.clutch_command_response, clutch=ed.clutch,
                   differential=ed.differential(kind))


def _direct_drive_params(path: str | Path | None, base: VehicleParams,
                         options: Mapping[str, Any]) -> VehicleParams:
    if options:
        raise TypeError(f"the direct drivetrain takes no options, got {sorted(options)}")
    data, source = read_json(path, "DirectDrive.json")
    return direct_drive_params_from_dict(data, base, source)


#: Drivetrain kind -> reader(path or None for the shipped file, base params, options) -> params.
#: The file's values must be in the base description's frame and scale.
DRIVETRAIN_READERS: dict[str, _Reader] = {
    "direct": _direct_drive_params,
    "engine": _engine_drive_params,
}


def load_physx_vehicle(
    base: str | Path | None = None,
    drivetrain_file: str | Path | None = None,
    drivetrain: str = "direct",
    frame: Frame | None = None,
    scale: Scale | float | None = None,
    **options: Any,
) -> VehicleParams:
    """Read a PhysX vehicle description and return validated :class:`VehicleParams`.

    ``base``/``drivetrain_file``: paths, ``None`` for the shipped reference car's files.
    ``drivetrain``: a key of :data:`DRIVETRAIN_READERS` (``"direct"`` or ``"engine"``; options such
    as ``differential="four_wheel"`` go to its reader). ``frame``/``scale``: convert the result
    from the frame and scale the file declares to these (default: keep the file's).
    """
    data, source = read_json(base, "Base.json")
    params = base_params_from_dict(data, source)
    if drivetrain not in DRIVETRAIN_READERS:
        raise ValueError(f"unknown drivetrain {drivetrain!r}; known: {sorted(DRIVETRAIN_READERS)}")
    params = DRIVETRAIN_READERS[drivetrain](drivetrain_file, params, options)
    try:
        check_param_bounds(params)  # the drivetrain file's values, located at its file
    except ParamBoundsError as exc:
        default = "DirectDrive.json" if drivetrain == "direct" else "EngineDrive.json"
        raise _bounds_error(exc, str(drivetrain_file) if drivetrain_file is not None
                            else f"simcore/data/{default}") from None
    if frame is not None or scale is not None:
        params = params.to(frame if frame is not None else params.frame, scale)
    params.validate()
    return params
