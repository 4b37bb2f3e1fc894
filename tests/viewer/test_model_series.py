"""Curves, per-wheel plot targets, min-max step downsampling and comparisons."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pvdkit.names import split_element
from tests.viewer.conftest import FIXTURE, WHEEL_NAMES, write_recording
from viewer.model.compare import Comparison
from viewer.model.downsample import step_points, visible_range, zoh_values
from viewer.model.series import (
    NORM,
    CurveCache,
    CurveKey,
    PlotError,
    PlotsModel,
    extract_curve,
    resolve_targets,
)
from viewer.model.session import RecordingSession
from viewer.model.workspace import RecentFiles, Workspace

SPEED = "WheelRigidBodyState.correctedRotationSpeed"

# ---------------------------------------------------------------------------------------------
# downsampling
# ---------------------------------------------------------------------------------------------


def _zoh_polyline_value(xs, ys, x):
    """Value of a step polyline right after x (the last vertex at or before x)."""
    i = np.searchsorted(xs, x, side="right") - 1
    return ys[i]


def test_few_samples_draw_the_exact_staircase():
    f = np.array([0, 2, 5, 9])
    v = np.array([1.0, -2.0, 3.0, 0.5])
    xs, ys = step_points(f, v, -1, 20, width_px=100, hold_until=12)
    assert xs.tolist() == [0, 2, 2, 5, 5, 9, 9, 12]
    assert ys.tolist() == [1, 1, -2, -2, 3, 3, 0.5, 0.5]
    for x in np.linspace(0, 11.9, 200):
        assert _zoh_polyline_value(xs, ys, x) == zoh_values(f, v, np.array([x]))[0]


def test_clip_to_view_keeps_the_value_entering_the_view():
    f = np.arange(0, 1000, 10)
    v = f * 0.5
    i0, i1 = visible_range(f, 305, 420)
    assert (f[i0], f[i1 - 1]) == (300, 420)
    xs, ys = step_points(f, v, 305, 420, width_px=500)
    assert xs[0] == 305 and ys[0] == 150  # value of the sample at 300, held into the view
    assert xs.max() <= 420 and len(xs) == 2 * (i1 - i0)


@settings(max_examples=60, deadline=None)
@given(st.integers(2000, 20000), st.integers(10, 400), st.integers(0, 2**32 - 1))
def test_downsampling_keeps_min_and_max_of_every_pixel_column(n, width, seed):
    rng = np.random.default_rng(seed)
    f = np.cumsum(rng.integers(0, 3, n))  # repeated frames allowed (two samples in one frame)
    v = rng.normal(size=n).cumsum()
    spikes = rng.integers(0, n, 5)
    v[spikes] += rng.choice([-1, 1], 5) * 1e3  # one-sample spikes must survive
    x0, x1 = float(f[0]), float(f[-1])
    xs, ys = step_points(f, v, x0, x1, width)
    # Samples overwritten within the first frame are never in force, so never drawn.
    i0, _ = visible_range(f, x0, x1)
    f, v = f[i0:], v[i0:]
    assert len(xs) <= 4 * width + 1
    bucket = np.clip(((f - x0) * (width / (x1 - x0))).astype(np.int64), 0, width - 1)
    out_bucket = np.clip(((xs[:-1] - x0) * (width / (x1 - x0))).astype(np.int64), 0, width - 1)
    for b in np.unique(bucket):
        inside = v[bucket == b]
        drawn = ys[:-1][out_bucket == b]
        assert drawn.max() >= inside.max() and drawn.min() <= inside.min()
        # Nothing outside the column's values and the value entering it is drawn.
        first = np.flatnonzero(bucket == b)[0]
        entering = v[first - 1] if first > 0 else v[0]
        assert drawn.max() <= max(inside.max(), entering) and drawn.min() >= min(inside.min(), entering)
    assert ys[-1] == v[-1]


def test_million_sample_curve_draws_a_few_thousand_points():
    f = np.arange(1_000_000, dtype=np.int32)
    v = np.sin(f / 5000.0)
    v[123_457] = 9.0
    xs, ys = step_points(f, v, 0, 999_999, 1200)
    assert len(xs) <= 4 * 1200 + 1 and ys.max() == 9.0 and ys.min() == pytest.approx(-1, abs=1e-6)
    xs, ys = step_points(f, v, 123_000, 124_000, 1200)  # zoomed in: exact staircase
    assert 123_457 in xs and ys.max() == 9.0


def test_zoh_values_before_first_sample_are_nan():
    out = zoh_values(np.array([2, 4]), np.array([1.0, 2.0]), np.array([0, 2, 3, 4, 9]))
    assert np.isnan(out[0]) and out[1:].tolist() == [1, 1, 2, 2]


# ---------------------------------------------------------------------------------------------
# curves and plot targets
# ---------------------------------------------------------------------------------------------


def test_plot_specs_are_read_as_pvdkit_reads_them(fixture_session):
    """The plot box takes ``Class.attribute[component]`` through :func:`pvdkit.names.resolve_spec`
    (the one reader of that syntax): a vector's default component is its length."""
    rec, vehicles = fixture_session.recording, fixture_session.vehicles

    def read(spec):
        t = resolve_targets(rec, vehicles, spec)
        return t.spec.split("[")[0], t.attribute, t.component

    assert read("TireForce.lngForce") == ("TireForce.lngForce", "lngForce", NORM)
    assert read("TireForce.lngForce[z]") == ("TireForce.lngForce", "lngForce", 2)
    assert read("RigidBodyState.pos[1]") == ("RigidBodyState.pos", "pos", 1)
    assert read("TireForce.lngForce[|v|]") == ("TireForce.lngForce", "lngForce", NORM)
    assert split_element("Thing.pose.position.xyz[0]") == ("Thing.pose.position.xyz", "0")
    for bad in ("TireForce", "TireForce.lngForce[q]", ".x"):
        with pytest.raises(PlotError):
            resolve_targets(rec, vehicles, bad)


