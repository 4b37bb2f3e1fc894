"""The ``pvdkit`` command line, run in-process through ``main([...])``."""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from pvdkit import cli
from pvdkit.names import names_of
from pvdkit.recording import Recording
from pvdkit.streams import MemoryStream
from pvdkit.synthetic import write_every_command
from pvdkit.terminal import ProgressBar, format_table
from pvdkit.types import DataType
from pvdkit.writer import OmniPvdWriter

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd"
EXPECTED_COUNTS = {
    "register_class": 172,
    "register_attribute": 644,
    "register_enum": 174,
    "register_flags": 48,
    "register_class_attribute": 0,
    "register_unique_list_attribute": 37,
    "set_attribute": 24005,
    "add_to_unique_list": 100,
    "remove_from_unique_list": 0,
    "create_object": 528,
    "destroy_object": 483,
    "start_frame": 25,
    "stop_frame": 24,
    "record_message": 0,
}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def fixture_h5(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "vehicles_short.h5"
    assert cli.main(["convert", str(FIXTURE), str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def every_ovd(tmp_path_factory) -> Path:
    ms = MemoryStream()
    write_every_command(ms)
    path = tmp_path_factory.mktemp("cli") / "every.ovd"
    path.write_bytes(ms.getvalue())
    return path


# ------------------------------------------------------------------------------------ info


@pytest.mark.parametrize("which", ["ovd", "h5"])
def test_info_json_gives_the_exact_command_counts(capsys, fixture_h5, which):
    path = FIXTURE if which == "ovd" else fixture_h5
    status, out, err = run(capsys, "info", str(path), "--json")
    assert status == 0 and err == ""
    d = json.loads(out)
    assert d["commands"] == EXPECTED_COUNTS
    assert list(d["commands"]) == list(EXPECTED_COUNTS)  # in the documented order
    assert (d["version"], d["format"], d["classes"], d["objects"], d["frames"]) == (
        "0.4.0",
        which,
        172,
        528,
        25,
    )
    assert d["attributes"] == 644 + 48 + 37 and d["enum_values"] == 174
    assert d["top_classes"][0] == {"class": "PhysXRoadGeometryQueryFilterData", "objects": 20}
    assert [t["objects"] for t in d["top_classes"]] == sorted(
        (t["objects"] for t in d["top_classes"]), reverse=True
    )
    assert d["error"] is None


def test_info_text(capsys):
    status, out, _ = run(capsys, "info", str(FIXTURE), "--top", "3")
    assert status == 0
    assert "OmniPVD version 0.4.0" in out and "classes 172" in out and "frames 25" in out
    assert any(line.split() == ["set_attribute", "24,005"] for line in out.splitlines())
    assert out.count("\n  ") >= 14 + 3


# ------------------------------------------------------------------------------------ dump


def test_dump_every_command_in_order(capsys, every_ovd):
    status, out, _ = run(capsys, "dump", str(every_ovd), "--json")
    assert status == 0
    rows = [json.loads(line) for line in out.splitlines()]
    rec = Recording.open(every_ovd)
    assert len(rows) == sum(rec.counts().values())
    assert [r["index"] for r in rows] == list(range(len(rows)))
    assert all(a["offset"] < b["offset"] for a, b in zip(rows, rows[1:], strict=False))
    by_kind = {}
    for r in rows:
        by_kind.setdefault(r["command"], []).append(r)
    assert {k: len(v) for k, v in by_kind.items()} == {k: v for k, v in rec.counts().items() if v}
    assert by_kind["register_class"][0] == {
        "index": 0,
        "offset": 12,
        "frame": -1,
        "command": "register_class",
        "handle": 1,
        "name": "Color",
        "base": 0,
    }
    sets = {
        (r["object_name"], r["attribute"]): r["value"] for r in by_kind["set_attribute"] if r["frame"] == 0
    }
    assert sets[("thing_a", "i32")] == [0, 0, 2**31 - 1]
    assert sets[("thing_a", "label")] == "frame 0"
    assert sets[("thing_a", "pose.position.xyz")] == [0.0, 0.5, 0.0]
    assert by_kind["record_message"][0]["message"] == "wheel slipped"


def test_dump_text_of_the_fixture(capsys):
    status, out, _ = run(capsys, "dump", str(FIXTURE))
    assert status == 0
    lines = out.splitlines()
    assert len(lines) == sum(EXPECTED_COUNTS.values())
    assert lines[0].split()[:3] == ["0", "-1", "register_class"] and "name='PxSceneFlag'" in lines[0]
    assert sum(line.split()[2] == "set_attribute" for line in lines) == 24005


def test_dump_of_h5_equals_dump_of_ovd(capsys, every_ovd, tmp_path):
    h5 = tmp_path / "every.h5"
    assert run(capsys, "convert", str(every_ovd), str(h5))[0] == 0
    s1, out1, _ = run(capsys, "dump", str(every_ovd))
    s2, out2, _ = run(capsys, "dump", str(h5))
    assert s1 == s2 == 0 and out1 == out2 and len(out1.splitlines()) == 109


# ---------------------------------------------------------------------------------- series


def test_series_csv_of_one_object(capsys, fixture_h5):
    path = "/World/Basic/wheel 0/WheelRigidBodyState"
    status, out, _ = run(
        capsys, "series", str(fixture_h5), "WheelRigidBodyState.correctedRotationSpeed", "--object", path,
        "--csv",
    )
    assert status == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == [*cli.SERIES_COLUMNS, "correctedRotationSpeed [rad/s]"]
    assert cli.SERIES_COLUMNS == ["frame", "time [s]", "timestamp", "handle", "name", "path"]
    rec = Recording.open(FIXTURE)
    (wheel,) = names_of(rec).resolve(path, rec.cls("WheelRigidBodyState"))
    frames, values = rec.series(wheel, "correctedRotationSpeed")
    body = rows[1:]
    assert [int(r[0]) for r in body] == frames.tolist()
    np.testing.assert_allclose([float(r[1]) for r in body], rec.seconds(frames), rtol=1e-15)
    assert [int(r[2]) for r in body] == rec.frames.start[frames].tolist()
    assert {(int(r[3], 16), r[4], r[5]) for r in body} == {(wheel.handle, "WheelRigidBody1dState0", path)}
    np.testing.assert_array_equal(np.float32([float(r[6]) for r in body]), values)


def test_series_of_a_whole_class_one_column_per_element(capsys):
    status, out, _ = run(capsys, "series", str(FIXTURE), "PxRigidActor.globalPose", "--csv")
    assert status == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == [*cli.SERIES_COLUMNS, *(f"globalPose[{i}]" for i in range(7))]  # mixed units: none
    body = rows[1:]
    frames = [int(r[0]) for r in body]
    assert frames == sorted(frames)
    assert len({r[3] for r in body}) == 5  # four vehicles and the ground
    assert {r[5] for r in body} >= {"/World/Basic/PxRigidDynamic", "/World/Tank/PxRigidDynamic"}
    assert all(len(r) == 13 for r in body)


def test_series_shows_references_as_the_objects_they_point_to(capsys):
    """Object-handle values are pointers in PhysX's recordings (93999638124976 as a number):
    ``series`` shows the path of the object each points to, in the table and the CSV."""
    short = str(Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd")
    status, out, _ = run(capsys, "series", short, "DirectDrivetrain.commandState", "--object", "Basic")
    assert status == 0 and out.splitlines()[1].endswith(" /World/Basic/DirectDriveCommandState")
    status, out, _ = run(capsys, "series", short, "Vehicle.wheelAttachmentSet", "--object", "Basic", "--csv")
    rows = out.splitlines()[1:]
    assert [r.rsplit(",", 2)[1:] for r in rows] == [["add", f"/World/Basic/wheel {k}"] for k in range(4)]


def test_series_text_and_lists(capsys, every_ovd):
    status, out, _ = run(capsys, "series", str(every_ovd), "Thing.children", "--object", "thing_a")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split() == ["frame", "time", "[s]", "timestamp", "handle", "name", "path", "op",
                                "children"]
    assert [line.split()[-2] for line in lines[1:]] == ["add", "add", "remove"]
    assert all(line.split()[1] == "-" for line in lines[1:])  # no time base: no seconds
    status, out, _ = run(capsys, "series", str(every_ovd), "Thing.pose.position.xyz", "--csv")
    assert (
        status == 0
        and out.splitlines()[0]
        == "frame,time [s],timestamp,handle,name,path,"
        "pose.position.xyz[0],pose.position.xyz[1],pose.position.xyz[2]"
    )


# --------------------------------------------------------------------------------- convert


def test_convert_round_trip_and_progress(capsys, tmp_path):
    h5 = tmp_path / "a.h5"
    status, out, err = run(capsys, "convert", str(FIXTURE), str(h5), "--progress")
    assert status == 0
    assert "[" in err and "100%" in err and err.endswith("bytes)\n")
    back = tmp_path / "a.ovd"
    status, _, err = run(capsys, "convert", str(h5), str(back))
    assert status == 0 and "%" not in err  # small input: no bar by default
    assert back.read_bytes() == FIXTURE.read_bytes()


def test_progress_bar_draws_in_place():
    buf = io.StringIO()
    bar = ProgressBar("x", buf, width=10)
    for f in (0.0, 0.5, 0.5, 1.0):
        bar(f)
    bar.done()
    assert buf.getvalue() == "\rx [..........]   0%\rx [#####.....]  50%\rx [##########] 100%\n"


def test_progress_bar_counts_steps_and_ends_its_line_once():
    buf = io.StringIO()
    bar = ProgressBar(stream=buf, width=10, unit="steps")
    for step in (1, 2, 4, 4):
        bar(step, 4)
    bar.done()
    assert buf.getvalue() == ("\r[##........]  25% 1/4 steps\r[#####.....]  50% 2/4 steps"
                              "\r[##########] 100% 4/4 steps\n")


def test_progress_bar_done_finishes_an_early_stop_and_stays_quiet_unused():
    buf = io.StringIO()
    bar = ProgressBar("x", buf, width=4)
    bar.done()
    assert buf.getvalue() == ""
    bar(0.25)
    bar.done()
    assert buf.getvalue() == "\rx [#...]  25%\rx [####] 100%\n"


def test_progress_bar_redraws_at_most_once_per_interval_but_always_the_end():
    buf = io.StringIO()
    bar = ProgressBar(stream=buf, width=4, min_interval=3600.0)
    for step in range(1, 11):
        bar(step, 10)
    assert buf.getvalue() == "\r[....]  10% 1/10 steps\r[####] 100% 10/10 steps\n"


def test_format_table_aligns_columns():
    assert format_table(["a", "bbb"], [["10", "2"], ["3", "40000"]]) == [
        " a    bbb", "10      2", " 3  40000"]
    assert format_table(["a", "b"], [["xx", "y"]], align="left", indent="  ") == ["  a   b", "  xx  y"]


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "argv, message",
    [
        (["info", "{tmp}/missing.ovd"], "missing.ovd: no such file"),
        (["info", "{tmp}/notes.txt"], "not an OmniPVD stream"),
        (["info", "{tmp}/empty.ovd"], "shorter than the 12-byte"),
        (["info", "{tmp}"], "is a directory"),
        (["dump", "{tmp}/missing.h5"], "no such file"),
        (["series", "{fixture}", "WheelRigidBodyState.speed"], "no attribute 'speed'"),
        (["series", "{fixture}", "NoClass.speed"], "no class 'NoClass'"),
        (["series", "{fixture}", "WheelRigidBody1dState.rotationSpeed"],
         "no class 'WheelRigidBody1dState' (in 'WheelRigidBody1dState.rotationSpeed'); "
         "did you mean WheelRigidBodyState, "),
        (["series", "{fixture}", "WheelRigidBodyState.rotSpeed"],
         "no attribute 'rotSpeed'; did you mean rotationSpeed"),
        (["series", "{fixture}", "correctedRotationSpeed"],
         "expected CLASS.ATTRIBUTE, got 'correctedRotationSpeed'; "
         "did you mean WheelRigidBodyState.correctedRotationSpeed?"),
        (["series", "{fixture}", "WheelRigidBodyState.rotationSpeed", "--object", "nobody"], "no object"),
        (
            ["series", "{fixture}", "WheelParams.radius", "--object",
             "/World/Raw/wheel 0/WheelRigidBodyState"],
            "is a WheelRigidBodyState, not a WheelParams",
        ),
        (
            ["series", "{fixture}", "WheelParams.radius", "--object", "WheelRigidBody1dState0"],
            "holds a WheelParams",
        ),
        (["series", "{fixture}", "TireForce.lngForce", "--object", "TireForce2"], "is ambiguous: 4 objects"),
        (["series", "{fixture}", "TireForce.lngForce[q]"], "expected x, y, z, w"),
        (["series", "{fixture}", "TireForce.lngForce[3]"], "has 3 elements; element 3 is out of range"),
        (["series", "{fixture}", "PxRigidActor.shapes[0]"], "is a unique list"),
        (["convert", "{fixture}", "{tmp}/out.txt"], "unknown output format"),
        (["convert", "{tmp}/notes.txt", "{tmp}/out.h5"], "not an OmniPVD stream"),
        (["frobnicate"], "invalid choice"),
        (["info"], "required: file"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, tmp_path, argv, message):
    (tmp_path / "notes.txt").write_text("not a recording\n" * 10)
    (tmp_path / "empty.ovd").write_bytes(b"")
    argv = [a.format(tmp=tmp_path, fixture=FIXTURE) for a in argv]
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("pvdkit: error: ") and message in err
    assert "Traceback" not in err


def test_truncated_file_warns_in_one_line_and_succeeds(capsys, tmp_path):
    cut = tmp_path / "cut.ovd"
    cut.write_bytes(FIXTURE.read_bytes()[:500_000])
    status, out, err = run(capsys, "info", str(cut), "--json")
    assert status == 0
    assert err.startswith("pvdkit: warning: ") and err.count("\n") == 1 and "truncated at byte offset" in err
    d = json.loads(out)
    assert d["error"] is not None and 0 < d["commands"]["start_frame"] < 25
    assert d["commands"]["register_class"] == 172


def test_subcommands_can_be_added(capsys, monkeypatch):
    monkeypatch.setattr(cli, "_REGISTRY", dict(cli._REGISTRY))

    def configure(p: argparse.ArgumentParser) -> None:
        p.add_argument("name")

    def hello(args: argparse.Namespace) -> int:
        print(f"hello {args.name}")
        return 0

    cli.add_subcommand(cli.SubCommand("hello", "say hello", configure, hello))
    assert run(capsys, "hello", "pvd") == (0, "hello pvd\n", "")
    status, out, _ = run(capsys, "--help")
    assert status == 0 and "hello" in out and "info" in out


def test_lazy_subcommands_import_their_module_only_when_used(capsys, monkeypatch):
    monkeypatch.setattr(cli, "_REGISTRY", dict(cli._REGISTRY))
    cli.add_subcommand(
        cli.LazySubCommand("ghost", "a command whose module is missing", "pvdkit_no_such_module")
    )
    status, out, _ = run(capsys, "info", str(FIXTURE), "--json")  # other commands never import it
    assert status == 0 and json.loads(out)["objects"] == 528
    status, out, _ = run(capsys, "--help")
    assert status == 0 and "ghost" in out and "record" in out and "view" in out
    status, out, err = run(capsys, "ghost")
    assert status == 2 and out == ""
    assert err.startswith("pvdkit: error: the 'ghost' command is unavailable: No module named")


def test_bare_pvdkit_prints_its_usage(capsys):
    # On stdout, so that ``pvdkit | less`` shows it; status 2, as no command ran (``--help``: 0).
    assert cli.main([]) == 2
    out, err = capsys.readouterr()
    assert err == "" and out.startswith("usage: pvdkit") and "info" in out and "convert" in out
    assert cli.main(["--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: pvdkit")


def test_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as stop:
        cli.build_parser().parse_args(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"pvdkit {version('pvdkit')}"


def test_handles_read_the_same_everywhere_and_float32_prints_short(capsys):
    """A handle is hexadecimal in the table, the CSV and dump's values (as ``--object`` and the
    viewer take it); the table prints a float32 as the shortest text that reads back to it,
    the CSV in full (a float64 reader gets the recorded value exactly)."""
    spec, wheel0 = "TireForce.lngForce[z]", "/World/Basic/wheel 0"
    assert cli.main(["series", str(FIXTURE), spec, "--object", wheel0, "--csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))[1:]
    assert cli.main(["series", str(FIXTURE), spec, "--object", wheel0]) == 0
    table = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert rows[2][3].startswith("0x") and rows[2][3] == table[2][3]
    full, short = float(rows[2][-1]), table[2][-1]
    assert np.float32(short) == np.float32(full) and float(np.float32(full)) == full
    assert len(short) <= 9 < len(repr(full)) or short == repr(full)
    assert cli.main(["dump", str(FIXTURE)]) == 0
    geom = next(line for line in capsys.readouterr().out.splitlines() if "attribute='geom'" in line)
    assert re.search(r"value=0x[0-9a-f]+$", geom), geom


def test_small_input_checks_of_the_audit(capsys, tmp_path):
    """--top -1 dropped the class list silently; a value column named like a fixed one
    (Simulation.time's "time [s]") made two equal CSV headers; a class without attributes
    ended its error in "it has:"."""
    status, _, err = run(capsys, "info", str(FIXTURE), "--top", "-1")
    assert status == 2 and "argument --top: expected a whole number >= 0, got -1" in err
    w = OmniPvdWriter(MemoryStream())
    sim = w.register_class("Simulation")
    t = w.register_attribute(sim, "time", DataType.FLOAT64, 1)
    bare = w.register_class("Bare")
    w.create_object(1, sim, 1, "Simulation")
    w.create_object(1, bare, 2, "bare")
    w.start_frame(1, 1)
    w.set_attribute(1, 1, t, 0.5)
    w.stop_frame(1, 1)
    path = tmp_path / "sim.ovd"
    path.write_bytes(w.stream.getvalue())
    status, out, _ = run(capsys, "series", str(path), "Simulation.time", "--csv")
    assert status == 0
    assert out.splitlines()[0] == "frame,time [s],timestamp,handle,name,path,Simulation.time [s]"
    status, _, err = run(capsys, "series", str(path), "Bare.x")
    assert status == 2 and err.rstrip().endswith("class Bare has no attribute 'x'; it has no attributes")
