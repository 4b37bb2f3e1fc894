"""Vehicles as vehicles: find them in a recording and group every per-wheel object by wheel.

PhysX Vehicle2 records a vehicle as an object graph (see PhysX ``VhOmniPvd``): a ``Vehicle``
object holds a unique list ``wheelAttachmentSet`` of ``WheelAttachment`` objects, one per wheel,
and each attachment points through object-handle attributes to that wheel's ``WheelParams``,
``WheelRigidBodyState``, ``SuspensionState``, ``TireForce`` … objects; vehicle-wide objects
(``RigidBodyState``, drivetrain, engine …) hang off the vehicle itself. Other producers use
simpler shapes (pvdkit's synthetic files: ``Vehicle.wheels`` lists ``Wheel`` objects).

The rule used here covers both: a *vehicle* is an object whose class has a unique-list attribute
of object handles with "wheel" in its name; the longest such list gives the wheels in order; other
wheel lists of the same length (``physxWheelAttachmentSet``) are matched to the wheels by
position. Every object reachable from exactly one wheel (following handles, a few levels deep) is
that wheel's part; every object reachable from the vehicle but from no wheel and no other vehicle
is a vehicle part. So "plot ``TireForce.lngForce`` for this vehicle" is one curve per wheel,
each from the ``TireForce`` object of that wheel.
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from pvdkit.recording import ListSeries, Object, Recording
from pvdkit.types import DataType
from viewer.model.geometry import Axis, BodyAxes, axis_from_name, dominant_axis

#: How many handle hops to follow from a wheel root or a vehicle when collecting parts.
PART_DEPTH = 3


@dataclass(eq=False)
class Wheel:
    """One wheel of a vehicle: its position in the wheel list, a readable label, the object the
    list points at (``root``) and every object that belongs to this wheel alone, by class name."""

    index: int
    root: Object
    label: str = ""
    position: np.ndarray | None = None  # wheel centre in the rigid-body frame, if recorded
    parts: dict[str, list[Object]] = field(default_factory=dict)

    def part(self, class_name: str) -> Object | None:
        """This wheel's object of a class (or of a class derived from it); None if it has none."""
        objs = self.parts.get(class_name)
        if objs:
            return objs[0]
        for objs in self.parts.values():
            for o in objs:
                if o.cls is not None and o.cls.is_a(class_name):
                    return o
        return None

    def objects(self) -> list[Object]:
        return [o for objs in self.parts.values() for o in objs]


@dataclass(eq=False)
class Vehicle:
    """A vehicle: its object, display name, wheels in list order and vehicle-wide parts."""

    index: int
    obj: Object
    name: str
    wheels: list[Wheel] = field(default_factory=list)
    parts: dict[str, list[Object]] = field(default_factory=dict)
    wheel_lists: tuple[str, ...] = ()
    axes: BodyAxes | None = None

    def part(self, class_name: str) -> Object | None:
        """The vehicle-wide object of a class (or derived); the vehicle itself for its own class."""
        if self.obj.cls is not None and self.obj.cls.is_a(class_name):
            return self.obj
        objs = self.parts.get(class_name)
        if objs:
            return objs[0]
        for objs in self.parts.values():
            for o in objs:
                if o.cls is not None and o.cls.is_a(class_name):
                    return o
        return None

    def objects(self) -> list[Object]:
        """The vehicle, its parts and every wheel's parts."""
        out = [self.obj] + [o for objs in self.parts.values() for o in objs]
        for w in self.wheels:
            out.extend(w.objects())
        return out

    def wheel_objects(self, class_name: str) -> list[tuple[Wheel, Object]]:
        """Each wheel with its object of ``class_name`` (wheels without one are skipped)."""
        out = []
        for w in self.wheels:
            o = w.part(class_name)
            if o is not None:
                out.append((w, o))
        return out

    def __repr__(self) -> str:
        return f"<Vehicle {self.name!r}: {len(self.wheels)} wheels, {len(self.parts)} part classes>"


# ---------------------------------------------------------------------------------------------
# Objects by class
# ---------------------------------------------------------------------------------------------

_BY_CLASS: weakref.WeakKeyDictionary[Recording, dict[str, list[Object]]] = weakref.WeakKeyDictionary()


