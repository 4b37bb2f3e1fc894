"""A parser for Stingray's SJSON ("simplified JSON"), keeping the position of every value.

SJSON as Stingray's ``.physics``, ``.unit`` and ``.package`` files write it:

* the outer braces of the top-level object are optional;
* keys are bare identifiers (``[A-Za-z_][A-Za-z0-9_]*``) or quoted strings, followed by ``=``
  (``:`` is accepted too);
* commas between members and between array items are optional (whitespace separates them);
* ``//`` line comments and ``/* */`` block comments;
* values: strings (``"..."`` with JSON escapes, or ``\"\"\"raw text\"\"\"``), numbers (integers stay
  ``int``), ``true``, ``false``, ``null``, objects ``{ ... }`` and arrays ``[ ... ]``.

Lenient on one construct, because Stingray's own documentation writes it (the ``cuboid``
example of a vehicle's ``moment_of_inertia``): a bracketed list whose items are all
``key = value`` pairs, ``[ mass_factor = 0.08 scale = [1 1 0.5] ]``, is read as an object, with a
:class:`SjsonWarning` saying so. Mixing pairs and plain values in one bracket is an error.

Everything else that is not SJSON raises :class:`SjsonError` with the file, line and column
(1-based) and the property path of the value being read (``vehicles[0].chassis.mass``).
Duplicate keys in one object are an error (the later one would silently win otherwise).

Parsed objects are :class:`SjsonObject` (a ``dict``) and arrays :class:`SjsonArray` (a ``list``);
both remember where they and their members start, so that code interpreting the data can report
the position of a bad value (:meth:`SjsonObject.location`, :meth:`SjsonArray.location`).
"""

from __future__ import annotations

import bisect
import os
import re
import warnings
from dataclasses import dataclass
from typing import Any

from pvdkit.outputs import require_input
from pvdkit.types import PvdError

#: Deepest nesting accepted (objects and arrays); deeper input is rejected rather than recursing.
MAX_DEPTH = 200

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


@dataclass(frozen=True)
class Location:
    """Where something starts in a source: 1-based ``line`` and ``column``."""

    source: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.source}:{self.line}:{self.column}"


class SjsonError(ValueError):
    """Invalid SJSON, or a value that does not mean what is expected.

    ``str(error)`` reads ``file:line:column: path: message``; the parts are attributes too.
    """

    def __init__(self, message: str, location: Location | None = None, path: str = "") -> None:
        self.message = message
        self.location = location
        self.path = path
        where = str(location) if location is not None else "<sjson>"
        super().__init__(f"{where}: {path}: {message}" if path else f"{where}: {message}")


class SjsonWarning(UserWarning):
    """Something accepted but worth a look (the message gives file:line:column and path)."""


class SjsonObject(dict):
    """A parsed SJSON object: a ``dict`` that knows where it and each member start."""

    def __init__(self, location: Location, path: str) -> None:
        super().__init__()
        self.start = location
        self.path = path
        self.key_locations: dict[str, Location] = {}
        self.value_locations: dict[str, Location] = {}

    def location(self, key: str | None = None) -> Location:
        """Where the value of ``key`` starts (the object's own start without a key or if absent)."""
        if key is None:
            return self.start
        return self.value_locations.get(key, self.start)


class SjsonArray(list):
    """A parsed SJSON array: a ``list`` that knows where it and each item start."""

    def __init__(self, location: Location, path: str) -> None:
        super().__init__()
        self.start = location
        self.path = path
        self.item_locations: list[Location] = []

    def location(self, index: int | None = None) -> Location:
        """Where item ``index`` starts (the array's own start without an index or if out of range)."""
        if index is None or not 0 <= index < len(self.item_locations):
            return self.start
        return self.item_locations[index]


