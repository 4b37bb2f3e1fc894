"""Input and output files of every pvdkit command: one rule for each, in one place.

Why one module: each command used to check its inputs and write its outputs its own way, so a
missing folder was an error for one command and silently created by another, and a failure
half-way (disk full, interrupted) left a truncated file under the target's name. The rules:

* **inputs** — :func:`require_input`: the file must exist and be a regular file; otherwise
  one :class:`~pvdkit.types.PvdError` line names it (``"x.ovd: no such file"``). Every reader
  that opens a path (the ``.ovd`` tokenizer, :meth:`pvdkit.recording.Recording.open`, the HDF5
  reader, the commands) asks here: :func:`open_input` opens after the same check. A device
  (``/dev/zero``), a FIFO or a terminal has no length and may never end, so reading one would
  run until memory runs out (or block forever); a directory is no recording either.
* **outputs** — :func:`check_output`: the parent folder must exist (``output 'x/y.h5': folder
  'x' does not exist``); a missing folder is never created, except the default
  ``recordings/`` folder of ``pvdkit record``. A folder *output* (``--plots DIR``) is created
  itself, but its parent must exist too (:func:`output_folder`).
* **atomic replace** — :func:`replacing` / :func:`atomic_open` / :func:`write_bytes` /
  :func:`write_text` write to a temporary file beside the target (same folder, so the rename
  stays on one file system) and :func:`os.replace` it into place only when the whole file was
  written and synced. On any failure the temporary file is removed and the target is left as
  it was; an :class:`OSError` becomes one line: ``disk full writing FILE`` for ``ENOSPC`` /
  ``EDQUOT``, else ``cannot write FILE: <reason>``.
* **free space** — :func:`require_free_space`, for writers that cannot survive a full disk.
* **same file** — :func:`same_file` compares by device and inode (through symbolic and hard
  links), so ``convert a.ovd link.h5`` with ``link.h5 -> a.ovd`` is refused before anything
  is overwritten.

The target of a symbolic link is written through the link (the link stays a link).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, BinaryIO

from pvdkit.types import PvdError

__all__ = [
    "RECORDING",
    "atomic_open",
    "open_input",
    "check_output",
    "free_bytes",
    "os_error_message",
    "output_folder",
    "path_argument",
    "replacing",
    "require_free_space",
    "require_input",
    "same_file",
    "temp_file_beside",
    "write_bytes",
    "write_text",
]

#: What a recording input is, for :func:`require_input` messages.
RECORDING = "an .ovd or .h5 recording"

_DISK_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


def path_argument(text: str) -> str:
    """argparse ``type`` of every option that names a file or folder: an empty name (``-o ''``,
    a shell variable left unset) is refused when the command line is read, one line naming the
    option; without it, ``if args.out:`` would skip the output without a word."""
    if not text.strip():
        import argparse

        raise argparse.ArgumentTypeError("expected a file or folder name, got an empty string")
    return text


def require_input(path: str | os.PathLike, expected: str = RECORDING, label: str = "") -> str:
    """``path`` as ``str`` if it names an existing regular file; else :class:`PvdError`.

    ``expected`` says what the file should be (in the directory / device messages); ``label``
    prefixes the message (``"A"`` → ``"A: x.ovd: no such file"``).
    """
    p = os.fspath(path)
    head = f"{label}: {p}" if label else p
    try:
        st = os.stat(p)
    except FileNotFoundError:
        if os.path.islink(p):
            raise PvdError(f"{head}: broken symbolic link (its target does not exist)") from None
        raise PvdError(f"{head}: no such file") from None
    except NotADirectoryError:
        raise PvdError(f"{head}: no such file (a part of the path is not a folder)") from None
    except OSError as exc:
        raise PvdError(f"{head}: cannot read ({exc.strerror or exc})") from None
    _refuse_irregular(st.st_mode, head, expected)
    return p


#: Largest TOML file read (a config or sweep file is a few KB; this keeps a mistaken large file
#: from being read into memory whole).
MAX_TOML_BYTES = 16 << 20


def read_toml(path: str | os.PathLike, expected: str = "a TOML file") -> dict[str, Any]:
    """The parsed TOML file ``path`` (config and sweep files); :class:`PvdError` as one line
    naming the file for anything else: not a regular file (a FIFO would block, ``/dev/zero``
    never ends), too large, not UTF-8 (with the byte), not TOML (with tomllib's line and
    column), or nested too deeply. A UTF-8 byte order mark, as some editors write, is skipped."""
    import tomllib  # only when a TOML file is read: the plain commands do not pay for it

    p = require_input(path, expected)
    try:
        with open(p, "rb") as f:
            raw = f.read(MAX_TOML_BYTES + 1)
    except OSError as exc:
        raise PvdError(f"{p}: cannot read ({exc.strerror or exc})") from None
    if len(raw) > MAX_TOML_BYTES:
        raise PvdError(f"{p}: more than {MAX_TOML_BYTES >> 20} MB, expected {expected}")
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise PvdError(f"{p}: line {line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                       f"{exc.start}), expected {expected}") from None
    _check_key_parts(text, p, expected)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PvdError(f"{p}: not valid TOML: {exc}") from None
    except RecursionError:
        raise PvdError(f"{p}: nested too deeply, expected {expected}") from None
    except ValueError as exc:  # tomllib's int() of more digits than Python converts
        if "integer string conversion" not in str(exc):
            raise
        raise PvdError(f"{p}: an integer of more than {sys.get_int_max_str_digits()} digits, "
                       f"expected {expected}") from None


#: Most parts a TOML key or table header may have (``a.b.c`` has 3): tomllib's time grows with
#: their square (20,000 parts took 2.8 s, 200,000 never ended); a config key has a handful.
MAX_KEY_PARTS = 256


def _check_key_parts(text: str, path: str, expected: str) -> None:
    """:class:`PvdError` for a key or table header of more than :data:`MAX_KEY_PARTS` parts
    (counted as the dots before a line's ``=``, or in a ``[header]`` line: cheap and never short)."""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        key = stripped if stripped.startswith("[") else line.partition("=")[0] if "=" in line else ""
        if key.count(".") >= MAX_KEY_PARTS:
            raise PvdError(f"{path}: line {number}: a key of more than {MAX_KEY_PARTS} dotted parts, "
                           f"expected {expected}")


def open_input(path: str | os.PathLike, expected: str = RECORDING) -> BinaryIO:
    """Open a file for binary reading after :func:`require_input`; :class:`PvdError` otherwise.

    The file is opened non-blocking and checked again on the open descriptor, so a FIFO is
    refused at once (a blocking open would wait for a writer) and nothing can swap the file
    between the check and the read.
    """
    name = require_input(path, expected)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        raise PvdError(f"{name}: cannot read ({exc.strerror or exc})") from None
    try:
        _refuse_irregular(os.fstat(fd).st_mode, name, expected)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO or pipe"),
    (stat.S_ISSOCK, "a socket"),
)


