"""The simulator's ``pvdkit`` commands: ``pvdkit record``, ``bicycle``, ``replay`` and ``sweep``.

Why here and not in pvdkit: pvdkit is the format library and names none of its users; the
commands that need the simulator live with it and reach ``pvdkit``'s command line through the
``pvdkit.commands`` entry points in ``pyproject.toml`` (``record = "simcore.cli:RECORD"``).

This module only *describes* the commands (name, one-line help, module): ``pvdkit --help``
imports it for the help lines, so it must stay import-light. The arguments and the work are in
:mod:`simcore.cli.record` and :mod:`simcore.cli.bicycle`, imported when the command runs.
"""

from __future__ import annotations

from pvdkit.lazy import LazyCommand

__all__ = ["BICYCLE", "BICYCLE_HELP", "RECORD", "RECORD_HELP", "REPLAY", "REPLAY_HELP", "SWEEP", "SWEEP_HELP"]

#: One-line help of ``pvdkit record``.
RECORD_HELP = "simulate a vehicle through a driving scenario and record it (.ovd or .h5)"
#: One-line help of ``pvdkit bicycle``.
BICYCLE_HELP = "linear bicycle model: understeer gradient, characteristic/critical speed, yaw-rate response"

#: ``pvdkit record`` (entry point ``simcore.cli:RECORD``).
RECORD = LazyCommand("record", RECORD_HELP, "simcore.cli.record")
#: ``pvdkit bicycle`` (entry point ``simcore.cli:BICYCLE``).
BICYCLE = LazyCommand("bicycle", BICYCLE_HELP, "simcore.cli.bicycle")

#: One-line help of ``pvdkit replay``.
REPLAY_HELP = "re-simulate a PhysX recording in simcore and report where the two part"
#: ``pvdkit replay`` (entry point ``simcore.cli:REPLAY``).
REPLAY = LazyCommand("replay", REPLAY_HELP, "simcore.cli.replay")

#: One-line help of ``pvdkit sweep``.
SWEEP_HELP = "parameter sweep on Dask: every run recorded and scored, one summary table against a baseline"
#: ``pvdkit sweep`` (entry point ``simcore.cli:SWEEP``); Dask, pandas and pyarrow are its extra.
SWEEP = LazyCommand("sweep", SWEEP_HELP, "simcore.cli.sweep", extra="sweep",
                    requires=("dask", "distributed", "pandas", "pyarrow"))
