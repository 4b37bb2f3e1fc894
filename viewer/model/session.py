"""One open recording and everything the viewer derives from it once.

Opening is the only slow step (tokenizing and indexing the file, walking the vehicle graph), so
:meth:`RecordingSession.open` reports progress through a callback and is meant to run on a worker
thread; afterwards every query is a binary search or a cached array.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from pvdkit.names import ObjectNames, names_of
from pvdkit.outputs import require_input
from pvdkit.recording import Object, Recording
from pvdkit.types import PvdError
from viewer.model.geometry import GroundPlane
from viewer.model.timeline import TimeBase, detect_timebase
from viewer.model.vehicles import Vehicle, Wheel, find_vehicles, vehicle_of

#: ``progress(fraction or None, text)``; None = indeterminate (a step of unknown length).
ProgressCallback = Callable[[float | None, str], None]


def _no_progress(fraction: float | None, text: str) -> None:
    return None


def file_stamp(path: str) -> tuple[int, int] | None:
    """A file's (size, modification time in ns), what tells a file written again from the one
    read; None when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


#: Reads of a file being written tried before :func:`quiet_bytes` gives up, and the pause
#: between two (s).
QUIET_READ_TRIES = 20
QUIET_READ_PAUSE = 0.05


def quiet_bytes(path: str) -> tuple[bytes, tuple[int, int]]:
    """The bytes of a file another program is writing, read between two of its writes (its
    size and modification time the same before and after the read), and that stamp: an image
    of the file as a crash at that moment would leave it, which pvdkit's crash-safe ``.h5``
    reader opens as such. :class:`PvdError` when it changed during every read."""
    for _ in range(QUIET_READ_TRIES):
        before = file_stamp(path)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise PvdError(f"{path}: cannot read it ({exc.strerror or exc})") from None
        if before is not None and file_stamp(path) == before and len(data) == before[0]:
            return data, before
        time.sleep(QUIET_READ_PAUSE)
    raise PvdError(f"{path}: it changed while each of {QUIET_READ_TRIES} reads ran (its writer never paused)")


