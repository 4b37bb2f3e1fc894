"""``pvdkit diff`` on crafted pairs: verdicts, first divergence, identity matching, tolerances,
missing data, exit status and the JSON / JUnit / PNG reports."""

from __future__ import annotations

import importlib.util
import io
import json
import math
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from pvdkit import convert
from pvdkit.diff import DiffOptions, FrameWindow, ToleranceConfig, compare_files, format_text
from pvdkit.diff.cli import main as diff_main
from pvdkit.diff.plot import plot_series
from pvdkit.diff.report import to_json, to_junit
from pvdkit.plots import png_bytes
from pvdkit.recording import Recording
from pvdkit.types import PvdError
from tests.pvdkit.diff_helpers import TIRE, TIRE_PATH, WHEEL, Spec, lng_force, t_of, write

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd"


@pytest.fixture(scope="module")
def ref(tmp_path_factory) -> Path:
    """The reference recording (default :class:`Spec`)."""
    return write(tmp_path_factory.mktemp("ref") / "ref.ovd")


def _b(tmp_path: Path, spec: Spec) -> Path:
    return write(tmp_path / "b.ovd", spec)


def _only(res, attribute: str, obj: str | None = None):
    hits = [s for s in res.differing_series if s.attribute == attribute and (obj is None or s.object == obj)]
    assert len(hits) == 1, [(s.object, s.attribute) for s in res.differing_series]
    return hits[0]


# ------------------------------------------------------------------------------- verdicts


def test_identical_recordings_are_equal(ref, tmp_path):
    b = _b(tmp_path, Spec())
    res = compare_files(ref, b)
    assert res.equal and res.exit_status == 0
    s = res.summary()
    # Vehicle 6 attributes + lifetime; 4 wheels × (rotationSpeed, tireForce, lifetime);
    # 4 tires × (lngForce, latForce, lifetime); frame start/stop.
    assert s["attributes_compared"] == 7 + 4 * 3 + 4 * 3 + 2
    assert s["objects_matched"] == 9 and s["attributes_differing"] == 0
    assert diff_main([str(ref), str(b), "--quiet"]) == 0


@pytest.mark.parametrize("name", ["dev_drive.h5", "vehicles_short.ovd"])
def test_byte_identical_files_are_read_once_with_the_same_report(tmp_path, monkeypatch, name):
    """A copy of a file is opened once and compared with itself; the text and JSON reports
    equal those of reading both (PhysX's own recordings: NaN-free floats, references, lists)."""
    import shutil

    from pvdkit.diff import engine

    a = FIXTURE.parent / name
    b = tmp_path / f"copy_{name}"
    shutil.copyfile(a, b)
    assert engine.same_bytes(a, b) and engine.same_bytes(a, a)
    opened = []
    real_open = engine.open_recording
    monkeypatch.setattr(engine, "open_recording", lambda p, side: opened.append(side) or real_open(p, side))
    once = compare_files(a, b)
    assert opened == ["A"]
    monkeypatch.setattr(engine, "same_bytes", lambda a, b: False)
    twice = compare_files(a, b)
    assert opened == ["A", "A", "B"]
    assert once.equal and format_text(once) == format_text(twice)
    drop = ("seconds",)
    assert ({k: v for k, v in json.loads(to_json(once)).items() if k not in drop}
            == {k: v for k, v in json.loads(to_json(twice)).items() if k not in drop})


def test_same_bytes_tells_one_changed_byte_and_a_size(tmp_path):
    from pvdkit.diff.engine import same_bytes

    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    data = bytes(range(256)) * 9000  # larger than one block
    a.write_bytes(data)
    b.write_bytes(data[:-1] + b"\x00")
    c.write_bytes(data + b"\x00")
    assert not same_bytes(a, b, block=4096) and not same_bytes(a, c)
    assert not same_bytes(a, tmp_path / "missing")


@pytest.mark.parametrize("frame", [0, 7, 19])
def test_one_value_beyond_tolerance_gives_first_divergence_at_that_frame(ref, tmp_path, frame):
    b = _b(tmp_path, Spec(perturb={(2, "lngForce", frame): 0.5}))
    res = compare_files(ref, b, atol=0.1)
    assert res.exit_status == 1
    assert len(res.differing_series) == 1
    s = _only(res, "lngForce", TIRE.format(k=2))
    assert (s.first_frame, s.first_time, s.differing, s.compared) == (frame, t_of(frame), 1, 20)
    assert s.cls == "TireForce" and s.status == "different"
    assert s.max_abs == pytest.approx(0.5)
    assert s.max_rel == pytest.approx(0.5 / (lng_force(frame, 2) + 0.5), rel=1e-6)
    assert float(s.a_value) == lng_force(frame, 2) and float(s.b_value) == lng_force(frame, 2) + 0.5
    assert res.summary()["first_divergence_frame"] == frame
    assert diff_main([str(ref), str(b), "--atol", "0.1", "--quiet"]) == 1


def test_value_within_tolerance_is_equal(ref, tmp_path):
    b = _b(tmp_path, Spec(perturb={(2, "lngForce", 7): 0.5}))
    assert compare_files(ref, b, atol=0.5).equal  # |a-b| <= atol is inside
    assert not compare_files(ref, b, atol=0.49).equal
    # relative tolerance is taken of B: 0.5 / 321.5
    rel = 0.5 / (lng_force(7, 2) + 0.5)
    assert compare_files(ref, b, rtol=rel * 1.001).equal
    assert not compare_files(ref, b, rtol=rel * 0.999).equal


def test_integers_are_exact_whatever_the_tolerance(ref, tmp_path):
    b = _b(tmp_path, Spec(gear_change=(5, 2)))
    res = compare_files(ref, b, atol=10.0, rtol=1.0)
    s = _only(res, "gear")
    assert (s.kind, s.first_frame, s.a_value, s.b_value) == ("int", 5, "1", "2")


