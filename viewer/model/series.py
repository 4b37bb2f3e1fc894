"""Curves for the plots: numeric series extraction, per-wheel plot specs and the plots model.

A curve is one scalar per sample — an attribute of one object, or one element (or the length)
of a vector attribute — kept as two numpy arrays (sample frames, float64 values), so a 1M-sample
curve is 12 MB and never a million Python objects. Plots hold curves; "plot
``TireForce.lngForce`` for a vehicle" asks the vehicle graph (:mod:`viewer.model.vehicles`) for
that class on every wheel and makes one curve per wheel, labelled with the wheel.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from pvdkit.names import NORM, POSE_WIDTH, element_name, is_pose, names_of, resolve_spec
from pvdkit.recording import ListSeries, Object, Recording
from pvdkit.types import DataType, PvdError
from viewer.model.downsample import zoh_values
from viewer.model.signals import Signal
from viewer.model.vehicles import Vehicle, vehicle_of

#: Component of a vector attribute a curve shows: None (a scalar attribute), an element index,
#: or "norm" (the Euclidean length of the vector).
Component = int | str | None

class PlotError(PvdError):
    """An attribute that cannot be plotted (not numeric, unknown, no such component)."""


def component_label(component: Component, width: int = 3) -> str:
    """A property row's element: ``x``/``y``/``z``/``w`` in short vectors, a pose's ``qx`` …
    ``z``, ``[i]`` otherwise, ``|v|`` for norm."""
    if component is None:
        return ""
    if component == NORM:
        return "|v|"
    name = element_name(int(component), width)
    return f"[{name}]" if name.isdigit() else name


def curve_title(name: str, component: Component, width: int = 3) -> str:
    """``TireForce.lngForce[z]``, ``|TireForce.lngForce|`` (length), ``globalPose[z]`` or the
    bare name."""
    if component is None:
        return name
    if component == NORM:
        return f"|{name}|"
    return f"{name}[{element_name(int(component), width)}]"


@dataclass(frozen=True)
class CurveKey:
    """What a curve shows: an attribute (dotted path) of one object lifetime, and a component."""

    object_index: int
    attribute: str
    component: Component = None


@dataclass(eq=False)
class CurveData:
    """Sample frames (sorted int) and float64 values of one curve."""

    frames: np.ndarray
    values: np.ndarray

    def __len__(self) -> int:
        return len(self.frames)

    def value_at(self, frame: int) -> float:
        """Zero-order hold: the last value at or before ``frame`` (NaN before the first sample)."""
        i = int(np.searchsorted(self.frames, frame, side="right")) - 1
        return float(self.values[i]) if i >= 0 else float("nan")

    @property
    def nbytes(self) -> int:
        return int(self.frames.nbytes + self.values.nbytes)


def curves_csv(frames: np.ndarray, seconds: np.ndarray | None, columns: list[tuple[str, CurveData]]) -> str:
    """CSV text of curves on a grid of frames: ``frame``, ``time [s]`` (when ``seconds`` is
    given: the time of each frame), then one column per ``(title, curve)`` holding the value in
    force at each frame (zero-order hold, as the plot draws it; empty before a curve's first
    sample). Floats are written in full (``repr``): pasted into a notebook they read back equal."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["frame", *(["time [s]"] if seconds is not None else []), *(t for t, _ in columns)])
    held = [zoh_values(c.frames, c.values, frames) for _, c in columns]
    for i, f in enumerate(frames.tolist()):
        row: list[object] = [f]
        if seconds is not None:
            row.append(repr(float(seconds[i])))
        row += ["" if math.isnan(v) else repr(v) for v in (float(h[i]) for h in held)]
        w.writerow(row)
    return out.getvalue()