def objects_of(rec: Recording, class_name: str, *, derived: bool = True) -> list[Object]:
    """Objects of a class (``derived``: or of a class derived from it), in creation order.

    ``Recording.objects_of_class`` tests every object's class chain on every call (0.13 s on a
    28,000-object fleet recording); the viewer asks per vehicle, so objects are grouped by class
    once per recording and only the few classes are tested."""
    table = _BY_CLASS.get(rec)
    if table is None:
        table = {}
        for o in rec.objects:
            if o.cls is not None:
                table.setdefault(o.cls.name, []).append(o)
        _BY_CLASS[rec] = table
    if not derived:
        return list(table.get(class_name, ()))
    groups = [objs for name, objs in table.items()
              if name == class_name or (objs[0].cls is not None and objs[0].cls.is_a(class_name))]
    if len(groups) == 1:
        return list(groups[0])
    return sorted((o for g in groups for o in g), key=lambda o: o.index)


# ---------------------------------------------------------------------------------------------
# Graph walking
# ---------------------------------------------------------------------------------------------


def handle_attributes(obj: Object) -> list[tuple[str, bool]]:
    """Dotted names of an object's object-handle attributes, each with True for unique lists."""
    if obj.cls is None:
        return []
    out = []
    for name, chain in obj.cls.paths.items():
        a = chain[-1]
        if a.data_type == DataType.OBJECT_HANDLE and a.kind in ("value", "unique_list"):
            out.append((name, a.kind == "unique_list"))
    return out


def referenced(rec: Recording, obj: Object, attribute: str) -> list[Object]:
    """Every object an object-handle attribute ever pointed at, in order of first reference
    (for a unique list: every item ever added). Handles that resolve to nothing are skipped."""
    s = rec.series(obj, attribute)
    if isinstance(s, ListSeries):
        items, frames = s.items, s.frames
    else:
        items, frames = s.values, s.frames
    if not isinstance(items, np.ndarray) or items.ndim != 1 or not len(items):
        return []
    _, first = np.unique(items, return_index=True)
    out: list[Object] = []
    seen: set[int] = set()
    for i in np.sort(first):
        h = int(items[i])
        if h == 0:
            continue
        target = rec.resolve(h, int(frames[i]))
        if target is not None and target.index not in seen and target is not obj:
            seen.add(target.index)
            out.append(target)
    return out


def _reachable(rec: Recording, roots: Iterable[Object], depth: int, skip: set[int],
               cache: dict[int, list[Object]]) -> list[Object]:
    """Objects reachable from ``roots`` through handle attributes, at most ``depth`` hops,
    not entering objects in ``skip`` (breadth first, roots included)."""
    out: list[Object] = []
    seen: set[int] = set()
    frontier = [r for r in roots if r.index not in skip]
    for r in frontier:
        seen.add(r.index)
    out.extend(frontier)
    for _ in range(depth):
        nxt = []
        for o in frontier:
            for t in _children(rec, o, cache):
                if t.index not in seen and t.index not in skip:
                    seen.add(t.index)
                    nxt.append(t)
        out.extend(nxt)
        frontier = nxt
    return out


def _children(rec: Recording, obj: Object, cache: dict[int, list[Object]]) -> list[Object]:
    kids = cache.get(obj.index)
    if kids is None:
        kids = []
        for name, _ in handle_attributes(obj):
            kids.extend(referenced(rec, obj, name))
        cache[obj.index] = kids
    return kids


def _by_class(objs: Iterable[Object]) -> dict[str, list[Object]]:
    out: dict[str, list[Object]] = {}
    for o in objs:
        out.setdefault(o.cls.name if o.cls else "?", []).append(o)
    return out


# ---------------------------------------------------------------------------------------------
# Discovery
# ---------------------------------------------------------------------------------------------


def _wheel_lists(obj: Object) -> list[str]:
    return [n for n, is_list in handle_attributes(obj) if is_list and "wheel" in n.lower()]


def is_vehicle(obj: Object) -> bool:
    """True for an object whose class has a unique list of object handles named like "wheel…"."""
    return bool(_wheel_lists(obj))