def test_strings_and_enums_compare_exactly_with_names_in_the_report(ref, tmp_path):
    res = compare_files(ref, _b(tmp_path, Spec(label="coupe", mode_at=(4, "eSPORT"))), atol=1e9)
    label = _only(res, "label")
    assert (label.first_frame, label.a_value, label.b_value) == (-1, "'sedan'", "'coupe'")
    mode = _only(res, "mode")
    assert (mode.kind, mode.first_frame, mode.a_value, mode.b_value) == ("enum", 4, "eNORMAL", "eSPORT")


def test_enum_storage_width_does_not_matter(ref, tmp_path):
    """PhysX writes flags in their storage width (u8, u16): the value is what counts."""
    narrow = _b(tmp_path, Spec(mode_storage=np.uint8, mode_at=(4, "eSPORT")))
    wide = write(tmp_path / "wide.ovd", Spec(mode_at=(4, "eSPORT")))
    assert compare_files(narrow, wide).equal
    s = _only(compare_files(narrow, ref), "mode")
    assert (s.first_frame, s.a_value, s.b_value) == (4, "eSPORT", "eNORMAL")


def test_messages_are_compared(tmp_path):
    a = write(tmp_path / "ma.ovd", Spec(message_at={3: "wheel slipped", 9: "gear up"}))
    b = write(tmp_path / "mb.ovd", Spec(message_at={3: "wheel slipped", 11: "gear up"}))
    same = write(tmp_path / "mc.ovd", Spec(message_at={3: "wheel slipped", 9: "gear up"}))
    assert compare_files(a, same).equal
    s = _only(compare_files(a, b), "<messages>")
    assert (s.object, s.first_frame, s.differing) == ("<recording>", 9, 1)
    assert s.a_value.startswith("frame 9: 'gear up' (simcore/tire.py:42, type 1, TireForce)")
    assert compare_files(a, b, config=_toml(tmp_path, 'ignore = ["<recording>.<messages>"]\n')).equal


def _toml(tmp_path: Path, text: str) -> str:
    p = tmp_path / "cfg.toml"
    p.write_text(text)
    return str(p)


# ------------------------------------------------------------------------------- identity


def test_renumbered_handles_and_creation_order_still_match(ref, tmp_path):
    """Same content, other handles, wheels created in another order (list order unchanged):
    every wheel and tire is matched through the graph although all share one name."""
    b = _b(tmp_path, Spec(handle_base=0x1234_0000, handle_step=0x40, wheel_creation_order=(3, 1, 0, 2)))
    res = compare_files(ref, b)
    assert res.equal, format_text(res)
    assert res.objects_matched == 9


def test_graph_paths_identify_same_named_objects(ref, tmp_path):
    """A change in the third wheel's tire is reported on that tire, whatever the creation order."""
    b = _b(tmp_path, Spec(wheel_creation_order=(2, 3, 0, 1), handle_base=0x99_0000,
                          perturb={(2, "latForce", 3): 1.0}))
    res = compare_files(ref, b)
    s = _only(res, "latForce")
    assert s.object == TIRE.format(k=2) and s.first_frame == 3


def test_references_compare_by_identity(ref, tmp_path):
    b = _b(tmp_path, Spec(swap_tires_at=6, handle_base=0x42_0000))
    res = compare_files(ref, b)
    bad = {s.object: s for s in res.differing_series}
    assert set(bad) == {WHEEL.format(k=0), WHEEL.format(k=1)}
    s0 = bad[WHEEL.format(k=0)]
    assert (s0.attribute, s0.kind, s0.first_frame) == ("tireForce", "reference", 6)
    assert (s0.a_value, s0.b_value) == (TIRE.format(k=0), TIRE.format(k=1))


def test_unique_list_membership_changes_are_differences(ref, tmp_path):
    res = compare_files(ref, _b(tmp_path, Spec(remove_wheel_at=9)))
    s = _only(res, "wheels")
    assert (s.kind, s.first_frame) == ("list", 9)
    assert s.a_value.count("Vehicle/wheels[") == 4 and s.b_value.count("Vehicle/wheels[") == 3


# ------------------------------------------------------------------------------- missing data, schema


def test_missing_object_is_a_difference(ref, tmp_path):
    res = compare_files(ref, _b(tmp_path, Spec(drop_tire=1)))
    assert res.exit_status == 1
    assert [(o.label, o.cls) for o in res.objects_only_a] == [(TIRE.format(k=1), "TireForce")]
    assert res.objects_only_a[0].path == TIRE_PATH.format(k=1)  # the report lists it so
    assert f"  {TIRE_PATH.format(k=1)} (TireForce 'TireForce')" in format_text(res)
    assert not res.objects_only_b
    ref_diff = _only(res, "tireForce", WHEEL.format(k=1))
    assert (ref_diff.first_frame, ref_diff.b_value) == (-1, "unset")
    # and the other way round: an extra object in B
    rev = compare_files(_b(tmp_path, Spec(drop_tire=1)), ref)
    assert [o.label for o in rev.objects_only_b] == [TIRE.format(k=1)]


