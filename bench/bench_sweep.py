"""``pvdkit sweep``'s cost: 16 runs of 2 s simulated, serially in one process vs on a Dask
LocalCluster of 1 and 2 single-threaded worker processes.

Why these figures: Dask's overhead per run (scheduling, shipping the spec and the row, the
client's bookkeeping) must be small against a run — target ≤ 5 % of a 2-s run — and two workers
should nearly halve the time (target ≥ 1.7× from 1 to 2 workers). Every mode writes the same
outputs (recordings, summary.csv / .parquet) through :func:`simcore.sweep.run_sweep`; workers are
warmed up first (imports, numba's cache), as they are after the first run of a real sweep, and
cluster start-up is reported apart. One LocalCluster of 1 worker runs with Dask's default
worker settings instead of ``pvdkit sweep``'s (:data:`simcore.sweep.runner.LOCAL_CLUSTER_CONFIG`),
for the comparison. The machine is noisy: each mode runs ``--repeat`` times and best and median
are printed.

    python3 bench/bench_sweep.py [--repeat 3] [--runs 16] [--duration 2.0]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from simcore.sweep import parse_sweep, run_one, run_sweep
from simcore.sweep.runner import LOCAL_CLUSTER_CONFIG
from simcore.sweep.spec import SweepSpec


def _spec(runs: int, duration: float) -> SweepSpec:
    side = max(int(round(runs**0.5)), 1)
    masses = [1500.0 + 1000.0 * k / max(side - 1, 1) for k in range(side)]
    stiff = [15000.0 + 20000.0 * k / max(runs // side - 1, 1) for k in range(runs // side)]
    return parse_sweep({
        "vehicle": "sedan", "scenario": "accelerate", "duration": duration,
        "grid": {"rigid_body.mass": masses, "tire_force.long_stiff": stiff},
        "metrics": {"use": ["final_speed", "max_jounce", "peak_long_slip", "time_to_speed"]},
    }, "bench")


def _warm() -> None:
    """One short run in this process: imports and numba's cache, as after a sweep's first run."""
    spec = parse_sweep({"vehicle": "sedan", "scenario": "accelerate", "duration": 0.1,
                        "metrics": {"use": ["final_speed"]}}, "warm-up")
    run_one(spec.runs()[0].as_dict(), spec.base)


def _timed(spec: SweepSpec, **kwargs: Any) -> tuple[float, float]:
    """(wall seconds of the sweep, sum of the runs' own wall times)."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = run_sweep(spec, Path(tmp) / "out", **kwargs)
        wall = time.perf_counter() - start
    assert (result.table["status"] == "ok").all(), result.table["error"].tolist()
    return wall, float(result.table["wall_time"].sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runs", type=int, default=16)
    ap.add_argument("--duration", type=float, default=2.0)
    args = ap.parse_args()
    import dask
    import distributed


    spec = _spec(args.runs, args.duration)
    n = spec.count()
    _warm()
    walls: dict[str, list[float]] = {}
    inner: dict[str, list[float]] = {}
    starts: dict[str, float] = {}
    for rep in range(args.repeat):
        w, s = _timed(spec, workers=0)
        walls.setdefault("serial", []).append(w)
        inner.setdefault("serial", []).append(s)
        # Workers as `pvdkit sweep` starts them, and one with Dask's default settings (before).
        for key, workers, cluster_config in (("1 worker", 1, LOCAL_CLUSTER_CONFIG),
                                             ("2 workers", 2, LOCAL_CLUSTER_CONFIG),
                                             ("1 worker, Dask defaults", 1, {})):
            t0 = time.perf_counter()
            with dask.config.set(cluster_config), \
                    distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                             dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
                    distributed.Client(cluster) as client:
                client.run(_warm)
                starts[key] = min(starts.get(key, float("inf")), time.perf_counter() - t0)
                w, s = _timed(spec, scheduler=cluster.scheduler_address)
            walls.setdefault(key, []).append(w)
            inner.setdefault(key, []).append(s)
        print(f"repeat {rep + 1}/{args.repeat}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in walls.items()),
              flush=True)

    print(f"\n{n} runs of {args.duration:g} s simulated (sedan, accelerate, recorded to .h5 + 4 metrics)")
    print(f"{'mode':<24} {'best s':>8} {'median s':>9} {'runs/s best':>12} {'runs/s med':>11}")
    for key, v in walls.items():
        best, med = min(v), statistics.median(v)
        print(f"{key:<24} {best:8.2f} {statistics.median(v):9.2f} {n / best:12.2f} {n / med:11.2f}")
    run_best = min(walls["serial"]) / n
    run_med = statistics.median(walls["serial"]) / n
    for stat, pick in (("best", min), ("median", statistics.median)):
        one, two, serial = pick(walls["1 worker"]), pick(walls["2 workers"]), pick(walls["serial"])
        per_run = serial / n
        overhead = (one - serial) / n
        before = (pick(walls["1 worker, Dask defaults"]) - serial) / n
        dispatch = (one - pick(inner["1 worker"])) / n  # wall time outside any run: scheduling, transfer
        serial_outside = (serial - pick(inner["serial"])) / n  # the same without Dask: summary, bar
        print(f"{stat:>6}: a run {per_run * 1e3:.0f} ms in-process; Dask overhead per run "
              f"{overhead * 1e3:+.1f} ms = {100 * overhead / per_run:+.1f} % of a run (target <= 5 %; "
              f"with Dask's default worker settings {100 * before / per_run:+.1f} %), "
              f"of which {dispatch * 1e3:.1f} ms outside the runs (scheduling, transfer, summary; "
              f"serially {serial_outside * 1e3:.1f} ms); "
              f"speed-up 1 -> 2 workers {one / two:.2f}x (target >= 1.7x)")
    print(f"(a run's own wall time inside the workers, median: 1 worker "
          f"{statistics.median(inner['1 worker']) / n * 1e3:.0f} ms, 2 workers "
          f"{statistics.median(inner['2 workers']) / n * 1e3:.0f} ms, 1 worker with Dask's defaults "
          f"{statistics.median(inner['1 worker, Dask defaults']) / n * 1e3:.0f} ms; serial "
          f"{run_med * 1e3:.0f} ms, best {run_best * 1e3:.0f} ms)")
    started = ", ".join(f"{k} {v:.2f} s" for k, v in starts.items())
    print(f"cluster start-up incl. worker warm-up (best): {started}")


if __name__ == "__main__":
    main()
