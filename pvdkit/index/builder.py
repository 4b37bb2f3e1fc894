"""The ``.ovd`` indexer: turns tokenized commands into index tables (:mod:`pvdkit.index.tables`).

:class:`IndexBuilder` assigns every command its object lifetime, attribute path and series
(compiled loops, hash maps in numpy arrays; :mod:`pvdkit.index.kernels`). Fed a whole stream it
indexes an ``.ovd`` file (:func:`read_ovd_data`); fed piece by piece it lets the HDF5 recorder
(:mod:`pvdkit.h5`) append batches while recording, with ids that do not depend on how the stream
was split. The compiled kernels are imported on first use, so importing this module does not
load numba.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from pvdkit.index.tables import (
    NEVER,
    Batch,
    FrameTable,
    Message,
    ObjectTable,
    RecordingData,
    Samples,
    SeriesTable,
)
from pvdkit.ovd.codec import RecordMessage, Version, decode_command_at
from pvdkit.ovd.layout import (
    ATTR_DEPTH,
    ATTR_PATH,
    CREATE_CLASS,
    CREATE_NAME,
    CREATE_NAME_LENGTH,
    PAIR_SECOND,
    payload_offsets,
)
from pvdkit.types import Command

if TYPE_CHECKING:
    from pvdkit.ovd.tokenizer import CommandTable, Scan

__all__ = ["IndexBuilder", "merge_batch_tables", "ovd_data", "read_ovd_data", "samples_from_rows"]

#: The :class:`CommandTable` columns a tokenizing pass writes, in ``empty_columns`` order.
_STORED_COLUMNS = (
    "kind", "offset", "frame", "context", "object", "attribute", "depth", "data_size", "data_type",
)


def _kernels() -> ModuleType:
    """The compiled kernels, imported on first use: numba (and its cache of machine code) is
    only loaded when an ``.ovd`` stream is indexed or samples are gathered from one."""
    from pvdkit.index import kernels

    return kernels


class _HashMap:
    """State of one compiled hash map (see ``_probe``); grows inside the kernels."""

    def __init__(self, capacity: int = 4096) -> None:
        cap = 1 << max(4, math.ceil(math.log2(max(capacity, 16))))
        self.keys = np.zeros(cap, np.uint64)
        self.vals = np.zeros(cap, np.int64)
        self.used = np.zeros(cap, np.uint8)
        self.count = 0

    def arrays(self) -> tuple:
        return self.keys, self.vals, self.used


class IndexBuilder:
    """Turns tokenized pieces of one stream into index :class:`Batch` es, keeping state between them.

    Feed it the whole stream at once (``Recording`` on an ``.ovd``) or piece after piece (the
    HDF5 recorder); ids of lifetimes, paths and series are given in order of first appearance,
    so the result does not depend on how the stream was split.
    """

    def __init__(self, version: Version) -> None:
        self.version = version
        self._life = _HashMap()
        self._path = _HashMap()
        self._series = _HashMap()
        self._deep: dict[tuple[int, ...], int] = {}
        self._deep_map = _HashMap(16)
        # Handles of every multi-handle path end to end (path i is handles[starts[i]:starts[i+1]]),
        # in arrays with spare room that double when full: one copy per path would make a
        # stream of many distinct deep paths quadratic.
        self._deep_handles = np.zeros(64, np.uint32)
        self._deep_starts = np.zeros(16, np.int64)
        self._deep_used = 0
        self.paths: list[tuple[int, ...]] = []
        self.n_rows = 0
        self.n_frames = 0
        self._s_ctx = np.zeros(1024, np.uint64)
        # Samples per series id in the batch being indexed; zero between batches (each batch
        # resets the entries it counted), so a small batch costs nothing per series of the stream.
        self._s_cnt = np.zeros(1024, np.int64)
        self.object_destroyed = np.zeros(0, np.int32)
        self._open_frame: dict[int, int] = {}

    def feed(self, buffer: np.ndarray, table: CommandTable) -> Batch:
        """Index the commands of ``table`` (tokenized from ``buffer``) as the next batch."""
        from pvdkit.ovd.tokenizer import as_byte_array

        buf = as_byte_array(buffer)
        cols = {name: getattr(table, name) for name in _STORED_COLUMNS}
        return self._index(False, buf, table, cols, 0, -1, 0)

    def feed_scan(self, scan: Scan) -> Batch:
        """Tokenize and index in one pass the commands counted by
        :func:`~pvdkit.ovd.tokenizer.count_commands` as the next batch (same result as
        ``feed(scan.data, tokenize(scan.data, …))``, without writing and re-reading the table)."""
        from pvdkit.ovd.tokenizer import empty_columns

        cols = empty_columns(scan.n)
        table = scan.table(cols)
        base_len = 8 if scan.has_base else 4
        return self._index(True, scan.data, table, cols, scan.pos, scan.start_frame, base_len)

    def _index(
        self, from_bytes: bool, buf: np.ndarray, table: CommandTable, cols: dict[str, np.ndarray],
        pos: int, fr: int, base_len: int,
    ) -> Batch:
        K = _kernels()
        n = len(table)
        row0 = self.n_rows
        attr_rows = np.empty(n, np.int32 if n < 2**31 else np.int64)
        attr_sid = np.empty(n, np.int32)
        destroy_life = np.empty(n, np.int64)
        other_rows = np.empty(n, np.int64)
        new_life_row = np.empty(n, np.int64)
        new_life_implicit = np.empty(n, np.uint8)
        new_path_key = np.empty(n, np.uint64)
        new_s_life = np.empty(n, np.int64)
        new_s_path = np.empty(n, np.int64)
        new_s_family = np.empty(n, np.uint8)
        exc_rows = np.empty(n, np.int64)
        life0, path0, series0 = self._life.count, self._path.count, self._series.count
        cnt = np.zeros(10, np.int64)
        cnt[K.C_LIFE], cnt[K.C_PATH], cnt[K.C_SERIES] = life0, path0, series0
        maps = (self._life, self._path, self._series)
        s_cnt = self._s_cnt
        columns = tuple(cols.values())
        out = (attr_rows, attr_sid, destroy_life, new_life_row, new_life_implicit, new_path_key, new_s_life,
               new_s_path, new_s_family, exc_rows, other_rows)
        r = 0
        try:
            while True:
                deep = (*self._deep_map.arrays(), self._deep_handles, self._deep_starts)
                r, pos, fr, stop = K.index_rows(
                    from_bytes, buf, base_len, pos, fr, r, n, columns, cnt, self._life.arrays(),
                    self._path.arrays(), self._series.arrays(), self._s_ctx, s_cnt, deep, out,
                )
                if stop == K.DONE:
                    break
                if stop == K.GROW_SCTX:
                    grow = max(1024, len(self._s_ctx))
                    self._s_ctx = np.concatenate([self._s_ctx, np.zeros(grow, np.uint64)])
                    s_cnt = self._s_cnt = np.concatenate([s_cnt, np.zeros(grow, np.int64)])
                elif stop == K.NEW_DEEP:
                    self._add_deep_path(buf, int(pos if from_bytes else table.offset[r]))
                else:
                    m = maps[stop - K.GROW_LIFE]
                    m.keys, m.vals, m.used = K.grow(m.keys, m.vals, m.used)
            new_counts = s_cnt[series0 : series0 + int(cnt[K.C_NEW_SERIES])].copy()
        finally:  # the counts start from zero for the next batch, whatever happened to this one
            s_cnt[attr_sid[: cnt[K.C_ATTR]]] = 0
        for m, c in zip(maps, (K.C_LIFE, K.C_PATH, K.C_SERIES), strict=True):
            m.count = int(cnt[c])
        n_life, n_path, n_series = int(cnt[K.C_NEW_LIFE]), int(cnt[K.C_NEW_PATH]), int(cnt[K.C_NEW_SERIES])
        attr_rows = attr_rows[: cnt[K.C_ATTR]]
        attr_series = attr_sid[: cnt[K.C_ATTR]]
        exc_rows = exc_rows[: cnt[K.C_EXC]]
        other_rows = other_rows[: cnt[K.C_OTHER]]
        kind = table.kind
        other_kind = kind[other_rows]

        # Paths first seen here.
        new_paths = []
        inv_deep = {v: k for k, v in self._deep.items()} if n_path else {}
        for key in new_path_key[:n_path]:
            key = int(key)
            new_paths.append(inv_deep[key & 0xFFFFFFFF] if key & (1 << 32) else (key,))
        self.paths.extend(new_paths)

        frame = table.frame
        # Objects (lifetimes) first seen here.
        objects = self._new_objects(buf, table, new_life_row[:n_life], new_life_implicit[:n_life], row0)
        self.object_destroyed = np.concatenate([self.object_destroyed, objects.destroyed])

        # Destroys.
        d_rows = other_rows[other_kind == Command.DESTROY_OBJECT]
        d_obj = destroy_life[: cnt[K.C_DESTROY]]
        destroys = {
            "context": table.context[d_rows].copy(),
            "handle": table.object[d_rows].copy(),
            "object": d_obj,
            "command": d_rows + row0,
            "frame": frame[d_rows].astype(np.int32),
        }
        upd_obj, upd_frame, upd_cmd = [], [], []
        for j in range(len(d_rows)):
            o = int(d_obj[j])
            if o >= 0 and self.object_destroyed[o] == NEVER:
                self.object_destroyed[o] = frame[d_rows[j]]
                upd_obj.append(o)
                upd_frame.append(int(frame[d_rows[j]]))
                upd_cmd.append(int(d_rows[j]) + row0)
        upd = {
            "object": np.asarray(upd_obj, np.int64),
            "frame": np.asarray(upd_frame, np.int32),
            "command": np.asarray(upd_cmd, np.int64),
        }
        for o, f, c in zip(upd["object"], upd["frame"], upd["command"], strict=True):
            if o >= life0:
                objects.destroyed[o - life0] = f
                objects.destroy_command[o - life0] = c

        fr_rows = other_rows[(other_kind == Command.START_FRAME) | (other_kind == Command.STOP_FRAME)]
        frames, stops, stop_updates, frame0 = self._frames(buf, table, fr_rows, row0)

        # Registrations and messages: few, decoded one by one.
        registrations = []
        reg_rows = other_rows[other_kind <= Command.REGISTER_UNIQUE_LIST_ATTRIBUTE]
        for r in reg_rows:
            cmd, _ = decode_command_at(buf, int(table.offset[r]), self.version, table.source_name)
            registrations.append((int(r) + row0, cmd))
        messages = []
        for r in other_rows[other_kind == Command.RECORD_MESSAGE]:
            m, _ = decode_command_at(buf, int(table.offset[r]), self.version, table.source_name)
            assert isinstance(m, RecordMessage)
            messages.append(
                Message(
                    m.context, m.message, m.file, m.line, m.type, m.class_handle, int(frame[r]), int(r) + row0
                )
            )

        # Series.
        total_series = series0 + n_series
        series = SeriesTable(
            new_s_life[:n_series].copy(),
            new_s_path[:n_series].astype(np.int32),
            new_s_family[:n_series].copy(),
            self._s_ctx[series0:total_series].copy(),
            new_counts,
        )
        context_exceptions = ((exc_rows + row0).astype(np.int64), table.context[exc_rows].copy())

        self.n_rows += n
        return Batch(
            row0=row0,
            buffer=buf,
            table=table,
            registrations=registrations,
            objects=objects,
            object0=life0,
            destroys=destroys,
            destroyed_updates=upd,
            frames=frames,
            frame0=frame0,
            stops=stops,
            stop_updates=stop_updates,
            messages=messages,
            paths=new_paths,
            path0=path0,
            series=series,
            series0=series0,
            attr_rows=attr_rows,
            attr_series=attr_series,
            context_exceptions=context_exceptions,
        )

    def _add_deep_path(self, buf: np.ndarray, at: int) -> None:
        """Register the multi-handle path of the attribute command at byte ``at`` (a class
        attribute's member) with the compiled path map, giving it the next path id."""
        d = int(buf[at + ATTR_DEPTH])
        q = at + ATTR_PATH
        path = tuple(int(h) for h in buf[q : q + 4 * d].copy().view("<u4"))
        pid = self._deep.setdefault(path, len(self._deep))
        used = self._deep_used + d
        if used > len(self._deep_handles):
            self._deep_handles = _grown(self._deep_handles, used)
        self._deep_handles[self._deep_used : used] = path
        self._deep_used = used
        if pid + 2 > len(self._deep_starts):
            self._deep_starts = _grown(self._deep_starts, pid + 2)
        self._deep_starts[pid + 1] = used
        K = _kernels()
        m = self._deep_map
        if 2 * (m.count + 1) > len(m.keys):
            old = m.arrays()
            m.keys, m.vals, m.used = (np.zeros(2 * len(a), a.dtype) for a in old)
            for k, v in zip(old[0][old[2] == 1], old[1][old[2] == 1], strict=True):
                K.deep_add(m.keys, m.vals, m.used, k, v)
        K.deep_add(m.keys, m.vals, m.used, np.uint64(K.deep_hash_at(buf, q, d)), pid)
        m.count += 1

    def _new_objects(
        self, buf: np.ndarray, table: CommandTable, rows: np.ndarray, implicit: np.ndarray, row0: int
    ) -> ObjectTable:
        n = len(rows)
        created = table.frame[rows].astype(np.int32)
        cls = np.zeros(n, np.uint32)
        names = [""] * n
        explicit = np.flatnonzero(implicit == 0)
        if len(explicit):
            offs = table.offset[rows[explicit]]
            cls[explicit] = buf[offs[:, None] + CREATE_CLASS + np.arange(4)].copy().view("<u4").reshape(-1)
            lens = buf[offs[:, None] + CREATE_NAME_LENGTH + np.arange(2)].copy().view("<u2").reshape(-1)
            for j, o, ln in zip(explicit.tolist(), offs.tolist(), lens.tolist(), strict=True):
                if ln:
                    raw = bytes(buf[o + CREATE_NAME : o + CREATE_NAME + ln])
                    names[j] = raw.decode("utf-8", "surrogateescape")
        return ObjectTable(
            handle=table.object[rows].copy(),
            cls=cls,
            context=table.context[rows].copy(),
            name=names,
            created=created,
            destroyed=np.full(n, NEVER, np.int32),
            create_command=np.where(implicit == 0, rows + row0, -1).astype(np.int64),
            destroy_command=np.full(n, -1, np.int64),
        )

    def _frames(self, buf: np.ndarray, table: CommandTable, fr_rows: np.ndarray, row0: int):
        kind = table.kind
        is_start = kind[fr_rows] == Command.START_FRAME
        starts = fr_rows[is_start]
        st_rows = fr_rows[~is_start]
        at = table.offset[fr_rows][:, None] + PAIR_SECOND
        times = buf[at + np.arange(8)].copy().view("<u8").reshape(-1)
        frame0 = self.n_frames
        nf = len(starts)
        frames = FrameTable(
            table.context[starts].copy(),
            times[is_start],
            np.zeros(nf, np.uint64),
            np.zeros(nf, bool),
            starts + row0,
        )
        stop_times = times[~is_start]
        stop_ctx = table.context[st_rows]
        # A STOP_FRAME closes the latest START_FRAME of its context unless a STOP of that context
        # came in between (then it closes nothing); the open frame of each context carries over.
        # With the frame commands grouped by context (stream order kept within a context), a
        # STOP closes a frame exactly when the command before it in its group is a START — one
        # sort, whatever the number of contexts.
        ctx = table.context[fr_rows]
        order = np.argsort(ctx, kind="stable")
        c_s, start_s = ctx[order], is_start[order]
        event_frame = np.full(len(fr_rows), -1, np.int64)
        event_frame[is_start] = frame0 + np.arange(nf)
        f_s = event_frame[order]
        first = np.ones(len(order), bool)
        first[1:] = c_s[1:] != c_s[:-1]
        closed_s = np.full(len(order), -1, np.int64)
        after_start = ~start_s[1:] & start_s[:-1] & ~first[1:]
        closed_s[1:][after_start] = f_s[:-1][after_start]
        heads = np.flatnonzero(first)
        head_ctx = c_s[heads].tolist()
        carried = np.array([self._open_frame.pop(c, -1) for c in head_ctx], np.int64)
        resumed = ~start_s[heads] & (carried >= 0)  # a group opening with a STOP closes the carried frame
        closed_s[heads[resumed]] = carried[resumed]
        tails = np.append(heads[1:] - 1, len(order) - 1) if len(heads) else heads
        still_open = tails[start_s[tails]]  # a group ending with a START leaves that frame open
        self._open_frame.update(zip(c_s[still_open].tolist(), f_s[still_open].tolist(), strict=True))
        closed = np.empty(len(order), np.int64)
        closed[order] = closed_s
        stop_frame = closed[~is_start]
        self.n_frames += nf
        mine = stop_frame >= frame0
        frames.stop[stop_frame[mine] - frame0] = stop_times[mine]
        frames.stopped[stop_frame[mine] - frame0] = True
        earlier = (stop_frame >= 0) & ~mine
        stop_updates = {"frame": stop_frame[earlier], "time": stop_times[earlier]}
        stops = {
            "context": stop_ctx.copy(),
            "time": stop_times,
            "frame": stop_frame.astype(np.int32),
            "command": st_rows + row0,
        }
        return frames, stops, stop_updates, frame0


def _grown(a: np.ndarray, need: int) -> np.ndarray:
    """``a`` copied into an array of at least ``need`` elements (doubling, zeros after)."""
    out = np.zeros(max(need, 2 * len(a)), a.dtype)
    out[: len(a)] = a
    return out


def merge_batch_tables(batches: Sequence[Batch]) -> tuple[ObjectTable, FrameTable, SeriesTable]:
    """Objects, frames and series of consecutive batches as whole tables (updates applied)."""
    objs = ObjectTable.empty()
    parts_o = [b.objects for b in batches]
    if parts_o:
        objs = ObjectTable(
            np.concatenate([p.handle for p in parts_o]),
            np.concatenate([p.cls for p in parts_o]),
            np.concatenate([p.context for p in parts_o]),
            [n for p in parts_o for n in p.name],
            np.concatenate([p.created for p in parts_o]),
            np.concatenate([p.destroyed for p in parts_o]),
            np.concatenate([p.create_command for p in parts_o]),
            np.concatenate([p.destroy_command for p in parts_o]),
        )
    for b in batches:
        u = b.destroyed_updates
        objs.destroyed[u["object"]] = u["frame"]
        objs.destroy_command[u["object"]] = u["command"]
    frames = FrameTable(
        *(
            np.concatenate([getattr(b.frames, f) for b in batches])
            for f in ("context", "start", "stop", "stopped", "command")
        )
    )
    for b in batches:
        frames.stop[b.stop_updates["frame"]] = b.stop_updates["time"]
        frames.stopped[b.stop_updates["frame"]] = True
    series = SeriesTable(
        *(
            np.concatenate([getattr(b.series, f) for b in batches])
            for f in ("object", "path", "family", "context", "count")
        )
    )
    for b in batches:  # samples a batch added to series that earlier batches started
        series.count[: b.series0] += b.series_counts[: b.series0]
    return objs, frames, series


# ============================================================================================
# .ovd source
# ============================================================================================


def ovd_data(buffer: np.ndarray, table: CommandTable) -> RecordingData:
    """Index a tokenized ``.ovd`` stream into :class:`RecordingData` (samples stay in ``buffer``).

    Rows are grouped by series (a counting sort) on the first sample request, so opening a file
    costs only the tokenizer and the index pass.
    """
    builder = IndexBuilder(table.version)
    return _batch_data(builder, builder.feed(buffer, table))


def read_ovd_data(buffer, *, source_name: str = "<memory>", use_cache: bool = True) -> RecordingData:
    """Tokenize and index a whole ``.ovd`` stream (bytes-like or uint8 array) into
    :class:`RecordingData`: the same result as ``ovd_data(buffer, tokenize(buffer))``, but the
    table is filled by the index pass itself (one pass over the bytes after the counting pass).
    Damage is reported in ``error`` (no warning); a bad header raises :class:`PvdError`.

    When ``source_name`` is the path of the file the bytes are (``Recording.open``), the index
    is kept in the user's cache (:mod:`pvdkit.index.cache`) and read from there the next time
    the same bytes are opened — without parsing and without numba; ``use_cache=False`` parses.
    """
    from pvdkit.ovd.tokenizer import as_byte_array, count_commands

    buf = as_byte_array(buffer)
    entry = None
    if use_cache:
        from pvdkit.index import cache

        entry = cache.entry_path(source_name, len(buf))
        if entry is not None:
            cached = cache.load(entry, buf, source_name)
            if cached is not None:
                return cached
    _notice_compile()
    scan = count_commands(buf, source_name=source_name)
    builder = IndexBuilder(scan.version)
    batch = builder.feed_scan(scan)
    if entry is None:
        return _batch_data(builder, batch)
    grouped = _kernels().group_rows(batch.attr_series, batch.attr_rows, len(batch.series))
    data = _batch_data(builder, batch, grouped)
    cache.store(entry, scan, batch, data, grouped)
    return data


#: Seconds to compile the tokenizer's and the index's kernels on a 2-core x86-64 (a cold
#: ``pvdkit info``: ``bench/bench_start.py``).
COMPILE_SECONDS = 5.0


def _notice_compile() -> None:
    """The first-run message of a command line (:func:`pvdkit.jit.notice_if_cold`), if the
    kernels about to index a stream are not compiled yet."""
    from pvdkit import jit

    if jit.notices_enabled():
        from pvdkit.ovd import kernels as ovd_kernels

        K = _kernels()
        jit.notice_if_cold((ovd_kernels.scan, K.index_rows, K.group_rows), COMPILE_SECONDS)


def _batch_data(builder: IndexBuilder, batch: Batch,
                grouping: tuple[np.ndarray, np.ndarray] | None = None) -> RecordingData:
    table = batch.table
    objects, frames, series = merge_batch_tables([batch])
    buf = batch.buffer
    grouped: list[tuple[np.ndarray, np.ndarray]] = [] if grouping is None else [grouping]
    bulk: list[tuple] = []

    def load(sid: int) -> Samples:
        if bulk:
            return _bulk_samples(bulk[0], sid)
        if not grouped:
            grouped.append(_kernels().group_rows(batch.attr_series, batch.attr_rows, len(series)))
        rows, starts = grouped[0]
        return samples_from_rows(buf, table, rows[starts[sid] : starts[sid + 1]])

    def preload(other: RecordingData | None = None) -> None:
        if not bulk:
            bulk.append(_kernels().gather_all(
                buf, batch.attr_rows, batch.attr_series, len(series), table.kind, table.offset,
                table.depth, table.data_size, table.frame,
            ))

    return RecordingData(
        version=table.version,
        source_name=table.source_name,
        registrations=[r for _, r in batch.registrations],
        objects=objects,
        frames=frames,
        messages=batch.messages,
        paths=list(builder.paths),
        series=series,
        counts=table.counts,
        load_samples=load,
        error=table.error,
        n_commands=len(table),
        preload=preload,
    )


def _bulk_samples(bulk: tuple, sid: int) -> Samples:
    """Samples of series ``sid`` as views into the result of ``gather_all`` (same content as
    :func:`samples_from_rows` on the series' rows)."""
    frames, ops, flat, sample_start, row_starts, byte_starts, smin, smax = bulk
    r0, r1 = int(row_starts[sid]), int(row_starts[sid + 1])
    b0, b1 = int(byte_starts[sid]), int(byte_starts[sid + 1])
    n = r1 - r0
    op = ops[r0:r1].copy() if n and ops[r0] != Command.SET_ATTRIBUTE else None
    if n == 0:
        return Samples(frames[r0:r1], fixed=np.zeros((0, 0), np.uint8), ops=op)
    if smin[sid] == smax[sid]:
        return Samples(frames[r0:r1], fixed=flat[b0:b1].reshape(n, int(smax[sid])), ops=op)
    offsets = np.empty(n + 1, np.int64)
    offsets[:n] = sample_start[r0:r1] - b0
    offsets[n] = b1 - b0
    return Samples(frames[r0:r1], flat=flat[b0:b1], offsets=offsets, ops=op)


def samples_from_rows(buf: np.ndarray, table: CommandTable, rows: np.ndarray) -> Samples:
    """Samples of the attribute commands ``rows`` (all of one series) read from the stream bytes."""
    K = _kernels()
    kinds = table.kind[rows]
    offs = payload_offsets(kinds, table.offset[rows], table.depth[rows])
    sizes = table.data_size[rows]
    frames = table.frame[rows].astype(np.int32, copy=False)
    ops = kinds.copy() if len(kinds) and kinds[0] != Command.SET_ATTRIBUTE else None
    if len(rows) == 0 or sizes.min() == sizes.max():
        size = int(sizes[0]) if len(rows) else 0
        return Samples(frames, fixed=K.gather_fixed(buf, offs, size), ops=ops)
    flat, starts = K.gather_ragged(buf, offs, sizes.astype(np.int64))
    return Samples(frames, flat=flat, offsets=starts, ops=ops)
