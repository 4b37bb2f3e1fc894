"""An index that grows as a stream arrives: :class:`GrowingIndex`.

Why: a live model (:class:`pvdkit.recording.LiveRecording`) must answer queries over everything
received so far while more keeps coming, and appending one frame must cost in proportion to that
frame's bytes — never a re-index of what came before. So every table is a numpy column with
spare room (capacity doubles when full: appending k rows costs O(k) amortised), the stream's
bytes are appended to one byte pool, and each sample row links back to the previous sample of
its series (``prev``), so one series is read by walking its own rows — no regrouping of all
samples when a chunk arrives (what :func:`~pvdkit.index.builder.ovd_data` does once for a
whole file). The ids (objects, paths, series) come from one :class:`IndexBuilder` fed chunk
after chunk, so they equal those of a one-shot read of the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pvdkit.index.builder import IndexBuilder, _grown, _kernels
from pvdkit.index.tables import Batch, FrameTable, ObjectTable, RecordingData, Samples, SeriesTable
from pvdkit.ovd.codec import RegisterClass, Version
from pvdkit.ovd.layout import COUNT_KEYS, payload_offsets
from pvdkit.ovd.tokenizer import CommandTable
from pvdkit.types import Command

__all__ = ["GrowingIndex"]


class _Column:
    """A 1-D column with spare room: ``extend`` costs O(appended) amortised; ``view`` is the
    filled prefix (no copy)."""

    __slots__ = ("a", "n")

    def __init__(self, dtype: type | np.dtype, capacity: int = 64) -> None:
        self.a = np.zeros(capacity, dtype)
        self.n = 0

    def extend(self, values: np.ndarray) -> None:
        need = self.n + len(values)
        if need > len(self.a):
            self.a = _grown(self.a, need)
        self.a[self.n : need] = values
        self.n = need

    def view(self) -> np.ndarray:
        return self.a[: self.n]


class GrowingIndex:
    """The index of a stream fed chunk by chunk (a :class:`~pvdkit.index.stream.Chunk`'s bytes and
    command table); :meth:`data` is the :class:`RecordingData` of everything appended so far.

    :meth:`append` costs O(chunk): the builder's pass over the chunk, appends to the columns and
    a stable sort of the chunk's samples by series. :meth:`data` costs O(1) (views of the filled
    prefixes; rows updated in place later — a destroy, a frame's stop, sample counts — show
    through); :meth:`frozen` copies the columns that later chunks update (O(objects + frames +
    series), no sample bytes) for a snapshot that never changes.
    """

    def __init__(self, source_name: str = "<stream>") -> None:
        self.source_name = source_name
        self.version: Version | None = None
        self.builder: IndexBuilder | None = None
        self.error: str | None = None
        self.n_commands = 0
        self._counts = dict.fromkeys(COUNT_KEYS, 0)
        self._bytes = _Column(np.uint8, 1 << 16)
        self.registrations: list = []
        self.messages: list = []
        self._names: list[str] = []
        self._obj = {k: _Column(t) for k, t in (
            ("handle", np.uint64), ("cls", np.uint32), ("context", np.uint64), ("created", np.int32),
            ("destroyed", np.int32), ("create_command", np.int64), ("destroy_command", np.int64))}
        self._frm = {k: _Column(t) for k, t in (
            ("context", np.uint64), ("start", np.uint64), ("stop", np.uint64), ("stopped", bool),
            ("command", np.int64))}
        self._ser = {k: _Column(t) for k, t in (
            ("object", np.int64), ("path", np.int32), ("family", np.uint8), ("context", np.uint64),
            ("count", np.int64), ("last", np.int64))}
        # One row per sample (attribute command), in stream order.
        self._smp = {k: _Column(t, 1024) for k, t in (
            ("frame", np.int32), ("kind", np.uint8), ("pos", np.int64), ("size", np.int64),
            ("prev", np.int64))}

    @property
    def paths(self) -> list[tuple[int, ...]]:
        """Attribute paths by id (the builder's list, growing)."""
        return self.builder.paths if self.builder is not None else []

    @property
    def bytes_indexed(self) -> int:
        """Stream bytes appended (the commands' bytes; the 12-byte header is not among them)."""
        return self._bytes.n

    def append(self, data: np.ndarray, table: CommandTable) -> Batch:
        """Index the commands of ``table`` (tokenized from ``data``, offsets relative to it) as
        the next piece of the stream; returns what it added (:class:`Batch`, global ids)."""
        if self.builder is None:
            self.version = table.version
            self.builder = IndexBuilder(table.version)
        batch = self.builder.feed(data, table)
        base = self._bytes.n
        self._bytes.extend(batch.buffer)
        self._append_objects(batch)
        self._append_frames(batch)
        self._append_samples(batch, table, base)
        self.registrations.extend(r for _, r in batch.registrations)
        self.messages.extend(batch.messages)
        self.n_commands += len(table)
        for k, v in table.counts().items():
            self._counts[k] += v
        return batch

    def _append_objects(self, batch: Batch) -> None:
        new = batch.objects
        for k, col in self._obj.items():
            col.extend(getattr(new, k))
        self._names.extend(new.name)
        upd = batch.destroyed_updates  # lifetimes created earlier and destroyed in this chunk
        self._obj["destroyed"].a[upd["object"]] = upd["frame"]
        self._obj["destroy_command"].a[upd["object"]] = upd["command"]

    def _append_frames(self, batch: Batch) -> None:
        for k, col in self._frm.items():
            col.extend(getattr(batch.frames, k))
        upd = batch.stop_updates  # frames started earlier and stopped in this chunk
        self._frm["stop"].a[upd["frame"]] = upd["time"]
        self._frm["stopped"].a[upd["frame"]] = True

    def _append_samples(self, batch: Batch, table: CommandTable, base: int) -> None:
        """New series, then the chunk's samples linked to the previous sample of their series."""
        s = self._ser
        for k in ("object", "path", "family", "context"):
            s[k].extend(getattr(batch.series, k))
        n_new = len(batch.series)
        s["count"].extend(np.zeros(n_new, np.int64))
        s["last"].extend(np.full(n_new, -1, np.int64))
        rows = batch.attr_rows.astype(np.int64, copy=False)
        sids = batch.attr_series.astype(np.int64, copy=False)
        k = len(rows)
        if not k:
            return
        kinds = table.kind[rows]
        g = self._smp["frame"].n + np.arange(k, dtype=np.int64)  # global sample rows
        order = np.argsort(sids, kind="stable")
        s_sorted, g_sorted = sids[order], g[order]
        head = np.ones(k, bool)
        head[1:] = s_sorted[1:] != s_sorted[:-1]
        prev_sorted = np.empty(k, np.int64)
        prev_sorted[1:] = g_sorted[:-1]
        last, count = s["last"].a, s["count"].a
        prev_sorted[head] = last[s_sorted[head]]
        prev = np.empty(k, np.int64)
        prev[order] = prev_sorted
        heads = np.flatnonzero(head)
        tails = np.append(heads[1:] - 1, k - 1)
        last[s_sorted[tails]] = g_sorted[tails]
        count[s_sorted[heads]] += tails - heads + 1
        smp = self._smp
        smp["frame"].extend(table.frame[rows])
        smp["kind"].extend(kinds)
        smp["pos"].extend(payload_offsets(kinds, table.offset[rows], table.depth[rows]) + base)
        smp["size"].extend(table.data_size[rows])
        smp["prev"].extend(prev)

    # ------------------------------------------------------------------ reading

    def samples(self, sid: int, last: np.ndarray | None = None, count: np.ndarray | None = None) -> Samples:
        """The samples of series ``sid``: its rows walked back from its last one (O(its samples)),
        payloads gathered from the byte pool. ``last`` / ``count``: a frozen snapshot's columns."""
        last = self._ser["last"].a if last is None else last
        count = self._ser["count"].a if count is None else count
        K = _kernels()
        n = int(count[sid])
        rows = K.chain_rows(self._smp["prev"].a, int(last[sid]), n) if n else np.zeros(0, np.int64)
        frames = self._smp["frame"].a[rows]
        kinds = self._smp["kind"].a[rows]
        sizes = self._smp["size"].a[rows]
        pos = self._smp["pos"].a[rows]
        ops = kinds if n and kinds[0] != Command.SET_ATTRIBUTE else None
        buf = self._bytes.a
        if n == 0 or sizes.min() == sizes.max():
            return Samples(frames, fixed=K.gather_fixed(buf, pos, int(sizes[0]) if n else 0), ops=ops)
        flat, starts = K.gather_ragged(buf, pos, sizes)
        return Samples(frames, flat=flat, offsets=starts, ops=ops)

    def counts(self) -> dict[str, int]:
        """Commands per kind so far (the keys of :data:`~pvdkit.ovd.layout.COUNT_KEYS`)."""
        return dict(self._counts)

    def data(self) -> RecordingData:
        """Everything appended so far as :class:`RecordingData` (views, O(1); see the class)."""
        o = {k: c.view() for k, c in self._obj.items()}
        f = {k: c.view() for k, c in self._frm.items()}
        s = {k: c.view() for k, c in self._ser.items()}
        return self._data(o, f, s, self._names, self.registrations, self.messages, self.paths, self.samples)

    def frozen(self) -> RecordingData:
        """Everything appended so far, unaffected by later chunks: the columns that chunks update
        in place are copied (O(objects + frames + series)); sample rows and bytes are shared, as
        later chunks only append to them."""
        o = {k: c.view().copy() for k, c in self._obj.items()}
        f = {k: c.view().copy() for k, c in self._frm.items()}
        s = {k: c.view().copy() for k, c in self._ser.items()}
        last, count = s["last"], s["count"]

        def load(sid: int) -> Samples:
            return self.samples(sid, last, count)

        return self._data(o, f, s, list(self._names), list(self.registrations), list(self.messages),
                          list(self.paths), load, dict(self._counts))

    def _data(
        self, o: dict[str, np.ndarray], f: dict[str, np.ndarray], s: dict[str, np.ndarray], names: list[str],
        registrations: list[RegisterClass], messages: list, paths: list[tuple[int, ...]],
        load: Callable[[int], Samples], counts: dict[str, int] | None = None,
    ) -> RecordingData:
        objects = ObjectTable(o["handle"], o["cls"], o["context"], names, o["created"], o["destroyed"],
                              o["create_command"], o["destroy_command"])
        frames = FrameTable(f["context"], f["start"], f["stop"], f["stopped"], f["command"])
        series = SeriesTable(s["object"], s["path"], s["family"], s["context"], s["count"])
        return RecordingData(
            version=self.version,  # type: ignore[arg-type]  # None until the header arrived
            source_name=self.source_name,
            registrations=registrations,
            objects=objects,
            frames=frames,
            messages=messages,
            paths=paths,
            series=series,
            counts=self.counts if counts is None else (lambda: dict(counts)),
            load_samples=load,
            error=self.error,
            n_commands=self.n_commands,
        )
