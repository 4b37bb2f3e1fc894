"""``pvdkit replay``: re-simulate a PhysX recording in simcore and report where the two part.

Exit status: 0 when every judged quantity of every vehicle is within ``--tolerance`` (relative
RMS), 1 otherwise, 2 on a usage or input error (one line naming the file and what was expected).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from contextlib import ExitStack, nullcontext
from pathlib import Path

from pvdkit.outputs import check_distinct, check_output, path_argument, require_input
from pvdkit.terminal import ProgressBar, on_terminal, reader_gone
from pvdkit.types import PvdError
from simcore.replay.engine import MODES, build, replay, with_scene_overrides
from simcore.replay.recorded import RecordingError, vehicles_from_recording
from simcore.replay.report import DEFAULT_TOLERANCE, build_report

#: Tolerances and ignores for ``pvdkit diff`` of a PhysX recording against its replay.
DIFF_CONFIG = Path(__file__).resolve().parents[1] / "replay" / "physx_diff.toml"


def diff_window(from_step: int, steps: int) -> str:
    """The ``pvdkit diff`` options that pair a replay's frames with the recording's: PhysX's
    frames 2S, 2S + 1 hold step S, and its recording ends with one frame more, left open. The
    window starts after the first replayed frame: PhysX's holds what it wrote creating the
    scene (the actors' first poses), which the replay takes as its start instead of writing.
    From step 0 the frames match by index; from a later step by timestamp (the replay continues
    PhysX's frame counter)."""
    first = 2 * from_step
    window = f"--frames {first + 1}:{first + 2 * steps}"
    return window if from_step == 0 else f"--align time {window}"


def configure(p: argparse.ArgumentParser) -> None:
    """Add ``pvdkit replay``'s arguments to its parser."""
    p.description = (
        "Rebuild every Vehicle2 vehicle of a PhysX OmniPVD recording in simcore (PhysX actor layer on), "
        "drive it with the recorded commands and report, per vehicle and quantity, where simcore and "
        "PhysX agree and where they part. Exit 0 within --tolerance, 1 over it, 2 on error.")
    p.add_argument("recording", metavar="REC", help="a PhysX recording (.ovd or .h5)")
    p.add_argument("-o", "--output", default=None, metavar="OUT", type=path_argument,
                   help="also record the replay (.h5 or .ovd, PhysX's layout: pvdkit diff REC OUT works)")
    p.add_argument("--mode", choices=MODES, default="open-loop",
                   help="open-loop: only the recorded commands drive simcore (default); one-step: simcore's "
                        "state is set to the recorded one before every step")
    p.add_argument("--vehicle", action="append", default=None, metavar="NAME",
                   help="replay only this vehicle (its recorded name, e.g. /World/Standard or Standard); "
                        "repeatable")
    p.add_argument("--from", dest="from_step", type=int, default=0, metavar="STEP",
                   help="start at this recorded step (default 0)")
    p.add_argument("--gravity", default=None, metavar="X,Y,Z",
                   help="replace the recorded gravity (PxScene.gravity), a world vector in m/s^2")
    p.add_argument("--friction", type=float, default=None, metavar="MU",
                   help="replace the recorded ground friction (PhysXMaterialFriction)")
    p.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE, metavar="REL",
                   help=f"relative RMS error allowed per quantity (default {DEFAULT_TOLERANCE:g})")
    p.add_argument("--report", default=None, metavar="REPORT.json", type=path_argument,
                   help="write the report as JSON")
    p.add_argument("--html", default=None, metavar="REPORT.html", type=path_argument,
                   help="write the report as HTML")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    """Run ``pvdkit replay``; user errors become one line (exit 2), a bug keeps its traceback."""
    path = require_input(args.recording, "a PhysX recording (.ovd or .h5)")
    if not args.tolerance > 0:
        raise PvdError(f"replay: --tolerance must be > 0, got {args.tolerance!r}")
    for opt, out in (("-o", args.output), ("--report", args.report), ("--html", args.html)):
        if out is not None:  # before the run: a folder, a device or a missing folder is one line
            check_output(out, f"replay: {opt}")
    try:  # writing one would replace the recording read, or another output
        check_distinct({"-o": args.output, "--report": args.report, "--html": args.html}, {"recording": path})
    except PvdError as exc:
        raise PvdError(f"replay: {exc}") from None
    if args.output is not None and Path(args.output).suffix.lower() not in (".h5", ".ovd"):
        raise PvdError(f"replay: -o {args.output!r}: the file name must end in .ovd or .h5")
    start = time.perf_counter()
    try:
        run_data = vehicles_from_recording(path, args.vehicle)
        gravity = None
        if args.gravity is not None:
            try:
                gravity = [float(x) for x in args.gravity.split(",")]
            except ValueError:
                raise PvdError(f"replay: --gravity must be three numbers X,Y,Z, got {args.gravity!r}") \
                    from None
        run_data = with_scene_overrides(run_data, gravity, args.friction)
        vehicles = build(run_data, args.vehicle)
        steps = run_data.scene.nb_steps - args.from_step
        show = not args.quiet and on_terminal()
        bar = ProgressBar(width=30, unit="steps", min_interval=0.1) if show else None
        with ExitStack() as stack:
            recorder = None
            if args.output is not None:
                from simcore.cli.record import open_writer
                from simcore.pvd.recorder import PvdRecorder

                writer = open_writer(Path(args.output), f"pvdkit replay {Path(args.recording).name}")
                # PhysX writes two frames per step, counted from 1: step S starts at frame 2S + 1.
                recorder = stack.enter_context(PvdRecorder(writer, timestamps="frame",
                                                           actor_order=run_data.scene.actor_order,
                                                           first_frame=2 * args.from_step + 1))
                for rep in vehicles:
                    recorder.attach_fleet(rep.fleet)

            def after(step: int, _: object) -> None:
                if bar is not None:
                    bar(step - args.from_step + 1, steps)

            around = recorder.frame if recorder is not None else nullcontext
            replayed = replay(run_data, args.mode, args.from_step, args.vehicle, after_step=after,
                              vehicles=vehicles, around_step=around)
    except RecordingError as exc:
        raise PvdError(f"replay: {exc}") from None
    wall = time.perf_counter() - start
    report = build_report(str(args.recording), args.mode, args.from_step, replayed, args.tolerance)
    if args.report:
        report.write_json(args.report)
    if args.html:
        report.write_html(args.html)
    status = 0 if report.ok else 1
    try:
        print(report.text())
        if args.output is not None:
            command = (f"pvdkit diff {shlex.quote(str(args.recording))} {shlex.quote(str(args.output))} "
                       f"{diff_window(args.from_step, steps)} --config {shlex.quote(str(DIFF_CONFIG))}")
            if run_data.every_vehicle:
                print(f"compare frame by frame: {command}")
            else:  # one vehicle at a time: a whole diff would list the others as missing
                for v in replayed:
                    print(f"compare frame by frame: {command} --vehicle {shlex.quote(v.name)}")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (| head): the verdict is still the status
        reader_gone()
    n = len(replayed)
    print(f"{steps} step{'s' if steps != 1 else ''} x {n} vehicle{'s' if n != 1 else ''} in {wall:.2f} s "
          f"({1e3 * wall / max(steps, 1):.2f} ms per recorded step)", file=sys.stderr)
    return status
