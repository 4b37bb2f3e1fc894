"""Bad input and failing outputs of the ``pvdkit`` commands: one line naming the file, exit
status 2, no traceback, and never a damaged or half-written file (``pvdkit.outputs``)."""

from __future__ import annotations

import errno
import importlib.util
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pvdkit import cli, outputs
from pvdkit.types import PvdError

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def one_error_line(err: str, *parts: str) -> None:
    """``err`` is exactly one ``… error: …`` line holding every one of ``parts``."""
    assert err.count("\n") == 1 and " error: " in err and "Traceback" not in err, err
    for p in parts:
        assert p in err, (p, err)


def leftovers(folder: Path) -> list[str]:
    """Temporary files of ``pvdkit.outputs`` left in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if ".tmp" in p.name)


@pytest.fixture()
def ovd(tmp_path) -> Path:
    path = tmp_path / "a.ovd"
    shutil.copyfile(FIXTURE, path)
    return path


# ------------------------------------------------------------------------------------------
# convert: same file, links
# ------------------------------------------------------------------------------------------


def test_convert_onto_a_symlink_to_its_source_is_refused(capsys, ovd, tmp_path):
    link = tmp_path / "link.h5"
    link.symlink_to(ovd.name)
    status, out, err = run(capsys, "convert", str(ovd), str(link))
    assert status == 2 and out == ""
    one_error_line(err, "same file")
    assert ovd.read_bytes() == FIXTURE.read_bytes() and link.is_symlink()
    assert leftovers(tmp_path) == []


def test_convert_onto_a_hard_link_or_the_same_path_is_refused(capsys, ovd, tmp_path):
    hard = tmp_path / "hard.ovd"
    os.link(ovd, hard)
    for dst in (hard, tmp_path / "." / "a.ovd"):
        status, _, err = run(capsys, "convert", str(ovd), str(dst))
        assert status == 2
        one_error_line(err, "same file")
    assert ovd.read_bytes() == FIXTURE.read_bytes()


def test_convert_through_a_symlink_to_another_file_writes_that_file(capsys, ovd, tmp_path):
    real = tmp_path / "real.h5"
    real.write_bytes(b"old")
    link = tmp_path / "link.h5"
    link.symlink_to(real.name)
    assert run(capsys, "convert", str(ovd), str(link))[0] == 0
    assert link.is_symlink() and real.read_bytes()[:8] == b"\x89HDF\r\n\x1a\n"
    assert leftovers(tmp_path) == []


def test_convert_replaces_an_existing_output_keeping_its_permissions(capsys, ovd, tmp_path):
    h5 = tmp_path / "a.h5"
    assert run(capsys, "convert", str(ovd), str(h5))[0] == 0
    back = tmp_path / "back.ovd"
    back.write_bytes(b"stale")
    back.chmod(0o640)
    assert run(capsys, "convert", str(h5), str(back))[0] == 0
    assert back.read_bytes() == FIXTURE.read_bytes()
    assert stat.S_IMODE(back.stat().st_mode) == 0o640
    assert leftovers(tmp_path) == []


# ------------------------------------------------------------------------------------------
# Missing folders, missing inputs
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv, message", [
    (["convert", "{ovd}", "{tmp}/no/x.h5"], "output '{tmp}/no/x.h5': folder '{tmp}/no' does not exist"),
    (["convert", "{ovd}", "{tmp}/no/x.ovd"], "folder '{tmp}/no' does not exist"),
    (["convert", "{ovd}", "{tmp}/f.txt/x.ovd"], "'{tmp}/f.txt' is not a folder"),
    (["diff", "{ovd}", "{ovd}", "--junit", "{tmp}/no/j.xml"], "--junit '{tmp}/no/j.xml': folder '{tmp}/no'"),
    (["diff", "{ovd}", "{ovd}", "--json", "{tmp}/no/j.json"], "--json '{tmp}/no/j.json': folder '{tmp}/no'"),
    (["diff", "{ovd}", "{ovd}", "--plots", "{tmp}/no/plots"], "--plots '{tmp}/no/plots': folder '{tmp}/no'"),
    (["diff", "{ovd}", "{ovd}", "--junit", "{tmp}"], "is a folder, expected a file name"),
    (["bicycle", "--plots", "{tmp}/no/plots"], "--plots '{tmp}/no/plots': folder '{tmp}/no' does not exist"),
    (["bicycle", "--plots", "{tmp}/f.txt"], "is a file, expected a folder"),
    (["bicycle", "--record", "{tmp}/no/b.h5"], "--record '{tmp}/no/b.h5': folder '{tmp}/no' does not exist"),
])
def test_a_missing_output_folder_is_an_error_everywhere(capsys, ovd, tmp_path, argv, message):
    (tmp_path / "f.txt").write_text("a file")
    before = sorted(p.name for p in tmp_path.iterdir())
    argv = [a.format(ovd=ovd, tmp=tmp_path) for a in argv]
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    one_error_line(err, message.format(tmp=tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing created


@pytest.mark.parametrize("argv, option", [
    (["diff", "{ovd}", "{ovd}", "--json", ""], "--json"),
    (["diff", "{ovd}", "{ovd}", "--junit", " "], "--junit"),
    (["diff", "{ovd}", "{ovd}", "--plots", ""], "--plots"),
    (["convert", "{ovd}", ""], "output"),
    (["record", "-o", ""], "-o/--output"),
    (["bicycle", "--record", ""], "--record"),
    (["bicycle", "--plots", ""], "--plots"),
    (["replay", "{ovd}", "--report", ""], "--report"),
    (["listen", "0", "-o", ""], "-o/--output"),
    (["view", "{ovd}", "--screenshot", ""], "--screenshot"),
])
def test_an_empty_output_name_is_refused_not_skipped(capsys, ovd, tmp_path, argv, option):
    """``--json ''`` (a CI variable left unset) used to skip the report without a word, and
    ``view --screenshot ''`` opened a window that never closed on a headless machine."""
    before = sorted(p.name for p in tmp_path.iterdir())
    status, out, err = run(capsys, *[a.format(ovd=ovd) for a in argv])
    assert status == 2 and out == ""
    one_error_line(err, f"argument {option}: expected a file or folder name, got an empty string")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_convert_into_a_folder_says_so(capsys, ovd, tmp_path):
    status, out, err = run(capsys, "convert", str(ovd), str(tmp_path))
    assert status == 2
    one_error_line(err, f"output '{tmp_path}': is a folder, expected a file name")


def test_a_recording_is_read_by_its_content_whatever_its_extension(capsys, ovd, tmp_path):
    """An .ovd renamed .h5 reads as the .ovd it is (an .h5 renamed .ovd always did)."""
    renamed = tmp_path / "renamed.h5"
    shutil.copyfile(ovd, renamed)
    status, out, _err = run(capsys, "info", str(renamed))
    assert status == 0 and "ovd recording" in out
    status, _out, err = run(capsys, "convert", str(renamed), str(tmp_path / "back.ovd"))
    assert status == 0 and (tmp_path / "back.ovd").read_bytes() == ovd.read_bytes()
    (tmp_path / "zeros.h5").write_bytes(bytes(64))
    status, _out, err = run(capsys, "info", str(tmp_path / "zeros.h5"))
    assert status == 2
    one_error_line(err, "zeros.h5: not an HDF5 file", "nor an .ovd stream")


def test_a_file_that_is_no_recording_is_shown_as_what_it_starts_with(capsys, tmp_path):
    text, binary = tmp_path / "notes.ovd", tmp_path / "program.ovd"
    text.write_text("# Notes\nnot a recording\n")
    binary.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(64))
    status, _out, err = run(capsys, "info", str(text))
    assert status == 2
    one_error_line(err, "not an OmniPVD stream", "they read '# Notes\\nnot '", "HDF5's signature")
    status, _out, err = run(capsys, "info", str(binary))
    one_error_line(err, "they are 7f 45 4c 46 02 01 01 00 00 00 00 00")


@pytest.mark.parametrize("argv, message", [
    (["dump", "{tmp}"], "{tmp}: is a directory, expected an .ovd or .h5 recording"),
    (["dump", "/dev/null"], "/dev/null: is not a regular file"),
    (["dump", "{tmp}/gone.ovd"], "{tmp}/gone.ovd: no such file"),
    (["dump", "{tmp}/dangling.ovd"], "{tmp}/dangling.ovd: broken symbolic link"),
    (["info", "{tmp}/f.txt/x.ovd"], "no such file"),
    (["convert", "{tmp}", "{tmp}/x.h5"], "{tmp}: is a directory"),
    (["convert", "{tmp}/gone.ovd", "{tmp}/x.h5"], "{tmp}/gone.ovd: no such file"),
    (["diff", "{tmp}/gone.ovd", "{ovd}"], "A: {tmp}/gone.ovd: no such file"),
    (["diff", "{ovd}", "{tmp}"], "B: {tmp}: is a directory"),
    (["diff", "{ovd}", "{tmp}/f.txt"], "B: {tmp}/f.txt: not an OmniPVD stream"),
])
def test_unusable_inputs_give_one_line_naming_the_file(capsys, ovd, tmp_path, argv, message):
    (tmp_path / "f.txt").write_text("not a recording\n" * 10)
    (tmp_path / "dangling.ovd").symlink_to("nowhere.ovd")
    argv = [a.format(ovd=ovd, tmp=tmp_path) for a in argv]
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    one_error_line(err, message.format(tmp=tmp_path))


def test_require_input_is_the_one_check(tmp_path):
    with pytest.raises(PvdError, match=r"^A: .*x\.ovd: no such file$"):
        outputs.require_input(tmp_path / "x.ovd", label="A")
    f = tmp_path / "f.ovd"
    f.write_bytes(b"x")
    assert outputs.require_input(f) == str(f)


# ------------------------------------------------------------------------------------------
# Disk full and other I/O errors
# ------------------------------------------------------------------------------------------


def _enospc(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_disk_full_while_writing_h5_leaves_no_file(capsys, ovd, tmp_path, monkeypatch):
    import pvdkit.convert as convert_module

    def write_h5_then_fill_the_disk(buf, table, target, **kwargs):
        Path(target).write_bytes(b"\x89HDF\r\n\x1a\n" + b"half a file")
        _enospc()

    monkeypatch.setattr(convert_module, "write_h5", write_h5_then_fill_the_disk)
    out = tmp_path / "out.h5"
    status, _, err = run(capsys, "convert", str(ovd), str(out))
    assert status == 2
    one_error_line(err, f"disk full writing {out}")
    assert not out.exists() and leftovers(tmp_path) == []


def test_disk_full_while_writing_ovd_keeps_the_old_file(capsys, ovd, tmp_path, monkeypatch):
    h5 = tmp_path / "a.h5"
    assert run(capsys, "convert", str(ovd), str(h5))[0] == 0
    target = tmp_path / "back.ovd"
    target.write_bytes(b"previous content")
    real_open = open

    class FullFile:
        def __init__(self, f):
            self.f = f

        def write(self, data):
            self.f.write(bytes(data)[:100])
            _enospc()

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    def full_open(path, mode="r", *args, **kwargs):
        f = real_open(path, mode, *args, **kwargs)
        return FullFile(f) if "w" in mode and ".tmp" in os.fspath(path) else f

    monkeypatch.setattr("builtins.open", full_open)
    status, _, err = run(capsys, "convert", str(h5), str(target))
    monkeypatch.undo()
    assert status == 2
    one_error_line(err, f"disk full writing {target}")
    assert target.read_bytes() == b"previous content" and leftovers(tmp_path) == []


def test_other_io_errors_name_the_file(tmp_path, monkeypatch):
    target = tmp_path / "r.xml"
    with pytest.raises(PvdError, match=rf"^cannot write {target}: Input/output error$"):
        with outputs.atomic_open(target, "w") as f:
            f.write("x")
            raise OSError(errno.EIO, os.strerror(errno.EIO))
    assert not target.exists() and leftovers(tmp_path) == []


def test_an_interrupted_write_leaves_nothing(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    with pytest.raises(KeyboardInterrupt), outputs.atomic_open(target, "w") as f:
        f.write("new, but only half")
        raise KeyboardInterrupt
    assert target.read_text() == "old" and leftovers(tmp_path) == []


@pytest.fixture()
def tiny_disk(tmp_path) -> Iterator[Path]:
    """A 64 KiB tmpfs (needs root and a kernel that lets the test mount; else skipped)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _convert_in_subprocess(*argv: str) -> subprocess.CompletedProcess:
    # A separate process: were HDF5 to hit the full disk it would crash the interpreter.
    return subprocess.run([sys.executable, "-m", "pvdkit", "convert", *argv], capture_output=True,
                          text=True, timeout=300)


