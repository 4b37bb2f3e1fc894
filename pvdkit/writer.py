"""PhysX's ``OmniPvdWriter`` in Python: register classes and attributes, then stream values.

The writer produces exactly the bytes PhysX's ``OmniPvdWriterImpl`` produces for the same calls
— the 12-byte version header before the first command, then one command per call, handles
numbered as PhysX numbers them (classes 1, 2, 3 … in registration order; one shared counter
1, 2, 3 … for every kind of attribute: plain, enum value, flags, class and unique-list). It does
not know where bytes go: it writes them to a :class:`~pvdkit.streams.WriteStream`.

What it adds to PhysX's C API, for Python producers:

* values as numpy arrays, scalars, sequences or ``str`` — converted to the registered dtype,
  and checked against the registered element count (also through class-attribute paths, where
  the path's last attribute decides): a mismatch raises :class:`~pvdkit.types.PvdError` naming
  the attribute, what it expects and what it got;
* handles are checked (a path must lead through class attributes to a settable attribute);
* bulk paths: :meth:`OmniPvdWriter.set_attribute_batch` (one attribute of many objects) and
  :meth:`OmniPvdWriter.write_frames` (whole frames of many objects × attributes) encode all
  their commands with numpy in one go, with no Python loop per command;
* a prepared path for values streamed frame by frame (a simulation recorder):
  :meth:`OmniPvdWriter.prepare_attributes` encodes the SET_ATTRIBUTE commands of many
  (objects, attribute) columns once into a :class:`PreparedAttributes` block whose values are
  numpy views; the producer fills the views each frame and :meth:`OmniPvdWriter.write_prepared`
  writes the whole block in one stream write — the bytes ``set_attribute`` would write command
  by command, without re-encoding a header per frame.

The raw path :meth:`OmniPvdWriter.set_attribute_bytes` writes a payload as given, without the
size check: PhysX itself writes payloads that differ from the registration (a quaternion into a
3-float attribute, ``PxFlags`` in their 1- or 2-byte storage type), and a lossless re-encoder
must be able to do the same.

What it refuses, so that every stream it writes reads back in PhysX's own ``OmniPvdReader``
(and the OmniPVD viewer): names (class, attribute, enum value and object names) and the
message and file of :meth:`OmniPvdWriter.record_message` longer than
:data:`MAX_READER_STRING_BYTES` (2,047 bytes of UTF-8: the reader copies them into a 2,048-byte
buffer, cutting names and crashing on a longer message) or holding a NUL byte (the reader
treats them as C strings and cuts them there); and stream versions PhysX's reader refuses
(newer than 0.4.0) or pvdkit does not read (older than 0.2). STRING attribute *values* are
payloads, not names, and are not limited.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

import numpy as np

from pvdkit.ovd.codec import (
    RecordMessage,
    RegisterAttribute,
    RegisterClass,
    RegisterClassAttribute,
    RegisterEnumValue,
    RegisterFlagsAttribute,
    RegisterUniqueListAttribute,
    Version,
    check_version,
    encode_header,
    encode_string,
    has_base_class,
)
from pvdkit.ovd.layout import (
    ATTR_HEAD,
    CREATE,
    MAX_DATA_BYTES,
    MAX_PATH_DEPTH,
    PAIR,
    PAIR_DTYPE,
    U32,
    attribute_dtype,
    encode_path,
)
from pvdkit.streams import BytesLike, WriteStream
from pvdkit.types import INVALID_HANDLE, OVD_OLDEST_READABLE_VERSION, OVD_VERSION, Command, DataType, PvdError

#: An attribute handle, or a path of handles through class attributes (outermost first).
AttributeRef = int | Sequence[int]

#: Longest name or message (UTF-8 bytes) PhysX's ``OmniPvdReader`` reads back whole.
MAX_READER_STRING_BYTES = 2047
#: Stream versions the writer writes: what pvdkit reads, and PhysX's reader still accepts.
OLDEST_WRITABLE_VERSION = OVD_OLDEST_READABLE_VERSION
NEWEST_WRITABLE_VERSION = OVD_VERSION

_U64_MAX = (1 << 64) - 1

#: Scalar packers for the one-element fast path of :meth:`OmniPvdWriter.set_attribute`.
_SCALAR = {
    DataType.INT8: struct.Struct("<b"), DataType.INT16: struct.Struct("<h"),
    DataType.INT32: struct.Struct("<i"), DataType.INT64: struct.Struct("<q"),
    DataType.UINT8: struct.Struct("<B"), DataType.UINT16: struct.Struct("<H"),
    DataType.UINT32: struct.Struct("<I"), DataType.UINT64: struct.Struct("<Q"),
    DataType.FLOAT32: struct.Struct("<f"), DataType.FLOAT64: struct.Struct("<d"),
    DataType.OBJECT_HANDLE: struct.Struct("<Q"), DataType.FLAGS_WORD: struct.Struct("<I"),
}
_FLOAT_TYPES = (DataType.FLOAT32, DataType.FLOAT64)


class AttributeKind(Enum):
    """What a registered attribute handle stands for."""

    PLAIN = "attribute"
    ENUM_VALUE = "enum value"
    FLAGS = "flags attribute"
    CLASS = "class attribute"
    UNIQUE_LIST = "unique-list attribute"


@dataclass(frozen=True, slots=True)
class AttributeInfo:
    """A registered attribute handle as the writer remembers it.

    ``data_type``/``nb_elements`` describe one value (``nb_elements`` 0 = variable length;
    flags: FLAGS_WORD × 1; unique lists: one item per add/remove; class attributes: None × 0).
    ``ref_class`` is the enum class of a flags attribute or the nested class of a class
    attribute; ``value`` the value of an enum value.
    """

    handle: int
    class_handle: int
    name: str
    kind: AttributeKind
    data_type: DataType | None
    nb_elements: int
    ref_class: int = 0
    value: int = 0


class FrameBlock(NamedTuple):
    """Objects (u64 handles) and their per-frame values, for :meth:`OmniPvdWriter.write_frames`.

    ``columns`` maps an attribute handle or path to an array ``(frames, len(objects), count)``.
    """

    objects: np.ndarray | Sequence[int]
    columns: Mapping[AttributeRef, object]


class PreparedColumn(NamedTuple):
    """One column of a :class:`PreparedAttributes` block: ``attribute`` of every object in
    ``objects`` (u64 handles, in write order).

    ``count`` is the number of elements each value holds; None means the registered count
    (which must then be fixed, not 0). Give it when the payload differs from the registration,
    as PhysX's own payloads sometimes do (:meth:`OmniPvdWriter.set_attribute_bytes`).
    """

    objects: np.ndarray | Sequence[int]
    attribute: AttributeRef
    count: int | None = None


class PreparedAttributes:
    """SET_ATTRIBUTE commands encoded once, whose values are filled in place frame after frame.

    Made by :meth:`OmniPvdWriter.prepare_attributes`, written by
    :meth:`OmniPvdWriter.write_prepared`. Why: a recorder writes the same commands every frame
    with new values; encoding their headers once and exposing the payloads as numpy views makes
    a frame cost one array assignment per column and one stream write, however many objects.

    The block holds the columns one after the other, each column's commands in the order of its
    objects. :attr:`views` ``[c]`` is column *c*'s values, shape ``(objects, count)`` in the
    registered little-endian dtype (flags: ``uint32``); assigning to it casts as numpy assigns
    (float64 → float32 rounds; no range check: the typed checks of ``set_attribute`` are the
    producer's part here). Values start at zero.

    The values live end to end in :attr:`payload`, apart from the encoded commands, and are
    copied into them when the bytes are needed (:attr:`buffer`, a write to a byte stream). Why:
    a producer's assignment to a contiguous column is several times faster than to payloads
    strided between command headers, and a stream that keeps only the values (HDF5) takes
    them in one copy.
    """

    __slots__ = ("_buffer", "_payload", "_runs", "_own", "_owner", "context", "columns", "views", "labels")

    def __init__(self, owner: OmniPvdWriter, context: int, buffer: np.ndarray,
                 slots: Sequence[np.ndarray], columns: tuple[PreparedColumn, ...],
                 labels: tuple[str, ...]) -> None:
        self._owner = owner
        self._buffer = buffer  # the encoded commands; their payloads are refreshed by _encoded()
        self._payload = np.zeros(sum(slot.nbytes for slot in slots), np.uint8)
        views, runs, at = [], [], 0
        for slot in slots:  # slot: a column's payloads in the buffer, (objects, count)
            views.append(np.ndarray(slot.shape, slot.dtype, self._payload, at))
            size = slot.nbytes // max(len(slot), 1)
            if size:  # (commands, payload size, where in the buffer, its stride, where in payload)
                runs.append((len(slot), size, _offset_in(slot, buffer), slot.strides[0], at))
            at += slot.nbytes
        self._runs = tuple(runs)
        self._own = tuple(self._run_views(buffer, self._payload))  # bound once: a write per frame
        #: The context every command of the block carries.
        self.context = context
        #: The columns as given (objects as u64 arrays, counts resolved).
        self.columns = columns
        #: Per column, the writable ``(objects, count)`` view of its payloads.
        self.views = tuple(views)
        #: Per column, ``"Class.attribute"`` for messages.
        self.labels = labels

    def __len__(self) -> int:
        return len(self.views)

    @property
    def nb_commands(self) -> int:
        """SET_ATTRIBUTE commands in the block (one per object per column)."""
        return sum(len(v) for v in self.views)

    @property
    def nbytes(self) -> int:
        """Bytes the block adds to the stream per write."""
        return self._buffer.nbytes

    @property
    def buffer(self) -> memoryview:
        """The encoded commands with the current values, as they will be written (read-only)."""
        return memoryview(self._encoded()).toreadonly()

    @property
    def payload(self) -> np.ndarray:
        """Every command's payload with the current values, end to end in command order (a
        read-only ``uint8`` view, no copy): what a stream that keeps only values stores."""
        out = self._payload.view()
        out.flags.writeable = False
        return out

    def encoded_with(self, payload: np.ndarray) -> bytes:
        """The bytes of a write of the block whose values were ``payload`` (a copy of
        :attr:`payload` taken then): for a stream that kept only the values."""
        buf = self._buffer.copy()
        for dst, src in self._run_views(buf, np.asarray(payload, np.uint8)):
            dst[...] = src
        return buf.tobytes()

    def _encoded(self) -> np.ndarray:
        """The encoded commands, their payloads set to the current values."""
        for dst, src in self._own:
            dst[...] = src
        return self._buffer

    def _run_views(self, buf: np.ndarray, payload: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Per column, its payloads' places in ``buf`` and in ``payload`` (end to end), each
        payload one element of its size: numpy copies whole elements several times faster than
        the same bytes one by one."""
        for n, size, offset, stride, at in self._runs:
            yield (np.ndarray((n,), f"V{size}", buf, offset, (stride,)),
                   np.ndarray((n,), f"V{size}", payload, at))

    def view(self, column: int, shape: Sequence[int] | None = None) -> np.ndarray:
        """Column ``column``'s values, as ``(objects, count)`` or re-shaped to ``shape`` — object
        axes first, then value axes, e.g. ``(vehicles, wheels, 3)`` for vehicles × wheels objects
        of 3 elements — so that a producer's array of that shape is assigned in one statement.
        The result always shares memory with the block; a shape that does not split ``objects``
        and ``count`` that way raises :class:`PvdError`."""
        v = self.views[column]
        if shape is None:
            return v
        shape = tuple(int(d) for d in shape)
        k, count = v.shape
        for split in range(len(shape) + 1):
            if _prod(shape[:split]) == k and _prod(shape[split:]) == count:
                break
        else:
            raise PvdError(f"prepared column {self.labels[column]}: shape {shape} does not split into "
                           f"{k} objects × {count} elements")
        strides = []
        for dims, step in ((shape[:split], v.strides[0]), (shape[split:], v.strides[1])):
            inner = []
            for d in reversed(dims):
                inner.append(step)
                step *= d
            strides.extend(reversed(inner))
        return np.lib.stride_tricks.as_strided(v, shape=shape, strides=tuple(strides), writeable=True)