def test_a_pose_plots_by_position_or_rotation_element(fixture_session):
    """``globalPose[y]`` is the actor's height (Y up), titled so; a whole pose has no length to
    default to, so the plot box asks for an element."""
    rec, vehicles = fixture_session.recording, fixture_session.vehicles
    basic = fixture_session.vehicle_named("/World/Basic")
    t = resolve_targets(rec, vehicles, "PxRigidActor.globalPose[y]", basic.obj)
    assert t.component == 5 and t.spec == "PxRigidActor.globalPose[y]"
    assert t.title.startswith("PxRigidActor.globalPose[y]")
    heights = extract_curve(rec, t.objects[0][1], "globalPose", t.component).values
    assert heights.min() > 0.9
    for bad, message in (("PxRigidActor.globalPose", r"a pose .*plot one element"),
                         ("PxRigidActor.globalPose[norm]", "has no length")):
        with pytest.raises(PlotError, match=message):
            resolve_targets(rec, vehicles, bad, basic.obj)


def test_curves_of_objects_outside_one_vehicle_are_labelled_by_their_paths(fixture_session):
    """Every EngineState of the scene was labelled "EngineState" twice, and PhysX's unnamed
    scene by its handle (0x557221bb6d20): the legend and the CSV could not tell them apart."""
    rec, vehicles = fixture_session.recording, fixture_session.vehicles
    engines = resolve_targets(rec, vehicles, "EngineState.rotationSpeed")
    labels = [label for label, _ in engines.objects]
    assert labels == ["/World/Standard/EngineState", "/World/Tank/EngineState"]
    (scene,) = resolve_targets(rec, vehicles, "PxScene.gravity[y]").objects
    assert scene[0] == "<PxScene>"