def attribute_width(rec: Recording, obj: Object, attribute: str) -> int:
    """Elements per sample of a numeric attribute as recorded (1 for scalars); raises
    :class:`PlotError` for attributes that are not numbers."""
    s = rec.series(obj, attribute)
    if isinstance(s, ListSeries):
        raise PlotError(f"{attribute} of {obj.name or hex(obj.handle)} is a unique list, not a number")
    a = s.attribute
    if a is not None and a.data_type in (DataType.STRING, DataType.OBJECT_HANDLE):
        raise PlotError(f"{attribute} is a {a.data_type.name.lower()}, not a number")
    raw = s.raw
    if isinstance(raw, np.ndarray):
        if raw.dtype.kind not in "iuf" and not (a is not None and a.kind == "flags"):
            raise PlotError(f"{attribute} holds {raw.dtype} values, not numbers")
        return 1 if raw.ndim == 1 else int(raw.shape[1])
    return max((len(r) for r in raw), default=1)


def default_component(width: int) -> Component:
    """Scalars need none; vectors default to their length (one curve per object stays readable)."""
    return None if width <= 1 else NORM


def extract_curve(rec: Recording, obj: Object, attribute: str, component: Component = None) -> CurveData:
    """The curve of one attribute of one object (enums and flags as their integer values).

    A vector attribute needs a component (element index or "norm"); a scalar takes None or 0.
    Raises :class:`PlotError` for non-numeric attributes or a component out of range.
    """
    s = rec.series(obj, attribute)
    width = attribute_width(rec, obj, attribute)
    raw = s.raw
    frames = np.asarray(s.frames)
    if isinstance(raw, np.ndarray):
        arr = raw.astype(np.float64) if raw.ndim == 1 else raw
        if arr.ndim == 1:
            if component not in (None, 0, NORM):
                raise PlotError(f"{attribute} is a scalar; it has no component {component!r}")
            values = np.abs(arr) if component == NORM else arr
        else:
            values = _pick(arr.astype(np.float64, copy=False), component, width, attribute)
    else:
        # Variable-length samples: element by element, NaN where a sample is too short.
        values = np.array([_pick_one(np.asarray(r, np.float64), component) for r in raw], np.float64)
    return CurveData(frames, np.ascontiguousarray(values, np.float64))


def _pick(arr: np.ndarray, component: Component, width: int, attribute: str) -> np.ndarray:
    if component is None:
        if width == 1:
            return arr[:, 0]
        raise PlotError(f"{attribute} has {width} elements: choose a component (x, y, z, [i] or norm)")
    if component == NORM:
        return np.sqrt(np.einsum("ij,ij->i", arr, arr))
    i = int(component)
    if not 0 <= i < width:
        raise PlotError(f"{attribute} has {width} elements; component {i} is out of range")
    return arr[:, i]


def _pick_one(r: np.ndarray, component: Component) -> float:
    if component == NORM:
        return float(np.sqrt(np.dot(r, r)))
    i = 0 if component is None else int(component)
    return float(r[i]) if i < len(r) else float("nan")


class CurveCache:
    """Extracted curves by key, least recently used dropped beyond ``max_bytes``."""

    def __init__(self, recording: Recording, max_bytes: int = 512 << 20) -> None:
        self.recording = recording
        self.max_bytes = max_bytes
        self._items: OrderedDict[CurveKey, CurveData] = OrderedDict()
        self._bytes = 0

    def get(self, key: CurveKey) -> CurveData:
        d = self._items.get(key)
        if d is not None:
            self._items.move_to_end(key)
            return d
        obj = self.recording.objects[key.object_index]
        d = extract_curve(self.recording, obj, key.attribute, key.component)
        self._items[key] = d
        self._bytes += d.nbytes
        while self._bytes > self.max_bytes and len(self._items) > 1:
            _, old = self._items.popitem(last=False)
            self._bytes -= old.nbytes
        return d

    @property
    def nbytes(self) -> int:
        return self._bytes

    def clear(self) -> None:
        self._items.clear()
        self._bytes = 0


# ---------------------------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------------------------

_ids = itertools.count(1)


