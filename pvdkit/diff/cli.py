"""``pvdkit diff A B``: the command line of the comparison (a thin layer over
:func:`pvdkit.diff.compare_files`).

Exit status: 0 when the recordings are equal within tolerance, 1 when they differ (schema,
objects, frames or any attribute value; missing data is a difference), 2 on error (a file that
cannot be read, a bad option or tolerance file, recordings that cannot be aligned, a
``--frames`` window that starts after both recordings end) with one line ``pvdkit diff:
error: …`` on stderr. An unexpected exception (a bug) prints its traceback and also exits
with 2, so that a crash never reads as "different" (1) to a CI job.

Outputs (``--json``, ``--junit``, ``--plots``) follow :mod:`pvdkit.outputs`: their folder must
exist (checked before comparing), and each file is written atomically.

Hooking into ``pvdkit``: :mod:`pvdkit.cli` (the layer above) names this module as a lazy
``diff`` command, whose :func:`configure` and :func:`run` it calls; this module does not import
the command line. A plain argparse program can call :func:`add_diff_parser` instead. The module
imports nothing heavy: the engine is loaded when the command runs. ``python3 -m pvdkit.diff A B``
also works.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from pvdkit import outputs
from pvdkit.diff.result import VehicleScope
from pvdkit.types import PvdError

__all__ = ["HELP", "add_diff_parser", "check_window", "configure", "main", "run"]

HELP = "compare two recordings semantically (objects by identity, values with tolerances)"

_EPILOG = """\
Objects are matched by class, name and position in the object graph, never by handle.
Floats are equal when |a-b| <= atol + rtol*|b| (B is the reference); integers, enums, flags,
strings and references compare exactly. --frames START:STOP compares frames START..STOP-1
(frame indices of A; B's frames are matched by index, or by timestamp with --align time),
values set before START count as held at START; a window that starts at or after the end of
both recordings is an error (there is nothing to compare), one that runs past the end is cut
there. Exit status: 0 equal, 1 different, 2 error.
"""



def _window_text(text: str) -> str:
    """--frames as typed; an empty one (an unset shell variable) is an error, not "all frames"."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected START:STOP (e.g. 100:200 or 250:), got an empty string")
    return text

def configure(p: argparse.ArgumentParser) -> None:
    """Add the ``diff`` arguments to ``p``."""
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = _EPILOG
    p.add_argument("a", metavar="A", help="recording to check (.ovd or .h5)")
    p.add_argument("b", metavar="B",
                   help="reference recording (.ovd or .h5); relative tolerance is taken of B")
    p.add_argument("--atol", type=float, default=None, metavar="X", help="absolute tolerance of floats (0)")
    p.add_argument("--rtol", type=float, default=None, metavar="Y", help="relative tolerance of floats (0)")
    p.add_argument("--nan-equal", action="store_true", default=None,
                   help="NaN equals NaN (default: a difference)")
    p.add_argument("--config", metavar="TOML", type=outputs.path_argument,
                   help="tolerance file: defaults, ignore globs, per-attribute rules")
    p.add_argument("--frames", metavar="START:STOP", type=_window_text,
                   help="compare only this window of frames (half-open); N alone is frame N")
    p.add_argument("--align", choices=("index", "time"), default="index",
                   help="match B's frames to A's by index (default) or by start timestamp")
    p.add_argument("--vehicle", metavar="NAME[=NAME_B]",
                   help="compare only this vehicle's objects (its whole name or the last part: Standard "
                        "for /World/Standard; NAME_A=NAME_B pairs two names), matched by their path "
                        "under the vehicle")
    p.add_argument("--json", metavar="OUT", type=outputs.path_argument,
                   help="write the JSON report to OUT ('-' = stdout, the text report then goes to stderr)")
    p.add_argument("--junit", metavar="OUT", type=outputs.path_argument,
                   help="write a JUnit XML report to OUT")
    p.add_argument("--plots", metavar="DIR", type=outputs.path_argument,
                   help="write PNG plots of the most diverging series into DIR")
    p.add_argument("--max-plots", type=int, default=8, metavar="N", help="number of plots (8)")
    p.add_argument("--max-report", type=int, default=20, metavar="N",
                   help="lines per section of the text report (20)")
    p.add_argument("--quiet", action="store_true", help="print only the one-line verdict")


