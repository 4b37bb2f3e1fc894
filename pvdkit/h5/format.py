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

import io
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import h5py
import numpy as np

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


def _enc(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _dec(raw: bytes | str) -> str:
    return raw if isinstance(raw, str) else bytes(raw).decode("utf-8", "surrogateescape")


# ============================================================================================
# Writing
# ============================================================================================


class H5Writer:
    """Appends index :class:`~pvdkit.recording.Batch` es to an HDF5 recording.

    One ``append`` call writes a whole batch with a handful of h5py calls per table and pool
    (never one per command). ``close()`` (or ``finish``) stores the damaged tail, if any, and
    the command counts.
    """

    def __init__(
        self,
        target: str | os.PathLike | h5py.File,
        version: Version,
        *,
        source_name: str = "",
        compression: str | None = "gzip",
        compression_opts: int | None = 4,
    ) -> None:
        if isinstance(target, h5py.File):
            self.file = target
            self._own = False
        else:
            path = os.fspath(target)
            try:
                self.file = h5py.File(path, "w", libver=("v108", "latest"))
            except OSError as exc:
                raise PvdError(f"cannot create {path}: {exc}") from None
            self._own = True
        self.version = tuple(version)
        self._comp = (
            dict(compression=compression, compression_opts=compression_opts, shuffle=compression is not None)
            if compression
            else {}
        )
        f = self.file
        f.attrs["format"] = FORMAT_NAME
        f.attrs["format_version"] = FORMAT_VERSION
        f.attrs["ovd_version"] = np.asarray(self.version, np.uint32)
        f.attrs["source"] = source_name
        f.attrs["error"] = ""
        f.attrs["complete"] = False
        self._tables: dict[str, h5py.Dataset] = {}
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
        ):
            self._tables[name] = self._dataset(name, dtype, (0,), chunk_bytes=1 << 14)
        self._tables["log/kind"] = self._dataset("log/kind", np.dtype("u1"), (0,), chunk_bytes=1 << 17)
        self._tables["log/series"] = self._dataset("log/series", np.dtype("<i4"), (0,), chunk_bytes=1 << 17)
        f.create_group("pools")
        self._pools: dict[tuple[int, int, int], int] = {}
        self._pool_groups: list[h5py.Group] = []
        # What storage each path needs: per path id (grown as paths arrive).
        self._attr_info: dict[int, tuple[str, int]] = {}  # attribute handle -> (kind, dtype code)
        self._names: dict[int, str] = {}  # attribute handle -> name
        self._path_handles: list[tuple[int, ...]] = []
        self._series_family = np.zeros(0, np.uint8)
        self._series_path = np.zeros(0, np.int32)
        self._counts = np.zeros(int(Command.RECORD_MESSAGE) + 1, np.int64)
        self._reg_counts = {"register_attribute": 0, "register_enum": 0, "register_flags": 0}
        self.n_commands = 0
        self.closed = False

    # ------------------------------------------------------------------ helpers

    def _dataset(
        self, name: str, dtype: np.dtype, shape: tuple[int, ...], *, chunk_bytes: int, compress: bool = True
    ) -> h5py.Dataset:
        row = max(dtype.itemsize * int(np.prod(shape[1:], dtype=np.int64)), 1)
        chunk = (max(64, chunk_bytes // row), *shape[1:])
        return self.file.create_dataset(
            name,
            shape=shape,
            maxshape=(None, *shape[1:]),
            dtype=dtype,
            chunks=chunk,
            **(self._comp if compress else {}),
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
        """Write one batch (see :class:`~pvdkit.recording.Batch`)."""
        if self.closed:
            raise PvdError(f"{self.file.filename}: append after the recording was closed")
        self._registrations(batch.registrations)
        self._objects(batch)
        self._frames(batch)
        self._messages(batch.messages)
        self._paths(batch.paths)
        s = batch.series
        rows = np.zeros(len(s), SERIES_DTYPE)
        rows["object"], rows["path"], rows["family"], rows["context"] = s.object, s.path, s.family, s.context
        self._append(self._tables["series"], rows)
        self._samples(batch, progress)
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

    def _registrations(self, regs: Sequence[tuple[int, RegisterClass | AttributeRegistration]]) -> None:
        from pvdkit.ovd.tokenizer import NO_DATA_TYPE

        classes, attrs = [], []
        for index, r in regs:
            if isinstance(r, RegisterClass):
                classes.append((r.class_handle, r.base_class, _enc(r.name), index))
                continue
            if isinstance(r, RegisterEnumValue):
                row = (
                    Command.REGISTER_ATTRIBUTE,
                    r.class_handle,
                    r.attribute_handle,
                    DataType.ENUM_VALUE,
                    r.value,
                )
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
                    Command.REGISTER_UNIQUE_LIST_ATTRIBUTE,
                    r.class_handle,
                    r.attribute_handle,
                    r.data_type,
                    0,
                )
                self._attr_info[r.attribute_handle] = _value_info(r.data_type)
            else:
                row = (
                    Command.REGISTER_ATTRIBUTE,
                    r.class_handle,
                    r.attribute_handle,
                    r.data_type,
                    r.nb_elements,
                )
                self._attr_info[r.attribute_handle] = _value_info(r.data_type)
                self._reg_counts["register_attribute"] += 1
            self._names[r.attribute_handle] = r.name
            attrs.append((*(int(v) for v in row), _enc(r.name), index))
        self._append(self._tables["registry/classes"], np.array(classes, CLASS_DTYPE))
        self._append(self._tables["registry/attributes"], np.array(attrs, ATTRIBUTE_DTYPE))

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

    def _paths(self, paths: Sequence[tuple[int, ...]]) -> None:
        rows = np.zeros(len(paths), PATH_DTYPE)
        for i, p in enumerate(paths):
            rows[i] = (np.asarray(p, "<u4"), _enc(".".join(self._names.get(h, str(h)) for h in p)))
        self._path_handles.extend(paths)
        self._append(self._tables["paths"], rows)

    # ------------------------------------------------------------------ samples

    def _samples(self, batch: Batch, progress: Progress | None) -> None:
        table, buf = batch.table, batch.buffer
        n_series = batch.series0 + len(batch.series)
        if not len(batch.attr_rows):
            self._series_family = np.concatenate([self._series_family, batch.series.family])
            self._series_path = np.concatenate([self._series_path, batch.series.path])
            return
        rows, starts = _kernels()._group_rows(batch.attr_series, batch.attr_rows, n_series)
        counts = np.diff(starts)
        present = np.flatnonzero(counts)
        first = starts[present]
        sizes = table.data_size[rows].astype(np.int64)
        smin = np.minimum.reduceat(sizes, first)
        smax = np.maximum.reduceat(sizes, first)
        sid_family = self._series_family = np.concatenate([self._series_family, batch.series.family])
        sid_path = self._series_path = np.concatenate([self._series_path, batch.series.path])
        # Storage per present series: (family, dtype code, k (-1 = variable)).
        codes = np.empty(len(present), np.int64)
        ks = np.empty(len(present), np.int64)
        for j, sid in enumerate(present.tolist()):
            kind, code = self._attr_info.get(self._path_handles[sid_path[sid]][-1], ("bytes", _BYTES))
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
        fams = sid_family[present]
        pool_of_series = np.full(n_series, -1, np.int64)
        keys = np.stack([fams.astype(np.int64), codes, ks], axis=1)
        uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
        pool_ids = np.array([self._pool(tuple(int(v) for v in u)) for u in uniq], np.int64)
        pool_of_series[present] = pool_ids[inverse.reshape(-1)]
        # Rows ordered by (pool, series, stream order).
        pool_of_row = pool_of_series[np.repeat(np.arange(n_series), counts)]
        rows_p, pstarts = _kernels()._group_rows(pool_of_row, rows, len(self._pool_groups))
        seg_rows = []
        total = len(rows)
        done = 0
        for p in np.unique(pool_ids).tolist():
            prow = rows_p[pstarts[p] : pstarts[p + 1]]
            series_here = present[pool_of_series[present] == p]
            g = self._pool_groups[p]
            base = g["frames"].shape[0]
            seg_counts = counts[series_here]
            seg_start = base + np.concatenate([[0], np.cumsum(seg_counts)[:-1]])
            for sid, st, c in zip(series_here.tolist(), seg_start.tolist(), seg_counts.tolist(), strict=True):
                seg_rows.append((sid, p, st, c))
            for a in range(0, len(prow), _WRITE_SLICE):
                part = prow[a : a + _WRITE_SLICE]
                self._write_pool_rows(p, g, buf, table, part)
                done += len(part)
                if progress is not None:
                    progress(done / total)
        self._append(self._tables["segments"], np.array(seg_rows, SEGMENT_DTYPE))

    def _pool(self, key: tuple[int, int, int]) -> int:
        p = self._pools.get(key)
        if p is not None:
            return p
        family, code, k = key
        name = f"{'list' if family == FAMILY_LIST else 'set'}_{_STORAGE[code]}" + (
            f"x{k}" if k > 0 else "_var"
        )
        g = self.file["pools"].create_group(name)
        g.attrs["family"] = "list" if family == FAMILY_LIST else "set"
        g.attrs["dtype"] = _STORAGE[code]
        g.attrs["count"] = k
        dt = _STORAGE_DTYPE[code]
        if k > 0:
            self._ds(g, "values", dt, (0,) if k == 1 else (0, k))
        else:
            self._ds(g, "values", dt, (0,))
            self._ds(g, "starts", np.dtype("<i8"), (0,))
            self._ds(g, "lengths", np.dtype("<i8"), (0,))
        self._ds(g, "frames", np.dtype("<i4"), (0,))
        if family == FAMILY_LIST:
            self._ds(g, "ops", np.dtype("u1"), (0,))
        p = self._pools[key] = len(self._pool_groups)
        self._pool_groups.append(g)
        self.file["pools"].attrs["order"] = json.dumps(
            [grp.name.rsplit("/", 1)[-1] for grp in self._pool_groups]
        )
        return p

    def _ds(self, g: h5py.Group, name: str, dtype: np.dtype, shape: tuple[int, ...]) -> None:
        row = dtype.itemsize * int(np.prod(shape[1:], dtype=np.int64))
        chunk = (max(256, (1 << 17) // max(row, 1)), *shape[1:])
        g.create_dataset(
            name, shape=shape, maxshape=(None, *shape[1:]), dtype=dtype, chunks=chunk, **self._comp
        )

    def _write_pool_rows(self, p: int, g: h5py.Group, buf: np.ndarray, table, rows: np.ndarray) -> None:
        from pvdkit._index_kernels import _gather_fixed, _gather_ragged

        self._append(g["frames"], table.frame[rows].astype(np.int32))
        if "ops" in g:
            self._append(g["ops"], table.kind[rows])
        vals = g["values"]
        dt = vals.dtype
        offs = table.data_offset[rows]
        if g.attrs["count"] > 0:
            size = dt.itemsize * (vals.shape[1] if vals.ndim == 2 else 1)
            data = _gather_fixed(buf, offs, size).view(dt)
            self._append(vals, data.reshape(len(rows), *vals.shape[1:]))
        else:
            flat, starts = _gather_ragged(buf, offs, table.data_size[rows].astype(np.int64))
            data = flat.view(dt)
            n0 = self._append(vals, data)
            self._append(g["starts"], starts[:-1] // dt.itemsize + n0)
            self._append(g["lengths"], np.diff(starts) // dt.itemsize)

    # ------------------------------------------------------------------ end

    def set_tail(self, tail: bytes, error: str | None) -> None:
        """Keep the bytes after the last complete command (verbatim) and the damage message."""
        if "log/tail" in self.file:
            del self.file["log/tail"]
        self.file.create_dataset(
            "log/tail", data=np.frombuffer(tail, np.uint8), **(self._comp if tail else {})
        )
        self.file.attrs["error"] = error or ""

    def counts(self) -> dict[str, int]:
        """Commands written so far under the keys of :data:`pvdkit.ovd.COUNT_KEYS`."""
        return _counts_from(self._counts, self._reg_counts)

    def flush(self) -> None:
        """Record the counts and push everything written so far to disk."""
        if not self.closed:
            self.file.attrs["command_counts"] = json.dumps(self.counts())
            self.file.flush()

    def close(self) -> None:
        """Mark the recording complete, flush and close (idempotent)."""
        if self.closed:
            return
        if "log/tail" not in self.file:
            self.set_tail(b"", self.file.attrs.get("error", "") or None)
        self.file.attrs["complete"] = True
        self.flush()
        self.closed = True
        if self._own:
            self.file.close()


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


def _open_file(source: str | os.PathLike | bytes, name: str) -> h5py.File:
    try:
        if isinstance(source, (bytes, bytearray)):
            return h5py.File(io.BytesIO(bytes(source)), "r")
        return h5py.File(os.fspath(source), "r")
    except OSError as exc:
        raise PvdError(f"cannot open {name} as HDF5: {exc}") from None


def _check(f: h5py.File, name: str) -> None:
    fmt = f.attrs.get("format")
    if isinstance(fmt, bytes):
        fmt = fmt.decode()
    if fmt != FORMAT_NAME:
        raise PvdError(
            f"{name}: an HDF5 file but not a pvdkit recording (root attribute 'format' is "
            f"{fmt!r}, expected {FORMAT_NAME!r})"
        )
    v = int(f.attrs.get("format_version", 0))
    if v > FORMAT_VERSION:
        raise PvdError(
            f"{name}: pvdkit recording format version {v} is newer than this pvdkit reads "
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
        if req not in f:
            raise PvdError(f"{name}: pvdkit recording without its {req!r} dataset (damaged file?)")


def read_registrations(f: h5py.File) -> list[tuple[int, RegisterClass | AttributeRegistration]]:
    """Registration commands as codec dataclasses with their command index, in stream order."""
    out: list[tuple[int, RegisterClass | AttributeRegistration]] = []
    for h, b, n, index in f["registry/classes"][:].tolist():
        out.append((index, RegisterClass(h, _dec(n), b)))
    for cmd, cls, h, dt, extra, n, index in f["registry/attributes"][:].tolist():
        out.append((index, _attribute_registration(cmd, cls, h, dt, extra, _dec(n))))
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


@dataclass
class _Pool:
    """The datasets of one pool, or after :func:`_preload` their whole content as arrays (both
    slice the same way)."""

    values: h5py.Dataset | np.ndarray
    frames: h5py.Dataset | np.ndarray
    ops: h5py.Dataset | np.ndarray | None
    starts: h5py.Dataset | np.ndarray | None
    lengths: h5py.Dataset | np.ndarray | None


class _H5Samples:
    """Sample access of one open HDF5 recording: per segment on demand, or from whole pools
    read in bulk by :meth:`preload` (one read per dataset instead of one per segment: a chunk
    holds the samples of many series and would otherwise be decompressed once per series)."""

    _FIELDS = ("values", "frames", "ops", "starts", "lengths")

    def __init__(self, f: h5py.File, pool_names: list[str], seg: np.ndarray, seg_first: np.ndarray) -> None:
        self.f = f
        self.pool_names = pool_names
        self.seg = seg
        self.seg_first = seg_first
        self.pools: dict[int, _Pool] = {}
        self.loaded = False

    def pool(self, p: int) -> _Pool:
        if p not in self.pools:
            g = self.f["pools"][self.pool_names[p]]
            self.pools[p] = _Pool(*(g.get(k) for k in self._FIELDS))
        return self.pools[p]

    def load(self, sid: int) -> Samples:
        seg = self.seg
        parts = []
        for j in range(self.seg_first[sid], self.seg_first[sid + 1]):
            p, a, c = int(seg["pool"][j]), int(seg["start"][j]), int(seg["count"][j])
            parts.append(_read_segment(self.pool(p), a, c))
        if not parts:
            return Samples(np.zeros(0, np.int32), fixed=np.zeros((0, 0), np.uint8))
        return Samples.concat(parts)

    def preload(self, other: RecordingData | None = None) -> None:
        """Read every pool dataset whole. With ``other`` backed by an HDF5 file that was
        preloaded, chunks stored with the same bytes and filters in both files are copied
        from ``other``'s arrays instead of being decompressed (equal stored bytes decode to
        equal data); everything else is read from this file."""
        if self.loaded:
            return
        partner = getattr(other.preload, "__self__", None) if other is not None else None
        if not isinstance(partner, _H5Samples) or not partner.loaded:
            partner = None
        for p in range(len(self.pool_names)):
            cur = self.pool(p)
            twin = None
            if partner is not None and self.pool_names[p] in partner.pool_names:
                twin = partner.pools.get(partner.pool_names.index(self.pool_names[p]))
                twin = twin if twin is not None and isinstance(twin.values, np.ndarray) else None
            arrays = []
            for k in self._FIELDS:
                ds = getattr(cur, k)
                if ds is None:
                    arrays.append(None)
                    continue
                src = getattr(twin, k) if twin is not None else None
                arrays.append(_read_whole(ds, src, partner.f.get(ds.name) if partner is not None else None))
            self.pools[p] = _Pool(*arrays)
        self.loaded = True


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
    samples on demand (one slice per segment of the series asked for)."""
    f = _open_file(source, name)
    try:
        _check(f, name)
        return _read(f, name)
    except PvdError:
        f.close()
        raise
    except (KeyError, ValueError, OSError, TypeError) as exc:
        f.close()
        raise PvdError(f"{name}: damaged pvdkit recording: {exc}") from None


def _read(f: h5py.File, name: str) -> RecordingData:
    version = tuple(int(v) for v in f.attrs["ovd_version"])
    kinds_ds = f["log/kind"]
    n_commands = kinds_ds.shape[0]
    counts_attr = f.attrs.get("command_counts")
    if counts_attr is not None and f.attrs.get("complete", False):
        counts_cache = json.loads(counts_attr)
    else:
        counts_cache = None
    regs = [r for _, r in read_registrations(f)]

    o = f["objects"][:]
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
    fr = f["frames"][:]
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
        for r in f["messages"][:]
    ]
    paths = [tuple(int(h) for h in p) for p in f["paths"]["handles"]] if f["paths"].shape[0] else []
    s = f["series"][:]
    seg = f["segments"][:]
    order = np.argsort(seg["series"], kind="stable")
    seg = seg[order]
    counts = np.bincount(seg["series"], weights=seg["count"], minlength=len(s)).astype(np.int64)
    series = SeriesTable(
        s["object"].astype(np.int64),
        s["path"].astype(np.int32),
        s["family"].astype(np.uint8),
        s["context"].astype(np.uint64),
        counts,
    )
    seg_first = np.searchsorted(seg["series"], np.arange(len(s) + 1))
    samples = _H5Samples(f, _pool_order(f), seg, seg_first)

    def count_commands() -> dict[str, int]:
        if counts_cache is not None:
            return dict(counts_cache)
        kinds = kinds_ds[:]
        per_kind = np.bincount(kinds, minlength=int(Command.RECORD_MESSAGE) + 1)
        a = f["registry/attributes"][:]
        plain = a[a["command"] == Command.REGISTER_ATTRIBUTE]["data_type"]
        reg = {
            "register_attribute": int(
                np.count_nonzero((plain != DataType.ENUM_VALUE) & (plain != DataType.FLAGS_WORD))
            ),
            "register_enum": int(np.count_nonzero(plain == DataType.ENUM_VALUE)),
            "register_flags": int(np.count_nonzero(plain == DataType.FLAGS_WORD)),
        }
        return _counts_from(per_kind, reg)

    err = f.attrs.get("error", "")
    err = (err.decode() if isinstance(err, bytes) else str(err)) or None
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


def _pool_order(f: h5py.File) -> list[str]:
    """Pool names by pool id (creation order, kept in the root attribute ``pools``)."""
    names = f["pools"].attrs.get("order")
    if names is None:
        return []
    return [n.decode() if isinstance(n, bytes) else str(n) for n in json.loads(names)]


def _read_segment(p: _Pool, a: int, c: int) -> Samples:
    frames = p.frames[a : a + c]
    ops = p.ops[a : a + c] if p.ops is not None else None
    if p.starts is None:
        vals = p.values[a : a + c]
        raw = np.ascontiguousarray(vals).view(np.uint8).reshape(c, -1)
        return Samples(frames, fixed=raw, ops=ops)
    starts = p.starts[a : a + c]
    lengths = p.lengths[a : a + c]
    item = p.values.dtype.itemsize
    if c == 0:
        return Samples(frames, flat=np.zeros(0, np.uint8), offsets=np.zeros(1, np.int64), ops=ops)
    lo = int(starts[0])
    hi = int(starts[-1] + lengths[-1])
    flat = np.ascontiguousarray(p.values[lo:hi]).view(np.uint8)
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

    Holds the samples in memory (about the size of the ``.ovd``).
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
        _check(f, label)
        return _rebuild(f, label, progress)
    except PvdError:
        raise
    except (KeyError, ValueError, OSError, TypeError, IndexError) as exc:
        raise PvdError(f"{label}: damaged pvdkit recording, cannot rebuild the .ovd: {exc}") from None
    finally:
        if own:
            f.close()


def _rebuild(f: h5py.File, label: str, progress: Progress | None) -> bytes:
    version = tuple(int(v) for v in f.attrs["ovd_version"])
    kinds = f["log/kind"][:]
    ser = f["log/series"][:].astype(np.int64)
    n = len(kinds)
    is_attr = (kinds >= Command.SET_ATTRIBUTE) & (kinds <= Command.REMOVE_FROM_UNIQUE_LIST_ATTRIBUTE)

    # Pre-encoded records of every other command kind, in stream order per kind.
    regs = [r for _, r in read_registrations(f)]
    reg_bytes = [r.encode(version) for r in regs]
    o = f["objects"][:]
    created = o[o["create_command"] >= 0]
    created = created[np.argsort(created["create_command"], kind="stable")]
    creates = [
        CreateObject(int(r["context"]), int(r["class"]), int(r["handle"]), _dec(r["name"])).encode(version)
        for r in created
    ]
    d = f["destroys"][:]
    fr = f["frames"][:]
    st = f["frame_stops"][:] if "frame_stops" in f else np.zeros(0, STOP_DTYPE)
    msgs = [
        RecordMessage(
            int(r["context"]),
            _dec(r["message"]),
            _dec(r["file"]),
            int(r["line"]),
            int(r["type"]),
            int(r["class"]),
        ).encode(version)
        for r in f["messages"][:]
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
    s = f["series"][:]
    objs_handle = o["handle"].astype(np.uint64)
    paths = [np.asarray(p, np.uint32) for p in f["paths"]["handles"]] if f["paths"].shape[0] else []
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
    exc = f["log/context_exceptions"][:]
    if len(exc):
        a_ctx[a_idx[exc["command"]]] = exc["context"]
    a_obj = objs_handle[s["object"][a_sid]]
    a_path = s["path"][a_sid]
    a_depth = path_depth[a_path].astype(np.uint8)
    a_path_start = path_start[a_path]

    data_flat, series_samples, series_start, samp_off, samp_len = _all_samples(f, s, label)
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
    tail = f["log/tail"][:].tobytes() if "log/tail" in f else b""
    total = HEADER_SIZE + int(lengths.sum()) + len(tail)
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


def _all_samples(f: h5py.File, s: np.ndarray, label: str):
    """Every sample's bytes in one flat array, and for each series its samples in order.

    Returns ``data_flat``, ``series_samples``, ``series_start`` (global sample ids of series g are
    ``series_samples[series_start[g]:series_start[g+1]]``), and each sample's byte offset and
    length in ``data_flat``.
    """
    names = _pool_order(f)
    flats, offs, lens = [], [], []
    pool_base = np.zeros(len(names) + 1, np.int64)
    byte_base = 0
    for p, nm in enumerate(names):
        g = f["pools"][nm]
        vals = np.ascontiguousarray(g["values"][:])
        raw = vals.view(np.uint8).reshape(-1)
        nsamp = g["frames"].shape[0]
        if "starts" in g:
            item = vals.dtype.itemsize
            offs.append(g["starts"][:] * item + byte_base)
            lens.append(g["lengths"][:] * item)
        else:
            w = raw.size // nsamp if nsamp else 0
            offs.append(np.arange(nsamp, dtype=np.int64) * w + byte_base)
            lens.append(np.full(nsamp, w, np.int64))
        flats.append(raw)
        byte_base += raw.size
        pool_base[p + 1] = pool_base[p] + nsamp
    seg = f["segments"][:]
    seg = seg[np.argsort(seg["series"], kind="stable")]
    if len(seg) and (seg["pool"].max() >= len(names) or seg["series"].max() >= len(s)):
        raise PvdError(f"{label}: /segments refers to a pool or series that does not exist")
    counts = seg["count"].astype(np.int64)
    first = pool_base[seg["pool"]] + seg["start"]
    # Expand each segment into its sample ids.
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
        writer.set_tail(bytes(np.asarray(buffer)[table.valid_end :]), table.error)
        writer.close()
    except BaseException:
        writer.file.close()
        if os.path.exists(path):
            os.remove(path)
        raise
    if progress is not None:
        progress(1.0)
