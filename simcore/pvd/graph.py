"""The PVD object graph of a vehicle: which objects exist, their handles, names and links.

Built from the schema declaration: every class with a scope gets one *group* of PVD objects per
vehicle (one object per wheel, per item or a single one) when the vehicle has a source for it.
Object-handle attributes and unique lists then connect them as PhysX does — the ``Vehicle``
object points at its ``WheelAttachment`` objects through ``wheelAttachmentSet``, each wheel
attachment at that wheel's param and state objects, the drivetrain object at its command and
response objects, and so on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simcore.pvd.registry import SchemaHandles
from simcore.pvd.schema import AttrDecl, ClassDecl, Schema, Scope


class PvdGraphError(ValueError):
    """A vehicle or value does not fit the schema (names the class, attribute and what was expected)."""


@dataclass
class ObjectGroup:
    """The PVD objects of one class for one vehicle: one per wheel, one per item, or one.

    ``resolve()`` returns the current source (re-read every frame: states may be replaced);
    ``owner`` is False when the objects belong to another vehicle's graph (shared road or
    context), in which case this vehicle neither creates nor writes them. ``resolve_params``
    (classes with :attr:`ClassDecl.params_source`) returns the source of the params-role
    attributes, the same object while the vehicle's params object is the same.
    """

    decl: ClassDecl
    handles: np.ndarray
    names: tuple[str, ...]
    resolve: Callable[[], Any]
    item: int | None = None
    owner: bool = True
    resolve_params: Callable[[], Any] | None = None

    def __len__(self) -> int:
        return len(self.handles)


@dataclass
class HandleAllocator:
    """Unique, stable object handles for one recording: 1, 2, 3 … as groups are built."""

    next_handle: int = 1

    def take(self, n: int) -> np.ndarray:
        """``n`` fresh handles."""
        out = np.arange(self.next_handle, self.next_handle + n, dtype=np.uint64)
        self.next_handle += n
        return out


@dataclass
class VehicleGraph:
    """All object groups of one vehicle, by class name (ITEMS classes hold one group per item)."""

    groups: dict[str, list[ObjectGroup]] = field(default_factory=dict)

    def __iter__(self) -> Iterator[ObjectGroup]:
        for gs in self.groups.values():
            yield from gs

    def get(self, name: str) -> list[ObjectGroup]:
        """The groups of class ``name`` (empty when the vehicle has no such object)."""
        return self.groups.get(name, [])

    @property
    def vehicle_handle(self) -> int:
        """Handle of the ``Vehicle`` object."""
        return int(self.groups["Vehicle"][0].handles[0])


def nb_wheels_of(vehicle: Any) -> int:
    """The vehicle's wheel count, from its axle description."""
    axles = getattr(vehicle.params, "axle_description", None)
    if axles is None:
        raise PvdGraphError("vehicle.params.axle_description is missing: the PVD graph needs the wheel count")
    return int(axles.nb_wheels)


def build_vehicle_graph(schema: Schema, vehicle: Any, handles: HandleAllocator,
                        shared: dict[tuple[str, int], ObjectGroup], name: str = "Vehicle") -> VehicleGraph:
    """Groups for every vehicle-level class whose source the vehicle has (PhysX's object names).

    ``shared`` maps ``(class name, id(source))`` to the group already made for a shared source
    (a road or context used by several vehicles); such groups are reused with ``owner=False``.
    ``name`` is the vehicle's name: its ``Vehicle`` object's, or with the PhysX layout its actor's
    ``name`` attribute (the ``Vehicle`` object is then named ``Vehicle``, as PhysX names it).
    """
    graph = VehicleGraph()
    n = nb_wheels_of(vehicle)
    for decl in schema.walk():
        if decl.scope in (Scope.NONE, Scope.RECORDING) or decl.source is None:
            continue
        src = decl.source(vehicle)
        if src is None:
            continue
        if decl.scope == Scope.ITEMS:
            items = list(src)
            for i in range(len(items)):
                graph.groups.setdefault(decl.name, []).append(ObjectGroup(
                    decl, handles.take(1), (decl.object_name.format(i=i),),
                    _item_resolver(decl, vehicle, i), item=i))
            continue
        if decl.shared and (decl.name, id(src)) in shared:
            found = shared[(decl.name, id(src))]
            graph.groups[decl.name] = [
                ObjectGroup(decl, found.handles, found.names, found.resolve, owner=False)]
            continue
        k = n if decl.scope == Scope.WHEEL else 1
        names = tuple(decl.object_name.format(i=i) for i in range(k))
        if decl.name == "Vehicle":
            # PhysX names its Vehicle objects "Vehicle" and carries the vehicle's name on the
            # chassis actor; simcore's own layout names the Vehicle object after the vehicle.
            names = ("Vehicle",) if "PxRigidDynamic" in schema else (name,)
        group = ObjectGroup(decl, handles.take(k), names, _resolver(decl, vehicle))
        if decl.params_source is not None:
            group.resolve_params = _params_resolver(decl, vehicle, name)
        graph.groups[decl.name] = [group]
        if decl.shared:
            shared[(decl.name, id(src))] = group
    return graph


