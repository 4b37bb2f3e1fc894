"""The growing query model (``Recording.stream()`` / :class:`LiveRecording`) against one-shot reads.

Why these checks: a live model is only trustworthy if, at every instant, it is the recording of
the bytes received so far — so it is compared with :meth:`Recording.open` of that prefix after
every chunk, on a real recording (``tests/data/dev_drive.h5`` rebuilt as ``.ovd``).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pvdkit.convert import convert
from pvdkit.live import StreamParser
from pvdkit.ovd.tokenizer import tokenize
from pvdkit.recording import LiveRecording, Recording
from pvdkit.types import Command, PvdError, PvdWarning

DEV_DRIVE = Path(__file__).resolve().parents[1] / "data" / "dev_drive.h5"


@pytest.fixture(scope="module")
def stream(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """dev_drive as the ``.ovd`` bytes PhysX would have streamed."""
    path = tmp_path_factory.mktemp("live") / "dev_drive.ovd"
    convert(DEV_DRIVE, path)
    return path.read_bytes()


def _frame_cuts(data: bytes) -> list[int]:
    """Offsets of every START_FRAME command: cutting there gives one frame per piece."""
    t = tokenize(np.frombuffer(data, np.uint8))
    return t.offset[t.kind == Command.START_FRAME].tolist()


def _pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def _same(a: Any, b: Any) -> bool:
    """Deep equality of state values (numpy arrays element-wise, NaN equal to NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        nan = a.dtype.kind == "f"
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=nan))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return type(a) is type(b) and a == b


def _busiest_series(rec: Recording, n: int) -> list[tuple[int, str]]:
    """(object index, attribute) of the ``n`` series with the most samples, for spot checks."""
    st = rec.series_table()
    sids = np.argsort(-st.count, kind="stable")[:n]
    return [(int(st.object[s]), rec.path_name(int(st.path[s]))) for s in sids]


def test_after_every_chunk_the_model_is_the_prefix_read_at_once(stream: bytes) -> None:
    cuts = _frame_cuts(stream)[:120]  # 120 frame-sized pieces: each prefix re-read in full
    whole = Recording.open(stream[: cuts[-1]])
    watched = _busiest_series(whole, 4)
    live = Recording.stream("dev_drive")
    assert isinstance(live, LiveRecording) and len(live.frames) == 0 and live.version is None
    for piece in _pieces(stream[: cuts[-1]], cuts[:-1]):
        live.feed(piece)
        prefix = Recording.open(stream[: live.parser.parsed_bytes])
        assert len(live.frames) == len(prefix.frames)
        assert np.array_equal(live.frames.stop, prefix.frames.stop)
        assert np.array_equal(live.frames.stopped, prefix.frames.stopped)
        assert [(o.handle, o.name, o.created, o.destroyed) for o in live.objects] == [
            (o.handle, o.name, o.created, o.destroyed) for o in prefix.objects]
        assert live.counts() == prefix.counts()
        for index, attribute in watched:
            if index >= len(prefix.objects):
                continue
            a = live.series(live.objects[index], attribute)
            b = prefix.series(prefix.objects[index], attribute)
            assert np.array_equal(a.frames, b.frames)
            assert _same(a.raw, b.raw)
    assert len(live.frames) == len(whole.frames) == 119