@dataclass(eq=False)
class Curve:
    """A curve in a plot: what it shows, its legend label and palette colour index."""

    key: CurveKey
    label: str
    color: int = 0


@dataclass(eq=False)
class Plot:
    """One plot of the stack: a title and its curves."""

    title: str
    curves: list[Curve] = field(default_factory=list)
    id: int = field(default_factory=lambda: next(_ids))
    #: ``Class.attribute[component]`` when the plot was made from one for a vehicle (layouts
    #: keep it, so the plot can be made again for another recording's vehicle).
    spec: str | None = None


@dataclass(frozen=True)
class PlotTarget:
    """Result of resolving "CLASS.ATTRIBUTE" in a context: title and (label, object) pairs."""

    title: str
    attribute: str
    component: Component
    objects: list[tuple[str, Object]]
    spec: str = ""


def resolve_targets(rec: Recording, vehicles: list[Vehicle], spec: str, context: Object | None = None,
                    vehicle: Vehicle | None = None, limit: int = 32) -> PlotTarget:
    """Objects to plot for ``"CLASS.ATTRIBUTE[component]"``.

    In a vehicle (``vehicle``, or the one ``context`` belongs to): a per-wheel class gives one
    object per wheel (labelled with the wheel), a vehicle-wide class its one object. Otherwise
    ``context`` itself if it is of that class, else every object of the class (at most ``limit``).
    The component defaults to the vector's length for vectors (see :func:`default_component`).
    Raises :class:`PlotError` naming the class or attribute that does not exist.
    """
    try:
        resolved = resolve_spec(rec, spec)
    except PvdError as exc:
        raise PlotError(str(exc)) from None
    cls_name, attr, comp = resolved.cls.name, resolved.attr, resolved.element
    if vehicle is None and context is not None:
        vehicle = vehicle_of(vehicles, context)[0]
    objs: list[tuple[str, Object]] = []
    where = ""
    if vehicle is not None:
        per_wheel = vehicle.wheel_objects(cls_name)
        if per_wheel:
            objs = [(w.label, o) for w, o in per_wheel]
        else:
            o = vehicle.part(cls_name)
            if o is not None:
                objs = [(o.name or cls_name, o)]
        where = f" · {vehicle.name}"
    if not objs:
        # Labelled by their paths (/World/Standard/EngineState): by their names, the engines of
        # two vehicles were both "EngineState", and an unnamed scene "0x557221bb6d20".
        paths = names_of(rec)
        if context is not None and context.cls is not None and context.cls.is_a(cls_name):
            objs = [(paths.path(context), context)]
            where = ""
        else:
            found = rec.objects_of_class(cls_name)
            objs = [(paths.path(o), o) for o in found[:limit]]
            where = ""
    if not objs:
        raise PlotError(f"no object of class {cls_name} to plot")
    width = attribute_width(rec, objs[0][1], attr)  # raises for non-numeric attributes
    pose = is_pose(resolved.leaf)
    if comp is None:
        if pose:
            raise PlotError(f"{cls_name}.{attr} is a pose (PxTransform: q.x q.y q.z q.w p.x p.y p.z); plot "
                            "one element: [x], [y] or [z] (its position) or [qx] … [qw] (its rotation)")
        comp = default_component(width)
    title_width = POSE_WIDTH if pose else width
    spec_text = f"{cls_name}.{attr}" + ("" if comp is None else f"[{element_name(comp, title_width)}]"
                                         if comp != NORM else f"[{NORM}]")
    return PlotTarget(f"{curve_title(cls_name + '.' + attr, comp, title_width)}{where}", attr, comp, objs,
                      spec_text)


