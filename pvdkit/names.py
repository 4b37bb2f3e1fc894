"""Objects by name: vehicles and wheels, readable object paths, and ``--object`` look-ups.

Why: an object handle (a pointer in PhysX's recordings) says nothing to a person, and object
names repeat — a PhysX scene of four vehicles has four ``TireForce2`` objects and four objects
named ``Vehicle``. What a person knows is *which vehicle* (PhysX names each chassis actor after
its USD prim, ``/World/Basic``) and *which wheel*. This module is the one place that finds them
(the viewer and :mod:`pvdkit.analysis` build on it).

**Vehicles.** PhysX Vehicle2 records a vehicle as an object graph (PhysX ``VhOmniPvd``): a
``Vehicle`` object holds a unique list ``wheelAttachmentSet`` of ``WheelAttachment`` objects, one
per wheel, each pointing through object-handle attributes to that wheel's ``WheelParams``,
``TireForce`` … objects; vehicle-wide objects (rigid body, drivetrain, engine, the PhysX actor)
hang off the vehicle itself. Simpler producers list ``Vehicle.wheels``. The rule covers both: a
*vehicle* is an object whose class has a unique list of object handles named like "wheel…"; the
longest such list gives the wheels in order, other wheel lists of the same length
(``physxWheelAttachmentSet``) are matched to the wheels by position.

**Who owns what.** An object reachable (following object handles, at most :data:`PART_DEPTH`
hops) from exactly one wheel's list members is that wheel's; an object reachable from the
vehicle through its other attributes (one hop less), from no wheel and from no other vehicle is
the vehicle's. The walk reads every object-handle series of the recording at once
(:func:`handle_refs`): a 256-car fleet has ~28,000 objects and ~30,000 such series. It follows
the graph ``pvdkit diff``'s identities follow, read by the same one reader
(:func:`pvdkit.identity.handle_references`, kept per recording): list items added, every
element of an array of handles, each handle resolved to the lifetime alive at its sample.

**Paths.**

* a vehicle: its name — the name of its PhysX actor (``Vehicle.physxRigidActor`` →
  ``PhysXRigidActor.rigidActor`` → ``PxRigidDynamic.name``), else the ``Vehicle`` object's own
  name, else ``<class> 0x<handle>``; a name several vehicles share gets `` #<vehicle index>``;
* a wheel: ``/World/Basic/wheel 1`` (the ``WheelAttachment`` at position 1 of the vehicle's
  ``wheelAttachmentSet``); an object that belongs to that wheel:
  ``/World/Basic/wheel 1/TireForce`` (its class name);
* an object of the vehicle outside its wheels (rigid body, drivetrain, engine …, and its PhysX
  actor): ``/World/Standard/EngineState``;
* a class that occurs several times under one vehicle or wheel is numbered in object order,
  ``/World/Basic/BrakeResponseParams#1``;
* anything else: its identity label from ``pvdkit diff`` (:mod:`pvdkit.identity`,
  e.g. ``<PxPhysics>/shapes[0]``), computed only when such a path is asked for.

:meth:`ObjectNames.resolve` turns what a user types — a path, a ``pvdkit diff`` identity label,
an object name, a vehicle name or a handle — into objects, and refuses an ambiguous name with
the candidates' paths instead of picking one.

A :class:`~pvdkit.recording.LiveRecording` that grew new objects or series since the last call
is walked again (results are cached per recording and its size).
"""

from __future__ import annotations

import difflib
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Self, TypeVar

import numpy as np

from pvdkit.identity import HandleReferences, handle_references, object_identities
from pvdkit.index.tables import FAMILY_LIST, FAMILY_SET
from pvdkit.recording import Attribute, Class, Object, Recording, Series
from pvdkit.types import DataType, PvdError

__all__ = ["NORM", "PART_DEPTH", "POSE_ELEMENTS", "POSE_WIDTH", "AttributeSpec", "ObjectNames", "Vehicle",
           "VehicleInfo", "Wheel", "close_names", "element_name", "find_vehicles", "handle_attributes",
           "handle_refs", "is_pose", "names_of", "parse_element", "referenced", "resolve_spec",
           "short_name_matches", "split_element", "vehicle_named", "vehicles"]

#: Element selector of a vector's Euclidean length (``lngForce[norm]``).
NORM = "norm"
_AXES = ("x", "y", "z", "w")
#: OmniPVD writes a ``PxTransform`` (``globalPose``, ``localPose`` …) as 7 floats, rotation then
#: position: q.x q.y q.z q.w p.x p.y p.z. On such a pose ``[x]``/``[y]``/``[z]`` select the
#: position, ``[qx]`` … ``[qw]`` the rotation; it has no length.
POSE_WIDTH = 7
POSE_ELEMENTS = ("qx", "qy", "qz", "qw", "x", "y", "z")
_NORM_WORDS = ("norm", "|v|", "len", "length", "magnitude")
#: Candidates listed in an ambiguity error.
MAX_LISTED = 12
#: Close names suggested for a misspelt class or attribute.
MAX_SUGGESTIONS = 5
#: How many handle hops to follow from a wheel's list members (one less from the vehicle's
#: other attributes) when collecting the objects that belong to it.
PART_DEPTH = 3


