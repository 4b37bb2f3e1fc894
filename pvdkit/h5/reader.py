"""Read HDF5 recordings into index tables (:class:`~pvdkit.index.tables.RecordingData`).

The query model (:mod:`pvdkit.recording`) opens an ``.h5`` through :func:`open_h5_data`; this
module never imports it. The layout read is :mod:`pvdkit.h5.layout`.
"""

from __future__ import annotations

import io
import json
import os
import struct
from dataclasses import dataclass

import h5py
import numpy as np

from pvdkit.h5.inflate import ChunkDecoder
from pvdkit.h5.layout import (
    _COMMITTED_TABLES,
    ATTRIBUTE_DTYPE,
    CLASS_DTYPE,
    FORMAT_NAME,
    FORMAT_VERSION,
    FRAME_DTYPE,
    MESSAGE_DTYPE,
    OBJECT_DTYPE,
    PATH_DTYPE,
    SEGMENT_DTYPE,
    SERIES_DTYPE,
    STOP_DTYPE,
    _counts_from,
    _dec,
    pool_storage,
)
from pvdkit.index.tables import (
    FAMILY_LIST,
    AttributeRegistration,
    FrameTable,
    Message,
    ObjectTable,
    RecordingData,
    SampleBlocks,
    Samples,
    SeriesTable,
)
from pvdkit.outputs import require_input
from pvdkit.ovd.codec import (
    RegisterAttribute,
    RegisterClass,
    RegisterClassAttribute,
    RegisterEnumValue,
    RegisterFlagsAttribute,
    RegisterUniqueListAttribute,
    Version,
    check_version,
)
from pvdkit.ovd.layout import COUNT_KEYS
from pvdkit.types import Command, DataType, PvdError

__all__ = ["MAX_ATTRIBUTE_BYTES", "MAX_EXPANSION", "READ_SLACK_BYTES", "open_h5_data"]

# Everything read from a file is hostile until checked: a damaged or crafted recording must
# fail with one PvdError naming the file and the dataset (or row), never with a raw h5py /
# numpy exception, and never allocate more than the file can hold. So every h5py call goes
# through ``_Source`` (which turns HDF5's errors into PvdError and refuses reads larger than
# the stored bytes can decode to), every table is checked for its fields before use, and every
# id read from a table is checked against the table it indexes before it is used to index or
# to size an array.

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
        #: Rows of /log/commits when none of them fits the tables (a damaged commit log: nothing
        #: of the recording can be trusted); 0 otherwise.
        self.unusable_commits = 0
        if limit is _FROM_FILE:
            limit, self.unusable_commits = _committed_rows(f, name)
        self.limit: dict[str, int] | None = limit  # type: ignore[assignment]
        #: Frames of the recording, once /frames was read: sample frames must lie in -1 .. n - 1.
        self.n_frames: int | None = None

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
        return self.checked(self.get(path, group), path, group, ndim=ndim)

    def checked(self, ds: h5py.Dataset | h5py.Group | None, path: str, group: h5py.Group | None = None, *,
                ndim: tuple[int, ...] = (1,)) -> h5py.Dataset:
        """``ds``, what :meth:`get` gave for ``path``, checked as :meth:`dataset` checks it."""
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

    def read(self, ds: h5py.Dataset, lo: int = 0, hi: int | None = None, *,
             inflate: bool = False) -> np.ndarray:
        """Rows ``lo:hi`` of ``ds`` (all rows by default), after :meth:`check_size`; HDF5
        errors (a corrupt chunk, a missing filter) become PvdError naming the dataset.
        ``inflate``: decode the chunks with ISA-L where they suit (:mod:`pvdkit.h5.inflate`),
        for a read of whole chunks read once (small reads keep h5py and its chunk cache)."""
        hi = ds.shape[0] if hi is None else hi
        self.check_size(ds, lo, hi)
        try:
            decoder = ChunkDecoder.of(ds) if inflate else None
            if decoder is not None:
                return decoder.read(lo, hi)
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
                    _check_global_heaps(f, _FileBytes(raw.fileno(), size), name)
    except BaseException:
        f.close()
        raise
    return f


#: Signature and version of a global heap collection (HDF5 reads no other version).
_GCOL = b"GCOL\x01"