def _offset_in(view: np.ndarray, base: np.ndarray) -> int:
    """Byte offset of ``view``'s first element in the 1-D ``base`` it was taken from."""
    return view.__array_interface__["data"][0] - base.__array_interface__["data"][0]


def _prod(dims: Sequence[int]) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


@dataclass(frozen=True, slots=True)
class _Path:
    handles: tuple[int, ...]
    encoded: bytes  # depth byte + u32 handles (layout.encode_path)
    info: AttributeInfo  # the last attribute of the path
    label: str  # "Class.attribute[.member …]" for messages



def close_keeping(close: Callable[[], None], exc: BaseException | None) -> None:
    """``close()`` on leaving a ``with`` block; while ``exc`` is in flight a failure to close is
    added to it as a note instead of replacing it (a run that failed before its first frame left
    a recording that cannot close, and "nothing was recorded" hid the real error)."""
    if exc is None:
        close()
        return
    try:
        close()
    except Exception as close_error:
        exc.add_note(f"closing the recording then failed too: {close_error}")

class OmniPvdWriter:
    """Writes OmniPVD commands to ``stream`` with PhysX's handle numbering and byte layout.

    ``version`` is the stream version to write (default 0.4.0, what PhysX 5.x writes); 0.2 and
    0.3 are possible for producing old-format streams (0.2 has no base classes, only 0.4 has
    messages); anything newer than 0.4.0 (PhysX's reader refuses it) or older than 0.2.0 is
    refused. Use as a context manager to close the stream at the end.
    """

    def __init__(self, stream: WriteStream, *, version: Version = OVD_VERSION) -> None:
        self._stream = stream
        self.version: Version = _writable_version(version)
        self._started = False
        self._closed = False
        self._last_class = 0
        self._last_attribute = 0
        self._classes: dict[int, tuple[str, int]] = {}
        self._attributes: dict[int, AttributeInfo] = {}
        self._paths: dict[tuple[object, bool], _Path] = {}
        self.bytes_written = 0

    # ----------------------------------------------------------------------------- plumbing

    @property
    def stream(self) -> WriteStream:
        """The stream receiving the bytes."""
        return self._stream

    def start(self) -> None:
        """Write the stream's version header now rather than with the first command: a file
        whose writer is killed before its first command (while kernels compile) is then an
        empty recording, not 0 bytes that no reader takes."""
        if self._closed:
            raise PvdError("writer: start after close()")
        if not self._started:
            header = encode_header(self.version)
            self._stream.write(header)
            self.bytes_written += len(header)
            self._started = True

    def _emit(self, data: BytesLike) -> None:
        if self._closed:
            raise PvdError("writer: command after close()")
        self.start()
        self._stream.write(data)
        self.bytes_written += memoryview(data).nbytes

    def flush(self) -> None:
        """Flush the stream."""
        self._stream.flush()

    def close(self) -> None:
        """Close the stream (idempotent). Like PhysX, a writer that wrote nothing wrote no header."""
        if not self._closed:
            self._closed = True
            self._stream.close()

    def __enter__(self) -> OmniPvdWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        close_keeping(self.close, exc)

    # ------------------------------------------------------------------------- registration

    def register_class(self, name: str, base_class: int = INVALID_HANDLE) -> int:
        """Register a class (deriving from ``base_class``, 0 = none); returns its handle (1, 2, …)."""
        _check_name(name, "class name")
        if base_class and base_class not in self._classes:
            raise PvdError(f"class {name!r}: base class handle {base_class} is not registered")
        handle = self._last_class + 1
        if base_class and not has_base_class(self.version):
            raise PvdError(f"class {name!r}: stream version {_vs(self.version)} has no base classes")
        self._emit(RegisterClass(handle, name, base_class).encode(self.version))
        self._last_class = handle
        self._classes[handle] = (_as_text(name), base_class)
        return handle

    def register_attribute(
        self, class_handle: int, name: str, data_type: DataType | int, nb_elements: int = 1
    ) -> int:
        """Register an attribute of ``nb_elements`` × ``data_type`` (0 = variable length).

        Enum values and flags have their own calls (their wire layout reuses the element count).
        """
        dt = _data_type(data_type, f"attribute {name!r}")
        if dt in (DataType.ENUM_VALUE, DataType.FLAGS_WORD):
            raise PvdError(
                f"attribute {name!r}: register {dt.name} attributes with "
                f"{'register_enum_value' if dt == DataType.ENUM_VALUE else 'register_flags_attribute'}"
            )
        _check_u32(nb_elements, f"attribute {name!r}: nb_elements")
        return self._register(
            RegisterAttribute(class_handle, self._last_attribute + 1, dt, nb_elements, name),
            AttributeKind.PLAIN, dt, nb_elements,
        )

    def register_flags_attribute(self, class_handle: int, name: str, enum_class_handle: int) -> int:
        """Register a flags attribute whose bits are the values of enum class ``enum_class_handle``."""
        self._require_class(enum_class_handle, f"flags attribute {name!r}: enum class")
        return self._register(
            RegisterFlagsAttribute(class_handle, self._last_attribute + 1, enum_class_handle, name),
            AttributeKind.FLAGS, DataType.FLAGS_WORD, 1, ref_class=enum_class_handle,
        )

    def register_enum_value(self, class_handle: int, name: str, value: int) -> int:
        """Register one named value of the enum class ``class_handle``."""
        _check_u32(value, f"enum value {name!r}")
        return self._register(
            RegisterEnumValue(class_handle, self._last_attribute + 1, value, name),
            AttributeKind.ENUM_VALUE, DataType.ENUM_VALUE, 1, value=value,
        )

    def register_class_attribute(self, class_handle: int, name: str, class_attribute_handle: int) -> int:
        """Register an attribute that is a nested instance of class ``class_attribute_handle``."""
        self._require_class(class_attribute_handle, f"class attribute {name!r}: nested class")
        return self._register(
            RegisterClassAttribute(class_handle, self._last_attribute + 1, class_attribute_handle, name),
            AttributeKind.CLASS, None, 0, ref_class=class_attribute_handle,
        )

    def register_unique_list_attribute(self, class_handle: int, name: str, data_type: DataType | int) -> int:
        """Register a unique list (a set) of ``data_type`` items, changed by add/remove."""
        dt = _data_type(data_type, f"unique list attribute {name!r}")
        return self._register(
            RegisterUniqueListAttribute(class_handle, self._last_attribute + 1, dt, name),
            AttributeKind.UNIQUE_LIST, dt, 1,
        )

    def _register(self, command, kind: AttributeKind, data_type: DataType | None, nb: int,
                  ref_class: int = 0, value: int = 0) -> int:
        _check_name(command.name, f"{kind.value} name")
        self._require_class(command.class_handle, f"{kind.value} {command.name!r}: class")
        self._emit(command.encode(self.version))
        handle = command.attribute_handle
        self._last_attribute = handle
        self._attributes[handle] = AttributeInfo(
            handle, command.class_handle, _as_text(command.name), kind, data_type, nb, ref_class, value
        )
        return handle

    def _require_class(self, handle: int, what: str) -> None:
        if handle not in self._classes:
            raise PvdError(f"{what} handle {handle} is not a registered class")

    def attribute_info(self, handle: int) -> AttributeInfo:
        """What attribute ``handle`` was registered as; :class:`PvdError` if unknown."""
        try:
            return self._attributes[handle]
        except KeyError:
            raise PvdError(f"attribute handle {handle} is not registered") from None

    def class_name(self, handle: int) -> str:
        """The name class ``handle`` was registered with."""
        self._require_class(handle, "class")
        return self._classes[handle][0]

    def _is_a(self, cls: int, ancestor: int) -> bool:
        seen = 0
        while cls and seen <= len(self._classes):
            if cls == ancestor:
                return True
            cls = self._classes.get(cls, ("", 0))[1]
            seen += 1
        return False

    def _path(self, ref: AttributeRef, for_list: bool) -> _Path:
        key = (int(ref) if isinstance(ref, int | np.integer) else tuple(int(h) for h in ref), for_list)
        hit = self._paths.get(key)
        if hit is not None:
            return hit
        handles = (key[0],) if isinstance(key[0], int) else key[0]
        if not 1 <= len(handles) <= MAX_PATH_DEPTH:
            raise PvdError(f"attribute path must hold 1..{MAX_PATH_DEPTH} handles, got {len(handles)}")
        infos = [self.attribute_info(h) for h in handles]
        label = ".".join([self._classes[infos[0].class_handle][0]] + [i.name for i in infos])
        for outer, inner in zip(infos, infos[1:], strict=False):
            if outer.kind != AttributeKind.CLASS:
                raise PvdError(f"attribute path {label}: {outer.name!r} ({outer.kind.value}) is not "
                               "a class attribute, so the path cannot continue past it")
            if not self._is_a(outer.ref_class, inner.class_handle):
                raise PvdError(f"attribute path {label}: {inner.name!r} belongs to class "
                               f"{self._classes[inner.class_handle][0]!r}, not to "
                               f"{self._classes[outer.ref_class][0]!r} (the class of {outer.name!r})")
        last = infos[-1]
        if for_list and last.kind != AttributeKind.UNIQUE_LIST:
            raise PvdError(f"attribute {label} ({last.kind.value}) is not a unique-list attribute")
        if not for_list and last.kind not in (AttributeKind.PLAIN, AttributeKind.FLAGS):
            hint = {AttributeKind.UNIQUE_LIST: "; use add_to/remove_from_unique_list_attribute",
                    AttributeKind.CLASS: "; set its members through a path [class attribute, member]",
                    AttributeKind.ENUM_VALUE: "; enum values are constants"}[last.kind]
            raise PvdError(f"attribute {label} ({last.kind.value}) cannot be set{hint}")
        path = _Path(handles, encode_path(handles), last, label)
        self._paths[key] = path
        return path

    # ------------------------------------------------------------------------------ values

    def set_attribute(self, context: int, object: int, attribute: AttributeRef, value: object) -> None:
        """Set an object's attribute (a handle or a class-attribute path) to ``value``.

        ``value``: numpy array / scalar / sequence of the registered element count, converted to
        the registered dtype (lossless for integers: out of range or fractional raises); ``str``
        or ``bytes`` for STRING; for flags an int (u32) or a numpy uint8/uint16/uint32 scalar,
        kept at its width as PhysX writes ``PxFlags`` storage.
        """
        path = self._path(attribute, False)
        self._write_attr(Command.SET_ATTRIBUTE, context, object, path, _encode_value(path, value))

    def set_attribute_bytes(self, context: int, object: int, attribute: AttributeRef,
                            data: BytesLike) -> None:
        """Set an attribute from a raw little-endian payload, written as given (no size check)."""
        path = self._path(attribute, False)
        self._write_attr(Command.SET_ATTRIBUTE, context, object, path, bytes(data))

    def add_to_unique_list_attribute(self, context: int, object: int, attribute: AttributeRef,
                                     item: object) -> None:
        """Add one item (e.g. an object handle) to an object's unique-list attribute."""
        path = self._path(attribute, True)
        self._write_attr(Command.ADD_TO_UNIQUE_LIST_ATTRIBUTE, context, object, path,
                         _encode_value(path, item))

    def remove_from_unique_list_attribute(self, context: int, object: int, attribute: AttributeRef,
                                          item: object) -> None:
        """Remove one item from an object's unique-list attribute."""
        path = self._path(attribute, True)
        self._write_attr(Command.REMOVE_FROM_UNIQUE_LIST_ATTRIBUTE, context, object, path,
                         _encode_value(path, item))

    def _write_attr(self, command: Command, context: int, obj: int, path: _Path, data: bytes) -> None:
        if len(data) > MAX_DATA_BYTES:
            raise PvdError(f"attribute {path.label}: payload of {len(data)} bytes exceeds the u32 size field")
        try:
            head = ATTR_HEAD.pack(command, context, obj)
        except struct.error:
            raise PvdError(f"attribute {path.label}: context {context!r} and object {obj!r} must be "
                           "integers in 0..2**64-1") from None
        self._emit(b"".join((head, path.encoded, U32.pack(len(data)), data)))

    def set_attribute_batch(self, context: int, objects: np.ndarray | Sequence[int],
                            attribute: AttributeRef, values: object) -> None:
        """Set one attribute of many objects: ``values[i]`` for ``objects[i]``, in order.

        ``values`` has shape ``(n, count)`` (or ``(n,)`` when count is 1); all n commands are
        encoded by numpy in one buffer and written in one stream write. Not for STRING.
        """
        path = self._path(attribute, False)
        _check_u64(context, f"attribute {path.label}: context")
        objs = _handles_array(objects, f"attribute {path.label}: objects")
        arr, count = _batch_values(path, values, objs.shape)
        if len(objs) == 0:
            return
        rec = np.empty(len(objs), attribute_dtype(len(path.handles), arr.dtype, count))
        _fill_set(rec, context, objs, path, arr, count)
        self._emit(memoryview(rec.view(np.uint8)))

    def prepare_attributes(self, context: int,
                           columns: Sequence[PreparedColumn | tuple]) -> PreparedAttributes:
        """Encode the SET_ATTRIBUTE commands of ``columns`` once, for frame-by-frame writing.

        ``columns``: :class:`PreparedColumn` s (or ``(objects, attribute[, count])`` tuples).
        Handles, paths and counts are checked now, as ``set_attribute`` checks them (STRING and
        variable-length attributes need an explicit ``count``: a prepared value has a fixed
        size). Nothing is written; fill :attr:`PreparedAttributes.views` and pass the block to
        :meth:`write_prepared`, as often as needed.
        """
        _check_u64(context, "prepare_attributes: context")
        resolved: list[PreparedColumn] = []
        layout: list[tuple[_Path, np.ndarray, np.dtype]] = []
        size = 0
        for c, column in enumerate(columns):
            col = PreparedColumn(*column)
            path = self._path(col.attribute, False)
            objs = _handles_array(col.objects, f"prepare_attributes: column {c} ({path.label}) objects")
            count = path.info.nb_elements if col.count is None else col.count
            if col.count is None and path.info.data_type == DataType.STRING:
                count = 0  # a string's registered count is not its length: give the byte count
            if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 1:
                raise PvdError(f"prepare_attributes: column {c} ({path.label}) needs a fixed count of "
                               f"at least 1 element (registered: {_expects(path.info)}), got {count!r}")
            value_dtype = path.info.data_type.numpy_dtype
            if int(count) * value_dtype.itemsize > MAX_DATA_BYTES:
                raise PvdError(f"attribute {path.label}: payload of {count} elements exceeds the u32 "
                               "size field")
            rec = attribute_dtype(len(path.handles), value_dtype, int(count))
            resolved.append(PreparedColumn(objs, col.attribute, int(count)))
            layout.append((path, objs, rec))
            size += rec.itemsize * len(objs)
        buffer = np.zeros(size, np.uint8)
        slots, labels, at = [], [], 0
        for path, objs, rec in layout:
            table = np.ndarray(len(objs), rec, buffer=buffer, offset=at)
            table["cmd"] = Command.SET_ATTRIBUTE
            table["ctx"] = context
            table["obj"] = objs
            table["depth"] = len(path.handles)
            table["path"] = path.handles
            table["size"] = rec["data"].itemsize
            slots.append(table["data"])
            labels.append(path.label)
            at += rec.itemsize * len(objs)
        return PreparedAttributes(self, context, buffer, slots, tuple(resolved), tuple(labels))

    def write_prepared(self, block: PreparedAttributes) -> None:
        """Write every command of ``block`` (made by this writer) with its current values, in one
        stream write: the bytes ``set_attribute`` / ``set_attribute_bytes`` would write for each
        (object, value) in the block's order."""
        if not isinstance(block, PreparedAttributes) or block._owner is not self:
            raise PvdError("write_prepared: the block was not prepared by this writer "
                           "(attribute handles are per writer)")
        if not block._buffer.nbytes:
            return
        hook = getattr(self._stream, "write_prepared", None)
        if hook is None:
            self._emit(memoryview(block._encoded()))
            return
        # A stream that indexes what it receives (HDF5) takes the block itself: its commands
        # never change, so it indexes them once and then keeps only the values.
        if self._closed:
            raise PvdError("writer: command after close()")
        if not self._started:  # the header first, as before every command
            header = encode_header(self.version)
            self._stream.write(header)
            self.bytes_written += len(header)
            self._started = True
        hook(block)
        self.bytes_written += block._buffer.nbytes

    def write_frames(
        self,
        context: int,
        timestamps: np.ndarray | Sequence[int],
        blocks: Sequence[FrameBlock | tuple[object, Mapping[AttributeRef, object]]],
        *,
        stop_timestamps: np.ndarray | Sequence[int] | None = None,
        chunk_bytes: int = 1 << 25,
    ) -> None:
        """Write whole frames: per frame f, START_FRAME(timestamps[f]); then for each block, for
        each of its objects in order, one SET_ATTRIBUTE per column; then STOP_FRAME.

        ``blocks`` are :class:`FrameBlock` s (or ``(objects, columns)`` pairs), typically one per
        class: ``columns`` maps an attribute (handle or path) to values of shape ``(frames,
        objects, count)`` (or ``(frames, objects)`` when count is 1). This is the high-rate path
        of a simulation recorder: frames are encoded by numpy in chunks of about
        ``chunk_bytes``, with no Python work per command. ``stop_timestamps`` defaults to
        ``timestamps``.
        """
        ts = _handles_array(timestamps, "write_frames: timestamps", allow_zero=True)
        stop = ts if stop_timestamps is None else _handles_array(
            stop_timestamps, "write_frames: stop_timestamps", allow_zero=True)
        if stop.shape != ts.shape:
            raise PvdError(f"write_frames: {len(stop)} stop timestamps for {len(ts)} frames")
        _check_u64(context, "write_frames: context")
        names, formats, offsets, fills = ["start"], [PAIR_DTYPE], [0], []
        at = PAIR_DTYPE.itemsize
        for b, block in enumerate(blocks):
            objects, columns = block
            objs = _handles_array(objects, f"write_frames: block {b} objects")
            fields: list[tuple[str, np.dtype, int]] = []
            size = 0
            for k, (ref, values) in enumerate(columns.items()):
                path = self._path(ref, False)
                arr, count = _batch_values(path, values, (len(ts), len(objs)))
                dt = attribute_dtype(len(path.handles), arr.dtype, count)
                fields.append((f"c{k}", dt, size))
                fills.append((f"b{b}", f"c{k}", objs, path, arr, count))
                size += dt.itemsize
            if not fields or not len(objs):
                continue
            obj_dt = np.dtype({"names": [f[0] for f in fields], "formats": [f[1] for f in fields],
                               "offsets": [f[2] for f in fields], "itemsize": size})
            names.append(f"b{b}")
            formats.append((obj_dt, (len(objs),)))
            offsets.append(at)
            at += size * len(objs)
        names.append("stop")
        formats.append(PAIR_DTYPE)
        offsets.append(at)
        frame_dt = np.dtype({"names": names, "formats": formats, "offsets": offsets,
                             "itemsize": at + PAIR_DTYPE.itemsize})
        per_chunk = max(1, chunk_bytes // frame_dt.itemsize)
        for a in range(0, len(ts), per_chunk):
            b = min(a + per_chunk, len(ts))
            rec = np.empty(b - a, frame_dt)
            for name, cmd, times in (("start", Command.START_FRAME, ts), ("stop", Command.STOP_FRAME, stop)):
                rec[name]["cmd"] = cmd
                rec[name]["a"] = context
                rec[name]["b"] = times[a:b]
            for block_name, col, objs, path, arr, count in fills:
                if block_name in names:
                    _fill_set(rec[block_name][col], context, objs[None, :], path, arr[a:b], count)
            self._emit(memoryview(rec.view(np.uint8)))
            self._frame_end()

    # ---------------------------------------------------------------------- objects, frames

    def create_object(self, context: int, class_handle: int, object: int, name: str | None = None) -> None:
        """Object ``object`` (a producer-chosen u64, e.g. an address; not 0) of class
        ``class_handle`` starts to exist in ``context``."""
        _check_name(name, "create_object: object name")
        self._require_class(class_handle, f"create_object {name!r}: class")
        _check_u64(object, f"create_object {name!r}: object handle", nonzero=True)
        _check_u64(context, f"create_object {name!r}: context")
        self._emit(CREATE.pack(Command.CREATE_OBJECT, context, class_handle, object)
                   + encode_string(name, "object name"))

    def destroy_object(self, context: int, object: int) -> None:
        """Object ``object`` of ``context`` ends."""
        self._emit(self._pack_pair(Command.DESTROY_OBJECT, context, object, "destroy_object"))

    def start_frame(self, context: int, timestamp: int) -> None:
        """A frame of ``context`` begins at ``timestamp`` (u64 in the producer's unit)."""
        self._emit(self._pack_pair(Command.START_FRAME, context, timestamp, "start_frame"))

    def stop_frame(self, context: int, timestamp: int) -> None:
        """The current frame of ``context`` ends at ``timestamp``."""
        self._emit(self._pack_pair(Command.STOP_FRAME, context, timestamp, "stop_frame"))
        self._frame_end()

    def _frame_end(self) -> None:
        """Tell a stream that wants to know (``frame_end()``, optional) that a frame is complete:
        a crash-safe recording commits on frame boundaries."""
        frame_end = getattr(self._stream, "frame_end", None)
        if frame_end is not None:
            frame_end()

    @staticmethod
    def _pack_pair(cmd: Command, a: int, b: int, what: str) -> bytes:
        try:
            return PAIR.pack(cmd, a, b)
        except struct.error:
            raise PvdError(f"{what}: arguments {a!r}, {b!r} must be integers in 0..2**64-1") from None

    def record_message(self, context: int, message: str, file: str, line: int, type: int,
                       class_handle: int = INVALID_HANDLE) -> None:
        """Record a log message with its source location and a producer-defined type (0.4+)."""
        if self.version[:2] < (0, 4):
            raise PvdError(f"record_message: stream version {_vs(self.version)} has no messages (0.4+)")
        _check_u64(context, "record_message: context")
        _check_name(message, "record_message: message")
        _check_name(file, "record_message: file")
        for value, what in ((line, "line"), (type, "type"), (class_handle, "class handle")):
            _check_u32(value, f"record_message: {what}")
        self._emit(RecordMessage(context, message, file, line, type, class_handle).encode(self.version))


# --------------------------------------------------------------------------------------------
# Value conversion
# --------------------------------------------------------------------------------------------

_FLAGS_WIDTHS = (np.dtype("u1"), np.dtype("<u2"), np.dtype("<u4"))


def _vs(version: Version) -> str:
    return ".".join(map(str, version))


def _writable_version(version: Version) -> Version:
    """``version`` if PhysX's reader and pvdkit both read it, else :class:`PvdError`."""
    try:
        v = tuple(int(x) for x in version)
    except (TypeError, ValueError):
        v = ()
    if len(v) != 3 or isinstance(version, str | bytes):
        raise PvdError(f"OmniPvdWriter(version={version!r}): a stream version is three integers "
                       "(major, minor, patch)")
    span = f"write {_vs(OLDEST_WRITABLE_VERSION)} … {_vs(NEWEST_WRITABLE_VERSION)}"
    if v > NEWEST_WRITABLE_VERSION:
        raise PvdError(f"OmniPvdWriter(version={version!r}): stream version {_vs(v)} is newer than "
                       f"{_vs(NEWEST_WRITABLE_VERSION)}, the newest PhysX's OmniPvdReader reads; {span}")
    if v < OLDEST_WRITABLE_VERSION:
        raise PvdError(f"OmniPvdWriter(version={version!r}): stream version {_vs(v)} is older than "
                       f"{_vs(OLDEST_WRITABLE_VERSION)}, the oldest pvdkit reads; {span}")
    return check_version(v, "writer")


def _as_text(name: str | bytes | bytearray | memoryview | None) -> str:
    """A name given as bytes (PhysX's ``char*``, possibly no UTF-8) as the reader shows it: str,
    undecodable bytes kept as surrogates (``surrogateescape``); None is the empty name."""
    if name is None or isinstance(name, str):
        return name or ""
    return bytes(name).decode("utf-8", "surrogateescape")


def _check_name(text: object, what: str) -> None:
    """Refuse a name or message PhysX's ``OmniPvdReader`` cannot read back whole: longer than
    :data:`MAX_READER_STRING_BYTES` of UTF-8, or holding a NUL byte."""
    if text is None:  # written as the empty string
        return
    if isinstance(text, str):
        raw = text.encode("utf-8", "surrogateescape")
    elif isinstance(text, bytes | bytearray | memoryview):
        raw = bytes(text)
    else:
        raise PvdError(f"{what} must be a str or bytes, got {type(text).__name__}")
    nul = raw.find(b"\0")
    if nul >= 0:
        raise PvdError(f"{what} {_short(raw)} holds a NUL byte at offset {nul}; PhysX's OmniPvdReader "
                       "would cut it there")
    if len(raw) > MAX_READER_STRING_BYTES:
        raise PvdError(f"{what} {_short(raw)} is {len(raw):,} bytes long (UTF-8); PhysX's OmniPvdReader "
                       f"reads at most {MAX_READER_STRING_BYTES:,}")


def _short(raw: bytes) -> str:
    text = raw.decode("utf-8", "backslashreplace")
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _data_type(data_type: DataType | int, what: str) -> DataType:
    try:
        return DataType(data_type)
    except ValueError:
        raise PvdError(f"{what}: unknown data type {data_type!r} (expected a DataType 0..13)") from None


def _check_u32(value: int, what: str) -> None:
    if not isinstance(value, int | np.integer) or not 0 <= value <= 0xFFFFFFFF:
        raise PvdError(f"{what} must be an integer in 0..2**32-1, got {value!r}")


def _check_u64(value: int, what: str, nonzero: bool = False) -> None:
    if not isinstance(value, int | np.integer) or not (1 if nonzero else 0) <= value <= _U64_MAX:
        raise PvdError(f"{what} must be an integer in {1 if nonzero else 0}..2**64-1, got {value!r}")


def _expects(info: AttributeInfo) -> str:
    assert info.data_type is not None
    if info.kind == AttributeKind.UNIQUE_LIST:
        return f"one {info.data_type.name} item"
    if info.nb_elements == 0:
        return f"any number × {info.data_type.name}"
    return f"{info.nb_elements} × {info.data_type.name}"


def _convert(value: object, dtype: np.dtype, path: _Path) -> np.ndarray:
    """``value`` as an array of ``dtype``; integers must convert exactly."""
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise PvdError(f"attribute {path.label} expects {_expects(path.info)}, got an "
                       f"unconvertible {type(value).__name__}: {exc}") from None
    if arr.dtype == dtype:
        return arr
    src = arr.dtype.kind
    ok = src in "biuf" if dtype.kind == "f" or arr.size == 0 else src in "biu"
    if dtype.kind in "iu" and src == "f" and arr.size:
        ok = bool(np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)))
    if not ok:
        raise PvdError(f"attribute {path.label} expects {_expects(path.info)}, got "
                       f"{type(value).__name__} of {arr.dtype} that does not convert exactly to "
                       f"{path.info.data_type.name}: {np.array2string(arr.ravel()[:4])}")
    if dtype.kind in "iu" and src in "iuf" and arr.size:
        info = np.iinfo(dtype)
        lo, hi = arr.min(), arr.max()
        if lo < info.min or hi > info.max:
            raise PvdError(f"attribute {path.label} expects {_expects(path.info)}: value range "
                           f"{lo}..{hi} does not fit {path.info.data_type.name} ({info.min}..{info.max})")
    return arr.astype(dtype)