def test_a_config_can_let_classes_exist_on_one_side_and_skip_the_schema(ref, tmp_path):
    """Recordings of different producers (PhysX's and simcore's replay of it) each have objects
    and classes the other lacks: ``ignore_unmatched`` counts those objects instead of listing
    them, ``schema = false`` skips the registry; matched objects are compared as ever."""
    cfg = tmp_path / "producers.toml"
    cfg.write_text('schema = false\nignore_unmatched = ["Tire*"]\n')
    b = _b(tmp_path, Spec(drop_tire=1, extra_attribute=True))
    plain = compare_files(ref, b)
    assert plain.objects_only_a and plain.schema
    res = compare_files(ref, b, config=str(cfg))
    assert not res.objects_only_a and not res.schema and res.unmatched_ignored == 1
    assert res.summary()["objects_unmatched_ignored"] == 1
    assert res.exit_status == 1  # the link to the missing tire and the new attribute still differ
    assert _only(res, "tireForce", WHEEL.format(k=1)).b_value == "unset"
    text = format_text(res)
    assert "schema not compared" in text and "1 object in one recording only" in text
    same = compare_files(ref, _b(tmp_path, Spec()), config=str(cfg))
    assert same.equal and same.unmatched_ignored == 0
    for bad, message in (("ignore_unmatched = 'Px*'\n", "ignore_unmatched must be a list"),
                         ("schema = 'no'\n", "schema must be true or false")):
        cfg.write_text(bad)
        with pytest.raises(PvdError, match=message):
            ToleranceConfig.load(cfg)


def test_a_config_rule_that_matches_nothing_is_a_note_naming_the_closest(ref, tmp_path):
    """A typo in a rule (meant to loosen or tighten a tolerance) or in an ignore_unmatched glob
    would leave the comparison as it was, silently: each one that matches no attribute (class)
    of A or B is a note, with the closest name; rules that match stay quiet, also when they
    match through a glob or only a pseudo attribute."""
    cfg = tmp_path / "typos.toml"
    cfg.write_text('ignore = ["Wheel.rotationSped", "*.<lifetime>"]\n'
                   'ignore_unmatched = ["TireForse", "Tire*"]\n[attributes]\n'
                   '"Vehicle.posiiton" = { atol = 1 }\n"TireForce.*" = { rtol = 1e-3 }\n'
                   '"Px*.*" = { ignore = true }\n"<frame>.stop" = { ignore = true }\n')
    res = compare_files(ref, _b(tmp_path, Spec()), config=str(cfg))
    assert res.equal  # information, not a difference
    notes = [n.message.removeprefix(f"{cfg}: ") for n in res.notes if n.kind == "unused_rule"]
    assert notes == [
        "rule 'Wheel.rotationSped' matches no attribute of A or B; did you mean 'Wheel.rotationSpeed'?",
        "rule 'Vehicle.posiiton' matches no attribute of A or B; did you mean 'Vehicle.position'?",
        "rule 'Px*.*' matches no attribute of A or B (rules match Class.attribute)",
        "ignore_unmatched 'TireForse' matches no class of A or B; did you mean 'TireForce'?",
    ]
    assert "did you mean 'Wheel.rotationSpeed'?" in " ".join(format_text(res).split())
    assert not [n for n in compare_files(ref, _b(tmp_path, Spec())).notes if n.kind == "unused_rule"]
    junit = ET.fromstring(to_junit(res))  # CI reads JUnit: the notes are in the recording suite's output
    out = junit.find("testsuite[@name='recording']/system-out").text
    assert "did you mean 'Wheel.rotationSpeed'?" in out and junit.get("failures") == "0"


def test_extra_attribute_is_a_difference(ref, tmp_path):
    res = compare_files(ref, _b(tmp_path, Spec(extra_attribute=True)))
    assert [(c.kind, c.cls, c.attribute) for c in res.schema] == [("attribute_added", "Wheel", "temperature")]
    extra = [s for s in res.differing_series if s.attribute == "temperature"]
    assert len(extra) == 4 and {s.status for s in extra} == {"only_in_b"}
    assert all(s.first_frame == 0 and s.a_value == "unset" for s in extra)


def test_retyped_attribute_is_a_difference(ref, tmp_path):
    res = compare_files(ref, _b(tmp_path, Spec(retype_rotation=True)), atol=1.0)
    assert [(c.kind, c.attribute, c.a, c.b) for c in res.schema] == [
        ("attribute_retyped", "rotationSpeed", "FLOAT32x1", "FLOAT64x1")]
    rot = [s for s in res.differing_series if s.attribute == "rotationSpeed"]
    assert len(rot) == 4 and {s.status for s in rot} == {"retyped"}


def test_attribute_that_stops_being_set_is_missing_data(ref, tmp_path):
    """B stops writing rotationSpeed at frame 12: its held value equals A's frame-11 value,
    but A goes on changing, so frame 12 is the first divergence."""
    res = compare_files(ref, _b(tmp_path, Spec(stop_rotation_after=12)))
    rot = [s for s in res.differing_series if s.attribute == "rotationSpeed"]
    assert len(rot) == 4 and {s.first_frame for s in rot} == {12}


def test_shorter_recording_differs_where_it_ends(ref, tmp_path):
    res = compare_files(ref, _b(tmp_path, Spec(frames=15)))
    assert any(n.kind == "frame_count" and n.difference for n in res.notes)
    # latForce is constant: only the end of B makes it differ.
    lat = [s for s in res.differing_series if s.attribute == "latForce"]
    assert {s.first_frame for s in lat} == {15}
    assert {s.b_value for s in lat} == {"none (B ended)"}
    # where both have values they agree: the errors show as "-", not as a 0 beside "different"
    assert {(s.max_abs, s.max_rel) for s in lat} == {(0.0, 0.0)}  # the JSON keeps the numbers
    # The text report says so once, not in a row per attribute above the real differences.
    assert (res.ended_at, res.ended_side) == (15, "B")
    assert set(map(id, lat)) <= set(map(id, res.after_end_series))
    text = format_text(res, width=200)
    n = len(res.after_end_series)
    assert f"{n} attributes differ only after B ended (frame 15 on, where B has no values" in text
    assert "latForce" not in text and res.summary()["attributes_differing_only_after_end"] == n
    res.ended_at = None  # as rows, such a series shows "-" for its errors
    text = format_text(res, width=200)
    row = next(line for line in text.splitlines() if "latForce" in line)
    assert row.split()[5:7] == ["-", "-"], row  # frame, time, attribute, status, differ/frames, errors
    assert "max|a-b| -, max rel -" in format_text(res, width=40).replace("\n      ", " ")
    # values set once and never changed are still equal: nothing was written after B ended
    assert not [s for s in res.differing_series if s.attribute in ("label", "gear", "mode", "wheels")]