class _FileBytes:
    """The bytes of an open file, read on demand in chunks (``len``, ``find``, slices).

    Why not ``mmap``: touching a mapped page that the file system cannot supply — a hole of a
    sparse file on a full tmpfs, a file truncated meanwhile — kills the process with SIGBUS;
    ``pread`` returns zeros or fewer bytes instead. The chunks are read into one reused buffer:
    a fresh 8 MB ``bytes`` per read cost as much in page faults as the search itself.
    """

    CHUNK = 1 << 20

    def __init__(self, fd: int, size: int) -> None:
        self.fd, self.size = fd, size
        self._buf = bytearray(self.CHUNK)
        self._at, self._len = -1, 0  # file offset and length of the bytes in _buf

    def __len__(self) -> int:
        return self.size

    def _load(self, start: int) -> None:
        self._at, self._len = start, os.preadv(self.fd, [self._buf], start)

    def __getitem__(self, span: slice) -> bytes:
        a, b = span.start, min(span.stop, self.size)
        if not (self._at <= a and b <= self._at + self._len):
            if b - a > self.CHUNK:
                return os.pread(self.fd, b - a, a)
            self._load(a)
        return bytes(self._buf[a - self._at : min(b - self._at, self._len)])

    def find(self, sub: bytes, start: int = 0) -> int:
        pos = start
        while pos < self.size:
            if not (self._at <= pos and pos + len(sub) <= self._at + self._len):
                self._load(pos)
            i = self._buf.find(sub, pos - self._at, self._len)
            if i >= 0:
                return self._at + i
            if self._len < self.CHUNK or self._at + self._len >= self.size:
                return -1  # the end (or the file shrank meanwhile: no more bytes to search)
            pos = self._at + self._len - len(sub) + 1  # a signature across the boundary
        return -1