class RecordingSession:
    """A recording plus what the viewer derives from it: time base, vehicles, object lookup.

    Build with :meth:`open` (a path) or from an open :class:`~pvdkit.recording.Recording`.
    """

    def __init__(self, recording: Recording, path: str | None = None, *, up_axis: str = "auto",
                 progress: ProgressCallback = _no_progress) -> None:
        self.recording = recording
        self.path = path or recording.source_name
        self.up_axis = up_axis
        progress(0.7, "time base")
        self.timebase: TimeBase = detect_timebase(recording)
        progress(0.75, "vehicles")
        self.vehicles: list[Vehicle] = find_vehicles(recording)
        progress(0.95, "ground plane")
        _ = self.ground
        # The handle → object lookup that every reference shown needs is built on the first
        # resolve (28,000 objects in a fleet: a GC-heavy loop); build it here, off the GUI thread.
        recording.resolve(0)
        self.open_seconds = 0.0
        #: (size, mtime in ns) of the file as it was when reading began (None: not from a file).
        self.file_stamp: tuple[int, int] | None = None
        #: The name shown for it, when not its file's (a reloaded run's predecessor: "… (previous)").
        self.label: str | None = None
        progress(1.0, "ready")

    @classmethod
    def open(cls, path: str | os.PathLike, *, up_axis: str = "auto", progress: ProgressCallback | None = None,
             snapshot: bool = False) -> RecordingSession:
        """Open and index a ``.ovd`` or ``.h5`` file. Raises :class:`PvdError` with a readable
        message for a missing, unreadable or foreign file.

        ``snapshot``: read the file's bytes between two writes (:func:`quiet_bytes`) and open
        that image. For an ``.h5`` this process has open already (the one shown while a newer
        state of it is read: followed as it is written, or a new run compared with the one
        before): HDF5 hands a second open of a file in the same process the first one's view
        of it, however much the file grew since."""
        report = progress or _no_progress
        name = require_input(path)
        t0 = time.perf_counter()
        stamp = file_stamp(name)  # before reading: a file still being written may change meanwhile
        report(None, f"indexing {os.path.basename(name)} ({(stamp[0] if stamp else 0) / 1e6:.1f} MB)")
        if snapshot:
            data, stamp = quiet_bytes(name)
            rec = Recording.open(data, source_name=name)
        else:
            rec = Recording.open(name)
        session = cls(rec, name, up_axis=up_axis, progress=report)
        session.open_seconds = time.perf_counter() - t0
        session.file_stamp = stamp
        return session

    def refresh(self, structure_changed: bool = True) -> None:
        """Derive again what a live recording's growth changed (see :mod:`viewer.model.live`):
        the time base always; vehicles, names and the ground plane when objects or links
        between them arrived."""
        self.timebase = detect_timebase(self.recording)
        ground = self.__dict__.get("ground")
        if ground is not None and not ground.source.startswith(("gravity", "road normal", "setting")):
            self.__dict__.pop("ground")  # guessed from the motion so far: guess again
        if structure_changed:
            self.vehicles = find_vehicles(self.recording)
            for name in ("names", "_by_name", "ground"):
                self.__dict__.pop(name, None)

    # ------------------------------------------------------------------ derived data

    @property
    def name(self) -> str:
        return self.label or os.path.basename(self.path)

    @property
    def n_frames(self) -> int:
        return len(self.recording.frames)

    @property
    def last_frame(self) -> int:
        """The last frame's number (0 for an empty recording): where a never-destroyed object ends."""
        return max(self.n_frames - 1, 0)

    @cached_property
    def names(self) -> ObjectNames:
        """Readable paths of objects (``/World/Basic/wheel 1/TireForce``), built on first use."""
        return names_of(self.recording)

    def path_of(self, obj: Object) -> str:
        """The readable path of ``obj`` (see :mod:`pvdkit.names`); its name or handle if the
        object graph cannot name it."""
        try:
            return self.names.path(obj) or obj.name or f"0x{obj.handle:x}"
        except (PvdError, IndexError):
            return obj.name or f"0x{obj.handle:x}"

    @cached_property
    def ground(self) -> GroundPlane:
        """The ground plane of the top-down view (see :func:`viewer.model.topdown.detect_ground`)."""
        from viewer.model.topdown import detect_ground

        return detect_ground(self, self.up_axis)

    def set_up_axis(self, setting: str) -> None:
        """Change the up-axis setting ("auto", "x", "+y", "-z" …); ValueError for other text."""
        from viewer.model.topdown import detect_ground

        detect_ground(self, setting)  # validates before anything changes
        self.up_axis = setting
        self.__dict__.pop("ground", None)

    def vehicle_of(self, obj: Object | None) -> tuple[Vehicle | None, Wheel | None]:
        """The vehicle (and wheel) an object belongs to; (None, None) outside every vehicle."""
        return vehicle_of(self.vehicles, obj)

    @cached_property
    def _by_name(self) -> dict[str, Vehicle]:
        out: dict[str, Vehicle] = {}
        for v in self.vehicles:
            out.setdefault(v.name, v)
        return out

    def vehicle_named(self, name: str) -> Vehicle | None:
        return self._by_name.get(name)

    def find(self, text: str) -> Object:
        """The one object ``text`` names, as ``pvdkit series --object`` reads it (a vehicle name,
        a path, an object name, a ``pvdkit diff`` label or a handle); :class:`PvdError` when
        none or several match (:meth:`pvdkit.names.ObjectNames.find`)."""
        return self.names.find(text)

    def describe(self, obj: Object) -> str:
        """One-line description: class, name, handle and, for vehicle parts, whose part it is."""
        cname = obj.cls.name if obj.cls else "implicit object"
        text = f"{cname} {obj.name!r} 0x{obj.handle:x}" if obj.name else f"{cname} 0x{obj.handle:x}"
        v, w = self.vehicle_of(obj)
        if v is not None and v.obj is not obj:
            text += f" — {w.label + ' of ' if w else ''}{v.name}"
        elif v is not None:
            text += f" — vehicle {v.name}"
        return text

    def close(self) -> None:
        self.recording.close()


# ---------------------------------------------------------------------------------------------
# Object tree
# ---------------------------------------------------------------------------------------------


@dataclass(eq=False, slots=True)
class TreeNode:
    """A row of the object tree: sections, vehicles, wheels, classes and objects.

    ``kind`` is one of ``section``, ``vehicle``, ``wheel``, ``group``, ``class``, ``object`` or
    ``more`` (a row standing for ``hidden`` rows not listed, to keep the tree small).
    ``handle`` and ``lifetime`` are the texts of ``obj``, made when asked: a fleet's tree has
    45,000 nodes and only the rows built on screen show them.
    """

    label: str
    kind: str
    obj: Object | None = None
    count: int = 0
    hidden: int = 0
    children: list[TreeNode] = field(default_factory=list)
    last_frame: int = 0

    @property
    def handle(self) -> str:
        return f"0x{self.obj.handle:x}" if self.obj is not None else ""

    @property
    def lifetime(self) -> str:
        return lifetime_text(self.obj, self.last_frame) if self.obj is not None else ""

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()


