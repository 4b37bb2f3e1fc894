"""Open recording files for reading — regular files only.

Why: pvdkit maps or reads a recording by its length. A device (``/dev/zero``), a FIFO, a pipe
(``/dev/stdin`` of a pipeline) or a terminal has no length and may never end, so reading one
would run until memory runs out (or block forever); a directory is no recording either. Every
path-opening read entry point (:meth:`pvdkit.recording.Recording.open`,
:func:`pvdkit.ovd.tokenizer.map_file` / ``open_ovd``, the HDF5 reader and the CLI) asks here
first and refuses anything else with one :class:`~pvdkit.types.PvdError` line.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from pvdkit.types import PvdError

__all__ = ["check_regular_file", "open_regular_file"]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO or pipe"),
    (stat.S_ISSOCK, "a socket"),
)


def _refuse_irregular(mode: int, name: str) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((what for test, what in _KINDS if test(mode)), "a special file")
    raise PvdError(f"{name}: not a regular file ({kind}); pvdkit reads recordings from files")


def check_regular_file(path: str | os.PathLike) -> str:
    """The path as ``str`` if it names a regular file (symlinks followed); :class:`PvdError`
    if it is missing, unreadable or anything else (directory, device, FIFO, socket)."""
    name = os.fspath(path)
    try:
        st = os.stat(name)
    except OSError as exc:
        raise PvdError(f"cannot open {name}: {exc.strerror or exc}") from None
    _refuse_irregular(st.st_mode, name)
    return name


def open_regular_file(path: str | os.PathLike) -> BinaryIO:
    """Open a regular file for binary reading; :class:`PvdError` for anything else.

    The file is opened non-blocking and checked on the open descriptor, so a FIFO is refused
    at once (a blocking open would wait for a writer) and nothing can swap the file between
    the check and the read.
    """
    name = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        raise PvdError(f"cannot open {name}: {exc.strerror or exc}") from None
    try:
        _refuse_irregular(os.fstat(fd).st_mode, name)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