def test_real_full_disk_h5_output(tiny_disk, ovd):
    out = tiny_disk / "out.h5"
    done = _convert_in_subprocess(str(ovd), str(out))
    assert done.returncode == 2, done.stderr
    one_error_line(done.stderr, f"disk full writing {out}")
    assert list(tiny_disk.iterdir()) == []


def test_real_full_disk_ovd_output(tiny_disk, ovd, tmp_path):
    h5 = tmp_path / "a.h5"
    assert _convert_in_subprocess(str(ovd), str(h5)).returncode == 0
    out = tiny_disk / "back.ovd"
    done = _convert_in_subprocess(str(h5), str(out))
    assert done.returncode == 2, done.stderr
    one_error_line(done.stderr, f"disk full writing {out}")
    assert list(tiny_disk.iterdir()) == []


# ------------------------------------------------------------------------------------------
# diff
# ------------------------------------------------------------------------------------------


def test_diff_window_after_both_ends_is_an_error(capsys, ovd):
    status, out, err = run(capsys, "diff", str(ovd), str(ovd), "--frames", "1000:2000")
    assert status == 2 and out == ""
    one_error_line(err, "--frames 1000:2000: the window starts after both recordings end",
                   "A has 25 frames, B 25")
    status, _, err = run(capsys, "diff", str(ovd), str(ovd), "--frames", "25")
    assert status == 2 and "starts after both recordings end" in err


