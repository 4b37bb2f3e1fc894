"""Encode and decode single OmniPVD commands, byte for byte as PhysX's ``pvdruntime`` does.

This is the low-level layer (like h5py's C-API layer): one frozen dataclass per command, each
with ``encode()``, and :func:`decode_command_at` that reads one command at a byte offset. The
friendly writer (:mod:`pvdkit.writer`) and the fast whole-stream index
(:mod:`pvdkit.ovd.tokenizer`) sit on top; they agree with this module byte for byte.

Wire layout (all little endian; see ``docs/ovd-format.md``): a 12-byte header of three u32
(major, minor, patch), then commands, each a u8 command code followed by its fields. Strings are
a u16 byte length and that many bytes, no terminator.

Names are Python ``str`` decoded as UTF-8 with ``surrogateescape`` so that any byte sequence
(PhysX writes ``char*`` verbatim) survives a decode → encode round trip unchanged.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from pvdkit.ovd.layout import (
    ATTR_DEPTH,
    ATTR_HEAD,
    ATTR_PATH,
    CREATE,
    HEADER,
    HEADER_SIZE,
    MAX_DATA_BYTES,
    MAX_PATH_DEPTH,
    MAX_STRING_BYTES,
    MSG_HEAD,
    MSG_TAIL,
    PAIR,
    REG_ATTR,
    REG_CLASS,
    REG_CLASS_ATTR,
    REG_CLASS_OLD,
    REG_LIST,
    U16,
    U32,
    encode_path,
)
from pvdkit.types import (
    OVD_OLDEST_READABLE_VERSION,
    OVD_VERSION,
    Command,
    DataType,
    PvdError,
)

Version = tuple[int, int, int]


def encode_header(version: Version = OVD_VERSION) -> bytes:
    """The 12-byte stream header PhysX writes before its first command."""
    return HEADER.pack(*version)


#: Largest major or minor number a version header can plausibly hold; more means the bytes are
#: not an OmniPVD header at all (text, another format), which is worth saying instead of
#: "newer version".
MAX_PLAUSIBLE_VERSION = 0xFF


def check_version(version: Version, source_name: str = "<memory>", *, header: bool = False) -> Version:
    """Accept a stream version pvdkit can read, or raise :class:`PvdError` saying why not.

    Readable: 0.2 up to the 0.4 that pvdkit knows, any patch level (patches do not change the
    layout). PhysX's own reader also refuses a newer patch; pvdkit is lenient there on purpose.
    A major or minor number above :data:`MAX_PLAUSIBLE_VERSION` is reported as "not an
    OmniPVD stream" (``header``: the numbers were read from a stream's first 12 bytes, so the
    message says so; else they came from elsewhere, e.g. an HDF5 attribute). Every reader —
    ``.ovd`` files, memory, HDF5 recordings — applies this one rule.
    """
    try:
        major, minor, _patch = (int(v) for v in version)
    except (TypeError, ValueError):
        raise PvdError(f"{source_name}: a stream version is three integers (major, minor, patch), "
                       f"got {version!r}") from None
    if not (0 <= major <= 0xFFFFFFFF and 0 <= minor <= 0xFFFFFFFF and 0 <= _patch <= 0xFFFFFFFF):
        raise PvdError(f"{source_name}: a stream version is three u32 numbers, got {major}.{minor}.{_patch}")
    if major > MAX_PLAUSIBLE_VERSION or minor > MAX_PLAUSIBLE_VERSION:
        read = f"{major}.{minor}.{_patch}"
        if header:
            raise PvdError(f"{source_name}: not an OmniPVD stream: its first 12 bytes are not a "
                           f"version header ({_bytes_shown(HEADER.pack(major, minor, _patch))}; .ovd files "
                           "start with their version 0.2 … 0.4, .h5 recordings with HDF5's signature)")
        raise PvdError(f"{source_name}: not an OmniPVD stream version: {read} "
                       "(OmniPVD versions are 0.2 … 0.4)")
    if (major, minor) > OVD_VERSION[:2]:
        raise PvdError(
            f"{source_name}: OmniPVD stream version {major}.{minor}.{_patch} is newer than the "
            f"newest version pvdkit reads ({'.'.join(map(str, OVD_VERSION))}); "
            "upgrade pvdkit to read it"
        )
    if (major, minor) < OVD_OLDEST_READABLE_VERSION[:2]:
        raise PvdError(
            f"{source_name}: OmniPVD stream version {major}.{minor}.{_patch} is older than the "
            f"oldest version pvdkit reads ({'.'.join(map(str, OVD_OLDEST_READABLE_VERSION))}) "
            "— or this is not an .ovd stream"
        )
    return (major, minor, _patch)


def _bytes_shown(raw: bytes) -> str:
    """A file's first bytes as a person recognises them: text when they are text (``'# Notes'``,
    ``'{"vehicle"'``), else hex."""
    if all(32 <= c < 127 or c in (9, 10, 13) for c in raw):
        return f"they read {raw.decode('ascii')!r}"
    return f"they are {raw.hex(' ')}"


def decode_header(buffer, source_name: str = "<memory>", offset: int = 0) -> Version:
    """Read and check the version header at ``offset``; :class:`PvdError` if short or unreadable."""
    view = _as_view(buffer)
    if len(view) - offset < HEADER_SIZE:
        raise PvdError(
            f"{source_name}: {len(view) - offset} bytes is shorter than the {HEADER_SIZE}-byte "
            "OmniPVD header (u32 major, minor, patch) — not an .ovd stream or empty"
        )
    return check_version(HEADER.unpack_from(view, offset), source_name, header=True)


def check_ovd_header(head: bytes, name: str) -> None:
    """Refuse at once data that is not an OmniPVD stream (text, another format) or a version
    pvdkit cannot read: the same rule as every ``.ovd`` reader (:func:`check_version`), so
    ``info``, ``dump``, ``convert`` and the viewer all say the same. Shorter input is left to
    the tokenizer, which reports a short header."""
    if len(head) < HEADER_SIZE:
        return
    check_version(HEADER.unpack_from(head, 0), name, header=True)


def is_ovd_header(head: bytes) -> bool:
    """True when ``head`` starts with a version header pvdkit reads: an ``.ovd`` stream, whatever
    its file is called (a recording renamed ``.h5`` is still read)."""
    if len(head) < HEADER_SIZE:
        return False
    try:
        check_version(HEADER.unpack_from(head, 0), header=True)
    except PvdError:
        return False
    return True


def has_base_class(version: Version) -> bool:
    """True when ``register_class`` carries a base-class handle (stream version 0.3 and later)."""
    return tuple(version[:2]) >= (0, 3)


def encode_string(text: str | bytes | None, what: str = "string") -> bytes:
    """A u16 length prefix and the UTF-8 bytes; :class:`PvdError` if longer than 65535 bytes."""
    raw = _to_bytes(text)
    if len(raw) > MAX_STRING_BYTES:
        raise PvdError(f"{what} is {len(raw)} bytes long; OmniPVD strings hold at most {MAX_STRING_BYTES}")
    return U16.pack(len(raw)) + raw


def _to_bytes(text: str | bytes | None) -> bytes:
    if text is None:
        return b""
    if isinstance(text, str):
        return text.encode("utf-8", "surrogateescape")
    return bytes(text)


def _name(raw: bytes | memoryview) -> str:
    return bytes(raw).decode("utf-8", "surrogateescape")


# --------------------------------------------------------------------------------------------
# Command dataclasses
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RegisterClass:
    """``registerClass``: declares class ``class_handle`` (optionally deriving from ``base_class``)."""

    command: ClassVar[Command] = Command.REGISTER_CLASS
    class_handle: int
    name: str
    base_class: int = 0

    def encode(self, version: Version = OVD_VERSION) -> bytes:
        if has_base_class(version):
            head = REG_CLASS.pack(self.command, self.class_handle, self.base_class)
        else:
            if self.base_class:
                raise PvdError(
                    f"class {self.name!r}: stream version {_vs(version)} has no base classes "
                    f"(base class {self.base_class} given); base classes need 0.3 or later"
                )
            head = REG_CLASS_OLD.pack(self.command, self.class_handle)
        return head + encode_string(self.name, f"class name {self.name[:40]!r}")


@dataclass(frozen=True, slots=True)
class RegisterAttribute:
    """``registerAttribute``: a plain attribute of ``nb_elements`` × ``data_type`` (0 = variable)."""

    command: ClassVar[Command] = Command.REGISTER_ATTRIBUTE
    class_handle: int
    attribute_handle: int
    data_type: DataType
    nb_elements: int
    name: str

    def encode(self, version: Version = OVD_VERSION) -> bytes:
        return REG_ATTR.pack(
            self.command, self.class_handle, self.attribute_handle, self.data_type, self.nb_elements
        ) + encode_string(self.name, f"attribute name {self.name[:40]!r}")


@dataclass(frozen=True, slots=True)
class RegisterEnumValue:
    """``registerEnumValue``: on the wire a ``registerAttribute`` of type ENUM_VALUE carrying ``value``."""

    command: ClassVar[Command] = Command.REGISTER_ATTRIBUTE
    class_handle: int
    attribute_handle: int
    value: int
    name: str

    def encode(self, version: Version = OVD_VERSION) -> bytes:
        return REG_ATTR.pack(
            self.command, self.class_handle, self.attribute_handle, DataType.ENUM_VALUE, self.value
        ) + encode_string(self.name, f"enum value name {self.name[:40]!r}")


@dataclass(frozen=True, slots=True)
class RegisterFlagsAttribute:
    """``registerFlagsAttribute``: a ``registerAttribute`` of type FLAGS_WORD naming its enum class."""

    command: ClassVar[Command] = Command.REGISTER_ATTRIBUTE
    class_handle: int
    attribute_handle: int
    enum_class_handle: int
    name: str

    def encode(self, version: Version = OVD_VERSION) -> bytes:
        return REG_ATTR.pack(
            self.command, self.class_handle, self.attribute_handle, DataType.FLAGS_WORD,
            self.enum_class_handle,
        ) + encode_string(self.name, f"flags attribute name {self.name[:40]!r}")


@dataclass(frozen=True, slots=True)
class RegisterClassAttribute:
    """``registerClassAttribute``: an attribute whose value is a nested instance of another class."""

    command: ClassVar[Command] = Command.REGISTER_CLASS_ATTRIBUTE
    class_handle: int
    attribute_handle: int
    class_attribute_handle: int
    name: str

    def encode(self, version: Version = OVD_VERSION) -> bytes:
        return REG_CLASS_ATTR.pack(
            self.command, self.class_handle, self.attribute_handle, self.class_attribute_handle
        ) + encode_string(self.name, f"class attribute name {self.name[:40]!r}")


@dataclass(frozen=True, slots=True)
class RegisterUniqueListAttribute:
    """``registerUniqueListAttribute``: a set of ``data_type`` items changed by add/remove."""

    command: ClassVar[Command] = Command.REGISTER_UNIQUE_LIST_ATTRIBUTE
    class_handle: int
    attribute_handle: int
    data_type: DataType
    name: str

    def encode(self, version: Version = OVD_VERSION) -> bytes:
        return REG_LIST.pack(
            self.command, self.class_handle, self.attribute_handle, self.data_type
        ) + encode_string(self.name, f"unique list attribute name {self.name[:40]!r}")


@dataclass(frozen=True, slots=True)
class _AttributeCommand:
    """Shared layout of set / add-to / remove-from: context, object, handle path, raw payload."""

    command: ClassVar[Command]
    context: int
    object: int
    path: tuple[int, ...]
    data: bytes

    @property
    def attribute(self) -> int:
        """The last handle of the path: the attribute whose value the payload is."""
        return self.path[-1] if self.path else 0

    def encode(self, version: Version = OVD_VERSION) -> bytes:
        return encode_attribute_command(self.command, self.context, self.object, self.path, self.data)


@dataclass(frozen=True, slots=True)
class SetAttribute(_AttributeCommand):
    """``setAttribute``: the new value (raw little-endian bytes) of an object's attribute."""

    command: ClassVar[Command] = Command.SET_ATTRIBUTE