def _refuse_irregular(mode: int, head: str, expected: str) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise PvdError(f"{head}: is a directory, expected {expected}")
    kind = next((what for test, what in _KINDS if test(mode)), "a special file")
    raise PvdError(f"{head}: is not a regular file ({kind}), expected {expected}")


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when ``a`` and ``b`` are the same file (same device and inode: through symbolic
    and hard links); False when either does not exist."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


# --------------------------------------------------------------------------------------------
# Output paths
# --------------------------------------------------------------------------------------------


def check_output(path: str | os.PathLike, what: str = "output") -> Path:
    """``path`` as a :class:`Path` if a file can be created there: its folder exists and the
    path is neither a folder nor a device, FIFO or socket (outputs are written beside and
    renamed over their target, which would replace ``/dev/null`` by a file). :class:`PvdError`
    otherwise, e.g. ``output 'x/y.h5': folder 'x' does not exist``. ``what`` names the output
    (``"--junit"``, ``"--screenshot"`` …)."""
    p = Path(path)
    shown = str(p)
    if str(path) == "" or p.name in ("", ".", ".."):
        raise PvdError(f"{what} {shown!r}: expected a file name")
    target = _resolved(p)
    if target.is_dir():
        raise PvdError(f"{what} {shown!r}: is a folder, expected a file name")
    try:
        mode = target.stat().st_mode
    except OSError:  # nothing there yet (or a dangling link): a file is created
        mode = None
    if mode is not None:  # a device or FIFO would be replaced by a regular file (/dev/null as root!)
        _refuse_irregular(mode, f"{what} {shown!r}", "a file name")
    _check_parent(target.parent, what, shown)
    return p