def test_diff_window_running_past_the_end_is_cut_there(capsys, ovd):
    status, out, _ = run(capsys, "diff", str(ovd), str(ovd), "--frames", "20:2000", "--quiet")
    assert status == 0 and out.startswith("EQUAL")


def test_diff_io_error_without_a_file_name_names_both_inputs(capsys, ovd, monkeypatch):
    import pvdkit.diff.engine as engine

    def failing(*_a, **_k):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(engine, "compare_files", failing)
    status, _, err = run(capsys, "diff", str(ovd), str(ovd))
    assert status == 2
    one_error_line(err, f"cannot read {ovd} or {ovd}: Input/output error")


def test_diff_bug_shows_its_traceback_but_exits_2(capsys, ovd, monkeypatch):
    import pvdkit.diff.engine as engine

    def buggy(*_a, **_k):
        raise KeyError("oops")

    monkeypatch.setattr(engine, "compare_files", buggy)
    status, _, err = run(capsys, "diff", str(ovd), str(ovd))
    assert status == 2  # never 1 ("different") for a crash
    assert "Traceback" in err and "KeyError: 'oops'" in err
    assert err.rstrip().splitlines()[-1].startswith("pvdkit diff: error: internal error (KeyError")


def test_diff_reports_are_written_whole(capsys, ovd, tmp_path):
    j, x, plots = tmp_path / "d.json", tmp_path / "d.xml", tmp_path / "plots"
    # --plots needs the plots extra (matplotlib); a base install checks the text reports alone.
    with_plots = importlib.util.find_spec("matplotlib") is not None
    status, _, err = run(capsys, "diff", str(ovd), str(ovd), "--json", str(j), "--junit", str(x),
                         *(["--plots", str(plots)] if with_plots else []), "--quiet")
    assert status == 0, err
    assert j.read_text().startswith("{") and x.read_text().startswith("<?xml")
    assert plots.is_dir() == with_plots and leftovers(tmp_path) == []


