"""The ``pvdkit`` command line: a thin layer over the library.

Commands come from three places, and the library names none of its users:

* the built-in commands of this module (``info``, ``dump``, ``series``, ``convert``) and of
  pvdkit's own packages (``diff``, imported only when used);
* **entry points** of the group :data:`ENTRY_POINT_GROUP` (``pvdkit.commands``) — how other
  packages add commands without pvdkit importing them. The simulator's ``record`` and
  ``bicycle`` and the viewer's ``view`` come this way (see ``pyproject.toml``); a package adds
  one with::

      [project.entry-points."pvdkit.commands"]
      mycommand = "mypackage.cli:COMMAND"

  The entry point names an object of the :class:`CliCommand` protocol: ``name``, ``help`` (one
  line), ``configure(parser)`` and ``run(args) -> int``; usually a
  :class:`~pvdkit.lazy.LazyCommand`, whose module (the arguments and the work) is imported
  only when that command runs, and which may name an optional extra it needs (a missing one is
  reported as ``the 'view' command needs the viewer extra: pip install 'pvdkit[viewer]'``).
  Entry points are not even looked up for a built-in command (``pvdkit info`` imports neither
  the simulator nor Qt); ``pvdkit --help`` loads each entry point's object for its help line,
  so the module holding it must stay import-light. A built-in name cannot be taken over;
* :func:`add_subcommand` at run time, from a module imported before :func:`main` runs (or
  listed in :data:`EXTENSIONS`, which :func:`main` imports) — for scripts and tests.

Exit status: 0 on success, 2 on bad input (missing, unreadable or damaged file, unknown class or
attribute, bad arguments, a missing extra) with a one-line ``pvdkit: error: …`` on stderr and no
traceback; anything else (a bug) keeps its traceback. Warnings about damaged input are printed
as one ``pvdkit: warning: …`` line each. A command about to compile kernels that are not in
numba's cache yet (a fresh install) first prints ``pvdkit: compiling kernels, first run only —
about N s`` on stderr when it is a terminal (:mod:`pvdkit.jit`).
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from pvdkit.lazy import LazyCommand
from pvdkit.outputs import path_argument, require_input
from pvdkit.terminal import READER_GONE_STATUS, ProgressBar, format_table, on_terminal, printable, reader_gone
from pvdkit.types import HDF5_SIGNATURE, Command, DataType, PvdError, PvdWarning

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = [
    "ENTRY_POINT_GROUP", "EXTENSIONS", "CliCommand", "LazyCommand", "LazySubCommand", "ProgressBar",
    "SubCommand", "add_subcommand", "build_parser", "main",
]

#: The entry-point group other distributions register ``pvdkit`` subcommands in.
ENTRY_POINT_GROUP = "pvdkit.commands"


@runtime_checkable
class CliCommand(Protocol):
    """What a ``pvdkit`` subcommand is (and what a ``pvdkit.commands`` entry point names):
    ``configure`` adds its arguments to its parser, ``run`` returns the exit status and raises
    :class:`~pvdkit.types.PvdError` for bad input (printed as one line, exit status 2)."""

    name: str
    help: str

    def configure(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


@dataclass(frozen=True)
class SubCommand:
    """A :class:`CliCommand` from two functions, for commands whose module is loaded anyway."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


#: The earlier name of :class:`~pvdkit.lazy.LazyCommand`.
LazySubCommand = LazyCommand

_REGISTRY: dict[str, CliCommand] = {}

#: Modules imported by :func:`main` before parsing; each registers subcommands at import.
EXTENSIONS: list[str] = []


def add_subcommand(command: CliCommand) -> None:
    """Register a subcommand (a later registration of the same name replaces the earlier)."""
    _REGISTRY[command.name] = command


