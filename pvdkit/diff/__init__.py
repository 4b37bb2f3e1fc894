"""Semantic comparison of recordings: ``pvdkit diff`` as a library.

Why: CI re-records simulations and must tell *where* they diverge, not only *that* bytes
differ. Objects are matched by identity (class, name, position in the object graph —
:mod:`pvdkit.identity`), never by handle; each attribute series is compared frame by
frame with per-attribute tolerances (:mod:`pvdkit.diff.tolerance`); reports are text, JSON,
JUnit XML and PNG plots (:mod:`pvdkit.diff.report`, :mod:`pvdkit.diff.plot`)::

    from pvdkit.diff import compare_files
    res = compare_files("new.h5", "recordings/golden.h5", rtol=1e-6)
    assert res.equal, format_text(res)

The heavy modules (the engine needs the query model) load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pvdkit.diff.result import (
    DiffOptions,
    DiffResult,
    FrameWindow,
    Note,
    ObjectChange,
    SchemaChange,
    SeriesDiff,
    VehicleScope,
)
from pvdkit.diff.tolerance import Tolerance, ToleranceConfig, ToleranceRule

if TYPE_CHECKING:
    from pvdkit.diff.engine import Comparison, compare, compare_files
    from pvdkit.diff.report import format_text, to_json, to_junit, write_json, write_junit

__all__ = [
    "Comparison", "DiffOptions", "DiffResult", "FrameWindow", "Note", "ObjectChange", "SchemaChange",
    "SeriesDiff", "Tolerance", "ToleranceConfig", "ToleranceRule", "compare", "compare_files", "format_text",
    "VehicleScope", "to_json", "to_junit", "write_json", "write_junit",
]

_LAZY = {
    "Comparison": "pvdkit.diff.engine", "compare": "pvdkit.diff.engine",
    "compare_files": "pvdkit.diff.engine",
    "format_text": "pvdkit.diff.report", "to_json": "pvdkit.diff.report", "to_junit": "pvdkit.diff.report",
    "write_json": "pvdkit.diff.report", "write_junit": "pvdkit.diff.report",
}


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'pvdkit.diff' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(mod), name)
