"""Model layer without Qt: signals, navigation history, selection, timeline and time bases."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests.viewer.conftest import write_recording
from viewer.model.selection import NavigationHistory, Selection
from viewer.model.signals import Signal
from viewer.model.timeline import TimeBase, Timeline, assumed_timebase, detect_timebase, parse_jump

ROOT = Path(__file__).resolve().parents[2]


def test_model_layer_imports_without_qt():
    """Every module of viewer.model imports (and works) with PySide6, shiboken6 and pyqtgraph
    made unimportable — the model layer must stay Qt-free."""
    code = textwrap.dedent(f"""
        import importlib, pkgutil, sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph', 'PyQt5', 'PyQt6'):
                    raise ImportError('Qt is blocked in the model layer: ' + name)
                return None
        sys.meta_path.insert(0, Block())
        sys.path.insert(0, {str(ROOT)!r})
        import viewer.model
        names = [m.name for m in pkgutil.iter_modules(viewer.model.__path__, 'viewer.model.')]
        for n in names:
            importlib.import_module(n)
        import numpy as np
        from viewer.model.downsample import step_points
        from viewer.model.workspace import Workspace
        ws = Workspace()
        ws.timeline.set_frame(3)
        assert len(step_points(np.arange(5), np.ones(5), 0, 4, 10)[0]) == 10
        bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph')]
        assert not bad, bad
        print(len(names))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) >= 10  # every module was imported, not just the package


def test_signal_calls_every_slot_in_order_and_reraises_after():
    s = Signal("s")
    calls = []

    def bad(x):
        calls.append(("bad", x))
        raise RuntimeError("boom")

    s.connect(lambda x: calls.append(("a", x)))
    s.connect(bad)
    s.connect(lambda x: calls.append(("c", x)))
    with pytest.raises(RuntimeError, match="boom"):
        s.emit(1)
    assert calls == [("a", 1), ("bad", 1), ("c", 1)]
    calls.clear()
    s.disconnect(bad)
    with s.blocked():
        s.emit(2)
    assert calls == []
    s.emit(3)
    assert calls == [("a", 3), ("c", 3)]


def test_navigation_history_back_forward_truncate_and_limit():
    h: NavigationHistory[str] = NavigationHistory(limit=4)
    assert h.current is None and not h.can_back and h.back() is None
    for x in "abc":
        h.push(x)
    h.push("c")  # re-selecting the current entry is not navigation
    assert h.entries() == ["a", "b", "c"]
    assert h.back() == "b" and h.back() == "a" and h.back() is None
    assert h.forward() == "b" and h.can_forward
    h.push("d")  # drops the forward entry "c"
    assert h.entries() == ["a", "b", "d"] and not h.can_forward
    for x in "efg":
        h.push(x)
    assert h.entries() == ["d", "e", "f", "g"]  # oldest dropped beyond the limit
    assert h.current == "g"
    with pytest.raises(ValueError):
        NavigationHistory(0)


def test_selection_emits_changes_and_walks_history(fixture_session):
    objs = fixture_session.recording.objects[:3]
    sel = Selection()
    seen, hist = [], []
    sel.changed.connect(seen.append)
    sel.history_changed.connect(lambda b, f: hist.append((b, f)))
    for o in objs:
        sel.select(o)
    assert seen == list(objs)
    assert sel.back() is objs[1] and sel.back() is objs[0] and sel.back() is None
    assert sel.current is objs[0]
    assert sel.forward() is objs[1]
    assert hist[-1] == (True, True)
    sel.clear()
    assert sel.current is None and seen[-1] is None and hist[-1] == (False, False)


def test_timeline_navigation_clamps_and_emits_only_on_change():
    tl = Timeline(TimeBase(np.arange(10) * 0.1, "test"))
    frames = []
    tl.frame_changed.connect(frames.append)
    assert tl.set_frame(5) == 5
    tl.set_frame(5)
    assert tl.step(-10) == 0 and tl.end() == 9 and tl.step(3) == 9 and tl.home() == 0
    assert frames == [5, 0, 9, 0]
    assert tl.seek_time(0.55) == 5 and tl.time == pytest.approx(0.5)
    assert tl.jump("t=0.31") == 3 and tl.jump("700ms") == 7 and tl.jump("2") == 2
    with pytest.raises(ValueError, match="frame number"):
        tl.jump("two")
    with pytest.raises(ValueError):
        tl.set_speed(0)