def _entry_points() -> dict[str, EntryPoint]:
    """The ``pvdkit.commands`` entry points by name (not loaded)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)}


@dataclass(frozen=True)
class _Unavailable:
    """An entry point whose object cannot be loaded: listed, and fails in one line when used."""

    name: str
    reason: str

    @property
    def help(self) -> str:
        return f"(unavailable: {self.reason})"

    def configure(self, parser: argparse.ArgumentParser) -> None:
        raise PvdError(f"the {self.name!r} command is unavailable: {self.reason}")

    def run(self, args: argparse.Namespace) -> int:
        raise PvdError(f"the {self.name!r} command is unavailable: {self.reason}")


def _load(ep: EntryPoint) -> CliCommand:
    try:
        obj = ep.load()
    except ImportError as exc:
        return _Unavailable(ep.name, str(exc))
    if not isinstance(obj, CliCommand):
        return _Unavailable(ep.name, f"entry point {ep.value!r} is not a pvdkit command")
    return obj


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that reports usage errors as one line instead of exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(f"{self.prog}: {message}" if self.prog != "pvdkit" else message)


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command.

    Only ``selected`` (the command being run) is configured; the others get a help-only
    parser. Entry points are loaded only for the overview (``selected`` None or unknown) and
    for ``selected`` itself; for a built-in command they are not looked up at all.
    """
    for mod in EXTENSIONS:
        importlib.import_module(mod)
    parser = _Parser(
        prog="pvdkit", description="Inspect, convert and compare OmniPVD recordings (.ovd, .h5)."
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    commands: dict[str, CliCommand | None] = dict(_REGISTRY)
    if selected not in commands:
        eps = _entry_points()
        overview = selected not in eps  # no command yet, or an unknown one: every help line
        for name, ep in eps.items():
            if name not in commands:
                commands[name] = _load(ep) if overview or name == selected else None
    for name, cmd in commands.items():
        if cmd is None:  # an entry point not asked for: a name, nothing imported
            sub.add_parser(name)
            continue
        p = sub.add_parser(name, help=cmd.help, description=cmd.help)
        if name != selected:
            continue
        cmd.configure(p)
        p.set_defaults(_run=cmd.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pvdkit`` with ``argv`` (default: the process arguments); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:  # a bare ``pvdkit``: what it can do, rather than "COMMAND is required" — on
        # stdout (``pvdkit | less`` shows it), with status 2: no command ran (``--help`` is 0)
        build_parser(None).print_help(sys.stdout)
        return 2
    selected = next((a for a in argv if not a.startswith("-")), None)
    if selected is not None and any(a in ("-h", "--help") for a in argv[: argv.index(selected)]):
        selected = None  # ``pvdkit --help record``: the overview
    try:
        parser = build_parser(selected)
        args = parser.parse_args(argv)
    except _UsageError as exc:
        print(f"pvdkit: error: {exc}", file=sys.stderr)
        return 2
    except PvdError as exc:
        print(f"pvdkit: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    from pvdkit import jit

    jit.enable_notices()  # "compiling kernels, first run only" on stderr, when a command compiles
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                status = args._run(args)
            except PvdError as exc:
                _print_warnings(caught)
                print(f"pvdkit: error: {_one_line(str(exc))}", file=sys.stderr)
                return 2
            except BrokenPipeError:  # a command whose verdict is its status keeps it (diff, replay)
                reader_gone()
                return READER_GONE_STATUS
            except KeyboardInterrupt:
                print("pvdkit: interrupted", file=sys.stderr)
                return 130
            _print_warnings(caught)
    finally:
        jit.disable_notices()
    return status


class _VersionAction(argparse.Action):
    """``--version``: pvdkit's version, looked up only when asked (the package metadata costs
    ~15 ms, a tenth of a warm ``pvdkit info``)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: Any = argparse.SUPPRESS, help: str = "show pvdkit's version and exit") -> None:
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        parser._print_message(f"pvdkit {_version()}\n", sys.stdout)
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pvdkit")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown (not installed)"


def _one_line(text: str) -> str:
    """A message on one line, as a terminal shows it (control characters escaped)."""
    return printable(" ".join(text.split()), one_line=True)


def _print_warnings(caught: list[warnings.WarningMessage]) -> None:
    seen = set()
    for w in caught:
        msg = _one_line(str(w.message))
        if msg not in seen:
            seen.add(msg)
            print(f"pvdkit: warning: {msg}", file=sys.stderr)


def _open(path: str):
    from pvdkit.recording import Recording

    return Recording.open(require_input(path))


# ============================================================================================
# The first-run message
# ============================================================================================

#: Seconds a cold command compiles pvdkit's kernels (2-core x86-64, empty cache, a small file):
#: ``dump`` (the tokenizer), ``convert`` from ``.ovd`` (tokenizer, index, HDF5 writer) and from
#: ``.h5`` (the rebuild). ``info`` / ``series``: :data:`pvdkit.index.builder.COMPILE_SECONDS`.
DUMP_COMPILE_SECONDS = 2.0
CONVERT_COMPILE_SECONDS = 6.0
REBUILD_COMPILE_SECONDS = 1.0


def _notice_compile(kernels: Sequence[str], seconds: float) -> None:
    """``pvdkit: compiling kernels, first run only — about N s`` on a terminal before a command
    compiles pvdkit's ``kernels`` (names in :mod:`pvdkit.ovd.kernels` / :mod:`pvdkit.index.kernels`)
    for the first time (:func:`pvdkit.jit.notice_if_cold`)."""
    from pvdkit import jit

    if not jit.notices_enabled():
        return
    from pvdkit.index import kernels as index_kernels
    from pvdkit.ovd import kernels as ovd_kernels

    found = [getattr(ovd_kernels, k, None) or getattr(index_kernels, k) for k in kernels]
    jit.notice_if_cold(found, seconds)


# ============================================================================================
# info
# ============================================================================================


def _info_configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="an .ovd or .h5 recording")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--top", type=_count, default=10, metavar="N", help="classes listed by object count (10)")


def _count(text: str) -> int:
    """A count option: a whole number >= 0 (``--top -1`` listed nothing, silently)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {n}")
    return n


def info_dict(path: str, top: int = 10) -> dict[str, Any]:
    """What ``pvdkit info --json`` prints: version, sizes, command counts, top classes, the time
    base (duration, steps, rates) and the vehicles (name, drivetrain kind, wheel count)."""
    from pvdkit.names import find_vehicles

    with _open(path) as rec:
        counts = rec.counts()
        per_class: dict[str, int] = {}
        for o in rec.objects:
            if o.cls is not None:
                per_class[o.cls.name] = per_class.get(o.cls.name, 0) + 1
        attrs = [a for a in rec.attributes.values() if a.kind != "enum_value"]
        return {
            "file": path,
            "format": "h5" if _is_h5(path) else "ovd",
            "size_bytes": os.path.getsize(path),
            "version": ".".join(str(v) for v in rec.version),
            "classes": len(rec.classes_by_handle),
            "attributes": len(attrs),
            "enum_values": len(rec.attributes) - len(attrs),
            "objects": len(rec.objects),
            "frames": len(rec.frames),
            "commands": counts,
            "top_classes": [
                {"class": c, "objects": n}
                for c, n in sorted(per_class.items(), key=lambda kv: (-kv[1], kv[0]))[: max(top, 0)]
            ],
            "error": rec.error,
            "complete": rec.incomplete is None,
            "incomplete": rec.incomplete,
            "time": _time_dict(rec),
            "vehicles": [
                {"name": v.name, "kind": v.kind, "wheels": v.nb_wheels, "handle": v.obj.handle}
                for v in find_vehicles(rec)
            ],
        }


def _time_dict(rec: Any) -> dict[str, Any]:
    """``info``'s time section: where seconds come from (``source`` "" = unknown), what the
    timestamps count, simulated duration, steps, step length and rates."""
    tb = rec.time_base
    return {
        "source": tb.source,
        "timestamps": tb.timestamps,
        "duration_s": tb.duration,
        "steps": tb.steps,
        "step_s": tb.step_dt,
        "frames_per_step": tb.frames_per_step,
        "step_rate_hz": tb.step_rate,
        "frame_rate_hz": tb.frame_rate,
        "description": tb.description,
    }


#: Vehicles ``pvdkit info`` lists as text (``--json`` lists all).
MAX_INFO_VEHICLES = 20


def _time_line(t: dict[str, Any]) -> str:
    """``time: 8.000 s simulated, 480 steps of 16.667 ms (60 Hz), 2 frames per step (120 frames/s) …``"""
    if t["duration_s"] is None:
        return f"time: unknown — {t['description']}"
    parts = [f"time: {t['duration_s']:.3f} s simulated"]
    if t["step_s"]:
        parts.append(f"{t['steps']:,} step{'s' * (t['steps'] != 1)} of {t['step_s'] * 1e3:.3f} ms "
                     f"({t['step_rate_hz']:.4g} Hz)")
    if t["frames_per_step"]:
        per = t["frames_per_step"]
        rate = f" ({t['frame_rate_hz']:.4g} frames/s)" if t["frame_rate_hz"] else ""
        parts.append(f"{per} frame{'s' if per != 1 else ''} per step{rate}")
    return ", ".join(parts) + f"\n  {t['description']}"


def _is_h5(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(8) == HDF5_SIGNATURE
    except OSError as exc:
        raise PvdError(f"cannot read {path}: {exc.strerror or exc}") from None


def _info_run(args: argparse.Namespace) -> int:
    d = info_dict(args.file, args.top)
    out = sys.stdout
    if args.json:
        json.dump(d, out, indent=2)
        out.write("\n")
        return 0
    out.write(
        f"{d['file']}: {d['format']} recording, {d['size_bytes']:,} bytes, OmniPVD version {d['version']}\n"
    )
    out.write(
        f"  classes {d['classes']:,}, attributes {d['attributes']:,} (+{d['enum_values']:,} enum values), "
        f"objects {d['objects']:,}, frames {d['frames']:,}\n"
    )
    if d["incomplete"]:
        out.write(f"  incomplete: {_one_line(d['incomplete'])}; it holds the frames written before\n")
    elif d["error"]:
        out.write(f"  damaged: {_one_line(d['error'])}\n")
    out.write(f"  {_time_line(d['time'])}\n")
    vehicles = d["vehicles"]
    if vehicles:
        out.write(f"vehicles ({len(vehicles)}):\n")
        shown = vehicles[:MAX_INFO_VEHICLES]
        names = [printable(v["name"], one_line=True) for v in shown]
        kinds = [printable(v["kind"], one_line=True) for v in shown]
        w, kw = max(map(len, names)), max(map(len, kinds))
        for v, name, kind in zip(shown, names, kinds, strict=True):
            wheels = f"{v['wheels']} wheel{'s' if v['wheels'] != 1 else ''}"
            out.write(f"  {name:<{w}}  {kind:<{kw}}  {wheels}\n")
        if len(vehicles) > len(shown):
            out.write(f"  … and {len(vehicles) - len(shown):,} more (--json lists them all)\n")
    out.write("commands:\n")
    width = max(len(k) for k in d["commands"])
    for k, v in d["commands"].items():
        out.write(f"  {k:<{width}}  {v:>12,}\n")
    if d["top_classes"]:
        out.write("top classes by object count:\n")
        w = max(len(printable(t["class"], one_line=True)) for t in d["top_classes"])
        for t in d["top_classes"]:  # bytes that are no UTF-8, and control characters, print escaped
            out.write(f"  {printable(t['class'], one_line=True):<{w}}  {t['objects']:>8,}\n")
    return 0


# ============================================================================================
# dump
# ============================================================================================


def _dump_configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="an .ovd or .h5 recording")
    p.add_argument("--json", action="store_true", help="one JSON object per command per line (JSON Lines)")


# Command names as ``pvdkit info`` counts them (register_attribute rows split into enum / flags below).
_COMMAND_NAMES = {int(c): c.name.lower() for c in Command} | {
    int(Command.ADD_TO_UNIQUE_LIST_ATTRIBUTE): "add_to_unique_list",
    int(Command.REMOVE_FROM_UNIQUE_LIST_ATTRIBUTE): "remove_from_unique_list",
}


def iter_dump(path: str):
    """Every command of a recording in stream order as dicts (what ``pvdkit dump`` prints)."""
    from pvdkit.ovd import codec
    from pvdkit.ovd.tokenizer import iter_commands, open_ovd, tokenize

    require_input(path)
    if _is_h5(path):
        from pvdkit.h5.rebuild import h5_to_ovd_bytes

        buf = np.frombuffer(h5_to_ovd_bytes(path), np.uint8)
        table = tokenize(buf, source_name=path)
    else:
        buf, table = open_ovd(path)
    classes: dict[int, str] = {}
    attrs: dict[int, tuple[str, DataType | None]] = {}
    names: dict[int, str] = {}
    for i, cmd in enumerate(iter_commands(buf, table)):
        d: dict[str, Any] = {"index": i, "offset": int(table.offset[i]), "frame": int(table.frame[i])}
        kind = int(table.kind[i])
        d["command"] = _COMMAND_NAMES[kind]
        if kind <= Command.REMOVE_FROM_UNIQUE_LIST_ATTRIBUTE and kind >= Command.SET_ATTRIBUTE:
            leaf = attrs.get(cmd.path[-1])
            d.update(
                context=cmd.context,
                object=cmd.object,
                object_name=names.get(cmd.object, ""),
                attribute=".".join(attrs.get(h, (str(h), None))[0] for h in cmd.path),
                value=_value(cmd.data, leaf[1] if leaf else None),
            )
        elif isinstance(cmd, codec.RegisterClass):
            classes[cmd.class_handle] = cmd.name
            d.update(handle=cmd.class_handle, name=cmd.name, base=cmd.base_class)
        elif isinstance(cmd, codec.RegisterEnumValue):
            d["command"] = "register_enum"
            attrs[cmd.attribute_handle] = (cmd.name, None)
            d.update(
                cls=classes.get(cmd.class_handle, cmd.class_handle),
                handle=cmd.attribute_handle,
                name=cmd.name,
                value=cmd.value,
            )
        elif isinstance(cmd, codec.RegisterFlagsAttribute):
            d["command"] = "register_flags"
            attrs[cmd.attribute_handle] = (cmd.name, DataType.FLAGS_WORD)
            d.update(
                cls=classes.get(cmd.class_handle, cmd.class_handle),
                handle=cmd.attribute_handle,
                name=cmd.name,
                enum=classes.get(cmd.enum_class_handle, cmd.enum_class_handle),
            )
        elif isinstance(cmd, codec.RegisterAttribute):
            attrs[cmd.attribute_handle] = (cmd.name, cmd.data_type)
            d.update(
                cls=classes.get(cmd.class_handle, cmd.class_handle),
                handle=cmd.attribute_handle,
                name=cmd.name,
                type=cmd.data_type.name.lower(),
                count=cmd.nb_elements,
            )
        elif isinstance(cmd, codec.RegisterClassAttribute):
            attrs[cmd.attribute_handle] = (cmd.name, None)
            d.update(
                cls=classes.get(cmd.class_handle, cmd.class_handle),
                handle=cmd.attribute_handle,
                name=cmd.name,
                nested=classes.get(cmd.class_attribute_handle, cmd.class_attribute_handle),
            )
        elif isinstance(cmd, codec.RegisterUniqueListAttribute):
            attrs[cmd.attribute_handle] = (cmd.name, cmd.data_type)
            d.update(
                cls=classes.get(cmd.class_handle, cmd.class_handle),
                handle=cmd.attribute_handle,
                name=cmd.name,
                type=cmd.data_type.name.lower(),
            )
        elif isinstance(cmd, codec.CreateObject):
            names[cmd.object] = cmd.name
            d.update(
                context=cmd.context,
                cls=classes.get(cmd.class_handle, cmd.class_handle),
                object=cmd.object,
                name=cmd.name,
            )
        elif isinstance(cmd, codec.DestroyObject):
            d.update(context=cmd.context, object=cmd.object, object_name=names.get(cmd.object, ""))
        elif isinstance(cmd, (codec.StartFrame, codec.StopFrame)):
            d.update(context=cmd.context, timestamp=cmd.timestamp)
        elif isinstance(cmd, codec.RecordMessage):
            d.update(
                context=cmd.context,
                message=cmd.message,
                file=cmd.file,
                line=cmd.line,
                type=cmd.type,
                cls=classes.get(cmd.class_handle, cmd.class_handle),
            )
        yield d
    if table.error:
        yield {"index": len(table), "offset": table.valid_end, "command": "damage", "error": table.error}


class _Handle(int):
    """An object-handle value: hexadecimal in ``dump``'s text, as the ``object=`` column shows
    handles (JSON keeps the number)."""

    def __repr__(self) -> str:
        return hex(self)

    __str__ = __repr__


def _value(data: bytes, dt: DataType | None) -> Any:
    if dt is None:
        return data.hex()
    if dt == DataType.OBJECT_HANDLE and len(data) % 8 == 0:
        handles = [_Handle(h) for h in np.frombuffer(data, "<u8").tolist()]
        return handles[0] if len(handles) == 1 else handles
    if dt == DataType.STRING:
        return data.decode("utf-8", "surrogateescape").rstrip("\x00")
    if dt == DataType.FLAGS_WORD:
        return int.from_bytes(data, "little") if len(data) <= 8 else data.hex()
    item = dt.numpy_dtype
    if len(data) % item.itemsize:
        return data.hex()
    v = np.frombuffer(data, item).tolist()
    return v[0] if len(v) == 1 else v


def _dump_run(args: argparse.Namespace) -> int:
    _notice_compile(("scan",), DUMP_COMPILE_SECONDS)
    out = sys.stdout
    for d in iter_dump(args.file):
        if args.json:
            # ASCII escapes keep names with undecodable bytes (kept as surrogates) valid JSON
            out.write(json.dumps(d, default=_json_default) + "\n")
            continue
        head = (
            f"{d['index']:>9} {d['frame']:>6} {d['command']}"
            if "frame" in d
            else f"{d['index']:>9} {d['command']}"
        )
        rest = " ".join(
            f"{k}={_fmt(v, k)}" for k, v in d.items() if k not in ("index", "frame", "command", "offset")
        )
        out.write(f"{head} {rest}\n")
    return 0


def _fmt(v: Any, key: str) -> str:
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, int) and (key == "object" or key == "context"):
        return hex(v)
    return str(v)


def _json_default(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (set, frozenset)):
        return sorted(v)
    return str(v)


# ============================================================================================
# series
# ============================================================================================


def _series_configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="an .ovd or .h5 recording")
    p.add_argument(
        "attribute",
        metavar="CLASS.ATTRIBUTE[ELEMENT]",
        help="class name and attribute path, e.g. WheelRigidBodyState.correctedRotationSpeed; an element "
        "of a vector in brackets: TireForce.lngForce[z], TireForce.lngForce[2], TireForce.lngForce[norm]",
    )
    p.add_argument(
        "--object",
        metavar="OBJECT",
        help="only this object, or the objects of this vehicle or wheel: a name or path as series prints "
        "them (a vehicle: /World/Basic or sedan; a wheel: '/World/Basic/wheel 1' or by its side, "
        "sedan/rear-left; an object: '/World/Basic/wheel 1/TireForce'), a `pvdkit diff` label, or a handle "
        "(72 or 0x48); a name several objects share is an error that lists their paths",
    )
    p.add_argument("--csv", action="store_true", help="comma-separated values with a header row")


#: The columns of ``pvdkit series`` before the values.
SERIES_COLUMNS = ["frame", "time [s]", "timestamp", "handle", "name", "path"]


def series_rows(path: str, spec: str, obj: str | None = None) -> tuple[list[str], list[list[Any]]]:
    """Header and rows of ``pvdkit series``: :data:`SERIES_COLUMNS` (frame, simulated seconds or
    None when the recording's time base is unknown, the frame's raw timestamp, the object's
    handle, name and path), then one column per element (headers carry units,
    ``correctedRotationSpeed [rad/s]``), or just the selected element."""
    from pvdkit.names import element_title, names_of, resolve_spec
    from pvdkit.units import unit_label, unit_of

    with _open(path) as rec:
        resolved = resolve_spec(rec, spec)
        cls, attr, element, leaf = resolved.cls, resolved.attr, resolved.element, resolved.leaf
        names = names_of(rec)
        objects = names.resolve(obj, cls) if obj is not None else rec.objects_of_class(cls)
        is_list = leaf.kind == "unique_list"
        if is_list and element is not None:
            raise PvdError(f"{path}: {cls.name}.{attr} is a unique list; it has no elements to select")
        unit = unit_of(leaf.owner, leaf.name) or unit_of(cls, attr)
        refers = leaf.data_type == DataType.OBJECT_HANDLE  # shown as the objects they point to
        rows: list[tuple[int, int, list[Any]]] = []
        width = 0
        for k, o in enumerate(objects):
            s = rec.series(o, attr)
            if not len(s):
                _warn_other_family(rec, o, attr, s, is_list, path)
                continue
            who = [o.handle, o.name, names.path(o)]
            if is_list:
                items = s.items
                for i in range(len(s)):
                    it = items[i]
                    it = it.item() if isinstance(it, np.generic) else it
                    if refers:
                        it = _reference(rec, names, it, int(s.frames[i]))
                    rows.append((int(s.frames[i]), k, [*who, "add" if s.added[i] else "remove", it]))
                continue
            vals = s.values
            for i in range(len(s)):
                cells = _cells(vals[i])
                if refers:
                    cells = [_reference(rec, names, c, int(s.frames[i])) for c in cells]
                width = max(width, len(cells))
                rows.append((int(s.frames[i]), k, [*who, *cells]))
        rows.sort(key=lambda r: (r[0], r[1]))
        if is_list:
            header = [*SERIES_COLUMNS, "op", attr]
        elif element is not None:
            header = [*SERIES_COLUMNS, unit_label(element_title(attr, element, width), unit)]
            for _, _, cells in rows:
                cells[3:] = [_element(cells[3:], element, f"{path}: {cls.name}.{attr}", width)]
        elif width <= 1 and leaf.count <= 1:
            header = [*SERIES_COLUMNS, unit_label(attr, unit)]
        else:
            header = [*SERIES_COLUMNS, *(unit_label(f"{attr}[{j}]", unit) for j in range(width))]
        # A value column named like one of the others (Simulation.time's "time [s]") is named
        # with its class: two equal column names are one to a CSV reader (pandas: "time [s].1").
        header[len(SERIES_COLUMNS):] = [f"{cls.name}.{h}" if h in SERIES_COLUMNS else h
                                        for h in header[len(SERIES_COLUMNS):]]
        tb = rec.time_base
        frames_t = rec.frames
        out = []
        for f, _, cells in rows:
            t = int(frames_t.start[f]) if 0 <= f < len(frames_t) else None
            out.append([f, tb.seconds_of(f) if tb.known else None, t, *cells])
        return header, out


def _reference(rec: Any, names: Any, handle: Any, frame: int) -> Any:
    """An object-handle value as ``pvdkit series`` shows it: the path of the object it points to
    at that frame (``/World/Basic/DirectDriveCommandState``), ``null`` for 0, the handle in hex
    when it names no recorded object (a pointer, meaningless as a number)."""
    if not isinstance(handle, int):
        return handle
    if handle == 0:
        return "null"
    target = rec.resolve(handle, frame)
    return names.path(target) if target is not None else hex(handle)


def _warn_other_family(rec: Any, obj: Any, attr: str, empty: Any, is_list: bool, path: str) -> None:
    """Say so when ``obj``'s commands on ``attr`` are of the other kind than its registration
    (SET_ATTRIBUTE on a unique list, ADD/REMOVE on a plain attribute): a stream that breaks its
    own registration. They are kept (``pvdkit dump`` lists them) but are no samples of the series."""
    other = [x for x in rec.all_series(obj) if x.name == attr and x.family != empty.family and len(x)]
    if other:
        n = sum(len(x) for x in other)
        wrong = "set_attribute" if is_list else "add/remove_from_unique_list"
        registered = "a unique-list attribute" if is_list else "a plain attribute"
        who = obj.name or hex(obj.handle)
        text = (f"{path}: {who}.{attr} is {registered}, but the stream sends it {n} {wrong} "
                f"command{'s' * (n != 1)}: not shown here (`pvdkit dump` lists them)")
        warnings.warn(PvdWarning(text), stacklevel=2)


def _element(cells: list[Any], element: int | str, what: str, width: int) -> Any:
    """The selected element of one sample (None where a shorter sample lacks it); the norm of
    a numeric vector. :class:`PvdError` for an element no sample has, or the norm of non-numbers."""
    if element == "norm":  # pvdkit.names.NORM
        if not all(isinstance(c, (int, float, np.floating)) and not isinstance(c, bool) for c in cells):
            raise PvdError(f"{what} is not numeric; it has no norm")
        return float(np.sqrt(sum(float(c) * float(c) for c in cells)))
    from pvdkit.names import check_element

    i = int(element)
    check_element(what, i, width)
    return cells[i] if i < len(cells) else None


def _cells(v: Any) -> list[Any]:
    """One sample's cells. float32 values stay numpy float32, so that the table prints them as
    the shortest text that reads back to the same float32 (``2138.8843``; CSV writes them in full)."""
    if isinstance(v, np.ndarray):
        if v.dtype == np.float32:
            return list(v.reshape(-1))
        return [x.item() for x in v.reshape(-1)]
    if isinstance(v, np.float32):
        return [v]
    if isinstance(v, np.generic):
        return [v.item()]
    if isinstance(v, (set, frozenset)):
        return ["|".join(sorted(v))]
    return [v]


def _series_run(args: argparse.Namespace) -> int:
    header, rows = series_rows(args.file, args.attribute, args.object)
    out = sys.stdout
    if args.csv:
        w = csv.writer(out, lineterminator="\n")
        w.writerow(header)
        for r in rows:
            w.writerow(["" if c is None else _csv_cell(c, j) for j, c in enumerate(r)])
        return 0
    cells = [[("-" if c is None else _text_cell(c, j)) for j, c in enumerate(r)] for r in rows]
    for line in format_table(header, cells):
        out.write(line + "\n")
    return 0


def _csv_cell(c: Any, col: int = -1) -> Any:
    if isinstance(c, str):
        return printable(c)  # the csv module quotes newlines; control characters are escaped
    if col == 3 and isinstance(c, int):  # the handle, as the table, the viewer and --object show it
        return hex(c)
    if isinstance(c, np.floating):  # in full: a float64 reader gets the recorded float32 exactly
        return repr(float(c))
    return repr(c) if isinstance(c, float) else c


def _text_cell(c: Any, col: int) -> str:
    if col == 1 and isinstance(c, float):  # seconds: microseconds resolve PhysX's and simcore's steps
        return f"{c:.6f}" if abs(c) < 1e9 else f"{c:.6g}"  # (a hostile clock: no 300-digit column)
    if col == 3 and isinstance(c, int):  # the handle
        return hex(c)
    if isinstance(c, float):
        return f"{c:.9g}"
    if isinstance(c, np.floating):
        return str(c)
    return printable(str(c), one_line=True)


# ============================================================================================
# convert
# ============================================================================================

#: Inputs at least this large get a progress bar on stderr.
PROGRESS_MIN_BYTES = 16 << 20


def _convert_configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", help="an .ovd or .h5 recording")
    p.add_argument("output", type=path_argument,
                   help="destination; the format follows its extension (.ovd, .h5, .hdf5)")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"show a progress bar on stderr (default: on a terminal, for inputs over "
        f"{PROGRESS_MIN_BYTES >> 20} MB)",
    )