def _resolver(decl: ClassDecl, vehicle: Any) -> Callable[[], Any]:
    source = decl.source
    assert source is not None
    return lambda: source(vehicle)


def _params_resolver(decl: ClassDecl, vehicle: Any, name: str) -> Callable[[], Any]:
    """The params source of ``decl``, re-made only when ``vehicle.params`` is a new object."""
    make = decl.params_source
    assert make is not None
    last: list[Any] = [None, None]

    def resolve() -> Any:
        params = vehicle.params
        if params is not last[0]:
            last[0], last[1] = params, make(params, name)
        return last[1]

    return resolve


def _item_resolver(decl: ClassDecl, vehicle: Any, i: int) -> Callable[[], Any]:
    source = decl.source
    assert source is not None

    def resolve() -> Any:
        items = source(vehicle)
        return items[i] if items is not None and i < len(items) else None

    return resolve


# --------------------------------------------------------------------------------------------
# Creating objects and links
# --------------------------------------------------------------------------------------------


def _targets(graph: VehicleGraph, owner: ObjectGroup, i: int, a: AttrDecl) -> list[tuple[ObjectGroup, int]]:
    """``(group, index)`` of the objects an owner object's link points at.

    A per-wheel owner points at the same wheel's object of a per-wheel target (a unique list
    too: PhysX's wheel attachment lists its own wheel's material frictions); otherwise a unique
    list holds every object of the target classes and a plain link points at the first target
    found (PhysX writes no link to an absent object).
    """
    out: list[tuple[ObjectGroup, int]] = []
    for name in a.links:
        for target in graph.get(name):
            if target.decl.scope == Scope.WHEEL and owner.decl.scope == Scope.WHEEL:
                out.append((target, i))
            else:
                out.extend((target, j) for j in range(len(target)))
    return out if a.unique_list else out[:1]


def create_graph(writer: Any, context: int, handles: SchemaHandles, graph: VehicleGraph) -> None:
    """Create the vehicle's objects and write their links, in PhysX's order.

    The ``Vehicle`` object comes first; then, link by link, each target object — an object that
    itself links to others is created after its own targets and gets its links right away (per
    wheel: the wheel's param and state objects, its ``WheelAttachment``, the attachment's links) —
    followed by the Vehicle's link to it. Objects no link reaches are created at the end.
    """
    created: set[int] = set()

    def create(group: ObjectGroup, i: int) -> None:
        h = int(group.handles[i])
        if group.owner and h not in created:
            created.add(h)
            writer.create_object(context, handles.cls(group.decl), h, group.names[i])

    def link(group: ObjectGroup, i: int, decl: ClassDecl, a: AttrDecl, target: ObjectGroup, j: int) -> None:
        owner, ah, th = int(group.handles[i]), handles.attr(decl, a.name), target.handles[j]
        if a.unique_list:
            writer.add_to_unique_list_attribute(context, owner, ah, th)
        else:
            writer.set_attribute(context, owner, ah, th)

    def materialize(group: ObjectGroup, i: int) -> None:
        if not group.owner or int(group.handles[i]) in created:
            return
        links = [(decl, a, _targets(graph, group, i, a)) for decl, a in group.decl.link_attrs]
        for _, _, targets in links:
            for target, j in targets:
                materialize(target, j)
        create(group, i)
        for decl, a, targets in links:
            for target, j in targets:
                link(group, i, decl, a, target, j)

    for root in graph.get("Vehicle"):
        create(root, 0)
        for decl, a in root.decl.link_attrs:
            for target, j in _targets(graph, root, 0, a):
                materialize(target, j)
                link(root, 0, decl, a, target, j)
    for group in graph:
        for i in range(len(group)):
            materialize(group, i)
