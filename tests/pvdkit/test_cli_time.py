"""Seconds: every recording says how its frames map to simulated time (``Recording.time_base``),
and ``pvdkit info`` / ``pvdkit series`` show it — on PhysX's recordings (two frames per step,
``PxScene.elapsedTime``) and simcore's (``Simulation.time``, ns or frame-counter timestamps)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from pvdkit import cli
from pvdkit.recording import Recording
from pvdkit.streams import MemoryStream
from pvdkit.synthetic import write_every_command
from pvdkit.types import PvdError

DATA = Path(__file__).resolve().parents[1] / "data"
SHORT = DATA / "vehicles_short.ovd"
DEV = DATA / "dev_drive.h5"
DT = 1 / 60
STEPS = 12  # simcore recordings of 0.2 s


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def simcore_recordings(tmp_path_factory) -> dict[tuple[bool, str], Path]:
    """The sedan for 0.2 s, in PhysX's layout (two frames per step) and pure Vehicle2's (one),
    with nanosecond and frame-counter timestamps."""
    from simcore.cli.record import record

    folder = tmp_path_factory.mktemp("time")
    out = {}
    for physx in (True, False):
        for stamps in ("ns", "frame"):
            path = folder / f"sedan_{physx}_{stamps}.h5"
            record("sedan", "accelerate", duration=STEPS * DT, out=path, physx=physx, timestamps=stamps)
            out[physx, stamps] = path
    return out


def test_physx_frames_map_to_the_end_of_their_step():
    rec = Recording.open(SHORT)
    tb = rec.time_base
    assert (tb.source, tb.timestamps) == ("PxScene.elapsedTime", "frame counter")
    assert (tb.steps, tb.frames_per_step) == (12, 2)
    assert tb.step_dt == pytest.approx(DT) and tb.step_rate == pytest.approx(60)
    assert tb.frame_rate == pytest.approx(120)
    assert tb.duration == pytest.approx(12 * DT)
    # Frames 2i (Vehicle2's states) and 2i+1 (the scene's results) are step i, ending at (i+1) dt;
    # the last frame (never closed, the destroys) keeps the last time; frame -1 is the start.
    want = [0.0] + [(i // 2 + 1) * DT for i in range(24)] + [12 * DT]
    np.testing.assert_allclose(rec.seconds(np.arange(-1, 25)), want, rtol=1e-6)
    assert rec.seconds(3) == pytest.approx(2 * DT) and isinstance(rec.seconds(3), float)
    wheel = rec.objects_of_class("WheelRigidBodyState")[0]
    s = rec.series(wheel, "correctedRotationSpeed")
    np.testing.assert_array_equal(s.seconds, rec.frames.seconds(s.frames))


def test_physx_seconds_match_the_readback_of_the_simulation():
    """``dev_drive_readback.csv`` holds PhysX's own time after each step and the timestamps of
    the step's two frames: every one maps to that time."""
    rec = Recording.open(DEV)
    with open(DATA / "dev_drive_readback.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 480 == rec.time_base.steps
    frame_of = {int(t): i for i, t in enumerate(rec.frames.start.tolist())}
    for col in ("ovd_frame_vehicle", "ovd_frame_rigid"):
        frames = [frame_of[int(r[col])] for r in rows]
        want = [float(r["sim_time_after_step"]) for r in rows]
        np.testing.assert_allclose(rec.seconds(np.array(frames)), want, rtol=0, atol=2e-6)
    assert rec.time_base.duration == pytest.approx(8.0, abs=1e-5)


@pytest.mark.parametrize("physx", [True, False])
@pytest.mark.parametrize("stamps", ["ns", "frame"])
def test_simcore_frames_map_to_the_simulated_time(simcore_recordings, physx, stamps):
    rec = Recording.open(simcore_recordings[physx, stamps])
    tb = rec.time_base
    per_step = 2 if physx else 1
    assert len(rec.frames) == per_step * STEPS
    assert (tb.source, tb.steps, tb.frames_per_step) == ("Simulation.time", STEPS, per_step)
    assert tb.timestamps == {"ns": "ns", "frame": "frame counter"}[stamps]
    want = np.repeat((np.arange(STEPS) + 1) * DT, per_step)
    np.testing.assert_allclose(rec.seconds(np.arange(len(rec.frames))), want, rtol=0, atol=1e-12)
    assert tb.duration == pytest.approx(STEPS * DT) and tb.step_rate == pytest.approx(60)
    if stamps == "ns":  # the vehicle frame's timestamp is the same time in nanoseconds
        np.testing.assert_array_equal(rec.frames.start[::per_step], np.round(want[::per_step] * 1e9))


@pytest.mark.parametrize("physx", [True, False])
def test_a_one_step_recording_knows_its_frames_per_step(tmp_path, capsys, physx):
    """With one clock sample there is no spacing to measure: PhysX's ``elapsedTime`` closes its
    step (frame 1 of frames 0, 1 and the open one), simcore's ``Simulation.time`` opens it and is
    held to the end (it said 3 and 1 frames per step)."""
    from simcore.cli.record import record

    path = tmp_path / "one.h5"
    record("sedan", "accelerate", duration=DT, out=path, physx=physx)
    with Recording.open(path) as rec:
        assert (rec.time_base.steps, rec.time_base.frames_per_step) == (1, 2 if physx else 1)
    from pvdkit.streams import OvdFileStream
    from pvdkit.types import DataType
    from pvdkit.writer import OmniPvdWriter

    physx_like = tmp_path / "physx_one_step.ovd"
    w = OmniPvdWriter(OvdFileStream(physx_like))
    scene = w.register_class("PxScene")
    elapsed = w.register_attribute(scene, "elapsedTime", DataType.FLOAT32, 1)
    w.create_object(1, scene, 0x10, "scene")
    for frame in (1, 2, 3):  # PhysX's counter: the vehicle frame, the results frame, the open one
        w.start_frame(1, frame)
        if frame == 2:
            w.set_attribute(1, 0x10, elapsed, np.float32(DT))
        if frame < 3:
            w.stop_frame(1, frame)
    w.close()
    with Recording.open(physx_like) as rec:
        assert (rec.time_base.steps, rec.time_base.frames_per_step) == (1, 2)
    status, out, _ = run(capsys, "info", str(physx_like))
    assert status == 0 and "1 step of 16.667 ms (60 Hz), 2 frames per step (120 frames/s)" in out


def test_a_recording_without_a_clock_says_so(tmp_path):
    ms = MemoryStream()
    write_every_command(ms)
    rec = Recording.open(ms.getvalue())
    tb = rec.time_base
    assert not tb.known and tb.seconds is None and tb.duration is None and tb.frame_rate is None
    assert "no PxScene.elapsedTime or Simulation.time" in tb.description
    with pytest.raises(PvdError, match="no time in seconds"):
        rec.seconds(0)


@pytest.mark.parametrize("times", [[0.0, np.nan, 0.2], [0.0, np.inf, 0.2], [0.0, 0.2, 0.1],
                                   [0.0, 1e308, 2e308]])
def test_a_clock_that_is_no_clock_is_named_not_used(times, tmp_path, capsys):
    """NaN, infinite or decreasing Simulation.time (fuzzing): it gave 'steps of nan ms' and numpy's
    bare 'overflow encountered in multiply' warning; now seconds are unknown and say why."""
    import warnings

    from pvdkit.types import DataType
    from pvdkit.writer import OmniPvdWriter

    w = OmniPvdWriter(MemoryStream())
    c = w.register_class("Simulation")
    t = w.register_attribute(c, "time", DataType.FLOAT64, 1)
    w.create_object(1, c, 1, "Simulation")
    for k, v in enumerate(times, start=1):
        w.start_frame(1, k)
        w.set_attribute(1, 1, t, v)
        w.stop_frame(1, k)
    path = tmp_path / "clock.ovd"
    path.write_bytes(w.stream.getvalue())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy RuntimeWarning gets out
        tb = Recording.open(path).time_base
        assert not tb.known and "Simulation.time holds no clock" in tb.description
        assert cli.main(["info", str(path)]) == 0 and cli.main(["series", str(path), "Simulation.time"]) == 0
    out = capsys.readouterr().out
    assert "time: unknown — " in out and "nan ms" not in out


# ------------------------------------------------------------------------------------- info


def test_info_shows_duration_rates_and_vehicles(capsys):
    status, out, _ = run(capsys, "info", str(DEV))
    assert status == 0
    lines = out.splitlines()
    assert lines[2].strip().startswith(
        "time: 8.000 s simulated, 480 steps of 16.667 ms (60 Hz), 2 frames per step (120 frames/s)")
    assert "seconds from PxScene.elapsedTime; frame timestamps: frame counter" in lines[3]
    at = lines.index("vehicles (4):")
    assert [line.split() for line in lines[at + 1:at + 5]] == [
        ["/World/Basic", "direct", "drive", "4", "wheels"],
        ["/World/Raw", "raw", "drive", "4", "wheels"],
        ["/World/Standard", "engine", "drive", "4", "wheels"],
        ["/World/Tank", "tank", "drive", "4", "wheels"],
    ]
    status, out, _ = run(capsys, "info", str(DEV), "--json")
    d = json.loads(out)
    assert d["time"]["source"] == "PxScene.elapsedTime" and d["time"]["steps"] == 480
    assert d["time"]["duration_s"] == pytest.approx(8.0, abs=1e-5) and d["time"]["frames_per_step"] == 2
    assert [(v["name"], v["kind"], v["wheels"]) for v in d["vehicles"]] == [
        ("/World/Basic", "direct drive", 4), ("/World/Raw", "raw drive", 4),
        ("/World/Standard", "engine drive", 4), ("/World/Tank", "tank drive", 4)]


def test_info_of_simcore_and_of_a_recording_without_time(capsys, simcore_recordings, tmp_path):
    status, out, _ = run(capsys, "info", str(simcore_recordings[False, "ns"]))
    assert status == 0
    assert "time: 0.200 s simulated, 12 steps of 16.667 ms (60 Hz), 1 frame per step (60 frames/s)" in out
    assert "seconds from Simulation.time; frame timestamps: ns" in out
    assert "vehicles (1):" in out and out.split("vehicles (1):\n")[1].split("\n")[0].split() == [
        "sedan", "direct", "drive", "4", "wheels"]
    ms = MemoryStream()
    write_every_command(ms)
    every = tmp_path / "every.ovd"
    every.write_bytes(ms.getvalue())
    status, out, _ = run(capsys, "info", str(every))
    assert status == 0 and "  time: unknown — frame timestamps:" in out and "vehicles" not in out
    d = json.loads(run(capsys, "info", str(every), "--json")[1])
    assert d["time"]["source"] == "" and d["time"]["duration_s"] is None and d["vehicles"] == []


# ----------------------------------------------------------------------------------- series


def test_series_time_is_seconds_beside_the_raw_timestamp(capsys, simcore_recordings):
    path = simcore_recordings[True, "ns"]
    status, out, _ = run(capsys, "series", str(path), "WheelRigidBodyState.rotationSpeed", "--object",
                         "sedan/wheel 3/WheelRigidBodyState", "--csv")
    assert status == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0][:3] == ["frame", "time [s]", "timestamp"] and rows[0][-1] == "rotationSpeed [rad/s]"
    body = rows[1:]
    assert [int(r[0]) for r in body] == list(range(0, 2 * STEPS, 2))  # Vehicle2's frame of each step
    np.testing.assert_allclose([float(r[1]) for r in body], (np.arange(STEPS) + 1) * DT, rtol=0, atol=1e-12)
    assert [int(r[2]) for r in body] == [round((k + 1) * DT * 1e9) for k in range(STEPS)]
    status, out, _ = run(capsys, "series", str(DEV), "EngineState.rotationSpeed")
    first = out.splitlines()[1].split()
    assert status == 0 and first[:3] == ["0", "0.016667", "1"] and first[4:6] == ["EngineState",
                                                                               "/World/Standard/EngineState"]


def test_version_and_record_default(capsys, tmp_path):
    from importlib.metadata import version

    status, out, _ = run(capsys, "--version")
    assert status == 0 and out.strip() == f"pvdkit {version('pvdkit')}"
    out_file = tmp_path / "d.h5"
    status, out, _ = run(capsys, "record", "default", "--duration", "0.05", "--quiet", "-o", str(out_file))
    assert status == 0 and out_file.is_file()
    assert Recording.open(out_file).time_base.duration == pytest.approx(3 * DT)


def test_the_step_median_is_numpys_median():
    from pvdkit.recording import _median

    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 480):
        x = rng.uniform(0.01, 0.02, n)
        assert _median(x) == np.median(x)
    assert np.isnan(_median(np.array([1.0, np.nan])))