def test_nan_equals_nan_only_when_asked(ref, tmp_path):
    nan_a = write(tmp_path / "nan_a.ovd", Spec(nan={(1, 4)}))
    nan_b = write(tmp_path / "nan_b.ovd", Spec(nan={(1, 4)}))
    res = compare_files(nan_a, nan_b)
    s = _only(res, "lngForce")
    assert (s.object, s.first_frame, s.a_value, s.b_value) == (TIRE.format(k=1), 4, "nan", "nan")
    assert compare_files(nan_a, nan_b, nan_equal=True).equal
    assert diff_main([str(nan_a), str(nan_b), "--nan-equal", "--quiet"]) == 0
    # NaN on one side only differs in both directions, even with nan_equal and a huge tolerance
    for x, y in ((nan_a, ref), (ref, nan_a)):
        r = compare_files(x, y, nan_equal=True, atol=1e30)
        assert _only(r, "lngForce").first_frame == 4


# ------------------------------------------------------------------------------- formats


def test_ovd_and_its_h5_are_equal(tmp_path):
    h5 = tmp_path / "vehicles_short.h5"
    convert.convert(FIXTURE, h5)
    res = compare_files(FIXTURE, h5)
    assert res.equal, format_text(res)
    assert res.objects_matched == 528 and res.summary()["attributes_compared"] > 2000


def test_crafted_ovd_and_h5_mixed_pair(ref, tmp_path):
    b = _b(tmp_path, Spec(handle_base=0x3_0000, perturb={(0, "rotationSpeed", 11): 2.0}))
    h5 = tmp_path / "b.h5"
    convert.convert(b, h5)
    res = compare_files(h5, ref)
    s = _only(res, "rotationSpeed")
    assert (s.object, s.first_frame) == (WHEEL.format(k=0), 11)


# ------------------------------------------------------------------------------- tolerance config


def test_config_glob_override(ref, tmp_path):
    b = _b(tmp_path, Spec(perturb={(k, "lngForce", 3): 0.1 for k in range(4)}
                          | {(0, "rotationSpeed", 5): 0.1}))
    cfg = tmp_path / "tol.toml"
    cfg.write_text('rtol = 1e-9\n[attributes]\n"TireForce.*" = { rtol = 1e-3 }\n')
    res = compare_files(ref, b, config=str(cfg))
    assert [s.test_name for s in res.differing_series] == ["Wheel.rotationSpeed"]
    assert res.find("TireForce.lngForce")[0].tolerance.rtol == 1e-3
    # later rules override earlier ones field by field; ignore skips the attribute
    cfg.write_text('[attributes]\n"TireForce.*" = { rtol = 1e-3 }\n"*.lngForce" = { atol = 0.0 }\n'
                   '"Wheel.rotation*" = { ignore = true }\n')
    res = compare_files(ref, b, config=str(cfg))
    assert res.equal and res.ignored == 4
    assert res.find("lngForce")[0].tolerance.describe() == "atol=0 rtol=0.001"
    # command-line defaults sit below the rules
    assert diff_main([str(ref), str(b), "--config", str(cfg), "--rtol", "0", "--quiet"]) == 0


def test_config_errors_name_file_and_key(tmp_path):
    cases = {
        "atol = -1\n": "atol must be a finite number >= 0",
        "tolerance = 1\n": "unknown key 'tolerance'",
        '[attributes]\n"A.*" = { rtl = 1 }\n': "unknown key 'rtl'",
        '[attributes]\n"A.*" = 3\n': "expected an inline table",
        "ignore = 'A.*'\n": "ignore must be a list",
        "atol = = 1\n": "not valid TOML",
    }
    for text, expected in cases.items():
        p = tmp_path / "bad.toml"
        p.write_text(text)
        with pytest.raises(PvdError, match=expected) as info:
            ToleranceConfig.load(p)
        assert str(p) in str(info.value)


def test_tolerance_rules_match_base_classes():
    cfg = ToleranceConfig.from_mapping({"attributes": {"Base.x": {"atol": 2.0}, "Derived.*": {"rtol": 0.5}}})
    t = cfg.for_attribute(("Derived", "Base"), "x")
    assert (t.atol, t.rtol) == (2.0, 0.5)
    assert cfg.for_attribute(("Other",), "x").atol == 0.0


# ------------------------------------------------------------------------------- frame window and alignment


def test_frame_window(ref, tmp_path):
    b = _b(tmp_path, Spec(perturb={(2, "lngForce", 7): 1.0}, gear_change=(3, 2)))
    assert compare_files(ref, b, frames="0:3").equal
    res = compare_files(ref, b, frames="3:7")
    assert [(s.attribute, s.first_frame) for s in res.differing_series] == [("gear", 3)]
    res = compare_files(ref, b, frames="4:")  # the gear set at frame 3 is held into the window
    assert [(s.attribute, s.first_frame) for s in res.differing_series] == [("gear", 4), ("lngForce", 7)]
    res = compare_files(ref, b, frames="7")
    assert sorted(s.attribute for s in res.differing_series) == ["gear", "lngForce"]
    assert compare_files(ref, b, frames="8:").find("lngForce")[0].compared == 12
    with pytest.raises(PvdError, match="empty window"):
        FrameWindow.parse("5:5")
    with pytest.raises(PvdError, match="START:STOP"):
        FrameWindow.parse("a:b")


