"""Names for integer values: registered enums and Vehicle2's gear indices.

Why: a plot or a property row that reads ``2`` for a gear says nothing until one remembers that
Vehicle2 counts gears from reverse (index 0 reverse, then neutral at ``GearboxParams.neutralGear``
— 1 by default —, then first, second …). Enums registered with names (``DirectDriveGear``,
``PxActorType``) are decoded by the query model in the property view already, but a plot holds
their integer values; :class:`ValueNames` gives both views the same names for the same numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pvdkit.recording import Object
from viewer.model.session import RecordingSession
from viewer.model.vehicles import first_value

#: Attributes that hold a Vehicle2 gear index: (class name, attribute name).
GEAR_ATTRIBUTES = frozenset({
    ("GearboxState", "currentGear"),
    ("GearboxState", "targetGear"),
    ("EngineDriveTransmissionCommandState", "targetGear"),
    ("TankDriveTransmissionCommandState", "targetGear"),
})

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
             "tenth")
#: At most this many names are put on a plot's value axis (more would overlap).
MAX_TICKS = 16


def gear_name(index: int, neutral: int = 1) -> str:
    """Vehicle2's gear ``index`` read by name: below ``neutral`` reverse gears, then neutral,
    then ``first``, ``second`` … (``gear 11`` past the tenth)."""
    if index < neutral:
        k = neutral - index
        return "reverse" if k == 1 else f"reverse {k}"
    if index == neutral:
        return "neutral"
    k = index - neutral
    return _ORDINALS[k - 1] if k <= len(_ORDINALS) else f"gear {k}"


@dataclass(frozen=True)
class ValueNames:
    """Names of the integer values of one attribute: a fixed table (a registered enum) or gear
    indices counted from ``neutral``."""

    kind: str  # "enum NAME" or "gear"
    table: tuple[tuple[int, str], ...] = ()
    neutral: int = 1

    def name(self, value: float) -> str | None:
        """The name of ``value`` (None for NaN, fractions or values the enum does not name)."""
        if value is None or not math.isfinite(value) or value != int(value):
            return None
        v = int(value)
        if self.kind == "gear":
            return gear_name(v, self.neutral) if v >= 0 else None
        return dict(self.table).get(v)

    def text(self, value: float) -> str | None:
        """``"first (2)"``: the name with the recorded number beside it; None without a name."""
        n = self.name(value)
        return None if n is None else f"{n} ({int(value)})"

    def ticks(self, lo: float, hi: float) -> list[tuple[int, str]]:
        """(value, name) for a value axis spanning ``lo`` … ``hi`` (at most :data:`MAX_TICKS`)."""
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return []
        if self.kind == "gear":
            values = range(max(math.ceil(lo), 0), math.floor(hi) + 1)
            out = [(v, gear_name(v, self.neutral)) for v in values]
        else:
            out = [(v, n) for v, n in self.table if lo <= v <= hi]
        return out if len(out) <= MAX_TICKS else []


def value_names(session: RecordingSession, obj: Object, attribute: str) -> ValueNames | None:
    """How the values of ``attribute`` of ``obj`` read by name, or None when they are plain
    numbers: enum classes registered with names (not flags, not PhysX's booleans) and Vehicle2's
    gear indices (neutral from the vehicle's ``GearboxParams.neutralGear``, else 1)."""
    cls = obj.cls
    if cls is None or attribute not in cls.paths:
        return None
    attr = cls.paths[attribute][-1]
    enum = attr.enum_class if attr.kind == "flags" else None
    if enum is not None:
        if enum.is_flags or enum.is_bool or not enum.enum_values:
            return None
        table: dict[int, str] = {}
        for name, value in enum.enum_values.items():
            table.setdefault(int(value), name)
        return ValueNames(f"enum {enum.name}", tuple(sorted(table.items())))
    leaf = attribute.rsplit(".", 1)[-1]
    if not any(c.name == cname and leaf == a for c in cls.mro for cname, a in GEAR_ATTRIBUTES):
        return None
    neutral = 1
    vehicle = session.vehicle_of(obj)[0]
    params = vehicle.part("GearboxParams") if vehicle is not None else None
    got = first_value(session.recording, params, "neutralGear")
    if got is not None:
        try:
            neutral = int(got)  # type: ignore[call-overload]
        except (TypeError, ValueError):
            neutral = 1
    return ValueNames("gear", neutral=neutral)
