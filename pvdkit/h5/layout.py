"""pvdkit's HDF5 recording format: the on-disk layout that the writer, the reader and the rebuild share.

Why HDF5: an ``.ovd`` must be read from the start to answer anything; an HDF5 recording keeps
every series in a compressed, chunked numpy dataset that any h5py user (or the viewer) slices
directly, while staying *lossless*: the command log (command kind + series id per command) and
the tables of everything else rebuild the original ``.ovd`` byte for byte. The schema is in
``docs/recording-format.md``; :mod:`pvdkit.h5.writer` is its only writer, :mod:`pvdkit.h5.reader`
its reader and :mod:`pvdkit.h5.rebuild` turns it back into the ``.ovd``. This module holds what
they share: names, dtypes, format constants and the escaping of strings.

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

import re
from collections.abc import Callable

import h5py
import numpy as np

from pvdkit.ovd.layout import command_counts
from pvdkit.types import DataType

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


def pool_name(is_list: bool, code: int, count: int) -> str:
    """The name of the pool of a family, storage type code and elements per sample (0 =
    variable): ``set_float32x3``, ``list_uint64x1``, ``set_bytes_var``."""
    return f"{'list' if is_list else 'set'}_{_STORAGE[code]}" + (f"x{count}" if count > 0 else "_var")


def pool_storage(name: str) -> tuple[np.dtype, int] | None:
    """What a pool named ``name`` stores: (element dtype, elements per sample, 0 = variable),
    read from the name the writer gives it (:func:`pool_name`); None for a name of another form.
    Why the name: it is already read (the pool order), so checking a pool's datasets against it
    costs no HDF5 call."""
    family, _, rest = name.partition("_")
    if family not in ("set", "list"):
        return None
    storage, sep, count = rest.rpartition("x")
    if rest.endswith("_var"):
        storage, count = rest[: -len("_var")], "0"
    elif not sep or not count.isdigit() or int(count) < 1:
        return None
    if storage not in _STORAGE:
        return None
    return _STORAGE_DTYPE[_STORAGE.index(storage)], int(count)


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


def _counts_from(per_kind: np.ndarray, reg: dict[str, int]) -> dict[str, int]:
    """Command counts (:data:`pvdkit.ovd.layout.COUNT_KEYS`) from commands per code and the
    split of REGISTER_ATTRIBUTE (``register_attribute`` / ``register_enum`` / ``register_flags``)."""
    return command_counts(per_kind, reg["register_attribute"], reg["register_enum"], reg["register_flags"])


#: The filter pipeline of a recording's numeric datasets, in the order HDF5 applies it on write.
SHUFFLE_DEFLATE = (h5py.h5z.FILTER_SHUFFLE, h5py.h5z.FILTER_DEFLATE)


def shuffled_deflated_rows(ds: h5py.Dataset) -> bool:
    """Whether ``ds``'s stored chunks are whole rows of numbers, byte for byte numpy's, through
    exactly shuffle then deflate — what ISA-L can write (:mod:`pvdkit.h5.chunks`) and read
    (:mod:`pvdkit.h5.inflate`) as a chunk at a time, with HDF5's own filters left out.

    Chunked along rows only; plain numbers or fields of plain numbers (no strings, no array
    fields); the file type is the one h5py makes of the numpy type (class, size, byte order,
    field offsets); the shuffle's element size is the row element's. Anything unusual: False.
    """
    try:
        if ds.chunks is None or tuple(ds.chunks[1:]) != tuple(ds.shape[1:]) or ds.chunks[0] < 1:
            return False
        dt = ds.dtype
        if dt.hasobject or dt.subdtype is not None or dt.itemsize == 0:
            return False
        kinds = [dt.fields[n][0].kind for n in dt.names] if dt.names else [dt.kind]
        if any(k not in "biuf" for k in kinds):
            return False
        dcpl = ds.id.get_create_plist()
        if tuple(dcpl.get_filter(i)[0] for i in range(dcpl.get_nfilters())) != SHUFFLE_DEFLATE:
            return False
        shuffle_size = dcpl.get_filter(0)[2]
        if shuffle_size and shuffle_size[0] != dt.itemsize:
            return False
        return ds.id.get_type() == h5py.h5t.py_create(dt)
    except Exception:  # noqa: BLE001 - a dataset h5py cannot describe: not one of these
        return False
