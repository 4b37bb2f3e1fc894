"""``pvdkit bicycle``: handling analysis of the linear bicycle model, plots and a PVD recording.

Thin layer over :mod:`simcore.bicycle`: parse the seven parameters (defaults: a mid-size car, see
:data:`simcore.bicycle.params.DEFAULT_BICYCLE`), call :func:`simcore.bicycle.analyse`, print the
report or JSON, optionally write PNG plots and record a steer-step response (``.ovd`` or ``.h5``).

``pvdkit`` finds the command through the ``pvdkit.commands`` entry point
``bicycle = "simcore.cli:BICYCLE"`` (see :mod:`simcore.cli`) and imports this module only when
it runs; a plain argparse program can call :func:`add_bicycle_parser` instead.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, TextIO

from pvdkit import outputs
from pvdkit.types import PvdError
from simcore.cli import BICYCLE_HELP
from simcore.limits import MAX_BODY_SPEED, MAX_DT, MAX_STEPS, MIN_DT

#: One-line help of the subcommand (the entry point's, :data:`simcore.cli.BICYCLE_HELP`).
HELP = BICYCLE_HELP

_PARAMS = (
    ("m", "mass", "KG", "vehicle mass"),
    ("iz", "iz", "KGM2", "yaw moment of inertia"),
    ("lf", "lf", "M", "centre of mass to front axle"),
    ("lr", "lr", "M", "centre of mass to rear axle"),
    ("cf", "cf", "N_PER_RAD", "front axle cornering stiffness (both tires)"),
    ("cr", "cr", "N_PER_RAD", "rear axle cornering stiffness (both tires)"),
    ("speed", "speed", "M_S", "forward speed"),
)
#: The range (and unit) each parameter may take on the command line: from a model car to a
#: road train, with margin; the fastest speed is the simulation's divergence bound. Beyond them
#: the closed forms overflow or divide by (nearly) zero: the equations divide by m, I_z and V
#: (``--speed 1e-320`` divided by zero), and below 0.1 m/s a linear tire model means nothing
#: (its slip angles are lateral velocity / V).
_RANGES = {
    "m": (0.1, 1e6, "kg"),
    "iz": (1e-3, 1e8, "kg m^2"),
    "lf": (1e-2, 100.0, "m"),
    "lr": (1e-2, 100.0, "m"),
    "cf": (1.0, 1e8, "N/rad"),
    "cr": (1.0, 1e8, "N/rad"),
    "speed": (0.1, MAX_BODY_SPEED, "m/s"),
}
#: Largest steer step of a recording (degrees either way): the road wheels at right angles.
MAX_STEER_DEG = 90.0


def configure(p: argparse.ArgumentParser) -> None:
    """Add ``pvdkit bicycle``'s arguments to its parser."""
    from simcore.bicycle.params import DEFAULT_BICYCLE

    p.description = (
        "Analyse the linear 2-DOF bicycle model (sideslip and yaw rate): understeer gradient K, "
        "characteristic speed (K > 0) or critical speed (K < 0), steady-state gains, the yaw-rate "
        "transfer function with its poles, natural frequency and damping, and the step response.")
    for opt, field, metavar, text in _PARAMS:
        default = getattr(DEFAULT_BICYCLE, field)
        p.add_argument(f"--{opt}", type=float, default=default, metavar=metavar,
                       help=f"{text} (default {default:g})")
    p.add_argument("--json", action="store_true", help="print the parameters and the analysis as JSON")
    p.add_argument("--plots", default=None, metavar="DIR", type=outputs.path_argument,
                   help="write PNG plots into DIR")
    p.add_argument("--record", default=None, metavar="OUT", type=outputs.path_argument,
                   help="record a steer-step response through PVD into OUT (.ovd or .h5)")
    p.add_argument("--steer", type=float, default=None, metavar="DEG",
                   help=f"steer step of the recording, degrees (default {_RECORDING['steer']:g})")
    p.add_argument("--duration", type=float, default=None, metavar="S",
                   help=f"simulated seconds of the recording (default {_RECORDING['duration']:g})")
    p.add_argument("--dt", type=float, default=None, metavar="S",
                   help=f"recording time step (default {_RECORDING['dt']:g})")


