"""Addressing one params field by a dotted path: ``rigid_body.mass``, ``tire_force.long_stiff``,
``brake_command_response[0].max_response``, ``engine.peak_torque``.

The first part names a field of :class:`~simcore.vehicle.VehicleParams` (with ``[i]`` for its
tuple fields), the rest a field of that params object. A per-wheel field takes one number for
every wheel or one per wheel. Params are immutable: :func:`with_param` returns new params.
``pvdkit record --set`` / ``--vary`` and parameter sweeps address params this way.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

import numpy as np

from pvdkit.types import PvdError

_PART = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?$")


class ParamPathError(PvdError, ValueError):
    """A path that names no params field, or a value that field cannot take (one line)."""


def _fields(obj: Any) -> list[str]:
    return [f.name for f in dataclasses.fields(obj)] if dataclasses.is_dataclass(obj) else []


def _split(path: str) -> list[tuple[str, int | None]]:
    parts = []
    for text in path.split("."):
        m = _PART.match(text)
        if m is None:
            raise ParamPathError(f"param path {path!r}: {text!r} is not a field name (or name[index])")
        parts.append((m.group(1), None if m.group(2) is None else int(m.group(2))))
    return parts


def _step(obj: Any, name: str, index: int | None, path: str) -> Any:
    names = _fields(obj)
    if name not in names:
        where = type(obj).__name__
        raise ParamPathError(f"param path {path!r}: {where} has no field {name!r} "
                             f"(fields: {', '.join(names)})")
    value = getattr(obj, name)
    if index is not None:
        if isinstance(value, np.ndarray):  # a per-wheel array or a vector: set as a whole
            raise ParamPathError(f"param path {path!r}: {name} is an array ({value.size} numbers) and "
                                 "takes no [i]: one value sets all of them (--set also takes one each: "
                                 f"{name}=A,B,…)")
        if not isinstance(value, tuple) or not 0 <= index < len(value):
            size = len(value) if isinstance(value, tuple) else "no"
            raise ParamPathError(f"param path {path!r}: {name} has {size} entries to index with [{index}]")
        value = value[index]
    if value is None:
        raise ParamPathError(f"param path {path!r}: this vehicle has no {name} (None)")
    return value


def param_value(params: Any, path: str) -> Any:
    """The value at ``path`` in ``params``."""
    obj = params
    for name, index in _split(path):
        obj = _step(obj, name, index, path)
    return obj


def with_param(params: Any, path: str, value: Any) -> Any:
    """``params`` with the field at ``path`` set to ``value`` (a number for every wheel of a
    per-wheel field, or one per wheel); the result is validated by the caller's ``validate``."""
    parts = _split(path)
    return _replace(params, parts, value, path)


def _replace(obj: Any, parts: list[tuple[str, int | None]], value: Any, path: str) -> Any:
    (name, index), rest = parts[0], parts[1:]
    current = _step(obj, name, index, path)
    if rest:
        new = _replace(current, rest, value, path)
    else:
        if dataclasses.is_dataclass(current):
            raise ParamPathError(f"param path {path!r} names a whole {type(current).__name__}; "
                                 f"add one of its fields ({', '.join(_fields(current))})")
        new = _converted(current, value, path)
    if index is not None:
        items = list(getattr(obj, name))
        items[index] = new
        new = tuple(items)
    try:
        return dataclasses.replace(obj, **{name: new})
    except (TypeError, ValueError) as exc:
        raise ParamPathError(f"param path {path!r}: {exc}") from None


def _whole(value: Any, path: str) -> None:
    """:class:`ParamPathError` unless every number of ``value`` is a whole number within
    :data:`simcore.limits.MAX_INT_FIELD` (an iteration count or a point count: 4294967296 wrapped
    to 0 in the int64 → C int cast, 1.7 was cut to 1)."""
    from simcore.limits import MAX_INT_FIELD, is_int_field

    for v in np.ravel(np.asarray(value, dtype=object)):
        number = v.item() if isinstance(v, np.generic) else v
        if not is_int_field(number):
            raise ParamPathError(f"param path {path!r}: expected a whole number of magnitude at most "
                                 f"{MAX_INT_FIELD}, got {number!r}")


def _converted(current: Any, value: Any, path: str) -> Any:
    if isinstance(current, np.ndarray):
        if current.dtype.kind in "iu":
            _whole(value, path)
        try:
            arr = np.asarray(value, dtype=current.dtype)
        except (TypeError, ValueError, OverflowError):
            raise ParamPathError(f"param path {path!r}: expected numbers, got {value!r}") from None
        if arr.ndim == 0:
            return np.full(current.shape, arr, dtype=current.dtype)
        if arr.shape != current.shape:
            raise ParamPathError(f"param path {path!r}: expected one number or shape {current.shape}, "
                                 f"got shape {arr.shape}")
        return arr
    if isinstance(current, bool) or not isinstance(current, int | float):
        raise ParamPathError(f"param path {path!r}: a {type(current).__name__} field cannot be set from "
                             "the command line")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ParamPathError(f"param path {path!r}: expected a number, got {value!r}") from None
    if isinstance(current, int):
        _whole(number, path)
        return int(number)
    return number


def parse_vary(text: str) -> tuple[str, float, float]:
    """``PARAM=LO:HI`` → (path, lo, hi): one param spread linearly across a fleet."""
    path, sep, span = text.partition("=")
    lo, sep2, hi = span.partition(":")
    try:
        if not (sep and sep2 and path):
            raise ValueError
        low, high = float(lo), float(hi)
    except ValueError:
        raise ParamPathError(f"--vary {text!r}: expected PARAM=LO:HI, "
                             "e.g. rigid_body.mass=1500:2500") from None
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ParamPathError(f"--vary {text!r}: LO and HI must be finite numbers")
    return path.strip(), low, high


def parse_setting(text: str) -> tuple[str, float | list[float]]:
    """``PARAM=VALUE`` → (path, value): one number, or one per wheel separated by commas."""
    path, sep, value = text.partition("=")
    try:
        if not (sep and path.strip() and value.strip()):
            raise ValueError
        numbers = [float(v) for v in value.split(",")]
        if not all(math.isfinite(x) for x in numbers):
            raise ValueError
    except ValueError:
        raise ParamPathError(f"--set {text!r}: expected PARAM=VALUE (one finite number, or one per wheel "
                             "separated by commas), e.g. rigid_body.mass=2200") from None
    return path.strip(), numbers[0] if len(numbers) == 1 else numbers
