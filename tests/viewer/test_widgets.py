"""The viewer window, offscreen (pytest-qt): load, select, plot per wheel, scrub, navigate,
compare, drag and drop, background loading, headless screenshots."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent, QImage
from PySide6.QtWidgets import QApplication

from pvdkit.types import PvdError
from tests.viewer.conftest import FIXTURE, WHEEL_NAMES, close_windows, write_recording
from viewer.model.properties import format_number
from viewer.widgets import theme
from viewer.widgets.main_window import MainWindow
from viewer.widgets.property_view import CURVE_MIME

SPEED = "WheelRigidBodyState.correctedRotationSpeed"


@pytest.fixture
def make_window(qtbot, tmp_path):
    theme.apply(QApplication.instance())

    def make(path=FIXTURE, start_view: bool = False) -> MainWindow:
        # Most tests build their own plots: without the start view a window opens with none.
        settings = QSettings(str(tmp_path / f"viewer{len(made)}.ini"), QSettings.Format.IniFormat)
        win = MainWindow(settings=settings, start_view=start_view)
        qtbot.addWidget(win)
        win.resize(1400, 900)
        win.show()
        if path is not None:
            win.open_file(str(path), wait=True)
        made.append(win)
        return win

    made: list[MainWindow] = []
    yield make
    close_windows(made)


def _f32(x: float) -> str:
    return format_number(float(np.float32(x)))


def test_load_select_plot_scrub_shows_that_frames_values(make_window, qtbot, readback):
    win = make_window()
    ws = win.workspace
    basic = ws.session.vehicle_named("/World/Basic")
    # Select the vehicle by clicking it in the object tree.
    ws.select(None)
    item = win.objects.item_of(basic.obj)
    rect = win.objects.tree.visualItemRect(item)
    qtbot.mouseClick(win.objects.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert ws.selection.current is basic.obj
    # Plot a per-wheel attribute from the plot toolbar: one curve per wheel, labelled.
    win.plots.attribute.setText(SPEED)
    qtbot.keyClick(win.plots.attribute, Qt.Key.Key_Return)
    (panel,) = win.plots.panels
    assert [d.curve.label for d in panel.drawn] == [w.label for w in basic.wheels]
    assert panel.legend.title == f"{SPEED} · /World/Basic  [rad/s]"
    # Follow references to wheel 1's rigid-body state: vehicle → attachment 1 → state.
    win.properties.follow("wheelAttachmentSet", 1)
    assert ws.selection.current is basic.wheels[1].root
    win.properties.follow("wheelRigidBody1dState")
    state = basic.wheels[1].part("WheelRigidBodyState")
    assert ws.selection.current is state and win.properties.object is state
    for step in (0, 4, 11):
        win.timeline.slider.setValue(2 * step)  # scrub with the slider
        assert ws.timeline.frame == 2 * step
        expected = [readback[f"Basic.{w}.rotationSpeed"][step] for w in WHEEL_NAMES]
        assert panel.cursor.value() == 2 * step
        np.testing.assert_allclose(panel.cursor_values(), expected, rtol=1e-6)
        assert panel.legend.values == [_f32(e) for e in expected]
        assert win.properties.value_text("correctedRotationSpeed") == _f32(expected[1])
        assert win.properties.is_highlighted("correctedRotationSpeed")
        assert f"frame {2 * step:>2} / 24" in win.timeline.frame_label.text()
    ws.timeline.step(1)  # rigid-body frame: wheel state held, not written here
    held = _f32(readback["Basic.FrontRightWheel.rotationSpeed"][11])
    assert win.properties.value_text("correctedRotationSpeed") == held
    assert not win.properties.is_highlighted("correctedRotationSpeed")
    # Back / forward through the selections.
    qtbot.mouseClick(win.properties.back_button, Qt.MouseButton.LeftButton)
    assert ws.selection.current is basic.wheels[1].root
    qtbot.mouseClick(win.properties.back_button, Qt.MouseButton.LeftButton)
    assert ws.selection.current is basic.obj
    assert win.objects.tree.currentItem() is win.objects.item_of(basic.obj)
    qtbot.mouseClick(win.properties.forward_button, Qt.MouseButton.LeftButton)
    assert ws.selection.current is basic.wheels[1].root


def test_a_damaged_recording_says_so_in_the_status_bar(make_window, tmp_path):
    """A truncated .ovd opened showing its first frames as if that were all: only a warning on
    stderr said the rest was missing. The status bar says it, in red, opened or compared."""
    cut = tmp_path / "cut.ovd"
    cut.write_bytes(FIXTURE.read_bytes()[:400_000])
    win = make_window(cut)
    text = win.status_label.text()
    assert "damaged, what follows the damage is missing: truncated at byte offset" in text, text
    assert "color" in win.status_label.styleSheet() and "cut.ovd" in win.status_label.toolTip()
    win.open_file(str(FIXTURE), wait=True)  # an intact one: no such line
    assert "damaged" not in win.status_label.text() and win.status_label.styleSheet() == ""
    win.open_file(str(cut), compare=True, wait=True)
    text = win.status_label.text()
    assert text.startswith("Comparing with cut.ovd") and "damaged" in text


def test_a_long_plot_error_leaves_the_layout_alone(make_window, qtbot):
    """A bad spec's error (a file path and suggestions) set the central area's minimum width: the
    Objects dock went from 340 to 76 px and stayed there. It wraps now; notes are not red."""
    win = make_window()
    win.resize(1400, 900)
    qtbot.wait(50)
    before = (win.objects_dock.width(), win.properties_dock.width(), win.width())
    win.plots.attribute.setText("rotationSpeed" * 4)
    win.plots.attribute.returnPressed.emit()
    qtbot.wait(50)
    assert "expected CLASS.ATTRIBUTE" in win.plots.message.text()
    assert (win.objects_dock.width(), win.properties_dock.width(), win.width()) == before
    assert "color" in win.plots.message.styleSheet()
    win.plots.status("saved the plot", error=False)
    assert win.plots.message.styleSheet() == ""


def test_keyboard_and_jump(make_window, qtbot):
    win = make_window()
    tl = win.workspace.timeline
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win, timeout=2000)
    win.plots.canvas.setFocus()
    qtbot.keyClick(win, Qt.Key.Key_End)
    assert tl.frame == 24
    qtbot.keyClick(win, Qt.Key.Key_Left)
    qtbot.keyClick(win, Qt.Key.Key_Left, Qt.KeyboardModifier.ShiftModifier)
    assert tl.frame == 13
    qtbot.keyClick(win, Qt.Key.Key_Home)
    qtbot.keyClick(win, Qt.Key.Key_Right)
    assert tl.frame == 1
    qtbot.keyClick(win, Qt.Key.Key_Space)
    assert tl.playing
    qtbot.keyClick(win, Qt.Key.Key_Space)
    assert not tl.playing
    win.timeline.jump.setText("t=0.1")
    qtbot.keyClick(win.timeline.jump, Qt.Key.Key_Return)
    # 0.1 s is the end of step 5: both its frames (10, 11) read 0.1 s; the last wins.
    assert tl.frame == 11 and win.timeline.jump.text() == ""
    win.timeline.jump.setText("soon")
    qtbot.keyClick(win.timeline.jump, Qt.Key.Key_Return)
    assert tl.frame == 11 and "cannot read" in win.timeline.jump.toolTip()


def test_playback_reaches_the_end_and_stops(make_window, qtbot):
    win = make_window()
    tl = win.workspace.timeline
    win.timeline.speed.setCurrentIndex(len(tl.SPEEDS) - 1)  # ×16: the 0.2 s recording in ~13 ms
    assert tl.speed == 16
    qtbot.mouseClick(win.timeline.play_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not tl.playing, timeout=5000)
    assert tl.frame == 24


def test_click_in_plot_seeks_and_cursor_drag(make_window, qtbot):
    win = make_window()
    win.workspace.plot(SPEED)
    (panel,) = win.plots.panels
    QApplication.processEvents()
    vb = panel.item.getViewBox()
    scene = vb.mapViewToScene(QPointF(10, float(np.mean(vb.viewRange()[1]))))
    view_pos = win.plots.canvas.mapFromScene(scene)
    qtbot.mouseClick(win.plots.canvas.viewport(), Qt.MouseButton.LeftButton, pos=view_pos)
    assert win.workspace.timeline.frame == 10
    panel.cursor.setValue(17.4)
    panel.cursor.sigDragged.emit(panel.cursor)
    assert win.workspace.timeline.frame == 17 and panel.cursor.value() == 17


def test_drag_attribute_from_property_view_onto_a_plot(make_window):
    win = make_window()
    ws = win.workspace
    basic = ws.session.vehicle_named("/World/Basic")
    susp = basic.wheels[0].part("SuspensionState")
    ws.select(susp)
    item = win.properties.row_item("jounce")
    md = win.properties.tree.mimeData([item])
    spec = json.loads(bytes(md.data(CURVE_MIME)).decode())
    assert spec["attribute"] == "jounce" and spec["object"] == susp.index and spec["component"] is None
    drop = QDropEvent(QPointF(200, 200), Qt.DropAction.CopyAction, md, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    win.plots.canvas.dropEvent(drop)
    (panel,) = win.plots.panels
    assert [d.curve.key.attribute for d in panel.drawn] == ["jounce"]
    # A vector component dragged onto that plot joins it.
    ws.select(basic.wheels[0].part("TireForce"))
    vec = win.properties.row_item("lngForce")
    vec.setExpanded(True)
    md = win.properties.tree.mimeData([vec.child(2)])
    assert json.loads(bytes(md.data(CURVE_MIME)).decode())["component"] == 2
    centre = panel.item.getViewBox().sceneBoundingRect().center()
    win.plots.drop_curve(json.loads(bytes(md.data(CURVE_MIME)).decode()), centre)
    (panel,) = win.plots.panels
    assert [d.curve.label for d in panel.drawn] == ["SuspState0.jounce", "TireForce0.lngForce[z]"]
    ws.timeline.set_frame(6)
    tire = basic.wheels[0].part("TireForce")
    expected = float(ws.session.recording.value_at(tire, "lngForce", 6)[2])
    assert panel.cursor_values()[1] == pytest.approx(expected)
    # Double-click plots a number in a new plot; the context action plots it for every wheel.
    spec = win.properties.curve_spec(win.properties.row_item("wheelTorque"))
    win.properties.plot_spec(spec, per_wheel=True)
    assert len(win.plots.panels) == 2 and len(win.plots.panels[1].drawn) == 4


def test_property_view_enums_flags_arrays_and_lists(make_window):
    win = make_window()
    ws = win.workspace
    basic = ws.session.vehicle_named("/World/Basic")
    actor = basic.part("PxRigidDynamic")
    ws.select(actor)
    pv = win.properties
    assert pv.value_text("type") == "eRIGID_DYNAMIC" and pv.value_text("flags") == "eDISABLE_GRAVITY"
    ws.timeline.set_frame(5)
    pose = pv.row_item("globalPose")  # 7 floats: a paged array
    pose.setExpanded(True)
    page = pose.child(0)
    assert page.text(0) == "[0…6]"
    page.setExpanded(True)
    values = ws.session.recording.value_at(actor, "globalPose", 5)
    assert [page.child(i).text(1) for i in range(7)] == [format_number(float(v)) for v in values]
    assert pv.is_highlighted("globalPose") and not pv.is_highlighted("mass")
    ws.timeline.set_frame(6)  # written in odd (rigid-body) frames only; the page follows
    values = ws.session.recording.value_at(actor, "globalPose", 6)
    assert [page.child(i).text(1) for i in range(7)] == [format_number(float(v)) for v in values]
    ws.select(basic.obj)
    wheels = pv.row_item("wheelAttachmentSet")
    assert pv.value_text("wheelAttachmentSet") == "4 items" and wheels.childCount() == 4
    assert wheels.child(2).text(1) == "/World/Basic/wheel 2"  # a readable path, not a handle


def test_object_tree_filter_and_select(make_window, qtbot):
    win = make_window()
    win.objects.filter.setText("TireForce3")
    win.objects.rebuild()
    names = []
    it = win.objects.tree.invisibleRootItem()
    stack = [it]
    while stack:
        node = stack.pop()
        for i in range(node.childCount()):
            c = node.child(i)
            stack.append(c)
            if c.childCount() == 0 and c.data(0, Qt.ItemDataRole.UserRole + 1) is not None:
                names.append(c.text(0))
    assert names and set(names) == {"TireForce3"}
    tank = win.workspace.session.vehicle_named("/World/Tank")
    target = tank.wheels[3].part("TireForce")
    win.objects.tree.setCurrentItem(win.objects.item_of(target))
    assert win.workspace.selection.current is target
    assert "wheel 3 · rear-right of /World/Tank" in win.properties.title.text()


def test_compare_overlay_and_difference(make_window, tmp_path):
    win = make_window(write_recording(tmp_path / "a.ovd", 40, 10_000_000))
    win.open_file(str(write_recording(tmp_path / "b.ovd", 20, 20_000_000)), compare=True, wait=True)
    ws = win.workspace
    assert ws.comparison is not None and "vs b.ovd" in win.windowTitle()
    ws.plot("Probe.value")
    (panel,) = win.plots.panels
    assert panel.diff_item is not None and panel.drawn[0].overlay is not None
    # The difference panel shares the frame axis (x-linked) with the plots above it.
    assert panel.diff_item.getViewBox().viewRange()[0] == panel.item.getViewBox().viewRange()[0]
    assert win.plots.master.getViewBox().viewRange()[0] == pytest.approx([0, 39])
    assert win.topdown.fleet_b is not None and len(win.topdown.fleet_b.model.geometries) == 1
    assert "dashed: b.ovd" in win.topdown.info.text()
    ws.timeline.set_frame(9)  # A: t = 0.10 s; B by frame: frame 9 = 0.20 s
    assert panel.legend.values == ["0.1", "0.2"] and panel.diff_legend.values == ["-0.1"]
    assert "B: frame 9" in win.timeline.compare_label.text()
    win.plots.sync_box.setCurrentIndex(1)  # by time: B's frame 4 (0.10 s)
    (panel,) = win.plots.panels
    assert ws.comparison.sync == "time" and panel.legend.values == ["0.1", "0.1"]
    assert panel.diff_legend.values == ["0"] and "B: frame 4" in win.timeline.compare_label.text()
    win.plots.diff_box.setChecked(False)
    assert win.plots.panels[0].diff_item is None
    ws.set_comparison(None)
    assert win.plots.panels[0].drawn[0].overlay is None


def test_plot_bar_keeps_room_to_type_with_comparisons_at_1280(make_window, tmp_path, qtbot):
    """The comparison's controls (Δ, against, sync) have a row of their own while comparing: at
    1280 px wide, with a long recording name to compare against, the attribute field stays wide
    enough to type in (it was squeezed to one character)."""
    win = make_window(write_recording(tmp_path / "a_recording_with_a_long_name.ovd", 40, 10_000_000))
    win.open_file(str(write_recording(tmp_path / "another_recording_with_a_long_name.ovd", 20, 20_000_000)),
                  compare=True, wait=True)
    win.resize(1280, 800)
    qtbot.wait(50)
    assert win.width() == 1280  # nothing holds the window wider (a long status text did)
    assert win.plots.reference_box.isVisible() and win.plots.compare_bar.isVisible()
    assert win.plots.attribute.width() >= 140
    # the legend says which file the dashed (B) curves are
    win.workspace.plot("Probe.value")
    (panel,) = win.plots.panels
    assert panel.legend.title.endswith("vs B: another_recording_with_a_long_name.ovd")
    win.workspace.set_comparison(None)
    assert not win.plots.compare_bar.isVisible()
    assert "vs B" not in win.plots.panels[0].legend.title


def test_background_loading_with_progress_and_errors(make_window, qtbot, tmp_path):
    win = make_window(None)
    steps = []
    loader = win.open_file(str(FIXTURE))
    loader.progress.connect(lambda f, t: steps.append(t))
    with qtbot.waitSignal(win.workspace.session_changed.__class__ and loader.loaded, timeout=60000):
        pass
    win.wait_for_loaders()
    assert win.workspace.session is not None and win.progress.isHidden()
    assert win.workspace.selection.current is win.workspace.session.vehicles[0].obj
    assert str(FIXTURE) in win.recent.paths and win.settings.value("recentFiles")
    bad = tmp_path / "bad.ovd"
    bad.write_text("this is not a recording")
    loader = win.open_file(str(bad))
    with qtbot.waitSignal(loader.failed, timeout=60000) as blocker:
        pass
    win.wait_for_loaders()
    assert "not an OmniPVD stream" in blocker.args[0] and "not an OmniPVD" in win.status_label.text()
    assert str(bad) not in win.recent.paths
    with pytest.raises(PvdError, match="no such file"):
        win.open_file(str(tmp_path / "missing.ovd"), wait=True)
    # A recent file that fails to read now (rewritten, cut) stays listed; one that is gone does not.
    run = tmp_path / "run.ovd"
    run.write_bytes(FIXTURE.read_bytes())
    win.open_file(str(run), wait=True)
    run.write_text("garbage")
    win.open_file(str(run))
    win.wait_for_loaders()
    assert str(run) in win.recent.paths
    win.open_file(str(FIXTURE), wait=True)
    run.unlink()
    win.open_file(str(run))
    win.wait_for_loaders()
    assert str(run) not in win.recent.paths


def test_drop_files_on_window_opens_and_compares(make_window, tmp_path):
    win = make_window(None)
    a = write_recording(tmp_path / "a.ovd", 10, 10_000_000)
    b = write_recording(tmp_path / "b.ovd", 10, 10_000_000)
    md = QMimeData()
    md.setUrls([QUrl.fromLocalFile(str(a)), QUrl.fromLocalFile(str(b))])
    ev = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, md, Qt.MouseButton.LeftButton,
                    Qt.KeyboardModifier.NoModifier)
    win.dropEvent(ev)
    win.wait_for_loaders()
    assert win.workspace.session.name == "a.ovd" and win.workspace.comparison.b.name == "b.ovd"


def test_topdown_view_draws_vehicles_and_selects_on_click(make_window, qtbot):
    win = make_window()
    win.workspace.timeline.set_frame(20)
    td = win.topdown
    assert len(td.shapes) == 4 and "+Y" in td.info.text()
    tank = win.workspace.session.vehicle_named("/World/Tank")
    shape = next(s for s in td.shapes if s.vehicle is tank)
    vb = td.plot.getViewBox()
    QApplication.processEvents()
    centre = shape.outline[:-1].mean(axis=0)
    pos = td.plot.mapFromScene(vb.mapViewToScene(QPointF(float(centre[0]), float(centre[1]))))
    qtbot.mouseClick(td.plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert win.workspace.selection.current is tank.obj
    win.set_up_axis("+z")
    assert "+Z" in td.info.text() and "setting" in td.info.text()


def test_messages_panel_lists_and_jumps(make_window, tmp_path):
    from pvdkit.streams import OvdFileStream
    from pvdkit.synthetic import write_every_command

    path = tmp_path / "every.ovd"
    write_every_command(OvdFileStream(path))
    win = make_window(path)
    msgs = win.workspace.session.recording.messages
    table = win.messages.table
    assert msgs and table.rowCount() == len(msgs)
    assert table.item(0, 3).text() == msgs[0].message
    last = len(msgs) - 1
    win.messages._on_double(last, 0)
    assert win.workspace.timeline.frame == max(msgs[last].frame, 0)


def test_screenshot_cli_renders_and_reports_bad_input(tmp_path, capsys, qtbot):
    from viewer.cli import main

    out = tmp_path / "shot.png"
    status = main([str(FIXTURE), "--screenshot", str(out), "--object", "/World/Tank", "--plot", SPEED,
                   "--plot", "TireForce.lngForce[z]", "--frame", "-1", "--size", "1000x700"])
    assert status == 0 and "saved" in capsys.readouterr().out
    img = QImage(str(out))
    assert (img.width(), img.height()) == (1000, 700)
    assert len({img.pixel(x, y) for x in range(0, 1000, 25) for y in range(0, 700, 25)}) > 20  # not blank
    tiny = str(write_recording(tmp_path / "tiny.ovd", 5, 10_000_000))
    assert main([tiny, "--screenshot", str(out), "--plot", "Nope.x"]) == 2
    assert "no class 'Nope'" in capsys.readouterr().err
    assert main([str(tmp_path / "none.ovd"), "--screenshot", str(out)]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main([tiny, "--screenshot", str(out), "--frame", "99"]) == 2
    assert "frames 0 … 4" in capsys.readouterr().err
    # The same through ``pvdkit view`` (pvdkit's CLI imports viewer.cli lazily).
    from pvdkit.cli import main as pvdkit_main

    assert pvdkit_main(["view", tiny, "--screenshot", str(out), "--plot", "Probe.nothing"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pvdkit: error: --plot Probe.nothing: ")
    assert "class Probe has no attribute 'nothing'" in err


def test_add_view_parser_hooks_into_argparse():
    import argparse

    from viewer.cli import add_view_parser, run

    parser = argparse.ArgumentParser(prog="pvdkit")
    sub = parser.add_subparsers()
    add_view_parser(sub)
    args = parser.parse_args(["view", "a.ovd", "--plot", "X.y", "--plot", "Z.w", "--frame", "3",
                              "--sync", "time"])
    assert args.func is run and args.files == ["a.ovd"] and args.plot == ["X.y", "Z.w"] and args.frame == 3
    with pytest.raises(SystemExit):
        parser.parse_args(["view", "--size", "tiny"])


del QPoint


def test_bindings_survive_many_calls():
    """Hundreds of thousands of binding calls (a long session) and a clean interpreter exit.

    PySide6 6.12 on CPython 3.11 loses a reference to None per void call and to True per emit;
    without :func:`viewer.widgets._guard_binding_refcounts` this aborts ("deallocating None")."""
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

    code = textwrap.dedent(f"""
        import os, sys
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        import viewer.widgets
        from PySide6.QtCore import QObject, Signal
        from PySide6.QtWidgets import QApplication, QTreeWidgetItem
        app = QApplication([])
        item = QTreeWidgetItem(["x"])
        class O(QObject):
            s = Signal(int)
        o = O()
        o.s.connect(lambda v: None)
        for i in range(200_000):
            item.setText(0, "y")
            o.s.emit(i)
        print("ok", sys.getrefcount(None) > 0)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["ok", "True"]
