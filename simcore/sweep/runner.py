"""The client side of a sweep: plan the runs, hand them to Dask, collect one row per run, write
the summary.

Why Dask and not a pool of our own: the same code runs on a laptop (a ``LocalCluster`` of one
single-threaded worker process per core — simcore's step is Python + numba, so processes, not
threads, give parallelism) and on an existing cluster (``--scheduler tcp://HOST:8786``), and the
scheduler already does placement, work stealing, and retrying a task whose worker died.

What crosses the network per run is a task of a few hundred bytes (:meth:`RunSpec.as_dict`)
and a result row of about the same size; the vehicle params are scattered to every worker once;
recordings never leave the worker that wrote them. At most :data:`WINDOW_PER_THREAD` tasks per
worker thread are in the scheduler at a time, so a sweep of 100,000 runs costs the scheduler a
window of tasks, not 100,000, and the client holds 100,000 small dicts (~100 MB at most).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simcore.sweep.spec import RunSpec, SweepError, SweepSpec
from simcore.sweep.worker import BASELINE_COLUMNS, recording_matches, run_one

__all__ = [
    "SweepResult",
    "dumps_toml",
    "format_summary",
    "print_summary",
    "run_sweep",
    "summary_columns",
    "write_summary",
]

#: Tasks kept in the scheduler per worker thread (the rest wait on the client as plain dicts).
WINDOW_PER_THREAD = 8
#: Columns every summary ends with (after the params, metrics and baseline columns).
TAIL_COLUMNS = ("status", "error", "wall_time", "worker", "recording", "resumed")
#: Rows the end-of-sweep table shows before pointing at summary.csv.
TABLE_ROWS = 30
#: Most LocalCluster workers per core ``--workers`` may ask for: a run keeps one core busy, so
#: more workers than cores only share them, and hundreds of worker processes take minutes to
#: start and gigabytes of memory.
MAX_WORKERS_PER_CORE = 4


@dataclass
class SweepResult:
    """What a sweep produced: the summary table (pandas), where it went, and how it ended."""

    table: Any
    out_dir: Path
    workers: int
    seconds: float
    interrupted: str | None = None
    submitted: int = 0
    kept: int = 0
    exit_status: int = 0

    def counts(self) -> dict[str, int]:
        """Runs per status (ok, error, timeout)."""
        status = self.table["status"] if len(self.table) else []
        return {s: int(sum(1 for x in status if x == s)) for s in ("ok", "error", "timeout")}


# --------------------------------------------------------------------------------------------
# Progress
# --------------------------------------------------------------------------------------------


class _Progress:
    """``pvdkit.terminal.ProgressBar`` with the sweep's counters: done / failed / running, ETA."""

    def __init__(self, total: int, threads: int, enabled: bool) -> None:
        from pvdkit.terminal import ProgressBar

        self.total, self.threads = total, threads
        self.done = self.failed = 0
        self.start = time.perf_counter()
        self.bar = ProgressBar("sweep", width=24, unit="runs", min_interval=0.2) if enabled else None

    def update(self, row: Mapping[str, Any] | None = None) -> None:
        if row is not None:
            self.done += 1
            self.failed += row.get("status") != "ok"
        if self.bar is None:
            return
        left = self.total - self.done
        running = min(self.threads, left)
        elapsed = time.perf_counter() - self.start
        eta = "--:--" if not self.done else _clock(elapsed / self.done * left)
        self.bar.unit = f"runs  {self.failed} failed  {running} running  ETA {eta}"
        self.bar(self.done, self.total)

    def close(self) -> None:
        if self.bar is not None and self.bar.shown:
            self.bar.done()


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------