def test_align_by_time(ref, tmp_path):
    """B starts two frames later: by index everything is shifted, by timestamp it matches."""
    b = _b(tmp_path, Spec(first_frame=2, frames=18))
    by_time = compare_files(ref, b, align="time", frames="2:")
    assert by_time.equal, format_text(by_time)
    assert not compare_files(ref, b, frames="2:").equal
    whole = compare_files(ref, b, align="time")
    assert [n.kind for n in whole.notes] == ["frame_times"]
    speed = _only(whole, "speed")
    assert (speed.first_frame, speed.b_value) == (0, "unset")
    assert {s.first_frame for s in whole.differing_series} == {0}


# ------------------------------------------------------------------------------- reports


def test_json_and_junit_reports(ref, tmp_path):
    b = _b(tmp_path, Spec(perturb={(2, "lngForce", 7): 1.0, (0, "rotationSpeed", 0): 1.0}, drop_tire=3))
    (tmp_path / "r").mkdir()
    out_json, out_xml = tmp_path / "r" / "diff.json", tmp_path / "r" / "junit.xml"
    assert diff_main([str(ref), str(b), "--json", str(out_json), "--junit", str(out_xml), "--quiet"]) == 1
    d = json.loads(out_json.read_text())
    assert d["equal"] is False and d["exit_status"] == 1
    assert d["summary"]["first_divergence_frame"] == -1  # Wheel 3's tireForce reference, set up front
    assert [o["object"] for o in d["objects"]["missing_in_b"]] == [TIRE.format(k=3)]
    rows = {(r["object"], r["attribute"]): r for r in d["series"]}
    lng = rows[(TIRE.format(k=2), "lngForce")]
    assert (lng["first_divergence_frame"], lng["first_divergence_time"], lng["frames_differing"]) == (
        7, t_of(7), 1)
    rot = rows[(WHEEL.format(k=0), "rotationSpeed")]
    assert rot["max_rel_error"] == 1.0 and rot["max_abs_error"] == 1.0  # |1 - 0| / |1|
    rev = json.loads(to_json(compare_files(b, ref)))  # B = 0 there: relative error inf, as text in JSON
    assert [r["max_rel_error"] for r in rev["series"] if r["attribute"] == "rotationSpeed"] == ["inf"]
    frames = [r["first_divergence_frame"] for r in d["series"]]
    assert frames == sorted(frames)

    root = ET.parse(out_xml).getroot()
    assert root.tag == "testsuites"
    cases = {(tc.get("classname"), tc.get("name")): tc for tc in root.iter("testcase")}
    failing = {k for k, tc in cases.items() if tc.find("failure") is not None}
    assert failing == {("TireForce", "lngForce"), ("Wheel", "rotationSpeed"), ("Wheel", "tireForce"),
                       ("objects", "TireForce")}
    assert int(root.get("failures")) == len(failing) and int(root.get("tests")) == len(cases)
    for suite in root.iter("testsuite"):
        assert int(suite.get("tests")) == len(suite.findall("testcase"))
    msg = cases[("TireForce", "lngForce")].find("failure").get("message")
    # The object by its path, as the text report and the failure's body name it.
    assert "1 of 3 object(s) differ" in msg and "frame 7" in msg and "in Vehicle/wheel 2/TireForce:" in msg
    assert ("schema", "TireForce") in cases and ("recording", "<frame>.start") in cases


def test_reports_of_equal_recordings(ref, tmp_path):
    res = compare_files(ref, _b(tmp_path, Spec()))
    d = json.loads(to_json(res, include_equal=True))
    assert d["equal"] and len(d["series"]) == d["summary"]["attributes_compared"]
    root = ET.fromstring(to_junit(res))
    assert root.get("failures") == "0" and int(root.get("tests")) > 10
    assert any(line.startswith("EQUAL: 33 attributes of 9 objects") for line in format_text(res).splitlines())
    assert "within tolerance (20 frames)" in format_text(res)
    window = compare_files(ref, _b(tmp_path, Spec()), frames="18:")  # it said 20, the whole of A
    assert "within tolerance (2 frames)" in format_text(window)
    assert "within tolerance (1 frame)" in format_text(compare_files(ref, ref, frames="5"))