def lifetime_text(obj: Object, last_frame: int) -> str:
    """The frames an object is alive, both ends as numbers: ``"0–960"`` (created before the first
    frame counts from 0; never destroyed runs to ``last_frame``), ``"12–40"``."""
    a = max(obj.created, 0)
    b = last_frame if obj.destroyed is None else obj.destroyed
    return f"{a}–{b}"


def object_node(obj: Object, label: str | None = None, last_frame: int = 0) -> TreeNode:
    return TreeNode(label or obj.name or f"({obj.cls.name if obj.cls else '?'})", "object", obj,
                    last_frame=last_frame)


class _Matcher:
    """Whether an object matches the filter text: its name, class, handle, or — so that typing
    ``rotationSpeed`` finds the objects that have one — one of its class's attribute names.
    Each class's attribute names are lowered once per filter, not once per object."""

    def __init__(self, needle: str) -> None:
        self.needle = needle
        self._by_class: dict[int, bool] = {}

    def class_matches(self, obj: Object) -> bool:
        cls = obj.cls
        if cls is None:
            return False
        got = self._by_class.get(cls.handle)
        if got is None:
            n = self.needle
            got = n in cls.name.lower() or any(n in p.lower() for p in cls.paths)
            self._by_class[cls.handle] = got
        return got

    def __call__(self, obj: Object) -> bool:
        n = self.needle
        if not n or n in obj.name.lower() or self.class_matches(obj):
            return True
        h = obj.handle
        return n in f"0x{h:x}" or n == str(h)


def object_tree(session: RecordingSession, text: str = "", max_children: int = 500) -> list[TreeNode]:
    """The object tree, filtered by ``text`` (case-insensitive substring of a vehicle name, wheel
    label, class name, attribute name, object name or handle): a "Vehicles" section (vehicle →
    vehicle parts and one node per wheel → that wheel's objects) and a "Classes" section (class →
    objects). Typing an attribute name (``rotationSpeed``) keeps the objects whose class has one.
    At most ``max_children`` objects are listed under one node; a ``more`` row counts the rest.
    """
    needle = text.strip().lower()
    match = _Matcher(needle)
    last = session.last_frame
    roots: list[TreeNode] = []
    if session.vehicles:
        section = TreeNode("Vehicles", "section")
        for v in session.vehicles:
            v_all = not needle or needle in v.name.lower()
            vn = TreeNode(v.name, "vehicle", v.obj, last_frame=last)
            body = TreeNode("chassis & drivetrain", "group")
            for cname in sorted(v.parts):
                for o in v.parts[cname]:
                    if v_all or match(o):
                        body.children.append(object_node(o, last_frame=last))
            if body.children:
                vn.children.append(body)
            for w in v.wheels:
                w_all = v_all or needle in w.label.lower()
                wn = TreeNode(w.label, "wheel", w.root, last_frame=last)
                for cname in sorted(w.parts):
                    for o in w.parts[cname]:
                        if w_all or match(o):
                            wn.children.append(object_node(o, last_frame=last))
                if wn.children:
                    vn.children.append(wn)
            if v_all or vn.children or match(v.obj):
                vn.count = len(v.wheels)
                section.children.append(vn)
        if section.children:
            section.count = len(section.children)
            roots.append(section)
    classes = TreeNode("Classes", "section")
    by_class: dict[str, list[Object]] = {}
    for o in session.recording.objects:
        by_class.setdefault(o.cls.name if o.cls else "(implicit objects)", []).append(o)
    for cname in sorted(by_class, key=str.lower):
        objs = by_class[cname]
        if needle and needle not in cname.lower():
            objs = [o for o in objs if match(o)]
            if not objs:
                continue
        cn = TreeNode(cname, "class", count=len(objs))
        cn.children = [object_node(o, last_frame=last) for o in objs[:max_children]]
        if len(objs) > max_children:
            cn.hidden = len(objs) - max_children
            cn.children.append(TreeNode(f"… {cn.hidden} more (type in the filter to narrow)", "more",
                                        hidden=cn.hidden))
        classes.children.append(cn)
    classes.count = len(classes.children)
    if classes.children:
        roots.append(classes)
    return roots