def test_per_wheel_target_matches_readback(fixture_session, readback):
    rec = fixture_session.recording
    for vname in ("Basic", "Tank"):
        v = fixture_session.vehicle_named(f"/World/{vname}")
        t = resolve_targets(rec, fixture_session.vehicles, SPEED, v.obj)
        assert [label for label, _ in t.objects] == [w.label for w in v.wheels]
        assert t.title == f"{SPEED} · /World/{vname}" and t.component is None
        for (_, obj), wname in zip(t.objects, WHEEL_NAMES, strict=True):
            d = extract_curve(rec, obj, t.attribute)
            for step in range(12):
                assert d.value_at(2 * step) == pytest.approx(readback[f"{vname}.{wname}.rotationSpeed"][step],
                                                             rel=1e-6)


def test_plots_made_before_a_vehicle_was_named_are_relabelled(fixture_session):
    """A live recording names a vehicle when its actor arrives and tells its wheels' sides when
    their positions do: plots made earlier said "· Vehicle" and "wheel 0" until rebuilt by hand."""
    from viewer.model.series import PlotsModel

    rec, vehicles = fixture_session.recording, fixture_session.vehicles
    basic = fixture_session.vehicle_named("/World/Basic")
    model = PlotsModel()
    plot = model.add_target(resolve_targets(rec, vehicles, SPEED, basic.obj))
    want = (plot.title, [c.label for c in plot.curves])
    assert want[0] == f"{SPEED} · /World/Basic" and want[1][0] == "wheel 0 · front-left"
    plot.title = f"{SPEED} · Vehicle"  # as made while the vehicle had no name yet
    for k, c in enumerate(plot.curves):
        c.label = f"wheel {k}"
    changed = []
    model.plot_changed.connect(changed.append)
    model.relabel(rec, vehicles)
    assert (plot.title, [c.label for c in plot.curves]) == want and changed == [plot]
    model.relabel(rec, vehicles)  # nothing new: no signal
    assert changed == [plot]


def test_a_boolean_plots_as_0_and_1(fixture_session):
    rec = fixture_session.recording
    act = fixture_session.vehicles[0].wheels[0].part("WheelActuationState")
    s = rec.series(act, "isDriveApplied")
    curve = extract_curve(rec, act, "isDriveApplied")
    assert s.values.dtype == np.bool_ and set(curve.values.tolist()) <= {0.0, 1.0}
    np.testing.assert_array_equal(curve.values, s.values.astype(np.float64))


def test_vector_components_and_errors(fixture_session):
    rec = fixture_session.recording
    v = fixture_session.vehicles[0]
    tire = v.wheels[0].part("TireForce")
    raw = rec.series(tire, "lngForce").values
    np.testing.assert_array_equal(extract_curve(rec, tire, "lngForce", 2).values, raw[:, 2])
    np.testing.assert_allclose(extract_curve(rec, tire, "lngForce", NORM).values, np.linalg.norm(raw, axis=1),
                               rtol=1e-6)
    t = resolve_targets(rec, fixture_session.vehicles, "TireForce.lngForce", tire)
    assert t.component == NORM and t.title.startswith("|TireForce.lngForce|") and len(t.objects) == 4
    with pytest.raises(PlotError, match="choose a component"):
        extract_curve(rec, tire, "lngForce")
    with pytest.raises(PlotError, match="out of range"):
        extract_curve(rec, tire, "lngForce", 3)
    with pytest.raises(PlotError, match="object_handle"):
        resolve_targets(rec, fixture_session.vehicles, "WheelAttachment.tireForce", tire)
    with pytest.raises(PlotError, match="no class 'Tire'.*did you mean .*TireForce"):
        resolve_targets(rec, fixture_session.vehicles, "Tire.lngForce")
    # No vehicle context: every object of the class.
    t = resolve_targets(rec, fixture_session.vehicles, "TireForce.wheelTorque")
    assert len(t.objects) == 16
    # Enums plot as their values.
    actor = v.part("PxRigidDynamic")
    assert extract_curve(rec, actor, "type").values.tolist() == [float(rec.series(actor, "type").raw[0])]