@dataclass(eq=False)
class VehicleInfo:
    """One vehicle as discovered (:func:`find_vehicles`): its object, unique display name,
    drivetrain kind, PhysX actor (or None), its wheels — per wheel the objects of the vehicle's
    wheel lists (``wheel_lists``) at that position, the ``wheelAttachmentSet`` member first —
    and what belongs to it: ``parts`` the vehicle-level objects (the vehicle object itself
    excluded), ``wheel_parts`` per wheel that wheel's objects (its list members included), each
    in object order. No object is in two of these lists."""

    index: int
    obj: Object
    name: str
    kind: str
    actor: Object | None = None
    wheels: list[tuple[Object, ...]] = field(default_factory=list)
    wheel_lists: tuple[str, ...] = ()
    parts: list[Object] = field(default_factory=list)
    wheel_parts: list[list[Object]] = field(default_factory=list)

    @property
    def nb_wheels(self) -> int:
        return len(self.wheels)


# ============================================================================================
# Per-recording caches (a growing recording is walked again when it gained objects or series)
# ============================================================================================

_T = TypeVar("_T")
_VEHICLES: weakref.WeakKeyDictionary[Recording, tuple[tuple[int, int], list[VehicleInfo]]] = \
    weakref.WeakKeyDictionary()
_NAMES: weakref.WeakKeyDictionary[Recording, tuple[tuple[int, int], ObjectNames]] = \
    weakref.WeakKeyDictionary()
_PATH_IDS: weakref.WeakKeyDictionary[Recording, tuple[tuple[int, int], dict[tuple[int, ...], int]]] = \
    weakref.WeakKeyDictionary()


def _cached(store: weakref.WeakKeyDictionary[Recording, tuple[tuple[int, int], _T]], rec: Recording,
            build: Callable[[Recording], _T]) -> _T:
    """``build(rec)``, kept per recording until it has more objects or series (links between
    objects arrive as new series)."""
    size = (len(rec.objects), len(rec.series_table()))
    got = store.get(rec)
    if got is None or got[0] != size:
        got = store[rec] = (size, build(rec))
    return got[1]


# ============================================================================================
# The object-handle graph
# ============================================================================================

_HANDLE_ATTRS: weakref.WeakKeyDictionary[Class, list[tuple[str, bool]]] = weakref.WeakKeyDictionary()


def handle_attributes(obj: Object) -> list[tuple[str, bool]]:
    """Dotted names of an object's object-handle attributes (values and unique lists), each
    with True for unique lists, in class order (found once per class: a fleet asks for each of
    28,000 objects)."""
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
    """Every object an object-handle attribute of ``obj`` ever pointed at, in order of first
    reference (for a unique list: every item ever added; for an array of handles: sample by
    sample, element by element). Handles are resolved to the object alive at each sample's
    frame; null handles, handles that resolve to nothing and ``obj`` itself are skipped. Reads
    that one series (:func:`pvdkit.identity.handle_references`, as :func:`handle_refs`
    does for every attribute of every object at once)."""
    if obj.cls is None:
        return []
    chain = obj.cls.paths.get(attribute)
    if chain is None or (attribute, chain[-1].kind == "unique_list") not in _class_handle_attributes(obj.cls):
        return []
    pid = _path_ids(rec).get(tuple(a.handle for a in chain))
    if pid is None:
        return []
    family = FAMILY_LIST if chain[-1].kind == "unique_list" else FAMILY_SET
    sid = int(rec.series_ids(np.array([obj.index]), np.array([pid]), np.array([family]))[0])
    if sid < 0:
        return []
    refs = handle_references(rec, series=np.array([sid]))
    objects = rec.objects
    return [objects[t] for _, t in _first_references(refs, np.ones(len(refs.series), bool))]


def _path_ids(rec: Recording) -> dict[tuple[int, ...], int]:
    """Path id of each attribute path (handles) of the recording."""
    return _cached(_PATH_IDS, rec, lambda r: {p: i for i, p in enumerate(r.data.paths)})


def _first_references(refs: HandleReferences, entries: np.ndarray) -> list[tuple[int, int]]:
    """``(entry, target)`` for the series of the entries selected by the mask ``entries`` (the
    entry: the series' first, standing for it): per series each target once, the owner itself
    left out, in order of first reference (sample, then element of an array of handles); series
    in the order of ``refs``."""
    n = len(refs.series)
    if not n:
        return []
    change = np.ones(n, bool)
    change[1:] = refs.series[1:] != refs.series[:-1]  # a series' entries are adjacent
    group = np.cumsum(change) - 1
    head = np.flatnonzero(change)
    e = refs.entry
    keep = entries[e] & (refs.target != refs.object[e])
    g, target = group[e][keep], refs.target[keep]
    order = np.lexsort((refs.column[e][keep], refs.sample[keep], g))
    g, target = g[order], target[order]
    _, once = np.unique(g * (int(target.max(initial=0)) + 1) + target, return_index=True)
    once = np.sort(once)
    return list(zip(head[g[once]].tolist(), target[once].tolist(), strict=True))


