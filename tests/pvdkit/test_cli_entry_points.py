"""Commands of other packages reach ``pvdkit`` through the ``pvdkit.commands`` entry points;
pvdkit imports none of them, and a command whose extra is missing says which one to install."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import textwrap
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from pvdkit import cli
from pvdkit.lazy import LazyCommand, import_module, lazy_attributes, missing_extra_message
from pvdkit.types import PvdError

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "data" / "vehicles_short.ovd"
VIEW_EXTRA_LINE = "pvdkit: error: the 'view' command needs the viewer extra: pip install 'pvdkit[viewer]'\n"

# A blocker for Qt, as if the viewer extra were not installed (prepended to a child's code).
NO_QT = textwrap.dedent("""
    import sys
    class _NoQt:
        def find_spec(self, name, path=None, target=None):
            if name.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph'):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None
    sys.meta_path.insert(0, _NoQt())
""")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def child(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


# ------------------------------------------------------------------------------ the real ones


def test_the_applications_commands_are_entry_points():
    eps = cli._entry_points()
    assert {n: eps[n].value for n in ("record", "bicycle", "view")} == {
        "record": "simcore.cli:RECORD", "bicycle": "simcore.cli:BICYCLE", "view": "viewer.cli:COMMAND"}
    for name in ("record", "bicycle", "view"):
        command = eps[name].load()
        assert isinstance(command, cli.CliCommand) and command.name == name and "\n" not in command.help


def test_help_lists_every_command_with_its_line_without_importing_the_applications():
    code = ("import sys; from pvdkit.cli import main; status = main(['--help']); "
            "print('MODULES', sorted(m for m in sys.modules if m.split('.')[0] in "
            "('simcore', 'viewer', 'PySide6', 'shiboken6', 'pyqtgraph', 'numba'))); sys.exit(status)")
    done = child(code)
    assert done.returncode == 0, done.stderr
    help_text, modules = done.stdout.split("MODULES")
    for name in ("info", "dump", "series", "convert", "diff", "record", "bicycle", "view"):
        assert re.search(rf"^\s+{name}\s+\S", help_text, re.M), (name, help_text)
    assert "simulate a vehicle through a driving scenario" in help_text
    assert "open recordings in the desktop viewer" in help_text
    # Only the import-light modules that describe the commands.
    assert eval(modules) == ["simcore", "simcore.cli", "viewer", "viewer.cli"]


@pytest.mark.parametrize("argv", [["info", str(FIXTURE)], ["series", str(FIXTURE), "WheelParams.radius"],
                                  ["diff", str(FIXTURE), str(FIXTURE)]])
def test_pvdkit_own_commands_never_import_the_applications(argv):
    code = ("import sys; from pvdkit.cli import main; status = main(sys.argv[1:]); "
            "print('MODULES', sorted(m for m in sys.modules if m.split('.')[0] in "
            "('simcore', 'viewer', 'PySide6', 'shiboken6', 'pyqtgraph'))); sys.exit(status)")
    done = child(code, *argv)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("MODULES")[-1].strip() == "[]"


def test_pvdkit_names_none_of_its_users():
    """No module of the pvdkit package imports simcore or viewer, not even by a dotted name in a
    string (a lazy import)."""
    pattern = re.compile(r"^\s*(import|from)\s+(simcore|viewer)\b|[\"'](simcore|viewer)(\.\w+)*[\"':]", re.M)
    hits = [f"{p.relative_to(ROOT)}: {m.group(0).strip()}" for p in sorted((ROOT / "pvdkit").rglob("*.py"))
            for m in pattern.finditer(p.read_text(encoding="utf-8"))]
    assert hits == []


# ----------------------------------------------------------------------- missing extras


def test_view_without_qt_names_the_extra_in_one_line():
    code = NO_QT + "from pvdkit.cli import main; sys.exit(main(sys.argv[1:]))"
    done = child(code, "view", "x.ovd")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == VIEW_EXTRA_LINE
    done = child(code, "view", "--help")  # the arguments are described without Qt
    assert done.returncode == 0 and "--screenshot" in done.stdout, done.stderr


def test_python_m_viewer_without_qt_names_the_extra_in_one_line():
    done = child(NO_QT + "from viewer.cli import main; sys.exit(main(sys.argv[1:]))", "x.ovd")
    assert done.returncode == 2
    assert done.stderr == "viewer: error: the viewer needs the viewer extra: pip install 'pvdkit[viewer]'\n"


@pytest.mark.parametrize("top_level_import", [True, False])
def test_a_lazy_command_names_its_missing_extra(capsys, monkeypatch, tmp_path, top_level_import):
    """Whether the command's module needs the extra at import (its arguments need it) or only
    when it runs, the answer is the same line."""
    body = "def configure(p): pass\ndef run(a):\n    import pvdkit_no_such_gl\n    return 0\n"
    (tmp_path / "pvdkit_test_gl_cmd.py").write_text(("import pvdkit_no_such_gl\n" if top_level_import
                                                     else "") + body)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "pvdkit_test_gl_cmd", raising=False)
    monkeypatch.setattr(cli, "_REGISTRY", dict(cli._REGISTRY))
    cli.add_subcommand(LazyCommand("plot3d", "a command of an extra", "pvdkit_test_gl_cmd",
                                   extra="plot3d", requires=("pvdkit_no_such_gl",)))
    status, out, err = run(capsys, "plot3d")
    assert (status, out) == (2, "")
    assert err == ("pvdkit: error: the 'plot3d' command needs the plot3d extra: "
                   "pip install 'pvdkit[plot3d]'\n")


def test_import_module_names_the_extra_only_for_its_own_modules(tmp_path, monkeypatch):
    (tmp_path / "pvdkit_test_uses_gl.py").write_text("import pvdkit_no_such_gl\n")
    (tmp_path / "pvdkit_test_has_a_bug.py").write_text("import pvdkit_no_such_helper\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PvdError, match=re.escape(missing_extra_message("plotting", "gl"))):
        import_module("pvdkit_test_uses_gl", extra="gl", modules=("pvdkit_no_such_gl",), what="plotting")
    # A missing module the extra does not declare is a bug: the ImportError goes through.
    with pytest.raises(ModuleNotFoundError, match="pvdkit_no_such_helper"):
        import_module("pvdkit_test_has_a_bug", extra="gl", modules=("pvdkit_no_such_gl",))


def test_a_broken_import_inside_a_command_keeps_its_traceback(tmp_path, monkeypatch, capsys):
    (tmp_path / "pvdkit_test_broken_cmd.py").write_text(
        "import pvdkit_no_such_helper\ndef configure(p): pass\ndef run(a): return 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cli, "_REGISTRY", dict(cli._REGISTRY))
    cli.add_subcommand(LazyCommand("broken", "a command with a bug", "pvdkit_test_broken_cmd"))
    with pytest.raises(ModuleNotFoundError, match="pvdkit_no_such_helper"):
        cli.main(["broken"])


def test_lazy_attributes_load_on_first_use_and_stay(monkeypatch):
    module = type(sys)("pvdkit_test_lazy_pkg")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    getter = lazy_attributes(module.__name__, {"dedent": "textwrap"})
    assert getter("dedent") is textwrap.dedent and module.dedent is textwrap.dedent
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        getter("nope")


# ------------------------------------------------------------------- discovery mechanics


def _hello_configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("name")


def _hello_run(args: argparse.Namespace) -> int:
    print(f"hello {args.name}")
    return 0


#: What a test entry point names.
HELLO = cli.SubCommand("hello", "say hello", _hello_configure, _hello_run)
NOT_A_COMMAND = object()
STEALS_INFO = cli.SubCommand("info", "not the real info", _hello_configure, _hello_run)


def _ep(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group=cli.ENTRY_POINT_GROUP)


@pytest.fixture()
def fake_entry_points(monkeypatch):
    here = __name__
    eps = {
        "hello": _ep("hello", f"{here}:HELLO"),
        "ghost": _ep("ghost", "pvdkit_no_such_package.cli:COMMAND"),
        "odd": _ep("odd", f"{here}:NOT_A_COMMAND"),
        "info": _ep("info", f"{here}:STEALS_INFO"),
    }
    monkeypatch.setattr(cli, "_entry_points", lambda: dict(sorted(eps.items())))
    return eps


def test_an_entry_point_command_runs_and_is_listed(capsys, fake_entry_points):
    assert run(capsys, "hello", "pvd") == (0, "hello pvd\n", "")
    status, out, _ = run(capsys, "--help")
    assert status == 0 and re.search(r"^\s+hello\s+say hello$", out, re.M)
    assert re.search(r"^\s+info\s+format version, sizes", out, re.M)  # a built-in is never taken over
    assert re.search(r"^\s+ghost\s+\(unavailable: No module named 'pvdkit_no_such_package'\)", out, re.M)


def test_a_builtin_command_never_looks_up_entry_points(capsys, monkeypatch):
    def fail() -> None:
        raise AssertionError("entry points looked up for a built-in command")

    monkeypatch.setattr(cli, "_entry_points", fail)
    status, out, _ = run(capsys, "info", str(FIXTURE))
    assert status == 0 and out.startswith(f"{FIXTURE}: ovd recording")


@pytest.mark.parametrize(("name", "message"), [
    ("ghost", "the 'ghost' command is unavailable: No module named 'pvdkit_no_such_package'"),
    ("odd", "the 'odd' command is unavailable: entry point 'tests.pvdkit.test_cli_entry_points:"
            "NOT_A_COMMAND' is not a pvdkit command"),
])
def test_a_broken_entry_point_fails_in_one_line_when_used(capsys, fake_entry_points, name, message):
    status, out, err = run(capsys, name)
    assert (status, out) == (2, "")
    assert err == f"pvdkit: error: {message}\n"


def test_an_unknown_command_lists_the_entry_points_too(capsys, fake_entry_points):
    status, _, err = run(capsys, "frobnicate")
    assert status == 2 and "invalid choice: 'frobnicate'" in err and "'hello'" in err
