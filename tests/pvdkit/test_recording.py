"""The query model (pvdkit.recording): registry, lifetimes, decoding, zero-order hold, damage."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from pvdkit.index import IndexBuilder, ovd_data
from pvdkit.ovd.tokenizer import tokenize
from pvdkit.recording import Recording
from pvdkit.streams import MemoryStream
from pvdkit.synthetic import EVERY_COMMAND_CONTEXTS, write_every_command
from pvdkit.types import DataType, PvdError, PvdWarning
from pvdkit.writer import OmniPvdWriter

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd"


@pytest.fixture(scope="module")
def every() -> tuple[bytes, dict[str, int]]:
    ms = MemoryStream()
    handles = write_every_command(ms)
    return ms.getvalue(), handles


@pytest.fixture(scope="module")
def erec(every) -> Recording:
    return Recording.open(every[0])


@pytest.fixture(scope="module")
def fixture_rec() -> Recording:
    return Recording.open(FIXTURE)


def _record(build) -> bytes:
    ms = MemoryStream()
    w = OmniPvdWriter(ms)
    build(w)
    w.close()
    return ms.getvalue()


# ------------------------------------------------------------------------------- registry


def test_fixture_registry_counts_and_inheritance(fixture_rec):
    rec = fixture_rec
    assert rec.version == (0, 4, 0)
    assert len(rec.classes_by_handle) == 172
    kinds = [a.kind for a in rec.attributes.values()]
    assert kinds.count("enum_value") == 174
    assert kinds.count("flags") == 48
    assert kinds.count("unique_list") == 37
    assert kinds.count("value") == 644
    dyn = rec.cls("PxRigidDynamic")
    assert [c.name for c in dyn.mro] == ["PxRigidDynamic", "PxRigidBody", "PxRigidActor", "PxActor"]
    assert dyn.is_a("PxActor") and not dyn.is_a("PxShape")
    inherited = dyn.all_attributes()
    assert inherited["globalPose"].owner.name == "PxRigidActor"
    assert inherited["globalPose"].data_type == DataType.FLOAT32 and inherited["globalPose"].count == 7
    assert inherited["mass"].owner.name == "PxRigidBody"
    assert "isSleeping" in inherited and "globalPose" not in dyn.attributes
    assert rec.cls("PxActorFlag").is_flags and not rec.cls("PxActorType").is_flags
    assert rec.cls("PhysXRoadGeometryQueryFlag").is_flags  # a duplicated bit value is still flags
    assert not rec.cls("PxJointConcreteType").is_flags  # 256, 257 …: an enum without 0
    assert rec.cls("PxActorType").enum_values["eRIGID_DYNAMIC"] == 1


def test_fixture_objects_lifetimes_and_classes(fixture_rec):
    rec = fixture_rec
    assert len(rec.objects) == 528
    assert sum(o.destroyed is not None for o in rec.objects) == 483
    assert len(rec.objects_of_class("PxRigidActor")) == 5  # derived: 4 dynamic bodies + the ground
    assert rec.objects_of_class("PxRigidActor", derived=False) == []
    wheel = rec.objects_of_class("WheelRigidBodyState")[0]
    assert wheel.name == "WheelRigidBody1dState0" and wheel.created == 0 and wheel.destroyed == 24
    assert wheel.alive_at(0) and wheel.alive_at(24) and not wheel.alive_at(-1)
    assert rec.find_object("WheelRigidBody1dState0") is wheel
    assert rec.find_object(hex(wheel.handle)) is wheel and rec.find_object(wheel.handle) is wheel
    assert rec.resolve(wheel.handle, 5) is wheel and rec.resolve(0) is None
    with pytest.raises(PvdError, match="no object"):
        rec.find_object("no such thing")


def test_fixture_series_shapes_and_zero_order_hold(fixture_rec):
    rec = fixture_rec
    wheel = rec.objects_of_class("WheelRigidBodyState")[0]
    frames, speed = rec.series(wheel, "correctedRotationSpeed")
    assert frames.dtype == np.int32 and speed.dtype == np.float32 and speed.shape == (13,)
    assert np.all(np.diff(frames) >= 0)
    # frame 0 holds the initial value then step 0; odd frames hold nothing for this series.
    assert list(frames[:3]) == [0, 0, 2]
    assert rec.value_at(wheel, "correctedRotationSpeed", 0) == speed[1]  # last set in frame 0 wins
    assert rec.value_at(wheel, "correctedRotationSpeed", 1) == speed[1]  # held through frame 1
    assert rec.value_at(wheel, "correctedRotationSpeed", 2) == speed[2]
    assert rec.value_at(wheel, "correctedRotationSpeed", -1) is None  # before its first sample
    assert rec.value_at(wheel, "correctedRotationSpeed", 24) == speed[-1]  # held to the last frame
    # A frame the recording does not have is an error, as for seconds(): a value held beyond the
    # end would hide a frame number mixed up with a timestamp.
    for bad in (25, 10_000, -2):
        outside = rf"frame {bad} is outside the recording's frames -1 \(set-up\) … 24"
        with pytest.raises(PvdError, match=outside):
            rec.value_at(wheel, "correctedRotationSpeed", bad)
    with pytest.raises(PvdError, match="frame 25 is outside"):
        rec.state_at(wheel, 25)
    actor = rec.objects_of_class("PxRigidDynamic")[0]
    pose = rec.series(actor, "globalPose")
    assert pose.values.shape == (len(pose), 7) and pose.values.dtype == np.float32
    state = actor.state_at(3)
    assert state["type"] == "eRIGID_DYNAMIC"  # enum → name
    assert state["flags"] == frozenset({"eDISABLE_GRAVITY"})  # flags (u8 on the wire) → names
    assert state["rigidBodyFlags"] == frozenset({"eENABLE_GYROSCOPIC_FORCES"})  # u16 on the wire
    assert state["name"].startswith("/World/") and "\x00" not in state["name"]  # C terminator dropped
    np.testing.assert_array_equal(state["globalPose"], rec.value_at(actor, "globalPose", 3))
    assert state["force"] is None  # registered, never set
    assert state["shapes"] == []  # unique list, nothing added


def test_fixture_unit_mismatched_payloads_follow_the_data(fixture_rec):
    """PhysX registers SuspensionForce.normalForce as float32×3 but writes one float: values follow
    the bytes actually written (n,), and wheelAttachmentQuat (registered ×3) has 4 floats."""
    rec = fixture_rec
    f = rec.objects_of_class("SuspensionForce")[0]
    assert rec.cls("SuspensionForce").attributes["normalForce"].count == 3
    assert rec.series(f, "normalForce").values.shape == (13,)
    p = rec.objects_of_class("SuspensionParams")[0]
    assert rec.series(p, "wheelAttachmentQuat").values.shape[1] == 4


def test_fixture_variable_length_and_lists(fixture_rec):
    rec = fixture_rec
    mesh = rec.objects_of_class("PxConvexMesh")[0]
    verts = rec.series(mesh, "verts")
    assert rec.cls("PxConvexMesh").attributes["verts"].count == 0  # variable length
    assert all(
        v.dtype == np.float32 and v.ndim == 1 and len(v) % 3 == 0
        for v in (verts.values if isinstance(verts.values, list) else list(verts.values))
    )
    vehicle = rec.objects_of_class("Vehicle")[0]
    wheels = rec.series(vehicle, "wheelAttachmentSet")
    assert type(wheels).__name__ == "ListSeries" and wheels.added.all()
    members = wheels.members_at(0)
    assert len(members) == 4
    assert [rec.resolve(h, 0).name for h in members] == [f"WheelAttachment{i}" for i in range(4)]
    assert wheels.members_at(-1) == []


def test_fixture_counts(fixture_rec):
    c = fixture_rec.counts()
    assert (c["register_class"], c["register_attribute"], c["register_enum"], c["register_flags"]) == (
        172,
        644,
        174,
        48,
    )
    assert (c["register_unique_list_attribute"], c["set_attribute"], c["add_to_unique_list"]) == (
        37,
        24005,
        100,
    )
    assert (c["create_object"], c["destroy_object"], c["start_frame"], c["stop_frame"]) == (528, 483, 25, 24)


def test_unknown_attribute_names_the_class(fixture_rec):
    wheel = fixture_rec.objects_of_class("WheelRigidBodyState")[0]
    with pytest.raises(PvdError, match="WheelRigidBodyState has no attribute 'speed'"):
        fixture_rec.series(wheel, "speed")
    with pytest.raises(PvdError, match="no class"):
        fixture_rec.objects_of_class("NoSuchClass")


# ------------------------------------------------------------------------- every command


def test_every_data_type_decodes(erec, every):
    _, h = every
    rec = erec
    a = rec.find_object("thing_a")
    b = rec.find_object("Thing β ünïcode")
    c = rec.find_object(h["object.base_c"])
    assert a.cls.name == "Thing" and a.cls.base.name == "Base" and c.cls.name == "Base" and c.name == ""
    assert c.context == EVERY_COMMAND_CONTEXTS[1]
    # Frames: ctx frame k is frame 2k, ctx2 frame k is frame 2k+1.
    assert len(rec.frames) == 6
    assert list(rec.frames.context) == [EVERY_COMMAND_CONTEXTS[0], EVERY_COMMAND_CONTEXTS[1]] * 3
    assert list(rec.frames.start) == [1000, 50, 1001, 51, 1002, 52]
    assert list(rec.frames.stop) == [1000, 51, 1001, 52, 1002, 53]
    last = 4  # ctx's third frame
    assert rec.value_at(a, "i8", last).tolist() == [-126, 127]
    assert rec.value_at(a, "i16", last) == -32766
    assert rec.value_at(a, "i32", last).tolist() == [2, -2, 2**31 - 1]
    assert rec.value_at(a, "i64", last) == -(2**63) + 2
    assert rec.value_at(a, "u8", last).tolist() == [2, 3, 4, 5]
    assert rec.value_at(a, "u16", last) == 65533
    assert rec.series(a, "u32").values[0].tolist() == [] and rec.value_at(a, "u32", last).tolist() == [0, 1]
    assert rec.value_at(a, "u64", last) == 2**64 - 3
    f32 = rec.value_at(a, "f32", last)
    assert f32.dtype == np.float32 and f32.tolist() == [0.5, -1.25, np.inf, 2.0]
    assert rec.value_at(a, "f64", last).tolist() == [2.0, 2.0]  # the batch write came last
    assert rec.series(a, "f64").values.shape == (6, 2)
    assert rec.value_at(a, "label", last) == "frame 2"
    assert rec.series(a, "label").values == ["frame 0", "frame 1", "frame 2"]
    target = rec.value_at(a, "target", 2)
    assert rec.resolve(target, 2) is b
    assert rec.series(a, "target").values.dtype == np.uint64
    assert rec.series(a, "colors").values == [
        frozenset({"eRED"}),
        frozenset({"eGREEN"}),
        frozenset({"eBLUE"}),
    ]
    assert rec.value_at(b, "colors", 0) == frozenset({"eRED", "eGREEN"})  # 3, written as one byte
    assert rec.value_at(a, "name", 0) == "first thing"
    assert rec.value_at(c, "name", 0) == "raw \udcff bytes"  # undecodable bytes survive as surrogates


def test_nested_class_attributes_and_paths(erec):
    rec = erec
    a = rec.find_object("thing_a")
    b = rec.find_object("Thing β ünïcode")
    paths = a.cls.paths
    assert "pose.position.xyz" in paths and "pose.yaw" in paths and "pose" not in paths
    assert [x.name for x in paths["pose.position.xyz"]] == ["pose", "position", "xyz"]
    xyz = rec.series(a, "pose.position.xyz")
    assert xyz.values.shape == (3, 3)
    assert rec.value_at(a, "pose.position.xyz", 4).tolist() == [2.0, 2.5, -2.0]
    assert rec.value_at(b, "pose.yaw", 4) == pytest.approx(0.2)
    assert rec.value_at(a, "pose.yaw", 4) is None
    state = a.state_at(4)
    assert set(paths) <= set(state)
    assert sorted(a.attribute_names()) == sorted(
        [
            "name",
            "i8",
            "i16",
            "i32",
            "i64",
            "u8",
            "u16",
            "u32",
            "u64",
            "f32",
            "f64",
            "label",
            "target",
            "colors",
            "pose.position.xyz",
            "children",
            "tags",
        ]
    )


def test_unique_list_membership_over_time(erec):
    rec = erec
    a = rec.find_object("thing_a")
    b = rec.find_object("Thing β ünïcode")
    c = rec.find_object(0x7F00_0000_3000)
    children = rec.series(a, "children")
    assert list(children.frames) == [0, 0, 2] and children.added.tolist() == [True, True, False]
    assert children.members_at(0) == [b.handle, c.handle]
    assert children.members_at(2) == [c.handle]
    assert children.membership() == [(0, [b.handle, c.handle]), (2, [c.handle])]
    tags = rec.series(a, "tags")
    assert tags.items == ["red", "red"] and tags.members_at(0) == ["red"] and tags.members_at(3) == []


def test_messages_and_destroyed_objects(erec, every):
    _, h = every
    rec = erec
    assert [(m.message, m.file, m.line, m.type, m.class_handle, m.frame) for m in rec.messages] == [
        ("wheel slipped", "simcore/tire.py", 42, 2, h["class.Thing"], 2),
        ("", "", 0, 0, 0, 2),
    ]
    b = rec.find_object("Thing β ünïcode")
    assert b.destroyed == 5 and rec.find_object("thing_a").destroyed is None


# --------------------------------------------------------------------- lifetimes, implicit


def _reuse_recording() -> bytes:
    def build(w: OmniPvdWriter) -> None:
        car = w.register_class("Car")
        speed = w.register_attribute(car, "speed", DataType.FLOAT64, 1)
        w.start_frame(1, 10)
        w.create_object(1, car, 7, "first")
        w.set_attribute(1, 7, speed, 1.0)
        w.set_attribute(1, 99, speed, 3.0)  # never created
        w.stop_frame(1, 11)
        w.start_frame(1, 20)
        w.set_attribute(1, 7, speed, 2.0)
        w.destroy_object(1, 7)
        w.stop_frame(1, 21)
        w.start_frame(1, 30)
        w.create_object(1, car, 7, "second")
        w.set_attribute(1, 7, speed, 5.0)
        w.stop_frame(1, 31)
        w.start_frame(1, 40)
        w.set_attribute(2, 7, speed, 6.0)  # other context, same object
        w.stop_frame(1, 41)

    return _record(build)


def test_reused_handles_are_distinct_lifetimes():
    rec = Recording.open(_reuse_recording())
    first, implicit, second = rec.objects
    assert (first.name, first.created, first.destroyed) == ("first", 0, 1)
    assert (second.name, second.created, second.destroyed) == ("second", 2, None)
    assert first.handle == second.handle == 7
    assert rec.series(first, "speed").values.tolist() == [1.0, 2.0]
    assert rec.series(second, "speed").values.tolist() == [5.0, 6.0]
    assert rec.value_at(first, "speed", 3) == 2.0  # zero-order hold ignores the lifetime's end
    assert rec.resolve(7, 0) is first and rec.resolve(7, 2) is second and rec.resolve(7) is second
    assert rec.find_object(7, frame=2) is second
    assert rec.objects_at(1) == [first, implicit] and rec.objects_at(2) == [implicit, second]
    assert implicit.implicit and implicit.cls is None and implicit.handle == 99 and implicit.created == 0
    assert rec.series(implicit, "speed").values.tolist() == [3.0]
    assert rec.state_at(implicit, 0) == {"speed": 3.0}


def test_every_name_state_at_gives_is_accepted_by_series():
    """Unregistered paths are named by their handles ("9/10"); series() takes those names too,
    for created and for implicit objects."""
    from pvdkit.ovd import codec

    data = codec.encode_header() + b"".join(c.encode() for c in (
        codec.RegisterClass(1, "Body"),
        codec.RegisterAttribute(1, 1, DataType.FLOAT32, 1, "x"),
        codec.CreateObject(1, 1, 5, "body"),
        codec.StartFrame(1, 1),
        codec.SetAttribute(1, 5, (1,), np.float32(2.0).tobytes()),
        codec.SetAttribute(1, 5, (9, 10), b"\x01\x02"),  # handles never registered
        codec.SetAttribute(1, 6, (11,), b"\x03"),  # an object never created
    ))
    rec = Recording.open(data)
    body, ghost = rec.objects
    state = rec.state_at(body, 0)
    assert set(state) == {"x", "9/10"} and state["x"] == 2.0 and bytes(state["9/10"]) == b"\x01\x02"
    for obj in (body, ghost):
        for name in rec.state_at(obj, 0):
            assert len(rec.series(obj, name)) == 1
    assert bytes(rec.value_at(ghost, "11", 0)) == b"\x03"
    with pytest.raises(PvdError, match="no attribute 'nope'"):
        rec.series(body, "nope")


def test_index_is_the_same_however_the_stream_is_split():
    data = _reuse_recording()
    buf = np.frombuffer(data, np.uint8)
    whole = ovd_data(buf, tokenize(buf))
    builder = IndexBuilder((0, 4, 0))
    pos, frame, series, objects = 12, -1, [], []
    for cut in (60, 150, 230, len(data)):
        part = buf[pos:cut]
        t = tokenize(part, version=(0, 4, 0), start_frame=frame)
        b = builder.feed(part, t)
        series.append(b.series)
        objects.extend(b.objects.handle.tolist())
        pos += t.valid_end
        frame = t.last_frame
    assert pos == len(data)
    assert objects == whole.objects.handle.tolist()
    assert np.concatenate([s.object for s in series]).tolist() == whole.series.object.tolist()
    assert np.concatenate([s.path for s in series]).tolist() == whole.series.path.tolist()
    assert builder.paths == whole.paths


def test_each_batch_counts_only_its_own_samples():
    """Batch by batch, samples per series id are the batch's own (the counts start from zero
    each batch), and they add up to the whole stream's series counts."""
    data = FIXTURE.read_bytes()
    buf = np.frombuffer(data, np.uint8)
    whole = ovd_data(buf, tokenize(buf))
    builder = IndexBuilder((0, 4, 0))
    pos, frame, total = 12, -1, np.zeros(len(whole.series.count), np.int64)
    cuts = np.linspace(len(data) // 7, len(data), 7).astype(int)
    for cut in cuts:
        part = buf[pos:cut]
        t = tokenize(part, version=(0, 4, 0), start_frame=frame)
        b = builder.feed(part, t)
        counts = b.series_counts
        assert len(counts) == b.series0 + len(b.series) and counts.sum() == len(b.attr_rows)
        np.testing.assert_array_equal(counts[b.series0:], b.series.count)
        total[: len(counts)] += counts
        pos += t.valid_end
        frame = t.last_frame
    np.testing.assert_array_equal(total, whole.series.count)


# ---------------------------------------------------------------------------- damage


def test_truncated_file_opens_with_a_warning_and_keeps_everything_before(fixture_rec):
    data = FIXTURE.read_bytes()
    cut = len(data) // 2 + 3
    with pytest.warns(PvdWarning, match=r"truncated at byte offset \d+"):
        rec = Recording.open(data[:cut])
    assert rec.error is not None and "byte offset" in rec.error
    full = fixture_rec
    assert 0 < len(rec.frames) < len(full.frames)
    assert len(rec.objects) == len(full.objects)  # all created before the first frame
    last_complete = len(rec.frames) - 2
    for name in ("WheelRigidBodyState", "PxRigidDynamic"):
        for o, fo in zip(rec.objects_of_class(name), full.objects_of_class(name), strict=True):
            for attr in ("correctedRotationSpeed",) if name.startswith("Wheel") else ("globalPose",):
                np.testing.assert_array_equal(
                    rec.value_at(o, attr, last_complete), full.value_at(fo, attr, last_complete)
                )


def test_bad_inputs_raise_pvd_error(tmp_path):
    with pytest.raises(PvdError, match=r"missing\.ovd: no such file"):
        Recording.open(tmp_path / "missing.ovd")
    text = tmp_path / "notes.ovd"
    text.write_text("hello, this is not a recording at all")
    with pytest.raises(PvdError, match="not an OmniPVD stream"):
        Recording.open(text)
    fake = tmp_path / "fake.h5"
    fake.write_bytes(b"\x00" * 64)
    with pytest.raises(PvdError, match="not an HDF5 file"):
        Recording.open(fake)
    with pytest.raises(PvdError):
        Recording.open(b"\x00\x00")


def test_a_misspelt_class_is_answered_with_close_names():
    rec = Recording.open(FIXTURE)
    with pytest.raises(PvdError, match=r"no class 'WheelRigidBodyStat'; did you mean WheelRigidBodyState"):
        rec.objects_of_class("WheelRigidBodyStat")
    with pytest.raises(PvdError, match=r"no class 'Nothing'$"):
        rec.cls("Nothing")


def test_value_at_is_binary_search_on_a_long_series():
    n = 200_000
    rng = np.random.default_rng(1)

    def build(w: OmniPvdWriter) -> None:
        cls = w.register_class("Body")
        x = w.register_attribute(cls, "x", DataType.FLOAT64, 1)
        w.create_object(1, cls, 1, "body")
        values = rng.standard_normal((n, 1))
        w.write_frames(1, np.arange(1, n + 1), [([1], {x: values})])
        build.values = values[:, 0]

    rec = Recording.open(_record(build))
    body = rec.find_object("body")
    s = rec.series(body, "x")
    assert len(s) == n and len(rec.frames) == n
    np.testing.assert_array_equal(s.values, build.values)
    for f in (0, 1, n // 2, n - 1):
        assert rec.value_at(body, "x", f) == build.values[f]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rec.value_at(body, "x", -1) is None


def test_truncations_of_a_small_stream_open(every):
    """Cut the every-command stream at and just before command ends (every other command): the
    model opens (warning when cut inside a command) and agrees with the full stream on
    everything it holds. (Cuts at every byte are the tokenizer's tests.)"""
    data, _ = every
    full = Recording.open(data)
    ends = tokenize(np.frombuffer(data, np.uint8)).end
    cuts = sorted({12, *ends[::2].tolist(), *(ends[1::2] - 1).tolist()})
    for cut in cuts:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rec = Recording.open(data[:cut])
        assert (rec.error is None) == (not caught)
        assert all(issubclass(w.category, PvdWarning) for w in caught)
        assert len(rec.objects) <= len(full.objects) and len(rec.frames) <= len(full.frames)
        for o in rec.objects:
            fo = full.objects[o.index]
            assert (o.handle, o.name) == (fo.handle, fo.name)
            for s in rec.all_series(o):
                ref = full.series(fo, s.path or ())
                n = len(s)
                np.testing.assert_array_equal(s.frames, ref.frames[:n])
                assert [s.samples.payload(i) for i in range(n)] == [ref.samples.payload(i) for i in range(n)]


def test_bytes_that_name_a_file_are_read_as_data_and_the_error_says_so():
    """Recording.open(b"x.ovd") reads the bytes as a recording: the error said only that they
    are no version header, which reads as if the file were damaged."""
    with pytest.raises(PvdError, match="bytes are read as the recording itself: for the file "
                                       r"'.*vehicles_short\.ovd', pass its name as a str or Path"):
        Recording.open(os.fsencode(FIXTURE))
    with pytest.raises(PvdError, match="not an OmniPVD stream") as err:
        Recording.open(b"\x00\x01 not a name, not a stream")
    assert "pass its name" not in str(err.value)
