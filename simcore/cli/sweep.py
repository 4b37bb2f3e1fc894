"""``pvdkit sweep SWEEP.toml``: a parameter sweep on Dask, every run recorded, one summary table.

The command reaches ``pvdkit``'s command line through the entry point
``sweep = "simcore.cli:SWEEP"``; this module is imported only when it runs, and it only parses
and prints: the work is :func:`simcore.sweep.run_sweep` (see ``docs/sweep.md``).
"""

from __future__ import annotations

import argparse
import sys

from pvdkit.outputs import path_argument
from pvdkit.terminal import on_terminal
from pvdkit.types import PvdError
from simcore.cli import SWEEP_HELP

#: One-line help of the subcommand (the entry point's, :data:`simcore.cli.SWEEP_HELP`).
HELP = SWEEP_HELP


def configure(p: argparse.ArgumentParser) -> None:
    """Add ``pvdkit sweep``'s arguments to its parser."""
    p.description = (
        "Run a parameter sweep described by a TOML file (docs/sweep.md) on Dask: a LocalCluster of one "
        "single-threaded worker process per core, or an existing cluster. Every run is recorded "
        "(DIR/runs/RUN_ID.h5) and scored; DIR/summary.csv and summary.parquet hold one row per run."
    )
    p.add_argument("sweep", metavar="SWEEP.toml", help="the sweep file")
    p.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="DIR",
        type=path_argument,
        help="output folder (created; default: the sweep file's path without .toml)",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="an existing Dask scheduler, e.g. tcp://HOST:8786 (its workers must see DIR)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="LocalCluster worker processes (default: one per core; 0: run in this process)",
    )
    p.add_argument(
        "--baseline",
        default=None,
        metavar="RUN",
        help="a run id of this sweep (e.g. 0000-brake) or a recording file: diff every run "
        "against it (pvdkit diff's semantics)",
    )
    p.add_argument(
        "--no-recordings",
        dest="recordings",
        action="store_false",
        help="keep no recordings: workers return only the metrics (clusters without a shared file system)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the runs of a previous sweep into DIR whose recording is complete and whose "
        "params match; run the rest",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    """Run ``pvdkit sweep``: progress on stderr, the summary table on stdout. Exit 0 when every run
    is ok, 1 when a run failed or timed out, 2 for bad input (one line), 130/143 when stopped
    by Ctrl-C / SIGTERM (the summary then holds the runs that finished)."""
    from pathlib import Path

    from simcore.sweep import load_sweep, run_sweep
    from simcore.sweep.runner import print_summary

    spec = load_sweep(args.sweep)
    if args.scheduler is not None and args.workers is not None:
        raise PvdError(
            "sweep: --workers sets the size of a LocalCluster; with --scheduler the cluster "
            "has its own workers"
        )
    out = args.output if args.output is not None else Path(args.sweep).with_suffix("")
    try:
        result = run_sweep(
            spec,
            out,
            scheduler=args.scheduler,
            workers=args.workers,
            baseline=args.baseline,
            recordings=args.recordings,
            resume=args.resume,
            progress=not args.quiet and on_terminal(),
        )
    except OSError as exc:
        raise PvdError(f"sweep: {exc}") from None
    print_summary(result, spec)
    if result.interrupted:
        print(
            f"sweep: {result.interrupted}; {result.out_dir / 'summary.csv'} holds the runs that finished "
            "(--resume runs the rest)",
            file=sys.stderr,
        )
        return result.exit_status
    return 0 if all(s == "ok" for s in result.table["status"]) else 1
