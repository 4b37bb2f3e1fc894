"""Convert recordings between ``.ovd`` and HDF5 (``.h5``), by the destination's extension.

``.ovd → .h5`` indexes the stream and writes one HDF5 recording (see
``docs/recording-format.md``); ``.h5 → .ovd`` rebuilds the original bytes exactly (the HDF5
format is lossless); ``.h5 → .h5`` rewrites (compacts) a recording; ``.ovd → .ovd`` copies the
stream after checking it. ``progress(fraction)`` is called with 0 … 1 as the work advances.

The destination is written as a temporary file beside it and renamed into place at the end
(:mod:`pvdkit.outputs`), so a failure — bad input, disk full, Ctrl-C — never leaves a partial
file under its name, and converting a file onto itself (also through a link) is refused before
anything is written.

A full disk while writing an ``.h5`` is one line too (``disk full writing FILE``): the HDF5
writer lets go of a file it cannot flush (:meth:`pvdkit.h5.writer.H5Writer.abort`) instead of
letting HDF5 crash the process when it closes it.
"""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Callable

import numpy as np

from pvdkit import outputs
from pvdkit.h5.rebuild import h5_to_ovd_bytes
from pvdkit.h5.writer import write_h5
from pvdkit.ovd.codec import check_ovd_header, is_ovd_header
from pvdkit.ovd.tokenizer import open_ovd, tokenize
from pvdkit.types import HDF5_SIGNATURE, PvdError, PvdWarning

Progress = Callable[[float], None]

_H5_EXTENSIONS = (".h5", ".hdf5")


def format_of(path: str | os.PathLike, *, existing: bool) -> str:
    """``"h5"`` or ``"ovd"``: by content (HDF5 signature) for an existing file, else by extension."""
    p = os.fspath(path)
    if existing:
        outputs.require_input(p)
        try:
            with open(p, "rb") as f:
                head = f.read(12)
        except OSError as exc:
            raise PvdError(f"cannot open {p}: {exc.strerror or exc}") from None
        if head[:8] == HDF5_SIGNATURE:
            return "h5"
        if p.lower().endswith(_H5_EXTENSIONS) and not is_ovd_header(head):
            raise PvdError(f"{p}: not an HDF5 file (the first 8 bytes are not the HDF5 signature) "
                           "nor an .ovd stream")
        check_ovd_header(head, p)
        return "ovd"
    low = p.lower()
    if low.endswith(_H5_EXTENSIONS):
        return "h5"
    if low.endswith(".ovd"):
        return "ovd"
    raise PvdError(f"{p}: unknown output format; use a .ovd, .h5 or .hdf5 extension")


def convert(src: str | os.PathLike, dst: str | os.PathLike, progress: Progress | None = None) -> None:
    """Convert ``src`` (``.ovd`` or ``.h5``) into ``dst`` (format by its extension).

    A damaged ``.ovd`` converts with a :class:`~pvdkit.types.PvdWarning`: its complete commands
    are indexed and the damaged tail is kept verbatim, so converting back gives the same bytes.
    Raises :class:`PvdError` for unreadable input, an unknown output extension, a destination
    that is the source (by inode, through links) or whose folder does not exist, and for I/O
    errors while writing (``disk full writing FILE``); ``dst`` is then left as it was.
    """
    src, dst = os.fspath(src), os.fspath(dst)
    if os.path.isdir(dst):
        raise PvdError(f"output {dst!r}: is a folder, expected a file name ending in .ovd, .h5 or .hdf5")
    out_fmt = format_of(dst, existing=False)
    in_fmt = format_of(src, existing=True)
    if outputs.same_file(src, dst):
        raise PvdError(f"{src}: source and destination {dst} are the same file")
    outputs.check_output(dst)
    report = progress or (lambda _x: None)
    if in_fmt == "ovd":
        if out_fmt == "ovd":
            _check_ovd(src)
            with outputs.atomic_open(dst, "wb") as out, open(src, "rb") as f:
                shutil.copyfileobj(f, out, 1 << 20)
            report(1.0)
            return
        buf, table = open_ovd(src)
        report(0.05)
        _write_h5(buf, table, dst, src, lambda x: report(0.05 + 0.95 * x))
        return
    data = h5_to_ovd_bytes(src, progress=lambda x: report(0.5 * x if out_fmt == "h5" else x))
    if out_fmt == "ovd":
        outputs.write_bytes(dst, data)
        report(1.0)
        return
    arr = np.frombuffer(data, np.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PvdWarning)
        table = tokenize(arr, source_name=src)
    _write_h5(arr, table, dst, src, lambda x: report(0.5 + 0.5 * x))


def _write_h5(buf: np.ndarray, table, dst: str, src: str, progress: Progress) -> None:
    """``write_h5`` into a temporary file beside ``dst``, renamed into place when complete."""
    with outputs.replacing(dst) as tmp:
        write_h5(buf, table, tmp, source_name=os.path.basename(src), progress=progress)


def _check_ovd(path: str) -> None:
    open_ovd(path)  # raises for a bad header, warns for damage
