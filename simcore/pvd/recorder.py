"""Stream simcore vehicles through an OmniPVD writer: schema, objects, params on change, states.

A :class:`PvdRecorder` owns one recording (a writer and a PVD context). Vehicles join it with
:meth:`PvdRecorder.attach`, which appends a :class:`~simcore.pvd.components.PvdComponent` to the
vehicle's component sequence; a :class:`~simcore.fleet.fleet.Fleet` joins with
:meth:`PvdRecorder.attach_fleet` (or ``attach``). Then every step becomes a PVD frame:

* the first frame registers the schema (PhysX Vehicle2's classes, then simcore's own) and
  creates each vehicle's object graph (a fleet: one graph per member, its ``Vehicle`` object
  named after the member);
* params are written on the first frame and then only when they change (params are immutable:
  a change is a new params object, whose values are compared with the last ones written);
* every state value is written every frame.

Frames carry the simulated time as timestamp: nanoseconds by default (``timestamps="ns"``), or
PhysX's own convention, a frame counter 1, 2, 3 … (``timestamps="frame"``), which OmniPVD's
timeline expects. The time in seconds is also written every frame to the ``Simulation`` object.

Speed: the state values of a frame go through the writer's prepared path
(:meth:`pvdkit.writer.OmniPvdWriter.prepare_attributes` / ``write_prepared``): the commands are
encoded once, their values are numpy views, so a frame costs one accessor call and one array
assignment per (class, attribute) — not per wheel, and for a fleet not per vehicle — and one
stream write. simcore encodes no bytes itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pvdkit.types import DataType, PvdError
from pvdkit.writer import PreparedAttributes, PreparedColumn, close_keeping
from simcore.pvd.graph import (
    HandleAllocator,
    ObjectGroup,
    PvdGraphError,
    VehicleGraph,
    build_vehicle_graph,
    create_graph,
)
from simcore.pvd.registry import SchemaHandles, register_schema
from simcore.pvd.schema import PHYSX_SCHEMA, SCHEMA, AttrDecl, ClassDecl, Phase, Role, Schema, Scope

if TYPE_CHECKING:
    from simcore.pvd.components import FleetPvdComponent, PvdComponent

_TIMESTAMP_UNITS = ("ns", "frame")


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


def _value_array(decl: ClassDecl, a: AttrDecl, value: Any, k: int) -> np.ndarray:
    """The values of ``k`` objects as a C-contiguous (k, elements) array of the wire dtype."""
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
        return np.ascontiguousarray(arr.reshape(1, -1))
    if k > 1 and arr.size == a.elements:  # one value for every object (a road's friction per wheel)
        arr = np.broadcast_to(arr.reshape(1, a.elements), (k, a.elements))
    if arr.size != k * a.elements:
        raise PvdGraphError(
            f"{decl.name}.{a.name}: expected {k} x {a.elements} value(s) from the source, "
            f"got shape {arr.shape}")
    return np.ascontiguousarray(arr.reshape(k, a.elements))


def _attr_get(a: AttrDecl) -> Callable[[Any], Any]:
    if a.get is None:
        raise PvdGraphError(f"attribute {a.name!r} has no accessor")
    return a.get


def _has_role(decl: ClassDecl, role: Role) -> bool:
    """True when some attribute of ``decl``'s objects is written in ``role`` (a class's own role,
    or an attribute's: PhysX's actor mixes params and states)."""
    return decl.role == role or any(a.role == role for _, a in decl.all_attrs())


def _groups(graph: VehicleGraph, role: Role, phase: Phase) -> list[ObjectGroup]:
    """The vehicle's own groups with ``role`` attributes written in the frames of ``phase``."""
    return [g for g in graph if g.owner and g.decl.phase == phase and _has_role(g.decl, role)]


def _changed_rows(new: np.ndarray, last: np.ndarray | None) -> np.ndarray:
    """Rows of ``new`` whose bytes differ from ``last`` (all rows when the shapes differ): the
    comparison is bitwise, so a NaN that stays NaN is no change and -0.0 vs 0.0 is one."""
    k = new.shape[0]
    if last is None or last.shape != new.shape:
        return np.arange(k)
    a = new.view(np.uint8).reshape(k, -1)
    b = last.view(np.uint8).reshape(k, -1)
    return np.flatnonzero((a != b).any(axis=1))


