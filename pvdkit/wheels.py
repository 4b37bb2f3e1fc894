"""Where each wheel of a vehicle sits: front or rear, left or right.

Why here: which wheel is "wheel 3" depends on the vehicle description (simcore's sedan lists
front-right first, PhysX's samples front-left), so a person needs the side, and the viewer was
the only place that knew it. The rule, from the recording alone:

* each wheel's centre in the rigid-body frame: :data:`WHEEL_POSITION_SOURCES`, the last sample
  (the first may be a zero placeholder written before the first step);
* the body's forward / left / up axes: simcore's ``SimulationContext`` ``lngAxis`` / ``latAxis``
  / ``vrtAxis`` when recorded, else up opposite the suspension travel (``SuspensionParams.suspDir``)
  and forward along the wheel centres' largest spread (the wheelbase);
* a wheel ahead of the centre of the wheels is ``front``, behind it ``rear``, left of it ``left``
  …: ``front-left``, or only ``left`` where all wheels share one axle.

Reads go through ``series_of`` (default :meth:`Recording.series`), so that the viewer's bulk
prefetch serves a 256-car fleet. Axes are signed coordinate axes (:class:`Axis`): nothing
assumes an up axis.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pvdkit.recording import ListSeries, Object, Recording, Series

__all__ = ["AXIS_LETTERS", "WHEEL_POSITION_SOURCES", "Axis", "BodyAxes", "axis_from_name", "body_axes",
           "dominant_axis", "first_value", "recorded_axes", "wheel_position", "wheel_sides"]

SeriesOf = Callable[[Recording, Object, str], "Series | ListSeries"]


def _series(rec: Recording, obj: Object, attribute: str) -> Series | ListSeries:
    return rec.series(obj, attribute)


AXIS_LETTERS = "XYZ"


@dataclass(frozen=True)
class Axis:
    """A signed coordinate axis: ``index`` 0/1/2 for X/Y/Z and ``sign`` +1 or -1."""

    index: int
    sign: int = 1

    def __post_init__(self) -> None:
        if self.index not in (0, 1, 2) or self.sign not in (1, -1):
            raise ValueError(f"bad axis ({self.index}, {self.sign}): index 0..2 and sign ±1 expected")

    @property
    def vector(self) -> np.ndarray:
        v = np.zeros(3)
        v[self.index] = self.sign
        return v

    def __str__(self) -> str:
        return ("+" if self.sign > 0 else "-") + AXIS_LETTERS[self.index]


def axis_from_name(name: object) -> Axis | None:
    """An axis from a recorded name such as ``"ePosY"`` / ``"eNegZ"`` (PxVehicleAxes), ``"+z"``,
    ``"y"``; None when the text names no axis."""
    if not isinstance(name, str):
        return None
    t = name.strip().lower()
    if t.startswith("e"):
        t = t[1:]
    sign = 1
    if t.startswith(("pos", "+")):
        t = t[3:] if t.startswith("pos") else t[1:]
    elif t.startswith(("neg", "-")):
        sign = -1
        t = t[3:] if t.startswith("neg") else t[1:]
    if len(t) == 1 and t in "xyz":
        return Axis("xyz".index(t), sign)
    return None


def dominant_axis(vec: np.ndarray) -> Axis | None:
    """The signed axis closest to a direction (None for a zero or non-finite vector)."""
    v = np.asarray(vec, np.float64).reshape(-1)[:3]
    if len(v) < 3 or not np.all(np.isfinite(v)) or not np.any(v):
        return None
    i = int(np.argmax(np.abs(v)))
    return Axis(i, 1 if v[i] > 0 else -1)



@dataclass(frozen=True)
class BodyAxes:
    """A vehicle's own frame: forward (``lng``), left (``lat``) and up (``vrt``) axes in the
    rigid-body frame, with where they came from."""

    lng: Axis
    lat: Axis
    vrt: Axis
    source: str


#: Where a wheel's centre in the rigid-body frame is recorded: (class, attribute), in order.
WHEEL_POSITION_SOURCES = (("WheelLocalPoseState", "posInRbodyFrame"),
                          ("SuspensionParams", "suspAttachmentPos"))

#: A wheel's object of a class (or derived from it), None when it has none: ``Wheel.part``.
PartOf = Callable[[str], "Object | None"]


def first_value(rec: Recording, obj: Object | None, attribute: str, series_of: SeriesOf = _series) -> object:
    """The first recorded value of an attribute (None if the class lacks it or it was never set)."""
    if obj is None or obj.cls is None or attribute not in obj.cls.paths:
        return None
    s = series_of(rec, obj, attribute)
    if not len(s) or isinstance(s, ListSeries):
        return None
    return s.at(int(s.frames[-1])) if len(s) == 1 else s.at(int(s.frames[0]))


def wheel_position(rec: Recording, part: PartOf, series_of: SeriesOf = _series) -> np.ndarray | None:
    """A wheel's centre in the rigid-body frame (:data:`WHEEL_POSITION_SOURCES`), None if not recorded."""
    for cls_name, attr in WHEEL_POSITION_SOURCES:
        o = part(cls_name)
        if o is None or o.cls is None or attr not in o.cls.paths:
            continue
        s = series_of(rec, o, attr)
        vals = s.values if not isinstance(s, ListSeries) else None
        if isinstance(vals, np.ndarray) and vals.ndim == 2 and vals.shape[1] >= 3:
            # The last sample: the first may be a zero placeholder written before the first step.
            p = vals[-1, :3].astype(np.float64)
            if np.all(np.isfinite(p)) and np.any(p):
                return p
    return None