def run(args: argparse.Namespace) -> int:
    """Run the comparison described by ``args``; returns the exit status (0, 1 or 2)."""
    try:
        return _run(args)
    except PvdError as exc:
        _error(str(exc))
    except OSError as exc:
        _error(_os_error(exc, args))
    except MemoryError:
        _error("out of memory while comparing")
    except Exception as exc:  # a bug: show it, but never as "different" (status 1) to a CI
        traceback.print_exc()
        _error(f"internal error ({type(exc).__name__}: {exc}); please report it with the traceback above")
    return 2


def _error(message: str) -> None:
    print(f"pvdkit diff: error: {' '.join(message.split())}", file=sys.stderr)


def _os_error(exc: OSError, args: argparse.Namespace) -> str:
    """One line for an I/O error, always naming a file: the one in the error, else both inputs."""
    if exc.filename:
        return f"{exc.filename}: {exc.strerror or exc}"
    return f"cannot read {args.a} or {args.b}: {exc.strerror or exc}"


def _check_arguments(args: argparse.Namespace) -> None:
    """Everything that can be checked before the (possibly long) comparison: option values,
    both inputs, and the folders of every output."""
    for name in ("max_report", "max_plots"):
        if getattr(args, name) < 0:
            raise PvdError(f"--{name.replace('_', '-')} must be >= 0")
    VehicleScope.parse(args.vehicle)
    outputs.require_input(args.a, label="A")
    outputs.require_input(args.b, label="B")
    if args.json and args.json != "-":
        outputs.check_output(args.json, "--json")
    if args.junit:
        outputs.check_output(args.junit, "--junit")
    if args.plots:
        outputs.output_folder(args.plots, "--plots", create=False)
    outputs.check_distinct({"--json": args.json, "--junit": args.junit}, {"A": args.a, "B": args.b})


def check_window(res) -> None:
    """Refuse a ``--frames`` window that starts after both recordings end: there is nothing to
    compare, and calling that "different" (or "equal") would hide a wrong window."""
    start = res.options.frames.start
    if start is not None and start >= max(res.frames_a, res.frames_b):
        raise PvdError(f"--frames {res.options.frames}: the window starts after both recordings end "
                       f"(A has {res.frames_a} frames, B {res.frames_b}; frames are numbered from 0)")


def _run(args: argparse.Namespace) -> int:
    from pvdkit.diff.engine import compare_files
    from pvdkit.diff.report import format_text, headline, to_json, write_json, write_junit
    from pvdkit.memory import avoid_huge_pages
    from pvdkit.terminal import printable, reader_gone

    _check_arguments(args)
    avoid_huge_pages()  # this process is the command's own: its memory settings are ours to set
    res = compare_files(args.a, args.b, atol=args.atol, rtol=args.rtol, nan_equal=args.nan_equal,
                        config=args.config, frames=args.frames, align=args.align, vehicle=args.vehicle,
                        plots=args.plots,
                        max_plots=args.max_plots)
    check_window(res)
    if args.json and args.json != "-":
        write_json(res, args.json, what="--json")
    if args.junit:
        write_junit(res, args.junit, what="--junit")
    try:
        text_out = sys.stdout
        if args.json == "-":
            sys.stdout.write(to_json(res))
            text_out = sys.stderr
        # Names that are no UTF-8 print escaped (\xff): a strict UTF-8 stdout cannot hold them raw.
        if args.quiet:
            text_out.write(printable(headline(res)) + "\n")
        else:
            text_out.write(printable(format_text(res, max_report=args.max_report)))
        text_out.flush()
    except BrokenPipeError:  # the reader went away (| head): the verdict is still the status
        reader_gone()
    return res.exit_status


def add_diff_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``diff`` subcommand to an argparse ``subparsers`` object; the parser's defaults
    carry ``func`` (and ``_run``, the name :mod:`pvdkit.cli` uses) = :func:`run`."""
    p = subparsers.add_parser("diff", help=HELP, description=HELP)
    configure(p)
    p.set_defaults(func=run, _run=run)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``python3 -m pvdkit.diff A B …`` without the ``pvdkit`` front end."""
    p = argparse.ArgumentParser(prog="pvdkit diff", description=HELP)
    configure(p)
    try:
        args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    return run(args)
