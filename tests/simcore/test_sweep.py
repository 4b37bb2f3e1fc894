"""``pvdkit sweep`` on a real Dask LocalCluster of two worker processes.

The cluster is started once for the module (about 2 s); each test runs its sweep on it through
``run_sweep(..., scheduler=ADDRESS)`` — the same client code path as ``--scheduler`` — or through
the command line. Runs are 0.5–1 s of simulated time so the module stays well under a minute.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest

from pvdkit.cli import main
from pvdkit.diff import compare_files
from pvdkit.recording import Recording
from pvdkit.types import PvdError
from simcore.cli.record import load_vehicle_params, record
from simcore.param_paths import param_value, with_param
from simcore.sweep import load_sweep, parse_sweep, run_sweep
from simcore.sweep.metrics import METRICS, frame_time

distributed = pytest.importorskip("distributed")

METRIC_NAMES = ["final_speed", "max_jounce", "peak_long_slip", "max_lateral_accel"]
GRID = """
vehicle = "sedan"
scenario = "accelerate"
duration = 0.5
[grid]
"rigid_body.mass" = [1500, 2500]
"tire_force.long_stiff" = { linspace = [15000, 35000, 2] }
[metrics]
use = ["final_speed", "max_jounce", "peak_long_slip", "max_lateral_accel"]
"""


#: Four runs whose random masses (seed 1: 278, 622, -1404, -2432) put the last two out of range:
#: a grid's values are checked before anything runs, random draws only as each run starts.
SOME_OUT_OF_RANGE = """
vehicle = "sedan"
scenario = "accelerate"
duration = 0.5
[random]
samples = 4
seed = 1
"rigid_body.mass" = { uniform = [-3000, 3000] }
[metrics]
use = ["final_speed"]
"""


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50
    ) as c:
        yield c.scheduler_address


def _sweep(tmp_path: Path, text: str, name: str = "sweep.toml"):
    path = tmp_path / name
    path.write_text(text)
    return load_sweep(path)


def test_a_2x2_grid_gives_4_recordings_and_the_metrics_of_direct_runs(tmp_path, cluster):
    spec = _sweep(tmp_path, GRID)
    result = run_sweep(spec, tmp_path / "out", scheduler=cluster)
    table = result.table
    assert list(table["status"]) == ["ok"] * 4, table["error"].tolist()
    assert sorted(p.name for p in (tmp_path / "out" / "runs").iterdir()) == [
        f"000{k}-accelerate.h5" for k in range(4)
    ]
    assert table[["rigid_body.mass", "tire_force.long_stiff"]].values.tolist() == [
        [1500, 15000.0],
        [1500, 35000.0],
        [2500, 15000.0],
        [2500, 35000.0],
    ]
    with distributed.Client(cluster) as client:
        assert set(table["worker"]) <= set(client.nthreads())  # ran on the cluster's workers
    base, _ = load_vehicle_params("sedan")
    for row in table.to_dict("records"):
        params = with_param(
            with_param(base, "rigid_body.mass", row["rigid_body.mass"]),
            "tire_force.long_stiff",
            row["tire_force.long_stiff"],
        )
        direct = tmp_path / f"direct_{row['run_id']}.h5"
        record(params, "accelerate", duration=0.5, out=direct)
        with Recording.open(direct) as rec:
            for name in METRIC_NAMES:
                assert row[name] == METRICS[name][0](rec), f"{row['run_id']}: {name}"
        # The worker's recording is the same simulation, and says which run it is.
        assert compare_files(str(tmp_path / "out" / row["recording"]), str(direct)).equal
        with h5py.File(tmp_path / "out" / row["recording"]) as f:
            stored = json.loads(f.attrs["sweep_run"])
        assert stored["params"] == {
            "rigid_body.mass": row["rigid_body.mass"],
            "tire_force.long_stiff": row["tire_force.long_stiff"],
        }
    # The summary on disk is the table, in both formats; the resolved sweep expands linspace.
    csv = pd.read_csv(tmp_path / "out" / "summary.csv")
    parquet = pd.read_parquet(tmp_path / "out" / "summary.parquet")
    assert list(csv.columns) == list(parquet.columns) == list(table.columns)
    assert np.allclose(csv["final_speed"], parquet["final_speed"])
    resolved = load_sweep(tmp_path / "out" / "sweep.toml")
    assert resolved.grid == {"rigid_body.mass": [1500, 2500], "tire_force.long_stiff": [15000.0, 35000.0]}


def test_a_random_sweep_is_reproducible_from_its_seed(tmp_path, cluster):
    text = """
