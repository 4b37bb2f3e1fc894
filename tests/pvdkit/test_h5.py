"""HDF5 recordings: lossless round trips, recording while streaming, plain-h5py access, size."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import h5py
import numpy as np
import pytest

from pvdkit.convert import convert
from pvdkit.h5 import FORMAT_VERSION, H5Stream, h5_to_ovd_bytes
from pvdkit.ovd.tokenizer import tokenize
from pvdkit.recording import Recording
from pvdkit.streams import MemoryStream
from pvdkit.synthetic import write_every_command
from pvdkit.types import DataType, PvdError, PvdWarning
from pvdkit.writer import OmniPvdWriter

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd"


@pytest.fixture(scope="module")
def fixture_h5(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("h5") / "vehicles_short.h5"
    convert(FIXTURE, path)
    return path


@pytest.fixture(scope="module")
def every_bytes() -> bytes:
    ms = MemoryStream()
    write_every_command(ms)
    return ms.getvalue()


def _datasets(path: Path) -> dict[str, object]:
    """Every dataset (as Python values) and attribute of a file, for exact comparisons."""
    out: dict[str, object] = {}
    with h5py.File(path, "r") as f:

        def visit(name: str, obj) -> None:
            if isinstance(obj, h5py.Dataset):
                data = obj[()]
                out[name] = (
                    obj.dtype.str if obj.dtype.names is None else str(obj.dtype),
                    obj.shape,
                    _plain(data),
                )
            out[name + "@attrs"] = {k: _plain(v) for k, v in obj.attrs.items() if k != "source"}

        f.visititems(visit)
        out["@root"] = {k: _plain(v) for k, v in f.attrs.items() if k != "source"}
    return out


def _plain(v):
    if isinstance(v, np.ndarray):
        if v.dtype.names:
            return [tuple(_plain(x) for x in row) for row in v.tolist()]
        if v.dtype == object:
            return [_plain(x) for x in v.tolist()]
        return v.tolist()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


# ------------------------------------------------------------------------------ round trips


def test_fixture_round_trip_is_byte_identical_and_small(fixture_h5, tmp_path):
    back = tmp_path / "back.ovd"
    convert(fixture_h5, back)
    assert back.read_bytes() == FIXTURE.read_bytes()
    ratio = fixture_h5.stat().st_size / FIXTURE.stat().st_size
    assert ratio <= 0.5, f".h5 is {ratio:.2f} × the .ovd"


def test_every_command_round_trip_is_byte_identical(every_bytes, tmp_path):
    src = tmp_path / "every.ovd"
    src.write_bytes(every_bytes)
    convert(src, tmp_path / "every.h5")
    assert h5_to_ovd_bytes(tmp_path / "every.h5") == every_bytes
    with h5py.File(tmp_path / "every.h5") as f:
        kinds = set(f["log/kind"][:].tolist())
        assert kinds == set(range(1, 14)) - {2}  # every command (2 is reserved, never written)
        assert len(f["log/context_exceptions"]) == 0
        pools = set(f["pools"])
    # all 14 data types reach storage: numeric pools, bytes for strings, u8/u32 for flags
    for name in (
        "set_int8x2",
        "set_int16x1",
        "set_int32x3",
        "set_int64x1",
        "set_uint8x4",
        "set_uint16x1",
        "set_uint32_var",
        "set_uint64x1",
        "set_float32x4",
        "set_float64x2",
        "set_bytes_var",
        "set_uint32x1",
        "set_uint8x1",
        "list_uint64x1",
        "list_bytes_var",
        "set_float32x3",
    ):
        assert name in pools, (name, sorted(pools))


def _reuse_and_contexts() -> bytes:
    ms = MemoryStream()
    w = OmniPvdWriter(ms)
    car = w.register_class("Car")
    speed = w.register_attribute(car, "speed", DataType.FLOAT64, 1)
    w.start_frame(1, 1)
    w.create_object(1, car, 7, "first")
    w.set_attribute(1, 7, speed, 1.0)
    w.set_attribute(3, 7, speed, 1.5)  # another context for the same series: an exception
    w.set_attribute(1, 99, speed, 3.0)  # never created: implicit object
    w.destroy_object(1, 7)
    w.destroy_object(1, 7)  # destroyed twice
    w.destroy_object(1, 12345)  # never existed
    w.stop_frame(1, 2)
    w.stop_frame(1, 3)  # stop without a frame
    w.create_object(1, car, 7, "second")
    w.set_attribute(1, 7, speed, 5.0)
    w.close()
    return ms.getvalue()


def test_irregular_streams_round_trip(tmp_path):
    data = _reuse_and_contexts()
    src = tmp_path / "odd.ovd"
    src.write_bytes(data)
    convert(src, tmp_path / "odd.h5")
    assert h5_to_ovd_bytes(tmp_path / "odd.h5") == data
    rec = Recording.open(tmp_path / "odd.h5")
    first, implicit, second = rec.objects
    assert rec.series(first, "speed").values.tolist() == [1.0, 1.5]
    assert implicit.implicit and second.created == 0 and first.destroyed == 0
    with h5py.File(tmp_path / "odd.h5") as f:
        assert f["log/context_exceptions"][:].tolist() == [(5, 3)]  # command 5: the second set
        assert f["frame_stops"]["frame"].tolist() == [0, -1]


@pytest.mark.parametrize("damage", ["truncate", "bad_command"])
def test_damaged_stream_round_trips_with_its_tail(tmp_path, damage):
    data = bytearray(FIXTURE.read_bytes())
    if damage == "truncate":
        data = data[:600_001]
    else:
        table = tokenize(np.frombuffer(bytes(data), np.uint8))
        at = int(table.offset[len(table) * 2 // 3])
        data[at] = 0xEE  # an impossible command code at a command two thirds into the stream
    src = tmp_path / "damaged.ovd"
    src.write_bytes(bytes(data))
    with pytest.warns(PvdWarning, match="byte offset"):
        convert(src, tmp_path / "damaged.h5")
    assert h5_to_ovd_bytes(tmp_path / "damaged.h5") == bytes(data)
    rec = Recording.open(tmp_path / "damaged.h5")
    assert rec.error is not None and "byte offset" in rec.error
    with pytest.warns(PvdWarning):
        ovd = Recording.open(src)
    assert len(rec.frames) == len(ovd.frames) > 0
    assert rec.counts() == ovd.counts()


# ------------------------------------------------------------------- the same query results


def test_h5_answers_every_query_like_the_ovd(fixture_h5):
    a = Recording.open(FIXTURE)
    b = Recording.open(fixture_h5)
    assert a.counts() == b.counts() and a.version == b.version
    assert [(c.handle, c.name, c.base and c.base.handle) for c in a.classes_by_handle.values()] == [
        (c.handle, c.name, c.base and c.base.handle) for c in b.classes_by_handle.values()
    ]
    assert [(o.handle, o.name, o.cls.name, o.context, o.created, o.destroyed) for o in a.objects] == [
        (o.handle, o.name, o.cls.name, o.context, o.created, o.destroyed) for o in b.objects
    ]
    for col in ("context", "start", "stop", "stopped"):
        np.testing.assert_array_equal(getattr(a.frames, col), getattr(b.frames, col))
    n = 0
    for oa, ob in zip(a.objects, b.objects, strict=True):
        sa, sb = a.all_series(oa), b.all_series(ob)
        assert [s.name for s in sa] == [s.name for s in sb]
        for x, y in zip(sa, sb, strict=True):
            np.testing.assert_array_equal(x.frames, y.frames)
            assert x.samples.sizes().tolist() == y.samples.sizes().tolist()
            assert [x.samples.payload(i) for i in range(len(x))] == [
                y.samples.payload(i) for i in range(len(y))
            ]
            n += 1
        if oa.index % 50 == 0:
            assert repr(a.state_at(oa, 7)) == repr(b.state_at(ob, 7))
    assert n == len(a.series_table()) == len(b.series_table())


# ------------------------------------------------------------------------- while recording


def test_h5_stream_while_recording_equals_convert(every_bytes, tmp_path):
    streamed = tmp_path / "streamed.h5"
    stream = H5Stream(streamed, batch_bytes=256)
    write_every_command(stream)  # the writer closes the stream
    assert stream.batches > 5
    src = tmp_path / "every.ovd"
    src.write_bytes(every_bytes)
    convert(src, tmp_path / "converted.h5")
    assert _datasets(streamed) == _datasets(tmp_path / "converted.h5")
    assert h5_to_ovd_bytes(streamed) == every_bytes


def test_h5_stream_in_odd_pieces_without_compaction(tmp_path, fixture_h5):
    data = FIXTURE.read_bytes()
    path = tmp_path / "pieces.h5"
    rng = np.random.default_rng(7)
    with H5Stream(path, batch_bytes=150_000, compact=False) as s:
        pos = 0
        while pos < len(data):
            n = int(rng.integers(1, 20_000))
            s.write(memoryview(data)[pos : pos + n])
            pos += n
            if rng.random() < 0.05:
                s.flush()
        assert s.batches >= 6
    assert h5_to_ovd_bytes(path) == data
    with h5py.File(path) as f:
        seg = f["segments"][:]
        assert len(seg) > len(f["series"])  # several segments per series: appended batch by batch
        assert f.attrs["complete"]
        assert json.loads(f.attrs["command_counts"])["set_attribute"] == 24005
    a, b = Recording.open(fixture_h5), Recording.open(path)
    for oa, ob in zip(
        a.objects_of_class("WheelRigidBodyState"), b.objects_of_class("WheelRigidBodyState"), strict=True
    ):
        for attr in ("correctedRotationSpeed", "rotationAngle"):
            fa, va = a.series(oa, attr)
            fb, vb = b.series(ob, attr)
            np.testing.assert_array_equal(fa, fb)
            np.testing.assert_array_equal(va, vb)


def _write_in_pieces(s: H5Stream, data: bytes) -> H5Stream:
    """``data`` written to ``s`` in 50 pieces (commits come as batches fill), then closed."""
    for piece in np.array_split(np.frombuffer(data, np.uint8), 50):
        s.write(piece.tobytes())
    s.close()
    return s


def test_background_commits_write_the_file_that_commits_in_the_caller_write(tmp_path, monkeypatch):
    from pvdkit.h5 import writer as h5writer

    threads: list[str] = []
    real_commit = h5writer.H5Writer.commit

    def commit(self):
        threads.append(threading.current_thread().name)
        real_commit(self)

    monkeypatch.setattr(h5writer.H5Writer, "commit", commit)
    data = FIXTURE.read_bytes()
    paths = {}
    for background in (True, False):
        threads.clear()
        paths[background] = tmp_path / f"background_{background}.h5"
        _write_in_pieces(H5Stream(paths[background], batch_bytes=100_000, flush_interval=1e9, compact=False,
                                  background=background), data)
        assert len(threads) > 5
        workers = [t for t in threads if t == "pvdkit-h5-commit"]
        # The empty file's commit and the first batch's are written at once; the rest on the
        # commit thread (the close writes its last commit itself).
        assert len(workers) == (len(threads) - 2 if background else 0), threads
    assert _datasets(paths[True]) == _datasets(paths[False])
    assert h5_to_ovd_bytes(paths[True]) == data


def test_damage_found_on_the_commit_thread_keeps_every_later_write_verbatim(tmp_path):
    """The commit thread indexes while the caller goes on writing: the writes that arrive
    after the damaged command, before and after the commit that found it is taken in, all
    follow it verbatim, in order — the file of a stream that commits in the caller."""
    data = bytearray(FIXTURE.read_bytes())
    table = tokenize(np.frombuffer(bytes(data), np.uint8))
    data[int(table.offset[len(table) // 3])] = 0xEE  # an impossible command a third of the way in
    paths = {}
    for background in (True, False):
        paths[background] = tmp_path / f"damaged_{background}.h5"
        with pytest.warns(PvdWarning, match="byte offset"):
            _write_in_pieces(H5Stream(paths[background], batch_bytes=50_000, flush_interval=1e9,
                                      compact=False, background=background), bytes(data))
            rec = Recording.open(paths[background])
        assert rec.error is not None and len(rec.frames) > 0
    files = {}
    for background, path in paths.items():
        files[background] = _datasets(path)
        root = files[background]["@root"]
        root["error"] = root["error"].replace(str(path), "FILE")  # the message names its file
        root["source"] = "FILE"
    assert files[True] == files[False]
    assert h5_to_ovd_bytes(paths[True]) == bytes(data)


def test_a_background_commit_that_hits_a_full_disk_stops_the_stream_at_the_next_call(tmp_path, monkeypatch):
    """The failure of a commit written on the commit thread is the stream's failure: the next
    write that commits (or close) raises one line, and the file keeps the commits before it."""
    from pvdkit.h5 import writer as h5writer

    calls = {"n": 0}
    real_commit_row = h5writer.H5Writer._commit_row

    def failing_commit_row(self):
        calls["n"] += 1
        if calls["n"] == 3:  # the empty file and the first frame commit; then the first background one
            assert threading.current_thread().name == "pvdkit-h5-commit"
            raise RuntimeError("Unable to flush file (file write failed: errno = 28, error message = "
                               "'No space left on device')")
        real_commit_row(self)

    monkeypatch.setattr(h5writer.H5Writer, "_commit_row", failing_commit_row)
    path = tmp_path / "full.h5"
    s = H5Stream(path, batch_bytes=100_000, compact=False)
    with pytest.raises(PvdError, match=r"^disk full writing .*full\.h5 after \d+ frames?; "
                                       r"the file keeps every frame committed before$"):
        _write_in_pieces(s, FIXTURE.read_bytes())
    assert s.failed
    with pytest.raises(PvdError, match="disk full"):  # and says so again, as any failed stream
        s.write(b"more")
    with pytest.warns(PvdWarning, match="incomplete"):
        rec = Recording.open(path)
    assert len(rec.frames) >= 1


def test_a_bug_in_a_background_commit_shows_its_traceback(tmp_path, monkeypatch):
    from pvdkit.h5 import writer as h5writer

    calls = {"n": 0}
    real_commit = h5writer.H5Writer.commit

    def buggy_commit(self):
        calls["n"] += 1
        if calls["n"] == 3:
            raise ZeroDivisionError("a bug in the commit")
        real_commit(self)

    monkeypatch.setattr(h5writer.H5Writer, "commit", buggy_commit)
    s = H5Stream(tmp_path / "bug.h5", batch_bytes=100_000, compact=False)
    with pytest.raises(ZeroDivisionError, match="a bug in the commit"):
        _write_in_pieces(s, FIXTURE.read_bytes())


def test_h5_stream_keeps_an_incomplete_tail(tmp_path):
    data = FIXTURE.read_bytes()[:300_007]
    path = tmp_path / "cut.h5"
    with H5Stream(path, batch_bytes=50_000) as s:
        s.write(data)
    assert h5_to_ovd_bytes(path) == data
    rec = Recording.open(path)
    assert "truncated at byte offset" in rec.error


def test_h5_stream_errors(tmp_path):
    s = H5Stream(tmp_path / "x.h5")
    s.write(b"\x00\x00")
    with pytest.raises(PvdError, match="before its 12-byte OmniPVD header"):
        s.close()
    with pytest.raises(PvdError, match="write after the stream was closed"):
        s.write(b"\x00")
    with pytest.raises(PvdError, match="does not exist"):
        H5Stream(tmp_path / "no" / "such" / "dir.h5")


# ------------------------------------------------------------------------------ plain h5py


def test_plain_h5py_reads_a_series_with_one_slice(fixture_h5):
    """The recipe of docs/recording-format.md, without pvdkit."""
    with h5py.File(fixture_h5, "r") as f:
        assert f.attrs["format"] == "pvdkit.recording" and f.attrs["format_version"] == FORMAT_VERSION
        objects = f["objects"][:]
        names = [n.decode() for n in objects["name"]]
        obj = names.index("WheelRigidBody1dState0")
        paths = [n.decode() for n in f["paths"]["name"]]
        series = f["series"][:]
        sid = int(
            np.flatnonzero(
                (series["object"] == obj) & (series["path"] == paths.index("correctedRotationSpeed"))
            )[0]
        )
        seg = f["segments"][:]
        (row,) = seg[seg["series"] == sid]
        pool = f["pools"][json.loads(f["pools"].attrs["order"])[row["pool"]]]
        values = pool["values"][row["start"] : row["start"] + row["count"]]
        frames = pool["frames"][row["start"] : row["start"] + row["count"]]
        times = f["frames"]["start"][frames]
    rec = Recording.open(FIXTURE)
    wheel = rec.find_object("WheelRigidBody1dState0")
    f_ref, v_ref = rec.series(wheel, "correctedRotationSpeed")
    np.testing.assert_array_equal(values, v_ref)
    np.testing.assert_array_equal(frames, f_ref)
    np.testing.assert_array_equal(times, rec.frames.start[f_ref])


def test_compressed_and_chunked(fixture_h5):
    with h5py.File(fixture_h5) as f:
        for name in ("log/kind", "log/series", "objects", "series"):
            assert f[name].compression == "gzip" and f[name].chunks is not None
        for g in f["pools"].values():
            assert g["values"].compression == "gzip" and g["values"].maxshape[0] is None


def test_not_a_pvdkit_recording(tmp_path):
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["x"] = np.arange(3)
    with pytest.raises(PvdError, match="not a pvdkit recording"):
        Recording.open(other)
    newer = tmp_path / "newer.h5"
    convert(FIXTURE, newer)
    with h5py.File(newer, "a") as f:
        f.attrs["format_version"] = FORMAT_VERSION + 1
    with pytest.raises(PvdError, match="newer than this pvdkit reads"):
        Recording.open(newer)
    with pytest.raises(PvdError, match="not a pvdkit recording"):
        h5_to_ovd_bytes(other)


def test_interrupted_recording_is_readable_up_to_the_last_flush(tmp_path):
    """A copy of the file taken while recording (as after a crash) holds every flushed batch."""
    import shutil

    data = FIXTURE.read_bytes()
    live = tmp_path / "live.h5"
    s = H5Stream(live, batch_bytes=1 << 30)
    s.write(data[:500_000])
    s.flush()
    shutil.copy(live, tmp_path / "crash.h5")
    s.write(data[500_000:])
    s.close()
    crashed = Recording.open(tmp_path / "crash.h5")
    with h5py.File(tmp_path / "crash.h5") as f:
        assert not f.attrs["complete"]
    full = Recording.open(live)
    assert 0 < len(crashed.frames) < len(full.frames)
    assert 0 < crashed.counts()["set_attribute"] < full.counts()["set_attribute"]
    wheel_c = crashed.find_object("WheelRigidBody1dState0")
    wheel_f = full.find_object("WheelRigidBody1dState0")
    f_c, v_c = crashed.series(wheel_c, "correctedRotationSpeed")
    f_f, v_f = full.series(wheel_f, "correctedRotationSpeed")
    np.testing.assert_array_equal(v_c, v_f[: len(v_c)])
    np.testing.assert_array_equal(f_c, f_f[: len(f_c)])


def test_open_an_h5_image_in_memory(fixture_h5):
    rec = Recording.open(fixture_h5.read_bytes())
    assert rec.counts()["set_attribute"] == 24005
    assert len(rec.series(rec.find_object("WheelRigidBody1dState0"), "correctedRotationSpeed")) == 13
    rec.close()