def handle_refs(rec: Recording) -> dict[int, dict[str, list[Object]]]:
    """:func:`referenced` for every object-handle attribute of every object at once: object
    index → attribute name → referenced objects (attributes that reference nothing left out;
    attributes in class order, as :func:`handle_attributes` lists them).

    Why: the vehicle graph of a 256-car fleet follows ~30,000 handle series; one
    :meth:`~pvdkit.recording.Recording.series` call each took 2.5 s from an ``.h5``. They are
    read by the one reader of object-handle references that ``pvdkit diff``'s identities use too
    (:func:`pvdkit.identity.handle_references`: only these series, in one
    :meth:`~pvdkit.recording.Recording.sample_blocks_of`, resolved in numpy); here only the
    attributes of each object's class count, and implicit objects refer to nothing."""
    refs = handle_references(rec)
    ids = _path_ids(rec)
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
    if not accept or not len(refs.series):
        return {}
    keys = np.array(sorted(accept), np.int64)
    fam = np.array([accept[k][1] for k in keys.tolist()], np.int64)
    cls = ot.cls[refs.object].astype(np.int64)
    key = cls * n_paths + refs.path
    j = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
    ok = (keys[j] == key) & (fam[j] == st.family[refs.series]) & (cls != 0)  # 0: an implicit object
    objects = rec.objects
    out: dict[int, dict[str, list[Object]]] = {}
    for e, t in _first_references(refs, ok):
        o = int(refs.object[e])
        out.setdefault(o, {}).setdefault(accept[int(key[e])][0], []).append(objects[t])
    for o, by_name in out.items():  # attributes in class order
        if len(by_name) > 1:
            out[o] = {n: by_name[n] for n, _ in handle_attributes(objects[o]) if n in by_name}
    return out