#: Dask settings of the LocalCluster a sweep starts. A task whose worker dies is retried once.
#: Why the other two: a run is one thread's tight loop, and the worker's statistical profiler
#: (a stack sample of every thread each 10 ms) and its event-loop tick (each 20 ms) take the GIL
#: from it. Off and at 1 s, a run inside a worker takes as long as in-process (186-194 against
#: 188-195 ms; 202-204 ms with Dask's defaults, bench/bench_sweep.py). Workers of a cluster
#: given by --scheduler keep their own settings (docs/sweep.md suggests the same).
LOCAL_CLUSTER_CONFIG = {
    "distributed.scheduler.allowed-failures": 1,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
}


def _cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def _check_workers(workers: int | None) -> None:
    """:class:`SweepError` for a ``--workers`` count below 0 or above what this machine can run
    (:data:`MAX_WORKERS_PER_CORE` per core)."""
    if workers is None:
        return
    if workers < 0:
        raise SweepError(f"--workers must be >= 0 (0: in this process, without Dask), got {workers}")
    cores = _cores()
    if workers > MAX_WORKERS_PER_CORE * cores:
        raise SweepError(
            f"--workers {workers}: more than {MAX_WORKERS_PER_CORE} × the {cores} cores of this machine "
            f"({MAX_WORKERS_PER_CORE * cores}); a run keeps one core busy, so more workers only share "
            "the cores (use --scheduler for a bigger cluster)"
        )


def _local_workers(workers: int | None, runs: int) -> int:
    """How many LocalCluster workers to start for ``runs`` runs: ``workers`` (default one per
    core), never more than there are runs (a worker without a run would only cost its start)."""
    return max(1, min(workers or _cores(), runs))