def test_curve_cache_is_bounded(fixture_session):
    rec = fixture_session.recording
    cache = CurveCache(rec, max_bytes=400)
    keys = [CurveKey(w.part("SuspensionState").index, "jounce")
            for v in fixture_session.vehicles for w in v.wheels]
    for k in keys:
        cache.get(k)
    assert cache.nbytes <= 400 or len(cache._items) == 1
    assert cache.get(keys[0]).value_at(3) == rec.value_at(rec.objects[keys[0].object_index], "jounce", 3)


def test_plots_model_signals():
    pm = PlotsModel()
    events = []
    for name in ("plot_added", "plot_removed", "plot_changed"):
        getattr(pm, name).connect(lambda p, n=name: events.append((n, p.title)))
    pm.plots_replaced.connect(lambda: events.append(("plots_replaced", None)))
    pm.add_plot("a")
    assert events == [("plot_added", "a")]
    pm.remove_plot(pm.add_plot("b"))
    assert events[-2:] == [("plot_added", "b"), ("plot_removed", "b")]
    events.clear()
    with pm.batch():  # many changes, one signal: a view rebuilds once
        for title in "cde":
            pm.add_plot(title)
        pm.remove_plot(pm.plots[-1])
    assert events == [("plots_replaced", None)] and [p.title for p in pm.plots] == ["a", "c", "d"]
    pm.clear()
    assert events[-1] == ("plots_replaced", None) and len(events) == 2 and pm.plots == []


def test_recent_files_order_and_limit(tmp_path):
    r = RecentFiles(limit=3)
    for name in "abcd":
        r.add(str(tmp_path / name))
    r.add(str(tmp_path / "c"))
    assert [p[-1] for p in r.paths] == ["c", "d", "b"]
    (tmp_path / "d").write_text("x")
    assert r.existing() == [str(tmp_path / "d")]
    again = RecentFiles(r.paths, limit=3)
    assert again.paths == r.paths


# ---------------------------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------------------------


def test_compare_with_itself_gives_zero_difference():
    a, b = RecordingSession.open(FIXTURE), RecordingSession.open(FIXTURE)
    comp = Comparison(a, b)
    tire_a = a.vehicles[2].wheels[3].part("TireForce")
    assert comp.counterpart(tire_a).handle == tire_a.handle
    key = CurveKey(tire_a.index, "lngForce", 2)
    d = comp.difference(key)
    assert np.all(d.values == 0)
    ov = comp.overlay(key)
    da = comp.cache_a.get(key)
    np.testing.assert_array_equal(ov.values, da.values)


