"""One run of a sweep, as a worker does it: simulate, record, score, diff — return one small dict.

Why a pure function of plain data: Dask ships ``run_one`` and a :meth:`RunSpec.as_dict` to any
worker process on any machine, and the client keeps only the returned row (a few hundred bytes).
The worker writes its own recording (``DIR/runs/RUN_ID.h5``: first to a temporary file beside
it, renamed into place once complete, so a reader or ``--resume`` never sees half a run) and
stores the run's params in the file's root attributes (``sweep_run``: JSON), so a recording
alone says which run it is. Every failure of the run — a param outside its bounds, a diverged
simulation, a metric that cannot be computed, a timeout — becomes the row's status and message;
the sweep goes on.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import time
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from pvdkit.types import PvdError

__all__ = ["RunTimeout", "diff_columns", "recording_matches", "run_one", "run_record"]

#: Root attribute of a sweep's recording: the run as JSON (id, scenario, params, settings).
RUN_ATTRIBUTE = "sweep_run"
#: Columns ``--baseline`` adds to each row.
BASELINE_COLUMNS = (
    "baseline_first_frame",
    "baseline_first_time",
    "baseline_first_attribute",
    "baseline_max_rel_error",
    "baseline_equal",
)
#: Errors that are the run's own (bad params, a diverged simulation), reported in one line; any
#: other exception is a bug and its traceback goes into the row too.
_RUN_ERRORS = (PvdError, ValueError, ArithmeticError)


class RunTimeout(Exception):
    """The run took longer than its ``timeout`` (checked after every simulation step)."""


def run_record(spec: Mapping[str, Any]) -> dict[str, Any]:
    """What identifies a run's recording: compared by ``--resume`` (JSON-equal or re-run)."""
    keys = ("run_id", "scenario", "params", "vehicle", "duration", "dt", "substeps", "physx")
    return {k: spec.get(k) for k in keys}


def _run_json(spec: Mapping[str, Any]) -> str:
    return json.dumps(run_record(spec), sort_keys=True)


def recording_matches(path: str | os.PathLike, spec: Mapping[str, Any]) -> bool:
    """True when ``path`` is a complete recording of exactly this run (same params and settings)."""
    import h5py

    try:
        with h5py.File(path, "r") as f:
            complete = bool(f.attrs.get("complete", False))
            stored = f.attrs.get(RUN_ATTRIBUTE)
    except (OSError, ValueError):
        return False
    if isinstance(stored, bytes):
        stored = stored.decode("utf-8", "replace")
    return complete and stored == _run_json(spec)


@lru_cache(maxsize=8)
def _vehicle_params(vehicle: str) -> Any:
    from simcore.cli.record import load_vehicle_params

    return load_vehicle_params(vehicle)[0]


def _params_for(spec: Mapping[str, Any], vehicle: Any) -> Any:
    """The run's vehicle: the sweep's vehicle with the run's params set (validated by the run)."""
    params = spec["params"]
    if not params:
        return vehicle if vehicle is not None else spec["vehicle"]
    from simcore.param_paths import with_param

    p = vehicle if vehicle is not None else _vehicle_params(spec["vehicle"])
    for path, value in params.items():
        p = with_param(p, path, value)
    return p