vehicle = "sedan"
scenario = "idle"
duration = 0.5
[random]
samples = 3
seed = 7
"suspension_force.stiffness" = { scale_uniform = [0.8, 1.2] }
"rigid_body.mass" = { normal = [2000, 100] }
"tire_force.long_stiff" = { choice = [20000, 30000] }
[metrics]
use = ["max_jounce"]
"""
    spec = _sweep(tmp_path, text)
    a = run_sweep(spec, tmp_path / "a", scheduler=cluster, recordings=False).table
    b = run_sweep(
        _sweep(tmp_path, text, "again.toml"), tmp_path / "b", scheduler=cluster, recordings=False
    ).table
    cols = ["rigid_body.mass", "tire_force.long_stiff", "suspension_force.stiffness", "max_jounce"]
    assert a[cols].equals(b[cols])
    assert list(a["status"]) == ["ok"] * 3
    assert not (tmp_path / "a" / "runs").exists()  # --no-recordings
    # scale_uniform multiplies the vehicle's own per-wheel values by one factor per sample.
    own = np.asarray(param_value(load_vehicle_params("sedan")[0], "suspension_force.stiffness"), float)
    factors = [np.asarray(json.loads(v)) / own for v in a["suspension_force.stiffness"]]
    for f in factors:
        assert np.allclose(f, f[0]) and 0.8 <= f[0] <= 1.2
    assert len({f[0] for f in factors}) == 3
    # Another seed draws other values; adding a key leaves the others' draws alone.
    other = parse_sweep({**_toml(text), "random": {**_toml(text)["random"], "seed": 8}})
    assert [p["rigid_body.mass"] for p in other.param_sets()] != list(a["rigid_body.mass"])
    more = _toml(text)
    more["random"]["wheel.mass"] = {"uniform": [10.0, 30.0]}
    assert [p["rigid_body.mass"] for p in parse_sweep(more).param_sets()] == list(a["rigid_body.mass"])


def _toml(text: str) -> dict:
    import tomllib

    return tomllib.loads(text)


def test_a_run_with_params_out_of_range_fails_alone(tmp_path, cluster):
    """A grid's values are checked before anything runs; random draws are not all known then
    (seed 1 draws masses 278, 622, -1404, -2432): those out of range fail alone."""
    result = run_sweep(_sweep(tmp_path, SOME_OUT_OF_RANGE), tmp_path / "out", scheduler=cluster)
    table = result.table
    assert list(table["status"]) == ["ok", "ok", "error", "error"]
    assert all("RigidBodyParams.mass must be greater than zero" in e for e in table["error"][2:])
    assert table["final_speed"][:2].notna().all() and table["final_speed"][2:].isna().all()
    assert sorted(p.name for p in (tmp_path / "out" / "runs").iterdir()) == [
        "0000-accelerate.h5",
        "0001-accelerate.h5",
    ]  # no file, not even a temporary one, for a failure


def test_the_local_cluster_workers_run_without_the_profiler_and_with_a_slow_tick():
    """pvdkit sweep's LocalCluster hands its settings to the worker processes (the profiler and
    the 20 ms tick take the GIL from a run); a dying worker's task is retried once."""
    import dask

    from simcore.sweep.runner import _client

    with _client(None, 1) as client:
        got = client.run(lambda: (dask.config.get("distributed.worker.profile.enabled"),
                                  dask.config.get("distributed.admin.tick.interval")))
        assert list(got.values()) == [(False, "1s")]
        assert client.run_on_scheduler(lambda: dask.config.get("distributed.scheduler.allowed-failures")) == 1