class _ParamWriter:
    """Writes a params group on its first frame and then whenever its values change.

    Values go through the writer's public calls: ``set_attribute_bytes`` for numbers (PhysX's
    payload sizes differ from its registration for some attributes, :attr:`AttrDecl.wire_count`)
    and ``set_attribute`` for strings.
    """

    def __init__(self, group: ObjectGroup, handles: SchemaHandles) -> None:
        self.group = group
        self.attrs = [(decl, a, handles.attr(decl, a.name)) for decl, a in group.decl.all_attrs()
                      if not a.is_link and a.get is not None and group.decl.role_of(a) == Role.PARAMS]
        self._resolve = group.resolve_params or group.resolve
        self._last_source: object = _NOTHING
        self._last: list[Any] = [None for _ in self.attrs]

    def write(self, writer: Any, context: int) -> int:
        """Write the values that differ from the last ones written; return how many were written."""
        src = self._resolve()
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
            value = _attr_get(a)(src)
            if a.dtype == DataType.STRING:
                text = str(value)
                if text != self._last[n]:
                    writer.set_attribute(context, int(handles[0]), ah, text)
                    written += 1
                self._last[n] = text
                continue
            rows = _value_array(decl, a, value, k)
            for i in _changed_rows(rows, self._last[n]):
                writer.set_attribute_bytes(context, int(handles[i]), ah, rows[i])
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


def _shaped_view(block: PreparedAttributes, column: int, shape: tuple[int, ...]) -> np.ndarray | None:
    """Column ``column`` of ``block`` shaped like the accessor's values, or None if they do not
    split into (objects, elements) that way."""
    try:
        return block.view(column, shape)
    except PvdError:
        return None


def _state_attrs(group: ObjectGroup) -> Iterator[tuple[ClassDecl, AttrDecl]]:
    """The attributes of a state group that are written every frame (fixed-size values)."""
    for decl, a in group.decl.all_attrs():
        if a.is_link or a.get is None or group.decl.role_of(a) != Role.STATE:
            continue
        if a.elements == 0 or a.dtype == DataType.STRING:
            raise PvdGraphError(f"{decl.name}.{a.name}: state values must have a fixed size")
        yield decl, a


def _values(src: Any, slots: Sequence[_Slot]) -> Iterator[Any]:
    """Each slot's value from ``src``; accessors shared by chunks (``...0To3`` …) run once."""
    cache: dict[int, Any] = {}
    for slot in slots:
        if slot.chunk is None:
            yield slot.get(src)
        else:
            key = id(slot.get)
            if key not in cache:
                cache[key] = np.asarray(slot.get(src))
            yield cache[key][..., slot.chunk[0]:slot.chunk[1]]


def _assign(slot: _Slot, value: Any) -> None:
    try:
        if slot.fast is not None:
            slot.fast[...] = value
        else:
            slot.view[...] = np.reshape(value, slot.view.shape)
    except (ValueError, TypeError) as exc:
        raise PvdGraphError(f"{slot.label}: expected {slot.view.shape[0]} x {slot.view.shape[1]} "
                            f"values, got shape {np.shape(value)}: {exc}") from None


def _source_gone(decl: ClassDecl) -> PvdGraphError:
    return PvdGraphError(f"{decl.name}: the vehicle's source became None after the recording started; "
                         "the PVD object graph is fixed at the first frame")


class _PreparedStates:
    """What the recorder's state blocks share: a prepared block of the writer (``self.block``)
    that ``fill()`` loads with the current values each frame."""

    block: Any

    @property
    def buffer(self) -> memoryview:
        """The frame's encoded commands (as last filled)."""
        return self.block.buffer

    @property
    def nb_commands(self) -> int:
        """SET_ATTRIBUTE commands per frame."""
        return self.block.nb_commands


class StateBlock(_PreparedStates):
    """Every state value of some object groups, as one prepared block of the writer.

    The SET_ATTRIBUTE commands are encoded once by
    :meth:`pvdkit.writer.OmniPvdWriter.prepare_attributes`; each frame :meth:`fill` reads the
    values into the block's numpy views and :meth:`write` hands the block to the writer — the
    bytes ``OmniPvdWriter.set_attribute`` would produce for each value in turn. The views are
    shaped like the values the accessors return (read once when the block is built), so a frame
    costs one accessor call and one array assignment per class attribute.
    """

    def __init__(self, writer: Any, context: int, groups: list[ObjectGroup], handles: SchemaHandles) -> None:
        columns: list[PreparedColumn] = []
        layout: list[tuple[ObjectGroup, AttrDecl]] = []
        for group in groups:
            for decl, a in _state_attrs(group):
                columns.append(PreparedColumn(group.handles, handles.attr(decl, a.name), a.elements))
                layout.append((group, a))
        self.block: PreparedAttributes = writer.prepare_attributes(context, columns)
        self._groups: list[tuple[ObjectGroup, list[_Slot]]] = []
        by_group: dict[int, list[_Slot]] = {}
        for c, (group, a) in enumerate(layout):
            slots = by_group.get(id(group))
            if slots is None:
                slots = by_group[id(group)] = []
                self._groups.append((group, slots))
            label = f"{group.decl.name}.{a.name}"
            slots.append(_Slot(_attr_get(a), a.chunk, self.block.views[c], None, label))
        c = 0
        for group, slots in self._groups:
            src = group.resolve()
            if src is None:
                c += len(slots)
                continue
            for slot, value in zip(slots, _values(src, slots), strict=True):
                slot.fast = _shaped_view(self.block, c, np.shape(value))
                c += 1

    def fill(self) -> None:
        """Read every state from its source into the block."""
        for group, slots in self._groups:
            src = group.resolve()
            if src is None:
                raise _source_gone(group.decl)
            for slot, value in zip(slots, _values(src, slots), strict=True):
                _assign(slot, value)

    def write(self, writer: Any) -> None:
        """Write the block's commands (with the values of the last :meth:`fill`)."""
        writer.write_prepared(self.block)


