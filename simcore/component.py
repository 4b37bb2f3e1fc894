"""Components and the component sequence (``PxVehicleComponent``, ``PxVehicleComponentSequence``).

A vehicle update is an ordered list of components, each of which reads some params and states,
calls pure functions and writes states. Parts of the list can be wrapped in *substep groups*
that run several times per update with a proportionally smaller time step; groups nest.

Semantics (the same as Vehicle2's sequence):

* ``update(dt)`` runs the root group once with ``dt``.
* A group opened with ``begin_substep_group(n)`` inside a group running with multiplier ``m``
  runs its elements ``n`` times with ``dt / (m * n)`` — i.e. a component runs with ``dt`` divided
  by the product of the substep counts of every enclosing group, and as many times.
* If a component's ``update`` returns ``False`` the whole update stops there: nothing after it
  runs, in its group or any enclosing group, and ``update`` returns ``False``.
* At most :data:`~simcore.limits.MAX_NB_COMPONENTS` components and
  :data:`~simcore.limits.MAX_NB_SUBGROUPS` groups, the root group included (so 15 calls to
  ``begin_substep_group``); exceeding either raises :class:`SequenceLimitError`.

Unlike Vehicle2 the sequence can be edited after it is built: :meth:`ComponentSequence.replace`
swaps a component (found by name, instance or type) for the user's own, which is how a custom
tire or suspension model is plugged into a :class:`~simcore.vehicle.Vehicle`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from simcore.context import SimulationContext
from simcore.limits import MAX_NB_COMPONENTS, MAX_NB_SUBGROUPS


class Component(ABC):
    """One step of a vehicle update. Subclasses only wire params/states to pure functions."""

    @abstractmethod
    def update(self, dt: float, context: SimulationContext) -> bool:
        """Advance by ``dt`` (time, > 0). Return ``False`` to abort the rest of the sequence."""


#: A flattened update: (bound ``update`` method, dt divisor) in execution order.
_Plan = list[tuple[Callable[[float, SimulationContext], bool], int]]


class SequenceLimitError(ValueError):
    """Raised when a sequence would exceed Vehicle2's component or group limits."""


@dataclass
class _Group:
    nb_steps: int
    parent: int | None
    elements: list[tuple[str, int]] = field(default_factory=list)
    """Ordered elements: ("component", index into components) or ("group", group index)."""


@dataclass(frozen=True)
class SequenceEntry:
    """A component's place in a sequence, as listed by :meth:`ComponentSequence.entries`.

    ``depth`` is its group nesting depth (0 = root), ``dt_divisor`` the product of the substep
    counts of its enclosing groups (its update runs that many times per ``update`` with
    ``dt / dt_divisor``).
    """

    index: int
    name: str
    component: Component
    depth: int
    group: int
    dt_divisor: int


