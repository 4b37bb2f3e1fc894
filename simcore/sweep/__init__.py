"""Parameter sweeps: every run recorded, scored by metrics, compared with a baseline — on Dask.

Why a package of its own: a sweep is three roles that run in different places. The sweep file
is read and checked on the client (:mod:`simcore.sweep.spec`); each run is a pure function of
plain data executed by a Dask worker (:func:`run_one` in :mod:`simcore.sweep.worker`), which
records, scores (:mod:`simcore.sweep.metrics`) and diffs; the client collects one small row per
run and writes the summary (:mod:`simcore.sweep.runner`). ``pvdkit sweep`` (``simcore/cli/sweep.py``)
only parses and prints. From Python::

    from simcore.sweep import load_sweep, run_sweep
    result = run_sweep(load_sweep("sweep.toml"), "out", workers=2)
    result.table            # pandas: one row per run

Dask, pandas and pyarrow are the ``sweep`` extra; they are imported when a sweep runs, so
``run_one`` and the metrics work without them.
"""

from __future__ import annotations

from simcore.sweep.metrics import METRICS, MetricError, Trace, trace_of
from simcore.sweep.runner import SweepResult, format_summary, run_sweep
from simcore.sweep.spec import RunSpec, SweepError, SweepSpec, load_sweep, parse_sweep
from simcore.sweep.worker import diff_columns, run_one

__all__ = [
    "METRICS",
    "MetricError",
    "RunSpec",
    "SweepError",
    "SweepResult",
    "SweepSpec",
    "Trace",
    "diff_columns",
    "format_summary",
    "load_sweep",
    "parse_sweep",
    "run_one",
    "run_sweep",
    "trace_of",
]