# --------------------------------------------------------------------------------------------
# Fleets
# --------------------------------------------------------------------------------------------


class _MemberStates:
    """Vehicle ``i``'s states inside a batch, under VehicleStates' names (row views)."""

    __slots__ = ("_states", "_i")

    def __init__(self, states: Any, i: int) -> None:
        self._states, self._i = states, i

    def __getattr__(self, name: str) -> Any:
        batch = self._states.get(name)
        if batch is None:
            raise AttributeError(name)
        return batch.member(self._i)


class _FleetMember:
    """Vehicle ``i`` of a fleet as the schema's sources read a vehicle: its current params, its
    states (row views of the batch), the fleet's shared road and context."""

    def __init__(self, fleet: Any, i: int) -> None:
        self._fleet, self._i = fleet, i
        self.states = _MemberStates(fleet.states, i)

    @property
    def params(self) -> Any:
        return self._fleet.params[self._i]

    @property
    def road(self) -> Any:
        return getattr(self._fleet, "road", None)

    @property
    def context(self) -> Any:
        return getattr(self._fleet, "context", None)


class _FleetBatch:
    """The whole fleet as the schema's state sources read a vehicle: ``states`` is the
    :class:`~simcore.fleet.states.FleetStates`, so a source returns a batch (leading vehicle
    axis) and an accessor written over trailing axes returns every vehicle's values at once.
    ``params`` is vehicle 0's (sources only ask the topology: engine or not, tank or not)."""

    def __init__(self, fleet: Any) -> None:
        self._fleet = fleet

    @property
    def states(self) -> Any:
        return self._fleet.states

    @property
    def params(self) -> Any:
        return self._fleet.params[0]

    @property
    def road(self) -> Any:
        return getattr(self._fleet, "road", None)

    @property
    def context(self) -> Any:
        return getattr(self._fleet, "context", None)


#: Vehicles in the random batch that checks whether an accessor vectorizes (a prime: unlikely to
#: equal a wheel count or a value size, so a wrong axis shows in the shape).
_PROBE_VEHICLES = 7


def _probe_states(states: Any, seed: int = 12345) -> Any:
    """A batch shaped like ``states`` (``_PROBE_VEHICLES`` vehicles) holding random values."""
    from simcore.fleet.states import FleetStates, StateBatch

    rng = np.random.default_rng(seed)
    batches = {}
    for name, batch in states.items():
        arrays = {}
        for field, arr in batch.items():
            shape = (_PROBE_VEHICLES,) + arr.shape[1:]
            if arr.dtype.kind == "b":
                arrays[field] = rng.random(shape) < 0.5
            elif arr.dtype.kind in "iu":
                arrays[field] = rng.integers(0, 3, shape).astype(arr.dtype)
            else:
                arrays[field] = rng.uniform(-2.0, 2.0, shape).astype(arr.dtype)
        batches[name] = StateBatch(batch.cls, arrays, batch.scalars)
    return FleetStates(batches)


def _vectorizes(get: Callable[[Any], Any], source: Callable[[Any], Any], probe_fleet: Any,
                chunk: tuple[int, int] | None, dtype: np.dtype) -> bool:
    """True if ``get`` over the probe batch gives every probe member's own value, stacked
    (compared after conversion to the wire dtype, so float32 rounding counts as equal)."""
    try:
        batch = np.asarray(get(source(_FleetBatch(probe_fleet))))
        rows = [np.asarray(get(source(_FleetMember(probe_fleet, i)))) for i in range(_PROBE_VEHICLES)]
    except Exception:  # noqa: BLE001 - an accessor that fails on a batch does not vectorize
        return False
    ref = np.stack(rows)
    if chunk is not None:
        batch, ref = batch[..., chunk[0]:chunk[1]], ref[..., chunk[0]:chunk[1]]
    if batch.shape != ref.shape:
        return False
    return bool(np.array_equal(batch.astype(dtype).view(np.uint8), ref.astype(dtype).view(np.uint8)))