@dataclass(frozen=True, slots=True)
class AddToUniqueList(_AttributeCommand):
    """``addToUniqueListAttribute``: one item (raw bytes) joins an object's unique list."""

    command: ClassVar[Command] = Command.ADD_TO_UNIQUE_LIST_ATTRIBUTE


@dataclass(frozen=True, slots=True)
class RemoveFromUniqueList(_AttributeCommand):
    """``removeFromUniqueListAttribute``: one item (raw bytes) leaves an object's unique list."""

    command: ClassVar[Command] = Command.REMOVE_FROM_UNIQUE_LIST_ATTRIBUTE


@dataclass(frozen=True, slots=True)
class CreateObject:
    """``createObject``: object ``object`` of class ``class_handle`` starts to exist in ``context``."""

    command: ClassVar[Command] = Command.CREATE_OBJECT
    context: int
    class_handle: int
    object: int
    name: str

    def encode(self, version: Version = OVD_VERSION) -> bytes:
        return CREATE.pack(self.command, self.context, self.class_handle, self.object) + encode_string(
            self.name, f"object name {self.name[:40]!r}"
        )


@dataclass(frozen=True, slots=True)
class DestroyObject:
    """``destroyObject``: object ``object`` of ``context`` ends."""

    command: ClassVar[Command] = Command.DESTROY_OBJECT
    context: int
    object: int

    def encode(self, version: Version = OVD_VERSION) -> bytes:
        return PAIR.pack(self.command, self.context, self.object)