@contextlib.contextmanager
def _client(scheduler: str | None, workers: int) -> Iterator[Any]:
    """A Dask client: on ``scheduler``, or on a new LocalCluster of ``workers`` single-threaded
    processes. A task whose worker dies is retried once."""
    import logging

    import dask
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="10s")
        except ValueError as exc:  # distributed's parse of the address
            raise SweepError(
                f"--scheduler {scheduler!r}: not a scheduler address ({exc}); expected e.g. tcp://HOST:8786"
            ) from None
        except (OSError, TimeoutError) as exc:
            raise SweepError(f"--scheduler {scheduler}: cannot connect ({exc})") from None
        with client:
            yield client
        return
    with (
        dask.config.set(LOCAL_CLUSTER_CONFIG),
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


def _killed(run: RunSpec, exc: BaseException) -> dict[str, Any]:
    """The row of a run whose task did not come back (its worker died twice)."""
    row = {"run_id": run.run_id, "scenario": run.scenario, "index": run.index, **dict(run.params)}
    row.update({m.column: math.nan for m in run.metrics})
    row.update(
        status="error",
        error=f"the worker running it died twice ({type(exc).__name__})",
        wall_time=math.nan,
        worker="",
        recording="",
        resumed=False,
    )
    return row


def _run_serial(runs: list[RunSpec], vehicle: Any, on_row: Callable[[dict[str, Any]], None]) -> None:
    for run in runs:
        on_row(run_one(run.as_dict(), vehicle))


def _run_dask(
    client: Any, runs: list[RunSpec], vehicle: Any, on_row: Callable[[dict[str, Any]], None]
) -> None:
    """Run ``runs`` on ``client``, at most a window of them in the scheduler at a time."""
    from distributed import as_completed

    if not runs:
        return
    threads = max(sum(client.nthreads().values()), 1)
    window = WINDOW_PER_THREAD * threads
    shared = [client.scatter(vehicle, broadcast=True, hash=False) if vehicle is not None else None]
    by_key: dict[str, RunSpec] = {}
    retried: dict[str, int] = {}
    pending = iter(runs)

    def submit(run: RunSpec) -> Any:
        fut = client.submit(
            run_one, run.as_dict(), shared[0], key=f"sweep-{run.run_id}-{os.urandom(4).hex()}", pure=False
        )
        by_key[fut.key] = run
        return fut

    outstanding = {submit(r) for r in _take(pending, window)}
    ac = as_completed(list(outstanding))
    try:
        for fut in ac:
            outstanding.discard(fut)
            run = by_key.pop(fut.key)
            try:
                row = fut.result()
            except Exception as exc:  # KilledWorker: the scheduler gave up after the retry
                if type(exc).__name__ == "FutureCancelledError" and retried.get(run.run_id, 0) < 2:
                    # The scattered params went with the workers that held them (restarted or
                    # lost): scatter again and run this one again.
                    retried[run.run_id] = retried.get(run.run_id, 0) + 1
                    if vehicle is not None:
                        shared[0] = client.scatter(vehicle, broadcast=True, hash=False)
                    fut = submit(run)
                    outstanding.add(fut)
                    ac.add(fut)
                    continue
                if type(exc).__name__ != "KilledWorker":
                    raise
                row = _killed(run, exc)
            fut.release()
            on_row(row)
            nxt = next(pending, None)
            if nxt is not None:
                fut = submit(nxt)
                outstanding.add(fut)
                ac.add(fut)
    except BaseException:  # Ctrl-C, SIGTERM, a bug: nothing keeps running for this sweep
        client.cancel(list(outstanding))
        raise


def _take(it: Iterator[RunSpec], n: int) -> list[RunSpec]:
    out = []
    for run in it:
        out.append(run)
        if len(out) >= n:
            break
    return out


def _baseline_path(
    baseline: str | None, runs: list[RunSpec], recordings: bool
) -> tuple[str | None, str | None]:
    """(baseline file, baseline run id of this sweep or None)."""
    if baseline is None:
        return None, None
    by_id = {r.run_id: r for r in runs}
    if baseline in by_id:
        if not recordings:
            raise SweepError(
                f"--baseline {baseline}: a run of this sweep is only a baseline with its "
                "recording; drop --no-recordings or give a recording file"
            )
        return by_id[baseline].out, baseline
    if Path(baseline).is_file():
        _require_recording(baseline)
        return os.fspath(Path(baseline).resolve()), None
    example = runs[0].run_id if runs else "0000-brake"
    raise SweepError(
        f"--baseline {baseline}: neither a run id of this sweep (e.g. {example}) nor a recording file"
    )


def _require_recording(path: str) -> None:
    """:class:`SweepError` unless ``path`` starts as a recording does (HDF5's signature or an
    ``.ovd`` version header): checked before any run, which would otherwise each fail on it."""
    from pvdkit.outputs import open_input
    from pvdkit.ovd.codec import HEADER_SIZE, check_ovd_header
    from pvdkit.types import HDF5_SIGNATURE, PvdError

    try:
        with open_input(path) as f:
            head = f.read(HEADER_SIZE)
        if head[:8] == HDF5_SIGNATURE:
            return
        if len(head) < HEADER_SIZE:
            raise PvdError(f"{path}: {len(head)} bytes, too short to be a recording (.ovd or .h5)")
        check_ovd_header(head, path)
    except OSError as exc:
        raise SweepError(f"--baseline {path}: cannot read ({exc.strerror or exc})") from None
    except PvdError as exc:
        raise SweepError(f"--baseline: {exc}") from None


def _old_settings(out_dir: Path) -> dict[str, Any]:
    """The previous ``DIR/sweep.toml`` with its facts (``# runs = …``, ``# baseline_run = …``)."""
    try:
        text = (out_dir / "sweep.toml").read_text(encoding="utf-8")
        facts = "\n".join(line[2:] for line in text.splitlines()
                           if line.startswith(("# runs = ", "# baseline_run = ")))
        return {**tomllib.loads(text), **tomllib.loads(facts)}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _reusable_rows(
    out_dir: Path, spec: SweepSpec, runs: list[RunSpec], baseline: str | None
) -> dict[str, dict]:
    """Rows of the last summary that ``--resume`` keeps as they are: status ok, the same metrics
    and baseline settings, and a complete recording of exactly that run."""
    import pandas as pd

    old = _old_settings(out_dir)
    new = spec.resolved()
    if (
        old.get("metrics") != new.get("metrics")
        or old.get("baseline") != new.get("baseline")
        or old.get("baseline_run") != baseline
    ):
        return {}
    path = out_dir / "summary.parquet"
    if not path.is_file():
        return {}
    try:
        table = pd.read_parquet(path)
    except (OSError, ValueError):
        return {}
    rows = {str(r["run_id"]): r for r in table.to_dict("records")}
    keep = {}
    for run in runs:
        r = rows.get(run.run_id)
        if (
            r is not None
            and r.get("status") == "ok"
            and run.out is not None
            and recording_matches(run.out, run.as_dict())
        ):
            keep[run.run_id] = {**r, **dict(run.params), "resumed": True, "wall_time": 0.0}
    return keep


def run_sweep(
    spec: SweepSpec,
    out_dir: str | os.PathLike,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    baseline: str | None = None,
    recordings: bool = True,
    resume: bool = False,
    progress: bool = False,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> SweepResult:
    """Run every run of ``spec``, write ``out_dir``'s summary (CSV and Parquet), ``sweep.toml``
    and, with ``recordings``, ``runs/RUN_ID.h5``; return the summary.

    ``scheduler``: a Dask scheduler address; else a LocalCluster of ``workers`` processes
    (default one per core); ``workers=0`` runs in this process, without Dask (debugging, and the
    serial reference of ``bench/bench_sweep.py``). ``baseline``: a run id of this sweep or a
    recording file to diff every run against. ``resume``: keep the finished runs of a previous
    sweep into ``out_dir``. Ctrl-C / SIGTERM cancel the runs not finished, write the summary of
    those that did, and set :attr:`SweepResult.interrupted`.
    """
    from pvdkit.outputs import check_output, output_folder
    from pvdkit.signals import Terminated, exit_status, interruption_reason, terminate_as_exception

    if resume and not recordings:
        raise SweepError(
            "--resume needs the recordings (it keeps the runs whose recording is complete); "
            "drop --no-recordings"
        )
    _check_workers(workers)
    out = output_folder(out_dir, "output folder", create=False)
    planned = spec.runs(out.resolve() if recordings else None)  # workers may run in another folder
    baseline_file, baseline_run = _baseline_path(baseline, planned, recordings)
    out = output_folder(out_dir, "output folder")
    for name in ("summary.csv", "summary.parquet"):  # before the runs, not after them
        check_output(out / name, "summary")
    if recordings:
        (out / "runs").mkdir(exist_ok=True)
    reused = _reusable_rows(out, spec, planned, baseline) if resume else {}
    runs = [_with(r, baseline=baseline_file, reuse=resume) for r in planned if r.run_id not in reused]
    _write_settings(out, spec, baseline)

    rows: dict[str, dict[str, Any]] = dict(reused)
    start = time.perf_counter()
    n_workers = 0 if workers == 0 or not runs else _local_workers(workers, len(runs))
    bar = _Progress(len(planned), n_workers or 1, progress)
    for _ in reused:
        bar.update({"status": "ok"})

    def collect(row: dict[str, Any]) -> None:
        rows[row["run_id"]] = row
        bar.update(row)
        if on_row is not None:
            on_row(row)

    interrupted, status = None, 0
    first = [r for r in runs if r.run_id == baseline_run]
    rest = [r for r in runs if r.run_id != baseline_run]
    try:
        with terminate_as_exception():
            vehicle = spec.base if spec.swept else None
            if workers == 0:
                _run_serial([_with(r, baseline=None) for r in first], vehicle, collect)
                _check_baseline(rows, baseline_run)
                _run_serial(rest, vehicle, collect)
            elif runs:  # (every run kept from the last sweep: no cluster to start)
                with _client(scheduler, n_workers) as client:
                    n_workers = len(client.nthreads())
                    bar.threads = max(sum(client.nthreads().values()), 1)
                    bar.update()
                    _run_dask(client, [_with(r, baseline=None) for r in first], vehicle, collect)
                    _check_baseline(rows, baseline_run)
                    _run_dask(client, rest, vehicle, collect)
    except (KeyboardInterrupt, Terminated) as exc:
        interrupted, status = interruption_reason(exc) or "interrupted", exit_status(exc)
    finally:
        bar.close()
        if baseline_run is not None and baseline_run in rows:
            rows[baseline_run].update(
                baseline_first_frame=None,
                baseline_first_time=None,
                baseline_first_attribute="",
                baseline_max_rel_error=0.0,
                baseline_equal=True,
            )
        order = {r.run_id: k for k, r in enumerate(planned)}
        finished = sorted(rows.values(), key=lambda r: order.get(r["run_id"], len(order)))
        table = write_summary(out, spec, finished, with_baseline=baseline is not None)
    return SweepResult(
        table, out, n_workers, time.perf_counter() - start, interrupted, len(runs), len(reused), status
    )


def _with(run: RunSpec, **changes: Any) -> RunSpec:
    from dataclasses import replace

    return replace(run, **changes)


def _check_baseline(rows: Mapping[str, Mapping[str, Any]], baseline_run: str | None) -> None:
    if baseline_run is None:
        return
    row = rows.get(baseline_run)
    if row is None or row.get("status") != "ok":
        why = row.get("error") if row else "it did not run"
        raise SweepError(
            f"--baseline {baseline_run}: the baseline run failed ({why}); nothing to diff against"
        )


# --------------------------------------------------------------------------------------------
# Outputs
# --------------------------------------------------------------------------------------------


def summary_columns(spec: SweepSpec, with_baseline: bool) -> list[str]:
    """The summary's columns, in order."""
    cols = ["run_id", "scenario", *spec.swept, *spec.metric_columns]
    if with_baseline:
        cols += list(BASELINE_COLUMNS)
    return cols + list(TAIL_COLUMNS)


def write_summary(out: Path, spec: SweepSpec, rows: list[dict[str, Any]], *, with_baseline: bool) -> Any:
    """``summary.csv`` and ``summary.parquet`` (each written atomically), and ``errors.log`` with
    the traceback of every run that hit a bug; returns the table (pandas)."""
    import pandas as pd

    from pvdkit.outputs import replacing, write_text

    columns = summary_columns(spec, with_baseline)
    table = pd.DataFrame([{c: r.get(c) for c in columns} for r in rows], columns=columns)
    table["recording"] = [_relative(p, out) for p in table["recording"]]
    for c in spec.swept:  # a per-wheel value is a list: JSON text, so CSV and Parquet agree
        if any(isinstance(v, list) for v in table[c]):
            table[c] = [json.dumps(v) for v in table[c]]
    for c in ("baseline_first_frame",):
        if c in table:
            table[c] = table[c].astype("Int64")
    for c in ("baseline_first_time", "baseline_max_rel_error", "wall_time", *spec.metric_columns):
        if c in table:
            table[c] = pd.to_numeric(table[c], errors="coerce").astype("float64")
    with replacing(out / "summary.csv", "summary") as tmp:
        table.to_csv(tmp, index=False)
    with replacing(out / "summary.parquet", "summary") as tmp:
        table.to_parquet(tmp, index=False)
    bugs = [r for r in rows if r.get("traceback")]
    if bugs:
        write_text(out / "errors.log", "".join(f"== {r['run_id']}\n{r['traceback']}\n" for r in bugs))
    return table


def _relative(path: Any, out: Path) -> str:
    """A recording's path relative to the sweep folder (``runs/0000-brake.h5``), '' for none."""
    if not isinstance(path, str) or not path:
        return ""
    try:
        return Path(os.path.relpath(path, out.resolve())).as_posix()
    except ValueError:  # another drive (Windows)
        return path


def _write_settings(out: Path, spec: SweepSpec, baseline: str | None) -> None:
    from pvdkit.outputs import write_text

    doc = spec.resolved()
    if baseline is not None:
        doc["baseline_run"] = baseline
    header = (
        f"# The sweep as run (pvdkit sweep {spec.source}): defaults filled in, linspace expanded.\n"
        "# Run it again with: pvdkit sweep THIS_FILE -o DIR\n"
    )
    # ``runs`` and ``baseline_run`` are facts about the run, not sweep-file keys: commented out.
    facts = {k: doc.pop(k) for k in ("runs", "baseline_run") if k in doc}
    text = header + "".join(f"# {k} = {_toml_value(v)}\n" for k, v in facts.items()) + dumps_toml(doc)
    write_text(out / "sweep.toml", text, "sweep.toml")


def dumps_toml(doc: Mapping[str, Any]) -> str:
    """TOML text of a dict of plain values (str, number, bool, lists, tables one level deep)."""
    head = [f"{_key(k)} = {_toml_value(v)}" for k, v in doc.items() if not isinstance(v, Mapping)]
    parts = ["\n".join(head)] if head else []
    for k, v in doc.items():
        if isinstance(v, Mapping):
            lines = [f"[{_key(k)}]"] + [f"{_key(sk)} = {_toml_value(sv)}" for sk, sv in v.items()]
            parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() else json.dumps(k)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML form for {type(v).__name__} {v!r}")


# --------------------------------------------------------------------------------------------
# The end-of-sweep table
# --------------------------------------------------------------------------------------------


def _cell(v: Any, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    try:
        import pandas as pd

        if pd.isna(v):
            return "-"
    except (TypeError, ValueError):
        pass
    return str(v)


def format_summary(result: SweepResult, spec: SweepSpec) -> list[str]:
    """The lines ``pvdkit sweep`` prints at the end: a table of the runs (the first
    :data:`TABLE_ROWS`), the failures, and a count line."""
    from pvdkit.terminal import format_table

    t = result.table
    cols = ["run_id", *spec.swept, *spec.metric_columns]
    if "baseline_first_attribute" in t:
        cols += ["baseline_first_time", "baseline_first_attribute", "baseline_max_rel_error"]
    cols += ["status", "wall_time"]
    swept = set(spec.swept)
    rows = [
        [_cell(r[c], 6 if c in swept else 4) for c in cols] for r in t.head(TABLE_ROWS).to_dict("records")
    ]
    lines = format_table(cols, rows, align="right") if rows else []
    if len(t) > TABLE_ROWS:
        lines.append(f"… {len(t) - TABLE_ROWS} more rows in {result.out_dir / 'summary.csv'}")
    failed = t[t["status"] != "ok"] if len(t) else t
    for r in failed.head(10).to_dict("records"):
        lines.append(f"{r['status']}: {r['run_id']}: {r['error']}")
    if len(failed) > 10:
        lines.append(f"… {len(failed) - 10} more failures in {result.out_dir / 'summary.csv'}")
    c = result.counts()
    line = f"{len(t)} runs: {c['ok']} ok, {c['error']} error, {c['timeout']} timeout"
    if result.kept and not result.submitted:  # a rate of 0 runs/s would say nothing
        kept = "the run was" if result.kept == 1 else f"all {result.kept} runs were"
        line += f" · nothing to run: {kept} kept from the last sweep"
    else:
        where = (
            "in this process"
            if result.workers == 0
            else f"on {result.workers} worker{'s' * (result.workers != 1)}"
        )
        rate = (len(t) - result.kept) / result.seconds if result.seconds > 0 else 0.0
        if result.kept:
            line += f" ({result.kept} kept from the last sweep)"
        line += f" · {result.seconds:.1f} s {where} ({rate:.2f} runs/s)"
    lines.append(f"{line} → {result.out_dir}")
    return lines


def print_summary(result: SweepResult, spec: SweepSpec, stream: Any = None) -> None:
    """Print :func:`format_summary` to ``stream`` (default stdout)."""
    print("\n".join(format_summary(result, spec)), file=stream or sys.stdout)