class _Probe:
    """A random batch shaped like a fleet's states, with the fleet's params, road and context."""

    def __init__(self, fleet: Any) -> None:
        self.states = _probe_states(fleet.states)
        self.params = [fleet.params[0]] * _PROBE_VEHICLES
        self.road = getattr(fleet, "road", None)
        self.context = getattr(fleet, "context", None)


@dataclass
class _FleetColumn:
    get: Callable[[Any], Any]
    chunk: tuple[int, int] | None
    view: np.ndarray  # (n_vehicles * objects per vehicle, elements)
    fast: np.ndarray | None  # (n_vehicles, *one vehicle's value shape) over the same payloads
    label: str
    vectorized: bool


class FleetStateBlock(_PreparedStates):
    """Every state value of every member of a fleet, as one prepared block of the writer.

    Class by class and attribute by attribute, one column holds that attribute of every
    member's objects (vehicle-major, then wheel), so a frame costs one accessor call on the
    batch and one array assignment per (class, attribute), whatever the fleet's size. The
    schema's accessors are written for one vehicle over trailing axes; each one is checked once,
    on a random batch, to give every member's value when handed the batch (vehicle axis first).
    One that does not (:attr:`per_vehicle`) is evaluated member by member — correct, but one
    call per vehicle.
    """

    def __init__(self, writer: Any, context: int, fleet: Any, graphs: Sequence[VehicleGraph],
                 handles: SchemaHandles, phase: Phase = Phase.VEHICLE) -> None:
        self._batch = _FleetBatch(fleet)
        self._members = [_FleetMember(fleet, i) for i in range(len(graphs))]
        n = len(graphs)
        probe = _Probe(fleet)
        columns: list[PreparedColumn] = []
        specs: list[tuple[ClassDecl, AttrDecl]] = []
        self._classes: list[tuple[ClassDecl, list[_FleetColumn]]] = []
        for group in _groups(graphs[0], Role.STATE, phase):
            if group.decl.scope == Scope.ITEMS:
                raise PvdGraphError(
                    f"{group.decl.name}: per-item state classes cannot be recorded for a fleet")
            objects = np.concatenate([g.get(group.decl.name)[0].handles for g in graphs])
            for decl, a in _state_attrs(group):
                columns.append(PreparedColumn(objects, handles.attr(decl, a.name), a.elements))
                specs.append((group.decl, a))
        self.block: PreparedAttributes = writer.prepare_attributes(context, columns)
        self.per_vehicle: list[str] = []
        current: ClassDecl | None = None
        for c, (cdecl, a) in enumerate(specs):
            if cdecl is not current:
                current = cdecl
                self._classes.append((cdecl, []))
            get = _attr_get(a)
            label = f"{cdecl.name}.{a.name}"
            assert cdecl.source is not None
            vectorized = _vectorizes(get, cdecl.source, probe, a.chunk, a.dtype.numpy_dtype)
            if not vectorized:
                self.per_vehicle.append(label)
            one = np.asarray(get(cdecl.source(self._members[0])))
            if a.chunk is not None:
                one = one[..., a.chunk[0]:a.chunk[1]]
            column = _FleetColumn(get, a.chunk, self.block.views[c], None, label, vectorized)
            column.fast = _shaped_view(self.block, c, (n,) + one.shape)
            self._classes[-1][1].append(column)

    def fill(self) -> None:
        """Read every state of every member from the batch into the block."""
        for decl, columns in self._classes:
            assert decl.source is not None
            src = decl.source(self._batch)
            if src is None:
                raise _source_gone(decl)
            for column, value in zip(columns, _values(src, columns), strict=True):
                if column.vectorized:
                    _assign(column, value)
                else:
                    self._fill_per_vehicle(decl, column)

    def _fill_per_vehicle(self, decl: ClassDecl, column: _FleetColumn) -> None:
        assert decl.source is not None
        k = column.view.shape[0] // len(self._members)
        for i, member in enumerate(self._members):
            value = np.asarray(column.get(decl.source(member)))
            if column.chunk is not None:
                value = value[..., column.chunk[0]:column.chunk[1]]
            try:
                column.view[i * k:(i + 1) * k] = np.reshape(value, (k, column.view.shape[1]))
            except (ValueError, TypeError) as exc:
                raise PvdGraphError(f"{column.label}: expected {k} x {column.view.shape[1]} values per "
                                    f"vehicle, got shape {np.shape(value)}: {exc}") from None

    def write(self, writer: Any) -> None:
        """Write the block's commands (with the values of the last :meth:`fill`)."""
        writer.write_prepared(self.block)