def test_parse_jump_forms():
    tb = TimeBase(np.array([0.0, 0.5, 0.5, 1.0, 1.5]), "t")
    assert parse_jump("3", tb) == 3
    assert parse_jump("0.5s", tb) == 2  # the last frame in force at that time
    assert parse_jump(" t = 1.2 ", tb) == 3
    assert parse_jump("-1", tb) == 4 and parse_jump("-5", tb) == 0  # from the end, as --frame
    with pytest.raises(ValueError, match="whole"):
        parse_jump("1.5", tb)
    # Outside the recording: the reason, never a silent jump to the nearest end (nor a traceback).
    for text, reason in (("5", r"frame 5: the recording has frames 0 … 4"), ("-6", "frames 0 … 4"),
                         ("-1s", "runs from 0 s to 1.5 s"), ("100s", "runs from 0 s to 1.5 s"),
                         ("1e400", "too large"), ("1e400s", "too large")):
        with pytest.raises(ValueError, match=reason):
            parse_jump(text, tb)


def test_playback_runs_on_simulated_time_and_stops_at_the_end():
    tb = TimeBase(np.arange(100) / 50.0, "50 Hz")  # 2 s of frames at 50 Hz
    tl = Timeline(tb)
    playing = []
    tl.playing_changed.connect(playing.append)
    tl.play()
    assert tl.tick(0.1) == 5  # 0.1 s at ×1 = 5 frames at 50 Hz
    tl.set_speed(4.0)
    assert tl.tick(0.1) == 25  # ×4: 0.4 s more
    tl.tick(10.0)
    assert tl.frame == 99 and not tl.playing and playing == [True, False]
    tl.loop = True
    tl.play()  # at the end with loop: continues from the end, wraps on the next tick
    assert tl.tick(0.01) == 0
    tl.pause()
    assert tl.tick(1.0) == 0  # paused: time does not move


def test_timebase_physx_is_running_sum_of_scene_elapsed_time(fixture_session, readback):
    tb = fixture_session.timebase
    assert tb.exact and "elapsedTime" in tb.source
    for step, t_after in enumerate(readback["sim_time_after_step"]):
        # Both frames of step i (the vehicle update, then the results) read the step's end, as
        # Recording.time_base maps them.
        assert tb.seconds[2 * step] == pytest.approx(t_after, abs=1e-6)
        assert tb.seconds[2 * step + 1] == pytest.approx(t_after, abs=1e-6)
    assert tb.frame_at(0.02) == 1  # last frame whose time is at or before 0.02 s (step 0 ends at 1/60)


def test_timebase_of_simcore_in_physx_layout_is_simulation_time(tmp_path):
    """simcore stamps a step's two frames 1 ns apart: read as a clock that gave 500 000 s for
    half a second; the recording's Simulation.time gives the right seconds."""
    from pvdkit.recording import Recording
    from simcore.cli.record import record

    out = tmp_path / "sedan.h5"
    record("sedan", "accelerate", duration=0.5, out=out)
    rec = Recording.open(out)
    tb = detect_timebase(rec)
    assert tb.exact and tb.source == "Simulation.time"
    assert tb.seconds[-1] == pytest.approx(0.5, abs=1e-6)
    np.testing.assert_allclose(tb.seconds, rec.seconds(np.arange(len(rec.frames))))


def test_timebase_from_clock_timestamps_and_fallback(tmp_path):
    from pvdkit.recording import Recording

    rec = Recording.open(write_recording(tmp_path / "a.ovd", 5, 4_000_000))  # 250 Hz, ns
    tb = detect_timebase(rec)
    assert tb.source == "frame timestamps (ns)"
    np.testing.assert_allclose(tb.seconds, np.arange(1, 6) * 0.004)
    rec_us = Recording.open(write_recording(tmp_path / "b.ovd", 5, 20_000_000))
    assert detect_timebase(rec_us).mean_step == pytest.approx(0.02)
    tb = assumed_timebase(3, 30)
    assert not tb.exact and tb.time_of(2) == pytest.approx(2 / 30) and tb.time_of(99) == tb.time_of(2)
