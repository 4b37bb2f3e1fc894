"""pvdkit: read, write, convert and compare NVIDIA PhysX OmniPVD recordings (.ovd and HDF5).

The main entry points:

* :class:`OmniPvdWriter` with a stream (:class:`OvdFileStream`, :class:`MemoryStream`, or
  :class:`pvdkit.h5.H5Stream`) writes a recording exactly as PhysX does;
* :meth:`Recording.open` reads a ``.ovd`` or ``.h5`` recording into the query model;
* :func:`pvdkit.convert.convert` and :func:`pvdkit.diff.compare_files` convert and compare.
"""

from typing import TYPE_CHECKING

from pvdkit.lazy import lazy_attributes

if TYPE_CHECKING:
    from pvdkit.recording import Recording
    from pvdkit.streams import MemoryStream, OvdFileStream
    from pvdkit.types import Command, DataType, PvdError, PvdWarning
    from pvdkit.writer import OmniPvdWriter

__all__ = [
    "Command", "DataType", "MemoryStream", "OmniPvdWriter", "OvdFileStream", "PvdError", "PvdWarning",
    "Recording",
]
__version__ = "0.1.0"

# Loaded on first use: ``import pvdkit.<sub>`` (e.g. the ``pvdkit`` command line, or the diff of
# two ``.h5`` files) must not pay for the writer, the .ovd tokenizer and numba.
_LAZY = {
    "Command": "pvdkit.types", "DataType": "pvdkit.types", "PvdError": "pvdkit.types",
    "PvdWarning": "pvdkit.types", "MemoryStream": "pvdkit.streams", "OvdFileStream": "pvdkit.streams",
    "OmniPvdWriter": "pvdkit.writer", "Recording": "pvdkit.recording",
}
__getattr__ = lazy_attributes(__name__, _LAZY)


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