def test_whole_stream_in_random_pieces_equals_the_one_shot_read(stream: bytes) -> None:
    rng = np.random.default_rng(15)
    live = Recording.stream()
    at = 0
    while at < len(stream):  # pieces of 1 byte to 64 KB: commands and the header split anywhere
        n = int(rng.integers(1, 1 << int(rng.integers(1, 17))))
        live.feed(stream[at : at + n])
        at += n
    assert live.finish() is None and live.error is None and live.incomplete is None
    one = Recording.open(stream)
    last = len(one.frames) - 1
    assert len(live.frames) == len(one.frames) and len(live.objects) == len(one.objects)
    assert live.counts() == one.counts()
    assert set(live.classes) == set(one.classes)
    for a, b in zip(live.objects, one.objects, strict=True):
        assert (a.handle, a.name, a.created, a.destroyed) == (b.handle, b.name, b.created, b.destroyed)
        assert (a.cls.name if a.cls else None) == (b.cls.name if b.cls else None)
        assert _same(live.state_at(a, last), one.state_at(b, last)), a
    st_live, st_one = live.series_table(), one.series_table()
    for col in ("object", "path", "family", "context", "count"):
        assert np.array_equal(getattr(st_live, col), getattr(st_one, col)), col
    assert live.time_base.source == one.time_base.source
    assert np.array_equal(live.time_base.seconds, one.time_base.seconds)


def test_a_damaged_chunk_keeps_what_came_before_and_reports_where(stream: bytes) -> None:
    cuts = _frame_cuts(stream)
    damage_at = cuts[40] + 1  # inside frame 40, after its START_FRAME: an unknown command code
    bad = bytearray(stream[: cuts[60]])
    t = tokenize(np.frombuffer(bytes(bad), np.uint8))
    damage_at = int(t.offset[np.searchsorted(t.offset, damage_at)])
    bad[damage_at] = 0xEE
    live = Recording.stream("damaged")
    for piece in _pieces(bytes(bad), cuts[:60]):
        live.feed(piece)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PvdWarning)
        one = Recording.open(bytes(bad))
    assert live.error is not None and f"offset {damage_at}" in live.error
    assert one.error is not None and f"offset {damage_at}" in one.error
    assert len(live.frames) == len(one.frames) == 41
    last = len(one.frames) - 1
    for a, b in zip(live.objects, one.objects, strict=True):
        assert _same(live.state_at(a, last), one.state_at(b, last))
    assert live.feed(stream[cuts[60] : cuts[61]]) is None and len(live.frames) == 41  # the rest is ignored
    assert live.finish() == live.error and live.incomplete is None


def test_a_snapshot_does_not_change_with_later_chunks(stream: bytes) -> None:
    cuts = _frame_cuts(stream)
    live = Recording.stream()
    live.feed(stream[: cuts[30]])
    snap = live.snapshot()
    index, attribute = _busiest_series(snap, 1)[0]
    before = snap.series(snap.objects[index], attribute)
    frames, destroyed = len(snap.frames), [o.destroyed for o in snap.objects]
    live.feed(stream[cuts[30] :])
    again = snap.series(snap.objects[index], attribute)
    assert len(snap.frames) == frames and [o.destroyed for o in snap.objects] == destroyed
    assert np.array_equal(again.frames, before.frames) and _same(again.raw, before.raw)
    grown = live.series(live.objects[index], attribute)
    assert len(grown) > len(before)  # while the live model grew


def test_chunks_parsed_elsewhere_grow_the_model_like_bytes(stream: bytes) -> None:
    cuts = _frame_cuts(stream)[:80]
    parser = StreamParser()
    by_chunk, by_bytes = Recording.stream(), Recording.stream()
    for piece in _pieces(stream[: cuts[-1]], cuts[:-1]):
        chunk = parser.feed(piece)
        if chunk is not None:
            by_chunk.append(chunk)
        by_bytes.feed(piece)
    assert len(by_chunk.frames) == len(by_bytes.frames) == 79
    last = len(by_bytes.frames) - 1
    for a, b in zip(by_chunk.objects, by_bytes.objects, strict=True):
        assert _same(by_chunk.state_at(a, last), by_bytes.state_at(b, last))


def test_a_stream_cut_inside_a_command_says_so_and_a_foreign_header_raises(stream: bytes) -> None:
    cuts = _frame_cuts(stream)
    live = Recording.stream("cut")
    live.feed(stream[: cuts[10] + 5])
    reason = live.finish()
    assert reason is not None and f"byte offset {cuts[10]}" in reason and live.incomplete == reason
    assert len(live.frames) == 10
    with pytest.raises(PvdError):
        Recording.stream("web").feed(b"GET / HTTP/1.1\r\n\r\n")


