"""Reader for PhysX's engine-drive vehicle description (``EngineDrive.json``).

The layout is the one PhysX's snippets read and write (``EngineDrivetrainSerialization.cpp``):
top-level objects ``AutoboxParams``, ``ClutchCommandResponseParams``, ``EngineParams``,
``GearboxParams``, ``MultiWheelDifferentialParams``, ``FourWheelDifferentialParams``,
``TankDifferentialParams`` and ``ClutchParams``. The file carries no frame or scale of its own:
its values are in the units of the base description it accompanies (``Base.json``'s ``Scale``),
so callers transform the result with that scale.

Two additions, both optional: ``TankDifferentialParams.TankDriveModel`` (``"standard"`` or
``"special"``, Stingray's tank drive model; default special = Vehicle2) and
``TankDifferentialParams.ThrustIdPerTrack`` (default: track i uses thrust i, as PhysX assigns).

Errors name the file, the JSON path and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from simcore.drivetrain.engine_drive.params import (
    AutoboxParams,
    ClutchCommandResponseParams,
    ClutchParams,
    EngineDrivetrainParams,
    EngineParams,
    FourWheelDriveDifferentialParams,
    GearboxParams,
    MultiWheelDriveDifferentialParams,
    TankDriveDifferentialParams,
    TankDriveModel,
)
from simcore.limits import MAX_INT_FIELD, is_finite_number, is_int_field

#: The package data folder holding the reference car's ``EngineDrive.json``.
DATA_DIR = Path(__file__).resolve().parents[2] / "data"


class EngineDriveFormatError(ValueError):
    """An engine-drive description that cannot be read; the message names file and JSON path."""


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, expected: str, got: object) -> EngineDriveFormatError:
        shown = repr(got)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        return EngineDriveFormatError(f"{self.source}: {path}: expected {expected}, got {shown}")

    def obj(self, parent: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
        full = f"{path}.{key}" if path else key
        if key not in parent:
            raise EngineDriveFormatError(f"{self.source}: {full}: missing (required object)")
        value = parent[key]
        if not isinstance(value, Mapping):
            raise self.fail(full, "an object", value)
        return value

    def number(self, parent: Mapping[str, Any], key: str, path: str) -> float:
        full = f"{path}.{key}"
        if key not in parent:
            raise EngineDriveFormatError(f"{self.source}: {full}: missing (required number)")
        return self.as_number(parent[key], full)

    def as_number(self, value: object, path: str) -> float:
        if not is_finite_number(value):
            raise self.fail(path, "a finite number", value)
        return float(value)

    def integer(self, parent: Mapping[str, Any], key: str, path: str) -> int:
        full = f"{path}.{key}"
        if key not in parent:
            raise EngineDriveFormatError(f"{self.source}: {full}: missing (required integer)")
        return self.as_integer(parent[key], full)

    def as_integer(self, value: object, path: str) -> int:
        if not is_int_field(value):
            raise self.fail(path, f"an integer of magnitude at most {MAX_INT_FIELD}", value)
        return int(value)

    def numbers(self, parent: Mapping[str, Any], key: str, path: str) -> list[float]:
        full = f"{path}.{key}"
        if key not in parent:
            raise EngineDriveFormatError(f"{self.source}: {full}: missing (required array of numbers)")
        value = parent[key]
        if not isinstance(value, list):
            raise self.fail(full, "an array of numbers", value)
        return [self.as_number(v, f"{full}[{i}]") for i, v in enumerate(value)]

    def integers(self, value: object, path: str) -> list[int]:
        if not isinstance(value, list):
            raise self.fail(path, "an array of integers", value)
        return [self.as_integer(v, f"{path}[{i}]") for i, v in enumerate(value)]


def _per_wheel(reader: _Reader, values: list[float], path: str, nb_wheels: int | None) -> np.ndarray:
    """Trim PhysX's fixed-size (20-entry) arrays to the vehicle's wheels; extra entries must be 0."""
    if nb_wheels is None:
        return np.asarray(values, dtype=np.float64)
    if len(values) < nb_wheels:
        raise reader.fail(path, f"at least {nb_wheels} entries (one per wheel)", values)
    extra = values[nb_wheels:]
    if any(v != 0.0 for v in extra):
        raise reader.fail(
            path, f"zeros after the first {nb_wheels} entries (the vehicle has {nb_wheels} wheels)", values)
    return np.asarray(values[:nb_wheels], dtype=np.float64)


def _multi_wheel(reader: _Reader, node: Mapping[str, Any], path: str,
                 nb_wheels: int | None) -> tuple[np.ndarray, np.ndarray]:
    torque = reader.numbers(node, "TorqueRatios", path)
    ave = reader.numbers(node, "AveWheelSpeedRatios", path)
    if len(torque) != len(ave):
        raise EngineDriveFormatError(
            f"{reader.source}: {path}: TorqueRatios has {len(torque)} entries but AveWheelSpeedRatios "
            f"has {len(ave)}; both need one entry per wheel")
    return (_per_wheel(reader, torque, f"{path}.TorqueRatios", nb_wheels),
            _per_wheel(reader, ave, f"{path}.AveWheelSpeedRatios", nb_wheels))


def _pair(reader: _Reader, node: Mapping[str, Any], key: str, path: str) -> tuple[int, int]:
    full = f"{path}.{key}"
    if key not in node:
        raise EngineDriveFormatError(f"{reader.source}: {full}: missing (required pair of wheel ids)")
    ids = reader.integers(node[key], full)
    if len(ids) != 2:
        raise reader.fail(full, "exactly two wheel ids", node[key])
    return ids[0], ids[1]


def engine_drivetrain_params_from_dict(data: Mapping[str, Any], source: str = "<dict>",
                                       nb_wheels: int | None = None) -> EngineDrivetrainParams:
    """Build and validate :class:`EngineDrivetrainParams` from the parsed JSON ``data``.

    ``nb_wheels`` trims the per-wheel differential arrays (PhysX writes 20 entries) to the
    vehicle's wheel count; ``source`` names the file in error messages.
    """
    r = _Reader(source)
    if not isinstance(data, Mapping):
        raise r.fail("(top level)", "a JSON object", data)

    node = r.obj(data, "AutoboxParams", "")
    autobox = AutoboxParams(r.numbers(node, "UpRatios", "AutoboxParams"),
                            r.numbers(node, "DownRatios", "AutoboxParams"),
                            r.number(node, "Latency", "AutoboxParams"))

    node = r.obj(data, "ClutchCommandResponseParams", "")
    clutch_response = ClutchCommandResponseParams(
        r.number(node, "MaxResponse", "ClutchCommandResponseParams"))

    p = "EngineParams"
    node = r.obj(data, p, "")
    if "TorqueCurve" not in node:
        raise EngineDriveFormatError(f"{source}: {p}.TorqueCurve: missing (required array of [x, y] pairs)")
    curve_raw = node["TorqueCurve"]
    if not isinstance(curve_raw, list):
        raise r.fail(f"{p}.TorqueCurve", "an array of [x, y] pairs", curve_raw)
    curve = []
    for i, pt in enumerate(curve_raw):
        if not isinstance(pt, list) or len(pt) != 2:
            raise r.fail(f"{p}.TorqueCurve[{i}]", "an [x, y] pair of numbers", pt)
        curve.append([r.as_number(pt[0], f"{p}.TorqueCurve[{i}][0]"),
                      r.as_number(pt[1], f"{p}.TorqueCurve[{i}][1]")])
    engaged, disengaged = "DampingRateZeroThrottleClutchEngaged", "DampingRateZeroThrottleClutchDisengaged"
    engine = EngineParams(
        torque_curve=np.asarray(curve, dtype=np.float64).reshape(-1, 2),
        moi=r.number(node, "MOI", p),
        peak_torque=r.number(node, "PeakTorque", p),
        idle_omega=r.number(node, "IdleOmega", p),
        max_omega=r.number(node, "MaxOmega", p),
        damping_rate_full_throttle=r.number(node, "DampingRateFullThrottle", p),
        damping_rate_zero_throttle_clutch_engaged=r.number(node, engaged, p),
        damping_rate_zero_throttle_clutch_disengaged=r.number(node, disengaged, p),
    )

    p = "GearboxParams"
    node = r.obj(data, p, "")
    gearbox = GearboxParams(r.numbers(node, "Ratios", p), r.integer(node, "NeutralGear", p),
                            r.number(node, "FinalRatio", p), r.number(node, "SwitchTime", p))

    p = "MultiWheelDifferentialParams"
    node = r.obj(data, p, "")
    multi = MultiWheelDriveDifferentialParams(*_multi_wheel(r, node, p, nb_wheels))

    p = "FourWheelDifferentialParams"
    node = r.obj(data, p, "")
    torque, ave = _multi_wheel(r, node, p, nb_wheels)
    four = FourWheelDriveDifferentialParams(
        torque, ave,
        front_wheel_ids=_pair(r, node, "FrontWheelIds", p),
        rear_wheel_ids=_pair(r, node, "RearWheelIds", p),
        front_bias=r.number(node, "FrontBias", p), front_target=r.number(node, "FrontTarget", p),
        rear_bias=r.number(node, "RearBias", p), rear_target=r.number(node, "RearTarget", p),
        center_bias=r.number(node, "CenterBias", p), center_target=r.number(node, "CenterTarget", p),
        rate=r.number(node, "Rate", p),
    )

    p = "TankDifferentialParams"
    node = r.obj(data, p, "")
    torque, ave = _multi_wheel(r, node, p, nb_wheels)
    if "TankTracks" not in node:
        raise EngineDriveFormatError(f"{source}: {p}.TankTracks: missing (required array of wheel id arrays)")
    tracks_raw = node["TankTracks"]
    if not isinstance(tracks_raw, list):
        raise r.fail(f"{p}.TankTracks", "an array of wheel id arrays", tracks_raw)
    tracks = tuple(tuple(r.integers(t, f"{p}.TankTracks[{i}]")) for i, t in enumerate(tracks_raw))
    thrust_ids = None
    if "ThrustIdPerTrack" in node:
        thrust_ids = tuple(r.integers(node["ThrustIdPerTrack"], f"{p}.ThrustIdPerTrack"))
    model = TankDriveModel.SPECIAL
    if "TankDriveModel" in node:
        try:
            model = TankDriveModel.parse(node["TankDriveModel"])
        except ValueError:
            raise r.fail(f"{p}.TankDriveModel", "'standard' or 'special'", node["TankDriveModel"]) from None
    tank = TankDriveDifferentialParams(torque, ave, tracks=tracks, thrust_id_per_track=thrust_ids,
                                       drive_model=model)

    p = "ClutchParams"
    node = r.obj(data, p, "")
    mode = r.integer(node, "AccuracyMode", p)
    if mode not in (0, 1):
        raise r.fail(f"{p}.AccuracyMode", "0 (estimate) or 1 (best possible)", node["AccuracyMode"])
    clutch = ClutchParams(mode, r.integer(node, "EstimateIterations", p))

    params = EngineDrivetrainParams(autobox, clutch_response, engine, gearbox, multi, four, tank, clutch)
    try:
        params.validate()
    except ValueError as exc:
        raise EngineDriveFormatError(f"{source}: {exc}") from exc
    return params


def read_engine_drivetrain_params(path: str | Path | None = None,
                                  nb_wheels: int | None = None) -> EngineDrivetrainParams:
    """Read an ``EngineDrive.json`` file; ``None`` reads the reference car's shipped copy.

    The result is in the file's own units (see the module docstring). Raises
    :class:`EngineDriveFormatError` for invalid JSON or content, naming file and JSON path.
    """
    from simcore.io.physx_json import parse_json_file

    path = DATA_DIR / "EngineDrive.json" if path is None else Path(path)
    source = str(path)
    data = parse_json_file(path, source, EngineDriveFormatError)
    return engine_drivetrain_params_from_dict(data, source, nb_wheels)
