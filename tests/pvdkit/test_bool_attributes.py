"""PhysX's booleans (enum classes of exactly ``False`` = 0, ``True`` = 1) decode to ``bool``.

Vehicle2 registers ``isBrakeApplied``, ``hitState`` … as enum attributes of classes like
``WheelStateBool``; decoded as names they were the strings ``'True'`` / ``'False'``, both truthy.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest

from pvdkit import cli, convert
from pvdkit.diff import compare_files
from pvdkit.diff.engine import Comparison
from pvdkit.recording import Recording
from pvdkit.streams import OvdFileStream
from pvdkit.types import PvdError
from pvdkit.writer import OmniPvdWriter

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd"

#: Enum classes of the crafted recording: name → values.
ENUMS = {
    "FlagBool": {"False": 0, "True": 1},
    "TriState": {"True": 1, "False": 0, "Maybe": 2},  # named like a bool, a third value
    "LowerBool": {"false": 0, "true": 1},  # not PhysX's spelling
    "Gear": {"eREVERSE": 0, "eNEUTRAL": 1, "eFORWARD": 2},
}
#: Samples per frame of each attribute of the object ``car`` (attribute → enum class, values).
SAMPLES = {
    "braking": ("FlagBool", [0, 1, 1, 0]),
    "tri": ("TriState", [0, 1, 2, 1]),
    "lower": ("LowerBool", [1, 0, 1, 1]),
    "gear": ("Gear", [1, 2, 2, 0]),
}


def write_crafted(path: Path, *, braking: list[int] | None = None, width: int = 4) -> Path:
    """A recording with one object ``car`` holding one attribute of each class of ENUMS;
    ``braking`` replaces the boolean's samples, ``width`` its word size (PhysX writes u8 flags)."""
    w = OmniPvdWriter(OvdFileStream(path))
    classes = {}
    for name, values in ENUMS.items():
        classes[name] = w.register_class(name)
        for k, v in values.items():
            w.register_enum_value(classes[name], k, v)
    car_cls = w.register_class("Car")
    attrs = {a: w.register_flags_attribute(car_cls, a, classes[c]) for a, (c, _) in SAMPLES.items()}
    w.create_object(1, car_cls, 0x100, "car")
    samples = {a: v for a, (_, v) in SAMPLES.items()}
    if braking is not None:
        samples["braking"] = braking
    for f in range(4):
        w.start_frame(1, f + 1)
        for a, values in samples.items():
            if a == "braking":
                w.set_attribute_bytes(1, 0x100, attrs[a], int(values[f]).to_bytes(width, "little"))
            else:
                w.set_attribute(1, 0x100, attrs[a], values[f])
        w.stop_frame(1, f + 1)
    w.close()
    return path


@pytest.fixture(scope="module")
def crafted(tmp_path_factory) -> dict[str, Path]:
    """The crafted recording as ``.ovd`` and as its ``.h5`` conversion."""
    d = tmp_path_factory.mktemp("bools")
    ovd = write_crafted(d / "crafted.ovd")
    convert.convert(ovd, d / "crafted.h5")
    return {"ovd": ovd, "h5": d / "crafted.h5"}