def check_distinct(outputs: dict[str, str | os.PathLike | None],
                   inputs: dict[str, str | os.PathLike]) -> None:
    """:class:`PvdError` when an output (option → path) names an input file or another output:
    writing it would replace the recording being read, or one report the other (``--json A``
    overwrote recording A without a word). Paths are compared as files (links included) and,
    for files not written yet, by absolute path."""
    def key(path: str | os.PathLike) -> str:
        return os.path.realpath(path)

    seen: dict[str, str] = {key(path): f"input {label} ({os.fspath(path)})" for label, path in inputs.items()}
    for option, path in outputs.items():
        if path is None or os.fspath(path) == "-":
            continue
        k = key(path)
        other = seen.get(k) or next((what for known, what in seen.items() if same_file(known, k)), None)
        if other is not None:
            raise PvdError(f"{option} {os.fspath(path)!r}: is the same file as the {other}; "
                           "give another name")
        seen[k] = option


def output_folder(path: str | os.PathLike, what: str = "output folder", *, create: bool = True) -> Path:
    """The folder ``path``, created if missing (never its parents) unless ``create`` is False
    (then only checked, e.g. before a long computation); :class:`PvdError` if its parent
    folder does not exist or ``path`` is a file."""
    p = Path(path)
    shown = str(p)
    if str(path) == "":
        raise PvdError(f"{what} '': expected a folder name")
    if p.exists() and not p.is_dir():
        raise PvdError(f"{what} {shown!r}: is a file, expected a folder")
    if not p.is_dir():
        _check_parent(Path(os.path.abspath(p)).parent, what, shown)
        if create:
            try:
                p.mkdir()
            except FileExistsError:
                pass
            except OSError as exc:
                reason = exc.strerror or exc
                raise PvdError(f"{what} {shown!r}: cannot create the folder ({reason})") from None
    return p


def _check_parent(parent: Path, what: str, shown: str) -> None:
    if not parent.exists():
        raise PvdError(f"{what} {shown!r}: folder {_shown_parent(shown, parent)!r} does not exist")
    if not parent.is_dir():
        raise PvdError(f"{what} {shown!r}: {_shown_parent(shown, parent)!r} is not a folder")


def _shown_parent(shown: str, parent: Path) -> str:
    """The parent folder as the user wrote it (``x`` for ``x/y.h5``), else the resolved one."""
    given = os.path.dirname(shown)
    return given if given else str(parent)


def _resolved(p: Path) -> Path:
    """The file a write to ``p`` should replace: the final target of a symbolic link."""
    return Path(os.path.realpath(p)) if p.is_symlink() else p


def free_bytes(path: str | os.PathLike) -> int | None:
    """Bytes an unprivileged writer can still put on the file system of ``path`` (a file to be
    written, or a folder); None where that cannot be known (no ``statvfs``)."""
    p = os.path.realpath(path)
    folder = p if os.path.isdir(p) else os.path.dirname(p) or "."
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):
        return None
    return st.f_bavail * st.f_frsize


def require_free_space(path: str | os.PathLike, needed: int, why: str) -> None:
    """Refuse with ``disk full writing PATH: …`` when the file system of ``path`` has fewer than
    ``needed`` free bytes — for writers that cannot survive a full disk (HDF5). ``why`` says
    where ``needed`` comes from, for the message."""
    free = free_bytes(path)
    if free is not None and free < needed:
        raise PvdError(f"disk full writing {os.fspath(path)}: {why} needs up to {_mib(needed)} free, "
                       f"its file system has {_mib(free)}")


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


