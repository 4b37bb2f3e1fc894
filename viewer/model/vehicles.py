"""The viewer's vehicles: :mod:`pvdkit.names` finds them, this adds what the views show.

Which objects are vehicles, which objects belong to a vehicle and to which wheel, and their
names and paths are found once, in :func:`pvdkit.names.find_vehicles` (one bulk read of every
object-handle series, then a bounded walk of the graph; see that module). The viewer's
:class:`Vehicle` and :class:`Wheel` are :class:`pvdkit.names.Vehicle` / :class:`~pvdkit.names.Wheel`
plus what drawing and labelling need: wheel labels (``wheel 0 · front-left``, from the recorded
wheel positions), wheel centres and the body's forward / left / up axes (top-down view), and
by-class look-ups of a vehicle's or wheel's objects (``part("TireForce")``), so "plot
``TireForce.lngForce`` for this vehicle" is one curve per wheel.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from pvdkit import names as pvd_names
from pvdkit.names import names_of
from pvdkit.recording import ListSeries, Object, Recording
from viewer.model.bulk import prefetched, series_of
from viewer.model.geometry import Axis, BodyAxes, axis_from_name, dominant_axis


def _by_class(objs: Iterable[Object]) -> dict[str, list[Object]]:
    out: dict[str, list[Object]] = {}
    for o in objs:
        out.setdefault(o.cls.name if o.cls else "?", []).append(o)
    return out


def _part(parts: dict[str, list[Object]], class_name: str) -> Object | None:
    """The first object of a class (exactly, else derived from it) among ``parts``."""
    objs = parts.get(class_name)
    if objs:
        return objs[0]
    for objs in parts.values():
        for o in objs:
            if o.cls is not None and o.cls.is_a(class_name):
                return o
    return None


@dataclass(eq=False, repr=False)
class Wheel(pvd_names.Wheel):
    """One wheel: :class:`pvdkit.names.Wheel` (position in the wheel list, ``attachment``, its
    objects) plus a readable label and its centre in the rigid-body frame, if recorded."""

    label: str = ""
    position: np.ndarray | None = None

    @property
    def root(self) -> Object:
        """The object the wheel list points at (``WheelAttachment``)."""
        return self.attachment

    @cached_property
    def parts(self) -> dict[str, list[Object]]:
        """This wheel's objects by class name (its list members included), in object order."""
        return _by_class(self.vehicle.info.wheel_parts[self.index])

    def part(self, class_name: str) -> Object | None:
        """This wheel's object of a class (or of a class derived from it); None if it has none."""
        return _part(self.parts, class_name)


@dataclass(eq=False, repr=False)
class Vehicle(pvd_names.Vehicle):
    """A vehicle: :class:`pvdkit.names.Vehicle` (name, kind, wheels, objects) plus the axes of
    its rigid-body frame and by-class look-ups of its vehicle-wide objects."""

    wheel_type = Wheel  # so ``wheels`` holds the viewer's wheels
    axes: BodyAxes | None = None

    @property
    def obj(self) -> Object:
        """The vehicle object itself."""
        return self.info.obj

    @property
    def wheel_lists(self) -> tuple[str, ...]:
        """The wheel lists that give the wheels, the main one first (``wheelAttachmentSet``)."""
        return self.info.wheel_lists

    @cached_property
    def parts(self) -> dict[str, list[Object]]:
        """The vehicle-wide objects (not the vehicle itself, not its wheels') by class name."""
        return _by_class(self.info.parts)

    def part(self, class_name: str) -> Object | None:
        """The vehicle-wide object of a class (or derived); the vehicle itself for its own class."""
        if self.obj.cls is not None and self.obj.cls.is_a(class_name):
            return self.obj
        return _part(self.parts, class_name)

    def wheel_objects(self, class_name: str) -> list[tuple[Wheel, Object]]:
        """Each wheel with its object of ``class_name`` (wheels without one are skipped)."""
        out = []
        for w in self.wheels:
            o = w.part(class_name)
            if o is not None:
                out.append((w, o))
        return out


# ---------------------------------------------------------------------------------------------
# Discovery
# ---------------------------------------------------------------------------------------------


def find_vehicles(rec: Recording) -> list[Vehicle]:
    """Every vehicle of a recording (:func:`pvdkit.names.find_vehicles`) with its body axes and
    wheel labels and positions."""
    names = names_of(rec)
    vehicles = [Vehicle.of(info, names) for info in names.vehicles]
    recorded = recorded_axes(rec)  # one frame description for the whole scene
    wheel_sources = [(w.part(c), a) for v in vehicles for w in v.wheels for c, a in WHEEL_POSITION_SOURCES]
    if recorded is None:
        wheel_sources += [(w.part("SuspensionParams"), "suspDir") for v in vehicles for w in v.wheels]
    with prefetched(rec, wheel_sources):
        for v in vehicles:
            v.axes = recorded or body_axes(rec, v, recorded=None)
            _label_wheels(rec, v)
    return vehicles