@pytest.fixture(scope="module")
def fixture_h5(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fixture") / "vehicles_short.h5"
    convert.convert(FIXTURE, out)
    return out


def test_the_rule_is_exactly_false_0_true_1(crafted):
    rec = Recording.open(crafted["ovd"])
    assert rec.cls("FlagBool").is_bool and not rec.cls("FlagBool").is_flags
    assert not rec.cls("TriState").is_bool
    assert not rec.cls("LowerBool").is_bool
    assert not rec.cls("Gear").is_bool


@pytest.mark.parametrize("fmt", ["ovd", "h5"])
def test_scalars_are_bools_and_other_enums_stay_names(crafted, fmt):
    with Recording.open(crafted[fmt]) as rec:
        car = rec.find_object("car")
        state = car.state_at(1)
        assert state["braking"] is True and car.state_at(0)["braking"] is False
        assert car.value_at("braking", 3) is False
        assert state["tri"] == "True" and car.state_at(2)["tri"] == "Maybe"  # not a bool class
        assert state["lower"] == "false"
        assert state["gear"] == "eFORWARD"


@pytest.mark.parametrize("fmt", ["ovd", "h5"])
def test_series_are_numpy_bool_arrays_with_names_and_raw_kept(crafted, fmt):
    with Recording.open(crafted[fmt]) as rec:
        s = rec.series("car", "braking")
        assert s.values.dtype == np.bool_ and s.values.tolist() == [False, True, True, False]
        assert s.raw.tolist() == [0, 1, 1, 0]  # the word on the wire, unchanged
        assert s.names.tolist() == ["False", "True", "True", "False"]
        assert s.name_at(1) == "True" and s.name_at(-1) is None
        assert s.attribute.kind == "flags" and s.attribute.enum_class.name == "FlagBool"
        tri = rec.series("car", "tri")
        assert tri.values.tolist() == ["False", "True", "Maybe", "True"] == tri.names.tolist()
        assert rec.series("car", "gear").name_at(3) == "eREVERSE"


def test_names_of_a_non_enum_attribute_raise():
    rec = Recording.open(FIXTURE)
    wheel = rec.objects_of_class("WheelRigidBodyState")[0]
    with pytest.raises(PvdError, match="not an enum attribute"):
        _ = wheel.series("correctedRotationSpeed").names


def test_storage_width_does_not_matter_and_bad_words_keep_their_text(tmp_path):
    narrow = Recording.open(write_crafted(tmp_path / "u8.ovd", width=1))
    assert narrow.series("car", "braking").values.tolist() == [False, True, True, False]
    bad = Recording.open(write_crafted(tmp_path / "bad.ovd", braking=[0, 1, 7, 1]))
    v = bad.series("car", "braking").values
    assert v.dtype == object and v.tolist() == [False, True, "7", True]  # 7 is no bool: its number
    assert bad.series("car", "braking").at(2) == "7"


@pytest.mark.parametrize("fmt", ["ovd", "h5"])
def test_physx_recording_bools(fmt, fixture_h5):
    with Recording.open(FIXTURE if fmt == "ovd" else fixture_h5) as rec:
        for cname in ("WheelStateBool", "RoadGeomStateBool", "StickyTireBool", "AutoboxStateBool",
                      "SuspStateCalcParamsBool", "PhysXConstraintStateBool"):
            assert rec.cls(cname).is_bool, cname
        assert not rec.cls("PxActorType").is_bool
        act = rec.objects_of_class("WheelActuationState")[0]
        state = act.state_at(4)
        assert type(state["isBrakeApplied"]) is bool and type(state["isDriveApplied"]) is bool
        hit = rec.objects_of_class("RoadGeometryState")[0].series("hitState")
        assert hit.values.dtype == np.bool_ and hit.values[1:].all()  # [0]: the initial value (frame 0)
        assert rec.objects_of_class("PxRigidDynamic")[0].state_at(0)["type"] == "eRIGID_DYNAMIC"


def test_diff_against_the_h5_conversion_is_identical(crafted, fixture_h5):
    assert compare_files(str(crafted["ovd"]), str(crafted["h5"])).equal
    assert compare_files(str(FIXTURE), str(fixture_h5)).equal


@pytest.mark.parametrize("bulk", [True, False])
def test_diff_of_a_bool_reports_true_and_false(tmp_path, bulk):
    a = write_crafted(tmp_path / "a.ovd")
    b = write_crafted(tmp_path / "b.ovd", braking=[0, 1, 0, 0], width=1)  # width: the value counts
    with Recording.open(a) as ra, Recording.open(b) as rb:
        res = Comparison(ra, rb, bulk=bulk).run()
    (s,) = res.differing_series
    assert (s.attribute, s.kind, s.first_frame) == ("braking", "enum", 2)
    assert (s.a_value, s.b_value) == ("True", "False")


@pytest.mark.parametrize("fmt", ["ovd", "h5"])
def test_cli_series_prints_true_and_false(capsys, crafted, fmt):
    assert cli.main(["series", str(crafted[fmt]), "Car.braking", "--csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["frame", "time [s]", "timestamp", "handle", "name", "path", "braking"]
    assert [r[6] for r in rows[1:]] == ["False", "True", "True", "False"]
    assert cli.main(["series", str(crafted[fmt]), "Car.tri"]) == 0
    assert capsys.readouterr().out.split()[-7:] == ["3", "-", "4", "0x100", "car", "car", "True"]


def test_mixed_word_widths_still_give_a_bool_array(tmp_path):
    """Samples of different sizes (u8, u32, u16 words) take the slow path: still numpy bools."""
    w = OmniPvdWriter(OvdFileStream(tmp_path / "mixed2.ovd"))
    cls = w.register_class("FlagBool")
    w.register_enum_value(cls, "False", 0)
    w.register_enum_value(cls, "True", 1)
    car = w.register_class("Car")
    attr = w.register_flags_attribute(car, "braking", cls)
    w.create_object(1, car, 0x100, "car")
    for f, (v, width) in enumerate([(1, 1), (0, 4), (1, 2)]):
        w.start_frame(1, f + 1)
        w.set_attribute_bytes(1, 0x100, attr, v.to_bytes(width, "little"))
        w.stop_frame(1, f + 1)
    w.close()
    s = Recording.open(tmp_path / "mixed2.ovd").series("car", "braking")
    assert isinstance(s.raw, list)
    assert s.values.dtype == np.bool_ and s.values.tolist() == [True, False, True]


def test_h5_round_trip_is_byte_for_byte(crafted, tmp_path):
    """Decoding is the reader's business: the words stored and rebuilt are the ones written."""
    convert.convert(crafted["h5"], tmp_path / "back.ovd")
    assert (tmp_path / "back.ovd").read_bytes() == crafted["ovd"].read_bytes()