class _FleetParams:
    """Each member's params groups, written on the first frame and when that member's params
    object changes (params are immutable), plus the groups the fleet shares (road, context),
    checked every frame. Unchanged params cost one identity test per frame for the fleet."""

    def __init__(self, fleet: Any, per_vehicle: list[list[_ParamWriter]], shared: list[_ParamWriter]) -> None:
        self._fleet = fleet
        self._per_vehicle = per_vehicle
        self._shared = shared
        self._last: tuple[Any, ...] | None = None

    def write(self, writer: Any, context: int) -> None:
        params = self._fleet.params
        if params is not self._last:
            last = self._last
            for i, writers in enumerate(self._per_vehicle):
                if last is None or i >= len(last) or params[i] is not last[i]:
                    for w in writers:
                        w.write(writer, context)
            self._last = params
        for w in self._shared:
            w.write(writer, context)


def _fleet_names(fleet: Any, n: int) -> list[str]:
    names = getattr(fleet, "names", None)
    if names is None:
        return [f"vehicle_{i:03d}" for i in range(n)]
    names = [str(x) for x in names]
    if len(names) != n or len(set(names)) != n:
        raise PvdGraphError(f"fleet.names must be {n} distinct names, got {len(names)} "
                            f"({len(set(names))} distinct)")
    return names


# --------------------------------------------------------------------------------------------
# The recorder
# --------------------------------------------------------------------------------------------


@dataclass
class _VehicleRecord:
    graph: VehicleGraph
    params: list[_ParamWriter]
    states: StateBlock
    scene_params: list[_ParamWriter]
    scene_states: StateBlock | None  # None: nothing of this vehicle in the scene frame


@dataclass
class _FleetRecord:
    graphs: list[VehicleGraph]
    params: _FleetParams
    states: FleetStateBlock
    scene_params: _FleetParams
    scene_states: FleetStateBlock | None
    #: The PhysX layout's velocity hand-over block (made on first use; False: no actors).
    write_back: Any = None


def _has_actor(subject: Any) -> bool:
    """True when a component's vehicle (or any member of its fleet) has the PhysX actor layer."""
    target = getattr(subject, "vehicle", None) or getattr(subject, "fleet", None)
    params = getattr(target, "params", None)
    many = params if isinstance(params, list | tuple) else (params,)
    return any(getattr(p, "physx_actor", None) is not None for p in many)