@dataclass(frozen=True, slots=True)
class StartFrame:
    """``startFrame``: a new frame of ``context`` begins at ``timestamp`` (the producer's unit)."""

    command: ClassVar[Command] = Command.START_FRAME
    context: int
    timestamp: int

    def encode(self, version: Version = OVD_VERSION) -> bytes:
        return PAIR.pack(self.command, self.context, self.timestamp)


@dataclass(frozen=True, slots=True)
class StopFrame:
    """``stopFrame``: the current frame of ``context`` ends at ``timestamp``."""

    command: ClassVar[Command] = Command.STOP_FRAME
    context: int
    timestamp: int

    def encode(self, version: Version = OVD_VERSION) -> bytes:
        return PAIR.pack(self.command, self.context, self.timestamp)


@dataclass(frozen=True, slots=True)
class RecordMessage:
    """``recordMessage`` (stream version 0.4+): a log message with source location and type."""

    command: ClassVar[Command] = Command.RECORD_MESSAGE
    context: int
    message: str
    file: str
    line: int
    type: int
    class_handle: int = 0

    def encode(self, version: Version = OVD_VERSION) -> bytes:
        return b"".join((
            MSG_HEAD.pack(self.command, self.context),
            encode_string(self.message, "message"),
            encode_string(self.file, "message file name"),
            MSG_TAIL.pack(self.line, self.type, self.class_handle),
        ))


