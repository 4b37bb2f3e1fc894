"""States of a batch of vehicles: every Vehicle2 state with a leading vehicle axis.

A :class:`StateBatch` holds one state kind (``TireForce``, ``RigidBodyState``, ``EngineState`` …)
for every vehicle of a batch as struct-of-arrays: the field ``lng_force`` of a 4-wheel
``TireForce`` is ``(4,)`` for one vehicle and ``(n_vehicles, 4)`` in the batch; a scalar field
(``EngineState.rotation_speed``) becomes ``(n_vehicles,)``. Compiled kernels update these arrays
in place, over (vehicle, wheel).

:func:`member_view` gives one vehicle's state back as an instance of its ordinary class whose
fields read and write the batch's row, so a :class:`~simcore.vehicle.Vehicle` built over it (a
fleet member, ``fleet[i]``) shares memory with the batch: nothing is copied between them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np


def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


class StateBatch:
    """One state kind for every vehicle of a batch (fields as arrays with a leading vehicle axis).

    ``batch.lng_force`` is the ``(n_vehicles, …)`` array; assigning to a field writes into it
    (``batch.throttle = 0.5`` sets every vehicle's throttle), so references held by kernels and
    recorders stay valid.
    """

    __slots__ = ("cls", "arrays", "scalars")

    def __init__(self, cls: type, arrays: dict[str, np.ndarray],
                 scalars: frozenset[str] = frozenset()) -> None:
        object.__setattr__(self, "cls", cls)
        object.__setattr__(self, "arrays", arrays)
        #: Fields that are plain numbers per vehicle (one value per vehicle in the batch).
        object.__setattr__(self, "scalars", scalars)

    @classmethod
    def stack(cls, states: Sequence[Any]) -> StateBatch:
        """Stack the same state kind of several vehicles (each an ordinary state instance)."""
        kind = type(states[0])
        if any(type(s) is not kind for s in states):
            kinds = sorted({type(s).__name__ for s in states})
            raise ValueError(f"StateBatch.stack: states of different kinds {kinds}")
        arrays: dict[str, np.ndarray] = {}
        scalars: set[str] = set()
        for name in _field_names(kind):
            values = [getattr(s, name) for s in states]
            if isinstance(values[0], np.ndarray):
                shapes = {v.shape for v in values}
                if len(shapes) != 1:
                    raise ValueError(f"StateBatch.stack: {kind.__name__}.{name} has shapes {sorted(shapes)} "
                                     "across the batch; a batch shares one topology")
                arrays[name] = np.stack(values)
            else:
                arrays[name] = np.array(values, dtype=_scalar_dtype(values[0]))
                scalars.add(name)
        return cls(kind, arrays, frozenset(scalars))

    @property
    def n_vehicles(self) -> int:
        """Length of the leading vehicle axis."""
        return len(next(iter(self.arrays.values())))

    def __getattr__(self, name: str) -> np.ndarray:
        try:
            return self.arrays[name]
        except KeyError:
            raise AttributeError(f"{self.cls.__name__} batch has no field {name!r} "
                                 f"(fields: {', '.join(self.arrays)})") from None

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self.arrays:
            raise AttributeError(f"{self.cls.__name__} batch has no field {name!r}")
        self.arrays[name][...] = value

    def items(self) -> Iterator[tuple[str, np.ndarray]]:
        """(field name, batch array)."""
        return iter(self.arrays.items())

    def member(self, i: int) -> Any:
        """Vehicle ``i``'s state as an instance of its own class, reading and writing this batch."""
        return member_view(self, i)

    def __repr__(self) -> str:
        return f"StateBatch({self.cls.__name__}, {self.n_vehicles} vehicles, fields={list(self.arrays)})"


def _scalar_dtype(value: Any) -> type:
    if isinstance(value, bool | np.bool_):
        return np.bool_
    if isinstance(value, int | np.integer):
        return np.int64
    return np.float64


class FleetStates:
    """Every state kind of a batch, under :class:`~simcore.vehicle.VehicleStates`' names:
    ``fleet_states.rigid_body.pos`` is ``(n_vehicles, 3)``, ``fleet_states.tire_force.lng_force``
    ``(n_vehicles, n_wheels, …)``. Absent parts (a direct drive's engine) are absent here too."""

    def __init__(self, batches: dict[str, StateBatch]) -> None:
        self._batches = batches

    @classmethod
    def stack(cls, members: Sequence[Any]) -> FleetStates:
        """Stack the :class:`~simcore.vehicle.VehicleStates` of vehicles sharing one topology."""
        names = [tuple(name for name, _ in m.items()) for m in members]
        if any(n != names[0] for n in names):
            raise ValueError("FleetStates.stack: the vehicles have different state sets "
                             "(a batch shares one drivetrain kind)")
        return cls({name: StateBatch.stack([getattr(m, name) for m in members]) for name in names[0]})

    def __getattr__(self, name: str) -> StateBatch:
        batches = self.__dict__.get("_batches", {})
        try:
            return batches[name]
        except KeyError:
            raise AttributeError(f"no state {name!r} in this batch (have {', '.join(batches)})") from None

    def get(self, name: str) -> StateBatch | None:
        """The batch of state ``name``, or None when the vehicles lack that part."""
        return self._batches.get(name)

    def items(self) -> Iterator[tuple[str, StateBatch]]:
        """(state name, batch) for every present state."""
        return iter(self._batches.items())

    def save_rows(self, rows: np.ndarray) -> list[np.ndarray]:
        """Copies of every field's ``rows`` (vehicle indices), for :meth:`restore_rows`: how a batch
        leaves some vehicles out of an update (a sleeping PhysX actor, another substep count)."""
        return [a[rows].copy() for batch in self._batches.values() for a in batch.arrays.values()]

    def restore_rows(self, rows: np.ndarray, saved: list[np.ndarray]) -> None:
        """Put back what :meth:`save_rows` copied."""
        arrays = [a for batch in self._batches.values() for a in batch.arrays.values()]
        for a, values in zip(arrays, saved, strict=True):
            a[rows] = values

    def __contains__(self, name: str) -> bool:
        return name in self._batches


# ------------------------------------------------------------------------------------ member views

_VIEW_CLASSES: dict[type, type] = {}


def member_view(batch: StateBatch, i: int) -> Any:
    """Vehicle ``i``'s row of ``batch`` as an instance of the state's own class.

    Every dataclass field becomes a property over the batch: an array field returns the row (a
    view: in-place edits reach the batch), a scalar field returns a plain Python number, and
    assignment of either writes into the batch. The state's own methods (``set_to_default``,
    ``brake``, ``lng_direction`` …) therefore work unchanged on the shared memory.
    """
    if not -batch.n_vehicles <= i < batch.n_vehicles:
        raise IndexError(f"vehicle {i} out of range for a batch of {batch.n_vehicles}")
    view_cls = _VIEW_CLASSES.get(batch.cls)
    if view_cls is None:
        view_cls = _VIEW_CLASSES[batch.cls] = _make_view_class(batch.cls)
    view = object.__new__(view_cls)
    object.__setattr__(view, "_batch", batch)
    object.__setattr__(view, "_row", int(i) % batch.n_vehicles)
    return view


def _make_view_class(cls: type) -> type:
    namespace: dict[str, Any] = {
        "__slots__": (), "copy": _detached_copy, "__reduce__": _reduce_detached,
        "__doc__": f"One vehicle's {cls.__name__} inside a batch (fields are views).",
    }
    for name in _field_names(cls):
        namespace[name] = property(_getter(name), _setter(name))
    return type(f"{cls.__name__}View", (cls,), namespace)


def _getter(name: str):  # noqa: ANN202 - property factory
    def get(self: Any) -> Any:
        a = self._batch.arrays[name]
        if name in self._batch.scalars:
            return a[self._row].item()
        return a[self._row]

    return get


def _setter(name: str):  # noqa: ANN202 - property factory
    def set_(self: Any, value: Any) -> None:
        self._batch.arrays[name][self._row] = value

    return set_


def _detached_copy(self: Any) -> Any:
    """An ordinary (not batch-backed) deep copy of this vehicle's state."""
    cls = self._batch.cls
    values = {}
    for f in dataclasses.fields(cls):
        v = getattr(self, f.name)
        values[f.name] = v.copy() if isinstance(v, np.ndarray) else v
    copy = object.__new__(cls)
    for k, v in values.items():
        object.__setattr__(copy, k, v)
    return copy


def _reduce_detached(self: Any) -> Any:
    copy = _detached_copy(self)
    return (_rebuild, (type(copy), copy.__dict__))


def _rebuild(cls: type, values: dict[str, Any]) -> Any:
    obj = object.__new__(cls)
    obj.__dict__.update(values)
    return obj
