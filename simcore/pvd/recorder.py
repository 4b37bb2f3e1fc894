"""Stream simcore vehicles through an OmniPVD writer: schema, objects, params on change, states.

A :class:`PvdRecorder` owns one recording (a writer and a PVD context). Vehicles join it with
:meth:`PvdRecorder.attach`, which appends a :class:`~simcore.pvd.components.PvdComponent` to the
vehicle's component sequence. Then every vehicle step becomes a PVD frame:

* the first frame registers the schema (PhysX Vehicle2's classes, then simcore's own) and
  creates each vehicle's object graph;
* params are written on the first frame and then only when they change (params are immutable:
  a change is a new params object, whose values are compared with the last ones written);
* every state value is written every frame.

Frames carry the simulated time as timestamp: nanoseconds by default (``timestamps="ns"``), or
PhysX's own convention, a frame counter 1, 2, 3 … (``timestamps="frame"``), which OmniPVD's
timeline expects. The time in seconds is also written every frame to the ``Simulation`` object.

Speed: the state values of a frame are written as one pre-encoded block (the same bytes the
writer would produce command by command) whose value fields are numpy views, so a frame costs
one accessor call per (class, attribute) — not per wheel — and a single stream write.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pvdkit.types import Command, DataType, PvdError
from simcore.pvd.graph import (
    HandleAllocator,
    ObjectGroup,
    PvdGraphError,
    VehicleGraph,
    build_vehicle_graph,
    create_graph,
)
from simcore.pvd.registry import SchemaHandles, register_schema
from simcore.pvd.schema import SCHEMA, AttrDecl, ClassDecl, Role, Schema

if TYPE_CHECKING:
    from simcore.pvd.components import PvdComponent

_SET_HEAD = struct.Struct("<BQQBII")  # cmd, context, object, depth (1), attribute, payload size
_TIMESTAMP_UNITS = ("ns", "frame")


# --------------------------------------------------------------------------------------------
# Encoding values
# --------------------------------------------------------------------------------------------


def _value_array(decl: ClassDecl, a: AttrDecl, value: Any, k: int) -> np.ndarray:
    """The values of ``k`` objects as a (k, elements) array of the wire dtype."""
    arr = np.asarray(value)
    if a.chunk is not None:
        arr = arr[..., a.chunk[0]:a.chunk[1]]
    try:
        arr = arr.astype(a.dtype.numpy_dtype)
    except (TypeError, ValueError) as exc:
        raise PvdGraphError(
            f"{decl.name}.{a.name}: cannot convert {value!r} to {a.dtype.name}: {exc}") from None
    if a.elements == 0:
        if k != 1:
            raise PvdGraphError(f"{decl.name}.{a.name}: variable-length values need one object per source")
        return arr.reshape(1, -1)
    if arr.size != k * a.elements:
        raise PvdGraphError(
            f"{decl.name}.{a.name}: expected {k} x {a.elements} value(s) from the source, "
            f"got shape {arr.shape}")
    return arr.reshape(k, a.elements)


def encode_rows(decl: ClassDecl, a: AttrDecl, value: Any, k: int) -> list[bytes]:
    """One payload per object, as PhysX writes it (``wire_count`` elements of the dtype)."""
    if a.dtype == DataType.STRING:
        return [str(value).encode("utf-8")]
    return [row.tobytes() for row in _value_array(decl, a, value, k)]


def _attr_get(a: AttrDecl) -> Callable[[Any], Any]:
    if a.get is None:
        raise PvdGraphError(f"attribute {a.name!r} has no accessor")
    return a.get


class _ParamWriter:
    """Writes a params group on its first frame and then whenever its values change."""

    def __init__(self, group: ObjectGroup, handles: SchemaHandles) -> None:
        self.group = group
        self.attrs = [(decl, a, handles.attr(decl, a.name)) for decl, a in group.decl.all_attrs()
                      if not a.is_link and a.get is not None]
        self._last_source: object = _NOTHING
        self._last: list[list[bytes]] = [[] for _ in self.attrs]

    def write(self, writer: Any, context: int) -> int:
        """Write the values that differ from the last ones written; return how many were written."""
        src = self.group.resolve()
        if src is self._last_source:
            return 0
        if src is None:
            raise PvdGraphError(
                f"{self.group.decl.name}: the vehicle's source became None after the recording "
                "started; the PVD object graph is fixed at the first frame")
        written = 0
        handles = self.group.handles
        k = len(handles)
        for n, (decl, a, ah) in enumerate(self.attrs):
            rows = encode_rows(decl, a, _attr_get(a)(src), k)
            last = self._last[n]
            for i, row in enumerate(rows):
                if i >= len(last) or last[i] != row:
                    writer.set_attribute_bytes(context, int(handles[i]), ah, row)
                    written += 1
            self._last[n] = rows
        self._last_source = src
        return written


_NOTHING = object()


@dataclass
class _Slot:
    get: Callable[[Any], Any]
    chunk: tuple[int, int] | None
    view: np.ndarray  # (objects, elements) over the payloads
    fast: np.ndarray | None  # the same payloads shaped like the accessor's values (no reshape needed)
    label: str


def _natural_view(view: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """``view`` (objects, elements) re-shaped to ``shape`` — the shape the accessor returns — when
    that is (objects, ...) or, for one object, (...); None if it does not fit."""
    k, e = view.shape
    item = view.strides[1]
    if k > 1 and len(shape) >= 1 and shape[0] == k:
        tail = shape[1:]
        lead = (view.strides[0],)
    elif k == 1:
        tail = shape
        lead = ()
    else:
        return None
    if int(np.prod(tail, dtype=np.int64)) != e:
        return None
    inner = []
    step = item
    for d in reversed(tail):
        inner.append(step)
        step *= d
    return np.lib.stride_tricks.as_strided(view, shape=shape, strides=lead + tuple(reversed(inner)),
                                           writeable=True)


class StateBlock:
    """Pre-encoded SET_ATTRIBUTE commands for every state value of some object groups.

    The command headers are fixed once; each frame :meth:`fill` writes the current values into
    numpy views of the payloads, and :attr:`buffer` is the frame's bytes — identical to what
    :meth:`pvdkit.writer.OmniPvdWriter.set_attribute` would produce for each value in turn. The
    views are shaped like the values the accessors return (read once when the block is built),
    so a frame costs one accessor call and one array assignment per class attribute.
    """

    def __init__(self, context: int, groups: list[ObjectGroup], handles: SchemaHandles) -> None:
        layout: list[tuple[ObjectGroup, AttrDecl, int, int, int]] = []  # group, attr, ah, offset, rec size
        size = 0
        for group in groups:
            for decl, a in group.decl.all_attrs():
                if a.is_link or a.get is None:
                    continue
                if a.elements == 0 or a.dtype == DataType.STRING:
                    raise PvdGraphError(f"{decl.name}.{a.name}: state values must have a fixed size")
                rec = _SET_HEAD.size + a.elements * a.dtype.size
                layout.append((group, a, handles.attr(decl, a.name), size, rec))
                size += rec * len(group)
        self.buffer = bytearray(size)
        self._groups: list[tuple[ObjectGroup, list[_Slot]]] = []
        by_group: dict[int, list[_Slot]] = {}
        for group, a, ah, offset, rec in layout:
            payload = a.elements * a.dtype.size
            for i, h in enumerate(group.handles):
                _SET_HEAD.pack_into(self.buffer, offset + i * rec, Command.SET_ATTRIBUTE, context, int(h), 1,
                                    ah, payload)
            view = np.ndarray((len(group), a.elements), dtype=a.dtype.numpy_dtype, buffer=self.buffer,
                              offset=offset + _SET_HEAD.size, strides=(rec, a.dtype.size))
            slots = by_group.get(id(group))
            if slots is None:
                slots = by_group[id(group)] = []
                self._groups.append((group, slots))
            slots.append(_Slot(_attr_get(a), a.chunk, view, None, f"{group.decl.name}.{a.name}"))
        for group, slots in self._groups:
            src = group.resolve()
            if src is None:
                continue
            for slot, value in zip(slots, self._values(src, slots), strict=True):
                slot.fast = _natural_view(slot.view, np.shape(value))

    @property
    def nb_commands(self) -> int:
        """SET_ATTRIBUTE commands per frame."""
        return sum(s.view.shape[0] for _, slots in self._groups for s in slots)

    @staticmethod
    def _values(src: Any, slots: list[_Slot]) -> Iterator[Any]:
        cache: dict[int, Any] = {}
        for slot in slots:
            if slot.chunk is None:
                yield slot.get(src)
            else:
                key = id(slot.get)
                if key not in cache:
                    cache[key] = np.asarray(slot.get(src))
                yield cache[key][..., slot.chunk[0]:slot.chunk[1]]

    def fill(self) -> None:
        """Read every state from its source into the block."""
        for group, slots in self._groups:
            src = group.resolve()
            if src is None:
                raise PvdGraphError(
                    f"{group.decl.name}: the vehicle's source became None after the recording started; "
                    "the PVD object graph is fixed at the first frame")
            for slot, value in zip(slots, self._values(src, slots), strict=True):
                try:
                    if slot.fast is not None:
                        slot.fast[...] = value
                    else:
                        slot.view[...] = np.reshape(value, slot.view.shape)
                except (ValueError, TypeError) as exc:
                    raise PvdGraphError(f"{slot.label}: expected {slot.view.shape[0]} x {slot.view.shape[1]} "
                                        f"values, got shape {np.shape(value)}: {exc}") from None


# --------------------------------------------------------------------------------------------
# The recorder
# --------------------------------------------------------------------------------------------


@dataclass
class _VehicleRecord:
    graph: VehicleGraph
    params: list[_ParamWriter]
    states: StateBlock


class PvdRecorder:
    """One OmniPVD recording of simcore vehicles (see the module docstring).

    ``writer``: a :class:`pvdkit.writer.OmniPvdWriter` on any stream (``.ovd`` file, HDF5,
    memory). ``context``: the PVD context handle of every object and frame. ``timestamps``:
    ``"ns"`` (simulated time in integer nanoseconds) or ``"frame"`` (PhysX's frame counter).
    """

    def __init__(self, writer: Any, *, context: int = 1, timestamps: str = "ns",
                 schema: Schema = SCHEMA) -> None:
        if timestamps not in _TIMESTAMP_UNITS:
            raise ValueError(f"PvdRecorder: timestamps must be one of {_TIMESTAMP_UNITS}, got {timestamps!r}")
        if not isinstance(context, int) or not 0 <= context < 1 << 64:
            raise ValueError(f"PvdRecorder: context must be an integer in 0..2**64-1, got {context!r}")
        self.writer = writer
        self.context = context
        self.timestamps = timestamps
        self.schema = schema
        #: Simulated time (s) at the end of the last recorded step; dt (s) of that step; steps.
        self.time = 0.0
        self.dt = 0.0
        self.step = 0
        self.frames = 0
        self._handles: SchemaHandles | None = None
        self._alloc = HandleAllocator()
        self._shared: dict[tuple[str, int], ObjectGroup] = {}
        self._vehicles: dict[int, _VehicleRecord] = {}
        self._simulation: ObjectGroup | None = None
        self._simulation_block: StateBlock | None = None
        self._frame_open = False
        self._frame_started = False
        self._frame_time: float | None = None
        self._timestamp = 0
        self._closed = False

    # ------------------------------------------------------------------------------ vehicles

    def attach(self, vehicle: Any, name: str = "pvd") -> PvdComponent:
        """Append a PVD component to ``vehicle``'s component sequence (last) and return it."""
        from simcore.pvd.components import PvdComponent

        component = PvdComponent(vehicle, self)
        sequence = getattr(vehicle, "sequence", None)
        if sequence is None:
            raise PvdGraphError(
                "PvdRecorder.attach: the vehicle has no component sequence (vehicle.sequence)")
        sequence.add(component, name)
        return component

    @property
    def handles(self) -> SchemaHandles:
        """Class and attribute handles of the registered schema (registers it if needed)."""
        if self._handles is None:
            self._handles = register_schema(self.writer, self.schema)
        return self._handles

    @property
    def nb_objects(self) -> int:
        """PVD objects created so far."""
        return self._alloc.next_handle - 1

    # -------------------------------------------------------------------------------- frames

    @property
    def in_frame(self) -> bool:
        """True between :meth:`begin_frame` and :meth:`end_frame`."""
        return self._frame_open

    def begin_frame(self, time: float | None = None) -> None:
        """Open a frame for the vehicles stepped until :meth:`end_frame` (several vehicles, one
        frame). ``time``: simulated time (s) at the end of the step; default: the first
        recording vehicle's own time."""
        self._check_open()
        if self._frame_open:
            raise PvdError("PvdRecorder.begin_frame: a frame is already open")
        self._frame_open = True
        self._frame_started = False
        self._frame_time = time

    def end_frame(self) -> None:
        """Write the simulation clock and close the frame."""
        if not self._frame_open:
            raise PvdError("PvdRecorder.end_frame: no frame is open")
        if self._frame_started:
            assert self._simulation_block is not None
            self._simulation_block.fill()
            self._emit(self._simulation_block.buffer)
            self.writer.stop_frame(self.context, self._timestamp)
        self._frame_open = False
        self._frame_started = False

    @contextmanager
    def frame(self, time: float | None = None) -> Iterator[PvdRecorder]:
        """``with recorder.frame(): car.step(dt); truck.step(dt)`` — one frame for both."""
        self.begin_frame(time)
        try:
            yield self
        finally:
            self.end_frame()

    def _start(self, time: float, dt: float) -> None:
        """Emit START_FRAME on the frame's first write (the time is known by then)."""
        if self._frame_started:
            return
        t = self._frame_time if self._frame_time is not None else time
        self.frames += 1
        self.step += 1
        self.time, self.dt = float(t), float(dt)
        if self.timestamps == "ns":
            ts = int(round(t * 1e9))
            if self.frames > 1 and ts <= self._timestamp:
                raise PvdError(f"PvdRecorder: frame time {t!r} s is not after the previous frame's "
                               f"({self._timestamp} ns); timestamps must increase (step several "
                               "vehicles inside one `with recorder.frame(): ...`)")
        else:
            ts = self.frames
        self._timestamp = ts
        self.writer.start_frame(self.context, ts)
        self._frame_started = True
        handles = self.handles
        if self._simulation is None:
            self._create_simulation(handles)

    def _create_simulation(self, handles: SchemaHandles) -> None:
        decl = self.schema["Simulation"]
        group = ObjectGroup(decl, self._alloc.take(1), (decl.object_name,), lambda: self)
        self.writer.create_object(self.context, handles.cls(decl), int(group.handles[0]), decl.object_name)
        self._simulation = group
        self._simulation_block = StateBlock(self.context, [group], handles)

    def _emit(self, data: bytearray) -> None:
        # The block holds complete commands encoded as the writer encodes them; the writer has
        # already written the stream header (registration precedes any frame data).
        self.writer.stream.write(data)
        if hasattr(self.writer, "bytes_written"):
            self.writer.bytes_written += len(data)

    def _check_open(self) -> None:
        if self._closed:
            raise PvdError("PvdRecorder: recording after close()")

    # ------------------------------------------------------------------------------- writing

    def record(self, component: PvdComponent, dt: float) -> None:
        """Record ``component``'s vehicle at the end of a step of ``dt`` (called by the component)."""
        self._check_open()
        own_frame = not self._frame_open
        if own_frame:
            self.begin_frame(component.time)
        try:
            self._start(component.time, dt)
            rec = self._vehicles.get(id(component))
            if rec is None:
                rec = self._vehicles[id(component)] = self._add_vehicle(component.vehicle)
            for p in rec.params:
                p.write(self.writer, self.context)
            rec.states.fill()
            self._emit(rec.states.buffer)
        finally:
            if own_frame:
                self.end_frame()

    def _add_vehicle(self, vehicle: Any) -> _VehicleRecord:
        handles = self.handles
        known = set(self._shared)
        graph = build_vehicle_graph(self.schema, vehicle, self._alloc, self._shared)
        create_graph(self.writer, self.context, handles, graph)
        self._link_simulation(handles, graph, known)
        params = [_ParamWriter(g, handles) for g in graph if g.owner and g.decl.role == Role.PARAMS]
        states = [g for g in graph if g.owner and g.decl.role == Role.STATE]
        return _VehicleRecord(graph, params, StateBlock(self.context, states, handles))

    def _link_simulation(self, handles: SchemaHandles, graph: VehicleGraph, known: set) -> None:
        assert self._simulation is not None
        sim = int(self._simulation.handles[0])
        for decl, a in self._simulation.decl.all_attrs():
            if not a.unique_list:
                continue
            ah = handles.attr(decl, a.name)
            for name in a.links:
                for g in graph.get(name):
                    if g.decl.shared and not g.owner:
                        continue
                    for h in g.handles:
                        self.writer.add_to_unique_list_attribute(self.context, sim, ah, np.uint64(h))

    def vehicle_graph(self, component: PvdComponent) -> VehicleGraph:
        """The object graph recorded for ``component``'s vehicle (after its first frame)."""
        rec = self._vehicles.get(id(component))
        if rec is None:
            raise PvdGraphError("this vehicle has not been recorded yet (its first step creates its objects)")
        return rec.graph

    # ------------------------------------------------------------------------------- closing

    def close(self, close_writer: bool = True) -> None:
        """End an open frame and (by default) close the writer and its stream. Idempotent."""
        if self._closed:
            return
        if self._frame_open:
            self.end_frame()
        self._closed = True
        if close_writer:
            self.writer.close()

    def __enter__(self) -> PvdRecorder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