def test_a_run_over_its_timeout_gets_status_timeout(tmp_path):
    text = GRID.replace("duration = 0.5", "duration = 30.0\ntimeout = 0.05").replace("[1500, 2500]", "[1500]")
    result = run_sweep(_sweep(tmp_path, text), tmp_path / "out", workers=0)
    assert list(result.table["status"]) == ["timeout", "timeout"]
    assert "timed out after 0.05 s" in result.table["error"][0]
    assert list((tmp_path / "out" / "runs").iterdir()) == []


def test_resume_runs_nothing_the_second_time(tmp_path, cluster, capsys):
    (tmp_path / "sweep.toml").write_text(GRID)
    out = tmp_path / "out"
    first = run_sweep(load_sweep(tmp_path / "sweep.toml"), out, scheduler=cluster)
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()}
    again = run_sweep(load_sweep(tmp_path / "sweep.toml"), out, scheduler=cluster, resume=True)
    assert again.submitted == 0 and again.kept == 4
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()} == stamps
    assert again.table["final_speed"].tolist() == first.table["final_speed"].tolist()
    assert again.table["resumed"].all()
    # A changed param is run again; the unchanged runs are kept.
    (tmp_path / "sweep.toml").write_text(GRID.replace("[1500, 2500]", "[1500, 2600]"))
    third = run_sweep(load_sweep(tmp_path / "sweep.toml"), out, scheduler=cluster, resume=True)
    assert third.submitted == 2 and third.kept == 2
    assert third.table["resumed"].tolist() == [True, True, False, False]
    # An incomplete recording (a run killed while writing) is not complete: run again.
    with h5py.File(out / "runs" / "0000-accelerate.h5", "r+") as f:
        f.attrs["complete"] = False
    fourth = run_sweep(load_sweep(tmp_path / "sweep.toml"), out, scheduler=cluster, resume=True)
    assert fourth.submitted == 1 and fourth.table["resumed"].tolist() == [False, True, True, True]