def test_text_report_table(ref, tmp_path, capsys):
    b = _b(tmp_path, Spec(perturb={(k, "latForce", 10 - k): 1.0 for k in range(4)}))
    assert diff_main([str(ref), str(b), "--max-report", "2"]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    head = next(line for line in lines if line.startswith("DIFFERENT: "))
    assert head.startswith("DIFFERENT: 4 of 33 attributes differ")
    assert "first divergence at frame 7" in head
    table = lines[lines.index("differing attributes (4), by first divergence, grouped by object:") + 1:]
    assert table[0].split()[:4] == ["frame", "time", "[s]", "attribute"]
    # Rows sit under their object's full path (pvdkit.names: the vehicle, its wheel, the class;
    # JSON keeps the identity label too); the first row is the earliest divergence. These
    # recordings do not say how their frames map to seconds: the time is "-".
    assert table[1].strip() == TIRE_PATH.format(k=3)
    assert table[2].split()[:4] == ["7", "-", "latForce", "different"]
    first = json.loads(to_json(compare_files(ref, b)))["series"][0]
    assert first["first_divergence_time"] == t_of(7)
    assert (first["object"], first["path"]) == (TIRE.format(k=3), TIRE_PATH.format(k=3))
    assert TIRE_PATH.format(k=2) in [line.strip() for line in table] and "2 more (--max-report)" in table[-1]
    assert all(len(line) <= 100 for line in lines)  # not a terminal: 100 columns


def test_first_divergences_are_told_in_simulated_seconds(capsys):
    """The goldens' brake run leaves the accelerate run when the brake comes on at 3 s: every
    report says when in seconds (the recording's time base), JSON keeps the raw timestamp too."""
    golden = Path(__file__).resolve().parents[2] / "recordings"
    a, b = golden / "golden_accelerate.h5", golden / "golden_brake.h5"
    res = compare_files(a, b)
    first = res.first_divergence
    with Recording.open(a) as rec:
        assert first.first_seconds == pytest.approx(rec.seconds(first.first_frame))
        assert first.first_time == rec.frames.start[first.first_frame]
    assert 3.0 <= first.first_seconds <= 3.0 + 1 / 60 + 1e-9
    d = json.loads(to_json(res))["series"][0]
    assert d["first_divergence_seconds"] == pytest.approx(first.first_seconds)
    assert d["first_divergence_time"] == first.first_time
    text = format_text(res, width=100)
    assert f"{first.first_frame}    {first.first_seconds:.4f}  " in text
    assert f"(t = {first.first_seconds:.4f} s)" in format_text(res, width=50)
    assert f"(t = {first.first_seconds:.4f} s)" in to_junit(res)


def test_text_report_fits_the_width_without_cutting_paths_or_values(ref, tmp_path):
    b = _b(tmp_path, Spec(perturb={(k, "latForce", 10 - k): 1.0 for k in range(4)}))
    res = compare_files(ref, b)
    for width in (60, 100, 200):
        text = format_text(res, width=width)
        lines = text.splitlines()
        assert all(len(line) <= width for line in lines), width  # headings too
        heading = next(i for i, line in enumerate(lines) if line.startswith("differing attributes (4)"))
        table = lines[heading + (2 if width < 67 else 1):]  # the heading wraps below 67 columns
        assert len(table) > 4
        flat = " ".join(" ".join(table).split())
        for s in res.differing_series:  # every object path, attribute and value appears whole
            for part in (s.path, s.attribute, s.a_value, s.b_value):
                assert " ".join(part.split()) in flat.replace("/ ", "/"), (width, part)
    wide = format_text(res, width=200).splitlines()
    header = next(line for line in wide if line.split()[:2] == ["frame", "time"])
    assert header.split()[-2:] == ["A", "B"]  # values beside the numbers when they fit
    narrow = format_text(res, width=60)
    assert "A: " in narrow and "B: " in narrow  # else on lines of their own


def test_wrapped_lines_break_between_words_never_inside_a_number_or_a_file_name():
    """At 60 columns the header read "…; 1," then "201 / 961 frames", and "B: /work/" then
    "main/tests/data/dev_drive.h5": lines broke after any comma or slash."""
    from pvdkit.diff.report import _wrap

    text = "tolerance: atol=0 rtol=0; frames: all (aligned by index); 1,201 / 961 frames"
    assert _wrap(text, 60, "", "  ") == ["tolerance: atol=0 rtol=0; frames: all (aligned by index);",
                                         "  1,201 / 961 frames"]
    head = "pvdkit diff  A: /work/main/tests/data/stop_go.h5  B: /work/main/tests/data/dev_drive.h5"
    assert _wrap(head, 80, "", "  ") == ["pvdkit diff A: /work/main/tests/data/stop_go.h5 B:",
                                         "  /work/main/tests/data/dev_drive.h5"]
    # A word longer than a line still breaks, after a slash; an object path after a slash first.
    assert _wrap("x: " + "/part" * 20, 40, "", "")[0].endswith("/")
    assert _wrap("/World/Standard/wheel 1/WheelRigidBodyState", 30, "", "  ", path=True) == [
        "/World/Standard/wheel 1/", "  WheelRigidBodyState"]


def test_json_to_stdout_moves_text_to_stderr(ref, tmp_path, capsys):
    b = _b(tmp_path, Spec(gear_change=(2, 3)))
    assert diff_main([str(ref), str(b), "--json", "-"]) == 1
    cap = capsys.readouterr()
    assert json.loads(cap.out)["summary"]["attributes_differing"] == 1
    assert "DIFFERENT" in cap.err


#: Plot tests need matplotlib (the ``plots`` extra, part of ``dev``); a base install runs
#: :func:`test_plots_without_matplotlib_name_the_extra` instead.
needs_matplotlib = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                                      reason="needs the plots extra: pip install 'pvdkit[plots]'")


def _rgb(data: bytes) -> np.ndarray:
    """A PNG file's pixels, (h, w, 3) uint8 (read by Pillow, which matplotlib installs)."""
    from PIL import Image

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def _near(img: np.ndarray, color: str, tol: int = 40) -> np.ndarray:
    """Pixels within ``tol`` per channel of ``color`` (``"#rrggbb"``; lines are antialiased)."""
    rgb = np.array([int(color[i:i + 2], 16) for i in (1, 3, 5)])
    return np.all(np.abs(img.astype(int) - rgb) <= tol, axis=2)


@needs_matplotlib
def test_plots(ref, tmp_path):
    from pvdkit.plots import BLUE, ORANGE

    b = _b(tmp_path, Spec(perturb={(1, "lngForce", f): 2.0 * (f - 6) for f in range(7, 20)}
                          | {(-1, "speed", 19): 0.31}))
    d = tmp_path / "plots"
    res = compare_files(ref, b, atol=0.3, plots=str(d), max_plots=1)
    files = sorted(p.name for p in d.iterdir())
    assert files == ["01_Vehicle_wheels_1_tireForce.lngForce.png"]  # largest relative error first
    assert _only(res, "lngForce").first_frame == 7 and _only(res, "speed").first_frame == 19
    img = _rgb((d / files[0]).read_bytes())
    assert img.shape == (640, 960, 3)
    assert _near(img, BLUE).sum() > 300 and _near(img, ORANGE).sum() > 300  # A and B were drawn
    assert diff_main([str(ref), str(b), "--plots", str(tmp_path / "p2"), "--quiet"]) == 1
    assert len(list((tmp_path / "p2").glob("*.png"))) == 2