class PlotsModel:
    """The stack of plots.

    Signals:

    ==================  ================  ==============================================
    signal              arguments         emitted when
    ==================  ================  ==============================================
    ``plot_added``      ``plot: Plot``    a plot was appended to the stack
    ``plot_removed``    ``plot: Plot``    a plot was removed
    ``plot_changed``    ``plot: Plot``    curves were added to or removed from a plot
    ``plots_replaced``  (none)            many changes at once (:meth:`batch`)
    ==================  ================  ==============================================
    """

    def __init__(self) -> None:
        self.plot_added = Signal("plot_added")
        self.plot_removed = Signal("plot_removed")
        self.plot_changed = Signal("plot_changed")
        self.plots_replaced = Signal("plots_replaced")
        self.plots: list[Plot] = []
        self._batches = 0  # nested batch() blocks open

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Make many changes as one: the signals per plot are held and ``plots_replaced`` is
        emitted once at the end. Why: a view rebuilds its panels at each signal, so restoring a
        layout of n plots plot by plot built n² panels (8 s for 20 plots of a fleet)."""
        self._batches += 1
        try:
            with self.plot_added.blocked(), self.plot_removed.blocked(), self.plot_changed.blocked():
                yield
        finally:
            self._batches -= 1
            if not self._batches:  # the outermost batch; the view follows whatever stopped it
                self.plots_replaced.emit()

    def add_plot(self, title: str) -> Plot:
        p = Plot(title)
        self.plots.append(p)
        self.plot_added.emit(p)
        return p

    def remove_plot(self, plot: Plot) -> None:
        if plot in self.plots:
            self.plots.remove(plot)
            self.plot_removed.emit(plot)

    def clear(self) -> None:
        with self.batch():
            for p in list(self.plots):
                self.remove_plot(p)

    def add_curve(self, plot: Plot, obj: Object, attribute: str, component: Component = None,
                  label: str | None = None) -> Curve:
        """Add one curve to ``plot`` (colours follow the order of curves in the plot)."""
        key = CurveKey(obj.index, attribute, component)
        for c in plot.curves:
            if c.key == key:
                return c
        text = label or curve_title((obj.name or f"0x{obj.handle:x}") + f".{attribute}", component)
        c = Curve(key, text, len(plot.curves))
        plot.curves.append(c)
        self.plot_changed.emit(plot)
        return c

    def remove_curve(self, plot: Plot, curve: Curve) -> None:
        if curve in plot.curves:
            plot.curves.remove(curve)
            self.plot_changed.emit(plot)

    def relabel(self, rec: Recording, vehicles: list[Vehicle]) -> None:
        """Titles and legend labels again, for plots made for a vehicle from a spec, when the
        same objects resolve (a live recording named the vehicle — its actor arrived — or told
        its wheels' sides after the plot was made: "· Vehicle" and "wheel 0" stayed)."""
        for plot in self.plots:
            if not plot.spec or not plot.curves:
                continue
            first = rec.objects[plot.curves[0].key.object_index]
            vehicle = vehicle_of(vehicles, first)[0]
            if vehicle is None:
                continue
            try:
                target = resolve_targets(rec, vehicles, plot.spec, vehicle=vehicle)
            except PlotError:
                continue
            if [o.index for _, o in target.objects] != [c.key.object_index for c in plot.curves]:
                continue  # other objects now: the plot stays as made
            if plot.title != target.title or any(c.label != label for c, (label, _) in
                                                 zip(plot.curves, target.objects, strict=True)):
                plot.title = target.title
                for c, (label, _) in zip(plot.curves, target.objects, strict=True):
                    c.label = label
                self.plot_changed.emit(plot)

    def add_target(self, target: PlotTarget, plot: Plot | None = None) -> Plot:
        """Add the curves of a resolved target, in a new plot unless ``plot`` is given."""
        if plot is None:
            plot = Plot(target.title, spec=target.spec or None)
            for label, obj in target.objects:
                plot.curves.append(Curve(CurveKey(obj.index, target.attribute, target.component), label,
                                         len(plot.curves)))
            self.plots.append(plot)
            self.plot_added.emit(plot)
            return plot
        with self.plot_changed.blocked():
            for label, obj in target.objects:
                self.add_curve(plot, obj, target.attribute, target.component, label)
        self.plot_changed.emit(plot)
        return plot