DecodedCommand = (
    RegisterClass | RegisterAttribute | RegisterEnumValue | RegisterFlagsAttribute
    | RegisterClassAttribute | RegisterUniqueListAttribute | SetAttribute | AddToUniqueList
    | RemoveFromUniqueList | CreateObject | DestroyObject | StartFrame | StopFrame | RecordMessage
)

_ATTRIBUTE_CLASSES: dict[int, type[_AttributeCommand]] = {
    Command.SET_ATTRIBUTE: SetAttribute,
    Command.ADD_TO_UNIQUE_LIST_ATTRIBUTE: AddToUniqueList,
    Command.REMOVE_FROM_UNIQUE_LIST_ATTRIBUTE: RemoveFromUniqueList,
}


def encode_command(command: DecodedCommand, version: Version = OVD_VERSION) -> bytes:
    """The bytes of one command (without stream header) in the layout of ``version``."""
    return command.encode(version)


def encode_attribute_command(
    command: Command | int, context: int, obj: int, path: tuple[int, ...] | list[int], data: bytes
) -> bytes:
    """Bytes of a set / add-to / remove-from command: the path and raw payload as given."""
    depth = len(path)
    if depth == 0 or depth > MAX_PATH_DEPTH:
        raise PvdError(f"attribute path must hold 1..{MAX_PATH_DEPTH} handles, got {depth}")
    if len(data) > MAX_DATA_BYTES:
        raise PvdError(f"attribute payload of {len(data)} bytes exceeds the u32 byte count")
    head = ATTR_HEAD.pack(command, context, obj)
    return b"".join((head, encode_path(path), U32.pack(len(data)), bytes(data)))


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------