def find_vehicles(rec: Recording) -> list[Vehicle]:
    """Every vehicle of a recording with its wheels and parts (see the module docstring)."""
    cache: dict[int, list[Object]] = {}
    candidates = [o for o in rec.objects if o.cls is not None and is_vehicle(o)]
    vehicle_ids = {o.index for o in candidates}
    vehicles: list[Vehicle] = []
    claimed_by_wheels: set[int] = set()
    for vi, vobj in enumerate(candidates):
        lists = {name: referenced(rec, vobj, name) for name in _wheel_lists(vobj)}
        main = max(lists, key=lambda n: (len(lists[n]), n == "wheelAttachmentSet"))
        n_wheels = len(lists[main])
        aligned = [n for n in lists if len(lists[n]) == n_wheels]
        aligned.sort(key=lambda n: n != main)
        roots_per_wheel = [[lists[n][i] for n in aligned] for i in range(n_wheels)]
        skip = vehicle_ids | {vobj.index}
        reach = [_reachable(rec, roots, PART_DEPTH, skip, cache) for roots in roots_per_wheel]
        counts = Counter(o.index for objs in reach for o in objs)
        wheels = []
        for i, objs in enumerate(reach):
            mine = [o for o in objs if counts[o.index] == 1]
            claimed_by_wheels.update(o.index for o in mine)
            wheels.append(Wheel(i, roots_per_wheel[i][0], parts=_by_class(mine)))
        vehicles.append(Vehicle(vi, vobj, "", wheels, wheel_lists=tuple(aligned)))

    # Vehicle-wide parts: reachable from the vehicle (not through its wheel lists), from no
    # wheel and from no other vehicle.
    reach_v: list[list[Object]] = []
    for v in vehicles:
        roots = []
        wl = set(_wheel_lists(v.obj))
        for name, _ in handle_attributes(v.obj):
            if name not in wl:
                roots.extend(referenced(rec, v.obj, name))
        skip = vehicle_ids | claimed_by_wheels
        reach_v.append(_reachable(rec, roots, PART_DEPTH - 1, skip, cache))
    counts = Counter(o.index for objs in reach_v for o in objs)
    for v, objs in zip(vehicles, reach_v, strict=True):
        v.parts = _by_class(o for o in objs if counts[o.index] == 1)

    names = [_vehicle_name(rec, v) for v in vehicles]
    dup = Counter(names)
    for v, n in zip(vehicles, names, strict=True):
        v.name = n if dup[n] == 1 else f"{n} #{v.index}"
    recorded = recorded_axes(rec)  # one frame description for the whole scene
    for v in vehicles:
        v.axes = recorded or body_axes(rec, v, recorded=None)
        _label_wheels(rec, v)
    return vehicles


def _vehicle_name(rec: Recording, v: Vehicle) -> str:
    """A readable vehicle name: a recorded ``name`` string of one of its parts (PhysX: the
    actor's USD path), else the object's own name, else class and handle."""
    for objs in v.parts.values():
        for o in objs:
            if o.cls is not None and "name" in o.cls.paths:
                s = rec.series(o, "name")
                if not isinstance(s, ListSeries) and len(s) and isinstance(s.values, list):
                    text = next((t for t in s.values if t), "")
                    if text:
                        return text
    if v.obj.name:
        return v.obj.name
    return f"{v.obj.cls.name if v.obj.cls else 'object'} 0x{v.obj.handle:x}"


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
    s = rec.series(obj, attribute)
    if not len(s) or isinstance(s, ListSeries):
        return None
    return s.at(int(s.frames[-1])) if len(s) == 1 else s.at(int(s.frames[0]))


def _wheel_position(rec: Recording, w: Wheel) -> np.ndarray | None:
    for cls_name, attr in WHEEL_POSITION_SOURCES:
        o = w.part(cls_name)
        if o is None or o.cls is None or attr not in o.cls.paths:
            continue
        s = rec.series(o, attr)
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
            for ctx in objects_of(rec, cname):
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


def owners(vehicles: list[Vehicle]) -> dict[int, tuple[Vehicle, Wheel | None]]:
    """Object index → (vehicle, wheel or None) for every object of every vehicle: what
    :func:`vehicle_of` answers, as one lookup (the tree asks for each of 28,000 objects)."""
    out: dict[int, tuple[Vehicle, Wheel | None]] = {}
    for v in vehicles:
        for w in v.wheels:
            out.setdefault(w.root.index, (v, w))
            for o in w.objects():
                out.setdefault(o.index, (v, w))
        for objs in v.parts.values():
            for o in objs:
                out.setdefault(o.index, (v, None))
    for v in vehicles:
        out[v.obj.index] = (v, None)
    return out


def vehicle_of(vehicles: list[Vehicle], obj: Object) -> tuple[Vehicle | None, Wheel | None]:
    """The vehicle an object belongs to (as the vehicle, a vehicle part or a wheel part) and the
    wheel, if it is a wheel part; (None, None) for objects outside every vehicle."""
    for v in vehicles:
        if v.obj is obj:
            return v, None
        for w in v.wheels:
            if w.root is obj or any(o is obj for o in w.objects()):
                return v, w
        if any(o is obj for objs in v.parts.values() for o in objs):
            return v, None
    return None, None