@needs_matplotlib
def test_plot_axes_name_the_attribute_and_its_unit(ref, tmp_path, monkeypatch):
    """Each plot's y axes say what is plotted and in which unit (pvdkit.units: TireForce.lngForce
    is in N); an attribute the table has no unit for is named bare."""
    from pvdkit.diff import plot

    shown = []
    real = plot.plot_series
    monkeypatch.setattr(plot, "plot_series", lambda *a, **k: shown.append(k) or real(*a, **k))
    b = _b(tmp_path, Spec(perturb={(1, "lngForce", 9): 5.0} | {(-1, "speed", 19): 0.31}))
    compare_files(ref, b, plots=str(tmp_path / "plots"))
    assert {(k["quantity"], k["unit"]) for k in shown} == {("lngForce", "N"), ("speed", None)}


@needs_matplotlib
def test_plot_panels_series_and_marker():
    from pvdkit.plots import RED

    frames = np.arange(20)
    a = np.where(frames == 3, np.nan, np.sin(frames / 3.0))  # a gap: unset at frame 3
    b = a + np.where(frames >= 7, 0.1 * (frames - 6), 0.0)
    b[3] = 0.5
    band = np.full(20, 0.05)
    fig = plot_series(frames, a, b, band, title="V.speed  (Vehicle)", subtitle="A a.ovd  B b.ovd $x$",
                      first_frame=7, quantity="speed", unit="m/s")
    top, bottom = fig.axes
    labels = (top.get_ylabel(), bottom.get_ylabel(), bottom.get_xlabel())
    assert labels == ("speed [m/s]", "A − B [m/s]", "frame")
    assert [ln.get_label() for ln in top.get_lines()] == ["B", "A", "first divergence"]
    assert {ln.get_drawstyle() for ln in top.get_lines()[:2]} == {"steps-post"}  # zero-order hold
    np.testing.assert_array_equal(top.get_lines()[1].get_ydata(), a)
    diff = next(ln for ln in bottom.get_lines() if ln.get_label() == "A − B")
    np.testing.assert_allclose(diff.get_ydata(), a - b)
    assert len(bottom.collections) == 1  # the tolerance band
    assert bottom.get_ylim()[0] < -0.05 and bottom.get_ylim()[1] > 0.05  # the band is in view
    for ax in (top, bottom):
        marker = next(ln for ln in ax.get_lines() if ln.get_label() == "first divergence")
        assert list(marker.get_xdata()) == [7, 7] and marker.get_linestyle() == "--"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["A", "B", "A − B", "tolerance",
                                                                 "first divergence"]
    assert fig.texts[0].get_text() == "V.speed  (Vehicle)" and top.get_title(loc="left").endswith("$x$")
    img = _rgb(png_bytes(fig))
    assert img.shape == (640, 960, 3)
    # the red marker stands where frame 7 is on the x axis, in both panels
    x7 = round(float(bottom.transData.transform((7.0, 0.0))[0]))
    red = _near(img, RED)
    cols = np.flatnonzero(red.sum(axis=0) > 100)
    assert len(cols) and set(cols) <= set(range(x7 - 2, x7 + 3)), (cols, x7)
    for ax in (top, bottom):
        y0, y1 = sorted(640 - ax.bbox.intervaly)  # pixel rows of the panel (PNG rows run down)
        assert red[int(y0) + 5:int(y1) - 5, x7 - 2:x7 + 3].any()


@needs_matplotlib
def test_plot_of_unusual_values_renders():
    f = np.arange(5.0)
    ones = np.ones(5)
    for a, b, band in ((ones, ones, np.zeros(5)),  # constant, zero tolerance
                       (np.full(5, np.nan), ones, np.full(5, np.nan)),  # A never set
                       (np.array([0, np.inf, 1, -np.inf, 2.0]), ones, np.full(5, np.inf))):  # infinities
        img = _rgb(png_bytes(plot_series(f, a, b, band, title="t")))
        assert img.shape == (640, 960, 3) and (img < 128).any()  # text and axes at least
    none = np.zeros(0)
    assert _rgb(png_bytes(plot_series(none, none, none, none, title="empty"))).shape == (640, 960, 3)