def child_path(path: str, key: str | int) -> str:
    """``path`` extended by an object key or an array index (``a.b``, ``a[3]``)."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


class _Parser:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.pos = 0
        self.n = len(text)
        self.line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
        self.depth = 0

    # -- positions ---------------------------------------------------------------------------

    def loc(self, pos: int | None = None) -> Location:
        p = self.pos if pos is None else pos
        line = bisect.bisect_right(self.line_starts, p)
        return Location(self.source, line, p - self.line_starts[line - 1] + 1)

    def error(self, message: str, path: str, pos: int | None = None) -> SjsonError:
        return SjsonError(message, self.loc(pos), path)

    def found(self) -> str:
        if self.pos >= self.n:
            return "the end of the file"
        m = _WORD.match(self.text, self.pos)
        if m:
            return repr(m.group(0))
        return repr(self.text[self.pos])

    # -- lexing ------------------------------------------------------------------------------

    def skip(self, path: str) -> None:
        """Skip whitespace and comments."""
        t = self.text
        while self.pos < self.n:
            c = t[self.pos]
            if c in " \t\r\n\ufeff":
                self.pos += 1
            elif t.startswith("//", self.pos):
                end = t.find("\n", self.pos)
                self.pos = self.n if end < 0 else end + 1
            elif t.startswith("/*", self.pos):
                end = t.find("*/", self.pos + 2)
                if end < 0:
                    raise self.error("unterminated /* comment", path)
                self.pos = end + 2
            else:
                return

    def skip_separators(self, path: str) -> None:
        """Skip whitespace, comments and (optional) commas."""
        while True:
            self.skip(path)
            if self.pos < self.n and self.text[self.pos] == ",":
                self.pos += 1
                continue
            return

    # -- grammar -----------------------------------------------------------------------------

    def document(self) -> SjsonObject:
        self.skip("")
        start = self.pos
        if self.pos < self.n and self.text[self.pos] == "{":
            self.pos += 1
            obj = self.members("", "}", start)
        else:
            obj = self.members("", None, start)
        self.skip("")
        if self.pos < self.n:
            raise self.error(f"unexpected {self.found()} after the top-level object", "")
        return obj

    def enter(self, path: str) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            shown = path if len(path) <= 60 else path[:57] + "..."  # keep the message one short line
            raise self.error(f"nesting deeper than {MAX_DEPTH} levels", shown)

    def members(self, path: str, close: str | None, start: int) -> SjsonObject:
        """Members up to ``close`` (or the end of the text for the top level without braces)."""
        self.enter(path)
        obj = SjsonObject(self.loc(start), path)
        while True:
            self.skip_separators(path)
            if self.pos >= self.n:
                if close is None:
                    break
                raise self.error(f"unterminated object: no '{close}' before the end of the file "
                                 f"(the object opened at line {self.loc(start).line}, column "
                                 f"{self.loc(start).column})", path, start)
            if close is not None and self.text[self.pos] == close:
                self.pos += 1
                break
            key_pos = self.pos
            key = self.key(path)
            kpath = child_path(path, key)
            if key in obj:
                first = obj.key_locations[key]
                raise self.error(f"duplicate key {key!r} (first at line {first.line}, column {first.column})",
                                 kpath, key_pos)
            self.skip(kpath)
            if self.pos >= self.n or self.text[self.pos] not in "=:":
                raise self.error(f"expected '=' after the key {key!r}, found {self.found()}", kpath)
            self.pos += 1
            self.skip(kpath)
            value_pos = self.pos
            obj[key] = self.value(kpath)
            obj.key_locations[key] = self.loc(key_pos)
            obj.value_locations[key] = self.loc(value_pos)
        self.depth -= 1
        return obj

    def key(self, path: str) -> str:
        if self.text[self.pos] == '"':
            return self.string(path)
        m = _IDENT.match(self.text, self.pos)
        if not m:
            raise self.error(f"expected a key (a name or a quoted string), found {self.found()}", path)
        self.pos = m.end()
        return m.group(0)

    def value(self, path: str) -> Any:
        if self.pos >= self.n:
            raise self.error("expected a value, found the end of the file", path)
        c = self.text[self.pos]
        if c == "{":
            start = self.pos
            self.pos += 1
            return self.members(path, "}", start)
        if c == "[":
            return self.array(path)
        if c == '"':
            return self.string(path)
        m = _NUMBER.match(self.text, self.pos)
        if m:
            end = m.end()
            if end < self.n and (self.text[end].isalnum() or self.text[end] in "_."):
                bad = re.match(r"[-+\w.]+", self.text[self.pos:])
                raise self.error(f"malformed number {bad.group(0) if bad else self.found()!r}", path)
            self.pos = end
            text = m.group(0)
            if re.fullmatch(r"[-+]?\d+", text):
                return int(text)
            return float(text)
        m = _IDENT.match(self.text, self.pos)
        if m:
            word = m.group(0)
            literals = {"true": True, "false": False, "null": None}
            if word in literals:
                self.pos = m.end()
                return literals[word]
            raise self.error(f"expected a value, found the bare word {word!r} (strings need quotes)", path)
        raise self.error(f"expected a value, found {self.found()}", path)

    def array(self, path: str) -> SjsonArray | SjsonObject:
        start = self.pos
        self.pos += 1
        self.enter(path)
        items = SjsonArray(self.loc(start), path)
        as_pairs: SjsonObject | None = None
        while True:
            self.skip_separators(path)
            if self.pos >= self.n:
                raise self.error(f"unterminated array: no ']' before the end of the file (the array "
                                 f"opened at line {self.loc(start).line}, column {self.loc(start).column})",
                                 path, start)
            if self.text[self.pos] == "]":
                self.pos += 1
                break
            if self.is_pair_ahead():
                if items:
                    raise self.error("a key = value pair inside an array of values", path)
                if as_pairs is None:
                    as_pairs = SjsonObject(self.loc(start), path)
                key_pos = self.pos
                key = self.key(path)
                kpath = child_path(path, key)
                if key in as_pairs:
                    first = as_pairs.key_locations[key]
                    raise self.error(f"duplicate key {key!r} (first at line {first.line}, column "
                                     f"{first.column})", kpath, key_pos)
                self.skip(kpath)
                self.pos += 1  # '=' or ':'
                self.skip(kpath)
                value_pos = self.pos
                as_pairs[key] = self.value(kpath)
                as_pairs.key_locations[key] = self.loc(key_pos)
                as_pairs.value_locations[key] = self.loc(value_pos)
                continue
            if as_pairs is not None:
                raise self.error("a plain value inside a bracket of key = value pairs", path)
            ipath = child_path(path, len(items))
            items.item_locations.append(self.loc())
            items.append(self.value(ipath))
        self.depth -= 1
        if as_pairs is not None:
            warnings.warn(SjsonWarning(
                f"{self.loc(start)}: {path}: an array written with key = value pairs is read as an "
                "object (as in Stingray's documentation example)"), stacklevel=4)
            return as_pairs
        return items

    def is_pair_ahead(self) -> bool:
        """True when a bare key followed by '=' or ':' starts at the current position."""
        m = _IDENT.match(self.text, self.pos)
        if not m or m.group(0) in ("true", "false", "null"):
            return False
        p = m.end()
        while p < self.n and self.text[p] in " \t":
            p += 1
        return p < self.n and self.text[p] in "=:"

    def string(self, path: str) -> str:
        t = self.text
        start = self.pos
        if t.startswith('"""', self.pos):
            end = t.find('"""', self.pos + 3)
            if end < 0:
                raise self.error('unterminated """ string', path, start)
            self.pos = end + 3
            return t[start + 3:end]
        self.pos += 1
        out: list[str] = []
        while True:
            if self.pos >= self.n:
                raise self.error("unterminated string", path, start)
            c = t[self.pos]
            if c == '"':
                self.pos += 1
                return "".join(out)
            if c == "\n":
                raise self.error("unterminated string (a line break inside quotes)", path, start)
            if c == "\\":
                if self.pos + 1 >= self.n:
                    raise self.error("unterminated string", path, start)
                e = t[self.pos + 1]
                if e in _ESCAPES:
                    out.append(_ESCAPES[e])
                    self.pos += 2
                elif e == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", t[self.pos + 2:self.pos + 6]):
                    out.append(chr(int(t[self.pos + 2:self.pos + 6], 16)))
                    self.pos += 6
                else:
                    raise self.error(f"invalid escape '\\{e}' in a string", path)
                continue
            out.append(c)
            self.pos += 1


