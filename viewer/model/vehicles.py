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

from pvdkit.recording import Class, ListSeries, Object, Recording
from pvdkit.types import DataType
from viewer.model.bulk import prefetched, series_of
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


_HANDLE_ATTRS: weakref.WeakKeyDictionary[Class, list[tuple[str, bool]]] = weakref.WeakKeyDictionary()


def handle_attributes(obj: Object) -> list[tuple[str, bool]]:
    """Dotted names of an object's object-handle attributes, each with True for unique lists
    (found once per class: the vehicle graph asks for each of a fleet's 28,000 objects)."""
    return list(_class_handle_attributes(obj.cls)) if obj.cls is not None else []


def _class_handle_attributes(cls: Class) -> list[tuple[str, bool]]:
    out = _HANDLE_ATTRS.get(cls)
    if out is None:
        out = []
        for name, chain in cls.paths.items():
            a = chain[-1]
            if a.data_type == DataType.OBJECT_HANDLE and a.kind in ("value", "unique_list"):
                out.append((name, a.kind == "unique_list"))
        _HANDLE_ATTRS[cls] = out
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


def handle_refs(rec: Recording) -> dict[int, dict[str, list[Object]]]:
    """:func:`referenced` for every object-handle attribute of every object at once: object
    index → attribute name → referenced objects (attributes that reference nothing left out).

    Why: the vehicle graph of a 256-car fleet follows ~30,000 handle series; one
    :meth:`~pvdkit.recording.Recording.series` call each took 2.5 s from an ``.h5``. Here they
    are read in one :meth:`~pvdkit.recording.Recording.sample_blocks_of` and the first
    reference of each item, the handle → object resolution and the de-duplication are numpy
    operations over all of them (series stored unusually fall back to :func:`referenced`)."""
    ids = {p: i for i, p in enumerate(rec.data.paths)}
    n_paths = max(len(ids), 1)
    accept: dict[int, tuple[str, int]] = {}  # class handle × n_paths + path id → (name, family)
    for c in rec.classes_by_handle.values():
        for name, chain in c.paths.items():
            a = chain[-1]
            if a.data_type == DataType.OBJECT_HANDLE and a.kind in ("value", "unique_list"):
                pid = ids.get(tuple(x.handle for x in chain))
                if pid is not None:
                    accept.setdefault(c.handle * n_paths + pid, (name, int(a.kind == "unique_list")))
    st, ot = rec.series_table(), rec.data.objects
    if not accept or not len(st) or not len(ot):
        return {}
    keys = np.array(sorted(accept), np.int64)
    fam = np.array([accept[k][1] for k in keys.tolist()], np.int64)
    key = ot.cls[st.object].astype(np.int64) * n_paths + st.path
    j = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
    created = ot.cls[st.object] != 0  # class handle 0: an implicit object, of no class
    sids = np.flatnonzero((keys[j] == key) & (fam[j] == st.family) & (st.count > 0) & created)
    name_of = [accept[int(k)][0] for k in key[sids].tolist()]
    blocks = rec.sample_blocks_of(sids)
    out: dict[int, dict[str, list[Object]]] = {}

    # Items and frames of every series stored as 8-byte handles, series after series.
    parts = [(np.flatnonzero(blocks.block == b), b) for b in range(len(blocks.raw))
             if blocks.raw[b].shape[1] == 8]
    parts = [(ks, b) for ks, b in parts if len(ks)]
    for k in np.flatnonzero((blocks.block < 0) & (blocks.count > 0)).tolist():
        obj = rec.objects[int(st.object[sids[k]])]
        refs = referenced(rec, obj, name_of[k])
        if refs:
            out.setdefault(obj.index, {})[name_of[k]] = refs
    if not parts:
        return out
    owner = np.concatenate([np.repeat(ks, blocks.count[ks]) for ks, _ in parts])
    rows = [blocks.rows(ks) for ks, _ in parts]
    pairs = list(zip(parts, rows, strict=True))
    items = np.concatenate([blocks.raw[b][r].view("<u8")[:, 0] for (_, b), r in pairs])
    frames = np.concatenate([blocks.frames[b][r] for (_, b), r in pairs])
    # First occurrence of each item in each series, in order of occurrence.
    pos = np.arange(len(items))
    order = np.lexsort((pos, items, owner))
    so, si = owner[order], items[order]
    new = np.ones(len(order), bool)
    new[1:] = (so[1:] != so[:-1]) | (si[1:] != si[:-1])
    first = np.sort(order[new])
    first = first[items[first] != 0]
    # Handle → lifetime at the frame of first reference (one lifetime: a lookup; several:
    # Recording.resolve picks the one alive then).
    uh, inv, cnt = np.unique(ot.handle, return_inverse=True, return_counts=True)
    life = np.where(cnt[inv] == 1, np.arange(len(inv)), -2)
    single = np.full(len(uh), -1, np.int64)
    single[inv] = life
    h = items[first]
    jh = np.minimum(np.searchsorted(uh, h), len(uh) - 1)
    target = np.where(uh[jh] == h, single[jh], -1)
    for i in np.flatnonzero(target == -2).tolist():
        t = rec.resolve(int(h[i]), int(frames[first[i]]))
        target[i] = t.index if t is not None else -1
    own = owner[first]
    keep = (target >= 0) & (target != st.object[sids[own]])
    own, target = own[keep], target[keep]
    # Each object once per series, at its first reference.
    _, once = np.unique(own * len(rec.objects) + target, return_index=True)
    once = np.sort(once)
    objects = rec.objects
    for k, t in zip(own[once].tolist(), target[once].tolist(), strict=True):
        o = int(st.object[sids[k]])
        out.setdefault(o, {}).setdefault(name_of[k], []).append(objects[t])
    for o, by_name in out.items():  # attributes in class order, as handle_attributes lists them
        if len(by_name) > 1:
            out[o] = {n: by_name[n] for n, _ in handle_attributes(objects[o]) if n in by_name}
    return out