class PvdRecorder:
    """One OmniPVD recording of simcore vehicles (see the module docstring).

    ``writer``: a :class:`pvdkit.writer.OmniPvdWriter` on any stream (``.ovd`` file, HDF5,
    memory). ``context``: the PVD context handle of every object and frame. ``timestamps``:
    ``"ns"`` (simulated time in integer nanoseconds) or ``"frame"`` (PhysX's frame counter).
    ``physx_layout``: record as PhysX does with its actor layer — two frames per step (Vehicle2's
    states, then the scene's results: each actor vehicle's ``PxRigidDynamic``) and PhysX's actor
    classes registered first (:data:`~simcore.pvd.schema.PHYSX_SCHEMA`). None (default): on when
    a vehicle attached before the first frame has ``params.physx_actor``; decided at the first
    frame, for the whole recording. In that layout the ``Vehicle`` objects are roots named
    ``Vehicle`` and a ``PxPhysics`` object lists the actors (``rigidDynamics``), as in PhysX's
    recordings, so that ``pvdkit diff`` pairs them with PhysX's; ``actor_order`` (actor names)
    orders that list as the PhysX scene being compared does (default: the order vehicles join).
    ``first_frame``: the first frame's timestamp with ``timestamps="frame"`` (default 1).
    """

    def __init__(self, writer: Any, *, context: int = 1, timestamps: str = "ns",
                 schema: Schema = SCHEMA, physx_layout: bool | None = None,
                 actor_order: Sequence[str] | None = None, first_frame: int = 1) -> None:
        if timestamps not in _TIMESTAMP_UNITS:
            raise ValueError(f"PvdRecorder: timestamps must be one of {_TIMESTAMP_UNITS}, got {timestamps!r}")
        if not isinstance(context, int) or not 0 <= context < 1 << 64:
            raise ValueError(f"PvdRecorder: context must be an integer in 0..2**64-1, got {context!r}")
        self.writer = writer
        self.context = context
        self.timestamps = timestamps
        #: With ``timestamps="frame"``, the counter before the first frame (a replay from step S of
        #: a PhysX recording continues PhysX's counter, so ``pvdkit diff --align time`` pairs them).
        self._frame_base = first_frame - 1
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
        self._fleets: dict[int, _FleetRecord] = {}
        self._simulation: ObjectGroup | None = None
        self._simulation_block: StateBlock | None = None
        self._frame_open = False
        self._frame_started = False
        self._frame_time: float | None = None
        self._timestamp = 0
        self._closed = False
        self.physx_layout = physx_layout
        self._attached: list[Any] = []
        self._scene_pending: list[_VehicleRecord | _FleetRecord] = []
        self._actor_order = list(actor_order) if actor_order is not None else None
        self._physics: int | None = None
        self._new_actors: list[tuple[str, int]] = []

    # ------------------------------------------------------------------------------ vehicles

    def attach(self, vehicle: Any, name: str = "pvd", *,
               vehicle_name: str | None = None) -> PvdComponent | FleetPvdComponent:
        """Append a PVD component to ``vehicle``'s component sequence (last) and return it.

        ``vehicle_name``: the name of the vehicle's ``Vehicle`` object and of its PhysX actor
        (``PxRigidDynamic.name``); default ``Vehicle``, as PhysX names its Vehicle objects.
        A fleet (anything whose ``states`` are a :class:`~simcore.fleet.states.FleetStates`)
        is recorded as :meth:`attach_fleet` records it (its members' names are ``fleet.names``)."""
        from simcore.fleet.states import FleetStates
        from simcore.pvd.components import PvdComponent

        if isinstance(getattr(vehicle, "states", None), FleetStates):
            return self.attach_fleet(vehicle, name)
        component = PvdComponent(vehicle, self, vehicle_name=vehicle_name)
        sequence = getattr(vehicle, "sequence", None)
        if sequence is None:
            raise PvdGraphError(
                "PvdRecorder.attach: the vehicle has no component sequence (vehicle.sequence)")
        sequence.add(component, name)
        self._attached.append(component)
        return component

    def attach_fleet(self, fleet: Any, name: str = "pvd") -> FleetPvdComponent:
        """Record every member of ``fleet`` (a :class:`~simcore.fleet.fleet.Fleet`) each step:
        append a PVD component to the fleet's sequence (last) and return it.

        Each step is one frame holding one Vehicle2 object graph per member — its ``Vehicle``
        object named ``fleet.names[i]`` (default ``vehicle_000`` …) —, each member's params when
        ``fleet.params[i]`` changes, and every state of every member, written as one array
        assignment per (class, attribute) for the whole fleet (:class:`FleetStateBlock`).
        The fleet needs ``params`` (one per member), ``states`` (a ``FleetStates``), ``sequence``
        and, optionally, ``names``, ``road``, ``context`` and ``time``.
        """
        from simcore.pvd.components import FleetPvdComponent

        sequence = getattr(fleet, "sequence", None)
        if sequence is None:
            raise PvdGraphError(
                "PvdRecorder.attach_fleet: the fleet has no component sequence (fleet.sequence)")
        component = FleetPvdComponent(fleet, self)
        sequence.add(component, name)
        self._attached.append(component)
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
        """Write the simulation clock and close the frame (with the PhysX layout, then write the
        step's second frame: the scene's results)."""
        if not self._frame_open:
            raise PvdError("PvdRecorder.end_frame: no frame is open")
        try:
            if self._frame_started:
                assert self._simulation_block is not None
                self._list_new_actors()
                self._simulation_block.fill()
                self._simulation_block.write(self.writer)
                self.writer.stop_frame(self.context, self._timestamp)
                if self.physx_layout:
                    self._scene_frame()
        finally:
            self._scene_pending.clear()
            self._frame_open = False
            self._frame_started = False

    def _scene_frame(self) -> None:
        """Frame 2i+1 of step i: every actor vehicle's PhysX results (written even when empty,
        so that a step is always two frames). Its timestamp is the next frame counter, or the
        step's time + 1 ns (``timestamps="ns"``)."""
        self.frames += 1
        frame_mode = self.timestamps == "frame"
        self._timestamp = self._frame_base + self.frames if frame_mode else self._timestamp + 1
        self.writer.start_frame(self.context, self._timestamp)
        for rec in self._scene_pending:
            if rec.scene_states is not None:
                rec.scene_states.fill()
                rec.scene_states.write(self.writer)
        self.writer.stop_frame(self.context, self._timestamp)

    @contextmanager
    def frame(self, time: float | None = None) -> Iterator[PvdRecorder]:
        """``with recorder.frame(): car.step(dt); truck.step(dt)`` — one frame for both."""
        self.begin_frame(time)
        try:
            yield self
        finally:
            self.end_frame()

    def _decide_layout(self, component: Any) -> None:
        """Settle :attr:`physx_layout` (and the schema) before anything is registered."""
        if self._handles is not None:
            self.physx_layout = bool(self.physx_layout)
            return
        if self.physx_layout is None:
            self.physx_layout = any(_has_actor(c) for c in [*self._attached, component])
        if self.physx_layout and self.schema is SCHEMA:
            self.schema = PHYSX_SCHEMA

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
            ts = self._frame_base + self.frames
        self._timestamp = ts
        self.writer.start_frame(self.context, ts)
        self._frame_started = True
        handles = self.handles
        if self._simulation is None:
            self._create_simulation(handles)
            if self.physx_layout:
                self._create_physics(handles)

    def _create_simulation(self, handles: SchemaHandles) -> None:
        decl = self.schema["Simulation"]
        group = ObjectGroup(decl, self._alloc.take(1), (decl.object_name,), lambda: self)
        self.writer.create_object(self.context, handles.cls(decl), int(group.handles[0]), decl.object_name)
        self._simulation = group
        self._simulation_block = StateBlock(self.writer, self.context, [group], handles)

    def _create_physics(self, handles: SchemaHandles) -> None:
        decl = self.schema["PxPhysics"]
        self._physics = int(self._alloc.take(1)[0])
        self.writer.create_object(self.context, handles.cls(decl), self._physics, "")
        scale = np.array([1.0, 10.0], dtype=np.float32)  # PxTolerancesScale: length 1 m, speed 10 m/s
        self.writer.set_attribute(self.context, self._physics, handles.attr(decl, "tolerancesScale"), scale)

    def _list_new_actors(self) -> None:
        """Add the actors created in this frame to ``PxPhysics.rigidDynamics`` (in ``actor_order``)."""
        if self._physics is None or not self._new_actors:
            return
        order = self._actor_order or []
        rank = {name: k for k, name in enumerate(order)}
        actors = sorted(self._new_actors, key=lambda a: rank.get(a[0], len(order)))
        decl = self.schema["PxPhysics"]
        attr = self.handles.attr(decl, "rigidDynamics")
        for _, handle in actors:
            self.writer.add_to_unique_list_attribute(self.context, self._physics, attr, np.uint64(handle))
        self._new_actors.clear()

    def _note_actors(self, graph: VehicleGraph, names: Sequence[str]) -> None:
        for group in graph.get("PxRigidDynamic"):
            for name, h in zip(names, group.handles, strict=False):
                self._new_actors.append((name, int(h)))

    def _write_back_velocities(self, graph: VehicleGraph, bodies: Sequence[Any]) -> None:
        """Frame 2i, PhysX layout: the velocities Vehicle2 hands the actor at the end of its update
        (``PxVehicleWriteRigidBodyStateToPhysXActor``), as PhysX records them before its solve."""
        if not self.physx_layout:
            return
        groups = graph.get("PxRigidDynamic")
        if not groups:
            return
        decl = self.schema["PxRigidBody"]
        lin, ang = self.handles.attr(decl, "linearVelocity"), self.handles.attr(decl, "angularVelocity")
        for group, body in zip(groups, bodies, strict=False):
            h = int(group.handles[0])
            for attr, value in ((lin, body.linear_velocity), (ang, body.angular_velocity)):
                self.writer.set_attribute(self.context, h, attr, np.asarray(value, dtype=np.float32))

    def _write_back_fleet(self, rec: _FleetRecord, fleet: Any) -> None:
        """:meth:`_write_back_velocities` for every member at once: one prepared block (two
        columns over the members' actors), one array assignment each per frame."""
        if rec.write_back is None:
            actors = [int(g.handles[0]) for graph in rec.graphs for g in graph.get("PxRigidDynamic")]
            if len(actors) != len(rec.graphs):
                rec.write_back = False
                return
            decl = self.schema["PxRigidBody"]
            rec.write_back = self.writer.prepare_attributes(self.context, [
                PreparedColumn(np.asarray(actors, dtype=np.uint64), self.handles.attr(decl, name))
                for name in ("linearVelocity", "angularVelocity")])
        if rec.write_back is False:
            return
        rb = fleet.states.rigid_body
        rec.write_back.views[0][...] = rb.linear_velocity
        rec.write_back.views[1][...] = rb.angular_velocity
        self.writer.write_prepared(rec.write_back)

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
            self._decide_layout(component)
            self._start(component.time, dt)
            rec = self._vehicles.get(id(component))
            if rec is None:
                name = getattr(component, "vehicle_name", None) or "Vehicle"
                rec = self._vehicles[id(component)] = self._add_vehicle(component.vehicle, name)
            for p in rec.params:
                p.write(self.writer, self.context)
            for p in rec.scene_params:  # PhysX sets an actor's params when it makes or changes it
                p.write(self.writer, self.context)
            rec.states.fill()
            rec.states.write(self.writer)
            if self.physx_layout:
                self._write_back_velocities(rec.graph, [component.vehicle.states.rigid_body])
            if rec.scene_states is not None:
                self._scene_pending.append(rec)
        finally:
            if own_frame:
                self.end_frame()

    def record_fleet(self, component: FleetPvdComponent, dt: float) -> None:
        """Record every member of ``component``'s fleet at the end of a step of ``dt`` (called by
        the component)."""
        self._check_open()
        own_frame = not self._frame_open
        if own_frame:
            self.begin_frame(component.time)
        try:
            self._decide_layout(component)
            self._start(component.time, dt)
            rec = self._fleets.get(id(component))
            if rec is None:
                rec = self._fleets[id(component)] = self._add_fleet(component.fleet)
            rec.params.write(self.writer, self.context)
            rec.scene_params.write(self.writer, self.context)
            rec.states.fill()
            rec.states.write(self.writer)
            if self.physx_layout:
                self._write_back_fleet(rec, component.fleet)
            if rec.scene_states is not None:
                self._scene_pending.append(rec)
        finally:
            if own_frame:
                self.end_frame()

    def _add_fleet(self, fleet: Any) -> _FleetRecord:
        handles = self.handles
        n = len(fleet.params)
        names = _fleet_names(fleet, n)
        graphs: list[VehicleGraph] = []
        per_vehicle: list[list[_ParamWriter]] = []
        per_vehicle_scene: list[list[_ParamWriter]] = []
        shared: list[_ParamWriter] = []
        for i in range(n):
            known = set(self._shared)
            graph = build_vehicle_graph(self.schema, _FleetMember(fleet, i), self._alloc, self._shared,
                                        name=names[i])
            create_graph(self.writer, self.context, handles, graph)
            self._link_simulation(handles, graph, known)
            self._note_actors(graph, [names[i]])
            mine: list[_ParamWriter] = []
            for g in _groups(graph, Role.PARAMS, Phase.VEHICLE):
                (shared if g.decl.shared else mine).append(_ParamWriter(g, handles))
            per_vehicle.append(mine)
            scene = _groups(graph, Role.PARAMS, Phase.SCENE)
            per_vehicle_scene.append([_ParamWriter(g, handles) for g in scene])
            graphs.append(graph)
        params = _FleetParams(fleet, per_vehicle, shared)
        states = FleetStateBlock(self.writer, self.context, fleet, graphs, handles)
        scene_params = _FleetParams(fleet, per_vehicle_scene, [])
        scene_states = None
        if self.physx_layout and _groups(graphs[0], Role.STATE, Phase.SCENE):
            scene_states = FleetStateBlock(self.writer, self.context, fleet, graphs, handles, Phase.SCENE)
        return _FleetRecord(graphs, params, states, scene_params, scene_states)

    def _add_vehicle(self, vehicle: Any, name: str = "Vehicle") -> _VehicleRecord:
        handles = self.handles
        known = set(self._shared)
        graph = build_vehicle_graph(self.schema, vehicle, self._alloc, self._shared, name=name)
        create_graph(self.writer, self.context, handles, graph)
        self._link_simulation(handles, graph, known)
        self._note_actors(graph, [name])
        params = [_ParamWriter(g, handles) for g in _groups(graph, Role.PARAMS, Phase.VEHICLE)]
        states = StateBlock(self.writer, self.context, _groups(graph, Role.STATE, Phase.VEHICLE), handles)
        scene_params: list[_ParamWriter] = []
        scene_states = None
        if self.physx_layout:
            scene_params = [_ParamWriter(g, handles) for g in _groups(graph, Role.PARAMS, Phase.SCENE)]
            scene = _groups(graph, Role.STATE, Phase.SCENE)
            if scene:
                scene_states = StateBlock(self.writer, self.context, scene, handles)
        return _VehicleRecord(graph, params, states, scene_params, scene_states)

    def _link_simulation(self, handles: SchemaHandles, graph: VehicleGraph, known: set) -> None:
        assert self._simulation is not None
        sim = int(self._simulation.handles[0])
        for decl, a in self._simulation.decl.all_attrs():
            if not a.unique_list:
                continue
            if self.physx_layout and a.name == "vehicles":
                continue  # PhysX's Vehicle objects are roots: keep them so, to pair in pvdkit diff
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

    def fleet_record(self, component: FleetPvdComponent) -> tuple[list[VehicleGraph], FleetStateBlock]:
        """The object graphs (one per member) and the state block recorded for ``component``'s
        fleet (after its first frame); ``block.per_vehicle`` lists the accessors evaluated per
        member because they do not vectorize."""
        rec = self._fleets.get(id(component))
        if rec is None:
            raise PvdGraphError("this fleet has not been recorded yet (its first step creates its objects)")
        return rec.graphs, rec.states

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

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        close_keeping(self.close, exc)

