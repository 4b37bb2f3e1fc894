"""pvdkit.analysis: tidy tables of a recording, equal to what ``pvdkit series`` prints.

Why these tests: a DataFrame helper is only useful if its rows are the recording's samples —
the same rows, times, names and values as the command line — on PhysX's files, on simcore's in
both layouts and on fleets; and if a wrong name is one line, not a traceback.
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import numpy as np
import pytest

from pvdkit.analysis import NO_WHEEL, Recording, dataframe, table
from pvdkit.cli import main
from pvdkit.names import Vehicle, Wheel, vehicles
from pvdkit.recording import Recording as QueryRecording
from pvdkit.types import PvdError

# pandas is the optional 'analysis' extra: the base-install CI job has none (the numpy path is
# tested below with pandas blocked, in the job that has it).
pd = pytest.importorskip("pandas", reason="the analysis extra (pandas) is not installed")

DATA = Path(__file__).resolve().parents[1] / "data"
DEV = DATA / "dev_drive.h5"
SHORT = DATA / "vehicles_short.ovd"


@pytest.fixture(scope="module")
def dev() -> Recording:
    return Recording.open(DEV)


@pytest.fixture(scope="module")
def simcore_files(tmp_path_factory) -> dict[str, Path]:
    from simcore.cli.record import record

    d = tmp_path_factory.mktemp("simcore")
    out = {"physx": d / "physx.h5", "pure": d / "pure.h5", "fleet": d / "fleet.h5"}
    record("sedan", "accelerate", duration=0.2, out=out["physx"], physx=True)
    record("sedan", "accelerate", duration=0.2, out=out["pure"], physx=False)
    record("sedan", "accelerate", duration=0.2, out=out["fleet"], vehicles=3)
    return out


def series_csv(capsys, path: Path, spec: str, obj: str | None = None) -> tuple[list[str], list[list[str]]]:
    """``pvdkit series --csv`` through the command line: header and rows."""
    argv = ["series", str(path), spec, "--csv"] + (["--object", obj] if obj else [])
    assert main(argv) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    return rows[0], rows[1:]


def assert_same_as_series(df: pd.DataFrame, header: list[str], rows: list[list[str]]) -> None:
    """Row for row: frame, time, object path and every value column (float32 printed exactly)."""
    assert len(df) == len(rows)
    col = {h: i for i, h in enumerate(header)}
    assert [int(r[col["frame"]]) for r in rows] == df["frame"].tolist()
    np.testing.assert_allclose([float(r[col["time [s]"]]) for r in rows], df["time"], rtol=0, atol=1e-12)
    assert [r[col["path"]] for r in rows] == df["object"].tolist()
    values = header[len(["frame", "time [s]", "timestamp", "handle", "name", "path"]):]
    mine = list(df.columns[5:])
    assert [h.split(" [")[0] for h in values] == mine  # same names, series adds the unit
    for h, m in zip(values, mine, strict=True):
        np.testing.assert_array_equal([float(r[col[h]]) for r in rows], df[m].to_numpy(np.float64))


@pytest.mark.parametrize(("path", "spec", "obj"), [
    (DEV, "WheelRigidBodyState.correctedRotationSpeed", None),
    (DEV, "TireForce.lngForce", "/World/Basic/wheel 1"),
    (DEV, "TireForce.lngForce[z]", "/World/Tank"),
    (DEV, "EngineState.rotationSpeed", None),
    (SHORT, "TireSlipState.lngSlip", None),
    (SHORT, "TireForce.lngForce[norm]", "/World/Standard/wheel 3"),
])
def test_dataframe_rows_equal_pvdkit_series(capsys, path, spec, obj):
    header, rows = series_csv(capsys, path, spec, obj)
    with Recording.open(path) as rec:
        df = rec.dataframe(spec, object=obj)
    assert list(df.columns[:5]) == ["time", "frame", "vehicle", "wheel", "object"]
    assert_same_as_series(df, header, rows)


def test_columns_and_dtypes(dev):
    df = dev.dataframe("TireForce.lngForce")
    assert list(df.columns) == ["time", "frame", "vehicle", "wheel", "object",
                                "lngForce[0]", "lngForce[1]", "lngForce[2]"]
    assert str(df["wheel"].dtype) == "Int64" and df["frame"].dtype == np.int64
    assert df["lngForce[2]"].dtype == np.float32
    assert len(df) == 16 * 481  # 4 vehicles × 4 wheels × 481 samples
    one = df[(df["vehicle"] == "/World/Raw") & (df["wheel"] == 2)]
    ref = dev.series(vehicles(dev)[1].wheels[2].object("TireForce"), "lngForce")
    np.testing.assert_array_equal(one[["lngForce[0]", "lngForce[1]", "lngForce[2]"]].to_numpy(), ref.values)
    np.testing.assert_array_equal(one["time"], dev.seconds(ref.frames))


def test_per_wheel_and_vehicle_level_classes(dev):
    wheels = dev.dataframe("TireSlipState.lngSlip")
    assert sorted(wheels["wheel"].unique().tolist()) == [0, 1, 2, 3]
    assert wheels["object"].str.fullmatch(r"/World/\w+/wheel [0-3]/TireSlipState").all()
    engine = dev.dataframe("EngineState.rotationSpeed")
    assert engine["wheel"].isna().all()
    assert sorted(set(engine["vehicle"])) == ["/World/Standard", "/World/Tank"]
    assert set(engine["object"]) == {"/World/Standard/EngineState", "/World/Tank/EngineState"}
    scene = dev.dataframe("PxScene.elapsedTime")  # outside every vehicle
    assert scene["vehicle"].isna().all() and scene["wheel"].isna().all() and len(scene) == 480


def test_merge_of_two_classes_on_vehicle_and_wheel(dev):
    df = dev.dataframe(["TireForce.lngForce[z]", "TireSlipState.lngSlip"], vehicle="/World/Tank")
    assert list(df.columns) == ["time", "frame", "vehicle", "wheel", "object", "lngForce[z]", "lngSlip"]
    assert set(df["object"]) == {f"/World/Tank/wheel {k}" for k in range(4)}
    # One row per (frame, wheel), holding each attribute's last sample of that frame.
    assert not df.duplicated(["frame", "wheel"]).any()
    for attr, col, cls in (("lngForce", "lngForce[z]", "TireForce"), ("lngSlip", "lngSlip", "TireSlipState")):
        for w in vehicles(dev)[3].wheels:
            s = dev.series(w.object(cls), attr)
            last = np.r_[s.frames[1:] != s.frames[:-1], True]  # the last sample of each frame
            got = df[df["wheel"] == w.index]
            np.testing.assert_array_equal(got["frame"], s.frames[last])
            ref = s.values[last] if s.values.ndim == 1 else s.values[last][:, 2]
            np.testing.assert_array_equal(got[col], ref)


def test_merge_within_one_class_keys_by_object(dev):
    df = dev.dataframe(["TireForce.lngForce[x]", "TireForce.latForce[x]"])
    assert df["object"].str.endswith("/TireForce").all() and len(set(df["object"])) == 16
    assert not df.duplicated(["frame", "object"]).any()


def test_vehicle_level_values_repeat_on_wheel_rows_and_hold(dev):
    specs = ["WheelRigidBodyState.correctedRotationSpeed", "EngineState.rotationSpeed", "PxScene.elapsedTime"]
    exact = dev.dataframe(specs, vehicle="/World/Standard")
    held = dev.dataframe(specs, vehicle="/World/Standard", hold=True)
    engine = dev.series(vehicles(dev)[2].object_of("EngineState"), "rotationSpeed")
    for df in (exact, held):
        at = df[df["frame"] == 100]
        assert at["wheel"].tolist() == [0, 1, 2, 3]
        assert (at["rotationSpeed"] == engine.at(100)).all()
    # PhysX's layout: the scene's dt in the odd frames, Vehicle2's states in the even ones.
    assert exact.loc[exact["frame"] == 100, "elapsedTime"].isna().all()
    assert exact.loc[exact["frame"] == 101, "rotationSpeed"].isna().all()
    assert held["elapsedTime"].iloc[4:].notna().all() and held["rotationSpeed"].notna().all()


def test_colliding_value_names_get_the_class(dev):
    df = dev.dataframe(["WheelRigidBodyState.rotationSpeed", "EngineState.rotationSpeed"],
                       vehicle="/World/Tank")
    assert list(df.columns[5:]) == ["WheelRigidBodyState.rotationSpeed", "EngineState.rotationSpeed"]


def test_selectors(dev):
    basic = vehicles(dev)[0]
    by_name = dev.table("TireForce.lngForce[z]", vehicle="/World/Basic")
    by_object = dev.table("TireForce.lngForce[z]", vehicle=basic)
    by_select = dev.table("TireForce.lngForce[z]", object="/World/Basic")
    for cols in (by_object, by_select):
        for k in by_name:
            np.testing.assert_array_equal(cols[k], by_name[k])
    wheel = dev.table("TireForce.lngForce[z]", object=basic.wheels[3])
    assert set(wheel["object"]) == {"/World/Basic/wheel 3/TireForce"}
    two = dev.table("TireForce.lngForce[z]", vehicle=["/World/Basic", "/World/Tank"])
    assert set(two["vehicle"]) == {"/World/Basic", "/World/Tank"}
    # a handle as a number, as text, in hex, in a list; as `pvdkit series --object 72` takes it
    tire = basic.wheels[3].objects(dev.cls("TireForce"))[0]
    for handle in (tire.handle, np.uint64(tire.handle), str(tire.handle), hex(tire.handle), [tire.handle]):
        cols = dev.table("TireForce.lngForce[z]", object=handle)
        np.testing.assert_array_equal(cols["lngForce[z]"], wheel["lngForce[z]"])
    for bad, what in ((1.5, "object="), (True, "object="), ([None], "object=")):
        with pytest.raises(PvdError, match=f"{what} takes a path, name, handle"):
            dev.table("TireForce.lngForce[z]", object=bad)
    with pytest.raises(PvdError, match="vehicle= takes a vehicle's name"):
        dev.table("TireForce.lngForce[z]", vehicle=[0])


def test_simcore_physx_layout_rows_per_step(simcore_files):
    with Recording.open(simcore_files["physx"]) as rec:
        df = rec.dataframe("WheelRigidBodyState.correctedRotationSpeed")
        tb = rec.time_base
        assert tb.frames_per_step == 2 and set(df["vehicle"]) == {"sedan"}
        assert (df["frame"] % 2 == 0).all()  # Vehicle2's values live in frames 2i
        steps = df["frame"] // 2
        np.testing.assert_allclose(df["time"], (steps + 1) * tb.step_dt, rtol=1e-9)
        assert df.groupby("wheel").size().tolist() == [tb.steps] * 4


def test_simcore_pure_layout_rows_per_frame(simcore_files):
    with Recording.open(simcore_files["pure"]) as rec:
        df = rec.dataframe(["WheelRigidBodyState.correctedRotationSpeed", "TireForce.lngForce[z]"])
        assert rec.time_base.frames_per_step == 1
        assert df.groupby("wheel")["frame"].apply(list).tolist() == [list(range(len(rec.frames)))] * 4
        assert df[["correctedRotationSpeed", "lngForce[z]"]].notna().all().all()


def test_fleet_names(simcore_files, capsys):
    with Recording.open(simcore_files["fleet"]) as rec:
        assert [(v.name, v.kind, len(v.wheels)) for v in rec.vehicles] == \
            [(f"vehicle_00{i}", "direct drive", 4) for i in range(3)]
        df = rec.dataframe("TireForce.lngForce[z]", vehicle="vehicle_001")
        assert set(df["object"]) == {f"vehicle_001/wheel {k}/TireForce" for k in range(4)}
    header, rows = series_csv(capsys, simcore_files["fleet"], "TireForce.lngForce[z]", "vehicle_001")
    assert_same_as_series(df, header, rows)


def test_vehicles_and_wheels_are_first_class(dev):
    vs = dev.vehicles
    assert all(isinstance(v, Vehicle) for v in vs) and vs == vehicles(dev)
    assert [v.kind for v in vs] == ["direct drive", "raw drive", "engine drive", "tank drive"]
    w = vs[1].wheels[2]
    assert isinstance(w, Wheel) and w.path == "/World/Raw/wheel 2" and w.vehicle is vs[1]
    assert [o.cls.name for o in w.objects("TireForce")] == ["TireForce"]
    assert w.object("TireForce") in vs[1].objects("TireForce")
    assert all(o.cls.name != "TireForce" for o in vs[1].objects(wheels=False))
    with pytest.raises(PvdError, match="/World/Basic has no EngineState objects; expected one"):
        vs[0].object_of("EngineState")


def test_functions_take_any_recording():
    rec = QueryRecording.open(SHORT)
    assert not hasattr(rec, "dataframe")
    spec = "EngineState.rotationSpeed"
    assert len(dataframe(rec, spec)) == len(table(rec, spec)["frame"]) == 2 * 13


@pytest.mark.parametrize(("spec", "kwargs", "message"), [
    ("WheelRigidBodyState.correctedRotationSped", {},
     r"class WheelRigidBodyState has no attribute 'correctedRotationSped'; "
     r"did you mean correctedRotationSpeed"),
    ("WheelRigidBodyStat.correctedRotationSpeed", {},
     r"no class 'WheelRigidBodyStat' .*did you mean WheelRigidBodyState"),
    ("correctedRotationSpeed", {},
     r"expected CLASS.ATTRIBUTE.*did you mean WheelRigidBodyState.correctedRotationSpeed"),
    ("TireForce.lngForce[7]", {}, r"TireForce.lngForce\[7\]: it has 3 elements; element 7 is out of range"),
    ("TireForce.lngForce[q]", {}, r"TireForce.lngForce\[q\]: expected x, y, z, w"),
    ("Vehicle.wheelAttachmentSet", {}, r"is a unique list"),
    ("TireForce.lngForce", {"vehicle": "/World/Nope"},
     r"no vehicle '/World/Nope' \(its vehicles: /World/Basic, /World/Raw"),
    ("TireForce.lngForce", {"vehicle": []}, r"vehicle= is an empty list"),
    ("TireForce.lngForce", {"object": "TireForce2"}, r"'TireForce2' is ambiguous: 4 objects match"),
    ("TireForce.lngForce", {"object": "/World/Basic/EngineState"}, r"no object"),
])
def test_bad_input_is_one_line(dev, spec, kwargs, message):
    with pytest.raises(PvdError, match=message) as err:
        dev.dataframe(spec, **kwargs)
    assert "\n" not in str(err.value)


def test_a_vehicle_by_the_last_part_of_its_name(dev):
    """vehicle="Basic" was "no vehicle" while --object Basic and replay --vehicle Basic worked."""
    short = dev.dataframe("TireForce.lngForce[z]", vehicle=["Basic", "/World/Tank"])
    whole = dev.dataframe("TireForce.lngForce[z]", vehicle=["/World/Basic", "/World/Tank"])
    assert short.equals(whole) and set(short["vehicle"]) == {"/World/Basic", "/World/Tank"}


def test_merge_that_needs_a_choice_says_so(dev):
    with pytest.raises(PvdError, match="several objects per row key.*select one with object="):
        dev.table(["BrakeResponseParams.maxResponse", "EngineState.rotationSpeed"])


def test_without_pandas(dev, monkeypatch):
    with_pandas = dev.dataframe("TireForce.lngForce[z]", vehicle="/World/Tank")
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now fails as if not installed
    with pytest.raises(PvdError) as err:
        dev.dataframe("TireForce.lngForce[z]")
    assert str(err.value) == ("pvdkit.analysis.dataframe needs the analysis extra: "
                              "pip install 'pvdkit[analysis]'")
    cols = dev.table("TireForce.lngForce[z]", vehicle="/World/Tank")
    assert list(cols) == list(with_pandas.columns)
    assert all(isinstance(v, np.ndarray) for v in cols.values())
    np.testing.assert_array_equal(cols["wheel"], with_pandas["wheel"].to_numpy(np.int64))
    np.testing.assert_array_equal(cols["lngForce[z]"], with_pandas["lngForce[z]"])
    assert (dev.table("EngineState.rotationSpeed")["wheel"] == NO_WHEEL).all()


def test_series_value_at_and_state_at_take_paths_as_table_does(dev):
    """rec.series / value_at / state_at take the paths, vehicle names and diff labels that
    table() and `pvdkit series --object` take, besides names and handles."""
    tire = dev.find_object("/World/Tank/wheel 2/TireForce")
    assert tire.cls.name == "TireForce"
    by_path = dev.series("/World/Tank/wheel 2/TireForce", "lngForce")
    np.testing.assert_array_equal(by_path.values, dev.series(tire, "lngForce").values)
    np.testing.assert_array_equal(dev.value_at("/World/Tank/wheel 2/TireForce", "lngForce", 100),
                                  dev.value_at(tire, "lngForce", 100))
    assert set(dev.state_at("/World/Tank/wheel 2/TireForce", 100)) >= {"lngForce", "latForce"}
    with pytest.raises(PvdError, match="/World/Tank has no wheel 9: its wheels are 0 … 3"):
        dev.series("/World/Tank/wheel 9/TireForce", "lngForce")
    with pytest.raises(PvdError, match="TireForce2.*/World/Basic/wheel 2/TireForce"):
        dev.series("TireForce2", "lngForce")  # four vehicles' wheels share the name: the error lists them
    assert dev.find_object(hex(tire.handle)) is tire


def test_frames_and_seconds_are_checked_and_convertible(dev):
    """A float frame is easy to mistake for seconds: refused, pointing at time_base.frame_at;
    frames outside the recording are refused by rec.seconds instead of clamped; the time base
    prints as one line, and an object alive to the end says so."""
    tb = dev.time_base
    assert repr(tb).startswith("<TimeBase 961 frames, ") and "\n" not in repr(tb)
    frame = tb.frame_at(2.0)
    assert dev.seconds(frame) == pytest.approx(2.0, abs=1e-6) and 2.0 < dev.seconds(frame + 1)
    assert tb.frame_at(0.0) == -1 and tb.frame_at(1e9) == len(dev.frames) - 1
    # PhysX sums float32 steps: step 0 ends at 0.016666668 s and step 59 at 1.0000000522 s; the
    # time a user types for a step's end is that step (it was the step before, or the set-up)
    assert dev.seconds(1) > 1 / 60 and tb.frame_at(1 / 60) == 1
    assert dev.seconds(119) > 1.0 and tb.frame_at(1.0) == 119
    assert tb.frame_at(1.0 - 0.002) == 117  # an eighth of a step earlier: the step before
    speed = dev.objects_of_class("WheelRigidBodyState")[0]
    with pytest.raises(PvdError, match=r"frame 1.5 is not a frame number; .*time_base.frame_at\(1.5\)"):
        speed.value_at("correctedRotationSpeed", 1.5)
    assert speed.value_at("correctedRotationSpeed", 100.0) == speed.value_at("correctedRotationSpeed", 100)
    with pytest.raises(PvdError, match="frame 5000 is outside the recording's frames -1 .* 960"):
        dev.seconds([720, 5000])
    with pytest.raises(PvdError, match="frame numbers"):
        dev.seconds(np.array([1.5]))
    # other types are one PvdError line too, never numpy's or Python's own (fuzzing finds)
    for bad in ("3", None, True):
        with pytest.raises(PvdError, match="frames must be frame numbers"):
            dev.seconds(bad)
    for bad in ("abc", None, True, 10**400, float("nan")):
        with pytest.raises(PvdError, match="seconds must be a"):
            tb.frame_at(bad)
    assert dev.value_at(np.uint64(speed.handle), "correctedRotationSpeed", 100) == \
        speed.value_at("correctedRotationSpeed", 100)  # a numpy handle, as dataframe(object=) takes it
    with pytest.raises(PvdError, match="named by its name or handle, not by bool True"):
        dev.state_at(True, 0)


def test_an_object_alive_to_the_end_says_so(simcore_files):
    with Recording.open(simcore_files["pure"]) as rec:
        assert repr(rec.objects_of_class("RigidBodyParams")[0]).endswith("frames 0..end>")


def test_wheels_know_their_side(dev, simcore_files):
    """Which wheel is "wheel 3" depends on the vehicle description: PhysX's samples list
    front-left first, simcore's sedan front-right (a user had to read the viewer's source to
    find the rear-left wheel). Wheel.side and Vehicle.wheel(side) say it, from the recording."""
    for v in dev.vehicles:
        assert [w.side for w in v.wheels] == ["front-left", "front-right", "rear-left", "rear-right"], v.name
    tank = next(v for v in dev.vehicles if v.name == "/World/Tank")
    assert tank.wheel("rear-left").index == 2
    with Recording.open(simcore_files["pure"]) as rec:
        (sedan,) = rec.vehicles
        assert [w.side for w in sedan.wheels] == ["front-right", "front-left", "rear-right", "rear-left"]
        rear_left = sedan.wheel("rear-left")
        assert rear_left.path == "sedan/wheel 3"
        df = rec.dataframe("TireSlipState.lngSlip", object=rear_left)
        assert set(df["wheel"]) == {3}
        with pytest.raises(PvdError, match=r"sedan: no wheel at 'middle' \(wheel 0: front-right, "):
            sedan.wheel("middle")
        # --object and object= take a wheel by its side, as the viewer shows it
        by_side = rec.dataframe("TireSlipState.lngSlip", object="sedan/rear-left")
        assert set(by_side["object"]) == {"sedan/wheel 3/TireSlipState"}
        assert rec.find_object("sedan/rear-left/TireSlipState") is rear_left.object("TireSlipState")
        with pytest.raises(PvdError, match=r"sedan: no wheel at 'front' \(wheel 0: front-right"):
            rec.dataframe("TireSlipState.lngSlip", object="sedan/front")