class _Deadline:
    """``record``'s progress callback that ends the run once ``seconds`` of stepping have passed
    (the clock starts after the first step: a fresh worker compiles its kernels during it)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.start: float | None = None

    def __call__(self, step: int, steps: int) -> None:
        now = time.perf_counter()
        if self.start is None:
            self.start = now
        elif self.seconds is not None and now - self.start > self.seconds:
            raise RunTimeout(f"timed out after {self.seconds:g} s at step {step + 1} of {steps}")


def _simulate(spec: Mapping[str, Any], vehicle: Any, target: str) -> None:
    """Record the run into ``target`` (a new file) and store the run's identity in it."""
    import h5py

    from simcore.cli.record import record

    record(
        _params_for(spec, vehicle),
        spec["scenario"],
        duration=spec["duration"],
        dt=spec["dt"],
        substeps=spec["substeps"],
        out=target,
        physx=spec["physx"],
        progress=_Deadline(spec.get("timeout")),
    )
    with h5py.File(target, "r+") as f:
        f.attrs[RUN_ATTRIBUTE] = _run_json(spec)
    fd = os.open(target, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def _recording(spec: Mapping[str, Any], vehicle: Any, row: dict[str, Any]) -> Iterator[str]:
    """The run's recording: reused (``reuse`` and it matches), else simulated — into
    ``spec["out"]`` atomically, or into a private temporary folder removed afterwards."""
    out = spec.get("out")
    if out is not None and spec.get("reuse") and recording_matches(out, spec):
        row.update(resumed=True, recording=os.fspath(out))
        yield out
        return
    if out is None:
        folder = tempfile.mkdtemp(prefix="pvdkit-sweep-")
        try:
            target = os.path.join(folder, f"{spec['run_id']}.h5")
            _simulate(spec, vehicle, target)
            yield target
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    from pvdkit.outputs import check_output, temp_file_beside

    check_output(out, "run recording")  # a FIFO or device there would be replaced by the file
    tmp = temp_file_beside(out)
    try:
        _simulate(spec, vehicle, tmp)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    row["recording"] = os.fspath(out)
    yield out


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return "local"


def run_one(spec: Mapping[str, Any], vehicle: Any = None) -> dict[str, Any]:
    """Run one sweep run (a :meth:`~simcore.sweep.spec.RunSpec.as_dict`) and return its summary
    row: ``run_id``, ``scenario``, ``index``, each param, each metric column, ``status`` (ok,
    error, timeout), ``error``, ``wall_time`` (s), ``worker``, ``recording`` and, with a
    baseline, the :data:`BASELINE_COLUMNS`. ``vehicle``: the sweep's vehicle params, already
    loaded (the client scatters them once); None loads ``spec["vehicle"]`` here.

    Never raises for a failing run (only for a bug in this function itself): the sweep goes on.
    """
    start = time.perf_counter()
    row: dict[str, Any] = {
        "run_id": spec["run_id"],
        "scenario": spec["scenario"],
        "index": spec["index"],
        **spec["params"],
    }
    row.update({column: math.nan for _, _, column in spec["metrics"]})
    row.update(status="ok", error="", wall_time=0.0, worker=_worker_name(), recording="", resumed=False)
    if spec.get("baseline"):
        row.update(dict.fromkeys(BASELINE_COLUMNS))
    try:
        with _recording(spec, vehicle, row) as path:
            problems = _score(spec, path, row)
            if problems:
                row.update(status="error", error="; ".join(problems))
    except RunTimeout as exc:
        row.update(status="timeout", error=str(exc))
    except _RUN_ERRORS as exc:
        row.update(status="error", error=_one_line(exc))
    except Exception as exc:  # a bug (in simcore or a user's metric): keep its traceback in the row
        row.update(status="error", error=_one_line(exc), traceback=traceback.format_exc())
    row["wall_time"] = time.perf_counter() - start
    return row


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    # The simulation's own errors (PvdError, a params ValueError) already name what is wrong.
    return text if isinstance(exc, PvdError | ValueError) else f"{type(exc).__name__}: {text}"


def _score(spec: Mapping[str, Any], path: str, row: dict[str, Any]) -> list[str]:
    """Fill the metric (and baseline) columns from the recording; the problems, one line each."""
    import warnings

    from pvdkit.recording import Recording
    from pvdkit.types import PvdWarning
    from simcore.sweep.metrics import resolve_metric

    problems: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", PvdWarning)  # an incomplete recording is the run's error
        rec = Recording.open(path)
    try:
        for metric, options, column in spec["metrics"]:
            try:
                row[column] = float(resolve_metric(metric)(rec, **options))
            except _RUN_ERRORS as exc:
                problems.append(f"metric {column}: {_one_line(exc)}")
        if spec.get("baseline"):
            row.update(diff_columns(path, spec["baseline"], spec.get("baseline_tolerances"), rec))
    finally:
        rec.close()
    return problems


def diff_columns(
    run: str, baseline: str, tolerances: Mapping[str, Any] | None = None, rec: Any = None
) -> dict[str, Any]:
    """The baseline columns of one run: ``pvdkit diff RUN BASELINE`` (the run is A, the baseline
    B) with the sweep's ``[baseline]`` tolerances. First divergence frame (A's numbering) and its
    time (s, the run's simulation clock), the first diverging ``object-path.attribute``, the
    largest finite relative error |a − b| / |b| over every compared numeric attribute, and
    whether the two are equal within tolerance. ``rec``: the run, already open (for the time)."""
    from pvdkit.diff import DiffOptions, ToleranceConfig, compare_files
    from simcore.sweep.metrics import frame_time

    options = DiffOptions(ToleranceConfig.from_mapping(tolerances or {}, "baseline"))
    res = compare_files(run, baseline, options)
    first = res.first_divergence
    rels = [s.max_rel for s in res.series if s.max_rel is not None and math.isfinite(s.max_rel)]
    frame = first.first_frame if first is not None else None
    if first is not None:
        attribute = f"{first.object}.{first.attribute}"
    elif res.schema:
        attribute = "<schema>"
    elif res.objects_only_a or res.objects_only_b:
        attribute = "<objects>"
    else:
        attribute = next((n.message for n in res.notes if n.difference), "") if not res.equal else ""
    time_s = None
    if frame is not None:
        if rec is not None:
            time_s = frame_time(rec, frame)
        elif first is not None and first.first_time is not None:
            time_s = first.first_time * 1e-9
    return {
        "baseline_first_frame": frame,
        "baseline_first_time": time_s,
        "baseline_first_attribute": attribute,
        "baseline_max_rel_error": max(rels, default=0.0),
        "baseline_equal": res.equal,
    }
