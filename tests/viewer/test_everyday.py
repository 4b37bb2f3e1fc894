"""Issue 17's viewer part, offscreen: the start view, names instead of handles, the attribute
filter, full frame ranges, A − B clipped to common frames, gear and enum names, units and the
time axis, three recordings compared at once, and plot layouts saved, loaded and given with
``--layout``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication

from pvdkit.types import PvdError
from tests.viewer.conftest import DATA, FIXTURE, close_windows, write_recording
from viewer.model.compare import ComparisonSet
from viewer.model.downsample import zoh_values
from viewer.model.layout import Layout
from viewer.model.series import CurveKey
from viewer.model.session import RecordingSession, object_tree
from viewer.model.values import gear_name
from viewer.widgets import theme
from viewer.widgets.main_window import MainWindow

DEV_DRIVE = DATA / "dev_drive.h5"
SPEED = "WheelRigidBodyState.correctedRotationSpeed"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sedan(tmp_path_factory) -> Path:
    """simcore's sedan, recorded in PhysX's layout (two frames per step)."""
    from simcore.cli.record import record

    out = tmp_path_factory.mktemp("sedan") / "sedan.h5"
    record("sedan", "accelerate", duration=0.5, out=out)
    return out


@pytest.fixture
def window(qtbot, tmp_path):
    theme.apply(QApplication.instance())
    made: list[MainWindow] = []

    def make(path: Path | None = DEV_DRIVE, settings: str = "viewer.ini") -> MainWindow:
        win = MainWindow(settings=QSettings(str(tmp_path / settings), QSettings.Format.IniFormat))
        qtbot.addWidget(win)
        win.resize(1400, 900)
        win.show()
        if path is not None:
            win.open_file(str(path), wait=True)
        made.append(win)
        return win

    yield make
    close_windows(made)


# ------------------------------------------------------------------ 1. the start view


@pytest.mark.parametrize("which", ["physx", "simcore"])
def test_opens_on_the_first_vehicle_with_its_wheel_speeds(window, sedan, which):
    win = window(DEV_DRIVE if which == "physx" else sedan)
    ws = win.workspace
    first = ws.session.vehicles[0]
    assert ws.selection.current is first.obj and win.properties.object is first.obj
    (panel,) = win.plots.panels
    assert panel.plot.spec == SPEED
    assert [d.curve.label for d in panel.drawn] == [w.label for w in first.wheels]
    expected = [w.part("WheelRigidBodyState").index for w in first.wheels]
    assert [d.curve.key.object_index for d in panel.drawn] == expected
    assert all(d.data is not None and len(d.data) > 10 for d in panel.drawn)
    assert panel.unit == "rad/s" and panel.item.getAxis("left").labelText == "[rad/s]"
    assert win.plots.placeholder.isHidden()


def test_no_vehicle_no_start_plots(window, tmp_path):
    from pvdkit.streams import OvdFileStream
    from pvdkit.types import DataType
    from pvdkit.writer import OmniPvdWriter

    path = tmp_path / "probe.ovd"
    w = OmniPvdWriter(OvdFileStream(path))
    cls = w.register_class("Probe")
    value = w.register_attribute(cls, "value", DataType.FLOAT32, 1)
    w.create_object(1, cls, 0x10, "probe")
    for f in range(3):
        w.start_frame(1, f + 1)
        w.set_attribute(1, 0x10, value, np.float32(f))
        w.stop_frame(1, f + 1)
    w.close()
    win = window(path)
    assert win.plots.panels == [] and not win.plots.placeholder.isHidden()


# ------------------------------------------------------------------ 2–4. names, filter, frames


def test_handles_read_as_paths_and_units_show(window):
    win = window()
    ws = win.workspace
    basic = ws.session.vehicle_named("/World/Basic")
    pv = win.properties
    assert pv.value_text("rigidBodyState") == "/World/Basic/RigidBodyState"
    wheels = pv.row_item("wheelAttachmentSet")
    assert [wheels.child(i).text(1) for i in range(4)] == [f"/World/Basic/wheel {i}" for i in range(4)]
    assert "/World/Basic" in pv.title.text()
    assert "0x" not in pv.value_text("rigidBodyState")
    pv.follow("rigidBodyState")
    assert ws.selection.current is basic.part("RigidBodyState")
    ws.select(basic.wheels[1].part("WheelRigidBodyState"))
    assert pv.unit_text("correctedRotationSpeed") == "rad/s" and pv.unit_text("rotationAngle") == "rad"
    assert win.properties.title.text().count("/World/Basic/wheel 1/WheelRigidBodyState") == 1


def test_filter_finds_attributes_and_expands_to_them(window, qtbot):
    win = window()
    tree = win.objects
    tree.filter.setText("rotationSpeed")
    tree.rebuild()
    shown = []
    for i in range(tree.tree.topLevelItemCount()):
        stack = [tree.tree.topLevelItem(i)]
        while stack:
            item = stack.pop()
            shown.append(item)
            stack.extend(item.child(k) for k in range(item.childCount()))
    labels = {it.text(0) for it in shown}
    # The wheel states (correctedRotationSpeed) and the engine (rotationSpeed), nothing else.
    assert "WheelRigidBody1dState0" in labels and "EngineState" in labels
    assert not any(lbl.startswith(("TireForce", "SuspensionState")) for lbl in labels)
    # Expanded down to the objects: the first wheel state row is visible under its wheel.
    state = next(it for it in shown if it.text(0) == "WheelRigidBody1dState0")
    parent = state.parent()
    while parent is not None:
        assert parent.isExpanded()
        parent = parent.parent()
    # The model: every object listed under a class has the attribute.
    (classes,) = [n for n in object_tree(win.workspace.session, "rotationspeed") if n.label == "Classes"]
    for cn in classes.children:
        for node in cn.children:
            assert any("rotationspeed" in p.lower() for p in node.obj.cls.paths)


def test_frames_column_shows_full_ranges(window):
    win = window()
    session = win.workspace.session
    assert session.n_frames == 961
    item = win.objects.item_of(session.vehicles[0].obj)
    assert item.text(1) == "0–960"
    texts = {n.lifetime for root in object_tree(session) for n in root.walk() if n.obj is not None}
    assert "0–960" in texts and not any("…" in t or "start" in t for t in texts)


# ------------------------------------------------------------------ 5. A − B clipped


def test_difference_only_where_both_recordings_have_frames(tmp_path):
    a = RecordingSession.open(write_recording(tmp_path / "a.ovd", 40, 10_000_000))
    b = RecordingSession.open(write_recording(tmp_path / "b.ovd", 25, 10_000_000, scale=2.0))
    cs = ComparisonSet(a)
    comp = cs.add(b)
    key = CurveKey(a.find("probe").index, "value")
    d = comp.difference(key)
    full = zoh_values(d.frames, d.values, np.arange(40))
    t = a.timebase.seconds
    np.testing.assert_allclose(full[:25], t[:25] - 2 * t[:25], atol=1e-12)
    assert np.isnan(full[25:]).all()  # no A − (B's last value held) past B's end
    np.testing.assert_array_equal(cs.difference(key, 1).values, d.values)
    assert cs.difference(key, 0) is None  # the reference against itself
    # By time: the same clip from B's time span.
    comp.sync = "time"
    full = zoh_values(*(lambda c: (c.frames, c.values))(comp.difference(key)), np.arange(40))
    assert np.isfinite(full[:25]).all() and np.isnan(full[25:]).all()


# ------------------------------------------------------------------ 6. gear and enum names


def test_gear_names():
    assert [gear_name(i) for i in range(5)] == ["reverse", "neutral", "first", "second", "third"]
    assert gear_name(13) == "gear 12" and gear_name(0, neutral=2) == "reverse 2"


def test_gears_and_enums_by_name_in_properties_and_plots(window):
    win = window()
    ws = win.workspace
    rec = ws.session.recording
    gearbox = rec.objects_of_class("GearboxState")[0]
    ws.select(gearbox)
    ws.timeline.set_frame(900)
    raw = int(rec.value_at(gearbox, "currentGear", 900))
    assert raw == 3
    assert win.properties.value_text("currentGear") == "second (3)"
    ws.plots.clear()
    ws.plot("GearboxState.currentGear", context=gearbox)
    (panel,) = win.plots.panels
    assert panel.legend.values == ["second (3)"]
    ticks = panel.item.getAxis("left")._tickLevels
    assert ticks and ("second" in [name for _, name in ticks[0]])
    # A registered enum plotted: its name at the cursor, its names on the axis.
    cmd = rec.objects_of_class("DirectDriveTransmissionCommandState")[0]
    ws.plots.clear()
    ws.plot("DirectDriveTransmissionCommandState.gear", context=cmd)
    (panel,) = win.plots.panels
    assert panel.legend.values == ["forward (2)"]
    assert {"reverse", "neutral", "forward"} >= {n for _, n in panel.item.getAxis("left")._tickLevels[0]}


# ------------------------------------------------------------------ 9. time axis


def test_time_axis_in_seconds_with_frames_as_an_option(window):
    win = window()
    stack = win.plots
    assert stack.x_axis == "time" and stack.panels[-1].items()[-1].getAxis("bottom").labelText == "time [s]"
    axis = stack.panels[0].item.getAxis("bottom")
    levels = axis.tickValues(0, 960, 800)
    seconds = win.workspace.timeline.timebase.seconds
    labels = []
    for spacing, positions in levels:
        texts = axis.tickStrings(positions, 1, spacing)
        # Each tick sits at the first frame reaching its time, and reads that time.
        for pos, text in zip(positions, texts, strict=True):
            assert seconds[int(round(pos))] == pytest.approx(float(text), abs=0.02)
        labels += texts
    assert "1" in labels and "8" in labels and max(float(t) for t in labels) <= 8.01
    stack.set_x_axis("frame")
    assert stack.panels[-1].items()[-1].getAxis("bottom").labelText == "frame"
    assert axis.tickValues(0, 960, 800) != levels or stack.panels[0].item.getAxis("bottom") is not axis


# ------------------------------------------------------------------ 7. three recordings


def test_three_recordings_compared(window, tmp_path):
    a = write_recording(tmp_path / "a.ovd", 40, 10_000_000)
    b = write_recording(tmp_path / "b.ovd", 30, 10_000_000, scale=2.0)
    c = write_recording(tmp_path / "c.ovd", 20, 10_000_000, scale=3.0)
    win = window(a)
    win.open_file(str(b), compare=True, wait=True)
    win.open_file(str(c), compare=True, wait=True)
    ws = win.workspace
    assert [x.b.name for x in ws.comparisons] == ["b.ovd", "c.ovd"] and "vs b.ovd, c.ovd" in win.windowTitle()
    ws.plots.clear()
    ws.plot("Probe.value")
    (panel,) = win.plots.panels
    (d,) = panel.drawn
    assert [ov.j for ov in d.overlays] == [1, 2] and [j for j, _, _ in d.diffs] == [1, 2]
    ws.timeline.set_frame(9)  # t = 0.1 s: A 0.1, B 0.2, C 0.3
    assert panel.legend.values == ["0.1", "0.2", "0.3"]
    assert win.timeline.compare_label.text() == "B: frame 9  C: frame 9"  # each one's frame, not B's alone
    assert panel.diff_legend.values == ["-0.1", "-0.2"]  # A − B, A − C
    ws.timeline.set_frame(25)  # past C's end: A − C is not drawn there, nor C itself
    assert panel.diff_legend.values[1] == "—" and panel.diff_legend.values[0] != "—"
    assert panel.legend.values[2] == "—" and panel.legend.values[1] != "—"
    # However many files are compared, the legend's title (which lists them) never makes it
    # wider than its rows need, or 480 px: it outgrew the plot and hid the values.
    from PySide6.QtGui import QColor

    from viewer.widgets.plots import TITLE_ROOM

    rows = [(f"wheel {k}", QColor("red"), False) for k in range(4)]
    panel.legend.set_rows("Probe.value   vs " + ", ".join(f"{c}: run_{c}.h5" for c in "BCDEFGH"), rows)
    assert panel.legend.title.endswith("…") and panel.legend.size().width() <= TITLE_ROOM + 24
    # B as the reference: B − A and B − C.
    win.plots.reference_box.setCurrentIndex(1)
    (panel,) = win.plots.panels
    assert [j for j, _, _ in panel.drawn[0].diffs] == [0, 2]
    ws.timeline.set_frame(9)
    assert panel.diff_legend.values == ["0.1", "-0.1"]
    assert "B: b.ovd" in panel.diff_legend.title
    # The top-down view draws every compared recording's cars, each in its line style, at its
    # own frame (C ends before A: its car stays at its last frame).
    td = win.topdown
    assert [f.model.session.name for f in td.fleets_b] == ["b.ovd", "c.ovd"]
    assert [f.names[0] for f in td.fleets_b] == ["car (B)", "car (C)"]
    assert [f.style for f in td.fleets_b] == [Qt.PenStyle.DashLine, Qt.PenStyle.DotLine]
    ws.timeline.set_frame(30)
    xa = td.fleet.frame.centres[0]
    xb, xc = (f.frame.centres[0] for f in td.fleets_b)
    assert td.fleets_b[1].frame.frame == 19 and td.fleets_b[0].frame.frame == 29
    assert xc[0] < xb[0] < xa[0]  # driving along +x: C stopped first, then B
    assert "dotted: c.ovd" in td.info.text()


# ------------------------------------------------------------------ 8. layouts


def test_layout_round_trip_file_and_user_settings(window, tmp_path, sedan):
    win = window()
    ws = win.workspace
    basic = ws.session.vehicle_named("/World/Basic")
    ws.plot("SuspensionState.jounce", vehicle=basic)
    plot = ws.plots.add_plot("engine")
    engine = ws.session.vehicle_named("/World/Standard").part("EngineState")
    ws.plots.add_curve(plot, engine, "rotationSpeed", None, "engine")
    win.xy.plot("TireSlipState.lngSlip", "TireForce.lngForce[z]")
    before = [(p.title, [(c.key, c.label) for c in p.curves]) for p in ws.plots.plots]
    assert len(before) == 3
    path = tmp_path / "layout.json"
    win.save_layout(str(path))
    data = json.loads(path.read_text())
    assert data["format"] == "pvdkit-viewer-layout"
    assert data["xy"] == {"x": "TireSlipState.lngSlip", "y": "TireForce.lngForce[z]"}
    assert data["panes"][2]["curves"][0]["object"] == "/World/Standard/EngineState"
    ws.plots.clear()
    signals = []  # each one rebuilds the view's panels
    for name in ("plot_added", "plot_removed", "plot_changed", "plots_replaced"):
        getattr(ws.plots, name).connect(lambda *_, n=name: signals.append(n))
    assert win.load_layout(str(path)) == []
    assert signals == ["plots_replaced"]  # the panels built once, not once per plot and curve
    assert [(p.title, [(c.key, c.label) for c in p.curves]) for p in ws.plots.plots] == before
    # Per user: closing remembers the layout; the next window (same settings) opens on it.
    win.close()
    again = window()
    assert [(p.title, [(c.key, c.label) for c in p.curves]) for p in again.workspace.plots.plots] == before
    # ... and on the X–Y plot of that layout.
    assert again.workspace.xy_specs == ("TireSlipState.lngSlip", "TireForce.lngForce[z]")
    assert len(again.xy.points_shown()) == 4
    # On another recording the specs give the same plots for its vehicle; the engine pane is
    # reported (simcore's sedan has no /World/Standard).
    problems = again.workspace.apply_layout(Layout.from_json(path.read_text()))
    assert problems == []
    again.open_file(str(sedan), wait=True)
    titles = [p.title for p in again.workspace.plots.plots]
    assert titles[:2] == [f"{SPEED} · sedan", "SuspensionState.jounce · sedan"]
    with pytest.raises(PvdError, match="not a viewer layout"):
        Layout.from_json('{"panes": []}', "x.json")
    bad_xy = '{"format": "pvdkit-viewer-layout", "version": 1, "panes": [], "xy": {"x": 1}}'
    with pytest.raises(PvdError, match=r"x.json: \"xy\" must be an object with \"x\" and \"y\""):
        Layout.from_json(bad_xy, "x.json")
    assert Layout.from_json('{"format": "pvdkit-viewer-layout", "version": 1, "panes": []}').xy is None


def test_a_layout_that_does_not_apply_keeps_what_is_shown_and_the_users_layout(window, tmp_path, sedan):
    """A car's layout loaded on a motorcycle left no plot at all; and the motorcycle's start view,
    shown because the user's layout did not apply, was saved over that layout when the next car
    was opened, which then showed wheel speeds only (viewer audit)."""
    from simcore.cli.record import record

    moto = record("motorcycle", None, duration=0.3, out=tmp_path / "moto.h5").path
    win = window()
    ws = win.workspace
    basic = ws.session.vehicle_named("/World/Basic")
    ws.plot("SuspensionState.jounce", vehicle=basic)
    ws.plot("TireForce.lngForce[z]", vehicle=basic)
    layout = tmp_path / "car.json"
    win.save_layout(str(layout))
    n_car = len(ws.plots.plots)
    win.open_file(str(moto), wait=True)  # the user's layout does not apply: the start view
    start = [p.title for p in ws.plots.plots]
    assert start and all("Motorcycle" in t for t in start)
    problems = win.load_layout(str(layout))
    assert problems[-1] == "nothing of the layout applies to moto.h5: the plots shown are kept"
    assert [p.title for p in ws.plots.plots] == start
    win.open_file(str(sedan), wait=True)  # the car's layout again, not the motorcycle's
    assert len(ws.plots.plots) == n_car
    assert [p.title for p in ws.plots.plots][-2:] == ["SuspensionState.jounce · sedan",
                                                       "TireForce.lngForce[z] · sedan"]


def _layout(panes, **extra) -> str:
    return json.dumps({"format": "pvdkit-viewer-layout", "version": 1, "panes": panes, **extra})


def test_a_hostile_layout_is_refused_or_reported_never_silently_cut(window):
    """Fuzzing finds: deep nesting crashed, thousands of panes kept the viewer busy for minutes,
    true passed as a version or a component, and a pane that lost some of its curves' objects
    or an X–Y spec that does not resolve was applied without a word."""
    with pytest.raises(PvdError, match=r"x.json: not a viewer layout \(JSON nested too deeply\)"):
        Layout.from_json("[" * 100_000 + "]" * 100_000, "x.json")
    with pytest.raises(PvdError, match="x.json: 65 panes; a layout holds at most 64"):
        Layout.from_json(_layout([{"title": "t", "curves": []}] * 65), "x.json")
    with pytest.raises(PvdError, match="layout version 'True'"):
        Layout.from_json(_layout([]).replace('"version": 1', '"version": true'), "x.json")
    curve = {"object": "/World/Basic/wheel 0/WheelRigidBodyState", "attribute": "correctedRotationSpeed"}
    with pytest.raises(PvdError, match="component True: expected null, an index"):
        Layout.from_json(_layout([{"title": "t", "curves": [{**curve, "component": True}]}]), "x.json")
    ws = window().workspace
    gone = {**curve, "object": "/World/Nowhere/wheel 9/WheelRigidBodyState"}
    partial = Layout.from_json(_layout([{"title": "speeds", "curves": [curve, gone]}],
                                       xy={"x": "nope.x", "y": "TireForce.lngForce[z]"}))
    problems = ws.apply_layout(partial)
    assert problems[0] == ("speeds: 1 of its curves' objects are not in dev_drive.h5 "
                           "(/World/Nowhere/wheel 9/WheelRigidBodyState)")
    assert problems[1].startswith("X–Y nope.x against TireForce.lngForce[z]: ")
    assert "no class 'nope'" in problems[1]
    assert [len(p.curves) for p in ws.plots.plots] == [1]  # what was found is shown
    bad_attribute = Layout.from_json(_layout([{"title": "t", "curves": [{**curve, "attribute": "nope"}]}]))
    problem, kept = ws.apply_layout(bad_attribute)
    assert "has no attribute 'nope'" in problem and "none of its objects" not in problem
    assert kept == "nothing of the layout applies to dev_drive.h5: the plots shown are kept"
    assert [len(p.curves) for p in ws.plots.plots] == [1]


def test_view_layout_option_renders_that_layout(qtbot, tmp_path):
    layout = Layout.from_json(json.dumps({"format": "pvdkit-viewer-layout", "version": 1, "panes": [
        {"title": "jounce", "spec": "SuspensionState.jounce", "curves": []},
        {"title": "engine", "curves": [{"object": "/World/Standard/EngineState", "attribute": "rotationSpeed",
                                        "component": None, "label": "engine"}]}]}))
    path = tmp_path / "layout.json"
    path.write_text(layout.to_json())
    shot = tmp_path / "shot.png"
    run = subprocess.run([sys.executable, "-m", "viewer", str(FIXTURE), "--layout", str(path), "--screenshot",
                          str(shot), "--size", "900x600"], capture_output=True, text=True, cwd=ROOT,
                         env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"}, timeout=120)
    assert run.returncode == 0, run.stderr
    assert shot.stat().st_size > 1000
    from viewer.app import ViewOptions, apply_options

    win = MainWindow(settings=QSettings(str(tmp_path / "v.ini"), QSettings.Format.IniFormat))
    try:
        apply_options(win, ViewOptions(files=[str(FIXTURE)], layout=str(path)))
        titles = [p.title for p in win.workspace.plots.plots]
        assert titles == ["SuspensionState.jounce · /World/Basic", "engine"]
        bad = tmp_path / "bad.json"
        bad.write_text("[]")
        with pytest.raises(PvdError, match="not a viewer layout"):
            apply_options(win, ViewOptions(files=[str(FIXTURE)], layout=str(bad)))
    finally:
        win.close()


# ------------------------------------------------------------------ reload after a new run


def test_reload_shows_the_new_run_in_place_and_can_compare_with_the_previous(window, tmp_path):
    run = write_recording(tmp_path / "run.ovd", 40, 10_000_000)
    other = write_recording(tmp_path / "other.ovd", 30, 10_000_000, scale=3.0)
    win = window(run)
    # A just-written .ovd is a finished file here, not one "being written" (it carries no sign).
    assert "following" not in win.status_label.text() and win.timeline.follow_button.isHidden()
    win.open_file(str(other), compare=True, wait=True)
    ws = win.workspace
    ws.plots.clear()
    ws.plot("Probe.value")
    probe = ws.session.recording.objects_of_class("Probe")[0]
    ws.select(probe)
    ws.timeline.set_frame(9)
    (panel,) = win.plots.panels
    assert panel.legend.values == ["0.1", "0.3"]
    # The simulation runs again to the same path: the open recording keeps its own bytes ...
    assert not win.check_disk()
    write_recording(run, 50, 10_000_000, scale=2.0)
    assert panel.legend.values == ["0.1", "0.3"]
    # ... the status bar points the new run out ...
    assert win.check_disk() and "run.ovd changed on disk (a new run?): F5 shows it" in win.status_label.text()
    # ... and F5 shows the new run with the same plot, selection, frame and comparison.
    win.reload(wait=True)
    assert not win.check_disk()
    assert ws.session.n_frames == 50 and ws.timeline.frame == 9
    assert ws.selection.current.name == "probe" and [x.b.name for x in ws.comparisons] == ["other.ovd"]
    (panel,) = win.plots.panels
    assert panel.plot.spec == "Probe.value" and panel.legend.values == ["0.2", "0.3"]
    assert "Reloaded run.ovd: 50 frames (were 40)" in win.status_label.text()
    # Shift+F5: the run shown so far becomes B, "(previous)", ahead of the other comparisons.
    write_recording(run, 60, 10_000_000, scale=4.0)
    win.reload(keep_previous=True, wait=True)
    assert ws.session.n_frames == 60
    assert [x.b.name for x in ws.comparisons] == ["run.ovd (previous)", "other.ovd"]
    (panel,) = win.plots.panels
    assert panel.legend.values == ["0.4", "0.2", "0.3"]
    assert "vs run.ovd (previous), other.ovd" in win.windowTitle()
    # Once more: the older previous run is replaced, not piled up.
    write_recording(run, 60, 10_000_000, scale=5.0)
    win.reload(keep_previous=True, wait=True)
    assert [x.b.name for x in ws.comparisons] == ["run.ovd (previous)", "other.ovd"]
    assert win.plots.panels[0].legend.values == ["0.5", "0.4", "0.3"]
    # Nothing to reload once the file is gone: one line in the status bar, the run stays shown.
    run.unlink()
    assert win.reload() is None and "the file is gone" in win.status_label.text()
    assert ws.session.n_frames == 60


# ------------------------------------------------------------------ y zoom


class _MouseEvent:
    """What a pyqtgraph ViewBox reads of a drag step or a wheel step."""

    def __init__(self, dx: float = 0.0, dy: float = 0.0, delta: int = 0, ctrl: bool = False) -> None:
        self._pos, self._last = pg.Point(200 + dx, 100 + dy), pg.Point(200, 100)
        self._delta, self._ctrl = delta, ctrl

    def pos(self) -> pg.Point:
        return self._pos

    def lastPos(self) -> pg.Point:  # noqa: N802 - pyqtgraph's name
        return self._last

    def button(self):
        return Qt.MouseButton.LeftButton

    def modifiers(self):
        return Qt.KeyboardModifier.ControlModifier if self._ctrl else Qt.KeyboardModifier.NoModifier

    def delta(self) -> int:
        return self._delta

    def accept(self) -> None:
        pass

    def ignore(self) -> None:
        pass

    def isFinish(self) -> bool:  # noqa: N802 - pyqtgraph's name
        return False


def test_y_is_fitted_until_the_user_zooms_it_and_a_double_click_hands_it_back(window):
    win = window(DEV_DRIVE)
    ws = win.workspace
    (panel,) = win.plots.panels
    vb = panel.item.getViewBox()
    (x0, x1), (y0, y1) = vb.viewRange()
    # The wheel and a drag in the plot move time only; y stays fitted to what is visible.
    vb.wheelEvent(_MouseEvent(delta=240))
    vb.mouseDragEvent(_MouseEvent(dx=-40))
    win.plots.redraw()
    (a, b), fitted = vb.viewRange()
    assert b - a < x1 - x0 and not vb.y_manual
    # Ctrl + wheel zooms y, and the fit leaves it alone from then on: redraws, frames, panning.
    vb.wheelEvent(_MouseEvent(delta=240, ctrl=True))
    zoomed = vb.viewRange()[1]
    assert vb.y_manual and zoomed[1] - zoomed[0] < 0.8 * (fitted[1] - fitted[0])
    ws.timeline.set_frame(400)
    vb.mouseDragEvent(_MouseEvent(dx=-40))
    win.plots.redraw()
    assert vb.viewRange()[1] == pytest.approx(zoomed)
    # A drag on the value axis pans y.
    vb.mouseDragEvent(_MouseEvent(dy=30), axis=1)
    assert vb.viewRange()[1][0] != pytest.approx(zoomed[0])
    # Double-click in the plot: y is fitted again to the points in view.
    event = type("Click", (), {"button": lambda self: Qt.MouseButton.LeftButton, "double": lambda self: True,
                               "scenePos": lambda self: vb.sceneBoundingRect().center()})()
    win.plots._on_click(event)
    lo, hi = vb.viewRange()[1]
    assert not vb.y_manual and hi - lo > zoomed[1] - zoomed[0]
    assert ws.timeline.frame == 400  # a double-click does not seek
    # Ctrl+0: the whole recording again, y fitted.
    vb.wheelEvent(_MouseEvent(delta=240, ctrl=True))
    win.plots.show_all()
    assert vb.viewRange()[0] == pytest.approx([0, ws.session.n_frames - 1]) and not vb.y_manual
    assert vb.viewRange()[1] == pytest.approx([y0, y1])


# ------------------------------------------------------------------ plot data as CSV


def test_the_data_in_view_copies_as_csv_with_comparisons_and_differences(window, tmp_path):
    import csv
    import io

    a = write_recording(tmp_path / "a.ovd", 40, 10_000_000)
    b = write_recording(tmp_path / "b.ovd", 30, 10_000_000, scale=2.0)
    win = window(a)
    win.open_file(str(b), compare=True, wait=True)
    ws = win.workspace
    ws.plots.clear()
    ws.plot("Probe.value")
    (panel,) = win.plots.panels
    win.plots.master.setXRange(25.2, 34.9, padding=0)
    rows = list(csv.reader(io.StringIO(panel.csv_text())))
    assert rows[0] == ["frame", "time [s]", "probe", "probe (B)", "probe (A − B)"]
    # Frames 26..34 in view; B ends at frame 29, so from frame 30 on it and A − B are empty (the
    # difference is drawn only where both recordings have frames).
    assert [int(r[0]) for r in rows[1:]] == list(range(26, 35))
    t = {int(r[0]): float(r[1]) for r in rows[1:]}
    assert t[26] == pytest.approx(0.27)
    by = {int(r[0]): r[2:] for r in rows[1:]}
    assert [float(x) for x in by[26]] == pytest.approx([0.27, 0.54, -0.27])
    assert by[29][1] != "" and by[30][0] != "" and by[30][2] == ""
    # Exact floats: the CSV reads back to the values the plot holds.
    d = panel.drawn[0]
    assert float(by[33][0]) == d.data.value_at(33)
    win.plots.master.setXRange(0, 39, padding=0)
    path = tmp_path / "probe.csv"
    assert panel.save_csv(str(path)) and len(path.read_text().splitlines()) == 41
    panel.copy_csv()
    assert QApplication.clipboard().text() == path.read_text()
    assert not panel.save_csv(str(tmp_path / "missing" / "x.csv"))
    assert "cannot write" in win.plots.message.text()


# ------------------------------------------------------------------ differences panel


def test_differences_are_listed_by_first_divergence_and_plotted_there(window, tmp_path):
    from tests.pvdkit.diff_helpers import Spec, pair

    a, b = pair(tmp_path, None, Spec(perturb={(2, "lngForce", 12): 5.0, (1, "rotationSpeed", 15): 1.0}))
    win = window(a)
    ws, panel = win.workspace, win.differences
    assert not panel.find_button.isEnabled() and panel.find() is None
    win.open_file(str(b), compare=True, wait=True)
    assert panel.find_button.isEnabled() and panel.against.currentText() == "B: b.ovd"
    diffs = panel.find()
    assert [(d.spec, d.first_frame, d.differing, d.max_abs) for d in diffs.rows] == [
        ("TireForce.lngForce", 12, 1, 5.0), ("Wheel.rotationSpeed", 15, 1, 1.0)]
    first = diffs.rows[0]
    assert first.object is ws.session.recording.objects[first.object.index]
    assert first.path == ws.session.path_of(first.object) and "wheel 2" in first.path
    assert (first.a_value, first.b_value) == ("336.0", "341.0")
    assert "a.ovd vs b.ovd: 2 attributes differ, first at frame 12" in panel.header.text()
    assert [panel.table.item(0, c).text() for c in (0, 3, 4, 5)] == ["12", "lngForce", "1 / 20", "5"]
    # Double-click: the object selected, its attribute plotted on every wheel, at the divergence.
    panel.go_to(0)
    assert ws.selection.current is first.object and ws.timeline.frame == 12
    plot = ws.plots.plots[-1]
    assert plot.spec == "TireForce.lngForce" and len(plot.curves) == 4
    (last,) = [p for p in win.plots.panels if p.plot is plot]
    assert last.diff_item is not None  # A − B shown under it
    n = len(ws.plots.plots)
    ws.timeline.set_frame(0)
    panel.go_to(0)  # shown already: no second plot, but the frame again
    assert len(ws.plots.plots) == n and ws.timeline.frame == 12
    # Another comparison: the list made for the one before is dropped.
    ws.set_comparison(None)
    assert panel.table.rowCount() == 0 and panel.differences is None and not panel.find_button.isEnabled()


def test_differences_against_a_shorter_recording_list_only_what_differs_before_it_ends(window, tmp_path):
    """B stops at frame 15 of 20: every attribute A writes later differed "none (B ended)", a
    row each above the real difference. They are one clause of the summary now."""
    from tests.pvdkit.diff_helpers import Spec, pair

    a, b = pair(tmp_path, None, Spec(frames=15, perturb={(2, "lngForce", 12): 5.0}))
    win = window(a)
    win.open_file(str(b), compare=True, wait=True)
    diffs = win.differences.find()
    # The objects B destroys as it ends (frame 14) differ in lifetime: a difference before B ends.
    assert [(d.spec, d.first_frame) for d in diffs.rows if d.attribute != "<lifetime>"] == [
        ("TireForce.lngForce", 12)]
    after = diffs.result.after_end_series
    assert after and all(s.first_frame >= 15 for s in after) and all(d.first_frame < 15 for d in diffs.rows)
    assert (f"attributes differ, first at frame 12; {len(after)} more attributes only after B ended "
            "(frame 15 on)") in win.differences.header.text()


# ------------------------------------------------------------------ X–Y


def test_xy_plots_one_attribute_against_another_per_wheel_with_comparisons(window, tmp_path):
    from tests.pvdkit.diff_helpers import Spec, lng_force, pair

    a, b = pair(tmp_path, None, Spec(perturb={(2, "lngForce", 12): 5.0}))
    win = window(a)
    ws, xy = win.workspace, win.xy
    ws.select(ws.session.vehicles[0].obj)
    xy.x_edit.setText("Wheel.rotationSpeed")
    xy.y_edit.setText("TireForce.lngForce")
    xy.plot_button.click()
    curves = [c for _j, c, _r in xy.curves][0]
    # One curve per wheel, a point per frame the force was written, x held at that frame.
    assert [c.label for c in curves] == [w.label for w in ws.session.vehicles[0].wheels]
    assert all(len(c.frames) == 20 for c in curves)
    # Only the frames the time plots show: zoomed to frames 5..9, five points a wheel.
    win.plots.master.setXRange(4.6, 9.4, padding=0)
    win.plots.redraw()
    assert [len(x) for _j, _label, x, _y in xy.points_shown()] == [5, 5, 5, 5]
    assert "20 points of frames 5–9 (the time plots' view)" in xy.status.text()
    assert xy.points_shown()[0][3][0] == pytest.approx(lng_force(5, 0))
    xy.in_view.setChecked(False)
    assert [len(x) for _j, _label, x, _y in xy.points_shown()] == [20, 20, 20, 20]
    assert "80 points of every frame" in xy.status.text()
    k, f = 2, 12
    assert curves[k].at(f) == pytest.approx((10.0 * k + f, lng_force(f, k)))
    assert xy.view.getPlotItem().getAxis("left").labelText == "TireForce.lngForce [N]"
    # The rings follow the frame.
    ws.timeline.set_frame(f)
    xs, ys = xy.curves[0][2].getData()
    assert (xs[k], ys[k]) == pytest.approx(curves[k].at(f))
    # With B compared, B's points are drawn too, and its perturbed point differs by 5 N.
    win.open_file(str(b), compare=True, wait=True)
    assert [j for j, _c, _r in xy.curves] == [0, 1]
    b_curves = xy.curves[1][1]
    assert b_curves[k].at(f)[1] == pytest.approx(lng_force(f, k) + 5.0)
    assert b_curves[k].at(f + 1)[1] == pytest.approx(lng_force(f + 1, k))
    assert "B darker" in xy.status.text()
    # A spec that cannot be plotted: one line, nothing drawn.
    assert xy.plot("Wheel.rotationSpeed", "Nope.x") == [] and "no class 'Nope'" in xy.status.text()
    assert xy.curves == []


def test_xy_follows_the_vehicle_selected(window):
    win = window(DEV_DRIVE)
    ws, xy = win.workspace, win.xy
    basic, tank = ws.session.vehicle_named("/World/Basic"), ws.session.vehicle_named("/World/Tank")
    ws.select(basic.obj)
    xy.plot("TireSlipState.lngSlip", "TireForce.lngForce[z]")
    slip = CurveKey(tank.wheels[1].part("TireSlipState").index, "lngSlip")
    ws.select(tank.wheels[1].root)
    (_j, curves, _rings), = xy.curves
    assert len(curves) == 4 and curves[1].at(400)[0] == pytest.approx(ws.curves.get(slip).value_at(400))
    assert "against TireSlipState.lngSlip" in xy.status.text()


def test_differences_within_a_tolerance_and_numbers_only(window, tmp_path):
    from tests.pvdkit.diff_helpers import Spec, pair

    # lngForce +5 N on 336 N (1.5 %), rotationSpeed +1 on 25 rad/s (4 %), and another label.
    b_spec = Spec(perturb={(2, "lngForce", 12): 5.0, (1, "rotationSpeed", 15): 1.0}, label="other")
    a, b = pair(tmp_path, None, b_spec)
    win = window(a)
    win.open_file(str(b), compare=True, wait=True)
    panel = win.differences
    panel.find_button.click()
    assert [d.attribute for d in panel.differences.rows] == ["label", "lngForce", "rotationSpeed"]
    panel.numbers_only.setChecked(True)
    assert [d.attribute for d in panel.rows] == ["lngForce", "rotationSpeed"]
    assert panel.table.rowCount() == 2 and "1 not numbers, not listed" in panel.header.text()
    panel.tolerance.setText("rtol=0.02")
    assert [d.attribute for d in panel.find().rows] == ["label", "rotationSpeed"]
    assert [d.attribute for d in panel.rows] == ["rotationSpeed"]
    panel.tolerance.setText("")
    panel.frames.setText("13:")  # from frame 13: the force bump at 12 is outside (the label is held)
    assert [d.attribute for d in panel.find().rows] == ["label", "rotationSpeed"]
    panel.frames.setText("x:y")
    assert panel.find() is None and "x:y" in panel.header.text()
    panel.frames.setText("")
    panel.tolerance.setText("rtol=fast")
    assert panel.find() is None and "rtol must be a number" in panel.header.text()


def test_tolerances_are_typed_as_pvdkit_diff_takes_them(tmp_path):
    from pvdkit.types import PvdError
    from viewer.model.differences import parse_tolerance

    assert parse_tolerance("").default == parse_tolerance("exact").default
    exact = parse_tolerance("").default
    assert (exact.atol, exact.rtol) == (0.0, 0.0)
    t = parse_tolerance("atol=1e-6 rtol=0.02").default
    assert (t.atol, t.rtol) == (1e-6, 0.02)
    toml = ROOT / "simcore" / "replay" / "physx_diff.toml"
    assert parse_tolerance(str(toml)).rules and parse_tolerance(f"{toml} rtol=0.5").default.rtol == 0.5
    for bad, why in (("loose", "expected rtol=R"), ("atol=x", "atol must be a number"),
                     (str(tmp_path / "none.toml"), "none.toml: no such file")):
        with pytest.raises(PvdError, match=why):
            parse_tolerance(bad)


def test_view_xy_option_plots_one_attribute_against_another(qtbot, tmp_path):
    from viewer.app import ViewOptions, apply_options

    shot = tmp_path / "xy.png"
    run = subprocess.run([sys.executable, "-m", "viewer", str(DEV_DRIVE), "--object", "/World/Tank",
                          "--xy", "TireSlipState.lngSlip", "TireForce.lngForce[z]", "--screenshot", str(shot),
                          "--size", "900x600"], capture_output=True, text=True, cwd=ROOT,
                         env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"}, timeout=120)
    assert run.returncode == 0, run.stderr
    assert shot.stat().st_size > 1000
    win = MainWindow(settings=QSettings(str(tmp_path / "v.ini"), QSettings.Format.IniFormat))
    try:
        xy = ("TireSlipState.lngSlip", "TireForce.lngForce[z]")
        apply_options(win, ViewOptions(files=[str(DEV_DRIVE)], object="/World/Tank", xy=xy))
        assert win.workspace.xy_specs == xy and len(win.xy.points_shown()) == 4
        ws = win.workspace
        tank = ws.session.vehicle_named("/World/Tank")
        slip = CurveKey(tank.wheels[0].part("TireSlipState").index, "lngSlip")
        (_j, curves, _rings), = win.xy.curves
        assert curves[0].at(400)[0] == pytest.approx(ws.curves.get(slip).value_at(400))  # the Tank's wheels
        with pytest.raises(PvdError, match=r"--xy TireSlipState.lngSlip Nope.x: .*no class 'Nope'"):
            apply_options(win, ViewOptions(files=[str(DEV_DRIVE)], xy=("TireSlipState.lngSlip", "Nope.x")))
    finally:
        win.close()