def test_compare_by_time_keeps_each_frame_of_a_step_with_its_twin():
    """PhysX writes two frames per step, both at the step's end time. By time, A's frame 10 went
    with B's frame 11 (the last frame at that time) and B's 10 was drawn at A's 11: a recording
    compared with itself showed its B curve a frame behind on every step's first frame. Each
    frame now goes with the frame at the same place among those of its time."""
    a, b = RecordingSession.open(FIXTURE), RecordingSession.open(FIXTURE)
    assert a.timebase.seconds[10] == a.timebase.seconds[11]  # PhysX's layout
    comp = Comparison(a, b, sync="time")
    fa = np.arange(a.n_frames)
    np.testing.assert_array_equal(comp.frames_b(fa), fa)
    np.testing.assert_array_equal(comp.a_position_of_b(fa), fa)
    tire = a.vehicles[1].wheels[0].part("TireForce")
    key = CurveKey(tire.index, "lngForce", 0)
    drawn, da = comp.overlay(key), comp.cache_a.get(key)
    np.testing.assert_array_equal(drawn.frames, da.frames)
    np.testing.assert_array_equal(drawn.values, da.values)
    # One frame per step against two: each of A's frames goes with B's frame of that time.
    one = a.timebase
    half = type(one)(one.seconds[1::2], one.source)
    steps = fa[: 2 * len(half)]  # the recording's last frame (open, a step of its own) aside
    np.testing.assert_array_equal(half.matching_frames(one, steps), steps // 2)
    np.testing.assert_array_equal(one.matching_frames(half, np.arange(len(half))), np.arange(len(half)) * 2)
    # A time this recording has no frame at: the frame in force then.
    shifted = type(one)(one.seconds + 0.5 * one.mean_step, one.source)
    np.testing.assert_array_equal(one.matching_frames(shifted, fa), one.frame_at(shifted.seconds))


def test_the_twin_of_a_shorter_recording_ends_where_it_ends(tmp_path):
    """B (25 frames) drawn over A (40) held its last value flat to A's end, and the legend read
    it there, with nothing to say B had ended: its curve now ends at B's last frame."""
    a = RecordingSession.open(write_recording(tmp_path / "a.ovd", 40, 10_000_000))
    b = RecordingSession.open(write_recording(tmp_path / "b.ovd", 25, 10_000_000, scale=2.0))
    for sync in ("frame", "time"):
        comp = Comparison(a, b, sync=sync)
        ov = comp.overlay(CurveKey(a.find("probe").index, "value"))
        assert np.isfinite(ov.value_at(24)) and np.isnan(ov.value_at(25)) and np.isnan(ov.value_at(39))


def test_compare_by_time_between_different_rates(tmp_path):
    """A at 100 Hz, B at 50 Hz; each records its frame timestamp. By time, B's frame for A's
    frame f is the last B frame at or before A's time, and A − B is exactly the time lag."""
    a = RecordingSession.open(write_recording(tmp_path / "a.ovd", 40, 10_000_000))
    b = RecordingSession.open(write_recording(tmp_path / "b.ovd", 20, 20_000_000))
    comp = Comparison(a, b, sync="time")
    fa = np.arange(40)
    fb = comp.frames_b(fa)
    ta, tb = a.timebase.seconds, b.timebase.seconds
    after = ta >= tb[0]  # A's first frame comes before B's first: B's frame 0 stands in
    assert np.all(fb[~after] == 0)
    assert np.all(tb[fb[after]] <= ta[after] + 1e-12)
    assert np.all((fb == 19) | (tb[np.minimum(fb + 1, 19)] > ta))
    probe = a.find("probe")
    key = CurveKey(probe.index, "value")
    d = comp.difference(key)
    full = zoh_values(d.frames, d.values, fa)
    # A − B only where both have frames: A's frame 0 (0.01 s) comes before B's first (0.02 s).
    np.testing.assert_allclose(full, np.where(after, ta - tb[fb], np.nan), atol=1e-12)
    comp.sync = "frame"
    np.testing.assert_array_equal(comp.frames_b(fa), np.minimum(fa, 19))
    with pytest.raises(ValueError, match="sync mode"):
        comp.sync = "space"
    # Wheels are matched through the vehicle graph.
    wa = a.vehicles[0].wheels[1].root
    assert comp.counterpart(wa) is b.vehicles[0].wheels[1].root


def test_workspace_plot_and_reset():
    ws = Workspace()
    ws.set_session(RecordingSession.open(FIXTURE))
    v = ws.session.vehicle_named("/World/Tank")
    ws.select(v.wheels[0].part("SuspensionState"))
    assert ws.current_vehicle is v
    plot = ws.plot("SuspensionState.jounce")
    assert [c.label for c in plot.curves] == [w.label for w in v.wheels]
    frames = []
    ws.timeline.frame_changed.connect(frames.append)
    ws.timeline.set_frame(7)
    ws.set_session(RecordingSession.open(FIXTURE))
    assert ws.plots.plots == [] and ws.selection.current is None
    assert ws.timeline.frame == 0 and frames == [7, 0]