def loads(text: str, source: str = "<string>") -> SjsonObject:
    """Parse SJSON text; ``source`` names it in errors and warnings."""
    return _Parser(text, source).document()


#: Largest .physics file read (a vehicle description is a few KB).
MAX_SJSON_BYTES = 16 << 20


def load(path: str | os.PathLike) -> SjsonObject:
    """Parse an SJSON file (UTF-8); errors name the file as given."""
    source = os.fspath(path)
    try:
        require_input(source, "a Stingray .physics file")  # a FIFO would block, /dev/zero never end
    except PvdError as exc:
        raise SjsonError(str(exc).removeprefix(f"{source}: "), Location(source, 1, 1)) from None
    try:
        with open(source, "rb") as f:
            raw = f.read(MAX_SJSON_BYTES + 1)
        if len(raw) > MAX_SJSON_BYTES:
            raise SjsonError(f"more than {MAX_SJSON_BYTES >> 20} MB: not a vehicle description",
                             Location(source, 1, 1))
        text = raw.decode("utf-8")
    except OSError as exc:
        raise SjsonError(f"cannot read the file ({exc.strerror or exc})", Location(source, 1, 1)) from None
    except UnicodeDecodeError as exc:
        raise SjsonError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                         Location(source, 1, 1)) from None
    return loads(text, source)


def plain(value: Any) -> Any:
    """The parsed value as plain ``dict`` / ``list`` (positions dropped), e.g. for JSON output."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
