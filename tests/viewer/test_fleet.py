"""A fleet recording (``pvdkit record --vehicles N``) in the viewer: every vehicle in the object
tree and in the top-down view at its recorded position, and scrubbing moves them all."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QSettings, Qt
from PySide6.QtGui import QPainterPath
from PySide6.QtWidgets import QApplication

from pvdkit.names import names_of
from viewer.model.session import RecordingSession, object_tree
from viewer.model.topdown import TopDownModel
from viewer.widgets import theme
from viewer.widgets.main_window import MainWindow

N = 8
NAMES = [f"vehicle_{i:03d}" for i in range(N)]


@pytest.fixture(scope="module")
def fleet_path(tmp_path_factory) -> Path:
    """Eight sedans side by side, accelerating for 0.5 s (30 frames), recorded to .h5."""
    from simcore.cli.record import record

    out = tmp_path_factory.mktemp("fleet") / "f.h5"
    record("sedan", "accelerate", duration=0.5, out=out, vehicles=N)
    return out


@pytest.fixture(scope="module")
def fleet(fleet_path) -> RecordingSession:
    return RecordingSession.open(fleet_path)


def _recorded_centres(session: RecordingSession, frame: int) -> np.ndarray:
    """Each vehicle's recorded chassis position at ``frame``, projected onto the ground plane."""
    rec = session.recording
    pos = [rec.value_at(v.part("RigidBodyState"), "pos", frame) for v in session.vehicles]
    return session.ground.project(np.asarray(pos, np.float64))


def _polygons(path: QPainterPath) -> int:
    return sum(path.elementAt(i).isMoveTo() for i in range(path.elementCount()))


def test_fleet_vehicles_found_named_and_in_the_tree(fleet):
    assert [v.name for v in fleet.vehicles] == NAMES
    assert all(len(v.wheels) == 4 and v.part("RigidBodyState") is not None for v in fleet.vehicles)
    (section,) = [n for n in object_tree(fleet) if n.label == "Vehicles"]
    assert [n.label for n in section.children] == NAMES
    # The viewer's vehicles and wheels are pvdkit.names' owners, for every object.
    names = names_of(fleet.recording)
    for o in fleet.recording.objects:
        v, w = fleet.vehicle_of(o)
        info, k = names.owner(o)
        assert (v.info if v else None, w.index if w else None) == (info, k)
        assert (w is None or w.vehicle is v) and (v is None or o in v.objects())
    rec = fleet.recording
    scan = [o for o in rec.objects if o.cls is not None and o.cls.is_a("Vehicle")]
    assert rec.objects_of_class("Vehicle") == scan and len(scan) == N