def _encode_value(path: _Path, value: object) -> bytes:
    info = path.info
    dt = info.data_type
    assert dt is not None
    if dt == DataType.STRING:
        if isinstance(value, str):
            return value.encode("utf-8", "surrogateescape")
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value)
        raise PvdError(f"attribute {path.label} expects a STRING (str or bytes), got {type(value).__name__}")
    if isinstance(value, str | bytes | bytearray | memoryview):
        raise PvdError(f"attribute {path.label} expects {_expects(info)}, got {type(value).__name__}; "
                       "raw payloads go through set_attribute_bytes")
    single = info.nb_elements == 1
    vt = type(value)
    if single and (vt is float or vt is int) and (vt is int or dt in _FLOAT_TYPES):
        try:
            return _SCALAR[dt].pack(value)
        except (struct.error, OverflowError):
            raise PvdError(
                f"attribute {path.label} expects {_expects(info)}: {value!r} does not fit") from None
    dtype = dt.numpy_dtype
    if (dt == DataType.FLAGS_WORD and isinstance(value, np.ndarray | np.generic)
            and value.dtype in _FLAGS_WIDTHS):
        dtype = value.dtype.newbyteorder("<")
    arr = _convert(value, dtype, path)
    if info.nb_elements and arr.size != info.nb_elements:
        raise PvdError(f"attribute {path.label} expects {_expects(info)}, got {arr.size} value"
                       f"{'s' if arr.size != 1 else ''} (shape {arr.shape})")
    return arr.tobytes()