def test_baseline_columns_on_a_crafted_pair(tmp_path, cluster):
    # Run 0 and run 1 differ only in the rear tires' stiffness; run 2 equals run 0.
    text = """
vehicle = "sedan"
scenario = "accelerate"
duration = 0.5
[grid]
"tire_force.long_stiff" = [24525, [24525, 24525, 30000, 30000], 24525]
[metrics]
use = ["final_speed"]
[baseline]
ignore = ["TireParams.*"]
"""
    result = run_sweep(
        _sweep(tmp_path, text), tmp_path / "out", scheduler=cluster, baseline="0000-accelerate"
    )
    t = result.table.set_index("run_id")
    assert list(t["status"]) == ["ok"] * 3
    runs = tmp_path / "out" / "runs"
    # The sweep ignores TireParams, so the first divergence is a state: compare with the same rule.
    from pvdkit.diff import DiffOptions, ToleranceConfig

    opts = DiffOptions(ToleranceConfig.from_mapping({"ignore": ["TireParams.*"]}))
    want = compare_files(str(runs / "0001-accelerate.h5"), str(runs / "0000-accelerate.h5"), opts)
    first = want.first_divergence
    row = t.loc["0001-accelerate"]
    assert row["baseline_first_frame"] == first.first_frame
    assert row["baseline_first_attribute"] == f"{first.object}.{first.attribute}"
    assert "TireParams" not in row["baseline_first_attribute"]
    with Recording.open(runs / "0001-accelerate.h5") as rec:
        assert row["baseline_first_time"] == pytest.approx(frame_time(rec, first.first_frame))
        assert row["baseline_first_time"] == pytest.approx(
            rec.value_at("Simulation", "time", first.first_frame)
        )
    rels = [s.max_rel for s in want.series if s.max_rel is not None and math.isfinite(s.max_rel)]
    assert row["baseline_max_rel_error"] == max(rels) > 0
    assert not row["baseline_equal"]
    for same in ("0000-accelerate", "0002-accelerate"):  # the baseline itself, and its twin
        assert pd.isna(t.loc[same, "baseline_first_frame"]) and t.loc[same, "baseline_max_rel_error"] == 0.0
        assert t.loc[same, "baseline_equal"]
    # Without the ignore rule the param itself differs from the first frame on (params are
    # written with the first frame), which is what the ignore rule keeps out of the columns.
    plain = compare_files(str(runs / "0001-accelerate.h5"), str(runs / "0000-accelerate.h5"))
    stiff = [s for s in plain.find("TireParams.longStiff") if s.is_different]
    assert [s.object for s in stiff] == [f"Vehicle/wheelAttachmentSet[{k}]/tireParams" for k in (2, 3)]
    assert stiff[0].first_frame == plain.first_divergence.first_frame == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('vehicle = "sedan"\nscenaro = "brake"', "sweep.toml: scenaro: unknown key"),
        (
            'vehicle = "sedan"\n[grid]\n"rigid_body.mas" = [1, 2]',
            "sweep.toml: grid.rigid_body.mas: param path",
        ),
        (
            'vehicle = "sedan"\n[grid]\n"rigid_body.mass" = ["heavy"]',
            "sweep.toml: grid.rigid_body.mass: expected numbers",
        ),
        (
            'vehicle = "sedan"\n[grid]\n"tire_force.long_stiff" = [[1, 2]]',
            "sweep.toml: grid.tire_force.long_stiff: param path 'tire_force.long_stiff': "
            "expected one number or shape (4,)",
        ),
        (
            'vehicle = "sedan"\n[random]\nsamples = 2\nseed = 1\n"rigid_body.mass" = { gamma = [1, 2] }',
            "sweep.toml: random.rigid_body.mass: expected { <distribution> = [...] }",
        ),
        (
            'vehicle = "sedan"\n[random]\nsamples = 2\n"rigid_body.mass" = { uniform = [1, 2] }',
            "sweep.toml: random.seed: missing: a random sweep needs a seed",
        ),
        (  # a 5,000-digit hex seed passed and crashed writing DIR/sweep.toml after the runs
            'vehicle = "sedan"\n[random]\nsamples = 2\nseed = 0x' + "f" * 5000
            + '\n"rigid_body.mass" = { uniform = [1, 2] }',
            "sweep.toml: random.seed: expected a whole number in 0 … 2**128 - 1",
        ),
        (
            'vehicle = "sedan"\n[metrics]\nuse = ["stoping_distance"]',
            "sweep.toml: metrics.use[0]: unknown metric",
        ),
        (
            'vehicle = "sedan"\n[metrics]\nuse = [{ metric = "time_to_speed", sped = 3 }]',
            "sweep.toml: metrics.use[0]: metric 'time_to_speed': got an unexpected keyword argument 'sped'",
        ),
        (
            'vehicle = "sedan"\nscenario = ["brake", "drift"]',
            "sweep.toml: scenario: unknown scenario 'drift'",
        ),
        ('vehicle = "sedan"\n[grid]\n"engine.peak_torque" = [500]', "this vehicle has no engine"),
        (
            'vehicle = "sedan"\n[grid]\n"rigid_body.mass" = { linspace = [1, 2, 0] }',
            "linspace needs [start, stop, n]",
        ),
        ('vehicle = "sedan"\nduration = -1', "sweep.toml: duration: expected a positive number"),
        ('vehicle = "sedan"\n[baseline]\nrtol = -1', "baseline: rtol must be a finite number >= 0"),
        ('vehicle = "sedan"\n[grid\n', "sweep.toml: not valid TOML"),
        # Integers too big for a float (TOML's have no limit) crashed the checks (OverflowError).
        pytest.param(
            'vehicle = "sedan"\nduration = 1' + "0" * 309,
            "sweep.toml: duration: expected a positive number of seconds, got an integer of about 310 digits",
            id="duration-310-digits",
        ),
        pytest.param(
            'vehicle = "sedan"\n[grid]\n"rigid_body.mass" = [1' + "0" * 309 + "]",
            "sweep.toml: grid.rigid_body.mass: expected numbers (or one list of numbers per wheel), "
            "got an integer of about 310 digits",
            id="grid-310-digits",
        ),
        pytest.param(
            'vehicle = "sedan"\n[random]\nsamples = 2\nseed = 1\n"rigid_body.mass" = { uniform = [1, 1'
            + "0" * 309
            + "] }",
            "sweep.toml: random.rigid_body.mass: uniform needs two numbers [low, high], "
            "got [1, an integer of about 310 digits]",
            id="random-310-digits",
        ),
        pytest.param(
            'vehicle = "sedan"\n[baseline]\natol = 1' + "0" * 309,
            "sweep.toml: baseline: atol must be a finite number, got an integer of about 310 digits",
            id="baseline-310-digits",
        ),
        pytest.param(
            'vehicle = "sedan"\nduration = 1' + "0" * 5000,
            "sweep.toml: an integer of more than 4300 digits",
            id="duration-5001-digits",
        ),
        # A linspace of 1e12 values was made before the run count was checked (MemoryError).
        (
            'vehicle = "sedan"\n[grid]\n"rigid_body.mass" = { linspace = [1000, 2000, 1000000000000] }',
            "sweep.toml: grid.rigid_body.mass: linspace n = 1,000,000,000,000 is more than the 1,000,000 "
            "runs a sweep may have",
        ),
        # A value out of its bounds ran, and failed in its worker, as `record --set` refuses it.
        (
            'vehicle = "sedan"\n[grid]\n"rigid_body.mass" = [1500, -1]',
            "sweep.toml: grid.rigid_body.mass: -1: RigidBodyParams.mass must be greater than zero, got -1.0",
        ),
        # A relative module name reached importlib's TypeError.
        (
            'vehicle = "sedan"\n[metrics]\nuse = [".:x"]',
            "sweep.toml: metrics.use[0]: metric '.:x': '.' is a relative module name",
        ),
        # An option of the wrong type passed the check and then failed every run.
        (
            'vehicle = "sedan"\n[metrics]\nuse = [{ metric = "time_to_speed", speed = "fast" }]',
            "sweep.toml: metrics.use[0]: metric 'time_to_speed': option speed must be a finite number, "
            "got 'fast'",
        ),
    ],
)
def test_bad_sweep_files_are_one_line_exit_2_before_anything_runs(tmp_path, capsys, text, message):
    (tmp_path / "sweep.toml").write_text(text)
    assert main(["sweep", str(tmp_path / "sweep.toml"), "-o", str(tmp_path / "out"), "--workers", "0"]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_sweep_file_that_is_not_utf8_or_nested_too_deeply_is_one_line(tmp_path, capsys):
    """Both raised past load_sweep (UnicodeDecodeError, RecursionError) as tracebacks, exit 1."""
    cases = [
        (b'vehicle = "sedan"\n# caf\xe9\n', "sweep.toml: line 2: not UTF-8 text (byte 0xe9 at offset 23)"),
        (b'vehicle = "sedan"\nx = ' + b"[" * 3000 + b"]" * 3000,
         "sweep.toml: nested too deeply, expected a sweep file"),
    ]
    for raw, message in cases:
        (tmp_path / "sweep.toml").write_bytes(raw)
        assert main(["sweep", str(tmp_path / "sweep.toml"), "-o", str(tmp_path / "out"), "--workers=0"]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


def test_a_metric_module_that_does_not_compile_is_named_with_its_line(tmp_path, capsys, monkeypatch):
    """A syntax error in the user's metric module was a traceback out of the file check."""
    module = tmp_path / "sweep_metric_that_does_not_compile.py"
    module.write_text("def f(:\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "sweep.toml").write_text(
        'vehicle = "sedan"\n[metrics]\nuse = ["sweep_metric_that_does_not_compile:f"]'
    )
    assert main(["sweep", str(tmp_path / "sweep.toml"), "-o", str(tmp_path / "out"), "--workers", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert (
        "sweep.toml: metrics.use[0]: metric 'sweep_metric_that_does_not_compile:f': module "
        f"'sweep_metric_that_does_not_compile' does not compile: {module}, line 1: invalid syntax" in err
    )


def test_bad_scheduler_workers_and_baseline_are_one_line_before_anything_runs(tmp_path, capsys):
    """A scheduler address distributed cannot parse was a ValueError traceback; a worker count far
    above the cores started that many processes; a baseline that is no recording failed every run."""
    from simcore.sweep.runner import MAX_WORKERS_PER_CORE, _cores

    (tmp_path / "sweep.toml").write_text(GRID)
    (tmp_path / "cfg.toml").write_text("atol = 1e-3\n")
    too_many = MAX_WORKERS_PER_CORE * _cores() + 1
    cases = [
        (["--scheduler", "nonsense"], "--scheduler 'nonsense': not a scheduler address (missing port number"),
        (["--scheduler", ""], "--scheduler '': not a scheduler address"),
        (["--workers", str(too_many)], f"--workers {too_many}: more than {MAX_WORKERS_PER_CORE} × the"),
        (
            ["--baseline", str(tmp_path / "cfg.toml"), "--workers", "0"],
            f"--baseline: {tmp_path / 'cfg.toml'}: not an OmniPVD stream",
        ),
    ]
    for k, (extra, message) in enumerate(cases):
        out = tmp_path / f"out{k}"
        assert main(["sweep", str(tmp_path / "sweep.toml"), "-o", str(out), *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
        if "--scheduler" not in extra:  # (the scheduler is only reached once the folder exists)
            assert not out.exists()


def test_the_local_cluster_has_no_more_workers_than_runs(tmp_path):
    """``--workers 1000`` on a 2-run sweep was still starting workers after a minute."""
    text = GRID.replace("duration = 0.5", "duration = 0.05").replace("[1500, 2500]", "[1500]")
    text = text.replace("[15000, 35000, 2]", "[15000, 35000, 1]")
    result = run_sweep(_sweep(tmp_path, text), tmp_path / "out", workers=2)
    assert len(result.table) == 1 and result.workers == 1


def test_a_fully_resumed_sweep_says_nothing_to_run_and_the_table_has_the_real_column_names(tmp_path):
    """The count line said '0.00 runs/s' when every run was kept; the table headed the baseline
    columns 'base_…', names the summary does not have."""
    from simcore.sweep.runner import format_summary

    text = GRID.replace("duration = 0.5", "duration = 0.05")
    spec = _sweep(tmp_path, text)
    first = run_sweep(spec, tmp_path / "out", workers=0, baseline="0000-accelerate")
    header = format_summary(first, spec)[0].split()
    assert {"baseline_first_time", "baseline_first_attribute", "baseline_max_rel_error"} <= set(header)
    assert set(header) <= set(first.table.columns)
    again = run_sweep(spec, tmp_path / "out", workers=0, baseline="0000-accelerate", resume=True)
    assert again.submitted == 0 and again.kept == 4
    last = format_summary(again, spec)[-1]
    assert last.startswith("4 runs: 4 ok, 0 error, 0 timeout · nothing to run: all 4 runs were kept from")
    assert "runs/s" not in last


def test_bad_command_line_values_are_one_line_exit_2(tmp_path, capsys):
    (tmp_path / "sweep.toml").write_text(GRID)
    cases = [
        (["--baseline", "9999-brake"], "--baseline 9999-brake: neither a run id of this sweep"),
        (["--resume", "--no-recordings"], "--resume needs the recordings"),
        (["--workers", "-1"], "--workers must be >= 0"),
    ]
    for extra, message in cases:
        assert main(["sweep", str(tmp_path / "sweep.toml"), "-o", str(tmp_path / "o"), *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_the_command_line_runs_a_sweep_and_prints_the_table(tmp_path, capsys):
    (tmp_path / "sweep.toml").write_text(SOME_OUT_OF_RANGE)
    status = main(["sweep", str(tmp_path / "sweep.toml"), "--workers", "0", "--quiet"])
    out = capsys.readouterr().out
    assert status == 1  # a run failed
    assert (tmp_path / "sweep" / "summary.csv").is_file()  # default DIR: the file's name
    assert "0000-accelerate" in out and "4 runs: 2 ok, 2 error, 0 timeout" in out
    assert "error: 0002-accelerate: RigidBodyParams.mass must be greater than zero" in out


def test_a_summary_path_that_is_no_file_is_refused_before_any_run(tmp_path):
    """summary.csv as a FIFO was refused only after every run was simulated (all the work lost):
    checked before the first run now."""
    import os

    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "summary.csv")
    spec = _sweep(tmp_path, 'vehicle = "sedan"\nduration = 0.05\n[grid]\n"rigid_body.mass" = [1500, 1600]')
    with pytest.raises(PvdError, match=r"summary 'summary.csv'|summary.csv.*is not a regular file \(a FIFO"):
        run_sweep(spec, out, workers=0)
    assert not (out / "runs").exists()