def _reachable(roots: Iterable[Object], depth: int, skip: set[int],
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
            for targets in refs.get(o.index, {}).values():
                for t in targets:
                    if t.index not in seen and t.index not in skip:
                        seen.add(t.index)
                        nxt.append(t)
        out.extend(nxt)
        frontier = nxt
    return out


# ============================================================================================
# Vehicles
# ============================================================================================


def _wheel_lists(cls: Class) -> list[str]:
    """Unique lists of object handles named like "wheel…" (``wheelAttachmentSet``,
    ``physxWheelAttachmentSet``; a synthetic recording's ``wheels``): what makes a vehicle."""
    return [n for n, is_list in _class_handle_attributes(cls) if is_list and "wheel" in n.lower()]


def _first(refs: dict[str, list[Object]], attribute: str) -> Object | None:
    found = refs.get(attribute)
    return found[0] if found else None


def _text_value(rec: Recording, obj: Object | None, attribute: str) -> str:
    """The first non-empty recorded string of ``attribute`` ("" without one)."""
    if obj is None or obj.cls is None or attribute not in obj.cls.paths:
        return ""
    s = rec.series(obj, attribute)
    if isinstance(s, Series) and isinstance(s.values, list):
        return next((t for t in s.values if isinstance(t, str) and t), "")
    return ""


def _kind(vehicle: Object, refs: dict[int, dict[str, list[Object]]]) -> str:
    """Vehicle2's drivetrain of a vehicle: from the ``engineDrivetrain`` / ``directDrivetrain``
    links of its ``Vehicle`` object (a tank: an engine drive with a tank transmission command
    or differential; a raw drive: a direct drivetrain without commands); a vehicle of another
    class says its class (simcore's ``Motorcycle``)."""
    cls = vehicle.cls
    if cls is None:
        return "unknown"
    if not {"engineDrivetrain", "directDrivetrain"} & set(cls.paths):
        return "unknown" if cls.name == "Vehicle" else cls.name.lower()
    mine = refs.get(vehicle.index, {})
    engine = _first(mine, "engineDrivetrain")
    if engine is not None:
        links = refs.get(engine.index, {})
        parts = [_first(links, a) for a in ("transmissionCommandState", "differentialParams")]
        tank = any(p is not None and p.cls is not None and p.cls.name.startswith("Tank") for p in parts)
        return "tank drive" if tank else "engine drive"
    direct = _first(mine, "directDrivetrain")
    if direct is not None:
        # Without a command state nothing drives it but per-wheel torques set from outside
        # (PhysX's /World/Raw): what pvdkit replay calls a raw vehicle.
        commanded = _first(refs.get(direct.index, {}), "commandState") is not None
        return "direct drive" if commanded else "raw drive"
    return "no drivetrain"


def find_vehicles(rec: Recording) -> list[VehicleInfo]:
    """Every vehicle of a recording in order of creation, with name, kind, actor, wheels and the
    objects that belong to it and to each wheel (see the module docstring). Cached per
    recording (and walked again when a live recording gained objects or series)."""
    return _cached(_VEHICLES, rec, _find_vehicles)


def _find_vehicles(rec: Recording) -> list[VehicleInfo]:
    vehicle_classes = {c.handle for c in rec.classes_by_handle.values() if _wheel_lists(c)}
    candidates = [o for o in rec.objects if o.cls is not None and o.cls.handle in vehicle_classes] \
        if vehicle_classes else []
    refs = handle_refs(rec) if candidates else {}
    vehicle_ids = {o.index for o in candidates}
    out: list[VehicleInfo] = []
    claimed: set[int] = set()  # by some vehicle's wheel: the first vehicle's it stays
    for vobj in candidates:
        assert vobj.cls is not None
        mine = refs.get(vobj.index, {})
        lists = {name: list(mine.get(name, ())) for name in _wheel_lists(vobj.cls)}
        main = max(lists, key=lambda n: (len(lists[n]), n == "wheelAttachmentSet"))
        n_wheels = len(lists[main])
        aligned = [main] + [n for n in lists if n != main and len(lists[n]) == n_wheels]
        wheels = [tuple(lists[n][i] for n in aligned) for i in range(n_wheels)]
        skip = vehicle_ids | {vobj.index}
        reach = [_reachable(roots, PART_DEPTH, skip, refs) for roots in wheels]
        counts = Counter(o.index for objs in reach for o in objs)
        wheel_parts = []
        for objs in reach:
            own = sorted((o for o in objs if counts[o.index] == 1 and o.index not in claimed),
                         key=lambda o: o.index)
            wheel_parts.append(own)
        claimed.update(o.index for objs in wheel_parts for o in objs)
        link = _first(mine, "physxRigidActor")
        actor = _first(refs.get(link.index, {}), "rigidActor") if link is not None else None
        name = _text_value(rec, actor, "name") or vobj.name or f"{vobj.cls.name} 0x{vobj.handle:x}"
        out.append(VehicleInfo(len(out), vobj, name, _kind(vobj, refs), actor, wheels, tuple(aligned),
                               wheel_parts=wheel_parts))

    # Vehicle-level objects: reachable from the vehicle through its other attributes (one hop
    # less), from no wheel and from no other vehicle.
    reach_v: list[list[Object]] = []
    for v in out:
        assert v.obj.cls is not None
        wl = set(_wheel_lists(v.obj.cls))
        mine = refs.get(v.obj.index, {})
        roots = [t for name, _ in handle_attributes(v.obj) if name not in wl for t in mine.get(name, ())]
        reach_v.append(_reachable(roots, PART_DEPTH - 1, vehicle_ids | claimed, refs))
    counts = Counter(o.index for objs in reach_v for o in objs)
    for v, objs in zip(out, reach_v, strict=True):
        v.parts = sorted((o for o in objs if counts[o.index] == 1), key=lambda o: o.index)

    dup = Counter(v.name for v in out)
    for v in out:
        if dup[v.name] > 1:
            v.name = f"{v.name} #{v.index}"
    return out


class ObjectNames:
    """Paths of every object of a recording and ``--object`` look-ups (see the module docstring).

    Build with :func:`names_of` (cached per recording). Owners and the paths of vehicles' objects
    come from :func:`find_vehicles`; ``pvdkit diff``'s identities (the paths of other objects,
    :meth:`identity`, :meth:`resolve`) are computed on first use.
    """

    def __init__(self, rec: Recording) -> None:
        self.recording = rec
        self.vehicles = find_vehicles(rec)
        owner: list[tuple[int, int]] = [(-1, -1)] * len(rec.objects)  # (vehicle, wheel) or -1s
        for v in self.vehicles:
            for k, objs in enumerate(v.wheel_parts):
                for o in objs:
                    owner[o.index] = (v.index, k)
            for o in v.parts:
                owner[o.index] = (v.index, -1)
            owner[v.obj.index] = (v.index, -1)
        self._owner = owner
        self._own_paths: list[str | None] | None = None
        self._labels: list[str] | None = None
        self._vehicle_views: list[Vehicle] | None = None

    def _vehicle_paths(self) -> list[str | None]:
        """Paths of the objects that belong to a vehicle (None for the others): the vehicle,
        ``wheel k``, then class names, numbered in object order where they repeat."""
        if self._own_paths is None:
            rec = self.recording
            paths: list[str | None] = [None] * len(self._owner)
            groups: dict[tuple[int, int, str], list[int]] = {}
            for v in self.vehicles:
                paths[v.obj.index] = v.name
                for k, roots in enumerate(v.wheels):
                    if self._owner[roots[0].index] == (v.index, k):
                        paths[roots[0].index] = f"{v.name}/wheel {k}"
            for i, (vi, wk) in enumerate(self._owner):
                if vi >= 0 and paths[i] is None:
                    cls = rec.objects[i].cls
                    groups.setdefault((vi, wk, cls.name if cls is not None else "<implicit>"), []).append(i)
            for (vi, wk, cname), members in groups.items():
                base = self.vehicles[vi].name + (f"/wheel {wk}" if wk >= 0 else "")
                for j, i in enumerate(members):
                    paths[i] = f"{base}/{cname}" + (f"#{j}" if len(members) > 1 else "")
            self._own_paths = paths
        return self._own_paths

    def _identity_labels(self) -> list[str]:
        if self._labels is None:
            self._labels = [idt.label for idt in object_identities(self.recording)]
        return self._labels

    def path(self, obj: Object) -> str:
        """The readable path of an object (see the module docstring)."""
        own = self._vehicle_paths()[obj.index]
        return own if own is not None else self._identity_labels()[obj.index]

    def identity(self, obj: Object) -> str:
        """The object's identity label as ``pvdkit diff`` prints it."""
        return self._identity_labels()[obj.index]

    def owner(self, obj: Object) -> tuple[VehicleInfo | None, int | None]:
        """The vehicle an object belongs to and its wheel index (None outside every vehicle or
        wheel, and for objects a live recording received after these names were made)."""
        vi, wk = self._owner[obj.index] if obj.index < len(self._owner) else (-1, -1)
        return (self.vehicles[vi] if vi >= 0 else None), (wk if wk >= 0 else None)

    def _scope(self, obj: Object, cls: Class) -> list[Object]:
        """The objects of class ``cls`` that ``obj`` stands for: a vehicle → its objects of that
        class, a wheel (its attachment) → that wheel's, any other object → itself if it is one."""
        vi, wk = self._owner[obj.index]
        if vi >= 0:
            v = self.vehicles[vi]
            if obj is v.obj:
                return self.members(v, None, cls)
            if wk >= 0 and obj is v.wheels[wk][0]:
                return self.members(v, wk, cls)
        return [obj] if obj.cls is not None and obj.cls.is_a(cls) else []

    def _named(self, text: str) -> tuple[list[Object], list[str]]:
        """The objects ``text`` names, by the first rule that matches: a path, an identity
        label, an object name, a handle (its first lifetime); and every object's path."""
        rec = self.recording
        labels = self._identity_labels()
        own = self._vehicle_paths()
        paths = [p if p is not None else label for p, label in zip(own, labels, strict=True)]
        cands = [o for o in rec.objects if paths[o.index] == text]
        cands = cands or [o for o in rec.objects if labels[o.index] == text]
        cands = cands or [o for o in rec.objects if o.name == text]
        if not cands and "/" in text:  # a wheel by its side: sedan/rear-left[/TireForce]
            by_side = self._side_path(text)
            cands = [o for o in rec.objects if paths[o.index] == by_side] if by_side else []
        if not cands:  # a vehicle by its short name: Standard[/rear-left] for /World/Standard
            full = self._full_vehicle_path(text)
            if full is not None:
                found, paths = self._named(full)
                return found, paths
        if not cands:
            try:
                handle = int(text, 0)
            except ValueError:
                handle = None
            if handle is not None:
                try:
                    cands = [rec.find_object(handle)]  # a reused handle: its first lifetime
                except PvdError:
                    cands = []
        return cands, paths

    def _full_vehicle_path(self, text: str) -> str | None:
        """``text`` whose first part is the last part of one vehicle's name (``Standard/wheel 1``
        for ``/World/Standard``) with that name spelled out; None when no vehicle's name ends so.
        :class:`PvdError` when several do (PhysX names vehicles by their USD path)."""
        head, sep, tail = text.partition("/")
        if not head:
            return None
        names = [v.name for v in vehicles(self.recording)]
        hits = [names[i] for i in short_name_matches(head, names)]
        if len(hits) > 1:
            raise PvdError(f"{self.recording.source_name}: {head!r} is ambiguous: the vehicles "
                           f"{', '.join(map(repr, hits[:MAX_LISTED]))} end so; give the whole name")
        return hits[0] + sep + tail if hits else None

    def _side_path(self, text: str) -> str | None:
        """``text`` with a wheel's side after its vehicle's name (``sedan/rear-left/TireForce``)
        as the wheel's path (``sedan/wheel 3/TireForce``); None when it names no side.
        :class:`PvdError` when the vehicle has no wheel, or several, at that side."""
        for v in vehicles(self.recording):
            rest = text.removeprefix(f"{v.name}/")
            if rest == text:
                continue
            side, sep, tail = rest.partition("/")
            if side in SIDES:
                return v.wheel(side).path + sep + tail
        return None

    def _no_object(self, text: str) -> PvdError:
        found = vehicles(self.recording)
        head, sep, rest = text.rpartition("/wheel ")
        wheel = rest.partition("/")[0]
        if sep and head and wheel.isdigit():  # a wheel its vehicle does not have: say which it has
            try:
                full = self._full_vehicle_path(head)
            except PvdError:
                full = None
            for v in found:
                if v.name in (head, full):
                    has = f"its wheels are 0 … {len(v.wheels) - 1}" if v.wheels else "it has none"
                    return PvdError(f"{self.recording.source_name}: {v.name} has no wheel {wheel}: {has}")
        names = [v.name for v in found]
        listed = (f"; its vehicles: {', '.join(names[:MAX_LISTED])}{' …' if len(names) > MAX_LISTED else ''}"
                  if names else "")
        return PvdError(f"{self.recording.source_name}: no object {text!r} (give a path or name as "
                        "`pvdkit series` prints them, a vehicle name, a `pvdkit diff` label or a "
                        f"handle{listed})")

    def _ambiguous(self, text: str, objs: list[Object], paths: list[str]) -> PvdError:
        listed = ", ".join(f"{paths[o.index]!r} (0x{o.handle:x})" for o in objs[:MAX_LISTED])
        more = f" and {len(objs) - MAX_LISTED} more" if len(objs) > MAX_LISTED else ""
        return PvdError(f"{self.recording.source_name}: {text!r} is ambiguous: {len(objs)} objects match: "
                        f"{listed}{more}; give one of these paths")

    def find(self, text: str) -> Object:
        """The one object ``text`` names: a vehicle name (the vehicle object), a path, a ``pvdkit
        diff`` identity label, an object name or a handle. :class:`PvdError` when nothing
        matches, or when several objects do (listing their paths): never a silent first pick."""
        cands, paths = self._named(text)  # a vehicle's path is its name
        if not cands:
            raise self._no_object(text)
        if len(cands) > 1:
            raise self._ambiguous(text, cands, paths)
        return cands[0]

    def resolve(self, text: str, cls: Class) -> list[Object]:
        """The objects of class ``cls`` that ``text`` names: a path (:meth:`path`), a ``pvdkit
        diff`` identity label, an object name, or a handle (decimal or 0x…); a vehicle or wheel
        stands for its objects of that class. :class:`PvdError` when nothing matches, or when
        ``text`` matches several objects that each give some (the error lists their paths)."""
        rec = self.recording
        cands, paths = self._named(text)
        if not cands:
            raise self._no_object(text)
        hits = [(o, self._scope(o, cls)) for o in cands]
        hits = [(o, objs) for o, objs in hits if objs]
        if not hits:
            o = cands[0]
            what = o.cls.name if o.cls is not None else "never-created object"
            if len(cands) == 1:
                raise PvdError(f"{rec.source_name}: object {text!r} is {_a(what)}, not {_a(cls.name)}, and "
                               f"has no {cls.name} under it")
            raise PvdError(f"{rec.source_name}: none of the {len(cands)} objects named {text!r} is or "
                           f"holds {_a(cls.name)}")
        if len(hits) > 1:
            raise self._ambiguous(text, [o for o, _ in hits], paths)
        return hits[0][1]

    def members(self, vehicle: VehicleInfo, wheel: int | None = None,
                cls: Class | str | None = None) -> list[Object]:
        """The objects that belong to ``vehicle`` (the vehicle object and its wheels' objects
        included) or, with ``wheel``, to that wheel alone; only those of class ``cls`` (or
        derived) when given. Object order."""
        if wheel is not None:
            found = vehicle.wheel_parts[wheel]
        else:
            found = sorted([vehicle.obj, *vehicle.parts, *(o for objs in vehicle.wheel_parts for o in objs)],
                           key=lambda o: o.index)
        if cls is None:
            return list(found)
        return [o for o in found if o.cls is not None and o.cls.is_a(cls)]


@dataclass(eq=False)
class Wheel:
    """One wheel of a :class:`Vehicle`: its position in the vehicle's wheel list and the objects
    that belong to it (tire, suspension, wheel states …), so what ``pvdkit series`` prints as
    ``/World/Basic/wheel 1/…`` is this wheel's."""

    vehicle: Vehicle
    index: int
    attachment: Object

    def __repr__(self) -> str:
        return f"<Wheel {self.path!r}>"

    @property
    def path(self) -> str:
        """``/World/Basic/wheel 1``: the wheel's readable path (``--object`` takes it)."""
        return f"{self.vehicle.name}/wheel {self.index}"

    def objects(self, cls: Class | str | None = None) -> list[Object]:
        """This wheel's objects (of class ``cls`` or derived, when given), in object order."""
        return self.vehicle.names.members(self.vehicle.info, self.index, cls)

    def part(self, class_name: str) -> Object | None:
        """This wheel's first object of a class (exactly, else derived from it); None if it has
        none — also when the recording never registered that class."""
        objs = self.vehicle.info.wheel_parts[self.index]
        exact = next((o for o in objs if o.cls is not None and o.cls.name == class_name), None)
        return exact or next((o for o in objs if o.cls is not None and o.cls.is_a(class_name)), None)

    @property
    def side(self) -> str:
        """Where the wheel sits: ``front-left``, ``rear-right`` … (``left`` where all wheels share
        one axle; ``""`` when the recording does not tell): :mod:`pvdkit.wheels`. Which wheel is
        "wheel 3" depends on the vehicle description, so this is how to find the rear-left one."""
        return self.vehicle.sides[self.index]

    def object(self, cls: Class | str) -> Object:
        """This wheel's one object of class ``cls``; :class:`PvdError` when it has none or several."""
        return _one(self.objects(cls), cls, self.path)


@dataclass(eq=False)
class Vehicle:
    """A vehicle as a person thinks of it: a name (``/World/Basic``), a drivetrain kind, wheels
    in wheel-list order, and the objects that belong to it. A view of :class:`VehicleInfo` (the
    discovery, :func:`find_vehicles`) and :class:`ObjectNames` (who owns what). Build with
    :func:`vehicles`, or :meth:`of` (a subclass, with its own ``wheel_type``, adds what an
    application needs: the viewer's wheel labels and body axes)."""

    info: VehicleInfo
    names: ObjectNames = field(repr=False)
    wheels: list[Wheel] = field(default_factory=list, repr=False)
    _sides: list[str] | None = field(default=None, repr=False)

    #: The class of :attr:`wheels` that :meth:`of` builds.
    wheel_type: ClassVar[type[Wheel]] = Wheel

    @classmethod
    def of(cls, info: VehicleInfo, names: ObjectNames) -> Self:
        """The view of one discovered vehicle, with one ``wheel_type`` per wheel."""
        v = cls(info, names)
        v.wheels = [cls.wheel_type(v, k, roots[0]) for k, roots in enumerate(info.wheels)]
        return v

    def __repr__(self) -> str:
        return f"<Vehicle {self.name!r} {self.kind}, {len(self.wheels)} wheels>"

    @property
    def index(self) -> int:
        """Position among the recording's vehicles (creation order)."""
        return self.info.index

    @property
    def name(self) -> str:
        """Unique display name (the PhysX actor's name, e.g. ``/World/Basic``)."""
        return self.info.name

    @property
    def kind(self) -> str:
        """Drivetrain: ``"direct drive"``, ``"engine drive"``, ``"tank drive"`` …"""
        return self.info.kind

    @property
    def object(self) -> Object:
        """The ``Vehicle`` object itself."""
        return self.info.obj

    @property
    def actor(self) -> Object | None:
        """The PhysX rigid actor the vehicle drives (None without the PhysX layer)."""
        return self.info.actor

    def objects(self, cls: Class | str | None = None, *, wheels: bool = True) -> list[Object]:
        """The vehicle's objects (of class ``cls`` or derived, when given), its wheels' objects
        too unless ``wheels`` is False, in object order."""
        found = self.names.members(self.info, None, cls)
        if wheels:
            return found
        return [o for o in found if self.names.owner(o)[1] is None]

    def object_of(self, cls: Class | str) -> Object:
        """The vehicle-level object of class ``cls`` (``EngineState``); :class:`PvdError` when
        it has none or several outside its wheels."""
        return _one(self.objects(cls, wheels=False), cls, self.name)

    @property
    def sides(self) -> list[str]:
        """Each wheel's :attr:`Wheel.side`, worked out once (on first use: the names layer itself
        does not read positions)."""
        if self._sides is None:
            from pvdkit import wheels as w

            rec = self.names.recording
            positions = [w.wheel_position(rec, wheel.part) for wheel in self.wheels]
            parts = [wheel.part for wheel in self.wheels]
            axes = w.recorded_axes(rec) or w.body_axes(rec, parts, positions)
            self._sides = w.wheel_sides(positions, axes)
        return self._sides

    def wheel(self, side: str) -> Wheel:
        """The wheel at ``side`` (``"rear-left"``); :class:`PvdError` listing the sides otherwise."""
        found = [wh for wh in self.wheels if wh.side == side]
        if len(found) != 1:
            listed = ", ".join(f"wheel {wh.index}: {wh.side or '?'}" for wh in self.wheels)
            how_many = "no" if not found else "more than one"
            raise PvdError(f"{self.name}: {how_many} wheel at {side!r} ({listed})")
        return found[0]


#: The sides a wheel can have (:attr:`Wheel.side`), as ``--object VEHICLE/SIDE`` takes them.
SIDES = frozenset(f"{a}-{b}" for a in ("front", "rear") for b in ("left", "right")) | {
    "front", "rear", "left", "right"}


def _one(found: list[Object], cls: Class | str, where: str) -> Object:
    name = cls if isinstance(cls, str) else cls.name
    if len(found) != 1:
        what = "no" if not found else f"{len(found)}"
        raise PvdError(f"{where} has {what} {name} object{'s' if len(found) != 1 else ''}; expected one")
    return found[0]


def vehicles(rec: Recording) -> list[Vehicle]:
    """The recording's vehicles as :class:`Vehicle` objects, with :class:`Wheel` s (built once per
    recording)."""
    names = names_of(rec)
    if names._vehicle_views is None:
        names._vehicle_views = [Vehicle.of(info, names) for info in names.vehicles]
    return list(names._vehicle_views)


def find_vehicle(rec: Recording, name: str) -> Vehicle:
    """The vehicle ``name`` names: its whole name, or the last part of one vehicle's name
    (:func:`vehicle_named`). :class:`PvdError` naming the recording's vehicles otherwise."""
    found = vehicles(rec)
    names = [v.name for v in found]
    i = vehicle_named(name, names)
    if i is not None:
        return found[i]
    listed = ", ".join(names[:MAX_LISTED]) + (" …" if len(names) > MAX_LISTED else "") or "none"
    hits = [names[k] for k in short_name_matches(name, names)]
    if len(hits) > 1:
        raise PvdError(f"{rec.source_name}: vehicle {name!r} is ambiguous: {', '.join(hits[:MAX_LISTED])} "
                       "end so; give the whole name")
    raise PvdError(f"{rec.source_name}: no vehicle {name!r} (its vehicles: {listed})")


def names_of(rec: Recording) -> ObjectNames:
    """The :class:`ObjectNames` of a recording (built once per recording, again when a live
    recording gained objects or series)."""
    return _cached(_NAMES, rec, ObjectNames)


# ============================================================================================
# Element selectors
# ============================================================================================


def short_name_matches(short: str, names: Sequence[str]) -> list[int]:
    """Positions of the ``names`` whose last path part is ``short`` and which are not ``short``
    itself: ``Tank`` for ``/World/Tank`` (PhysX names vehicles by their USD path). One rule for
    ``--object``, ``object=`` and ``pvdkit replay --vehicle``; one hit is a match, several are
    ambiguous."""
    return [i for i, n in enumerate(names) if n != short and n.rsplit("/", 1)[-1] == short]


def vehicle_named(name: str, names: Sequence[str]) -> int | None:
    """The position of vehicle ``name`` among vehicle ``names``: the name itself, else the one
    name whose last path part it is (:func:`short_name_matches`); None when there is none, or
    several."""
    if name in names:
        return list(names).index(name)
    short = short_name_matches(name, names)
    return short[0] if len(short) == 1 else None


def is_pose(attribute: Attribute) -> bool:
    """True for a 7-float value: a ``PxTransform`` as OmniPVD writes it (see :data:`POSE_WIDTH`)."""
    return attribute.count == POSE_WIDTH and attribute.data_type in (DataType.FLOAT32, DataType.FLOAT64)


def parse_element(text: str, width: int = 0, *, pose: bool = False, what: str = "") -> int | str | None:
    """An element selector: ``"x"``/``"y"``/``"z"``/``"w"`` → 0–3, ``"2"`` → 2, ``"norm"`` (or
    ``"|v|"``) → :data:`NORM`, ``""`` → None. On a ``pose`` (a PxTransform) ``x``/``y``/``z``
    are its position (4–6) and ``qx`` … ``qw`` its rotation (0–3). ``width``: the elements of
    the value when fixed (0: unknown or variable). :class:`PvdError` naming ``what`` and the
    selector typed otherwise."""
    t = text.strip().strip("[]").strip().lower()
    head = f"{what}[{text.strip().strip('[]')}]: " if what else f"element {text!r}: "
    if not t:
        return None
    if pose:
        if t in _NORM_WORDS:
            raise PvdError(f"{head}a pose (PxTransform: q.x q.y q.z q.w p.x p.y p.z) has no length; "
                           "select [x], [y] or [z] (its position) or [qx] … [qw] (its rotation)")
        if t in POSE_ELEMENTS:
            return POSE_ELEMENTS.index(t)
        if t == "w":
            raise PvdError(f"{head}a pose's rotation is [qx] … [qw]; [x], [y], [z] are its position")
    elif t in _NORM_WORDS:
        return NORM
    elif t in _AXES:
        i = _AXES.index(t)
        if 0 < width <= i:
            names = ", ".join(_AXES[:width]) if width <= len(_AXES) else f"0 … {width - 1}"
            raise PvdError(f"{head}it has {width} element{'s' if width > 1 else ''} ({names})")
        return i
    if t.isdigit():
        i = int(t)
        if 0 < width <= i:
            raise PvdError(f"{head}it has {width} element{'s' if width > 1 else ''}; element {i} is "
                           "out of range")
        return i
    expected = "x, y, z (position), qx … qw (rotation) or an element index" if pose else \
        "x, y, z, w, an element index or norm"
    raise PvdError(f"{head}expected {expected}")


def element_name(i: int, width: int) -> str:
    """Element ``i`` of a ``width``-element value as a selector names it: ``x``/``y``/``z``/``w``
    in vectors of up to 4 elements, a pose's ``qx`` … ``qw`` and ``x``/``y``/``z``, else the index."""
    if width == POSE_WIDTH:
        return POSE_ELEMENTS[i]
    return _AXES[i] if width <= len(_AXES) and i < len(_AXES) else str(i)


def element_title(attr: str, element: int | str, width: int) -> str:
    """The column title of a selected element, one spelling for the CLI and the tables:
    ``lngForce[z]``, ``globalPose[qw]`` and ``globalPose[z]`` (a pose's rotation and
    position), ``rest[5]``, ``|lngForce|``."""
    if element == NORM:
        return f"|{attr}|"
    return f"{attr}[{element_name(int(element), width)}]"


def check_element(what: str, element: int, width: int) -> None:
    """:class:`PvdError` naming ``what`` when ``element`` is past a ``width``-element value."""
    if element >= max(width, 1):
        raise PvdError(f"{what} has {max(width, 1)} element{'s' if width > 1 else ''}; "
                       f"element {element} is out of range")


def split_element(spec: str) -> tuple[str, str | None]:
    """``"TireForce.lngForce[z]"`` → ``("TireForce.lngForce", "z")``: the selector as typed (read
    by :func:`parse_element` once the attribute is known); no brackets → None."""
    s = spec.strip()
    if s.endswith("]") and "[" in s:
        head, _, sel = s[:-1].rpartition("[")
        return head, sel
    return s, None


# ============================================================================================
# Attribute specs: "CLASS.ATTRIBUTE[ELEMENT]"
# ============================================================================================


@dataclass(frozen=True)
class AttributeSpec:
    """``Class.attribute[element]`` resolved against one recording: the one reading of what
    ``pvdkit series``, :func:`pvdkit.analysis.dataframe` and the viewer's plots are asked for."""

    text: str
    cls: Class
    #: The attribute's dotted path in ``cls`` (``lngForce``, ``pose.position.xyz``).
    attr: str
    #: The attribute handles from ``cls`` down to the value (``chain[-1]`` holds the value).
    chain: tuple[Attribute, ...]
    element: int | str | None

    @property
    def leaf(self) -> Attribute:
        return self.chain[-1]


def close_names(word: str, candidates: Iterable[str]) -> list[str]:
    """Candidates that look like ``word``, case-insensitive equality first (at most
    :data:`MAX_SUGGESTIONS`)."""
    pool = sorted(candidates)
    lower = {c.lower(): c for c in pool}
    same = [lower[word.lower()]] if word.lower() in lower else []
    near = difflib.get_close_matches(word, pool, n=MAX_SUGGESTIONS, cutoff=0.6)
    return list(dict.fromkeys(same + near))[:MAX_SUGGESTIONS]


def resolve_spec(rec: Recording, text: str) -> AttributeSpec:
    """Parse ``Class.attribute[element]`` against ``rec``: the class is the longest dotted
    prefix that names one, the rest its attribute path. :class:`PvdError` naming the recording,
    with close names when the class or attribute is misspelt, or the classes holding the
    attribute when the class is left out."""
    base, selector = split_element(text)
    parts = base.split(".")
    for i in range(len(parts) - 1, 0, -1):
        cls = rec.classes.get(".".join(parts[:i]))
        if cls is not None:
            attr = ".".join(parts[i:])
            break
    else:
        if "." not in base:
            owners = sorted(f"{c.name}.{base}" for c in rec.classes.values() if base in c.paths)
            hint = f"; did you mean {', '.join(owners[:MAX_SUGGESTIONS])}?" if owners else ""
            raise PvdError(f"{rec.source_name}: expected CLASS.ATTRIBUTE, got {text!r}{hint}")
        close = close_names(parts[0], rec.classes)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise PvdError(f"{rec.source_name}: no class {parts[0]!r} (in {text!r}){hint}")
    chain = cls.paths.get(attr)
    if chain is None:
        close = close_names(attr, cls.paths)
        known = sorted(cls.paths)
        hint = (f"did you mean {', '.join(close)}?" if close else
                f"it has: {', '.join(known[:MAX_LISTED])}{' …' if len(known) > MAX_LISTED else ''}" if known
                else "it has no attributes")
        raise PvdError(f"{rec.source_name}: class {cls.name} has no attribute {attr!r}; {hint}")
    leaf = chain[-1]
    element = None if selector is None else parse_element(
        selector, leaf.count, pose=is_pose(leaf), what=f"{rec.source_name}: {cls.name}.{attr}")
    return AttributeSpec(text, cls, attr, tuple(chain), element)


def _a(noun: str) -> str:
    """``noun`` with its indefinite article, as a class name is read: an EngineState, a Vehicle."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"