def vehicle_of(vehicles: list[Vehicle], obj: Object | None) -> tuple[Vehicle | None, Wheel | None]:
    """The vehicle of ``vehicles`` an object belongs to (as the vehicle, a vehicle part or a
    wheel part) and the wheel, if it is a wheel part; (None, None) for objects outside every
    vehicle. Who owns what is :meth:`pvdkit.names.ObjectNames.owner`'s answer (a list look-up:
    the tree asks for each of a fleet's 28,000 objects)."""
    if obj is None or not vehicles:
        return None, None
    info, k = vehicles[0].names.owner(obj)
    if info is None or info.index >= len(vehicles):
        return None, None
    v = vehicles[info.index]
    return v, (v.wheels[k] if k is not None else None)


# ---------------------------------------------------------------------------------------------
# Wheel geometry and labels
# ---------------------------------------------------------------------------------------------

#: Where a wheel's centre in the rigid-body frame is recorded: (class, attribute), in order.
WHEEL_POSITION_SOURCES = (("WheelLocalPoseState", "posInRbodyFrame"),
                          ("SuspensionParams", "suspAttachmentPos"))


def first_value(rec: Recording, obj: Object | None, attribute: str) -> object:
    """The first recorded value of an attribute (None if the class lacks it or it was never set)."""
    if obj is None or obj.cls is None or attribute not in obj.cls.paths:
        return None
    s = series_of(rec, obj, attribute)
    if not len(s) or isinstance(s, ListSeries):
        return None
    return s.at(int(s.frames[-1])) if len(s) == 1 else s.at(int(s.frames[0]))


def _wheel_position(rec: Recording, w: Wheel) -> np.ndarray | None:
    for cls_name, attr in WHEEL_POSITION_SOURCES:
        o = w.part(cls_name)
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


def recorded_axes(rec: Recording) -> BodyAxes | None:
    """The vehicle frame a recording describes (simcore's ``SimulationContext``
    ``lngAxis``/``latAxis``/``vrtAxis``); None when it describes none."""
    for cname in ("SimulationContext", "VehicleSimulationContext"):
        if cname in rec.classes:
            for ctx in rec.objects_of_class(cname):
                axes = [axis_from_name(first_value(rec, ctx, a)) for a in ("lngAxis", "latAxis", "vrtAxis")]
                if all(a is not None for a in axes):
                    return BodyAxes(axes[0], axes[1], axes[2], f"{cname} lngAxis/latAxis/vrtAxis")
    return None


_UNSET = object()


def body_axes(rec: Recording, v: Vehicle, recorded: BodyAxes | None | object = _UNSET) -> BodyAxes | None:
    """Forward / left / up axes of a vehicle's rigid-body frame.

    From the recorded frame description when there is one (simcore's ``SimulationContext``
    ``lngAxis``/``latAxis``/``vrtAxis``; ``recorded``: :func:`recorded_axes` when the caller
    already has it, so a fleet does not search for it per vehicle), else derived: up is
    opposite the suspension travel direction (``SuspensionParams.suspDir``), forward is the
    remaining axis along which the wheel centres spread most (the wheelbase), left = up ×
    forward. None without enough data.
    """
    if recorded is _UNSET:
        recorded = recorded_axes(rec)
    if isinstance(recorded, BodyAxes):
        return recorded
    positions = [w.position for w in v.wheels if w.position is not None]
    if len(positions) < 2:
        for w in v.wheels:
            w.position = _wheel_position(rec, w)
        positions = [w.position for w in v.wheels if w.position is not None]
    up: Axis | None = None
    for w in v.wheels:
        d = first_value(rec, w.part("SuspensionParams"), "suspDir")
        if d is not None:
            up = dominant_axis(-np.asarray(d, np.float64))
            if up is not None:
                break
    if up is None or len(positions) < 2:
        return None
    pts = np.asarray(positions)
    others = [i for i in range(3) if i != up.index]
    spread = [float(np.ptp(pts[:, i])) for i in others]
    lng = Axis(others[int(np.argmax(spread))], 1)
    left = np.cross(up.vector, lng.vector)
    lat = dominant_axis(left)
    assert lat is not None
    return BodyAxes(lng, lat, up, "derived from suspension direction and wheel positions")


def _label_wheels(rec: Recording, v: Vehicle) -> None:
    """Label wheels "wheel i", plus front/rear and left/right where positions tell them apart."""
    for w in v.wheels:
        if w.position is None:
            w.position = _wheel_position(rec, w)
    pts = [w.position for w in v.wheels]
    sides: list[str] = [""] * len(v.wheels)
    if v.axes is not None and pts and all(p is not None for p in pts):
        arr = np.asarray(pts)
        lng = arr @ v.axes.lng.vector
        lat = arr @ v.axes.lat.vector
        c_lng, c_lat = lng.mean(), lat.mean()
        tol = 1e-3 * max(float(np.ptp(lng)), float(np.ptp(lat)), 1e-9)
        for i in range(len(v.wheels)):
            fr = "front" if lng[i] > c_lng + tol else "rear" if lng[i] < c_lng - tol else ""
            lr = "left" if lat[i] > c_lat + tol else "right" if lat[i] < c_lat - tol else ""
            sides[i] = "-".join(s for s in (fr, lr) if s)
    for w, side in zip(v.wheels, sides, strict=True):
        extra = side
        if not extra and w.root.name and "/" in w.root.name:
            extra = w.root.name.rsplit("/", 1)[-1]
        w.label = f"wheel {w.index}" + (f" · {extra}" if extra else "")