def _as_view(buffer) -> memoryview:
    view = memoryview(buffer)
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    return view


class _Truncated(Exception):
    """Internal: the command at hand runs past the end of the buffer."""


def _need(view: memoryview, pos: int, n: int) -> None:
    if pos + n > len(view):
        raise _Truncated


def _read_string(view: memoryview, pos: int) -> tuple[str, int]:
    _need(view, pos, 2)
    (n,) = U16.unpack_from(view, pos)
    _need(view, pos + 2, n)
    return _name(view[pos + 2:pos + 2 + n]), pos + 2 + n


def decode_command_at(
    buffer, offset: int, version: Version = OVD_VERSION, source_name: str = "<memory>"
) -> tuple[DecodedCommand, int]:
    """Decode the command whose command byte is at ``offset``; return it and the offset after it.

    Raises :class:`PvdError` naming the source and offset when the buffer ends inside the command
    (truncation), the command code is unknown, or a field cannot be valid (an unknown data type,
    an empty attribute path) — the same rules as the tokenizer.
    """
    view = _as_view(buffer)
    try:
        return _decode(view, offset, has_base_class(version))
    except _Truncated:
        raise PvdError(
            f"{source_name}: truncated command at byte offset {offset}: the stream ends at byte "
            f"{len(view)} inside it"
        ) from None
    except _Invalid as exc:
        raise PvdError(f"{source_name}: damaged command at byte offset {offset}: {exc}") from None


class _Invalid(Exception):
    """Internal: a field value no PhysX writer produces."""


def _data_type(code: int) -> DataType:
    if code > DataType.FLAGS_WORD:
        raise _Invalid(f"unknown data type {code} (expected 0..{int(DataType.FLAGS_WORD)})")
    return DataType(code)


