"""``pvdkit view`` without a usable display: one line saying what is missing, exit status 2 —
never Qt's abort (exit 134). The probe runs before the QApplication exists."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.viewer.conftest import FIXTURE
from viewer.app import QT_GUI_LIBRARIES, XCB_LIBRARIES, display_problem


def loads_all(_name: str) -> None:
    return None


def loads_all_but(*missing: str):
    def load(name: str) -> None:
        if name in missing:
            raise OSError(f"{name}: cannot open shared object file: No such file or directory")
    return load


def no_x_server_problem(_display: str) -> None:
    return None


@pytest.mark.parametrize("platform", ["offscreen", "minimal", "offscreen:fontengine=freetype"])
def test_headless_platforms_always_start(platform):
    assert display_problem({"QT_QPA_PLATFORM": platform}, loads_all) is None


@pytest.mark.skipif(sys.platform != "linux", reason="the X11 / Wayland probe is for Linux")
@pytest.mark.parametrize("env", [{}, {"QT_QPA_PLATFORM": "xcb"}, {"QT_QPA_PLATFORM": "wayland"},
                                 {"QT_QPA_PLATFORM": "wayland;xcb"}])
def test_no_display_says_how_to_get_one(env):
    problem = display_problem(env, loads_all, no_x_server_problem)
    assert problem is not None and "\n" not in problem
    assert "set DISPLAY" in problem and "--screenshot" in problem and "QT_QPA_PLATFORM=offscreen" in problem


@pytest.mark.skipif(sys.platform != "linux", reason="the X11 probe is for Linux")
def test_missing_xcb_libraries_name_the_debian_packages():
    env = {"DISPLAY": ":0"}
    load = loads_all_but("libxcb-icccm.so.4", "libxcb-keysyms.so.1")
    problem = display_problem(env, load, no_x_server_problem)
    assert problem is not None
    assert "libxcb-icccm.so.4, libxcb-keysyms.so.1" in problem
    assert "sudo apt-get install libxcb-icccm4 libxcb-keysyms1" in problem
    assert display_problem(env, loads_all, no_x_server_problem) is None
    assert display_problem(env, loads_all, lambda d: f"cannot connect to {d}") == "cannot connect to :0"


def test_every_library_has_a_package():
    for table in (QT_GUI_LIBRARIES, XCB_LIBRARIES):
        assert all(lib.startswith("lib") and ".so." in lib and pkg for lib, pkg in table.items())


def _view(env_changes: dict[str, str | None], *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return subprocess.run([sys.executable, "-m", "pvdkit", "view", *args], env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.skipif(sys.platform != "linux", reason="the X11 probe is for Linux")
def test_view_without_a_display_exits_2_with_one_line():
    done = _view({"QT_QPA_PLATFORM": None, "DISPLAY": None, "WAYLAND_DISPLAY": None}, str(FIXTURE))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("pvdkit: error: view: no display")
    assert "set DISPLAY" in done.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="the X11 probe is for Linux")
def test_view_on_an_unreachable_x_display_exits_2_with_one_line():
    # Display :97 has no server here: the answer is missing libraries or no connection, never an abort.
    done = _view({"QT_QPA_PLATFORM": "xcb", "DISPLAY": ":97", "WAYLAND_DISPLAY": None}, str(FIXTURE))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("pvdkit: error: view: ")
    assert "apt-get install" in done.stderr or "cannot connect to the X server" in done.stderr


def test_screenshot_output_rules(tmp_path, capsys):
    from viewer.cli import main

    assert main([str(FIXTURE), "--screenshot", str(tmp_path / "no" / "shot.png")]) == 2
    assert f"--screenshot '{tmp_path}/no/shot.png': folder '{tmp_path}/no' does not exist" in \
        capsys.readouterr().err
    assert main([str(FIXTURE), "--screenshot", str(tmp_path / "shot.xyz")]) == 2
    assert "unknown image format 'xyz'" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_screenshot_replaces_the_target_whole(tmp_path, capsys):
    from viewer.cli import main

    shot = tmp_path / "shot.png"
    shot.write_bytes(b"old")
    assert main([str(FIXTURE), "--screenshot", str(shot), "--size", "640x480"]) == 0
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["shot.png"]  # no temporary file left


def test_a_layout_that_is_no_file_names_the_option(tmp_path, capsys):
    """--layout /tmp said "is a directory, expected an .ovd or .h5 recording"; a missing one did
    not say --layout at all."""
    from viewer.cli import main

    assert main([str(FIXTURE), "--layout", str(tmp_path), "--screenshot", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert f"--layout: {tmp_path}: is a directory, expected a layout file (.json)" in err, err
    shot = str(tmp_path / "x.png")
    assert main([str(FIXTURE), "--layout", str(tmp_path / "none.json"), "--screenshot", shot]) == 2
    assert f"--layout: {tmp_path}/none.json: no such file" in capsys.readouterr().err