def _convert_run(args: argparse.Namespace) -> int:
    from pvdkit.convert import convert

    src = require_input(args.input)
    if _is_h5(src):
        _notice_compile(("emit_commands",), REBUILD_COMPILE_SECONDS)
    else:
        _notice_compile(("scan", "index_rows"), CONVERT_COMPILE_SECONDS)
    show = args.progress if args.progress is not None else (os.path.getsize(src) >= PROGRESS_MIN_BYTES
                                                            and on_terminal())
    bar = ProgressBar(f"converting {os.path.basename(src)}") if show else None
    try:
        convert(src, args.output, progress=bar)
    finally:
        if bar is not None:
            bar.done()
    print(f"{src} -> {args.output} ({os.path.getsize(args.output):,} bytes)", file=sys.stderr)
    return 0


add_subcommand(
    SubCommand(
        "info",
        "format version, sizes, simulated time, vehicles, command counts and top classes of a recording",
        _info_configure,
        _info_run,
    )
)
add_subcommand(
    SubCommand("dump", "every command of a recording in order, human readable", _dump_configure, _dump_run)
)
add_subcommand(
    SubCommand(
        "series",
        "the time series of one attribute (all objects of a class, or one)",
        _series_configure,
        _series_run,
    )
)
add_subcommand(
    SubCommand(
        "convert",
        "convert between .ovd and .h5 (by the output's extension)",
        _convert_configure,
        _convert_run,
    )
)


# pvdkit's own command of a later layer, imported only when used. Commands of other packages
# (record, bicycle, view) are entry points (see the module docstring).
add_subcommand(
    LazyCommand(
        "diff",
        "compare two recordings semantically (objects by identity, values with tolerances)",
        "pvdkit.diff.cli",
    )
)
add_subcommand(
    LazyCommand(
        "listen",
        "record PhysX's live OmniPVD stream from a TCP connection into .h5 or .ovd",
        "pvdkit.listen",
    )
)


if __name__ == "__main__":
    sys.exit(main())