def _check_global_heaps(f: h5py.File, data: bytes | _FileBytes, name: str) -> None:
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
    # Object headers read with one struct call each from the collection's bytes, read once
    # (a recording holds one string object per object name: tens of thousands).
    obj = struct.Struct(f"<H6x{ {2: 'H', 4: 'I', 8: 'Q'}[size_bytes] }") if size_bytes in (2, 4, 8) else None
    at = data.find(_GCOL)
    while at >= 0:
        if at + header <= n:
            end = at + int.from_bytes(data[at + 8:at + header], "little")
            if end <= n:
                coll = data[at:end].ljust(end - at, b"\0")  # a file cut meanwhile reads as zeros
                q, stop = header, end - at
                while q < stop and q + obj_header <= stop:
                    if obj is not None:
                        index, size = obj.unpack_from(coll, q)
                    else:
                        index = int.from_bytes(coll[q:q + 2], "little")
                        size = int.from_bytes(coll[q + 8:q + obj_header], "little")
                    need = (obj_header + -(-size // 8) * 8) % wrap if index else size % wrap
                    if need == 0 or need > stop - q:
                        raise PvdError(
                            f"{name}: damaged global heap collection at byte offset {at}: its object at "
                            f"byte {at + q} claims {size} bytes "
                            f"({'none left' if need == 0 else 'past its end'}); "
                            "the recording's strings cannot be read"
                        )
                    q += need
        at = data.find(_GCOL, at + 1)


def _committed_rows(f: h5py.File, name: str | None = None) -> tuple[dict[str, int] | None, int]:
    """Rows of each table as of the writer's last whole commit, for a recording whose writer did
    not finish (rows past it may be half written); None when every row counts. Second: the rows
    of ``/log/commits`` when none of them fits (a damaged commit log: nothing can be trusted,
    and the reader says so), else 0.

    Why not simply the last row of ``/log/commits``: a writer stopped by a full disk can leave
    that row's extent recorded but its bytes unwritten (zeros) or torn. Table lengths only grow,
    so a commit is trusted only if it stays within every table and does not go back from the
    commit before it; the last such commit bounds what is read.
    """
    src = _Source(f, name or f.filename, limit=None)
    complete = src.attr(f, "complete")
    if complete is None or _truth(complete) or src.get("log/commits") is None:
        return None, 0
    commits = src.dataset("log/commits")
    if commits.shape[0] == 0:
        return None, 0
    fields = [t.replace("/", "_") for t in _COMMITTED_TABLES]
    if commits.dtype.names is None or any(k not in commits.dtype.names for k in fields):
        raise src.error(commits.name, f"is {commits.dtype}, expected the fields {', '.join(fields)}")
    rows = src.read(commits)
    table = np.stack([rows[k].astype(np.int64) for k in fields], axis=1)
    lengths = np.array([_rows_of_table(src.get(t)) for t in _COMMITTED_TABLES], dtype=np.int64)
    fits = (table >= 0).all(axis=1) & (table <= lengths).all(axis=1)
    trusted = np.zeros(len(fields), np.int64)
    for i in np.flatnonzero(fits):
        if (table[i] >= trusted).all():
            trusted = table[i]
    limit = dict(zip(_COMMITTED_TABLES, (int(v) for v in trusted), strict=True))
    return limit, 0 if fits.any() else len(table)


def _rows_of_table(ds: object) -> int:
    """Rows a committed table holds (a huge bound for one that is missing or not a table: the
    readers of the tables report that themselves)."""
    if isinstance(ds, h5py.Dataset) and ds.ndim >= 1:
        return int(ds.shape[0])
    return np.iinfo(np.int64).max


def _truth(value: object) -> bool:
    """A boolean root attribute (h5py gives numpy bools, ints or 0-d arrays)."""
    v = value[()] if isinstance(value, np.ndarray) and value.shape == () else value
    if isinstance(v, (bool, np.bool_, int, np.integer)):
        return bool(v)
    return False


#: Why a recording whose writer never closed it is incomplete: it may still be writing it (a
#: recording shown as it is written) or have been killed; the frames of its last commit are there.
WRITER_OPEN = "its writer has not closed it (still writing, or killed or crashed)"


def _incomplete_reason(f: h5py.File, src: _Source | None = None) -> str | None:
    """Why a recording is incomplete (None when its writer closed it normally)."""
    if src is None:
        src = _Source(f, f.filename, limit=None)
    complete = src.attr(f, "complete")
    if complete is None or _truth(complete):
        return None
    reason = src.attr_str(f, "interrupted") or ""
    return reason or WRITER_OPEN


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
    v = src.attr_int(f, "format_version")
    if v is not None and v > FORMAT_VERSION:
        raise PvdError(
            f"{src.name}: pvdkit recording format version {v} is newer than this pvdkit reads "
            f"({FORMAT_VERSION}); upgrade pvdkit"
        )
    if v is None or v < 1:  # every writer sets it: 0, -1 or none is no version of this format
        expected = "1" if FORMAT_VERSION == 1 else f"1 … {FORMAT_VERSION}"
        raise src.error("root attribute 'format_version'",
                        f"is {'missing' if v is None else v}, expected {expected}")
    complete = src.attr(f, "complete")
    value = complete[()] if isinstance(complete, np.ndarray) and complete.shape == () else complete
    if complete is not None and not (isinstance(value, (bool, np.bool_)) or
                                     isinstance(value, (int, np.integer)) and int(value) in (0, 1)):
        shown = int(value) if isinstance(value, (int, np.integer)) else _describe_value(value)
        raise src.error("root attribute 'complete'", f"is {shown}, expected true or false")
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
    raw = src.attr(src.f, "ovd_version")
    where = f"{src.name}: root attribute 'ovd_version'"
    arr = np.asarray(raw) if raw is not None else None
    if arr is None or arr.shape != (3,) or arr.dtype.kind not in "iu":
        shown = "missing" if raw is None else _describe_value(arr)
        raise PvdError(f"{where} is {shown}, expected three integers (major, minor, patch)")
    return check_version(tuple(int(x) for x in arr.tolist()), where)


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
        # Each optional member looked up once (an h5py lookup costs as much as the checks).
        ops = src.get("ops", pg)
        ops = src.checked(ops, "ops", pg) if ops is not None else None
        starts, lengths = src.get("starts", pg), src.get("lengths", pg)
        if (starts is None) != (lengths is None):
            raise src.error(pg.name, "has only one of 'starts' and 'lengths' (variable pools have both)")
        starts = src.checked(starts, "starts", pg) if starts is not None else None
        lengths = src.checked(lengths, "lengths", pg) if lengths is not None else None
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
        _check_storage(src, nm, values, variable=starts is not None)
        pools.append(_Pool(values, frames, ops, starts, lengths))
    return names, pools


def _check_storage(src: _Source, name: str, values: h5py.Dataset, *, variable: bool) -> None:
    """:class:`PvdError` when a pool's values are not what its name says it stores
    (:func:`~pvdkit.h5.layout.pool_storage`): values rewritten as another type, or with fewer
    elements per sample, would read and convert as other numbers, silently."""
    storage = pool_storage(name)
    if storage is None:
        raise src.error(f"/pools/{name}", "is not a pool name of this format (<set|list>_<type>x<count> "
                                          "or <set|list>_<type>_var)")
    dtype, count = storage
    shape = (values.shape[0],) if count <= 1 else (values.shape[0], count)
    if values.dtype != dtype or values.shape != shape or variable != (count == 0):
        what = "a variable number of" if count == 0 else f"{count} ×"
        raise src.error(values.name, f"is {_type_name(values.dtype)} of shape {values.shape}, but its pool "
                                     f"stores {what} {dtype.name} per sample (as its name says)")


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
        self._blocks: SampleBlocks | None = None

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
                if hi == ds.shape[0] and twin_arr is not None:
                    twin_ds = partner.f.get(ds.name) if partner is not None else None
                    src.check_size(ds, 0, hi)
                    try:
                        arrays[k] = _read_whole(ds, twin_arr, twin_ds)
                    except _H5_ERRORS as exc:
                        raise src.error(ds.name, f"cannot read it ({exc})") from None
                else:
                    arrays[k] = src.read(ds, 0, hi, inflate=True)
            fr = arrays["frames"]
            if fr is not None and len(fr) and src.n_frames is not None \
                    and (int(fr.min()) < -1 or int(fr.max()) >= src.n_frames):
                bad = np.flatnonzero((fr < -1) | (fr >= src.n_frames))
                _check_frames(src, cur.frames, fr[bad[0]:bad[0] + 1], int(bad[0]))
            self.pools[p] = _Pool(**arrays)
        self.loaded = True


    def sample_blocks(self) -> SampleBlocks | None:
        """Every series held in one fixed-size pool as rows of that pool reordered series after
        series (one gather per pool: the segments of an uncompacted file, one per commit, are
        joined without a call per segment); None until :meth:`preload` has read the pools."""
        if not self.loaded:
            return None
        if self._blocks is None:
            self._blocks = self._build_blocks()
        return self._blocks

    def _build_blocks(self) -> SampleBlocks:
        seg, n_series = self.seg, len(self.seg_first) - 1
        sid, pool = seg["series"].astype(np.int64), seg["pool"].astype(np.int64)
        total = np.bincount(sid, weights=seg["count"], minlength=n_series).astype(np.int64)
        # A series is held when all its segments lie in one fixed-size pool.
        n_seg = np.diff(self.seg_first)
        first_pool = np.where(n_seg > 0, pool[np.minimum(self.seg_first[:-1], max(len(pool) - 1, 0))], -1) \
            if len(pool) else np.full(n_series, -1, np.int64)
        mixed = np.zeros(n_series, bool)
        if len(pool):
            mixed[sid[pool != first_pool[sid]]] = True
        fixed = np.array([self.pools[i].starts is None for i in range(len(self.pool_names))] + [False], bool)
        held = ~mixed & (total > 0) & fixed[first_pool]
        block_of_pool = np.cumsum(fixed[:-1]) - 1
        block = np.where(held, block_of_pool[np.maximum(first_pool, 0)] if len(block_of_pool) else -1,
                         -1).astype(np.int32)
        frames, raw, ops = [], [], []
        for p in range(len(self.pool_names)):
            cur = self.pools[p]
            if cur.starts is not None:
                continue
            vals = np.asarray(cur.values)
            vals = vals.astype(vals.dtype.newbyteorder("<"), copy=False)
            n = len(vals)
            size = vals.dtype.itemsize * _prod(vals.shape[1:])
            raw.append(np.ascontiguousarray(vals).view(np.uint8).reshape(n, size))
            f = np.asarray(cur.frames)
            frames.append(f if f.dtype == np.int32 else f.astype(np.int32))
            ops.append(np.asarray(cur.ops).astype(np.uint8, copy=False) if cur.ops is not None else None)
        return SampleBlocks(frames, raw, ops, block, total, self.seg_first.astype(np.int64),
                            seg["start"].astype(np.int64), seg["count"].astype(np.int64))


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


def _chunk_offsets(dsid: h5py.h5d.DatasetID) -> list[tuple[int, ...]]:
    """Offsets of every stored chunk, in one pass over the chunk index (``get_chunk_info(i)``
    walks the index from the start at each call: quadratic in the chunks)."""
    out: list[tuple[int, ...]] = []
    if hasattr(dsid, "chunk_iter"):
        dsid.chunk_iter(lambda info: out.append(info.chunk_offset))
        return out
    return [dsid.get_chunk_info(i).chunk_offset for i in range(dsid.get_num_chunks())]


def _read_whole(ds: h5py.Dataset, twin: np.ndarray | None, twin_ds: h5py.Dataset | None) -> np.ndarray:
    """The whole content of ``ds``; rows of chunks stored byte-identically in ``twin_ds``
    (whose content is ``twin``) are copied from ``twin`` instead of decompressed, and when
    every chunk is, ``twin`` itself is returned (shared, read-only use). The other chunks are
    decoded from the stored bytes already read, with ISA-L where they suit
    (:mod:`pvdkit.h5.inflate`), else read by h5py."""
    if twin is None or twin_ds is None or not _same_layout(ds, twin_ds) or twin.shape != ds.shape:
        decoder = ChunkDecoder.of(ds)
        return decoder.read(0, ds.shape[0]) if decoder is not None else ds[()]
    rows = ds.chunks[0]
    n_rows = ds.shape[0]
    n_chunks = -(-n_rows // rows) if rows else 0
    done = np.zeros(n_chunks, bool)
    stored: dict[int, tuple[int, bytes]] = {}  # chunk -> (filter mask, bytes) of chunks that differ
    me, them = ds.id, twin_ds.id
    for off in _chunk_offsets(me):
        k = off[0] // rows
        if k >= n_chunks:
            continue
        try:
            mine = me.read_direct_chunk(off)
        except (KeyError, ValueError, OSError, RuntimeError):  # h5py reads it (and says why not)
            continue
        try:
            theirs = them.read_direct_chunk(off)
        except (KeyError, ValueError, OSError, RuntimeError):  # chunk not allocated in the other file
            theirs = None
        if mine == theirs:
            done[k] = True
        else:
            stored[k] = mine
    if done.all():
        return twin
    out = np.empty(ds.shape, ds.dtype)
    for run in _runs_of(np.flatnonzero(done)):
        lo, hi = int(run[0]) * rows, min((int(run[-1]) + 1) * rows, n_rows)
        out[lo:hi] = twin[lo:hi]
    decoder = ChunkDecoder.of(ds)
    todo = []
    for k in np.flatnonzero(~done).tolist():
        lo, hi = k * rows, min((k + 1) * rows, n_rows)
        mine = stored.get(k)
        if decoder is None or mine is None or not decoder.decode_into(*mine, out[lo:hi]):
            todo.append(k)
    for run in _runs_of(np.array(todo, np.int64)):  # chunks not decoded here (or not stored): h5py
        lo, hi = int(run[0]) * rows, min((int(run[-1]) + 1) * rows, n_rows)
        out[lo:hi] = ds[lo:hi]
    return out


def _runs_of(idx: np.ndarray) -> list[np.ndarray]:
    """Consecutive runs of a sorted index array."""
    if not len(idx):
        return []
    return np.split(idx, np.flatnonzero(np.diff(idx) != 1) + 1)


def open_h5_data(source: str | os.PathLike | bytes, name: str) -> RecordingData:
    """The :class:`~pvdkit.index.tables.RecordingData` of an HDF5 recording: tables are read now,
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
    src.n_frames = len(fr)
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

    # The damage of the stream this file was made from (a converted .ovd, a live stream): said
    # with this file's name first, since a warning naming only trunc.ovd points at another file.
    err = src.attr_str(f, "error") or None
    if err is not None:
        err = f"{name}: made from a damaged stream: {err}"
    incomplete = _incomplete_reason(f, src)
    if incomplete is not None and err is None:
        err = f"{name}: incomplete recording: {incomplete}; it holds the frames written before"
        if src.unusable_commits:
            err = (f"{name}: incomplete recording: {incomplete}; none of the {src.unusable_commits} rows of "
                   "/log/commits fits its tables (a damaged commit log), so no row can be trusted and "
                   "nothing of it is read")
    if err is None and counts_cache is not None:
        err = _tables_against_counts(name, counts_cache, len(regs), objects, len(frames), len(messages),
                                     int(seg["count"].sum()), n_commands)
    if err is None:
        err = _stops_against_frames(src, frames)
    tail = f.get("log/tail")
    if err is None and isinstance(tail, h5py.Dataset) and tail.shape and tail.shape[0]:
        # Only a damaged stream leaves bytes after its last command: the file says it is not.
        err = (f"{name}: /log/tail holds {tail.shape[0]:,} bytes after the last command, yet the file "
               "records no damage: it was edited since; the stream rebuilt from it ends damaged there")
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
        incomplete=incomplete,
        close=f.close,
        n_commands=n_commands,
        preload=samples.preload,
        sample_blocks=samples.sample_blocks,
    )


def _stops_against_frames(src: _Source, frames: FrameTable) -> str | None:
    """Why ``/frame_stops`` (what a rebuilt ``.ovd`` holds) disagrees with the stops ``/frames``
    shows (what the reader answers), or None: the writer fills both from the same commands, so
    a disagreement is an edit made since."""
    if src.get("frame_stops") is None:
        return None
    st = src.table("frame_stops", STOP_DTYPE)
    closing = st[st["frame"] >= 0]
    f = closing["frame"].astype(np.int64)
    bad = f >= len(frames.start)
    ok = ~bad
    bad[ok] |= ~frames.stopped[f[ok]] | (frames.stop[f[ok]] != closing["time"][ok]) \
        | (frames.context[f[ok]] != closing["context"][ok])
    if not bad.any():
        return None
    i = int(np.flatnonzero(bad)[0])
    return (f"{src.name}: /frame_stops row closing frame {int(f[i])} disagrees with /frames (context, "
            "stop time or frame): the file was edited since it was written; the .ovd rebuilt from it "
            "holds /frame_stops' values")


def _tables_against_counts(name: str, counts: dict[str, int], n_regs: int, objects: ObjectTable,
                           n_frames: int, n_messages: int, n_samples: int, n_commands: int) -> str | None:
    """Why the tables of a closed file disagree with the command counts its writer stored on
    closing (a table cut or edited after the fact), or None. Cheap: lengths only; what the
    tables hold is still read and checked as it is used."""
    registered = sum(counts[k] for k in ("register_class", "register_attribute", "register_enum",
                                         "register_flags", "register_class_attribute",
                                         "register_unique_list_attribute"))
    created = int(np.count_nonzero(objects.create_command >= 0))
    for what, rows, expected, command in (
            ("/registry", n_regs, registered, "registrations"),
            ("/objects", created, counts["create_object"], "create_object commands"),
            ("/frames", n_frames, counts["start_frame"], "start_frame commands"),
            ("/messages", n_messages, counts["record_message"], "record_message commands"),
            ("/segments", n_samples, counts["set_attribute"] + counts["add_to_unique_list"]
             + counts["remove_from_unique_list"], "attribute commands"),
            # The command log (what convert rebuilds the stream from): cut, it was read as if whole
            # here while convert refused it.
            ("/log/kind", n_commands, sum(counts.values()), "commands")):
        if rows != expected:
            held = f"{rows:,} samples" if what == "/segments" else f"{rows:,} rows"
            return (f"{name}: {what} holds {held} but the writer counted {expected:,} {command} "
                    "when it closed the file: a table was cut or edited since; what it holds is read, "
                    "the rest is missing")
    return None


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
    if kinds_ds.dtype.kind not in "iu":
        raise src.error(kinds_ds.name, f"is {_type_name(kinds_ds.dtype)}, expected uint8 command codes")
    kinds = src.read(kinds_ds, 0, n)
    bad = (kinds < Command.REGISTER_CLASS) | (kinds > Command.RECORD_MESSAGE)
    bad |= kinds == Command.REGISTER_ENUM
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise src.error(f"{kinds_ds.name} row {i}", f"command code {int(kinds[i])} (expected 1 or 3..13)")
    return kinds.astype(np.uint8)


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


def _check_frames(src: _Source, ds: h5py.Dataset | np.ndarray, frames: np.ndarray, a: int) -> None:
    """A segment's sample frames lie in -1 .. (frames - 1) and never go back: they are the frames
    of the series' commands in stream order (an edited pool would read as other data)."""
    n = src.n_frames
    if n is None or not len(frames):
        return
    bad = (frames < -1) | (frames >= n)
    bad[1:] |= frames[1:] < frames[:-1]
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        name = ds.name if isinstance(ds, h5py.Dataset) else "frames"
        raise src.error(name, f"sample {a + i} is in frame {int(frames[i])}: expected a frame -1 .. {n - 1}, "
                              "not before the sample ahead of it")


def _read_segment(p: _Pool, a: int, c: int, src: _Source) -> Samples:
    """Samples ``a .. a + c`` of pool ``p`` (a checked segment), read and checked: a variable
    pool's samples must follow each other in ``values`` and lie inside it."""

    def rows(x: h5py.Dataset | np.ndarray, lo: int, hi: int) -> np.ndarray:
        return src.read(x, lo, hi) if isinstance(x, h5py.Dataset) else x[lo:hi]

    frames = rows(p.frames, a, a + c).astype(np.int32)
    _check_frames(src, p.frames, frames, a)
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
