"""pvdkit's HDF5 recording format: write index batches, read them back, rebuild the exact ``.ovd``.

Why HDF5: an ``.ovd`` must be read from the start to answer anything; an HDF5 recording keeps
every series in a compressed, chunked numpy dataset that any h5py user (or the viewer) slices
directly, while staying *lossless*: the command log (command kind + series id per command) and
the tables of everything else rebuild the original ``.ovd`` byte for byte. The schema is in
``docs/recording-format.md``; this module is its only writer and reader.

Layout summary (all tables are 1-D chunked compound datasets, appendable):

* ``/registry/classes``, ``/registry/attributes`` – registration commands, in stream order.
* ``/objects`` – one row per object lifetime; ``/destroys`` – every DESTROY_OBJECT.
* ``/frames`` – one row per START_FRAME (with its stop time); ``/frame_stops`` – every STOP_FRAME.
* ``/messages`` – every RECORD_MESSAGE.
* ``/paths`` – attribute paths (handle lists and dotted names); ``/series`` – one row per
  (object, path, family); ``/segments`` – where each series' samples are: rows
  ``[start, start + count)`` of pool ``pool``.
* ``/pools/<name>/{values, frames[, ops][, starts, lengths]}`` – samples of many series with the
  same storage type, series after series (``set_float32x3``: values shaped (n, 3)).
* ``/log/kind`` (u8), ``/log/series`` (i4) – one entry per command; ``/log/context_exceptions``;
  ``/log/tail`` – the bytes after the last complete command of a damaged stream (kept verbatim).
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import h5py
import numpy as np

from pvdkit.outputs import free_bytes, temp_file_beside
from pvdkit.ovd.codec import (
    HEADER_SIZE,
    CreateObject,
    RecordMessage,
    RegisterAttribute,
    RegisterClass,
    RegisterClassAttribute,
    RegisterEnumValue,
    RegisterFlagsAttribute,
    RegisterUniqueListAttribute,
    Version,
    encode_header,
)
from pvdkit.recording import (
    FAMILY_LIST,
    AttributeRegistration,
    Batch,
    FrameTable,
    Message,
    ObjectTable,
    RecordingData,
    Samples,
    SeriesTable,
    _kernels,
)
from pvdkit.types import Command, DataType, PvdError

#: Value of the root attribute ``format``.
FORMAT_NAME = "pvdkit.recording"
#: Value of the root attribute ``format_version``; readers refuse a newer one.
FORMAT_VERSION = 1

Progress = Callable[[float], None]

_STR = h5py.string_dtype("utf-8")
_HANDLES = h5py.vlen_dtype(np.dtype("<u4"))

CLASS_DTYPE = np.dtype([("handle", "<u4"), ("base", "<u4"), ("name", _STR), ("command_index", "<i8")])
ATTRIBUTE_DTYPE = np.dtype(
    [
        ("command", "u1"),
        ("class", "<u4"),
        ("handle", "<u4"),
        ("data_type", "<u2"),
        ("extra", "<u4"),
        ("name", _STR),
        ("command_index", "<i8"),
    ]
)
OBJECT_DTYPE = np.dtype(
    [
        ("handle", "<u8"),
        ("class", "<u4"),
        ("context", "<u8"),
        ("name", _STR),
        ("created", "<i4"),
        ("destroyed", "<i4"),
        ("create_command", "<i8"),
        ("destroy_command", "<i8"),
    ]
)
DESTROY_DTYPE = np.dtype([("context", "<u8"), ("handle", "<u8"), ("object", "<i8"), ("frame", "<i4")])
FRAME_DTYPE = np.dtype(
    [("context", "<u8"), ("start", "<u8"), ("stop", "<u8"), ("stopped", "u1"), ("command", "<i8")]
)
STOP_DTYPE = np.dtype([("context", "<u8"), ("time", "<u8"), ("frame", "<i4")])
MESSAGE_DTYPE = np.dtype(
    [
        ("context", "<u8"),
        ("message", _STR),
        ("file", _STR),
        ("line", "<u4"),
        ("type", "<u4"),
        ("class", "<u4"),
        ("frame", "<i4"),
        ("command", "<i8"),
    ]
)
PATH_DTYPE = np.dtype([("handles", _HANDLES), ("name", _STR)])
SERIES_DTYPE = np.dtype([("object", "<i8"), ("path", "<i4"), ("family", "u1"), ("context", "<u8")])
SEGMENT_DTYPE = np.dtype([("series", "<i8"), ("pool", "<i4"), ("start", "<i8"), ("count", "<i8")])
EXCEPTION_DTYPE = np.dtype([("command", "<i8"), ("context", "<u8")])

#: Storage element types of pools, by code (``bytes``: raw uint8, always variable length).
_STORAGE = (
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "bytes",
)
_STORAGE_DTYPE = [
    np.dtype(f"<{c}") if c != "bytes" else np.dtype("u1")
    for c in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8")
] + [np.dtype("u1")]
_BYTES = 10
_UINT_BY_SIZE = {1: 4, 2: 5, 4: 6, 8: 7}
_DT_CODE = {
    DataType.INT8: 0,
    DataType.INT16: 1,
    DataType.INT32: 2,
    DataType.INT64: 3,
    DataType.UINT8: 4,
    DataType.UINT16: 5,
    DataType.UINT32: 6,
    DataType.UINT64: 7,
    DataType.FLOAT32: 8,
    DataType.FLOAT64: 9,
    DataType.OBJECT_HANDLE: 7,
    DataType.ENUM_VALUE: 6,
}
_WRITE_SLICE = 1 << 20  # samples gathered and written per h5py call


#: HDF5 strings end at a NUL byte, so a NUL inside a name or message is stored escaped as FF 01
#: (and a FF byte as FF 02; FF never occurs in UTF-8, so ordinary names are stored unchanged).
_ESCAPED = re.compile(rb"\xff([\x01\x02])")


def _enc(text: str) -> bytes:
    raw = text.encode("utf-8", "surrogateescape")
    if b"\0" in raw or b"\xff" in raw:
        raw = raw.replace(b"\xff", b"\xff\x02").replace(b"\0", b"\xff\x01")
    return raw


def _dec(raw: bytes | str) -> str:
    if isinstance(raw, str):
        return raw
    raw = bytes(raw)
    if b"\xff" in raw:
        raw = _ESCAPED.sub(lambda m: b"\0" if m.group(1) == b"\x01" else b"\xff", raw)
    return raw.decode("utf-8", "surrogateescape")


# ============================================================================================
# Writing
# ============================================================================================

#: HDF5 format bounds of a crash-safe (SWMR) recording: readable by every HDF5 since 1.10.
_SWMR_LIBVER = ("v110", "v110")
#: The tables whose lengths a commit records (``/log/commits`` has one field per table).
_COMMITTED_TABLES = (
    "registry/classes",
    "registry/attributes",
    "objects",
    "destroys",
    "frames",
    "frame_stops",
    "messages",
    "paths",
    "series",
    "segments",
    "log/kind",
    "log/series",
    "log/context_exceptions",
)
COMMIT_DTYPE = np.dtype([(name.replace("/", "_"), "<i8") for name in _COMMITTED_TABLES])


class H5Writer:
    """Appends index :class:`~pvdkit.recording.Batch` es to an HDF5 recording.

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
    ) -> None:
        self.path = os.fspath(target)
        self.crash_safe = crash_safe
        self.version = tuple(version)
        self._comp = (
            dict(compression=compression, compression_opts=compression_opts, shuffle=compression is not None)
            if compression
            else {}
        )
        self._pools: dict[tuple[int, int, int], int] = {}
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

    def _on_copy(self, change: Callable[[], None]) -> None:
        """Make a structural change: in place, or (crash-safe) on a copy renamed over the file.

        Without room for the copy the change is not made (:class:`NoRoom`): changing the file
        in place outside SWMR mode is what a kill or a full disk could leave half done.
        """
        if not self.crash_safe:
            change()
            return
        free = free_bytes(self.path)
        if free is not None and free < 1.1 * os.path.getsize(self.path) + (1 << 20):
            raise NoRoom(errno.ENOSPC, "No space left on device (no room to copy the file)")
        self.file.close()
        tmp = temp_file_beside(self.path)
        try:
            shutil.copyfile(self.path, tmp)
            self.file = h5py.File(tmp, "r+", libver=_SWMR_LIBVER)
            self._bind()
            change()
            self.file.close()
            os.replace(tmp, self.path)
        except BaseException:
            self._abandon(tmp)
            raise
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

    @staticmethod
    def _append(ds: h5py.Dataset, rows: np.ndarray) -> int:
        n0 = ds.shape[0]
        if len(rows):
            ds.resize(n0 + len(rows), axis=0)
            ds[n0 : n0 + len(rows)] = rows
        return n0

    # ------------------------------------------------------------------ batches

    def append(self, batch: Batch, progress: Progress | None = None) -> None:
        """Write one batch (see :class:`~pvdkit.recording.Batch`); durable after :meth:`commit`."""
        if self.closed:
            raise PvdError(f"{self.path}: append after the recording was closed")
        with self._detached_on_io_error():
            self._append_batch(batch, progress)

    def _append_batch(self, batch: Batch, progress: Progress | None) -> None:
        class_rows, attr_rows = self._registrations(batch.registrations)
        path_rows = self._paths(batch.paths)
        plan = self._plan_samples(batch)
        new_pools = [k for k in plan.keys if k not in self._pools]
        if new_pools:  # every dataset the batch needs exists before anything of it is written
            self._on_copy(lambda: self._create_pools(new_pools))
        self._append(self._tables["registry/classes"], class_rows)
        self._append(self._tables["registry/attributes"], attr_rows)
        self._objects(batch)
        self._frames(batch)
        self._messages(batch.messages)
        self._append(self._tables["paths"], path_rows)
        s = batch.series
        rows = np.zeros(len(s), SERIES_DTYPE)
        rows["object"], rows["path"], rows["family"], rows["context"] = s.object, s.path, s.family, s.context
        self._append(self._tables["series"], rows)
        self._samples(batch, plan, progress)
        kind = batch.table.kind
        self._append(self._tables["log/kind"], kind)
        ser = np.full(len(kind), -1, np.int32)
        ser[batch.attr_rows] = batch.attr_series
        self._append(self._tables["log/series"], ser)
        cmd, ctx = batch.context_exceptions
        exc = np.zeros(len(cmd), EXCEPTION_DTYPE)
        exc["command"], exc["context"] = cmd, ctx
        self._append(self._tables["log/context_exceptions"], exc)
        self._counts += np.bincount(kind, minlength=len(self._counts))[: len(self._counts)]
        self.n_commands += len(kind)

    def _registrations(
        self, regs: Sequence[tuple[int, RegisterClass | AttributeRegistration]]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The registry rows of a batch; notes each attribute's storage for the pools."""
        from pvdkit.ovd.tokenizer import NO_DATA_TYPE

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

    def _objects(self, batch: Batch) -> None:
        o = batch.objects
        rows = np.zeros(len(o), OBJECT_DTYPE)
        rows["handle"], rows["class"], rows["context"] = o.handle, o.cls, o.context
        rows["name"] = [_enc(n) for n in o.name]
        rows["created"], rows["destroyed"] = o.created, o.destroyed
        rows["create_command"], rows["destroy_command"] = o.create_command, o.destroy_command
        ds = self._tables["objects"]
        self._append(ds, rows)
        u = batch.destroyed_updates
        for obj, frame, cmd in zip(
            u["object"].tolist(), u["frame"].tolist(), u["command"].tolist(), strict=True
        ):
            if obj < batch.object0:  # an object of an earlier batch ended: update its row
                row = ds[obj]
                row["destroyed"], row["destroy_command"] = frame, cmd
                ds[obj] = row
        d = batch.destroys
        rows = np.zeros(len(d["handle"]), DESTROY_DTYPE)
        for k in ("context", "handle", "object", "frame"):
            rows[k] = d[k]
        self._append(self._tables["destroys"], rows)

    def _frames(self, batch: Batch) -> None:
        fr = batch.frames
        rows = np.zeros(len(fr), FRAME_DTYPE)
        rows["context"], rows["start"], rows["stop"] = fr.context, fr.start, fr.stop
        rows["stopped"], rows["command"] = fr.stopped, fr.command
        ds = self._tables["frames"]
        self._append(ds, rows)
        for f, t in zip(
            batch.stop_updates["frame"].tolist(), batch.stop_updates["time"].tolist(), strict=True
        ):
            row = ds[f]
            row["stop"], row["stopped"] = t, 1
            ds[f] = row
        st = batch.stops
        rows = np.zeros(len(st["time"]), STOP_DTYPE)
        rows["context"], rows["time"], rows["frame"] = st["context"], st["time"], st["frame"]
        self._append(self._tables["frame_stops"], rows)

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

    def _plan_samples(self, batch: Batch) -> _SamplePlan:
        """Which pool (storage type) each series of the batch goes to."""
        table = batch.table
        n_series = batch.series0 + len(batch.series)
        self._series_family = np.concatenate([self._series_family, batch.series.family])
        self._series_path = np.concatenate([self._series_path, batch.series.path])
        if not len(batch.attr_rows):
            empty = np.zeros(0, np.int64)
            return _SamplePlan([], empty, empty, empty, empty, empty)
        rows, starts = _kernels()._group_rows(batch.attr_series, batch.attr_rows, n_series)
        counts = np.diff(starts)
        present = np.flatnonzero(counts)
        first = starts[present]
        sizes = table.data_size[rows].astype(np.int64)
        smin = np.minimum.reduceat(sizes, first)
        smax = np.maximum.reduceat(sizes, first)
        # Storage per present series: (family, dtype code, k (-1 = variable)).
        codes = np.empty(len(present), np.int64)
        ks = np.empty(len(present), np.int64)
        for j, sid in enumerate(present.tolist()):
            last = self._path_handles[self._series_path[sid]][-1]
            kind, code = self._attr_info.get(last, ("bytes", _BYTES))
            lo, hi = int(smin[j]), int(smax[j])
            if kind == "flags":
                code = _UINT_BY_SIZE.get(lo, _BYTES) if lo == hi else _BYTES
            item = _STORAGE_DTYPE[code].itemsize
            if code == _BYTES or kind == "bytes":
                codes[j], ks[j] = _BYTES, -1
            elif lo == hi and lo > 0 and lo % item == 0:
                codes[j], ks[j] = code, lo // item
            elif np.all(sizes[starts[sid] : starts[sid + 1]] % item == 0):
                codes[j], ks[j] = code, -1
            else:
                codes[j], ks[j] = _BYTES, -1
        fams = self._series_family[present]
        keys = np.stack([fams.astype(np.int64), codes, ks], axis=1)
        uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
        return _SamplePlan(
            [tuple(int(v) for v in u) for u in uniq], inverse.reshape(-1), present, counts, rows, starts
        )

    def _samples(self, batch: Batch, plan: _SamplePlan, progress: Progress | None) -> None:
        if not plan.keys:
            return
        table, buf = batch.table, batch.buffer
        n_series = len(plan.counts)
        present, counts, rows = plan.present, plan.counts, plan.rows
        pool_ids = np.array([self._pools[k] for k in plan.keys], np.int64)
        pool_of_series = np.full(n_series, -1, np.int64)
        pool_of_series[present] = pool_ids[plan.inverse]
        # Rows ordered by (pool, series, stream order).
        pool_of_row = pool_of_series[np.repeat(np.arange(n_series), counts)]
        rows_p, pstarts = _kernels()._group_rows(pool_of_row, rows, len(self._pool_datasets))
        seg_rows = []
        total = len(rows)
        done = 0
        for p in np.unique(pool_ids).tolist():
            prow = rows_p[pstarts[p] : pstarts[p + 1]]
            series_here = present[pool_of_series[present] == p]
            g = self._pool_datasets[p]
            base = g["frames"].shape[0]
            seg_counts = counts[series_here]
            seg_start = base + np.concatenate([[0], np.cumsum(seg_counts)[:-1]])
            for sid, st, c in zip(series_here.tolist(), seg_start.tolist(), seg_counts.tolist(), strict=True):
                seg_rows.append((sid, p, st, c))
            for a in range(0, len(prow), _WRITE_SLICE):
                part = prow[a : a + _WRITE_SLICE]
                self._write_pool_rows(g, buf, table, part)
                done += len(part)
                if progress is not None:
                    progress(done / total)
        self._append(self._tables["segments"], np.array(seg_rows, SEGMENT_DTYPE))

    def _create_pools(self, keys: list[tuple[int, int, int]]) -> None:
        for key in keys:
            family, code, k = key
            name = f"{'list' if family == FAMILY_LIST else 'set'}_{_STORAGE[code]}" + (
                f"x{k}" if k > 0 else "_var"
            )
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

    def _write_pool_rows(self, g: dict[str, h5py.Dataset], buf: np.ndarray, table, rows: np.ndarray) -> None:
        from pvdkit._index_kernels import _gather_fixed, _gather_ragged

        self._append(g["frames"], table.frame[rows].astype(np.int32))
        if "ops" in g:
            self._append(g["ops"], table.kind[rows])
        vals = g["values"]
        dt = vals.dtype
        offs = table.data_offset[rows]
        if "starts" not in g:
            size = dt.itemsize * (vals.shape[1] if vals.ndim == 2 else 1)
            data = _gather_fixed(buf, offs, size).view(dt)
            self._append(vals, data.reshape(len(rows), *vals.shape[1:]))
        else:
            flat, starts = _gather_ragged(buf, offs, table.data_size[rows].astype(np.int64))
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
            row = np.zeros(1, COMMIT_DTYPE)
            for name in _COMMITTED_TABLES:
                row[name.replace("/", "_")] = self._tables[name].shape[0]
            self._append(self._tables["log/commits"], row)
            self.file.flush()
        self.commits += 1

    def counts(self) -> dict[str, int]:
        """Commands written so far under the keys of :data:`pvdkit.ovd.COUNT_KEYS`."""
        return _counts_from(self._counts, self._reg_counts)

    def close(self, tail: bytes = b"", error: str | None = None, *, interrupted: str | None = None) -> None:
        """Commit, store the bytes after the last complete command (verbatim) with the damage
        message, the command counts and ``complete`` (false when ``interrupted`` gives the
        reason the recording stopped early), and close (idempotent)."""
        if self.closed:
            return
        self.commit()

        def finish() -> None:
            f = self.file
            f.create_dataset("log/tail", data=np.frombuffer(tail, np.uint8), **(self._comp if tail else {}))
            f.attrs["error"] = error or ""
            f.attrs["interrupted"] = interrupted or ""
            f.attrs["command_counts"] = json.dumps(self.counts())
            f.attrs["complete"] = interrupted is None
            f.flush()

        with self._detached_on_io_error():
            self._on_copy(finish)
            self.closed = True
            self.file.close()

    def abort(self) -> None:
        """Let go of the file after a failure, as it is (never raises)."""
        self.closed = True
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


def _counts_from(per_kind: np.ndarray, reg: dict[str, int]) -> dict[str, int]:
    c = {
        "register_class": per_kind[Command.REGISTER_CLASS],
        **reg,
        "register_class_attribute": per_kind[Command.REGISTER_CLASS_ATTRIBUTE],
        "register_unique_list_attribute": per_kind[Command.REGISTER_UNIQUE_LIST_ATTRIBUTE],
        "set_attribute": per_kind[Command.SET_ATTRIBUTE],
        "add_to_unique_list": per_kind[Command.ADD_TO_UNIQUE_LIST_ATTRIBUTE],
        "remove_from_unique_list": per_kind[Command.REMOVE_FROM_UNIQUE_LIST_ATTRIBUTE],
        "create_object": per_kind[Command.CREATE_OBJECT],
        "destroy_object": per_kind[Command.DESTROY_OBJECT],
        "start_frame": per_kind[Command.START_FRAME],
        "stop_frame": per_kind[Command.STOP_FRAME],
        "record_message": per_kind[Command.RECORD_MESSAGE],
    }
    from pvdkit.ovd.tokenizer import COUNT_KEYS

    return {k: int(c[k]) for k in COUNT_KEYS}




# ============================================================================================
# Reading
# ============================================================================================
#
# Everything read from a file is hostile until checked: a damaged or crafted recording must
# fail with one PvdError naming the file and the dataset (or row), never with a raw h5py /
# numpy exception, and never allocate more than the file can hold. So every h5py call goes
# through ``_Source`` (which turns HDF5's errors into PvdError and refuses reads larger than
# the stored bytes can decode to), every table is checked for its fields before use, and every
# id read from a table is checked against the table it indexes before it is used to index or
# to size an array.

import mmap  # noqa: E402  (the reading section's own import; the header belongs to the writer)

#: Largest ratio of decoded bytes to stored bytes the reader accepts for a dataset: deflate
#: cannot exceed about 1032:1, so a table that claims more (resized but never written, chunks
#: that do not exist) is damaged or hostile and is refused before anything is allocated.
MAX_EXPANSION = 1100
#: Bytes a read may decode beyond ``MAX_EXPANSION`` × the stored bytes (a small dataset whose
#: chunks were never written reads as fill values; that costs nothing worth refusing).
READ_SLACK_BYTES = 1 << 20
#: Largest root or group attribute (JSON strings, version triple, flags) the reader reads.
MAX_ATTRIBUTE_BYTES = 1 << 22
#: Most handles in one attribute path (the depth of a command is a u8).
_MAX_PATH_HANDLES = 0xFF
#: Exceptions h5py raises for a damaged file or object (RuntimeError: e.g. a link loop).
_H5_ERRORS = (OSError, KeyError, ValueError, TypeError, RuntimeError)


#: ``limit`` of a :class:`_Source` that reads the writer's last commit from the file.
_FROM_FILE = object()


def _prod(dims: tuple[int, ...]) -> int:
    """Product of dimensions as a Python int (no overflow, whatever a file claims)."""
    n = 1
    for d in dims:
        n *= int(d)
    return n


class _Source:
    """One HDF5 recording being read: the file, its name for messages, the rows of the writer's
    last commit (``limit``: an interrupted crash-safe recording; None = every row counts) and
    the byte budget of each dataset."""

    def __init__(self, f: h5py.File, name: str, limit: dict[str, int] | None | object = _FROM_FILE) -> None:
        self.f = f
        self.name = name
        self._capacity: dict[str, int] = {}
        if limit is _FROM_FILE:
            limit = _committed_rows(f, name)
        self.limit: dict[str, int] | None = limit  # type: ignore[assignment]

    def error(self, where: str, what: str) -> PvdError:
        return PvdError(f"{self.name}: {where}: {what}")

    def get(self, path: str, group: h5py.Group | None = None) -> h5py.Dataset | h5py.Group | None:
        """The object at ``path`` (None if absent); PvdError if it lives in another file (an
        external link: pvdkit reads only the recording itself) or cannot be opened."""
        base = self.f if group is None else group
        try:
            obj = base.get(path)
        except _H5_ERRORS as exc:
            raise self.error(f"{base.name.rstrip('/')}/{path}", f"cannot open it ({exc})") from None
        if obj is not None and obj.id.fileno != self.f.id.fileno:
            raise self.error(obj.name, "links to another file; a recording is one self-contained file")
        return obj

    def dataset(
        self, path: str, group: h5py.Group | None = None, *, ndim: tuple[int, ...] = (1,)
    ) -> h5py.Dataset:
        """The dataset at ``path``, checked: stored in this file, of a rank in ``ndim``."""
        ds = self.get(path, group)
        where = f"{(self.f if group is None else group).name.rstrip('/')}/{path}"
        if ds is None:
            raise self.error(where, "missing (a pvdkit recording has this dataset)")
        if not isinstance(ds, h5py.Dataset):
            raise self.error(where, "is not a dataset")
        try:
            plist = ds.id.get_create_plist()
            layout, external = plist.get_layout(), plist.get_external_count()
        except _H5_ERRORS as exc:
            raise self.error(where, f"unreadable dataset ({exc})") from None
        if layout == h5py.h5d.VIRTUAL or external:
            raise self.error(where, "stores its data outside the file (virtual or external "
                                    "dataset); pvdkit reads only data held in the recording")
        if ds.ndim not in ndim:
            raise self.error(where, f"has {ds.ndim} dimensions, expected {' or '.join(map(str, ndim))}")
        return ds

    def group(self, path: str, group: h5py.Group | None = None) -> h5py.Group:
        g = self.get(path, group)
        if not isinstance(g, h5py.Group):
            where = f"{(self.f if group is None else group).name.rstrip('/')}/{path}"
            raise self.error(where, "missing or not a group")
        return g

    def capacity(self, ds: h5py.Dataset) -> int:
        """Bytes a read of ``ds`` may decode: ``MAX_EXPANSION`` × its stored bytes + slack."""
        cap = self._capacity.get(ds.name)
        if cap is None:
            try:
                stored = ds.id.get_storage_size()
            except _H5_ERRORS as exc:
                raise self.error(ds.name, f"unreadable dataset ({exc})") from None
            cap = self._capacity[ds.name] = MAX_EXPANSION * stored + READ_SLACK_BYTES
        return cap

    def rows(self, ds: h5py.Dataset, table: str | None = None) -> int:
        """Rows of ``ds`` to read: all, or those of the last commit of an interrupted file."""
        n = ds.shape[0]
        if table is not None and self.limit is not None and table in self.limit:
            n = min(n, self.limit[table])
        return n

    def check_size(self, ds: h5py.Dataset, lo: int, hi: int) -> None:
        """Refuse to read rows ``lo:hi`` of ``ds`` unless they fit in what the file stores."""
        n = ds.shape[0]
        if not 0 <= lo <= hi <= n:
            raise self.error(ds.name, f"rows {lo}..{hi} asked for, the dataset has {n}")
        size = (hi - lo) * ds.dtype.itemsize * _prod(ds.shape[1:])
        if size > self.capacity(ds):
            stored = (self.capacity(ds) - READ_SLACK_BYTES) // MAX_EXPANSION
            raise self.error(
                ds.name,
                f"rows {lo}..{hi} would decode to {size:,} bytes but the file stores only {stored:,} "
                f"bytes of it (more than {MAX_EXPANSION}:1): resized without being written — a "
                "damaged or hostile file",
            )

    def read(self, ds: h5py.Dataset, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """Rows ``lo:hi`` of ``ds`` (all rows by default), after :meth:`check_size`; HDF5
        errors (a corrupt chunk, a missing filter) become PvdError naming the dataset."""
        hi = ds.shape[0] if hi is None else hi
        self.check_size(ds, lo, hi)
        try:
            return ds[lo:hi]
        except _H5_ERRORS as exc:
            raise self.error(ds.name, f"cannot read rows {lo}..{hi} ({exc})") from None

    def attr(self, obj: h5py.HLObject, key: str) -> object:
        """Attribute ``key`` of ``obj`` (None if absent), refusing one larger than
        ``MAX_ATTRIBUTE_BYTES`` before reading it."""
        where = f"attribute {key!r} of {obj.name}"
        try:
            if key not in obj.attrs:
                return None
            aid = h5py.h5a.open(obj.id, key.encode())
            shape, itemsize = aid.shape, aid.dtype.itemsize
            if _prod(shape) * itemsize > MAX_ATTRIBUTE_BYTES:
                raise self.error(where, f"has shape {shape}, more than a recording's attribute holds")
            return obj.attrs[key]
        except _H5_ERRORS as exc:
            raise self.error(where, f"unreadable ({exc})") from None

    def attr_str(self, obj: h5py.HLObject, key: str) -> str | None:
        v = self.attr(obj, key)
        if isinstance(v, np.ndarray) and v.shape == ():
            v = v[()]
        if v is None or isinstance(v, str):
            return v
        if isinstance(v, bytes):
            return _dec(v)
        raise self.error(f"attribute {key!r} of {obj.name}", f"is {_describe_value(v)}, expected a string")

    def attr_int(self, obj: h5py.HLObject, key: str) -> int | None:
        v = self.attr(obj, key)
        if isinstance(v, np.ndarray) and v.shape == ():
            v = v[()]
        if v is None:
            return None
        if isinstance(v, (int, np.integer)):
            return int(v)
        raise self.error(f"attribute {key!r} of {obj.name}", f"is {_describe_value(v)}, expected an integer")

    def table(self, path: str, dtype: np.dtype) -> np.ndarray:
        """Table ``path`` (rows of the last commit for an interrupted file) as an array of
        exactly ``dtype``, after checking that it has each field with a compatible type."""
        ds = self.dataset(path)
        have = ds.dtype
        if have.names is None:
            raise self.error(ds.name, f"is {have}, expected a table with fields {', '.join(dtype.names)}")
        for field in dtype.names:
            if field not in have.names:
                raise self.error(ds.name, f"has no field {field!r} (fields: {', '.join(have.names)})")
            if not _compatible(have[field], dtype[field]):
                raise self.error(ds.name, f"field {field!r} is {_type_name(have[field])}, "
                                          f"expected {_type_name(dtype[field])}")
        raw = self.read(ds, 0, self.rows(ds, path))
        out = np.zeros(len(raw), dtype)
        for field in dtype.names:
            out[field] = raw[field]
        return out


def _compatible(have: np.dtype, want: np.dtype) -> bool:
    """Whether values of ``have`` can stand for ``want`` (integers for integers, strings for
    strings, a variable-length integer sequence for one)."""
    if h5py.check_string_dtype(want) is not None:
        return h5py.check_string_dtype(have) is not None
    want_base = h5py.check_vlen_dtype(want)
    if want_base is not None:
        have_base = h5py.check_vlen_dtype(have)
        return have_base is not None and have_base.kind in "iu"
    if want.kind in "iu":
        return have.kind in "iub"
    return have.kind == want.kind


def _type_name(dt: np.dtype) -> str:
    if h5py.check_string_dtype(dt) is not None:
        return "a string"
    base = h5py.check_vlen_dtype(dt)
    if base is not None:
        return f"a variable-length sequence of {base}"
    return str(dt)


def _describe_value(v: object) -> str:
    if isinstance(v, np.ndarray):
        return f"an array of {v.dtype} with shape {v.shape}"
    return f"a {type(v).__name__}"


def _open_file(source: str | os.PathLike | bytes, name: str) -> h5py.File:
    """Open an HDF5 file for reading (a regular file only), after checking its global heaps."""
    from pvdkit.outputs import require_input

    try:
        if isinstance(source, (bytes, bytearray)):
            data = bytes(source)
            f = h5py.File(io.BytesIO(data), "r")
        else:
            path = require_input(source)
            try:
                f = h5py.File(path, "r")
            except OSError as exc:
                text = str(exc)
                if "already open for write" not in text and "SWMR read access flag" not in text:
                    raise
                # A crash-safe recording still being written, or whose writer was killed: HDF5
                # marks it open for writing; SWMR reading opens it read-only as it is. (Also
                # when this process has it open for SWMR reading already.)
                f = h5py.File(path, "r", swmr=True)
    except _H5_ERRORS as exc:
        raise PvdError(f"cannot open {name} as HDF5: {exc}") from None
    try:
        if isinstance(source, (bytes, bytearray)):
            _check_global_heaps(f, data, name)
        else:
            with open(path, "rb") as raw:
                size = os.fstat(raw.fileno()).st_size
                if size:
                    with mmap.mmap(raw.fileno(), 0, access=mmap.ACCESS_READ) as view:
                        _check_global_heaps(f, view, name)
    except BaseException:
        f.close()
        raise
    return f


#: Signature and version of a global heap collection (HDF5 reads no other version).
_GCOL = b"GCOL\x01"


def _check_global_heaps(f: h5py.File, data: bytes | mmap.mmap, name: str) -> None:
    """Refuse a file whose global heap collections HDF5 cannot walk safely.

    Why: variable-length strings (every name of a recording) live in global heap collections,
    and HDF5 (up to 2.0 at least) walks a collection's objects trusting their sizes: a
    free-space entry of size 0 makes that walk loop forever, one running past its collection
    makes it read beyond it. So every collection in the file (found by its signature) is
    walked here the same way first, and must advance at each object and end inside itself.
    Costs one pass over the file's bytes (about 0.7 ms per MB).
    """
    try:
        size_bytes = f.id.get_create_plist().get_sizes()[1]
    except _H5_ERRORS as exc:
        raise PvdError(f"cannot open {name} as HDF5: {exc}") from None
    header = 8 + size_bytes  # signature, version, 3 reserved bytes, collection size
    obj_header = 8 + size_bytes  # index u16, references u16, 4 reserved bytes, object size
    wrap = 1 << 64  # HDF5 adds sizes to pointers in size_t arithmetic
    n = len(data)
    at = data.find(_GCOL)
    while at >= 0:
        if at + header <= n:
            end = at + int.from_bytes(data[at + 8:at + header], "little")
            p = at + header
            while end <= n and p < end and p + obj_header <= end:
                index = int.from_bytes(data[p:p + 2], "little")
                size = int.from_bytes(data[p + 8:p + obj_header], "little")
                need = (obj_header + -(-size // 8) * 8) % wrap if index else size % wrap
                if need == 0 or need > end - p:
                    raise PvdError(
                        f"{name}: damaged global heap collection at byte offset {at}: its object at "
                        f"byte {p} claims {size} bytes ({'none left' if need == 0 else 'past its end'}); "
                        "the recording's strings cannot be read"
                    )
                p += need
        at = data.find(_GCOL, at + 1)


def _committed_rows(f: h5py.File, name: str | None = None) -> dict[str, int] | None:
    """Rows of each table as of the writer's last commit, for a recording whose writer did not
    finish (rows past it may be half written); None when every row counts."""
    src = _Source(f, name or f.filename, limit=None)
    complete = src.attr(f, "complete")
    if complete is None or _truth(complete) or src.get("log/commits") is None:
        return None
    commits = src.dataset("log/commits")
    n = commits.shape[0]
    if n == 0:
        return None
    fields = [t.replace("/", "_") for t in _COMMITTED_TABLES]
    if commits.dtype.names is None or any(k not in commits.dtype.names for k in fields):
        raise src.error(commits.name, f"is {commits.dtype}, expected the fields {', '.join(fields)}")
    last = src.read(commits, n - 1, n)[0]
    out = {}
    for table, k in zip(_COMMITTED_TABLES, fields, strict=True):
        v = int(last[k])
        if v < 0:
            raise src.error(commits.name, f"the last commit gives {table} {v} rows")
        out[table] = v
    return out


def _truth(value: object) -> bool:
    """A boolean root attribute (h5py gives numpy bools, ints or 0-d arrays)."""
    v = value[()] if isinstance(value, np.ndarray) and value.shape == () else value
    if isinstance(v, (bool, np.bool_, int, np.integer)):
        return bool(v)
    return False


def _rows(f: h5py.File, name: str, limit: dict[str, int] | None) -> np.ndarray:
    """The rows of table ``name`` (up to the last commit when ``limit`` is given), bounded by
    what the file stores (see :class:`_Source`)."""
    src = _Source(f, f.filename, limit=limit)
    ds = src.dataset(name, ndim=(1,))
    return src.read(ds, 0, src.rows(ds, name))


def _incomplete_reason(f: h5py.File, src: _Source | None = None) -> str | None:
    """Why a recording is incomplete (None when its writer closed it normally)."""
    if src is None:
        src = _Source(f, f.filename, limit=None)
    complete = src.attr(f, "complete")
    if complete is None or _truth(complete):
        return None
    reason = src.attr_str(f, "interrupted") or ""
    return reason or "its writer stopped without closing it (killed or crashed)"


def _check(f: h5py.File, name: str) -> None:
    """Refuse an HDF5 file that is not a pvdkit recording this version can read."""
    _check_source(_Source(f, name))


def _check_source(src: _Source) -> Version:
    f = src.f
    fmt = src.attr(f, "format")
    fmt = fmt[()] if isinstance(fmt, np.ndarray) and fmt.shape == () else fmt
    if isinstance(fmt, bytes):
        fmt = _dec(fmt)
    if not isinstance(fmt, str) or fmt != FORMAT_NAME:
        shown = fmt if fmt is None or isinstance(fmt, str) else _describe_value(fmt)
        raise PvdError(
            f"{src.name}: an HDF5 file but not a pvdkit recording (root attribute 'format' is "
            f"{shown!r}, expected {FORMAT_NAME!r})"
        )
    v = src.attr_int(f, "format_version") or 0
    if v > FORMAT_VERSION:
        raise PvdError(
            f"{src.name}: pvdkit recording format version {v} is newer than this pvdkit reads "
            f"({FORMAT_VERSION}); upgrade pvdkit"
        )
    for req in (
        "registry/classes",
        "registry/attributes",
        "objects",
        "frames",
        "paths",
        "series",
        "segments",
        "log/kind",
        "log/series",
    ):
        if src.get(req) is None:
            raise PvdError(f"{src.name}: pvdkit recording without its {req!r} dataset (damaged file?)")
    return _ovd_version(src)


def _ovd_version(src: _Source) -> Version:
    """The root attribute ``ovd_version``, accepted by the same rule as an ``.ovd`` header."""
    from pvdkit.ovd.codec import check_version

    raw = src.attr(src.f, "ovd_version")
    where = f"{src.name}: root attribute 'ovd_version'"
    arr = np.asarray(raw) if raw is not None else None
    if arr is None or arr.shape != (3,) or arr.dtype.kind not in "iu":
        shown = "missing" if raw is None else _describe_value(arr)
        raise PvdError(f"{where} is {shown}, expected three integers (major, minor, patch)")
    return check_version(tuple(int(x) for x in arr.tolist()), where)


def read_registrations(
    f: h5py.File, limit: dict[str, int] | None = None
) -> list[tuple[int, RegisterClass | AttributeRegistration]]:
    """Registration commands as codec dataclasses with their command index, in stream order."""
    return _registrations(_Source(f, f.filename, limit=limit))


def _registrations(src: _Source) -> list[tuple[int, RegisterClass | AttributeRegistration]]:
    out: list[tuple[int, RegisterClass | AttributeRegistration]] = []
    for h, b, n, index in src.table("registry/classes", CLASS_DTYPE).tolist():
        out.append((index, RegisterClass(h, _dec(n), b)))
    a = src.table("registry/attributes", ATTRIBUTE_DTYPE)
    cmd, dt = a["command"], a["data_type"]
    ok = ((cmd == Command.REGISTER_ATTRIBUTE) | (cmd == Command.REGISTER_UNIQUE_LIST_ATTRIBUTE)) & (
        dt <= DataType.FLAGS_WORD
    ) | (cmd == Command.REGISTER_CLASS_ATTRIBUTE)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise src.error(
            f"/registry/attributes row {i}",
            f"command {int(cmd[i])} with data type {int(dt[i])} is no attribute registration "
            "(expected command 3 or 5 with data type 0..13, or command 4)",
        )
    for c, cls, h, t, extra, n, index in a.tolist():
        out.append((index, _attribute_registration(c, cls, h, t, extra, _dec(n))))
    out.sort(key=lambda t: t[0])
    return out


def _attribute_registration(
    cmd: int, cls: int, h: int, dt: int, extra: int, name: str
) -> AttributeRegistration:
    if cmd == Command.REGISTER_CLASS_ATTRIBUTE:
        return RegisterClassAttribute(cls, h, extra, name)
    if cmd == Command.REGISTER_UNIQUE_LIST_ATTRIBUTE:
        return RegisterUniqueListAttribute(cls, h, DataType(dt), name)
    if dt == DataType.ENUM_VALUE:
        return RegisterEnumValue(cls, h, extra, name)
    if dt == DataType.FLAGS_WORD:
        return RegisterFlagsAttribute(cls, h, extra, name)
    return RegisterAttribute(cls, h, DataType(dt), extra, name)


def _paths(src: _Source) -> list[tuple[int, ...]]:
    """``/paths`` as handle tuples, each 1..255 handles of u32 (a command's path)."""
    handles = src.table("paths", PATH_DTYPE)["handles"]
    out = []
    for i, p in enumerate(handles.tolist()):
        h = np.asarray(p)
        if not 1 <= len(h) <= _MAX_PATH_HANDLES or (len(h) and (h.min() < 0 or h.max() > 0xFFFFFFFF)):
            raise src.error(f"/paths row {i}", f"{len(h)} handles {h[:8].tolist()}…; an attribute "
                                               f"path is 1..{_MAX_PATH_HANDLES} u32 handles")
        out.append(tuple(int(x) for x in h.tolist()))
    return out


@dataclass
class _Pool:
    """The datasets of one pool, or after :func:`_preload` their whole content as arrays (both
    slice the same way)."""

    values: h5py.Dataset | np.ndarray
    frames: h5py.Dataset | np.ndarray
    ops: h5py.Dataset | np.ndarray | None
    starts: h5py.Dataset | np.ndarray | None
    lengths: h5py.Dataset | np.ndarray | None


def _pools(src: _Source) -> tuple[list[str], list[_Pool]]:
    """Names and datasets of every pool in pool-id order, each checked for rank, type and
    matching lengths (metadata only: nothing is read)."""
    g = src.group("pools")
    names = _pool_order_checked(src)
    pools = []
    for nm in names:
        pg = src.group(nm, g)
        frames = src.dataset("frames", pg)
        values = src.dataset("values", pg, ndim=(1, 2))
        ops = src.dataset("ops", pg) if src.get("ops", pg) is not None else None
        has_starts, has_lengths = src.get("starts", pg) is not None, src.get("lengths", pg) is not None
        if has_starts != has_lengths:
            raise src.error(pg.name, "has only one of 'starts' and 'lengths' (variable pools have both)")
        starts = src.dataset("starts", pg) if has_starts else None
        lengths = src.dataset("lengths", pg) if has_lengths else None
        n = frames.shape[0]
        for ds, kinds in ((frames, "iu"), (ops, "iu"), (starts, "iu"), (lengths, "iu"), (values, "iuf")):
            if ds is None:
                continue
            if ds.dtype.kind not in kinds or ds.dtype.itemsize not in (1, 2, 4, 8):
                raise src.error(ds.name, f"is {_type_name(ds.dtype)}, expected "
                                         f"{'numbers' if ds is values else 'integers'}")
            if ds is not values and ds.shape[0] != n:
                raise src.error(ds.name, f"has {ds.shape[0]} rows, /frames of its pool {n}")
        if starts is None and values.shape[0] != n:
            raise src.error(values.name, f"has {values.shape[0]} rows, the pool's frames {n}")
        if starts is not None and values.ndim != 1:
            raise src.error(values.name, "a variable-length pool stores its values flat (1-D)")
        pools.append(_Pool(values, frames, ops, starts, lengths))
    return names, pools


def _segments(src: _Source, pools: list[_Pool], series: np.ndarray) -> np.ndarray:
    """``/segments`` sorted by series, each row checked: an existing series and pool of the
    series' family, a sample range inside the pool, no two segments sharing a sample."""
    seg = src.table("segments", SEGMENT_DTYPE)
    n_series, n_pools = len(series), len(pools)
    sid, pool, start, count = seg["series"], seg["pool"], seg["start"], seg["count"]
    bad = (sid < 0) | (sid >= n_series) | (pool < 0) | (pool >= n_pools) | (start < 0) | (count < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise src.error(
            f"/segments row {i}",
            f"series {int(sid[i])}, pool {int(pool[i])}, samples {int(start[i])}+{int(count[i])}: "
            f"expected a series 0..{n_series - 1}, a pool 0..{n_pools - 1} and a non-negative range",
        )
    rows = np.array([p.frames.shape[0] for p in pools], np.int64)
    listy = np.array([p.ops is not None for p in pools], bool)
    over = count > rows[pool] - start if len(seg) else np.zeros(0, bool)
    if over.any():
        i = int(np.flatnonzero(over)[0])
        raise src.error(f"/segments row {i}", f"samples {int(start[i])}..{int(start[i] + count[i])} "
                                              f"of pool {int(pool[i])}, which has {int(rows[pool[i]])}")
    family = series["family"][sid] == FAMILY_LIST
    wrong = family != listy[pool]
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        raise src.error(f"/segments row {i}", f"series {int(sid[i])} of family {int(family[i])} stored "
                                              f"in pool {int(pool[i])} of the other family")
    nonempty = np.flatnonzero(count > 0)  # an empty segment shares no sample
    by_place = nonempty[np.lexsort((start[nonempty], pool[nonempty]))]
    p_s, s_s, e_s = pool[by_place], start[by_place], (start + count)[by_place]
    shared = (p_s[1:] == p_s[:-1]) & (s_s[1:] < e_s[:-1])
    if shared.any():
        i = int(by_place[1:][shared][0])
        raise src.error(f"/segments row {i}", f"its samples overlap another segment's in pool {int(pool[i])}")
    return seg[np.argsort(sid, kind="stable")]


class _H5Samples:
    """Sample access of one open HDF5 recording: per segment on demand, or from whole pools
    read in bulk by :meth:`preload` (one read per dataset instead of one per segment: a chunk
    holds the samples of many series and would otherwise be decompressed once per series).

    Reads go through the recording's :class:`_Source`, so a damaged pool fails as PvdError
    naming file and dataset, at open or at any later read."""

    _FIELDS = ("values", "frames", "ops", "starts", "lengths")

    def __init__(self, src: _Source, pool_names: list[str], pools: list[_Pool], seg: np.ndarray,
                 seg_first: np.ndarray) -> None:
        self.src = src
        self.f = src.f
        self.pool_names = pool_names
        self.seg = seg
        self.seg_first = seg_first
        self.pools: dict[int, _Pool] = dict(enumerate(pools))
        self.loaded = False
        # Rows of each pool that segments use (an interrupted file may hold more, half written).
        used = np.zeros(len(pools), np.int64)
        if len(seg):
            np.maximum.at(used, seg["pool"], seg["start"] + seg["count"])
        self.used = used

    def pool(self, p: int) -> _Pool:
        return self.pools[p]

    def load(self, sid: int) -> Samples:
        seg = self.seg
        parts = []
        for j in range(self.seg_first[sid], self.seg_first[sid + 1]):
            p, a, c = int(seg["pool"][j]), int(seg["start"][j]), int(seg["count"][j])
            parts.append(_read_segment(self.pool(p), a, c, self.src))
        if not parts:
            return Samples(np.zeros(0, np.int32), fixed=np.zeros((0, 0), np.uint8))
        return Samples.concat(parts)

    def preload(self, other: RecordingData | None = None) -> None:
        """Read every pool dataset whole (the rows its segments use). With ``other`` backed by
        an HDF5 file that was preloaded, chunks stored with the same bytes and filters in both
        files are copied from ``other``'s arrays instead of being decompressed (equal stored
        bytes decode to equal data); everything else is read from this file."""
        if self.loaded:
            return
        partner = getattr(other.preload, "__self__", None) if other is not None else None
        if not isinstance(partner, _H5Samples) or not partner.loaded:
            partner = None
        src = self.src
        for p in range(len(self.pool_names)):
            cur = self.pool(p)
            twin = None
            if partner is not None and self.pool_names[p] in partner.pool_names:
                twin = partner.pools.get(partner.pool_names.index(self.pool_names[p]))
                twin = twin if twin is not None and isinstance(twin.values, np.ndarray) else None
            n = int(self.used[p])
            arrays: dict[str, np.ndarray | None] = {}
            for k in ("frames", "ops", "starts", "lengths", "values"):
                ds = getattr(cur, k)
                if ds is None:
                    arrays[k] = None
                    continue
                hi = n
                if k == "values" and cur.starts is not None:
                    hi = _var_extent(src, ds, arrays["starts"], arrays["lengths"])
                twin_arr = getattr(twin, k) if twin is not None else None
                twin_ds = partner.f.get(ds.name) if partner is not None else None
                if hi == ds.shape[0] and twin_arr is not None:
                    src.check_size(ds, 0, hi)
                    try:
                        arrays[k] = _read_whole(ds, twin_arr, twin_ds)
                    except _H5_ERRORS as exc:
                        raise src.error(ds.name, f"cannot read it ({exc})") from None
                else:
                    arrays[k] = src.read(ds, 0, hi)
            self.pools[p] = _Pool(**arrays)
        self.loaded = True


def _var_extent(src: _Source, values: h5py.Dataset, starts: np.ndarray | None,
                lengths: np.ndarray | None) -> int:
    """Elements of a variable pool's ``values`` that its (used) samples cover, after checking
    each sample lies inside ``values``."""
    if starts is None or lengths is None or not len(starts):
        return 0
    _check_spans(src, values, starts.astype(np.int64), lengths.astype(np.int64), 0)
    return int((starts.astype(np.int64) + lengths.astype(np.int64)).max())


def _check_spans(src: _Source, values: h5py.Dataset | np.ndarray, starts: np.ndarray,
                 lengths: np.ndarray, row0: int) -> None:
    """Each sample ``values[starts[i] : starts[i] + lengths[i]]`` must lie inside ``values``."""
    m = values.shape[0]
    bad = (starts < 0) | (lengths < 0) | (starts > m) | (lengths > m - starts)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        name = values.name if isinstance(values, h5py.Dataset) else "values"
        raise src.error(name, f"sample {row0 + i} spans elements {int(starts[i])}+{int(lengths[i])}, "
                              f"outside the {m} stored")


def _same_layout(ds: h5py.Dataset, other: h5py.Dataset) -> bool:
    """True when two datasets store the same shape in the same chunk grid with the same
    filters, chunked along the first axis only (so a chunk is a run of whole rows)."""
    if not isinstance(other, h5py.Dataset) or ds.chunks is None:
        return False
    return (ds.shape == other.shape and ds.dtype == other.dtype and ds.chunks == other.chunks
            and ds.chunks[1:] == ds.shape[1:] and ds.compression == other.compression
            and ds.compression_opts == other.compression_opts and ds.shuffle == other.shuffle
            and ds.fletcher32 == other.fletcher32 and ds.scaleoffset is None and other.scaleoffset is None)


def _read_whole(ds: h5py.Dataset, twin: np.ndarray | None, twin_ds: h5py.Dataset | None) -> np.ndarray:
    """The whole content of ``ds``; rows of chunks stored byte-identically in ``twin_ds``
    (whose content is ``twin``) are copied from ``twin`` instead of decompressed."""
    if twin is None or twin_ds is None or not _same_layout(ds, twin_ds) or twin.shape != ds.shape:
        return ds[()]
    out = np.empty(ds.shape, ds.dtype)
    rows = ds.chunks[0]
    n_rows = ds.shape[0]
    done = np.zeros(-(-n_rows // rows) if rows else 0, bool)
    me, them = ds.id, twin_ds.id
    for i in range(me.get_num_chunks()):
        off = me.get_chunk_info(i).chunk_offset
        try:
            mine, theirs = me.read_direct_chunk(off), them.read_direct_chunk(off)
        except (KeyError, ValueError, OSError):  # chunk not allocated in the other file
            continue
        if mine == theirs:
            lo = off[0]
            hi = min(lo + rows, n_rows)
            out[lo:hi] = twin[lo:hi]
            done[lo // rows] = True
    todo = np.flatnonzero(~done)
    if len(todo):  # runs of chunks that differ (or are not stored) are read normally
        breaks = np.flatnonzero(np.diff(todo) != 1) + 1
        for run in np.split(todo, breaks):
            lo, hi = int(run[0]) * rows, min((int(run[-1]) + 1) * rows, n_rows)
            out[lo:hi] = ds[lo:hi]
    return out


def open_h5_data(source: str | os.PathLike | bytes, name: str) -> RecordingData:
    """The :class:`~pvdkit.recording.RecordingData` of an HDF5 recording: tables are read now,
    samples on demand (one slice per segment of the series asked for).

    Any damage — at open or in a later sample read — raises :class:`PvdError` naming the file
    and the dataset or row; nothing is allocated beyond what the file's stored bytes decode to.
    """
    f = _open_file(source, name)
    try:
        src = _Source(f, name)
        version = _check_source(src)
        return _read(src, version)
    except BaseException:
        f.close()
        raise


def _read(src: _Source, version: Version) -> RecordingData:
    f, name, limit = src.f, src.name, src.limit
    kinds_ds = src.dataset("log/kind")
    if kinds_ds.dtype.kind not in "iu":
        raise src.error(kinds_ds.name, f"is {_type_name(kinds_ds.dtype)}, expected uint8 command codes")
    n_commands = src.rows(kinds_ds, "log/kind")
    src.check_size(kinds_ds, 0, n_commands)  # a command count the file can hold (nothing read)
    series_ds = src.dataset("log/series")
    src.check_size(series_ds, 0, src.rows(series_ds, "log/series"))
    counts_cache = _counts_cache(src) if _truth(src.attr(f, "complete")) else None
    regs = [r for _, r in _registrations(src)]

    o = src.table("objects", OBJECT_DTYPE)
    if limit is not None:  # an end recorded after the last commit has not happened yet
        late = o["destroy_command"] >= n_commands
        o["destroyed"][late], o["destroy_command"][late] = np.iinfo(np.int32).max, -1
    objects = ObjectTable(
        o["handle"].astype(np.uint64),
        o["class"].astype(np.uint32),
        o["context"].astype(np.uint64),
        [_dec(n) for n in o["name"].tolist()],
        o["created"].astype(np.int32),
        o["destroyed"].astype(np.int32),
        o["create_command"].astype(np.int64),
        o["destroy_command"].astype(np.int64),
    )
    fr = src.table("frames", FRAME_DTYPE)
    frames = FrameTable(
        fr["context"].astype(np.uint64),
        fr["start"].astype(np.uint64),
        fr["stop"].astype(np.uint64),
        fr["stopped"].astype(bool),
        fr["command"].astype(np.int64),
    )
    messages = [
        Message(
            int(r["context"]),
            _dec(r["message"]),
            _dec(r["file"]),
            int(r["line"]),
            int(r["type"]),
            int(r["class"]),
            int(r["frame"]),
            int(r["command"]),
        )
        for r in src.table("messages", MESSAGE_DTYPE)
    ]
    paths = _paths(src)
    s = _series(src, len(objects), len(paths))
    pool_names, pools = _pools(src)
    seg = _segments(src, pools, s)
    counts = np.bincount(seg["series"], weights=seg["count"], minlength=len(s)).astype(np.int64)
    series = SeriesTable(
        s["object"].astype(np.int64),
        s["path"].astype(np.int32),
        s["family"].astype(np.uint8),
        s["context"].astype(np.uint64),
        counts,
    )
    seg_first = np.searchsorted(seg["series"], np.arange(len(s) + 1))
    samples = _H5Samples(src, pool_names, pools, seg, seg_first)

    def count_commands() -> dict[str, int]:
        if counts_cache is not None:
            return dict(counts_cache)
        kinds = _command_codes(src, kinds_ds, n_commands)
        per_kind = np.bincount(kinds, minlength=int(Command.RECORD_MESSAGE) + 1)
        a = src.table("registry/attributes", ATTRIBUTE_DTYPE)
        plain = a[a["command"] == Command.REGISTER_ATTRIBUTE]["data_type"]
        reg = {
            "register_attribute": int(
                np.count_nonzero((plain != DataType.ENUM_VALUE) & (plain != DataType.FLAGS_WORD))
            ),
            "register_enum": int(np.count_nonzero(plain == DataType.ENUM_VALUE)),
            "register_flags": int(np.count_nonzero(plain == DataType.FLAGS_WORD)),
        }
        return _counts_from(per_kind, reg)

    err = src.attr_str(f, "error") or None
    incomplete = _incomplete_reason(f, src)
    if incomplete is not None and err is None:
        err = f"{name}: incomplete recording: {incomplete}; it holds the frames written before"
    return RecordingData(
        version=version,
        source_name=name,
        registrations=regs,
        objects=objects,
        frames=frames,
        messages=messages,
        paths=paths,
        series=series,
        counts=count_commands,
        load_samples=samples.load,
        error=err,
        close=f.close,
        n_commands=n_commands,
        preload=samples.preload,
    )


def _series(src: _Source, n_objects: int, n_paths: int) -> np.ndarray:
    """``/series``, each row naming an existing object and path and a family 0 or 1."""
    s = src.table("series", SERIES_DTYPE)
    bad = (s["object"] < 0) | (s["object"] >= n_objects) | (s["path"] < 0) | (s["path"] >= n_paths) | (
        s["family"] > FAMILY_LIST
    )
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise src.error(
            f"/series row {i}",
            f"object {int(s['object'][i])}, path {int(s['path'][i])}, family {int(s['family'][i])}: "
            f"expected an object 0..{n_objects - 1}, a path 0..{n_paths - 1} and family 0 or 1",
        )
    return s


def _counts_cache(src: _Source) -> dict[str, int] | None:
    """The root attribute ``command_counts`` when it is what the writer stores (a JSON object
    of non-negative counts under :data:`pvdkit.ovd.COUNT_KEYS`), else None (counted instead)."""
    from pvdkit.ovd.tokenizer import COUNT_KEYS

    text = src.attr_str(src.f, "command_counts")
    if text is None:
        return None
    try:
        d = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(d, dict) or set(d) != set(COUNT_KEYS):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in d.values()):
        return None
    return {k: d[k] for k in COUNT_KEYS}


def _command_codes(src: _Source, kinds_ds: h5py.Dataset, n: int) -> np.ndarray:
    """The first ``n`` command codes of ``/log/kind`` as uint8, each a real command code."""
    kinds = src.read(kinds_ds, 0, n)
    bad = (kinds < Command.REGISTER_CLASS) | (kinds > Command.RECORD_MESSAGE)
    bad |= kinds == Command.REGISTER_ENUM
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise src.error(f"{kinds_ds.name} row {i}", f"command code {int(kinds[i])} (expected 1 or 3..13)")
    return kinds.astype(np.uint8)


def _pool_order(f: h5py.File) -> list[str]:
    """Pool names by pool id (creation order, kept in the attribute ``order`` of ``/pools``)."""
    return _pool_order_checked(_Source(f, f.filename, limit=None))


def _pool_order_checked(src: _Source) -> list[str]:
    text = src.attr_str(src.group("pools"), "order")
    if text is None:
        return []
    try:
        names = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise src.error("attribute 'order' of /pools", f"is not JSON ({exc})") from None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise src.error("attribute 'order' of /pools", "is not a JSON list of pool names")
    return names


def _read_segment(p: _Pool, a: int, c: int, src: _Source) -> Samples:
    """Samples ``a .. a + c`` of pool ``p`` (a checked segment), read and checked: a variable
    pool's samples must follow each other in ``values`` and lie inside it."""

    def rows(x: h5py.Dataset | np.ndarray, lo: int, hi: int) -> np.ndarray:
        return src.read(x, lo, hi) if isinstance(x, h5py.Dataset) else x[lo:hi]

    frames = rows(p.frames, a, a + c).astype(np.int32)
    ops = rows(p.ops, a, a + c).astype(np.uint8) if p.ops is not None else None
    item = p.values.dtype.itemsize
    if p.starts is None:
        row = item * _prod(p.values.shape[1:])
        vals = rows(p.values, a, a + c).astype(p.values.dtype.newbyteorder("<"), copy=False)
        raw = np.ascontiguousarray(vals).view(np.uint8).reshape(c, row)
        return Samples(frames, fixed=raw, ops=ops)
    if c == 0:
        return Samples(frames, flat=np.zeros(0, np.uint8), offsets=np.zeros(1, np.int64), ops=ops)
    starts = rows(p.starts, a, a + c).astype(np.int64)
    lengths = rows(p.lengths, a, a + c).astype(np.int64)
    _check_spans(src, p.values, starts, lengths, a)
    if (starts[1:] != starts[:-1] + lengths[:-1]).any():
        i = int(np.flatnonzero(starts[1:] != starts[:-1] + lengths[:-1])[0]) + 1
        name = p.starts.name if isinstance(p.starts, h5py.Dataset) else "starts"
        raise src.error(name, f"sample {a + i} does not follow sample {a + i - 1} in the pool's values "
                              "(the samples of a segment are stored one after the other)")
    lo = int(starts[0])
    hi = int(starts[-1] + lengths[-1])
    vals = rows(p.values, lo, hi).astype(p.values.dtype.newbyteorder("<"), copy=False)
    flat = np.ascontiguousarray(vals).view(np.uint8)
    offsets = np.concatenate([(starts - lo) * item, [(hi - lo) * item]]).astype(np.int64)
    return Samples(frames, flat=flat, offsets=offsets, ops=ops)


# ============================================================================================
# HDF5 → .ovd bytes
# ============================================================================================


def h5_to_ovd_bytes(
    source: str | os.PathLike | bytes | h5py.File, name: str | None = None, progress: Progress | None = None
) -> bytes:
    """Rebuild the exact ``.ovd`` bytes an HDF5 recording was made from (header, every command in
    its original order, and the verbatim damaged tail if there was one).

    Holds the samples in memory (about the size of the ``.ovd``). A damaged or hostile file
    raises :class:`PvdError` naming the file and dataset; the rebuilt stream may be at most
    ``MAX_EXPANSION`` × the file's size (the compression bound of its datasets).
    """
    own = not isinstance(source, h5py.File)
    label = name or (
        source.filename
        if isinstance(source, h5py.File)
        else "<memory>"
        if isinstance(source, (bytes, bytearray))
        else os.fspath(source)
    )
    f = _open_file(source, label) if own else source
    try:
        src = _Source(f, label)
        version = _check_source(src)
        return _rebuild(src, version, progress)
    finally:
        if own:
            f.close()


def _rebuild(src: _Source, version: Version, progress: Progress | None) -> bytes:
    f, label = src.f, src.name
    kinds_ds = src.dataset("log/kind")
    kinds = _command_codes(src, kinds_ds, src.rows(kinds_ds, "log/kind"))
    ser_ds = src.dataset("log/series")
    if ser_ds.dtype.kind not in "iu":
        raise src.error(ser_ds.name, f"is {_type_name(ser_ds.dtype)}, expected int32 series ids")
    ser = src.read(ser_ds, 0, src.rows(ser_ds, "log/series")).astype(np.int64)
    n = len(kinds)
    if len(ser) != n:
        raise src.error(ser_ds.name, f"has {len(ser)} entries, /log/kind {n} (one per command)")
    is_attr = (kinds >= Command.SET_ATTRIBUTE) & (kinds <= Command.REMOVE_FROM_UNIQUE_LIST_ATTRIBUTE)

    # Pre-encoded records of every other command kind, in stream order per kind.
    regs = [r for _, r in _registrations(src)]
    reg_bytes = [r.encode(version) for r in regs]
    o = src.table("objects", OBJECT_DTYPE)
    created = o[o["create_command"] >= 0]
    created = created[np.argsort(created["create_command"], kind="stable")]
    creates = [
        CreateObject(int(r["context"]), int(r["class"]), int(r["handle"]), _dec(r["name"])).encode(version)
        for r in created
    ]
    d = src.table("destroys", DESTROY_DTYPE)
    fr = src.table("frames", FRAME_DTYPE)
    has_stops = src.get("frame_stops") is not None
    st = src.table("frame_stops", STOP_DTYPE) if has_stops else np.zeros(0, STOP_DTYPE)
    msgs = [
        RecordMessage(
            int(r["context"]),
            _dec(r["message"]),
            _dec(r["file"]),
            int(r["line"]),
            int(r["type"]),
            int(r["class"]),
        ).encode(version)
        for r in src.table("messages", MESSAGE_DTYPE)
    ]
    pair = np.dtype([("c", "u1"), ("a", "<u8"), ("b", "<u8")])

    def pairs(code: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        arr = np.zeros(len(a), pair)
        arr["c"], arr["a"], arr["b"] = code, a, b
        return arr.view(np.uint8).reshape(len(a), 17)

    per_kind_blobs = {
        "reg": reg_bytes,
        int(Command.CREATE_OBJECT): creates,
        int(Command.RECORD_MESSAGE): msgs,
        int(Command.DESTROY_OBJECT): pairs(Command.DESTROY_OBJECT, d["context"], d["handle"]),
        int(Command.START_FRAME): pairs(Command.START_FRAME, fr["context"], fr["start"]),
        int(Command.STOP_FRAME): pairs(Command.STOP_FRAME, st["context"], st["time"]),
    }
    group_of_kind = {
        int(Command.REGISTER_CLASS): "reg",
        int(Command.REGISTER_ATTRIBUTE): "reg",
        int(Command.REGISTER_CLASS_ATTRIBUTE): "reg",
        int(Command.REGISTER_UNIQUE_LIST_ATTRIBUTE): "reg",
    }
    rec_len = np.zeros(n, np.int64)
    rec_off = np.zeros(n, np.int64)
    blobs: list[np.ndarray] = []
    base = 0
    for key, items in per_kind_blobs.items():
        ks = [k for k, g in group_of_kind.items() if g == key] if key == "reg" else [key]
        rows = np.flatnonzero(np.isin(kinds, ks))
        if isinstance(items, np.ndarray):
            lens = np.full(len(items), 17, np.int64)
            flat = items.reshape(-1)
        else:
            lens = np.array([len(b) for b in items], np.int64)
            flat = np.frombuffer(b"".join(items), np.uint8)
        if len(rows) != len(lens):
            raise PvdError(
                f"{label}: the log has {len(rows)} commands of kind {ks} but the tables hold {len(lens)}"
            )
        rec_len[rows] = lens
        rec_off[rows] = base + np.concatenate([[0], np.cumsum(lens)[:-1]]) if len(lens) else 0
        blobs.append(flat)
        base += len(flat)
    rec_src = np.concatenate(blobs) if blobs else np.zeros(0, np.uint8)

    # Attribute commands: object, path, context of their series; sample j of the series.
    paths = [np.asarray(p, np.uint32) for p in _paths(src)]
    s = _series(src, len(o), len(paths))
    objs_handle = o["handle"].astype(np.uint64)
    path_depth = np.array([len(p) for p in paths], np.int64)
    path_start = (
        np.concatenate([[0], np.cumsum(path_depth)[:-1]]).astype(np.int64)
        if len(paths)
        else np.zeros(0, np.int64)
    )
    path_flat = np.concatenate(paths).astype(np.uint32) if paths else np.zeros(0, np.uint32)
    a_rows = np.flatnonzero(is_attr)
    a_sid = ser[a_rows]
    if len(a_rows) and (a_sid.min() < 0 or a_sid.max() >= len(s)):
        raise PvdError(f"{label}: /log/series refers to series outside /series (0..{len(s) - 1})")
    a_idx = np.zeros(n, np.int64)
    a_idx[a_rows] = np.arange(len(a_rows))
    a_ctx = s["context"].astype(np.uint64)[a_sid]
    exc = src.table("log/context_exceptions", EXCEPTION_DTYPE)
    if len(exc):
        ec = exc["command"]
        bad = (ec < 0) | (ec >= n)
        bad[~bad] = ~is_attr[ec[~bad]]
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise src.error(f"/log/context_exceptions row {i}",
                            f"command {int(ec[i])} is not an attribute command of the log")
        a_ctx[a_idx[ec]] = exc["context"]
    a_obj = objs_handle[s["object"][a_sid]]
    a_path = s["path"][a_sid]
    a_depth = path_depth[a_path].astype(np.uint8)
    a_path_start = path_start[a_path]

    data_flat, series_samples, series_start, samp_off, samp_len = _samples_for_rebuild(src, s)
    # Sample order: the j-th command of a series is its j-th sample.
    grouped_pos, starts = _kernels()._group_rows(a_sid, np.arange(len(a_rows), dtype=np.int64), len(s))
    if not np.array_equal(np.diff(starts), np.diff(series_start)):
        raise PvdError(f"{label}: sample counts in /segments do not match the commands in /log/series")
    sample_of_cmd = np.empty(len(a_rows), np.int64)
    sample_of_cmd[grouped_pos] = series_samples
    a_data_off = samp_off[sample_of_cmd]
    a_data_len = samp_len[sample_of_cmd]

    lengths = rec_len.copy()
    lengths[a_rows] = 18 + 4 * a_depth.astype(np.int64) + 4 + a_data_len
    cmd_off = np.empty(n, np.int64)
    if n:
        cmd_off[0] = HEADER_SIZE
        np.cumsum(lengths[:-1], out=cmd_off[1:])
        cmd_off[1:] += HEADER_SIZE
    tail = b""
    if src.get("log/tail") is not None:
        tail_ds = src.dataset("log/tail")
        tail = src.read(tail_ds).astype(np.uint8, copy=False).tobytes()
    total = HEADER_SIZE + int(lengths.sum()) + len(tail)
    try:
        file_size = f.id.get_filesize()
    except _H5_ERRORS as exc:
        raise src.error("file", f"cannot tell its size ({exc})") from None
    if total > MAX_EXPANSION * file_size + READ_SLACK_BYTES:
        raise PvdError(
            f"{label}: the .ovd this recording describes would be {total:,} bytes, more than "
            f"{MAX_EXPANSION} × the file's {file_size:,} bytes — a damaged or hostile file"
        )
    out = np.empty(total, np.uint8)
    out[:HEADER_SIZE] = np.frombuffer(encode_header(version), np.uint8)
    _kernels()._emit(
        out,
        cmd_off,
        kinds,
        is_attr.astype(np.uint8),
        rec_src,
        rec_off,
        rec_len,
        a_idx,
        a_ctx,
        a_obj,
        a_path_start,
        a_depth,
        path_flat,
        a_data_off,
        a_data_len,
        data_flat,
    )
    if tail:
        out[total - len(tail) :] = np.frombuffer(tail, np.uint8)
    if progress is not None:
        progress(1.0)
    return out.tobytes()


def _samples_for_rebuild(src: _Source, s: np.ndarray):
    """Every sample's bytes in one flat array, and for each series its samples in order.

    Returns ``data_flat``, ``series_samples``, ``series_start`` (global sample ids of series g are
    ``series_samples[series_start[g]:series_start[g+1]]``), and each sample's byte offset and
    length in ``data_flat``. Reads each pool up to the rows its segments use; checks that every
    sample lies inside its pool and that no two samples share bytes (so the rebuilt stream is
    no larger than the data read).
    """
    names, pools = _pools(src)
    seg = _segments(src, pools, s)
    used = np.zeros(len(pools), np.int64)
    if len(seg):
        np.maximum.at(used, seg["pool"], seg["start"] + seg["count"])
    flats, offs, lens = [], [], []
    pool_base = np.zeros(len(names) + 1, np.int64)
    byte_base = 0
    for p, pool in enumerate(pools):
        nsamp = int(used[p])
        if pool.starts is None:
            vals = src.read(pool.values, 0, nsamp)
            raw = np.ascontiguousarray(vals.astype(vals.dtype.newbyteorder("<"), copy=False)).view(np.uint8)
            raw = raw.reshape(-1)
            w = raw.size // nsamp if nsamp else 0
            offs.append(np.arange(nsamp, dtype=np.int64) * w + byte_base)
            lens.append(np.full(nsamp, w, np.int64))
        else:
            item = pool.values.dtype.itemsize
            st = src.read(pool.starts, 0, nsamp).astype(np.int64)
            ln = src.read(pool.lengths, 0, nsamp).astype(np.int64)
            _check_spans(src, pool.values, st, ln, 0)
            full = np.flatnonzero(ln > 0)  # an empty sample shares no element
            order = full[np.argsort(st[full], kind="stable")]
            if len(order) > 1 and (st[order][1:] < (st + ln)[order][:-1]).any():
                raise src.error(pool.starts.name, "two samples share elements of the pool's values")
            extent = int((st + ln).max()) if nsamp else 0
            vals = src.read(pool.values, 0, extent)
            raw = np.ascontiguousarray(vals.astype(vals.dtype.newbyteorder("<"), copy=False)).view(np.uint8)
            raw = raw.reshape(-1)
            offs.append(st * item + byte_base)
            lens.append(ln * item)
        flats.append(raw)
        byte_base += raw.size
        pool_base[p + 1] = pool_base[p] + nsamp
    counts = seg["count"].astype(np.int64)
    first = pool_base[seg["pool"]] + seg["start"]
    # Expand each segment into its sample ids (segments do not overlap: bounded by the pools).
    seg_pos = np.repeat(
        np.concatenate([[0], np.cumsum(counts)[:-1]]) if len(counts) else np.zeros(0, np.int64), counts
    )
    series_samples = np.repeat(first, counts) + (np.arange(int(counts.sum())) - seg_pos)
    per_series = np.bincount(seg["series"], weights=counts, minlength=len(s)).astype(np.int64)
    series_start = np.concatenate([[0], np.cumsum(per_series)])
    data_flat = np.concatenate(flats) if flats else np.zeros(0, np.uint8)
    samp_off = np.concatenate(offs).astype(np.int64) if offs else np.zeros(0, np.int64)
    samp_len = np.concatenate(lens).astype(np.int64) if lens else np.zeros(0, np.int64)
    return data_flat, series_samples.astype(np.int64), series_start, samp_off, samp_len


def _all_samples(f: h5py.File, s: np.ndarray, label: str, limit: dict[str, int] | None = None):
    """:func:`_samples_for_rebuild` for an open file (kept for callers of the old name)."""
    return _samples_for_rebuild(_Source(f, label, limit=limit), s)


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
    from pvdkit.recording import IndexBuilder

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
