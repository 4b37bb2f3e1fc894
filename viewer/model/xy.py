"""One attribute against another: the points of an X–Y plot (force against slip, per wheel).

Why: a time plot shows how a tire force and a slip evolve; the tire's curve — force as a
function of slip, where it saturates, whether it is the curve the params describe — shows
only with one against the other. :func:`xy_pairs` resolves both ``Class.attribute[component]``
specs as the plot box does (:func:`viewer.model.series.resolve_targets`: per wheel for a
wheel's class) and pairs them wheel by wheel, a vehicle-level attribute with every wheel;
:func:`xy_curve` samples them on the frames where the y attribute was written, x as held there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pvdkit.recording import Object
from pvdkit.units import unit_of
from viewer.model.downsample import zoh_values
from viewer.model.series import CurveData, CurveKey, PlotError, PlotTarget, curve_title, resolve_targets
from viewer.model.session import RecordingSession
from viewer.model.vehicles import Vehicle

__all__ = ["XYCurve", "XYPair", "xy_curve", "xy_pairs"]


@dataclass(frozen=True)
class XYPair:
    """One X–Y curve to draw: its label (the wheel's) and the two curves it pairs."""

    label: str
    x: CurveKey
    y: CurveKey


@dataclass(frozen=True)
class XYCurve:
    """Points ``(x[i], y[i])`` at ``frames[i]``, sorted by frame."""

    label: str
    frames: np.ndarray
    x: np.ndarray
    y: np.ndarray

    def at(self, frame: int) -> tuple[float, float] | None:
        """The point in force at ``frame`` (the last at or before it; None before the first)."""
        i = int(np.searchsorted(self.frames, frame, side="right")) - 1
        return (float(self.x[i]), float(self.y[i])) if i >= 0 else None


def xy_pairs(session: RecordingSession, x_spec: str, y_spec: str, context: Object | None = None,
             vehicle: Vehicle | None = None) -> tuple[str, str, list[XYPair]]:
    """The titles of both axes and the pairs to draw for ``x_spec`` against ``y_spec`` in the
    vehicle of ``context`` (or ``vehicle``): per wheel when both are wheel attributes, one x
    with every y (or the reverse) when one side has a single object. :class:`PlotError` naming
    the spec that cannot be plotted, or when the two have no wheel in common."""
    rec, vehicles = session.recording, session.vehicles
    tx = resolve_targets(rec, vehicles, x_spec, context, vehicle)
    ty = resolve_targets(rec, vehicles, y_spec, context, vehicle)

    def key(t: PlotTarget, obj: Object) -> CurveKey:
        return CurveKey(obj.index, t.attribute, t.component)

    if len(tx.objects) == 1:
        pairs = [XYPair(label, key(tx, tx.objects[0][1]), key(ty, o)) for label, o in ty.objects]
    elif len(ty.objects) == 1:
        pairs = [XYPair(label, key(tx, o), key(ty, ty.objects[0][1])) for label, o in tx.objects]
    else:
        by_label = dict(ty.objects)
        pairs = [XYPair(label, key(tx, o), key(ty, by_label[label])) for label, o in tx.objects
                 if label in by_label]
    if not pairs:
        raise PlotError(f"{tx.title} and {ty.title} have no wheel or object in common to pair")
    return _axis_title(tx), _axis_title(ty), pairs


def _axis_title(t: PlotTarget) -> str:
    """``TireForce.lngForce [N]``, ``|RigidBodyState.linearVelocity| [m/s]``."""
    obj = t.objects[0][1]
    unit = unit_of(obj.cls, t.attribute) if obj.cls is not None else None
    return curve_title(t.spec.split("[")[0], t.component) + (f" [{unit}]" if unit else "")


def xy_curve(label: str, cx: CurveData, cy: CurveData) -> XYCurve:
    """The points of ``cy`` against ``cx``: at each frame where y was written, x as held there
    (zero-order hold); points where either is not a finite number are left out."""
    frames = np.asarray(cy.frames, np.int64)
    x = zoh_values(cx.frames, cx.values, frames)
    y = np.asarray(cy.values, np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    return XYCurve(label, frames[ok], x[ok], y[ok])