def recorded_axes(rec: Recording, series_of: SeriesOf = _series) -> BodyAxes | None:
    """The vehicle frame a recording describes (simcore's ``SimulationContext``
    ``lngAxis``/``latAxis``/``vrtAxis``); None when it describes none."""
    for cname in ("SimulationContext", "VehicleSimulationContext"):
        if cname in rec.classes:
            for ctx in rec.objects_of_class(cname):
                names = (first_value(rec, ctx, a, series_of) for a in ("lngAxis", "latAxis", "vrtAxis"))
                axes = [axis_from_name(n) for n in names]
                if all(a is not None for a in axes):
                    return BodyAxes(axes[0], axes[1], axes[2], f"{cname} lngAxis/latAxis/vrtAxis")
    return None


def body_axes(rec: Recording, parts: list[PartOf], positions: list[np.ndarray | None],
              series_of: SeriesOf = _series) -> BodyAxes | None:
    """A vehicle's forward / left / up axes derived from its wheels (``parts``: each wheel's
    :data:`PartOf`; ``positions``: :func:`wheel_position` of each): up opposite the suspension
    travel direction (``SuspensionParams.suspDir``), forward the remaining axis along which the
    wheel centres spread most (the wheelbase), left = up × forward. None without enough data.
    (A recording that describes its frame: :func:`recorded_axes` first.)"""
    known = [p for p in positions if p is not None]
    up: Axis | None = None
    for part in parts:
        d = first_value(rec, part("SuspensionParams"), "suspDir", series_of)
        if d is not None:
            up = dominant_axis(-np.asarray(d, np.float64))
            if up is not None:
                break
    if up is None or len(known) < 2:
        return None
    pts = np.asarray(known)
    others = [i for i in range(3) if i != up.index]
    spread = [float(np.ptp(pts[:, i])) for i in others]
    lng = Axis(others[int(np.argmax(spread))], 1)
    lat = dominant_axis(np.cross(up.vector, lng.vector))
    assert lat is not None
    return BodyAxes(lng, lat, up, "derived from suspension direction and wheel positions")


def wheel_sides(positions: list[np.ndarray | None], axes: BodyAxes | None) -> list[str]:
    """Each wheel's side: ``front-left``, ``rear-right`` …, ``left`` where all wheels share one
    axle; ``""`` for every wheel when a position or the axes are unknown."""
    sides = [""] * len(positions)
    if axes is None or not positions or any(p is None for p in positions):
        return sides
    arr = np.asarray(positions)
    lng = arr @ axes.lng.vector
    lat = arr @ axes.lat.vector
    c_lng, c_lat = lng.mean(), lat.mean()
    tol = 1e-3 * max(float(np.ptp(lng)), float(np.ptp(lat)), 1e-9)
    for i in range(len(positions)):
        fr = "front" if lng[i] > c_lng + tol else "rear" if lng[i] < c_lng - tol else ""
        lr = "left" if lat[i] > c_lat + tol else "right" if lat[i] < c_lat - tol else ""
        sides[i] = "-".join(s for s in (fr, lr) if s)
    return sides