#: What ``--steer``, ``--duration`` and ``--dt`` are when not given; they shape ``--record`` only.
_RECORDING = {"steer": 1.0, "duration": 3.0, "dt": 0.01}


def add_bicycle_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``bicycle`` subcommand to an argparse subparsers object (``run`` is set as the
    parser's ``_run`` default, as :func:`pvdkit.cli.build_parser` does)."""
    p = subparsers.add_parser("bicycle", help=HELP, description=HELP)
    configure(p)
    p.set_defaults(_run=run)
    return p


def analysis_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~simcore.bicycle.analysis.BicycleAnalysis` of the parsed parameters; bad values
    raise :class:`~pvdkit.types.PvdError` naming the option."""
    from simcore.bicycle import BicycleParams, analyse

    values = {field: getattr(args, opt) for opt, field, _, _ in _PARAMS}
    for opt, field, _, _ in _PARAMS:
        v = values[field]
        lo, hi, unit = _RANGES[opt]
        if not (math.isfinite(v) and lo <= v <= hi):
            raise PvdError(f"bicycle: --{opt} must be a finite number in [{lo:g}, {hi:g}] {unit}, got {v!r}")
    return analyse(BicycleParams(**values))


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run ``pvdkit bicycle``: print the analysis (text or JSON), write plots / recording if asked."""
    out = out if out is not None else sys.stdout
    analysis = analysis_from_args(args)
    _check_outputs(args)
    notes: list[str] = []
    if args.plots:
        from simcore.bicycle.plots import write_plots

        paths = write_plots(analysis.params, outputs.output_folder(args.plots, "--plots"))
        notes.append(f"plots: {', '.join(str(p) for p in paths)}")
    if args.record:
        notes.append(_record(analysis.params, args))
    if args.json:
        json.dump(analysis.to_dict(), out, indent=2, allow_nan=False)
        out.write("\n")
        for n in notes:
            print(n, file=sys.stderr)
    else:
        out.write(analysis.format() + "\n")
        for n in notes:
            out.write(n + "\n")
    return 0


def _check_outputs(args: argparse.Namespace) -> None:
    """Check every output and the recording's time arguments before writing anything (options
    of the recording without ``--record`` would be ignored: refused)."""
    given = [f"--{k}" for k in _RECORDING if getattr(args, k) is not None]
    if given and not args.record:
        raise PvdError(f"bicycle: {', '.join(given)} shape{'s' if len(given) == 1 else ''} the recording; "
                       "add --record OUT.ovd|OUT.h5")
    for k, default in _RECORDING.items():
        if getattr(args, k) is None:
            setattr(args, k, default)
    if args.plots:
        outputs.output_folder(args.plots, "--plots", create=False)
    if args.record:
        outputs.check_output(args.record, "--record")
        if not (math.isfinite(args.steer) and abs(args.steer) <= MAX_STEER_DEG):
            raise PvdError(f"bicycle: --steer must be a finite angle in [-{MAX_STEER_DEG:g}, "
                           f"{MAX_STEER_DEG:g}] degrees, got {args.steer!r}")
        for opt, v, lo, hi in (("--dt", args.dt, MIN_DT, MAX_DT),
                               ("--duration", args.duration, args.dt, MAX_STEPS * args.dt)):
            if not (math.isfinite(v) and lo <= v <= hi):
                raise PvdError(f"bicycle: {opt} must be a number of seconds in [{lo:g}, {hi:g}], got {v!r}"
                               + (f" (at most {MAX_STEPS:,} steps of --dt)" if opt == "--duration" else ""))


def _record(params: Any, args: argparse.Namespace) -> str:
    from pathlib import Path

    from simcore.bicycle.pvd import record_bicycle
    from simcore.cli.record import RecordError, open_writer

    path = Path(args.record)
    try:
        writer = open_writer(path, "pvdkit bicycle")
    except (RecordError, OSError) as exc:
        raise PvdError(f"bicycle: {exc}") from None
    _, recorder = record_bicycle(writer, params, math.radians(args.steer), args.duration, args.dt)
    return (f"recorded {recorder.frames} frames ({args.steer:g} deg steer step, {args.duration:g} s) "
            f"-> {path}")