def test_fleet_topdown_model_every_vehicle_at_its_position(fleet):
    td = TopDownModel(fleet)
    assert len(td.geometries) == N
    for frame in (0, fleet.n_frames // 2, fleet.n_frames - 1):
        ff = td.frame_at(frame)
        assert ff.present.all() and len(ff.wheels) == 4 * N
        np.testing.assert_allclose(ff.centres, _recorded_centres(fleet, frame), atol=1e-6)
        # Each vehicle's four wheels are around its own centre (nearer it than any other car's),
        # and a point inside its outline picks it.
        wc = ff.wheels[:, :-1].mean(axis=1)
        d = np.linalg.norm(wc[:, None, :] - ff.centres[None, :, :], axis=2)
        assert (np.argmin(d, axis=1) == ff.wheel_vehicle).all() and d.min(axis=1).max() < 2.5
        assert [ff.vehicle_at(tuple(o[:-1].mean(axis=0))) for o in ff.outlines] == list(range(N))
    # Side by side, 4 m apart, all facing the same way.
    c = td.frame_at(0).centres
    gaps = np.linalg.norm(np.diff(c, axis=0), axis=1)
    np.testing.assert_allclose(gaps, 4.0, atol=0.05)
    # The vectorised frame equals the per-vehicle shapes.
    shapes = td.shapes_at(10)
    assert [s.vehicle.name for s in shapes] == NAMES and all(len(s.wheels) == 4 for s in shapes)


@pytest.fixture
def window(qtbot, tmp_path, fleet_path):
    theme.apply(QApplication.instance())
    win = MainWindow(settings=QSettings(str(tmp_path / "v.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    win.open_file(str(fleet_path), wait=True)
    return win


def test_fleet_window_tree_topdown_and_scrub(window, qtbot):
    win = window
    ws = win.workspace
    session = ws.session
    # Object tree: the eight vehicles by name under "Vehicles".
    tree = win.objects.tree
    section = next(tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
                   if tree.topLevelItem(i).text(0).startswith("Vehicles"))
    assert [section.child(i).text(0) for i in range(section.childCount())] == NAMES
    # Top-down: eight bodies and 32 wheels drawn (split between the shared paths and the
    # selected vehicle's overlay), each at its recorded position.
    td = win.topdown
    fleet = td.fleet
    assert fleet is not None and "8 vehicles" in td.info.text()

    def drawn() -> tuple[int, int]:
        bodies = sum(_polygons(b.path()) for b in fleet.bodies)
        wheels = _polygons(fleet.wheels.path())
        if fleet.sel_body.isVisible():
            bodies += _polygons(fleet.sel_body.path())
            wheels += _polygons(fleet.sel_wheels.path())
        return bodies, wheels

    assert drawn() == (N, 4 * N)
    np.testing.assert_allclose(td.frame.centres, _recorded_centres(session, 0), atol=1e-6)
    assert [s.vehicle.name for s in td.shapes] == NAMES
    # Scrubbing moves every vehicle to that frame's position.
    last = session.n_frames - 1
    before = td.frame.centres.copy()
    ws.timeline.set_frame(last)
    assert td.frame.frame == last and drawn() == (N, 4 * N)
    np.testing.assert_allclose(td.frame.centres, _recorded_centres(session, last), atol=1e-6)
    assert np.all(np.linalg.norm(td.frame.centres - before, axis=1) > 0.1)  # they accelerated
    # Clicking a car in the top-down view selects that vehicle; it is drawn highlighted.
    QApplication.processEvents()
    target = session.vehicles[5]
    centre = td.frame.outlines[5][:-1].mean(axis=0)
    vb = td.plot.getViewBox()
    pos = td.plot.mapFromScene(vb.mapViewToScene(QPointF(float(centre[0]), float(centre[1]))))
    qtbot.mouseClick(td.plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert ws.selection.current is target.obj
    assert fleet.selected == 5 and fleet.sel_body.isVisible() and drawn() == (N, 4 * N)
    assert _polygons(fleet.sel_body.path()) == 1 and _polygons(fleet.sel_wheels.path()) == 4
    # The property view follows the selected vehicle, the tree shows it.
    assert win.properties.object is target.obj
    assert win.objects.tree.currentItem().text(0) == target.name


def test_each_name_sits_by_its_own_car(window):
    """Placed 1.6 lines above a car's centre, a name stood nearer the next car of a fleet 4 m
    apart: "vehicle_000" read as the name of vehicle_001 (viewer audit)."""
    fleet = window.topdown.fleet
    ff = fleet.frame
    for i, label in enumerate(fleet.labels):
        pos = label.pos()
        near = np.argmin(np.linalg.norm(ff.centres - [pos.x(), pos.y()], axis=1))
        assert near == i and pos.y() == ff.outlines[i, :, 1].max() and label.anchor.y() == 1.0


def test_bulk_reads_of_a_recording_written_in_commits(fleet):
    """A recorded fleet stores each series in several segments (one per commit): the bulk read
    that opens it gives what series-by-series reads give, and the handle graph is the same."""
    from pvdkit.names import handle_attributes, handle_refs, referenced

    rec = fleet.recording
    st = rec.series_table()
    sids = np.flatnonzero(st.count > 0)
    blocks = rec.sample_blocks_of(sids)
    assert (np.diff(blocks.first) > 1).any()  # several segments per series somewhere
    for k, sid in enumerate(sids.tolist()):
        ref = rec.data.load_samples(sid)
        if blocks.block[k] < 0:
            assert ref.fixed is None
            continue
        got = blocks.samples(k)
        assert np.array_equal(got.frames, ref.frames) and np.array_equal(got.fixed, ref.fixed), sid
    refs = handle_refs(rec)
    for o in rec.objects:
        for name, _ in handle_attributes(o):
            assert refs.get(o.index, {}).get(name, []) == referenced(rec, o, name), (o, name)