def test_a_sender_killed_between_two_commands_is_not_a_clean_end(stream: bytes, tmp_path) -> None:
    """PhysX ends its recording inside an open frame holding the destroys of every object; a
    PhysX killed mid-frame leaves an open frame of other commands, which looked like a clean
    end (exit 0, complete = true: 3 of 7 kills in a live audit). A stream cut after a frame's
    STOP_FRAME cannot be told from a producer that stops there, and stays complete."""
    from pvdkit.live import LiveRecorder

    t = tokenize(np.frombuffer(stream, np.uint8))
    ends = t.end.astype(int)
    assert t.kind[-1] == Command.DESTROY_OBJECT  # PhysX's teardown, in its open last frame
    mid_frame = int(np.flatnonzero(t.kind == Command.SET_ATTRIBUTE)[len(t) // 2])
    after_stop = int(np.flatnonzero(t.kind == Command.STOP_FRAME)[100])
    for name, end, complete in (("whole", len(stream), True), ("mid-frame", ends[mid_frame], False),
                                ("after a frame", ends[after_stop], True)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PvdWarning)
            rec = LiveRecorder(tmp_path / f"{name}.h5")
            rec.feed(stream[:end])
            summary = rec.close()
        assert summary.complete == complete, (name, summary.reason)
        if not complete:
            assert "ended inside frame" in summary.reason and "killed or crashed" in summary.reason
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PvdWarning)
                assert Recording.open(tmp_path / f"{name}.h5").incomplete is not None


@pytest.mark.parametrize("cut", ["whole", "inside a command", "damaged"])
def test_a_live_h5_from_pieces_is_the_file_convert_makes_of_the_same_bytes(stream: bytes, tmp_path,
                                                                          cut) -> None:
    """LiveRecorder hands its parser's commands to the .h5 already tokenized (one parse for the
    file and the view): whole, cut inside a command or damaged, the file holds exactly the bytes
    received — complete commands indexed, the rest verbatim — as convert makes of them."""
    import random

    from pvdkit.h5 import h5_to_ovd_bytes
    from pvdkit.live import LiveRecorder

    data = bytearray(stream)
    cuts = _frame_cuts(stream)
    if cut == "inside a command":
        t = tokenize(np.frombuffer(stream, np.uint8))
        row = int(np.flatnonzero(t.kind == Command.SET_ATTRIBUTE)[len(t) // 2])
        data = data[: int(t.offset[row]) + 7]
    elif cut == "damaged":
        t = tokenize(np.frombuffer(stream, np.uint8))
        data = data[: cuts[80]]
        data[int(t.offset[np.searchsorted(t.offset, cuts[50] + 1)])] = 0xEE
    data = bytes(data)
    out = tmp_path / "live.h5"
    rng = random.Random(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PvdWarning)
        rec = LiveRecorder(out, flush_interval=0.0)  # a commit at every frame end: many batches
        i = 0
        while i < len(data):
            n = rng.randint(1, 200_000)
            rec.feed(data[i : i + n])
            i += n
        summary = rec.close()
        assert h5_to_ovd_bytes(out) == data
        live, ref = Recording.open(out), Recording.open(data)
    assert len(live.frames) == len(ref.frames)
    assert (live.error is None) == (ref.error is None) == (cut == "whole")
    assert summary.complete == (cut != "inside a command")  # a damaged stream ended cleanly
    assert (summary.damage is None) == (cut != "damaged")
    last = len(ref.frames) - 1
    for a, b in zip(live.objects[:40], ref.objects[:40], strict=True):
        assert _same(live.state_at(a, last), ref.state_at(b, last))
