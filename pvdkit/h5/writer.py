"""Write HDF5 recordings: append index batches (:class:`H5Writer`), crash-safe when asked.

Why a module of its own: the writer owns durability — commits that bound what a reader of an
interrupted file trusts, SWMR mode and copy-and-rename for the changes SWMR cannot make safely,
and letting go of a file that cannot be flushed (a full disk). The layout it writes is
:mod:`pvdkit.h5.layout` (``docs/recording-format.md``).
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType

import h5py
import numpy as np

from pvdkit.h5.chunks import DirectChunks
from pvdkit.h5.layout import (
    _BYTES,
    _COMMITTED_TABLES,
    _DT_CODE,
    _STORAGE,
    _STORAGE_DTYPE,
    _UINT_BY_SIZE,
    ATTRIBUTE_DTYPE,
    CLASS_DTYPE,
    COMMIT_DTYPE,
    DESTROY_DTYPE,
    EXCEPTION_DTYPE,
    FORMAT_NAME,
    FORMAT_VERSION,
    FRAME_DTYPE,
    MESSAGE_DTYPE,
    OBJECT_DTYPE,
    PATH_DTYPE,
    SEGMENT_DTYPE,
    SERIES_DTYPE,
    STOP_DTYPE,
    Progress,
    _counts_from,
    _enc,
    pool_name,
)
from pvdkit.index.builder import IndexBuilder
from pvdkit.index.tables import FAMILY_LIST, AttributeRegistration, Batch, Message
from pvdkit.outputs import free_bytes, temp_file_beside
from pvdkit.ovd.codec import (
    RegisterClass,
    RegisterClassAttribute,
    RegisterEnumValue,
    RegisterFlagsAttribute,
    RegisterUniqueListAttribute,
    Version,
)
from pvdkit.ovd.layout import NO_DATA_TYPE
from pvdkit.types import Command, DataType, PvdError

__all__ = ["H5Writer", "NoRoom", "PreparedFrame", "PreparedLayout", "is_io_error", "write_h5"]


def _kernels() -> ModuleType:
    """The index's compiled kernels (grouping, gathers), imported on first use: numba is loaded
    only when a recording is written."""
    from pvdkit.index import kernels

    return kernels


#: HDF5 format bounds of a crash-safe (SWMR) recording: readable by every HDF5 since 1.10.
_SWMR_LIBVER = ("v110", "v110")
_WRITE_SLICE = 1 << 20  # samples gathered and written per h5py call
_LAYOUT_PLANS = 8  # prepared layouts whose plans are kept (a recorder writes one to three blocks)


class H5Writer:
    """Appends index :class:`~pvdkit.index.tables.Batch` es to an HDF5 recording.

    One ``append`` call writes a whole batch with a handful of h5py calls per table and pool
    (never one per command). ``commit()`` makes everything appended so far durable: it flushes
    the file, then appends one row to ``/log/commits`` holding every table's length and flushes
    again, so a reader of an interrupted file trusts exactly the rows of the last commit.
    ``close()`` stores the damaged tail, if any, the command counts and ``complete``.

    ``crash_safe=True`` (for recordings written while a program runs) keeps the file readable at
    every instant, whatever kills the writer: the file is written in HDF5's single-writer /
    multiple-reader (SWMR) mode, whose ordered metadata writes keep the structure consistent,
    and every change SWMR cannot make safely (creating datasets, writing string attributes) is
    made on a copy that is then renamed over the file (atomic). See ``docs/recording-format.md``.

    ``direct_chunks=True`` (with gzip): every dataset of numbers — the pools, the command log,
    the numeric tables — is compressed by ISA-L and written as whole chunks
    (:class:`~pvdkit.h5.chunks.DirectChunks`), about seven times faster than HDF5's own deflate;
    the file reads the same everywhere.
    """

    def __init__(
        self,
        target: str | os.PathLike,
        version: Version,
        *,
        source_name: str = "",
        compression: str | None = "gzip",
        compression_opts: int | None = 4,
        crash_safe: bool = False,
        direct_chunks: bool = False,
    ) -> None:
        self.path = os.fspath(target)
        self.crash_safe = crash_safe
        self.version = tuple(version)
        self._comp = (
            dict(compression=compression, compression_opts=compression_opts, shuffle=compression is not None)
            if compression
            else {}
        )
        # Datasets of numbers written as whole chunks deflated by ISA-L (see pvdkit.h5.chunks).
        self._chunks = DirectChunks(compression_opts) if direct_chunks and compression == "gzip" else None
        self._pools: dict[tuple[int, int, int], int] = {}
        # id(layout) -> (layout, series count, its one-frame plan or None): see _layout_plan.
        self._layout_plans: dict[int, tuple[PreparedLayout, int, _LayoutPlan | None]] = {}
        self._pool_names: list[str] = []
        self._tables: dict[str, h5py.Dataset] = {}
        # Each pool's datasets, held open: a dataset handle closed mid-write flushes its chunk
        # cache, and a failure there (full disk) could not be caught.
        self._pool_datasets: list[dict[str, h5py.Dataset]] = []
        # What storage each path needs: attribute handle -> (kind, dtype code), and names.
        self._attr_info: dict[int, tuple[str, int]] = {}
        self._names: dict[int, str] = {}
        self._path_handles: list[tuple[int, ...]] = []
        self._series_family = np.zeros(0, np.uint8)
        self._series_path = np.zeros(0, np.int32)
        self._counts = np.zeros(int(Command.RECORD_MESSAGE) + 1, np.int64)
        self._reg_counts = {"register_attribute": 0, "register_enum": 0, "register_flags": 0}
        self.n_commands = 0
        self.commits = 0
        self.closed = False
        self._detached = False
        self._in_copy = False  # inside _on_copy's change: further changes go to the same copy
        self.file: h5py.File | None = None
        tmp = temp_file_beside(self.path) if crash_safe else self.path
        try:
            self.file = h5py.File(tmp, "w", libver=_SWMR_LIBVER if crash_safe else ("v108", "latest"))
            self._create_skeleton(source_name)
            if crash_safe:
                self.commit()
                self.file.close()
                os.replace(tmp, self.path)
                self._open_swmr()
        except OSError as exc:
            self._abandon(tmp)
            raise PvdError(f"cannot create {self.path}: {_os_reason(exc)}") from None

    # ------------------------------------------------------------------ file lifecycle

    def _create_skeleton(self, source_name: str) -> None:
        f = self.file
        f.attrs["format"] = FORMAT_NAME
        f.attrs["format_version"] = FORMAT_VERSION
        f.attrs["ovd_version"] = np.asarray(self.version, np.uint32)
        f.attrs["source"] = source_name
        f.attrs["error"] = ""
        f.attrs["interrupted"] = ""
        f.attrs["complete"] = False
        for name, dtype in (
            ("registry/classes", CLASS_DTYPE),
            ("registry/attributes", ATTRIBUTE_DTYPE),
            ("objects", OBJECT_DTYPE),
            ("destroys", DESTROY_DTYPE),
            ("frames", FRAME_DTYPE),
            ("frame_stops", STOP_DTYPE),
            ("messages", MESSAGE_DTYPE),
            ("paths", PATH_DTYPE),
            ("series", SERIES_DTYPE),
            ("segments", SEGMENT_DTYPE),
            ("log/context_exceptions", EXCEPTION_DTYPE),
            ("log/commits", COMMIT_DTYPE),
        ):
            self._dataset(name, dtype, (0,), chunk_bytes=1 << 14)
        self._dataset("log/kind", np.dtype("u1"), (0,), chunk_bytes=1 << 17)
        self._dataset("log/series", np.dtype("<i4"), (0,), chunk_bytes=1 << 17)
        f.create_group("pools").attrs["order"] = "[]"
        self._bind()

    def _bind(self) -> None:
        """(Re)take the dataset handles after the file was (re)opened."""
        f = self.file
        self._tables = {name: f[name] for name in (*_COMMITTED_TABLES, "log/commits")}
        self._pool_datasets = [dict(f["pools"][name].items()) for name in self._pool_names]

    def _open_swmr(self) -> None:
        self.file = h5py.File(self.path, "r+", libver=_SWMR_LIBVER)
        self.file.swmr_mode = True
        self._bind()

    def _room_to_copy(self) -> bool:
        free = free_bytes(self.path)
        return free is None or free >= 1.1 * os.path.getsize(self.path) + (1 << 20)

    def _on_copy(self, change: Callable[[], None], *, reopen: bool = True) -> None:
        """Make a structural change: in place, or (crash-safe) on a copy renamed over the file.

        Without room for the copy the change is not made (:class:`NoRoom`): changing the file
        in place outside SWMR mode is what a kill or a full disk could leave half done.
        ``reopen=False``: the file stays closed afterwards (the change was the last one).
        """
        if not self.crash_safe or self._in_copy:
            change()
            return
        if not self._room_to_copy():
            raise NoRoom(errno.ENOSPC, "No space left on device (no room to copy the file)")
        self.file.close()
        tmp = temp_file_beside(self.path)
        try:
            shutil.copyfile(self.path, tmp)
            self.file = h5py.File(tmp, "r+", libver=_SWMR_LIBVER)
            self._bind()
            self._in_copy = True
            try:
                change()
            finally:
                self._in_copy = False
            self.file.close()
            os.replace(tmp, self.path)
        except BaseException:
            self._abandon(tmp)
            raise
        if reopen:
            self._open_swmr()

    def _abandon(self, tmp: str) -> None:
        try:
            if self.file is not None:
                self.file.close()
        except Exception:  # noqa: BLE001 - the file is already failing; the original error is raised
            pass
        if tmp != self.path and os.path.exists(tmp):
            os.remove(tmp)

    # ------------------------------------------------------------------ helpers

    def _dataset(
        self, name: str, dtype: np.dtype, shape: tuple[int, ...], *, chunk_bytes: int, group=None
    ) -> h5py.Dataset:
        row = max(dtype.itemsize * int(np.prod(shape[1:], dtype=np.int64)), 1)
        chunk = (max(64, chunk_bytes // row), *shape[1:])
        return (group if group is not None else self.file).create_dataset(
            name, shape=shape, maxshape=(None, *shape[1:]), dtype=dtype, chunks=chunk, **self._comp
        )

    def _update(self, ds: h5py.Dataset, where: int | slice | np.ndarray, rows: np.ndarray) -> None:
        """Change rows already appended (a frame's stop, an object's end), in place."""
        ds[where] = rows
        if self._chunks is not None:
            self._chunks.forget(ds)

    def _append(self, ds: h5py.Dataset, rows: np.ndarray) -> int:
        if self._chunks is not None and self._chunks.takes(ds):
            return self._chunks.append(ds, rows)
        n0 = ds.shape[0]
        if len(rows):
            ds.resize(n0 + len(rows), axis=0)
            ds[n0 : n0 + len(rows)] = rows
        return n0

    # ------------------------------------------------------------------ batches

    def append(self, batch: Batch, progress: Progress | None = None) -> None:
        """Write one batch (see :class:`~pvdkit.index.tables.Batch`); durable after :meth:`commit`."""
        self.append_parts([batch], progress)

    def append_parts(self, parts: Sequence[Batch | PreparedFrame], progress: Progress | None = None) -> None:
        """Write consecutive pieces of a stream as one batch: the file is exactly what
        :meth:`append` writes for one batch of all their commands (one segment per series).

        Why: a recorder's frames are mostly writes of a prepared block whose layout never
        changes (:class:`PreparedFrame`: payloads only, no indexing); the commands around them
        are indexed as usual (:class:`~pvdkit.index.tables.Batch`). Parts must follow each other
        in the stream (``row0`` consecutive).
        """
        if self.closed:
            raise PvdError(f"{self.path}: append after the recording was closed")
        with self._detached_on_io_error():
            self._append_parts(list(parts), progress)

    def _append_parts(self, parts: list[Batch | PreparedFrame], progress: Progress | None) -> None:
        batches = [p for p in parts if isinstance(p, Batch)]
        regs = [self._registrations(b.registrations) for b in batches]
        path_rows = _cat([self._paths(b.paths) for b in batches], PATH_DTYPE)
        if any(len(b.series) for b in batches):
            self._series_family = np.concatenate([self._series_family, *(b.series.family for b in batches)])
            self._series_path = np.concatenate([self._series_path, *(b.series.path for b in batches)])
        n_series = len(self._series_family)
        # A block's frames laid out once for all of them; the rest sample by sample.
        run = _PreparedRun.of(parts, lambda layout: self._layout_plan(layout, n_series))
        source = _sample_source(batches if run is not None else parts)
        plan = self._plan_samples(source, n_series)
        keys = sorted(set(plan.keys) | (set(run.plan.keys) if run is not None else set()))
        new_pools = [k for k in keys if k not in self._pools]
        if new_pools:  # every dataset the batch needs exists before anything of it is written
            self._on_copy(lambda: self._create_pools(new_pools))
        self._append(self._tables["registry/classes"], _cat([r[0] for r in regs], CLASS_DTYPE))
        self._append(self._tables["registry/attributes"], _cat([r[1] for r in regs], ATTRIBUTE_DTYPE))
        self._objects(batches)
        self._frames(batches)
        self._messages([m for b in batches for m in b.messages])
        self._append(self._tables["paths"], path_rows)
        series = []
        for b in batches:
            s = b.series
            rows = np.zeros(len(s), SERIES_DTYPE)
            rows["object"], rows["path"], rows["family"] = s.object, s.path, s.family
            rows["context"] = s.context
            series.append(rows)
        self._append(self._tables["series"], _cat(series, SERIES_DTYPE))
        self._samples(source, plan, progress, run)
        kinds, sers, excs = [], [], []
        counts = np.zeros(len(self._counts), np.int64)
        for p in parts:
            if isinstance(p, Batch):
                kind = p.table.kind
                ser = np.full(len(kind), -1, np.int32)
                ser[p.attr_rows] = p.attr_series
                cmd, ctx = p.context_exceptions
                exc = np.zeros(len(cmd), EXCEPTION_DTYPE)
                exc["command"], exc["context"] = cmd, ctx
                counts += np.bincount(kind, minlength=len(counts))[: len(counts)]
            else:
                lay = p.layout
                kind, ser = lay.kind, lay.log_series
                exc = np.zeros(len(lay.exceptions), EXCEPTION_DTYPE)
                exc["command"], exc["context"] = lay.exceptions + p.row0, lay.context
                counts[Command.SET_ATTRIBUTE] += len(kind)  # a block is SET_ATTRIBUTE commands only
            kinds.append(kind)
            sers.append(ser)
            excs.append(exc)
        kind = _cat(kinds, np.dtype("u1"))
        self._append(self._tables["log/kind"], kind)
        self._append(self._tables["log/series"], _cat(sers, np.dtype("<i4")))
        self._append(self._tables["log/context_exceptions"], _cat(excs, EXCEPTION_DTYPE))
        self._counts += counts
        self.n_commands += len(kind)

    def _registrations(
        self, regs: Sequence[tuple[int, RegisterClass | AttributeRegistration]]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The registry rows of a batch; notes each attribute's storage for the pools."""
        classes, attrs = [], []
        for index, r in regs:
            if isinstance(r, RegisterClass):
                classes.append((r.class_handle, r.base_class, _enc(r.name), index))
                continue
            if isinstance(r, RegisterEnumValue):
                cmd, dt = Command.REGISTER_ATTRIBUTE, DataType.ENUM_VALUE
                row = (cmd, r.class_handle, r.attribute_handle, dt, r.value)
                self._reg_counts["register_enum"] += 1
            elif isinstance(r, RegisterFlagsAttribute):
                row = (
                    Command.REGISTER_ATTRIBUTE,
                    r.class_handle,
                    r.attribute_handle,
                    DataType.FLAGS_WORD,
                    r.enum_class_handle,
                )
                self._attr_info[r.attribute_handle] = ("flags", -1)
                self._reg_counts["register_flags"] += 1
            elif isinstance(r, RegisterClassAttribute):
                row = (
                    Command.REGISTER_CLASS_ATTRIBUTE,
                    r.class_handle,
                    r.attribute_handle,
                    NO_DATA_TYPE,
                    r.class_attribute_handle,
                )
            elif isinstance(r, RegisterUniqueListAttribute):
                row = (
                    Command.REGISTER_UNIQUE_LIST_ATTRIBUTE, r.class_handle, r.attribute_handle, r.data_type, 0
                )
                self._attr_info[r.attribute_handle] = _value_info(r.data_type)
            else:
                row = (
                    Command.REGISTER_ATTRIBUTE, r.class_handle, r.attribute_handle, r.data_type, r.nb_elements
                )
                self._attr_info[r.attribute_handle] = _value_info(r.data_type)
                self._reg_counts["register_attribute"] += 1
            self._names[r.attribute_handle] = r.name
            attrs.append((*(int(v) for v in row), _enc(r.name), index))
        return np.array(classes, CLASS_DTYPE), np.array(attrs, ATTRIBUTE_DTYPE)

    def _objects(self, batches: Sequence[Batch]) -> None:
        ds = self._tables["objects"]
        n0 = ds.shape[0]
        parts = []
        for batch in batches:
            o = batch.objects
            rows = np.zeros(len(o), OBJECT_DTYPE)
            rows["handle"], rows["class"], rows["context"] = o.handle, o.cls, o.context
            rows["name"] = [_enc(n) for n in o.name]
            rows["created"], rows["destroyed"] = o.created, o.destroyed
            rows["create_command"], rows["destroy_command"] = o.create_command, o.destroy_command
            parts.append(rows)
        rows = _cat(parts, OBJECT_DTYPE)
        written: dict[int, tuple[int, int]] = {}  # rows of earlier batches: object → (frame, command)
        for batch in batches:
            u = batch.destroyed_updates
            for obj, frame, cmd in zip(
                u["object"].tolist(), u["frame"].tolist(), u["command"].tolist(), strict=True
            ):
                if obj >= batch.object0:  # the batch's own rows carry it already
                    continue
                if obj >= n0:  # a row of an earlier part, not written yet
                    rows[obj - n0]["destroyed"], rows[obj - n0]["destroy_command"] = frame, cmd
                else:  # an object of an earlier batch ended: its row is updated below
                    written[obj] = (frame, cmd)
        if written:  # one read and one write for them all, not two h5py calls per row
            idx = np.fromiter(sorted(written), np.int64, len(written))
            vals = np.array([written[i] for i in idx.tolist()], np.int64).reshape(-1, 2)
            lo, hi = int(idx[0]), int(idx[-1]) + 1
            dense = hi - lo <= 4 * len(idx) + 4096  # read the span; else only the rows
            got = ds[lo:hi] if dense else ds[idx]
            at = idx - lo if dense else np.arange(len(idx))
            got["destroyed"][at] = vals[:, 0]
            got["destroy_command"][at] = vals[:, 1]
            self._update(ds, slice(lo, hi) if dense else idx, got)
        self._append(ds, rows)
        destroys = []
        for batch in batches:
            d = batch.destroys
            rows = np.zeros(len(d["handle"]), DESTROY_DTYPE)
            for k in ("context", "handle", "object", "frame"):
                rows[k] = d[k]
            destroys.append(rows)
        self._append(self._tables["destroys"], _cat(destroys, DESTROY_DTYPE))

    def _frames(self, batches: Sequence[Batch]) -> None:
        ds = self._tables["frames"]
        n0 = ds.shape[0]
        parts, stops = [], []
        for batch in batches:
            fr = batch.frames
            rows = np.zeros(len(fr), FRAME_DTYPE)
            rows["context"], rows["start"], rows["stop"] = fr.context, fr.start, fr.stop
            rows["stopped"], rows["command"] = fr.stopped, fr.command
            parts.append(rows)
            st = batch.stops
            rows = np.zeros(len(st["time"]), STOP_DTYPE)
            rows["context"], rows["time"], rows["frame"] = st["context"], st["time"], st["frame"]
            stops.append(rows)
        rows = _cat(parts, FRAME_DTYPE)
        for batch in batches:
            for f, t in zip(
                batch.stop_updates["frame"].tolist(), batch.stop_updates["time"].tolist(), strict=True
            ):
                if f >= n0:  # a frame of an earlier part, not written yet
                    rows[f - n0]["stop"], rows[f - n0]["stopped"] = t, 1
                else:
                    row = ds[f]
                    row["stop"], row["stopped"] = t, 1
                    self._update(ds, f, row)
        self._append(ds, rows)
        self._append(self._tables["frame_stops"], _cat(stops, STOP_DTYPE))

    def _messages(self, messages: Sequence[Message]) -> None:
        rows = np.array(
            [
                (m.context, _enc(m.message), _enc(m.file), m.line, m.type, m.class_handle, m.frame, m.command)
                for m in messages
            ],
            MESSAGE_DTYPE,
        )
        self._append(self._tables["messages"], rows)

    def _paths(self, paths: Sequence[tuple[int, ...]]) -> np.ndarray:
        rows = np.zeros(len(paths), PATH_DTYPE)
        for i, p in enumerate(paths):
            rows[i] = (np.asarray(p, "<u4"), _enc(".".join(self._names.get(h, str(h)) for h in p)))
        self._path_handles.extend(paths)
        return rows

    # ------------------------------------------------------------------ samples

    def _layout_plan(self, layout: PreparedLayout, n_series: int) -> _LayoutPlan | None:
        """The plan of one frame of ``layout`` (None: its frames take the general path).

        Why cached: a block's frames repeat one layout commit after commit, and planning a
        fleet's frame (tens of thousands of series) holds the GIL for milliseconds that the
        stepping thread waits for. The plan changes only with the series count."""
        hit = self._layout_plans.get(id(layout))
        if hit is not None and hit[0] is layout and hit[1] == n_series:
            return hit[2]
        plan = _LayoutPlan.of(layout, lambda one: self._plan_samples(one, n_series))
        if len(self._layout_plans) >= _LAYOUT_PLANS:  # layouts learnt again after objects came
            self._layout_plans.clear()  # and went replace the old ones: keep only recent plans
        self._layout_plans[id(layout)] = (layout, n_series, plan)
        return plan

    def _plan_samples(self, src: _SampleSource, n_series: int) -> _SamplePlan:
        """Which pool (storage type) each series of the batch goes to (vectorized over series)."""
        if not len(src.rows):
            empty = np.zeros(0, np.int64)
            return _SamplePlan([], empty, empty, empty, empty, empty)
        rows, starts = _kernels().group_rows(src.series, src.rows, n_series)
        counts = np.diff(starts)
        present = np.flatnonzero(counts)
        first = starts[present]
        sizes = src.size[rows].astype(np.int64)
        smin = np.minimum.reduceat(sizes, first)
        smax = np.maximum.reduceat(sizes, first)
        # Storage per present series: (family, dtype code, k (-1 = variable)), decided per path
        # (its last attribute's registration) and the sizes written.
        upaths, pinv = np.unique(self._series_path[present], return_inverse=True)
        pkind = np.empty(len(upaths), np.int64)
        pcode = np.empty(len(upaths), np.int64)
        for j, pid in enumerate(upaths.tolist()):
            kind, code = self._attr_info.get(self._path_handles[pid][-1], ("bytes", _BYTES))
            pkind[j] = _KIND_CODE[kind]
            pcode[j] = code
        kind = pkind[pinv.reshape(-1)]
        code = pcode[pinv.reshape(-1)]
        same = smin == smax
        flags = kind == _KIND_CODE["flags"]
        if flags.any():
            by_size = np.full(len(present), _BYTES, np.int64)
            for size, c in _UINT_BY_SIZE.items():
                by_size[smin == size] = c
            code[flags] = np.where(same[flags], by_size[flags], _BYTES)
        item = _ITEMSIZE[code]
        as_bytes = (code == _BYTES) | (kind == _KIND_CODE["bytes"])
        fixed = ~as_bytes & same & (smin > 0) & (smin % item == 0)
        rest = ~as_bytes & ~fixed
        if rest.any():  # variable: every sample a whole number of elements, else raw bytes
            whole = sizes % np.repeat(item, counts[present]) == 0
            as_bytes |= rest & ~np.logical_and.reduceat(whole, first)
        codes = np.where(as_bytes, _BYTES, code)
        ks = np.where(fixed, smin // item, -1)
        fams = self._series_family[present].astype(np.int64)
        packed = (fams << 40) | (codes << 32) | (ks + 1)  # sorts as the (family, code, k) rows
        uniq, inverse = np.unique(packed, return_inverse=True)
        keys = [(int(u >> 40), int((u >> 32) & 0xFF), int(u & 0xFFFFFFFF) - 1) for u in uniq.tolist()]
        return _SamplePlan(keys, inverse.reshape(-1), present, counts, rows, starts)

    def _samples(self, src: _SampleSource, plan: _SamplePlan, progress: Progress | None,
                 run: _PreparedRun | None = None) -> None:
        """Append the samples of ``src`` (and of ``run``'s frames) to their pools: in each pool,
        series after series (ascending), each series' samples in stream order; one segment
        per series and pool."""
        if not plan.keys and run is None:
            return
        n_series = len(plan.counts)
        present, counts, rows = plan.present, plan.counts, plan.rows
        pool_ids = np.array([self._pools[k] for k in plan.keys], np.int64)
        pool_of_series = np.full(n_series, -1, np.int64)
        pool_of_series[present] = pool_ids[plan.inverse]
        # Rows ordered by (pool, series, stream order).
        pool_of_row = np.repeat(pool_of_series[present], counts[present])
        rows_p, pstarts = _kernels().group_rows(pool_of_row, rows, len(self._pool_datasets))
        run_pool = np.zeros(0, np.int64)
        if run is not None:
            run_pool = np.array([self._pools[k] for k in run.plan.keys], np.int64)[run.plan.inverse]
        segments = []
        total = len(rows) + (run.nb_samples if run is not None else 0)
        done = 0
        for p in np.unique(np.concatenate([pool_ids, run_pool])).tolist():
            prow = rows_p[pstarts[p] : pstarts[p + 1]]
            series_here = present[pool_of_series[present] == p]
            g = self._pool_datasets[p]
            seg = np.zeros(len(series_here), SEGMENT_DTYPE)
            seg["series"], seg["pool"], seg["count"] = series_here, p, counts[series_here]
            mine = run_pool == p
            if run is not None and mine.any():
                seg = run.merge(seg, mine, p)
            seg["start"] = g["frames"].shape[0] + np.cumsum(seg["count"]) - seg["count"]
            segments.append(seg)
            if run is not None and mine.any():
                run.write_pool_rows(self._append, g, src, prow, series_here, counts[series_here], mine)
                done += len(prow) + int(np.count_nonzero(mine)) * run.nb_frames
                if progress is not None:
                    progress(done / total)
                continue
            for a in range(0, len(prow), _WRITE_SLICE):
                part = prow[a : a + _WRITE_SLICE]
                self._write_pool_rows(g, src, part)
                done += len(part)
                if progress is not None:
                    progress(done / total)
        self._append(self._tables["segments"], _cat(segments, SEGMENT_DTYPE))

    def _create_pools(self, keys: list[tuple[int, int, int]]) -> None:
        for key in keys:
            family, code, k = key
            name = pool_name(family == FAMILY_LIST, code, k)
            g = self.file["pools"].create_group(name)
            g.attrs["family"] = "list" if family == FAMILY_LIST else "set"
            g.attrs["dtype"] = _STORAGE[code]
            g.attrs["count"] = k
            dt = _STORAGE_DTYPE[code]
            chunk = 1 << 17
            if k > 0:
                self._dataset("values", dt, (0,) if k == 1 else (0, k), chunk_bytes=chunk, group=g)
            else:
                self._dataset("values", dt, (0,), chunk_bytes=chunk, group=g)
                self._dataset("starts", np.dtype("<i8"), (0,), chunk_bytes=chunk, group=g)
                self._dataset("lengths", np.dtype("<i8"), (0,), chunk_bytes=chunk, group=g)
            self._dataset("frames", np.dtype("<i4"), (0,), chunk_bytes=chunk, group=g)
            if family == FAMILY_LIST:
                self._dataset("ops", np.dtype("u1"), (0,), chunk_bytes=chunk, group=g)
            self._pools[key] = len(self._pool_names)
            self._pool_names.append(name)
            self._pool_datasets.append(dict(g.items()))
        self.file["pools"].attrs["order"] = json.dumps(self._pool_names)

    def _write_pool_rows(self, g: dict[str, h5py.Dataset], src: _SampleSource, rows: np.ndarray) -> None:
        K = _kernels()
        self._append(g["frames"], src.frame[rows].astype(np.int32))
        if "ops" in g:
            self._append(g["ops"], src.kind[rows])
        vals = g["values"]
        dt = vals.dtype
        offs = src.offset[rows]
        if "starts" not in g:
            size = dt.itemsize * (vals.shape[1] if vals.ndim == 2 else 1)
            data = K.gather_fixed(src.buffer, offs, size).view(dt)
            self._append(vals, data.reshape(len(rows), *vals.shape[1:]))
        else:
            flat, starts = K.gather_ragged(src.buffer, offs, src.size[rows].astype(np.int64))
            data = flat.view(dt)
            n0 = self._append(vals, data)
            self._append(g["starts"], starts[:-1] // dt.itemsize + n0)
            self._append(g["lengths"], np.diff(starts) // dt.itemsize)

    # ------------------------------------------------------------------ durability and end

    def commit(self) -> None:
        """Make everything appended so far durable: flush, record the table lengths, flush.

        A reader of an unfinished file uses the rows of the last commit only, so a writer killed
        between two commits (even in the middle of an ``append``) loses just what came after.
        """
        if self.closed:
            return
        with self._detached_on_io_error():
            self.file.flush()
            self._commit_row()
            self.file.flush()
        self.commits += 1

    def _commit_row(self) -> None:
        """Append the row of ``/log/commits`` holding every committed table's length."""
        row = np.zeros(1, COMMIT_DTYPE)
        for name in _COMMITTED_TABLES:
            row[name.replace("/", "_")] = self._tables[name].shape[0]
        self._append(self._tables["log/commits"], row)

    def counts(self) -> dict[str, int]:
        """Commands written so far under the keys of :data:`pvdkit.ovd.COUNT_KEYS`."""
        return _counts_from(self._counts, self._reg_counts)

    def compressing_on(self, threads: int) -> None:
        """Compress an append's chunks on up to ``threads`` threads from now on (``direct_chunks``
        only): more than one when the caller waits for the writer anyway."""
        if self._chunks is not None:
            self._chunks.workers = max(1, int(threads))

    def close(self, tail: bytes = b"", error: str | None = None, *, interrupted: str | None = None,
              parts: Sequence[Batch | PreparedFrame] = ()) -> None:
        """Write ``parts`` (the stream's last pieces, as :meth:`append_parts`), commit, store
        the bytes after the last complete command (verbatim) with the damage message, the
        command counts and ``complete`` (false when ``interrupted`` gives the reason the
        recording stopped early), and close (idempotent).

        Crash-safe, all of it is one change on one copy of the file (the closing attributes
        need one anyway, and so do the pools of new storage types the last pieces may bring):
        a kill meanwhile leaves the file of the last commit.
        """
        if self.closed:
            return
        parts = list(parts)
        if self.crash_safe and not self._room_to_copy():  # commit what fits in place first
            if parts:
                self.append_parts(parts)
                parts = []
            self.commit()

        def finish() -> None:
            if parts:
                self._append_parts(parts, None)
            self._commit_row()
            f = self.file
            f.create_dataset("log/tail", data=np.frombuffer(tail, np.uint8), **(self._comp if tail else {}))
            f.attrs["error"] = error or ""
            f.attrs["interrupted"] = interrupted or ""
            f.attrs["command_counts"] = json.dumps(self.counts())
            f.attrs["complete"] = interrupted is None
            f.flush()

        try:
            with self._detached_on_io_error():
                self._on_copy(finish, reopen=False)
                self.closed = True
                self.file.close()
        finally:
            if self._chunks is not None:
                self._chunks.close()
        self.commits += 1

    def abort(self) -> None:
        """Let go of the file after a failure, as it is (never raises)."""
        self.closed = True
        if self._chunks is not None:
            self._chunks.close()
        if self.file is None or not self.file.id.valid:
            return
        try:
            self.file.flush()
        except (OSError, RuntimeError):
            self._detach()
        try:
            self._tables.clear()
            self._pool_datasets.clear()
            self.file.close()
        except Exception:  # noqa: BLE001 - the file is failing already; what is on disk stays
            pass

    def _detach(self) -> None:
        """Point the file's descriptor at ``/dev/null``, so that HDF5 writes nothing more to it.

        Why: HDF5 cannot close a file it cannot flush — on a full disk every h5py object that
        is freed afterwards retries its write, and the process crashes at exit. Detached at the
        first failed write, the file on disk stays as it was then: for a crash-safe file, as
        after a kill (consistent up to its last commit).
        """
        if self._detached or self.file is None or not self.file.id.valid:
            return
        null = os.open(os.devnull, os.O_RDWR)
        try:
            os.dup2(null, self.file.id.get_vfd_handle())
        finally:
            os.close(null)
        self._detached = True

    @contextmanager
    def _detached_on_io_error(self) -> Iterator[None]:
        """Detach the file at the first failed write; report it as :class:`OSError` (h5py says
        ``RuntimeError``) with its errno, as every other failed write."""
        try:
            yield
        except (OSError, RuntimeError) as exc:
            if not is_io_error(exc):
                raise
            if not isinstance(exc, NoRoom):
                self._detach()
            if isinstance(exc, RuntimeError):
                code = re.search(r"errno = (\d+)", str(exc))
                number = int(code.group(1)) if code else errno.EIO
                raise OSError(number, os.strerror(number), self.path) from exc
            raise


@dataclass
class _SamplePlan:
    """Where a batch's samples go: pool ``keys[inverse[j]]`` for series ``present[j]``."""

    keys: list[tuple[int, int, int]]
    inverse: np.ndarray
    present: np.ndarray
    counts: np.ndarray  # samples per series id in the batch
    rows: np.ndarray  # attribute rows grouped by series
    starts: np.ndarray


@dataclass
class PreparedLayout:
    """The constant part of a prepared block's commands once indexed: their series, sizes and
    context exceptions. Why: a block writes the same commands every frame, so a stream indexes it
    once and then hands the writer only each frame's payloads (:class:`PreparedFrame`).
    """

    series: np.ndarray  # int32: series of each command, in block order
    sizes: np.ndarray  # uint32: payload bytes of each command
    offsets: np.ndarray  # int64: where each command's payload starts in a frame's payload
    exceptions: np.ndarray  # int64: commands (block positions) whose context is not their series'
    context: int
    kind: np.ndarray = field(init=False)  # uint8 /log/kind rows (all SET_ATTRIBUTE)

    def __post_init__(self) -> None:
        self.kind = np.full(len(self.series), Command.SET_ATTRIBUTE, np.uint8)

    @property
    def log_series(self) -> np.ndarray:
        """The block's ``/log/series`` rows."""
        return self.series

    @property
    def nb_commands(self) -> int:
        return len(self.series)

    @property
    def payload_bytes(self) -> int:
        return int(self.offsets[-1] + self.sizes[-1]) if len(self.offsets) else 0


@dataclass
class PreparedFrame:
    """One write of a prepared block whose :class:`PreparedLayout` is known: commands
    ``row0 …`` of the stream, all in frame ``frame``, with these payloads (end to end)."""

    row0: int
    frame: int
    layout: PreparedLayout
    payload: np.ndarray  # uint8


class _PreparedRun:
    """The prepared frames of one batch when they are all writes of one block (one
    :class:`PreparedLayout`) that names each series once, none of which the batch's other
    samples touch, and whose series all go to pools of fixed-size samples.

    Why: the general path groups every sample of the batch by series and then by pool (two
    counting sorts and a gather over a fleet's two million samples per commit). A block's
    frames repeat one layout, so its samples are planned once, over one frame (:attr:`plan`),
    and each of its series' samples is the same column of every frame: gathered frame after
    frame, into the rows — and the order — the general path gives.
    """

    def __init__(self, layout: PreparedLayout, frames: list[PreparedFrame], plan: _SamplePlan) -> None:
        self.layout = layout
        self.frames = frames
        self.plan = plan  # the layout's plan, over one frame
        # Every frame's payload, end to end.
        self.buffer = _end_to_end([f.payload for f in frames])

    @staticmethod
    def of(parts: Sequence[Batch | PreparedFrame],
           plan_of: Callable[[PreparedLayout], _LayoutPlan | None]) -> _PreparedRun | None:
        """The run of ``parts`` (``plan_of`` gives a layout's plan, as the writer plans), or
        None when the general path must take them."""
        frames = [p for p in parts if isinstance(p, PreparedFrame)]
        if not frames:
            return None
        layout = frames[0].layout
        if any(f.layout is not layout for f in frames):
            return None
        planned = plan_of(layout)
        if planned is None:
            return None
        taken = planned.taken
        for p in parts:
            if isinstance(p, Batch):
                mine = p.attr_series[p.attr_series < len(taken)]
                if taken[mine].any():
                    return None
        return _PreparedRun(layout, frames, planned.plan)

    @property
    def nb_frames(self) -> int:
        return len(self.frames)

    @property
    def nb_samples(self) -> int:
        return len(self.frames) * self.layout.nb_commands

    def merge(self, seg: np.ndarray, mine: np.ndarray, pool: int) -> np.ndarray:
        """Pool ``pool``'s segments: the batch's ``seg`` and one per series of the block in it
        (``mine``: a mask over the plan's series), by ascending series."""
        own = np.zeros(int(np.count_nonzero(mine)), SEGMENT_DTYPE)
        own["series"], own["pool"], own["count"] = self.plan.present[mine], pool, self.nb_frames
        if not len(seg):  # the plan's series ascend
            return own
        both = _cat([seg, own], SEGMENT_DTYPE)
        return both[np.argsort(both["series"], kind="stable")]

    def write_pool_rows(self, append: Callable[[h5py.Dataset, np.ndarray], int], g: dict[str, h5py.Dataset],
                        src: _SampleSource, rows: np.ndarray, series: np.ndarray, counts: np.ndarray,
                        mine: np.ndarray) -> None:
        """Append one pool's rows: the block's series ``mine`` (every frame of each) and the
        batch's ``rows`` (of ``series``, ``counts`` rows each), series after series."""
        assert "ops" not in g and "starts" not in g  # the block's series are fixed-size "set" samples
        K = _kernels()
        vals = g["values"]
        dt = vals.dtype
        size = dt.itemsize * (vals.shape[1] if vals.ndim == 2 else 1)
        own = self.plan.present[mine]
        column = self.plan.rows[self.plan.starts[own]]  # each series' command in the block
        lay, k = self.layout, self.nb_frames
        frames = np.tile(np.array([f.frame for f in self.frames], np.int32), len(own))
        data = K.gather_frames(self.buffer, lay.offsets[column].astype(np.int64), lay.payload_bytes, k, size)
        if len(rows):  # the batch's series of this pool, each before the block's series above it
            at = np.repeat(np.searchsorted(own, series) * k, counts)
            frames = K.insert_rows(frames.view(np.uint8).reshape(-1, 4), at,
                                   src.frame[rows].astype("<i4").view(np.uint8).reshape(-1, 4)).view("<i4")
            frames = frames.reshape(-1)
            data = K.insert_rows(data, at, K.gather_fixed(src.buffer, src.offset[rows], size))
        append(g["frames"], frames)
        append(vals, data.view(dt).reshape(len(frames), *vals.shape[1:]))


@dataclass
class _LayoutPlan:
    """What a :class:`_PreparedRun` needs of its layout, the same every commit: the plan of one
    frame and which series the block writes (``taken[series]``)."""

    plan: _SamplePlan
    taken: np.ndarray  # bool, indexed by series id

    @staticmethod
    def of(layout: PreparedLayout, plan_of: Callable[[_SampleSource], _SamplePlan]) -> _LayoutPlan | None:
        """None when a run cannot take the layout's frames: a command without a series, a series
        written twice per frame, or a pool of variable-size samples."""
        series = layout.series
        if not len(series) or int(series.min()) < 0:
            return None
        taken = np.zeros(int(series.max()) + 1, bool)
        taken[series] = True
        if np.count_nonzero(taken) != len(series):  # a series written twice per frame
            return None
        n = layout.nb_commands
        one_frame = _SampleSource(np.zeros(layout.payload_bytes, np.uint8), layout.kind,
                                  np.zeros(n, np.int32), layout.sizes, layout.offsets,
                                  np.arange(n, dtype=np.int32), series)
        plan = plan_of(one_frame)
        if any(k <= 0 for _, _, k in plan.keys):  # a pool of variable-size samples
            return None
        return _LayoutPlan(plan, taken)


@dataclass
class _SampleSource:
    """The attribute samples of a batch, in stream order: sample *i* is row ``rows[i]`` of the
    columns (series ``series[i]``); payloads are at ``offset`` in ``buffer``."""

    buffer: np.ndarray
    kind: np.ndarray
    frame: np.ndarray
    size: np.ndarray
    offset: np.ndarray
    rows: np.ndarray
    series: np.ndarray


def _sample_source(parts: Sequence[Batch | PreparedFrame]) -> _SampleSource:
    """The samples of consecutive parts as one source (a lone batch's own columns, no copy)."""
    if len(parts) == 1 and isinstance(parts[0], Batch):
        b = parts[0]
        t = b.table
        return _SampleSource(
            b.buffer, t.kind, t.frame, t.data_size, t.data_offset, b.attr_rows, b.attr_series
        )
    bufs, kind, frame, size, offset, series = [], [], [], [], [], []
    base = 0
    for p in parts:
        if isinstance(p, Batch):
            r, t = p.attr_rows, p.table
            kind.append(t.kind[r])
            frame.append(t.frame[r])
            size.append(t.data_size[r])
            offset.append(t.data_offset[r] + base)
            series.append(p.attr_series)
            buf = p.buffer
        else:
            lay = p.layout
            kind.append(lay.kind)
            frame.append(np.full(lay.nb_commands, p.frame, np.int32))
            size.append(lay.sizes)
            offset.append(lay.offsets + base)
            series.append(lay.series)
            buf = p.payload
        bufs.append(buf)
        base += len(buf)
    n = sum(len(s) for s in series)
    rows = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
    return _SampleSource(
        _cat(bufs, np.dtype("u1")), _cat(kind, np.dtype("u1")), _cat(frame, np.dtype("<i4")),
        _cat(size, np.dtype("<u4")), _cat(offset, np.dtype("<i8")), rows, _cat(series, np.dtype("<i4")),
    )


def _end_to_end(payloads: Sequence[np.ndarray]) -> np.ndarray:
    """Byte arrays end to end: a view when they already lie end to end in one contiguous array
    (``H5Stream`` captures a block's frames as the rows of such an arena), else a copy."""
    first = payloads[0]
    base = first.base
    if isinstance(base, np.ndarray) and base.flags.c_contiguous and base.dtype == np.uint8:
        origin = base.__array_interface__["data"][0]
        start = at = first.__array_interface__["data"][0]
        for p in payloads:
            if p.base is not base or not p.flags.c_contiguous or p.__array_interface__["data"][0] != at:
                break
            at += p.size
        else:
            return base.reshape(-1)[start - origin : at - origin]
    return _cat(payloads, np.dtype("u1"))


def _cat(parts: Sequence[np.ndarray], dtype: np.dtype) -> np.ndarray:
    """``parts`` end to end (an empty array of ``dtype`` when there are none; no copy of one)."""
    if not parts:
        return np.zeros(0, dtype)
    if len(parts) == 1:
        return parts[0]
    if dtype.names is None:
        return np.concatenate(parts)
    # Rows of a table: filled slice by slice, because numpy's concatenate promotes structured
    # dtypes pair by pair in Python (a fleet's commit joins hundreds of small row arrays).
    out = np.empty(sum(len(p) for p in parts), dtype)
    at = 0
    for p in parts:
        out[at : at + len(p)] = p
        at += len(p)
    return out


#: Storage kinds of an attribute (``H5Writer._attr_info``) as numbers, for vectorized planning.
_KIND_CODE = {"value": 0, "flags": 1, "bytes": 2}
#: Element size of each storage code.
_ITEMSIZE = np.array([d.itemsize for d in _STORAGE_DTYPE], np.int64)


class NoRoom(OSError):
    """The disk has no room for a change that must be made whole (a copy of the file)."""


def is_io_error(exc: BaseException) -> bool:
    """True for a failure of the disk under a file (h5py reports a failed HDF5 write or flush
    as ``RuntimeError``), as opposed to a bug."""
    return isinstance(exc, OSError) or (isinstance(exc, RuntimeError) and "write failed" in str(exc))


def _os_reason(exc: BaseException) -> str:
    """The reason of an OS/HDF5 error, in words a user knows."""
    text = str(exc)
    if getattr(exc, "errno", None) == errno.ENOSPC or "No space left" in text:
        return "disk full"
    if getattr(exc, "errno", None) == errno.EFBIG or "File too large" in text:
        return "file size limit reached"
    return getattr(exc, "strerror", None) or text.splitlines()[0]


def _value_info(dt: DataType) -> tuple[str, int]:
    if dt == DataType.STRING or dt not in _DT_CODE:
        return ("bytes", _BYTES)
    return ("value", _DT_CODE[dt])


# ============================================================================================
# .ovd → HDF5 in one go
# ============================================================================================


def write_h5(
    buffer: np.ndarray,
    table,
    target: str | os.PathLike,
    *,
    source_name: str = "",
    progress: Progress | None = None,
    compression: str | None = "gzip",
    compression_opts: int | None = 4,
) -> None:
    """Write a whole tokenized ``.ovd`` stream as one HDF5 recording (one segment per series).

    The bytes after the last complete command (a damaged or truncated tail) are kept verbatim,
    so the ``.ovd`` is rebuilt byte for byte even then. A failure removes the partial file.
    """
    path = os.fspath(target)
    builder = IndexBuilder(table.version)
    batch = builder.feed(buffer, table)
    if progress is not None:
        progress(0.1)
    writer = H5Writer(
        path,
        table.version,
        source_name=source_name,
        compression=compression,
        compression_opts=compression_opts,
    )
    try:
        writer.append(batch, None if progress is None else (lambda x: progress(0.1 + 0.85 * x)))
        writer.close(bytes(np.asarray(buffer)[table.valid_end :]), table.error)
    except BaseException:
        writer.abort()
        if os.path.exists(path):
            os.remove(path)
        raise
    if progress is not None:
        progress(1.0)
