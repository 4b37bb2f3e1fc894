"""Plot layouts: which attributes of which objects are plotted, per pane, saved and restored.

Why: setting up the same five plots after every open is the chore that makes a debugging tool
unused. A layout names objects by their readable path (``/World/Basic/wheel 1/TireForce``, see
:mod:`pvdkit.names`), not by handle — handles change from run to run, paths do not — and a pane
made from ``Class.attribute`` for a vehicle also keeps that spec, so a layout saved on one
recording gives the same plots for the selected vehicle of another (a simcore ``sedan`` run and
PhysX's ``/World/Basic`` share no paths, but both have ``WheelRigidBodyState``).

The file is JSON::

    {"format": "pvdkit-viewer-layout", "version": 1,
     "panes": [{"title": "...", "spec": "WheelRigidBodyState.correctedRotationSpeed",
                "curves": [{"object": "/World/Basic/wheel 0/WheelRigidBodyState",
                            "attribute": "correctedRotationSpeed", "component": null,
                            "label": "front-left"}]}]}

``component`` is null, an element index or ``"norm"``; ``spec`` is optional, and so is
``"xy": {"x": "TireSlipState.lngSlip", "y": "TireForce.lngForce[z]"}`` (the X–Y panel's specs).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pvdkit.types import PvdError
from viewer.model.series import NORM, Component, Plot, PlotError
from viewer.model.session import RecordingSession
from viewer.model.vehicles import Vehicle

FORMAT = "pvdkit-viewer-layout"
VERSION = 1

#: What the viewer plots on open, in order of preference: a wheel's speed of rotation.
WHEEL_SPEED_SPECS = ("WheelRigidBodyState.correctedRotationSpeed", "WheelRigidBodyState.rotationSpeed")


@dataclass
class CurveSpec:
    """One curve of a pane: an object's path, an attribute and a component, and its legend label."""

    object: str
    attribute: str
    component: Component = None
    label: str = ""


@dataclass
class PaneSpec:
    """One plot: a title, its curves and, when it was made from ``Class.attribute`` for a vehicle,
    that spec (used when the curves' objects do not exist in the recording the layout is applied to)."""

    title: str
    curves: list[CurveSpec] = field(default_factory=list)
    spec: str | None = None


#: Most panes a layout file may hold: each is a plot stacked in the window (tens of ms to build),
#: and a hostile file with thousands kept the viewer busy for minutes.
MAX_PANES = 64


