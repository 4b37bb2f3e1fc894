"""The index of a recording: numpy tables (:mod:`~pvdkit.index.tables`), the ``.ovd`` indexer
that fills them (:mod:`~pvdkit.index.builder`) and its compiled loops (:mod:`~pvdkit.index.kernels`).

Below the storage backends and the query model: this package imports only :mod:`pvdkit.ovd`
and :mod:`pvdkit.types` (``docs/architecture.md``). Importing it does not load numba; the
kernels are imported when a stream is indexed. The indexer itself loads on first use of its
names: reading an ``.h5`` recording needs only the tables.
"""

from typing import TYPE_CHECKING

from pvdkit.index.tables import (
    FAMILY_LIST,
    FAMILY_SET,
    NEVER,
    AttributeRegistration,
    Batch,
    FrameTable,
    Message,
    ObjectTable,
    RecordingData,
    Samples,
    SeriesTable,
)
from pvdkit.lazy import lazy_attributes

if TYPE_CHECKING:
    from pvdkit.index.builder import (
        IndexBuilder,
        merge_batch_tables,
        ovd_data,
        read_ovd_data,
        samples_from_rows,
    )

__getattr__ = lazy_attributes(__name__, dict.fromkeys(
    ("IndexBuilder", "merge_batch_tables", "ovd_data", "read_ovd_data", "samples_from_rows"),
    "pvdkit.index.builder"))

__all__ = [
    "FAMILY_LIST", "FAMILY_SET", "NEVER", "AttributeRegistration", "Batch", "FrameTable", "IndexBuilder",
    "Message", "ObjectTable", "RecordingData", "Samples", "SeriesTable", "merge_batch_tables", "ovd_data",
    "read_ovd_data", "samples_from_rows",
]