# --------------------------------------------------------------------------------------------
# Atomic writes
# --------------------------------------------------------------------------------------------


def os_error_message(exc: OSError, target: str | os.PathLike, temp: str | None = None) -> str:
    """One line for an :class:`OSError` met while writing ``target`` (``temp`` is the temporary
    file standing in for it): ``disk full writing FILE`` or ``cannot write FILE: reason``; an
    error about another file (an input) names that file instead."""
    t = os.fspath(target)
    if exc.errno in _DISK_FULL:
        return f"disk full writing {t}"
    reason = exc.strerror or str(exc)
    name = exc.filename if isinstance(exc.filename, str) else None
    if name and name != temp and os.path.abspath(name) != os.path.abspath(t):
        return f"{name}: {reason}"
    return f"cannot write {t}: {reason}"


@contextmanager
def replacing(path: str | os.PathLike, what: str = "output") -> Iterator[str]:
    """Yield the path of a new, empty temporary file beside ``path`` (same extension, so
    format-by-suffix writers such as Qt's image writer still work); when the block ends
    normally, sync it and rename it onto ``path``. Any exception removes the temporary file
    and leaves ``path`` untouched; an :class:`OSError` is re-raised as one-line
    :class:`PvdError` (see :func:`os_error_message`). Checks ``path`` with :func:`check_output`.
    """
    p = check_output(path, what)
    target = _resolved(p)
    tmp = _create_temp(target, str(p))
    try:
        yield tmp
        _sync(tmp)
        _copy_mode(target, tmp)
        os.replace(tmp, target)
    except OSError as exc:
        _remove(tmp)
        raise PvdError(os_error_message(exc, str(p), tmp)) from None
    except BaseException:
        _remove(tmp)
        raise


@contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb", *, encoding: str | None = None,
                what: str = "output") -> Iterator[IO[Any]]:
    """``open()`` for writing with :func:`replacing`'s guarantees: the file appears under
    ``path`` complete, or not at all."""
    if "r" in mode or "a" in mode or "+" in mode:
        raise ValueError(f"atomic_open writes a new file; mode {mode!r} is not supported")
    with replacing(path, what) as tmp, open(tmp, mode, encoding=encoding) as f:
        yield f


def write_bytes(path: str | os.PathLike, data: bytes | bytearray | memoryview, what: str = "output") -> None:
    """Write ``data`` to ``path`` atomically (see :func:`replacing`)."""
    with atomic_open(path, "wb", what=what) as f:
        f.write(data)


def write_text(path: str | os.PathLike, text: str, what: str = "output") -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`replacing`)."""
    with atomic_open(path, "w", encoding="utf-8", what=what) as f:
        f.write(text)


def temp_file_beside(path: str | os.PathLike) -> str:
    """Create a new, empty temporary file beside ``path`` (same folder, so ``os.replace`` onto
    ``path`` is atomic; named ``.<name>.<random>.tmp<suffix>``) and return its path."""
    p = Path(path)
    return _create_temp(_resolved(p), str(p))


def _create_temp(target: Path, shown: str) -> str:
    """Create ``.<name>.<random>.tmp<suffix>`` beside ``target`` (mode from the umask)."""
    import secrets  # here: it loads hmac and hashlib, which reading a recording never needs

    folder = target.parent
    for _ in range(100):
        tmp = str(folder / f".{target.name}.{secrets.token_hex(4)}.tmp{target.suffix}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        except OSError as exc:
            raise PvdError(os_error_message(exc, shown, tmp)) from None
        os.close(fd)
        return tmp
    raise PvdError(f"cannot write {shown}: no free temporary file name in {str(folder)!r}")


def _sync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _copy_mode(target: Path, tmp: str) -> None:
    """Keep the permission bits of a file being replaced."""
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        return
    os.chmod(tmp, mode)


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