def _reachable(roots: Iterable[Object], depth: int, skip: set[int], cache: dict[int, list[Object]],
               refs: dict[int, dict[str, list[Object]]]) -> list[Object]:
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
            for t in _children(o, cache, refs):
                if t.index not in seen and t.index not in skip:
                    seen.add(t.index)
                    nxt.append(t)
        out.extend(nxt)
        frontier = nxt
    return out


def _children(obj: Object, cache: dict[int, list[Object]], refs: dict[int, dict[str, list[Object]]]
              ) -> list[Object]:
    """Objects ``obj`` references, attribute after attribute (``refs`` of :func:`handle_refs`
    keeps them in class order)."""
    kids = cache.get(obj.index)
    if kids is None:
        kids = [t for targets in refs.get(obj.index, {}).values() for t in targets]
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
    return _wheel_lists_of(obj.cls) if obj.cls is not None else []


def _wheel_lists_of(cls: Class) -> list[str]:
    return [n for n, is_list in _class_handle_attributes(cls) if is_list and "wheel" in n.lower()]


def is_vehicle(obj: Object) -> bool:
    """True for an object whose class has a unique list of object handles named like "wheel…"."""
    return bool(_wheel_lists(obj))


def find_vehicles(rec: Recording) -> list[Vehicle]:
    """Every vehicle of a recording with its wheels and parts (see the module docstring)."""
    cache: dict[int, list[Object]] = {}
    vehicle_classes = {c for c in rec.classes_by_handle.values() if _wheel_lists_of(c)}
    candidates = [o for o in rec.objects if o.cls in vehicle_classes] if vehicle_classes else []
    refs = handle_refs(rec) if candidates else {}
    vehicle_ids = {o.index for o in candidates}
    vehicles: list[Vehicle] = []
    claimed_by_wheels: set[int] = set()
    for vi, vobj in enumerate(candidates):
        mine = refs.get(vobj.index, {})
        lists = {name: list(mine.get(name, ())) for name in _wheel_lists(vobj)}
        main = max(lists, key=lambda n: (len(lists[n]), n == "wheelAttachmentSet"))
        n_wheels = len(lists[main])
        aligned = [n for n in lists if len(lists[n]) == n_wheels]
        aligned.sort(key=lambda n: n != main)
        roots_per_wheel = [[lists[n][i] for n in aligned] for i in range(n_wheels)]
        skip = vehicle_ids | {vobj.index}
        reach = [_reachable(roots, PART_DEPTH, skip, cache, refs) for roots in roots_per_wheel]
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
        mine = refs.get(v.obj.index, {})
        for name, _ in handle_attributes(v.obj):
            if name not in wl:
                roots.extend(mine.get(name, ()))
        skip = vehicle_ids | claimed_by_wheels
        reach_v.append(_reachable(roots, PART_DEPTH - 1, skip, cache, refs))
    counts = Counter(o.index for objs in reach_v for o in objs)
    for v, objs in zip(vehicles, reach_v, strict=True):
        v.parts = _by_class(o for o in objs if counts[o.index] == 1)

    names = [_vehicle_name(rec, v) for v in vehicles]
    dup = Counter(names)
    for v, n in zip(vehicles, names, strict=True):
        v.name = n if dup[n] == 1 else f"{n} #{v.index}"
    recorded = recorded_axes(rec)  # one frame description for the whole scene
    wheel_sources = [(w.part(c), a) for v in vehicles for w in v.wheels for c, a in WHEEL_POSITION_SOURCES]
    if recorded is None:
        wheel_sources += [(w.part("SuspensionParams"), "suspDir") for v in vehicles for w in v.wheels]
    with prefetched(rec, wheel_sources):
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
                s = series_of(rec, o, "name")
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
