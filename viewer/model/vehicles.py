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
from pvdkit import wheels
from pvdkit.names import names_of
from pvdkit.recording import Object, Recording
from pvdkit.wheels import (
    WHEEL_POSITION_SOURCES,
    BodyAxes,
    body_axes,
    recorded_axes,
    wheel_position,
    wheel_sides,
)
from viewer.model.bulk import prefetched, series_of


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
        """This wheel's objects by class name (its list members included), in object order: the
        object tree's grouping (one object of a class: :meth:`pvdkit.names.Wheel.part`)."""
        return _by_class(self.vehicle.info.wheel_parts[self.index])


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
    recorded = recorded_axes(rec, series_of)  # one frame description for the whole scene
    wheel_sources = [(w.part(c), a) for v in vehicles for w in v.wheels for c, a in WHEEL_POSITION_SOURCES]
    if recorded is None:
        wheel_sources += [(w.part("SuspensionParams"), "suspDir") for v in vehicles for w in v.wheels]
    with prefetched(rec, wheel_sources):  # one bulk read for every wheel of a fleet
        for v in vehicles:
            for w in v.wheels:
                w.position = wheel_position(rec, w.part, series_of)
            positions = [w.position for w in v.wheels]
            v.axes = recorded or body_axes(rec, [w.part for w in v.wheels], positions, series_of)
            v._sides = wheel_sides(positions, v.axes)  # pvdkit's Wheel.side, worked out once
            _label_wheels(v, v._sides)
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


def first_value(rec: Recording, obj: Object | None, attribute: str) -> object:
    """:func:`pvdkit.wheels.first_value` through the viewer's prefetched series."""
    return wheels.first_value(rec, obj, attribute, series_of)


# ---------------------------------------------------------------------------------------------
# Wheel labels
# ---------------------------------------------------------------------------------------------


def _label_wheels(v: Vehicle, sides: list[str]) -> None:
    """Label wheels "wheel i", plus their side (:func:`pvdkit.wheels.wheel_sides`), else the last
    part of their attachment's name."""
    for w, side in zip(v.wheels, sides, strict=True):
        extra = side
        if not extra and w.root.name and "/" in w.root.name:
            extra = w.root.name.rsplit("/", 1)[-1]
        w.label = f"wheel {w.index}" + (f" · {extra}" if extra else "")
