"""H5Stream's prepared-block hook: a block indexed once, then only its payloads per frame, gives
exactly the file the ordinary byte path gives for the same stream (datasets and rebuilt .ovd)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import h5py
import numpy as np
import pytest

from pvdkit.h5 import H5Stream
from pvdkit.h5.rebuild import h5_to_ovd_bytes
from pvdkit.recording import Recording
from pvdkit.streams import MemoryStream
from pvdkit.types import DataType
from pvdkit.writer import OmniPvdWriter, PreparedColumn


@pytest.fixture(autouse=True)
def every_block_prepared(monkeypatch):
    """These blocks are small (60 commands): below :data:`MIN_PREPARED_COMMANDS` the stream
    would take them as bytes, and the hook would not be tested at all. Also counts the
    prepared frames the writer receives, and those it lays out as one run
    (:class:`pvdkit.h5.writer._PreparedRun`)."""
    from pvdkit.h5 import stream as h5stream
    from pvdkit.h5 import writer as h5writer

    monkeypatch.setattr(h5stream, "MIN_PREPARED_COMMANDS", 1)
    seen = {"frames": 0, "runs": 0}
    append = h5writer.H5Writer._append_parts
    samples = h5writer.H5Writer._samples

    def counting_append(self, parts, progress):
        seen["frames"] += sum(isinstance(p, h5writer.PreparedFrame) for p in parts)
        return append(self, parts, progress)

    def counting_samples(self, src, plan, progress, run=None):
        seen["runs"] += run is not None
        return samples(self, src, plan, progress, run)

    monkeypatch.setattr(h5writer.H5Writer, "_append_parts", counting_append)
    monkeypatch.setattr(h5writer.H5Writer, "_samples", counting_samples)
    return seen


class _BytesOnly(H5Stream):
    """The same stream without the hook: the writer passes every block as bytes."""

    write_prepared = None  # type: ignore[assignment]


class _Tee:
    """Passes everything to an H5Stream and keeps the bytes (the ground truth)."""

    def __init__(self, inner: H5Stream) -> None:
        self.inner = inner
        self.memory = MemoryStream()
        if getattr(inner, "write_prepared", None) is not None:
            self.write_prepared = self._prepared

    def write(self, data) -> None:
        self.memory.write(data)
        self.inner.write(data)

    def _prepared(self, block) -> None:
        self.memory.write(block.buffer)
        self.inner.write_prepared(block)

    def frame_end(self) -> None:
        self.inner.frame_end()

    def flush(self) -> None:
        self.inner.flush()

    def close(self) -> None:
        self.inner.close()


def _scenario(w: OmniPvdWriter, flush: Callable[[], None], frames: int = 24,
              clock_block: bool = True) -> None:
    """A recorder-like stream: schema, objects, two prepared blocks per frame (one without
    ``clock_block``, as a fleet's recorder writes), raw params and raw writes into a block's
    series between frames, an object re-created (its handle is a new object), new objects
    mid-recording, and commits at fixed frames."""
    body = w.register_class("Body")
    wheel = w.register_class("Wheel")
    sim = w.register_class("Sim")
    pos = w.register_attribute(body, "pos", DataType.FLOAT32, 3)
    mass = w.register_attribute(body, "mass", DataType.FLOAT64)
    gear = w.register_attribute(body, "gear", DataType.UINT32)
    speed = w.register_attribute(wheel, "speed", DataType.FLOAT32)
    force = w.register_attribute(wheel, "force", DataType.FLOAT32, 3)
    clock = w.register_attribute(sim, "time", DataType.FLOAT64)
    clock32 = w.register_attribute(sim, "time32", DataType.FLOAT32)
    temp = w.register_attribute(wheel, "temperature", DataType.FLOAT32)
    bodies = np.arange(10, 16, dtype=np.uint64)
    wheels = np.arange(100, 124, dtype=np.uint64)
    for h in bodies:
        w.create_object(1, body, int(h), f"body{h}")
    for h in wheels:
        w.create_object(1, wheel, int(h), f"wheel{h}")
    w.create_object(1, sim, 1, "sim")
    block = w.prepare_attributes(1, [
        PreparedColumn(bodies, pos), PreparedColumn(bodies, gear),
        PreparedColumn(wheels, speed), PreparedColumn(wheels, force, 1),
    ])
    clock_prepared = w.prepare_attributes(1, [PreparedColumn([1], clock)])
    rng = np.random.default_rng(7)
    for f in range(frames):
        w.start_frame(1, f + 1)
        if f in (0, 5, 13):  # params written on change, between blocks
            w.set_attribute_batch(1, bodies, mass, rng.normal(size=len(bodies)))
        for view in block.views:
            view[...] = rng.integers(0, 50, size=view.shape) if view.dtype.kind == "u" else rng.normal(
                size=view.shape)
        if not clock_block:  # samples in the pools of the block's series, before and after them
            w.set_attribute(1, int(wheels[0]), temp, float(f))
        w.write_prepared(block)
        if f == 7:  # an ordinary write into a block's series, in the same batch
            w.set_attribute(1, int(wheels[3]), speed, 42.0)
        if f == 9:  # a handle becomes another object: the block's series change
            w.destroy_object(1, int(bodies[2]))
            w.create_object(1, body, int(bodies[2]), "reborn")
        if f == 11:  # new objects written by ordinary commands, another context
            w.create_object(2, body, 999, "late")
            w.set_attribute(2, 999, pos, [1.0, 2.0, 3.0])
            w.set_attribute(2, int(bodies[0]), gear, 3)  # a context exception in a block series
        clock_prepared.views[0][...] = f / 60
        if clock_block:
            w.write_prepared(clock_prepared)
        else:
            w.set_attribute(1, 1, clock, f / 60)
            w.set_attribute(1, 1, clock32, f / 60)
        w.stop_frame(1, f + 1)
        if f in (3, 10, 17):
            flush()


def _record(path: Path, cls: type[H5Stream], clock_block: bool = True, **kw) -> bytes:
    stream = cls(path, flush_interval=1e9, **kw)
    tee = _Tee(stream)
    with OmniPvdWriter(tee) as w:
        _scenario(w, stream.flush, clock_block=clock_block)
    return tee.memory.getvalue()


def _datasets(path: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    with h5py.File(path, "r") as f:
        out["/"] = {k: np.asarray(v).tolist() for k, v in f.attrs.items() if k != "source"}
        out["/"]["error"] = str(out["/"]["error"]).replace(str(path), "PATH")

        def visit(name: str, obj) -> None:
            if isinstance(obj, h5py.Dataset):
                out[name] = obj[()]
            out[name + "@"] = {k: np.asarray(v).tolist() for k, v in obj.attrs.items()}

        f.visititems(visit)
    return out


def _assert_same_file(a: Path, b: Path) -> None:
    da, db = _datasets(a), _datasets(b)
    assert da.keys() == db.keys()
    for k in da:
        if isinstance(da[k], np.ndarray):
            assert da[k].dtype == db[k].dtype, k
            assert da[k].shape == db[k].shape, k
            if da[k].dtype.hasobject:  # strings: compare the values, not the pointers
                assert da[k].tolist() == db[k].tolist(), k
            else:
                assert da[k].tobytes() == db[k].tobytes(), k
        else:
            assert da[k] == db[k], k


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("clock_block", [True, False], ids=["two-blocks", "one-block"])
def test_prepared_hook_writes_the_file_the_bytes_give(tmp_path: Path, compact: bool, clock_block: bool,
                                                     every_block_prepared) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    fast, slow = tmp_path / "a" / "rec.h5", tmp_path / "b" / "rec.h5"
    data = _record(fast, H5Stream, clock_block, compact=compact)
    assert every_block_prepared["frames"] > 20
    # One block per frame: its frames are laid out as one run, except in the batches where an
    # ordinary write goes into one of its series (sample by sample, as two blocks always are).
    assert (every_block_prepared["runs"] >= 2) != clock_block, every_block_prepared
    data_b = _record(slow, _BytesOnly, clock_block, compact=compact)
    assert data == data_b
    assert h5_to_ovd_bytes(fast) == data
    _assert_same_file(fast, slow)
    with h5py.File(fast, "r") as f:
        assert f.attrs["complete"]
        assert compact or len(f["log/commits"]) > 4  # several batches, each with block frames
    rec = Recording.open(fast)
    assert len(rec.frames) == 24


@pytest.mark.parametrize("clock_block", [True, False], ids=["two-blocks", "one-block"])
def test_commits_on_the_commit_thread_write_the_file_commits_in_the_caller_write(
        tmp_path: Path, clock_block: bool, every_block_prepared) -> None:
    """Small batches commit on their own, on the commit thread, which also indexes them while
    the writer goes on (blocks learnt, objects reborn, context exceptions): the file is the one
    the same commits written in the caller give, and the bytes given."""
    files = {}
    for background in (True, False):
        (tmp_path / str(background)).mkdir()
        files[background] = tmp_path / str(background) / "rec.h5"
        data = _record(files[background], H5Stream, clock_block, compact=False, batch_bytes=1500,
                       background=background)
        assert h5_to_ovd_bytes(files[background]) == data
    with h5py.File(files[True], "r") as f:
        assert len(f["log/commits"]) > 12  # most commits came on their own
    assert every_block_prepared["runs"] > 0
    _assert_same_file(files[True], files[False])


def test_prepared_hook_writes_nothing_twice_and_counts_bytes(tmp_path: Path) -> None:
    stream = H5Stream(tmp_path / "x.h5", flush_interval=1e9, compact=False)
    with OmniPvdWriter(stream) as w:
        _scenario(w, stream.flush, frames=6)
        written = w.bytes_written
    assert stream.bytes_written == written
    assert len(h5_to_ovd_bytes(tmp_path / "x.h5")) == written


def test_damage_before_a_block_keeps_the_rest_verbatim(tmp_path: Path) -> None:
    """Bytes that break the stream before a block: both paths keep everything after verbatim."""
    outs = []
    for cls, name in ((H5Stream, "a/rec.h5"), (_BytesOnly, "b/rec.h5")):
        (tmp_path / name).parent.mkdir()
        stream = cls(tmp_path / name, flush_interval=1e9, compact=False)
        tee = _Tee(stream)
        w = OmniPvdWriter(tee)
        c = w.register_class("C")
        a = w.register_attribute(c, "v", DataType.FLOAT32)
        w.create_object(1, c, 5, "o")
        block = w.prepare_attributes(1, [PreparedColumn([5], a)])
        w.start_frame(1, 1)
        w.write_prepared(block)
        w.stop_frame(1, 1)
        tee.write(b"\xee\x01\x02")  # not a command
        for f in range(2, 5):
            w.start_frame(1, f)
            block.views[0][...] = f
            w.write_prepared(block)
            w.stop_frame(1, f)
        w.close()
        outs.append((tmp_path / name, tee.memory.getvalue()))
    (a, da), (b, db) = outs
    assert da == db
    assert h5_to_ovd_bytes(a) == da
    _assert_same_file(a, b)


def test_a_commits_frames_are_one_array_without_a_copy():
    """Payloads captured as consecutive rows of one arena are taken end to end as a view; any
    other payloads are copied, with the same bytes."""
    from pvdkit.h5.writer import _end_to_end

    arena = np.arange(5 * 6, dtype=np.uint8).reshape(5, 6)
    rows = [arena[1], arena[2], arena[3]]
    whole = _end_to_end(rows)
    assert np.shares_memory(whole, arena)
    np.testing.assert_array_equal(whole, np.concatenate(rows))
    for payloads in ([arena[1], arena[3]], [arena[2], arena[1]], [arena[0], arena[1].copy()],
                     [np.arange(6, dtype=np.uint8), np.arange(6, 12, dtype=np.uint8)]):
        out = _end_to_end(payloads)
        assert not np.shares_memory(out, arena)
        np.testing.assert_array_equal(out, np.concatenate(payloads))
