"""HDF5 recordings: a lossless, chunked and compressed form of an OmniPVD stream.

:class:`H5Writer` appends indexed batches, :class:`H5Stream` is a writer stream (it receives the
``.ovd`` bytes a :class:`pvdkit.writer.OmniPvdWriter` produces and appends while recording),
:func:`h5_to_ovd_bytes` rebuilds the exact ``.ovd``. The schema: ``docs/recording-format.md``.
"""

from pvdkit.h5.format import FORMAT_NAME, FORMAT_VERSION, H5Writer, h5_to_ovd_bytes, open_h5_data


def __getattr__(name: str):
    # H5Stream tokenizes what it receives (numba); import it on first use so that reading an
    # .h5 recording does not load the compiler.
    if name == "H5Stream":
        from pvdkit.h5.stream import H5Stream

        return H5Stream
    raise AttributeError(f"module 'pvdkit.h5' has no attribute {name!r}")

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "H5Stream", "H5Writer", "h5_to_ovd_bytes", "open_h5_data"]