def test_plots_without_matplotlib_name_the_extra(ref, tmp_path, capsys, monkeypatch):
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)  # import of it fails as if not installed
    b = _b(tmp_path, Spec(perturb={(1, "lngForce", 9): 5.0}))
    d = tmp_path / "plots"
    assert diff_main([str(ref), str(b), "--plots", str(d), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == "pvdkit diff: error: --plots needs the plots extra: pip install 'pvdkit[plots]'\n"
    assert not d.exists()  # checked before the folder is made


# ------------------------------------------------------------------------------- errors


def test_errors_exit_2_with_one_line(ref, tmp_path, capsys):
    text = tmp_path / "notes.ovd"
    text.write_text("this is not a recording at all\n")
    cfg = tmp_path / "bad.toml"
    cfg.write_text("atol = -1\n")
    cases = [
        ([str(ref), str(tmp_path / "missing.ovd")], "B: "),
        ([str(text), str(ref)], "A: "),
        ([str(ref), str(ref), "--frames", "9:2"], "empty window"),
        ([str(ref), str(ref), "--config", str(cfg)], "atol must be"),
        ([str(ref), str(ref), "--max-report", "-1"], "--max-report"),
        ([str(ref), str(tmp_path)], "is a directory"),
    ]
    for argv, expected in cases:
        assert diff_main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("pvdkit diff: error: ") and expected in err and err.count("\n") == 1, err


def test_frames_cannot_align_by_time_when_timestamps_decrease(ref, tmp_path):
    odd = write(tmp_path / "odd.ovd", Spec(frames=3, timestamps=[30, 20, 10]))
    with pytest.raises(PvdError, match="timestamps decrease"):
        compare_files(odd, ref, align="time")
    assert diff_main([str(odd), str(ref), "--align", "time"]) == 2


def test_damaged_recording_is_a_difference_not_an_error(ref, tmp_path):
    data = ref.read_bytes()
    cut = tmp_path / "cut.ovd"
    cut.write_bytes(data[:int(len(data) * 0.6)])
    res = compare_files(cut, ref)
    assert res.exit_status == 1
    assert [n.kind for n in res.notes if n.difference] == ["damaged"] + ["frame_count"] * any(
        n.kind == "frame_count" for n in res.notes)
    assert "A (" in res.notes[0].message


def test_options_object_and_library_entry_point(ref, tmp_path):
    b = _b(tmp_path, Spec(perturb={(0, "latForce", 2): 1e-3}))
    opts = DiffOptions(ToleranceConfig().with_defaults(atol=1e-2), FrameWindow(0, 10))
    assert compare_files(ref, b, opts).equal
    assert not compare_files(ref, b, DiffOptions()).equal
    lat = compare_files(ref, b).find("latForce", TIRE.format(k=0))[0]
    assert math.isclose(lat.max_abs, 1e-3, rel_tol=1e-4)


def test_hooks_into_the_pvdkit_command_line(ref, tmp_path, capsys):
    """``pvdkit diff`` runs pvdkit.diff.cli (registered lazily by pvdkit.cli, which the diff
    layer does not import), and add_diff_parser serves a plain argparse program."""
    import argparse

    import pvdkit.diff.cli as dcli
    from pvdkit import cli

    b = _b(tmp_path, Spec(perturb={(3, "latForce", 2): 1.0}))
    assert cli.main(["diff", str(ref), str(b), "--quiet"]) == 1
    assert "DIFFERENT: 1 of 33" in capsys.readouterr().out
    parser = argparse.ArgumentParser()
    dcli.add_diff_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["diff", str(ref), str(ref), "--quiet"])
    assert args.func is dcli.run and args.func(args) == 0


@pytest.mark.parametrize(("content", "message"), [
    (b"atol = 1" + b"0" * 320 + b"\n", "atol must be a finite number, got an integer of about 321 digits"),
    (b'[attributes]\n"*" = { rtol = 1' + b"0" * 400 + b" }\n",
     r"attributes.'\*': rtol must be a finite number"),
    (b"# caf\xe9\natol = 1\n", r"line 1: not UTF-8 text \(byte 0xe9 at offset 5\)"),
    (b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deeply"),
    (b"x" * 300 + b" = 1\n", r"unknown key 'xxxx[^ ]*… \(expected one of"),
    # tomllib takes the square of a key's parts: 200,000 never ended
    (b"a." * 200_000 + b"a = 1\n", "line 1: a key of more than 256 dotted parts"),
    (b"[" + b"t." * 300 + b"t]\n", "line 1: a key of more than 256 dotted parts"),
])
def test_a_hostile_config_is_one_line_naming_the_file(ref, tmp_path, content, message):
    """Fuzzing finds: TOML integers too large for a float, text that is no UTF-8 and deep nesting
    gave tracebacks; a huge key filled the terminal. Each is one line naming the file."""
    cfg = tmp_path / "hostile.toml"
    cfg.write_bytes(content)
    with pytest.raises(PvdError, match=message) as info:
        ToleranceConfig.load(cfg)
    assert str(info.value).startswith(f"{cfg}: ") and "\n" not in str(info.value)
    assert len(str(info.value)) < 300


def test_a_config_that_is_no_file_is_refused_before_reading(tmp_path):
    """A FIFO would block the reader forever, /dev/zero fill the memory: refused unread."""
    fifo = tmp_path / "cfg.toml"
    os.mkfifo(fifo)
    with pytest.raises(PvdError, match="is not a regular file \\(a FIFO or pipe\\)"):
        ToleranceConfig.load(fifo)
    with pytest.raises(PvdError, match="is not a regular file \\(a character device\\)"):
        ToleranceConfig.load("/dev/zero")
    (tmp_path / "bom.toml").write_bytes(b"\xef\xbb\xbfatol = 0.5\n")  # as some editors save it
    assert ToleranceConfig.load(tmp_path / "bom.toml").default.atol == 0.5


def test_a_frame_window_beyond_any_recording_is_one_line():
    for text in ("99999999999999999999999:", "9223372036854775807:", "0:2147483649", "2147483648"):
        with pytest.raises(PvdError, match="--frames: frame numbers are at most 2,147,483,647"):
            FrameWindow.parse(text)
    assert FrameWindow.parse("2147483647") == FrameWindow(2147483647, 2147483648)  # the last frame there is


def test_an_empty_frame_window_and_a_flood_of_rules_are_refused(ref, tmp_path, capsys):
    """--frames '' (an unset shell variable) compared every frame without a word; 20,000 ignore
    globs took 15 s (each rule meets every attribute): both are one line now."""
    assert diff_main([str(ref), str(ref), "--frames", ""]) == 2
    assert "argument --frames: expected START:STOP" in capsys.readouterr().err
    cfg = tmp_path / "many.toml"
    cfg.write_text("ignore = [" + ", ".join(f'"C{i}.a"' for i in range(1001)) + "]\n")
    with pytest.raises(PvdError, match="many.toml: 1,001 rules and ignore globs; a config holds at most 1,0"):
        ToleranceConfig.load(cfg)
