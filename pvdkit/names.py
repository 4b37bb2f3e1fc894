"""Objects by name: vehicles and wheels, readable object paths, and ``--object`` look-ups.

Why: an object handle (a pointer in PhysX's recordings) says nothing to a person, and object
names repeat — a PhysX scene of four vehicles has four ``TireForce2`` objects and four objects
named ``Vehicle``. What a person knows is *which vehicle* (PhysX names each chassis actor after
its USD prim, ``/World/Basic``) and *which wheel*. So every object gets a **path**:

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
* anything else: its identity label from ``pvdkit diff`` (:mod:`pvdkit.diff.identity`,
  e.g. ``<PxPhysics>/shapes[0]``).

"Belongs to" follows the object graph of ``pvdkit diff``'s identities (the shortest chain of
object-handle references from a root): an object belongs to the first wheel attachment or
vehicle on its chain. :meth:`ObjectNames.resolve` turns what a user types — a path, a ``pvdkit
diff`` identity label, an object name, a vehicle name or a handle — into objects, and refuses an
ambiguous name with the candidates' paths instead of picking one.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from pvdkit.diff.identity import object_identities
from pvdkit.recording import Class, ListSeries, Object, Recording, Series
from pvdkit.types import DataType, PvdError

__all__ = ["NORM", "ObjectNames", "Vehicle", "VehicleInfo", "Wheel", "find_vehicles", "names_of",
           "parse_element", "split_element", "vehicles"]

#: Element selector of a vector's Euclidean length (``lngForce[norm]``).
NORM = "norm"
_AXES = ("x", "y", "z", "w")
#: Candidates listed in an ambiguity error.
MAX_LISTED = 12


@dataclass(eq=False)
class VehicleInfo:
    """One vehicle: its object, unique display name, drivetrain kind, PhysX actor (or None) and
    its wheels — per wheel the objects of the vehicle's wheel lists at that position, the
    ``wheelAttachmentSet`` member first."""

    index: int
    obj: Object
    name: str
    kind: str
    actor: Object | None = None
    wheels: list[tuple[Object, ...]] = field(default_factory=list)

    @property
    def nb_wheels(self) -> int:
        return len(self.wheels)


_VEHICLES: weakref.WeakKeyDictionary[Recording, list[VehicleInfo]] = weakref.WeakKeyDictionary()
_NAMES: weakref.WeakKeyDictionary[Recording, ObjectNames] = weakref.WeakKeyDictionary()


def _wheel_lists(cls: Class) -> list[str]:
    """Unique lists of object handles named like "wheel…" (``wheelAttachmentSet``,
    ``physxWheelAttachmentSet``; a synthetic recording's ``wheels``): what makes a vehicle."""
    return [name for name, chain in cls.paths.items()
            if chain[-1].kind == "unique_list" and chain[-1].data_type == DataType.OBJECT_HANDLE
            and "wheel" in name.lower()]


def _targets(rec: Recording, obj: Object, attribute: str) -> list[Object]:
    """Objects an object-handle attribute (or unique list) of ``obj`` referred to, in order of
    first reference; null and dangling handles skipped."""
    if obj.cls is None or attribute not in obj.cls.paths:
        return []
    s = rec.series(obj, attribute)
    if isinstance(s, ListSeries):
        items, frames = s.items, s.frames
    else:
        items, frames = s.raw, s.frames
    if not isinstance(items, np.ndarray) or items.ndim != 1 or not len(items):
        return []
    out: list[Object] = []
    seen: set[int] = set()
    for h, f in zip(items.tolist(), frames.tolist(), strict=True):
        if h == 0:
            continue
        t = rec.resolve(int(h), int(f))
        if t is not None and t.index not in seen:
            seen.add(t.index)
            out.append(t)
    return out


def _first(rec: Recording, obj: Object | None, attribute: str) -> Object | None:
    if obj is None:
        return None
    found = _targets(rec, obj, attribute)
    return found[0] if found else None


def _text_value(rec: Recording, obj: Object | None, attribute: str) -> str:
    """The first non-empty recorded string of ``attribute`` ("" without one)."""
    if obj is None or obj.cls is None or attribute not in obj.cls.paths:
        return ""
    s = rec.series(obj, attribute)
    if isinstance(s, Series) and isinstance(s.values, list):
        return next((t for t in s.values if isinstance(t, str) and t), "")
    return ""


def _kind(rec: Recording, vehicle: Object) -> str:
    """Vehicle2's drivetrain of a vehicle: from the ``engineDrivetrain`` / ``directDrivetrain``
    links of its ``Vehicle`` object (a tank: an engine drive with a tank transmission command
    or differential)."""
    cls = vehicle.cls
    if cls is None or not {"engineDrivetrain", "directDrivetrain"} & set(cls.paths):
        return "unknown"
    engine = _first(rec, vehicle, "engineDrivetrain")
    if engine is not None:
        parts = [_first(rec, engine, a) for a in ("transmissionCommandState", "differentialParams")]
        tank = any(p is not None and p.cls is not None and p.cls.name.startswith("Tank") for p in parts)
        return "tank drive" if tank else "engine drive"
    if _first(rec, vehicle, "directDrivetrain") is not None:
        return "direct drive"
    return "no drivetrain"


def find_vehicles(rec: Recording) -> list[VehicleInfo]:
    """Every vehicle of a recording in order of creation: objects whose class has a unique list of
    object handles named like "wheel…" (Vehicle2's ``Vehicle``), with name, kind, actor and
    wheels (see the module docstring). Cheap: a few series per vehicle; cached per recording."""
    found = _VEHICLES.get(rec)
    if found is not None:
        return found
    lists_of = {c.handle: _wheel_lists(c) for c in rec.classes_by_handle.values()}
    out: list[VehicleInfo] = []
    for o in rec.objects:
        lists = lists_of.get(o.cls.handle) if o.cls is not None else None
        if not lists:
            continue
        members = {name: _targets(rec, o, name) for name in lists}
        main = max(members, key=lambda n: (len(members[n]), n == "wheelAttachmentSet"))
        n = len(members[main])
        aligned = [main] + [m for m in members if m != main and len(members[m]) == n]
        wheels = [tuple(members[m][i] for m in aligned) for i in range(n)]
        actor = _first(rec, _first(rec, o, "physxRigidActor"), "rigidActor")
        name = _text_value(rec, actor, "name") or o.name or f"{o.cls.name} 0x{o.handle:x}"
        out.append(VehicleInfo(len(out), o, name, _kind(rec, o), actor, wheels))
    counts: dict[str, int] = {}
    for v in out:
        counts[v.name] = counts.get(v.name, 0) + 1
    for v in out:
        if counts[v.name] > 1:
            v.name = f"{v.name} #{v.index}"
    _VEHICLES[rec] = out
    return out


class ObjectNames:
    """Paths of every object of a recording and ``--object`` look-ups (see the module docstring).

    Build with :func:`names_of` (cached per recording). The object graph is walked on first use
    of :meth:`path` / :meth:`resolve` (about 0.15 s for PhysX's 528-object scene).
    """

    def __init__(self, rec: Recording) -> None:
        self.recording = rec
        self.vehicles = find_vehicles(rec)
        self._paths: list[str] | None = None
        self._labels: list[str] = []
        self._owner: list[tuple[int, int]] = []  # (vehicle index, wheel index) or -1s
        self._vehicle_views: list[Vehicle] | None = None

    def _build(self) -> None:
        rec = self.recording
        ids = object_identities(rec)
        index_of = {idt.key: i for i, idt in enumerate(ids)}
        parent = [index_of.get(idt.key[2], -1) if idt.key[2] is not None else -1 for idt in ids]
        n = len(ids)
        marks: dict[int, tuple[int, int]] = {}  # vehicles, wheel roots and actors: owner
        wheel_root: dict[int, bool] = {}  # wheel roots: True for the main list's member
        for v in self.vehicles:
            for k, roots in enumerate(v.wheels):
                for j, r in enumerate(roots):
                    marks.setdefault(r.index, (v.index, k))
                    wheel_root.setdefault(r.index, j == 0)
            if v.actor is not None:
                marks.setdefault(v.actor.index, (v.index, -1))
            marks[v.obj.index] = (v.index, -1)
        owner: list[tuple[int, int]] = [(-1, -1)] * n
        for i in range(n):
            p, hops = i, 0
            while p >= 0 and hops <= n:
                if p in marks:
                    owner[i] = marks[p]
                    break
                p, hops = parent[p], hops + 1
        # Paths: the vehicle, "wheel k", then class names (numbered where they repeat).
        paths = [idt.label for idt in ids]
        groups: dict[tuple[int, int, str], list[int]] = {}
        for i, (vi, wk) in enumerate(owner):
            if vi < 0:
                continue
            v = self.vehicles[vi]
            if i == v.obj.index:
                paths[i] = v.name
            elif wheel_root.get(i) and marks.get(i) == (vi, wk):
                paths[i] = f"{v.name}/wheel {wk}"
            else:
                cls = rec.objects[i].cls
                groups.setdefault((vi, wk, cls.name if cls is not None else "<implicit>"), []).append(i)
        for (vi, wk, cname), members in groups.items():
            base = self.vehicles[vi].name + (f"/wheel {wk}" if wk >= 0 else "")
            for j, i in enumerate(members):
                paths[i] = f"{base}/{cname}" + (f"#{j}" if len(members) > 1 else "")
        self._paths, self._labels, self._owner = paths, [idt.label for idt in ids], owner

    def path(self, obj: Object) -> str:
        """The readable path of an object (see the module docstring)."""
        if self._paths is None:
            self._build()
        assert self._paths is not None
        return self._paths[obj.index]

    def identity(self, obj: Object) -> str:
        """The object's identity label as ``pvdkit diff`` prints it."""
        if self._paths is None:
            self._build()
        return self._labels[obj.index]

    def owner(self, obj: Object) -> tuple[VehicleInfo | None, int | None]:
        """The vehicle an object belongs to and its wheel index (None outside every vehicle or wheel)."""
        if self._paths is None:
            self._build()
        vi, wk = self._owner[obj.index]
        return (self.vehicles[vi] if vi >= 0 else None), (wk if wk >= 0 else None)

    def _scope(self, obj: Object, cls: Class) -> list[Object]:
        """The objects of class ``cls`` that ``obj`` stands for: a vehicle → its objects of that
        class, a wheel (its attachment) → that wheel's, any other object → itself if it is one."""
        vi, wk = self._owner[obj.index]
        whole_vehicle = vi >= 0 and obj is self.vehicles[vi].obj
        whole_wheel = vi >= 0 and wk >= 0 and self._paths is not None and \
            self._paths[obj.index] == f"{self.vehicles[vi].name}/wheel {wk}"
        if whole_vehicle or whole_wheel:
            rec = self.recording
            return [o for o, (v, w) in zip(rec.objects, self._owner, strict=True)
                    if v == vi and (whole_vehicle or w == wk) and o.cls is not None and o.cls.is_a(cls)]
        return [obj] if obj.cls is not None and obj.cls.is_a(cls) else []

    def resolve(self, text: str, cls: Class) -> list[Object]:
        """The objects of class ``cls`` that ``text`` names: a path (:meth:`path`), a ``pvdkit
        diff`` identity label, an object name, or a handle (decimal or 0x…); a vehicle or wheel
        stands for its objects of that class. :class:`PvdError` when nothing matches, or when
        ``text`` matches several objects that each give some (the error lists their paths)."""
        if self._paths is None:
            self._build()
        assert self._paths is not None
        rec = self.recording
        cands = [o for o in rec.objects if self._paths[o.index] == text]
        cands = cands or [o for o in rec.objects if self._labels[o.index] == text]
        cands = cands or [o for o in rec.objects if o.name == text]
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
        if not cands:
            raise PvdError(f"{rec.source_name}: no object {text!r} (give a path or name as `pvdkit series` "
                           "prints them, a vehicle name, a `pvdkit diff` label or a handle)")
        hits = [(o, self._scope(o, cls)) for o in cands]
        hits = [(o, objs) for o, objs in hits if objs]
        if not hits:
            o = cands[0]
            what = o.cls.name if o.cls is not None else "never-created object"
            if len(cands) == 1:
                raise PvdError(f"{rec.source_name}: object {text!r} is a {what}, not a {cls.name}, and has "
                               f"no {cls.name} under it")
            raise PvdError(f"{rec.source_name}: none of the {len(cands)} objects named {text!r} is or "
                           f"holds a {cls.name}")
        if len(hits) > 1:
            listed = ", ".join(f"{self._paths[o.index]!r} (0x{o.handle:x})" for o, _ in hits[:MAX_LISTED])
            more = f" and {len(hits) - MAX_LISTED} more" if len(hits) > MAX_LISTED else ""
            raise PvdError(f"{rec.source_name}: {text!r} is ambiguous: {len(hits)} objects match: "
                           f"{listed}{more}; give one of these paths")
        return hits[0][1]


    def members(self, vehicle: VehicleInfo, wheel: int | None = None,
                cls: Class | str | None = None) -> list[Object]:
        """The objects that belong to ``vehicle`` (its wheels' included) or, with ``wheel``, to
        that wheel alone; only those of class ``cls`` (or derived) when given. Object order."""
        if self._paths is None:
            self._build()
        rec = self.recording
        return [o for o, (v, w) in zip(rec.objects, self._owner, strict=True)
                if v == vehicle.index and (wheel is None or w == wheel)
                and (cls is None or (o.cls is not None and o.cls.is_a(cls)))]


@dataclass(eq=False)
class Wheel:
    """One wheel of a :class:`Vehicle`: its position in the vehicle's wheel list and the objects
    that belong to it (tire, suspension, wheel states …), found as :class:`ObjectNames` finds
    them, so what ``pvdkit series`` prints as ``/World/Basic/wheel 1/…`` is this wheel's."""

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

    def object(self, cls: Class | str) -> Object:
        """This wheel's one object of class ``cls``; :class:`PvdError` when it has none or several."""
        return _one(self.objects(cls), cls, self.path)


@dataclass(eq=False)
class Vehicle:
    """A vehicle as a person thinks of it: a name (``/World/Basic``), a drivetrain kind, wheels
    in wheel-list order, and the objects that belong to it. A view of :class:`VehicleInfo` (the
    discovery, :func:`find_vehicles`) and :class:`ObjectNames` (who owns what)."""

    info: VehicleInfo
    names: ObjectNames = field(repr=False)
    wheels: list[Wheel] = field(default_factory=list, repr=False)

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


def _one(found: list[Object], cls: Class | str, where: str) -> Object:
    name = cls if isinstance(cls, str) else cls.name
    if len(found) != 1:
        what = "no" if not found else f"{len(found)}"
        raise PvdError(f"{where} has {what} {name} object{'s' if len(found) != 1 else ''}; expected one")
    return found[0]


def vehicles(rec: Recording) -> list[Vehicle]:
    """The recording's vehicles as :class:`Vehicle` objects, with :class:`Wheel` s (built once per
    recording; the object graph is walked on first use of a vehicle's objects)."""
    names = names_of(rec)
    if names._vehicle_views is None:
        out = []
        for info in names.vehicles:
            v = Vehicle(info, names)
            v.wheels = [Wheel(v, k, roots[0]) for k, roots in enumerate(info.wheels)]
            out.append(v)
        names._vehicle_views = out
    return list(names._vehicle_views)


def names_of(rec: Recording) -> ObjectNames:
    """The :class:`ObjectNames` of a recording (built once per recording)."""
    names = _NAMES.get(rec)
    if names is None:
        names = _NAMES[rec] = ObjectNames(rec)
    return names


# ============================================================================================
# Element selectors
# ============================================================================================


def parse_element(text: str) -> int | str | None:
    """An element selector as the viewer takes it: ``"x"``/``"y"``/``"z"``/``"w"`` → 0–3,
    ``"2"`` → 2, ``"norm"`` (or ``"|v|"``) → :data:`NORM`, ``""`` → None; :class:`PvdError`
    otherwise."""
    t = text.strip().strip("[]").strip().lower()
    if not t:
        return None
    if t in ("norm", "|v|", "len", "length", "magnitude"):
        return NORM
    if t in _AXES:
        return _AXES.index(t)
    if t.isdigit():
        return int(t)
    raise PvdError(f"element {text!r}: expected x, y, z, w, an element index or norm")


def element_title(attr: str, element: int | str, width: int) -> str:
    """The column title of a selected element, one spelling for the CLI and the tables:
    ``lngForce[z]`` (x/y/z/w for vectors of up to 4 elements), ``rest[5]``, ``|lngForce|``."""
    if element == NORM:
        return f"|{attr}|"
    i = int(element)
    return f"{attr}[{'xyzw'[i]}]" if width <= 4 and i < 4 else f"{attr}[{i}]"


def check_element(what: str, element: int, width: int) -> None:
    """:class:`PvdError` naming ``what`` when ``element`` is past a ``width``-element value."""
    if element >= max(width, 1):
        raise PvdError(f"{what} has {max(width, 1)} element{'s' if width > 1 else ''}; "
                       f"element {element} is out of range")


def split_element(spec: str) -> tuple[str, int | str | None]:
    """``"TireForce.lngForce[z]"`` → ``("TireForce.lngForce", 2)``; no brackets → element None."""
    s = spec.strip()
    if s.endswith("]") and "[" in s:
        head, _, sel = s[:-1].rpartition("[")
        return head, parse_element(sel)
    return s, None