@dataclass
class Layout:
    """Plot panes (and the X–Y specs) saved by the viewer, per user or to a file to share."""

    panes: list[PaneSpec] = field(default_factory=list)
    #: The X–Y panel's (x spec, y spec), or None (optional in the file: older layouts lack it).
    xy: tuple[str, str] | None = None

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "panes": [
            {"title": p.title, **({"spec": p.spec} if p.spec else {}),
             "curves": [{"object": c.object, "attribute": c.attribute, "component": c.component,
                         "label": c.label} for c in p.curves]} for p in self.panes],
            **({"xy": {"x": self.xy[0], "y": self.xy[1]}} if self.xy else {})}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_json(cls, text: str, source: str = "layout") -> Layout:
        """Read a layout; :class:`PvdError` saying what is wrong with a file that is not one."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise PvdError(f"{source}: not JSON ({exc})") from None
        except RecursionError:
            raise PvdError(f"{source}: not a viewer layout (JSON nested too deeply)") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise PvdError(f"{source}: not a viewer layout (expected \"format\": \"{FORMAT}\")")
        version = data.get("version")
        if type(version) is not int or version != VERSION:  # true == 1 in Python
            raise PvdError(f"{source}: layout version {str(version)[:40]!r}; this viewer reads {VERSION}")
        panes = data.get("panes")
        if not isinstance(panes, list):
            raise PvdError(f"{source}: \"panes\" must be a list")
        if len(panes) > MAX_PANES:
            raise PvdError(f"{source}: {len(panes)} panes; a layout holds at most {MAX_PANES} (each is a "
                           "plot stacked in the window)")
        out = cls()
        for i, p in enumerate(panes):
            if not isinstance(p, dict) or not isinstance(p.get("curves", []), list):
                raise PvdError(f"{source}: pane {i} must be an object with a \"curves\" list")
            curves = []
            for c in p.get("curves", []):
                if not isinstance(c, dict) or not isinstance(c.get("object"), str) \
                        or not isinstance(c.get("attribute"), str):
                    raise PvdError(f"{source}: pane {i}: each curve needs \"object\" and "
                                   "\"attribute\" strings")
                comp = c.get("component")
                if not (comp is None or comp == NORM or (type(comp) is int and comp >= 0)):
                    raise PvdError(f"{source}: pane {i}: component {comp!r}: expected null, an index or "
                                   f"\"{NORM}\"")
                curves.append(CurveSpec(c["object"], c["attribute"], comp, str(c.get("label", ""))))
            spec = p.get("spec")
            spec = spec if isinstance(spec, str) else None
            out.panes.append(PaneSpec(str(p.get("title", "")), curves, spec))
        xy = data.get("xy")
        if xy is not None:
            if not (isinstance(xy, dict) and isinstance(xy.get("x"), str) and isinstance(xy.get("y"), str)):
                raise PvdError(f"{source}: \"xy\" must be an object with \"x\" and \"y\" specs (strings)")
            out.xy = (xy["x"], xy["y"])
        return out


def capture(plots: list[Plot], session: RecordingSession) -> Layout:
    """The layout of the plots shown (objects by readable path)."""
    objects = session.recording.objects
    return Layout([PaneSpec(p.title, [CurveSpec(session.path_of(objects[c.key.object_index]), c.key.attribute,
                                                c.key.component, c.label) for c in p.curves], p.spec)
                   for p in plots])


def wheel_speed_spec(session: RecordingSession, vehicle: Vehicle) -> str | None:
    """What the start view plots for ``vehicle``: the first of :data:`WHEEL_SPEED_SPECS` its wheels
    have, else any per-wheel attribute named like ``rotationSpeed`` (None if there is none)."""
    rec = session.recording
    for spec in WHEEL_SPEED_SPECS:
        cname, attr = spec.split(".", 1)
        if cname in rec.classes and attr in rec.classes[cname].paths and vehicle.wheel_objects(cname):
            return spec
    if not vehicle.wheels:
        return None
    w = vehicle.wheels[0]
    for o in [w.root] + w.objects():
        if o.cls is None:
            continue
        for path in o.cls.paths:
            if path.lower().endswith("rotationspeed"):
                return f"{o.cls.name}.{path}"
    return None


def start_layout(session: RecordingSession, vehicle: Vehicle | None = None) -> Layout:
    """The view a recording opens on: the wheel speeds of ``vehicle`` (default the first), one
    curve per wheel; empty for a recording without vehicles or wheel speeds."""
    v = vehicle or (session.vehicles[0] if session.vehicles else None)
    spec = wheel_speed_spec(session, v) if v is not None else None
    return Layout([PaneSpec(spec, [], spec)]) if spec else Layout()


class Resolver:
    """Objects by readable path in one recording (the table is built on first use)."""

    def __init__(self, session: RecordingSession) -> None:
        self.session = session
        self._by_path: dict[str, int] | None = None

    def find(self, path: str):
        if self._by_path is None:
            objs = self.session.recording.objects
            self._by_path = {}
            for o in objs:
                self._by_path.setdefault(self.session.path_of(o), o.index)
        i = self._by_path.get(path)
        return None if i is None else self.session.recording.objects[i]


def check_curve(session: RecordingSession, obj, attribute: str, component: Component) -> None:
    """Raise :class:`PlotError` unless ``attribute`` of ``obj`` can be plotted with ``component``."""
    from viewer.model.series import extract_curve

    if obj.cls is None or attribute not in obj.cls.paths:
        raise PlotError(f"{session.path_of(obj)} has no attribute {attribute!r}")
    extract_curve(session.recording, obj, attribute, component)