def _handles_array(values: object, what: str, allow_zero: bool = False) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise PvdError(f"{what} must be a 1-D array of integers, got {arr.dtype} with shape {arr.shape}")
    if arr.size and (arr.min() < (0 if allow_zero else 1)):
        need = "non-negative" if allow_zero else "positive (0 is the invalid handle)"
        raise PvdError(f"{what} must be {need}")
    return arr.astype("<u8")


def _batch_values(path: _Path, values: object, lead: tuple[int, ...]) -> tuple[np.ndarray, int]:
    info = path.info
    assert info.data_type is not None
    if info.data_type == DataType.STRING:
        raise PvdError(f"attribute {path.label}: STRING values have no batch path; use set_attribute")
    dtype = info.data_type.numpy_dtype
    if (info.data_type == DataType.FLAGS_WORD and isinstance(values, np.ndarray)
            and values.dtype in _FLAGS_WIDTHS):
        dtype = values.dtype.newbyteorder("<")
    arr = _convert(values, dtype, path)
    if arr.shape == lead and info.nb_elements in (0, 1):
        arr = arr.reshape(*lead, 1)
    if arr.ndim != len(lead) + 1 or arr.shape[:-1] != lead:
        raise PvdError(f"attribute {path.label}: values of shape {arr.shape} do not match "
                       f"{lead} × count ({_expects(info)} per object)")
    count = arr.shape[-1]
    if info.nb_elements and count != info.nb_elements:
        raise PvdError(f"attribute {path.label} expects {_expects(info)}, got {count} per object "
                       f"(values of shape {arr.shape})")
    return arr, count


def _fill_set(rec: np.ndarray, context: int, objects: np.ndarray, path: _Path, values: np.ndarray,
              count: int) -> None:
    rec["cmd"] = Command.SET_ATTRIBUTE
    rec["ctx"] = context
    rec["obj"] = objects
    rec["depth"] = len(path.handles)
    rec["path"] = path.handles
    rec["size"] = count * values.dtype.itemsize
    rec["data"] = values