def test_h5_output_on_a_full_disk_is_one_line(capsys, ovd, tmp_path, monkeypatch):
    # HDF5's failed write comes back as RuntimeError from h5py; the writer lets go of the file
    # (it would crash the process when closed) and convert reports one line, leaving nothing.
    from pvdkit.h5 import writer as h5writer

    def full(self, *_a, **_k):
        raise RuntimeError("Can't write data (file write failed: errno = 28, error message = "
                           "'No space left on device')")

    monkeypatch.setattr(h5writer.H5Writer, "_append_parts", full)
    out = tmp_path / "out.h5"
    status, _, err = run(capsys, "convert", str(ovd), str(out))
    assert status == 2
    one_error_line(err, f"disk full writing {out}")
    assert not out.exists() and leftovers(tmp_path) == []


def test_a_device_or_fifo_output_is_refused_not_replaced(capsys, ovd, tmp_path):
    """Outputs are written beside their target and renamed over it: a device node or FIFO named
    as output would become a regular file (as root, --junit /dev/null would replace /dev/null).
    Such a target is one line naming what it is, and stays what it was."""
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    code, _, err = run(capsys, "diff", str(ovd), str(ovd), "--json", str(fifo))
    assert code == 2
    one_error_line(err, f"--json '{fifo}': is not a regular file (a FIFO or pipe), expected a file name")
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    ovd_fifo = tmp_path / "fifo.h5"
    os.mkfifo(ovd_fifo)
    code, _, err = run(capsys, "convert", str(ovd), str(ovd_fifo))
    assert code == 2 and "is not a regular file (a FIFO or pipe)" in err
    assert stat.S_ISFIFO(ovd_fifo.stat().st_mode)
    with pytest.raises(PvdError, match=r"'/dev/null': is not a regular file \(a character device\)"):
        outputs.check_output("/dev/null", "--junit")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_an_output_that_is_an_input_or_another_output_is_refused(capsys, ovd, tmp_path):
    """--json A replaced recording A with the report, and --junit x --json x wrote one report
    over the other, without a word (fuzzing find): refused before anything is read or written,
    through links too."""
    a = tmp_path / "mine.ovd"
    a.write_bytes(ovd.read_bytes())
    link = tmp_path / "link.json"
    link.symlink_to(a)
    for argv, message in (
        (["--json", str(a)], f"--json '{a}': is the same file as the input A ({a})"),
        (["--junit", str(link)], f"--junit '{link}': is the same file as the input A ({a})"),
        (["--json", str(tmp_path / "r"), "--junit", str(tmp_path / "r")], "is the same file as the --json"),
    ):
        code, _, err = run(capsys, "diff", str(a), str(ovd), *argv)
        assert code == 2
        one_error_line(err, message)
    assert a.read_bytes() == ovd.read_bytes()
    assert not (tmp_path / "r").exists()


def _reader_gone(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``pvdkit ARGS`` with a stdout whose reader has already gone (``| head`` that exited)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "pvdkit", *args], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    finally:
        os.close(write)


def test_a_closed_output_pipe_keeps_the_verdict(tmp_path: Path) -> None:
    """``pvdkit diff A B --json - | head -1`` exited 0, "equal", for recordings that differ: a
    CI step with pipefail passed. diff keeps its verdict; other commands end as a shell reports
    a process SIGPIPE ended (141), and no second error is printed at exit."""
    other = tmp_path / "other.ovd"
    data = bytearray(FIXTURE.read_bytes())
    other.write_bytes(bytes(data[: len(data) // 2]))  # damaged: a difference
    for args, status in ((["diff", str(FIXTURE), str(other), "--json", "-"], 1),
                         (["diff", str(FIXTURE), str(FIXTURE)], 0),
                         (["series", str(FIXTURE), "WheelRigidBodyState.rotationSpeed"], 141)):
        out = _reader_gone(*args)
        assert out.returncode == status, (args, out.stderr)
        assert "Traceback" not in out.stderr and "Exception ignored" not in out.stderr, out.stderr

