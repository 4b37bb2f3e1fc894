"""``pvdkit view`` and ``python -m viewer``: argument parsing only (no Qt import here).

``pvdkit`` finds the command through the ``pvdkit.commands`` entry point
``view = "viewer.cli:COMMAND"``: ``pvdkit --help`` imports this module for the help line, so it
stays import-light (Qt is imported by :mod:`viewer.app` when the command runs). The viewer's
dependencies, PySide6 and pyqtgraph, come with the ``viewer`` extra; without them ``pvdkit
view`` and ``python -m viewer`` say in one line to ``pip install 'pvdkit[viewer]'`` (exit 2).
A plain argparse program can use :func:`add_view_parser` (sets ``func``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pvdkit.lazy import LazyCommand, require_extra
from pvdkit.outputs import path_argument
from pvdkit.types import PvdError

HELP = "open recordings in the desktop viewer, or render it to an image (--screenshot)"
#: The extra that installs the viewer's dependencies, and their top-level modules.
EXTRA = "viewer"
REQUIRES = ("PySide6", "pyqtgraph")
#: ``pvdkit view`` (entry point ``viewer.cli:COMMAND``): :func:`configure` and :func:`run`.
COMMAND = LazyCommand("view", HELP, __name__, extra=EXTRA, requires=REQUIRES)


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected WIDTHxHEIGHT, e.g. 1600x1000") from None
    if not (320 <= w <= 8000 and 240 <= h <= 8000):
        raise argparse.ArgumentTypeError(f"{text!r}: width 320…8000 and height 240…8000 expected")
    return w, h


def configure(p: argparse.ArgumentParser) -> None:
    """Add the ``view`` arguments to a parser."""
    p.add_argument("files", nargs="*", metavar="FILE",
                   help=".ovd or .h5 recording(s); the second and later files are compared with the first")
    p.add_argument("--listen", metavar="[HOST:]PORT",
                   help="show PhysX's live OmniPVD stream as it arrives (PhysX connects to this address; "
                        "host 127.0.0.1 unless given)")
    p.add_argument("--save", metavar="OUT.h5|OUT.ovd", type=path_argument,
                   help="with --listen: record the stream into this file (default: a temporary file, "
                        "offered for saving on close)")
    p.add_argument("--follow", action="store_true",
                   help="follow FILE's growth although it was not modified in the last seconds "
                        "(a file being written is followed anyway)")
    p.add_argument("--compare", metavar="FILE", action="append", default=[],
                   help="recording to compare with (overlay and A − B; repeatable: B, C, D …)")
    p.add_argument("--sync", choices=("frame", "time"), default="frame",
                   help="match the comparison's frames by frame number or by simulated time (default frame)")
    p.add_argument("--screenshot", metavar="OUT.png", type=path_argument,
                   help="render the main window offscreen into this image and exit")
    p.add_argument("--object", metavar="NAME",
                   help="select this vehicle (e.g. /World/Basic), object name or handle")
    p.add_argument("--plot", action="append", default=[], metavar="CLASS.ATTRIBUTE",
                   help="plot an attribute for the selected vehicle, one curve per wheel (repeatable; "
                        "a component as TireForce.lngForce[z], RigidBodyState.pos[1], …[norm])")
    p.add_argument("--xy", nargs=2, metavar=("X", "Y"),
                   help="plot attribute Y against attribute X in the X–Y tab, per wheel of the selected "
                        "vehicle (e.g. --xy TireSlipState.lngSlip 'TireForce.lngForce[z]')")
    p.add_argument("--layout", metavar="LAYOUT.json", type=path_argument,
                   help="plots to show, from a layout file (File ▸ Save layout…) instead of the start view")
    p.add_argument("--x-axis", choices=("time", "frame"), default="time",
                   help="label the plots' x axis in seconds (default) or frame numbers")
    p.add_argument("--frame", type=int, metavar="N", help="go to frame N (negative: from the end)")
    p.add_argument("--size", type=_size, default=(1600, 1000), metavar="WxH",
                   help="window size (default 1600x1000)")
    p.add_argument("--up-axis", default="auto", metavar="AXIS",
                   help="vertical axis of the top-down view: auto (from the recording), x, y, z, -z …")


def run(args: argparse.Namespace) -> int:
    """Run ``view`` with parsed arguments; returns the exit status (PvdError for bad input)."""
    from viewer.app import ViewOptions
    from viewer.app import run as run_app

    if args.screenshot is None and (args.object or args.plot or args.frame is not None or args.layout
                                    or args.xy) and not args.files:
        raise PvdError("--object, --plot, --xy, --layout and --frame need a recording")
    if args.listen is not None:
        from pvdkit.listen import parse_address

        parse_address(args.listen)
        if args.files or args.compare:
            raise PvdError("--listen shows PhysX's live stream; open recordings with File ▸ Open instead")
        if args.screenshot:
            raise PvdError("--listen shows a live stream in a window; it cannot be combined with "
                           "--screenshot")
    if args.save is not None:
        if args.listen is None:
            raise PvdError("--save records a live stream: use it with --listen")
        from pvdkit.live import output_format
        from pvdkit.outputs import check_output

        output_format(args.save)
        check_output(args.save, "--save")
    if args.follow and not args.files:
        raise PvdError("--follow needs a recording to follow")
    if args.up_axis.lower() != "auto":
        from viewer.model.geometry import axis_from_name

        if axis_from_name(args.up_axis) is None:
            raise PvdError(f"--up-axis {args.up_axis}: expected auto, x, y, z, +x … -z")
    opts = ViewOptions(files=list(args.files), compare=args.compare, sync=args.sync,
                       screenshot=args.screenshot, object=args.object, plots=list(args.plot),
                       frame=args.frame, size=args.size, up_axis=args.up_axis, layout=args.layout,
                       x_axis=args.x_axis, listen=args.listen, save=args.save, follow=args.follow,
                       xy=tuple(args.xy) if args.xy else None)
    return run_app(opts)


def add_view_parser(subparsers) -> argparse.ArgumentParser:
    """Add ``view`` to an argparse subparsers object; the parser's ``func`` runs it."""
    p = subparsers.add_parser("view", help=HELP, description=HELP)
    configure(p)
    p.set_defaults(func=run)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m viewer [FILE ...] [options]`` — exit status 0, or 2 with a one-line error."""
    parser = argparse.ArgumentParser(prog="python -m viewer", description=HELP)
    configure(parser)
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        require_extra(EXTRA, REQUIRES, "the viewer")
        return run(args)
    except PvdError as exc:
        print(f"viewer: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