def _decode(view: memoryview, pos: int, base: bool) -> tuple[DecodedCommand, int]:
    _need(view, pos, 1)
    code = view[pos]
    if code == Command.REGISTER_CLASS:
        head = REG_CLASS if base else REG_CLASS_OLD
        _need(view, pos, head.size)
        _, cls, *rest = head.unpack_from(view, pos)
        base_cls = rest[0] if rest else 0
        name, p = _read_string(view, pos + head.size)
        return RegisterClass(cls, name, base_cls), p
    if code == Command.REGISTER_ATTRIBUTE:
        _need(view, pos, REG_ATTR.size)
        _, cls, attr, dtype, extra = REG_ATTR.unpack_from(view, pos)
        name, p = _read_string(view, pos + REG_ATTR.size)
        if dtype == DataType.ENUM_VALUE:
            return RegisterEnumValue(cls, attr, extra, name), p
        if dtype == DataType.FLAGS_WORD:
            return RegisterFlagsAttribute(cls, attr, extra, name), p
        return RegisterAttribute(cls, attr, _data_type(dtype), extra, name), p
    if code == Command.REGISTER_CLASS_ATTRIBUTE:
        _need(view, pos, REG_CLASS_ATTR.size)
        _, cls, attr, attr_cls = REG_CLASS_ATTR.unpack_from(view, pos)
        name, p = _read_string(view, pos + REG_CLASS_ATTR.size)
        return RegisterClassAttribute(cls, attr, attr_cls, name), p
    if code == Command.REGISTER_UNIQUE_LIST_ATTRIBUTE:
        _need(view, pos, REG_LIST.size)
        _, cls, attr, dtype = REG_LIST.unpack_from(view, pos)
        name, p = _read_string(view, pos + REG_LIST.size)
        return RegisterUniqueListAttribute(cls, attr, _data_type(dtype), name), p
    if code in _ATTRIBUTE_CLASSES:
        _need(view, pos, ATTR_PATH)
        _, ctx, obj = ATTR_HEAD.unpack_from(view, pos)
        depth = view[pos + ATTR_DEPTH]
        p = pos + ATTR_PATH
        if depth == 0:
            raise _Invalid("attribute command with an empty attribute path (depth 0)")
        _need(view, p, 4 * depth + 4)
        path = struct.unpack_from(f"<{depth}I", view, p)
        p += 4 * depth
        (size,) = U32.unpack_from(view, p)
        p += 4
        _need(view, p, size)
        return _ATTRIBUTE_CLASSES[code](ctx, obj, tuple(path), bytes(view[p:p + size])), p + size
    if code == Command.CREATE_OBJECT:
        _need(view, pos, CREATE.size)
        _, ctx, cls, obj = CREATE.unpack_from(view, pos)
        name, p = _read_string(view, pos + CREATE.size)
        return CreateObject(ctx, cls, obj, name), p
    if code in (Command.DESTROY_OBJECT, Command.START_FRAME, Command.STOP_FRAME):
        _need(view, pos, PAIR.size)
        _, a, b = PAIR.unpack_from(view, pos)
        cls_ = {Command.DESTROY_OBJECT: DestroyObject, Command.START_FRAME: StartFrame,
                Command.STOP_FRAME: StopFrame}[code]
        return cls_(a, b), pos + PAIR.size
    if code == Command.RECORD_MESSAGE:
        _need(view, pos, MSG_HEAD.size)
        _, ctx = MSG_HEAD.unpack_from(view, pos)
        message, p = _read_string(view, pos + MSG_HEAD.size)
        file, p = _read_string(view, p)
        _need(view, p, MSG_TAIL.size)
        line, mtype, cls = MSG_TAIL.unpack_from(view, p)
        return RecordMessage(ctx, message, file, line, mtype, cls), p + MSG_TAIL.size
    raise _Invalid(f"unknown command code {code} (expected 1 or 3..13)")


def iter_decode(
    buffer, source_name: str = "<memory>"
) -> Iterator[tuple[int, DecodedCommand]]:
    """Decode a whole stream (header included) command by command: yields (offset, command).

    A slow, simple reference reader: it raises :class:`PvdError` at the first damage. Use
    :func:`pvdkit.ovd.tokenizer.tokenize` for real files; this one cross-checks it in tests.
    """
    view = _as_view(buffer)
    version = decode_header(view, source_name)
    pos = HEADER_SIZE
    while pos < len(view):
        command, end = decode_command_at(view, pos, version, source_name)
        yield pos, command
        pos = end


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


def decode_value(data: bytes | memoryview, data_type: DataType) -> np.ndarray | str:
    """An attribute payload as values: a numpy array of the type's dtype, or ``str`` for STRING.

    Raises :class:`PvdError` if the payload is not a whole number of elements.
    """
    if data_type == DataType.STRING:
        return _name(data)
    dtype = data_type.numpy_dtype
    if len(data) % dtype.itemsize:
        raise PvdError(
            f"a {data_type.name} payload of {len(data)} bytes is not a whole number of "
            f"{dtype.itemsize}-byte elements"
        )
    return np.frombuffer(bytes(data), dtype=dtype)


def _vs(version: Version) -> str:
    return ".".join(str(v) for v in version)
