"""HDF5 recordings: a lossless, chunked and compressed form of an OmniPVD stream.

:class:`H5Writer` appends indexed batches, :class:`H5Stream` is a writer stream (it receives the
``.ovd`` bytes a :class:`pvdkit.writer.OmniPvdWriter` produces and appends while recording),
:func:`open_h5_data` reads a recording into index tables, :func:`h5_to_ovd_bytes` rebuilds the
exact ``.ovd``. The schema: ``docs/recording-format.md``; the modules: :mod:`~pvdkit.h5.layout`
(names, dtypes, format constants), :mod:`~pvdkit.h5.writer`, :mod:`~pvdkit.h5.reader`,
:mod:`~pvdkit.h5.rebuild` and :mod:`~pvdkit.h5.stream`.

A storage backend: it reads and writes the tables of :mod:`pvdkit.index` and imports neither
the query model (:mod:`pvdkit.recording`) nor anything above it (``docs/architecture.md``).
"""

from typing import TYPE_CHECKING

from pvdkit.h5.layout import FORMAT_NAME, FORMAT_VERSION
from pvdkit.h5.reader import open_h5_data
from pvdkit.lazy import lazy_attributes

if TYPE_CHECKING:
    from pvdkit.h5.rebuild import h5_to_ovd_bytes
    from pvdkit.h5.stream import H5Stream
    from pvdkit.h5.writer import H5Writer

# Imported on first use, so that reading an .h5 recording loads neither the compiler (H5Stream
# tokenizes what it receives) nor the writing side (the indexer, ISA-L's deflate).
__getattr__ = lazy_attributes(__name__, {"H5Stream": "pvdkit.h5.stream", "H5Writer": "pvdkit.h5.writer",
                                         "h5_to_ovd_bytes": "pvdkit.h5.rebuild"})

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "H5Stream", "H5Writer", "h5_to_ovd_bytes", "open_h5_data"]