class ComponentSequence:
    """An ordered list of components with nested substep groups (``PxVehicleComponentSequence``)."""

    def __init__(self) -> None:
        self._components: list[Component] = []
        self._names: list[str] = []
        self._groups: list[_Group] = [_Group(nb_steps=1, parent=None)]
        self._active = 0
        #: The update flattened to (bound update method, dt divisor) in execution order, built on
        #: first use and dropped by every edit: a step then costs one loop, not a walk of groups.
        self._plan: _Plan | None = None

    # --- building ------------------------------------------------------------------------------

    def add(self, component: Component, name: str | None = None) -> int:
        """Append ``component`` to the currently open group; return its index in the sequence.

        ``name`` (default: the class name) lets :meth:`replace` and :meth:`get` find it later;
        names need not be unique (the first match wins).
        """
        if not isinstance(component, Component):
            raise TypeError(
                f"ComponentSequence.add expects a simcore.component.Component, got {type(component).__name__}"
            )
        if len(self._components) >= MAX_NB_COMPONENTS:
            raise SequenceLimitError(
                f"ComponentSequence.add: limit of {MAX_NB_COMPONENTS} components reached "
                "(PxVehicleComponentSequenceLimits::eMAX_NB_COMPONENTS); "
                f"cannot add {type(component).__name__}"
            )
        self._plan = None
        index = len(self._components)
        self._components.append(component)
        self._names.append(name if name is not None else type(component).__name__)
        self._groups[self._active].elements.append(("component", index))
        return index

    def begin_substep_group(self, nb_substeps: int = 1) -> int:
        """Open a nested group running ``nb_substeps`` (>= 1) times; return its handle.

        Subsequent :meth:`add` calls go into this group until :meth:`end_substep_group`.
        """
        n = int(nb_substeps)
        if n != nb_substeps or n < 1:
            raise ValueError(f"begin_substep_group: nb_substeps must be an integer >= 1, got {nb_substeps!r}")
        if len(self._groups) >= MAX_NB_SUBGROUPS:
            raise SequenceLimitError(
                f"ComponentSequence.begin_substep_group: limit of {MAX_NB_SUBGROUPS} groups reached "
                "(the root group counts as one; PxVehicleComponentSequenceLimits::eMAX_NB_SUBGROUPS)"
            )
        self._plan = None
        handle = len(self._groups)
        self._groups.append(_Group(nb_steps=n, parent=self._active))
        self._groups[self._active].elements.append(("group", handle))
        self._active = handle
        return handle

    def end_substep_group(self) -> None:
        """Close the group most recently opened with :meth:`begin_substep_group`."""
        self._plan = None
        parent = self._groups[self._active].parent
        if parent is None:
            raise ValueError("end_substep_group: no substep group is open")
        self._active = parent

    def set_substeps(self, group: int, nb_substeps: int) -> None:
        """Change the substep count of a group (handle from :meth:`begin_substep_group`; 0 = root)."""
        if not 0 <= group < len(self._groups):
            raise IndexError(f"set_substeps: no group with handle {group} (have {len(self._groups)})")
        n = int(nb_substeps)
        if n != nb_substeps or n < 1:
            raise ValueError(f"set_substeps: nb_substeps must be an integer >= 1, got {nb_substeps!r}")
        self._plan = None
        self._groups[group].nb_steps = n

    def get_substeps(self, group: int) -> int:
        """Substep count of a group (0 = root, always 1 unless changed)."""
        return self._groups[group].nb_steps

    # --- editing -------------------------------------------------------------------------------

    def _find(self, key: str | int | Component | type) -> int:
        if isinstance(key, bool):
            raise TypeError("component key must be a name, index, instance or type")
        if isinstance(key, int):
            if not 0 <= key < len(self._components):
                raise IndexError(f"no component at index {key} (sequence has {len(self._components)})")
            return key
        for i, (c, n) in enumerate(zip(self._components, self._names, strict=True)):
            by_type = isinstance(key, type) and isinstance(c, key)
            if (isinstance(key, str) and n == key) or c is key or by_type:
                return i
        raise KeyError(f"no component matching {key!r} in sequence; names: {self._names}")

    def get(self, key: str | int | Component | type) -> Component:
        """The component found by name, index, instance or type (first match)."""
        return self._components[self._find(key)]

    def replace(
        self, key: str | int | Component | type, component: Component, name: str | None = None
    ) -> Component:
        """Swap the component found by ``key`` for ``component`` in place; return the old one.

        The new component takes the old one's position (and substep group). Its name is ``name``
        if given, else the old name, so later lookups by that name keep working.
        """
        if not isinstance(component, Component):
            raise TypeError(f"replace expects a Component, got {type(component).__name__}")
        self._plan = None
        i = self._find(key)
        old = self._components[i]
        self._components[i] = component
        if name is not None:
            self._names[i] = name
        return old

    def names(self) -> list[str]:
        """Component names in insertion order."""
        return list(self._names)

    def entries(self) -> list[SequenceEntry]:
        """Components in execution order with their nesting depth and dt divisor."""
        out: list[SequenceEntry] = []

        def walk(g: int, depth: int, mult: int) -> None:
            m = mult * self._groups[g].nb_steps
            for kind, idx in self._groups[g].elements:
                if kind == "component":
                    out.append(SequenceEntry(idx, self._names[idx], self._components[idx], depth, g, m))
                else:
                    walk(idx, depth + 1, m)

        walk(0, 0, 1)
        return out

    def __iter__(self) -> Iterator[Component]:
        return iter(self._components)

    def __len__(self) -> int:
        return len(self._components)

    @property
    def nb_groups(self) -> int:
        """Number of groups including the root."""
        return len(self._groups)

    def describe(self) -> str:
        """Human-readable outline of the sequence (one line per component / group)."""
        lines: list[str] = []

        def walk(g: int, indent: str, mult: int) -> None:
            m = mult * self._groups[g].nb_steps
            for kind, idx in self._groups[g].elements:
                if kind == "component":
                    c = self._components[idx]
                    lines.append(f"{indent}{self._names[idx]} ({type(c).__name__})")
                else:
                    lines.append(f"{indent}substep group x{self._groups[idx].nb_steps}:")
                    walk(idx, indent + "  ", m)

        walk(0, "", 1)
        return "\n".join(lines)

    # --- running -------------------------------------------------------------------------------

    def update(self, dt: float, context: SimulationContext) -> bool:
        """Run every component once per (sub)step; ``False`` if a component aborted the update."""
        if self._active != 0:
            raise ValueError(
                "ComponentSequence.update: a substep group is still open; call end_substep_group() first"
            )
        if not dt > 0.0:
            raise ValueError(f"ComponentSequence.update: the time step must be positive, got {dt!r}")
        plan = self._plan
        if plan is None:
            plan = self._plan = self._flatten(0, 1)
        dt = float(dt)
        for update, divisor in plan:
            if not update(dt / divisor, context):
                return False
        return True

    def update_split(self, dt: float, context: SimulationContext, group: int,
                     run_group: Callable[[Callable[[int], bool]], bool]) -> bool:
        """Like :meth:`update`, but the top-level substep group ``group`` is run by
        ``run_group(run)``, where ``run(n)`` runs the group's components ``n`` times with ``dt / n``
        (and returns False if one aborted). Why: a batch whose vehicles need different substep
        counts runs that group once per count while everything else runs once."""
        if self._active != 0:
            raise ValueError(
                "ComponentSequence.update: a substep group is still open; call end_substep_group() first"
            )
        if not dt > 0.0:
            raise ValueError(f"ComponentSequence.update: the time step must be positive, got {dt!r}")
        dt = float(dt)

        def run(n: int) -> bool:
            saved = self._groups[group].nb_steps
            self._groups[group].nb_steps = int(n)
            try:
                for update, divisor in self._flatten(group, 1):
                    if not update(dt / divisor, context):
                        return False
                return True
            finally:
                self._groups[group].nb_steps = saved

        for kind, idx in self._groups[0].elements:
            if kind == "group" and idx == group:
                if not run_group(run):
                    return False
                continue
            plan = [(self._components[idx].update, 1)] if kind == "component" else self._flatten(idx, 1)
            for update, divisor in plan:
                if not update(dt / divisor, context):
                    return False
        return True

    def _flatten(self, g: int, parent_mult: int) -> _Plan:
        """Group ``g`` unrolled: each component's update as often as it runs, with its dt divisor
        (the product of the enclosing substep counts, so ``dt / divisor`` is the group's sub-step)."""
        group = self._groups[g]
        mult = parent_mult * group.nb_steps
        once: _Plan = []
        for kind, idx in group.elements:
            if kind == "component":
                once.append((self._components[idx].update, mult))
            else:
                once.extend(self._flatten(idx, mult))
        return once * group.nb_steps
