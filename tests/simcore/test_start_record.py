"""``pvdkit record`` on a fresh install: the first-run message before compiling, and pvdkit's
recording kernels compiled in a second process meanwhile (:func:`simcore.cli.record.prepare_kernels`)."""

from __future__ import annotations

import io

import pytest

from pvdkit import cli, jit
from simcore.cli import record as rec


class FakeProcess:
    def __init__(self) -> None:
        self.waited = False

    def wait(self, timeout=None):
        self.waited = True
        return 0


@pytest.fixture
def cold(monkeypatch):
    """Every kernel cold; a second process that is only noted; notices on a captured stream."""
    started: list[str] = []

    def warm(target: str):
        started.append(target)
        return FakeProcess()

    monkeypatch.setattr(jit, "is_cached", lambda kernel: False)
    monkeypatch.setattr(jit, "warm_in_background", warm)
    out = io.StringIO()
    jit.enable_notices(out)
    yield out, started
    jit.disable_notices()


def test_cold_h5_says_so_and_compiles_pvdkits_kernels_alongside(cold):
    out, started = cold
    helper = rec.prepare_kernels(None, "x.h5", None)
    assert isinstance(helper, FakeProcess)
    assert started == ["simcore.cli.record:warm_h5_kernels"]
    seconds = round(rec.COLD_SECONDS["direct"])
    assert out.getvalue() == f"pvdkit: compiling kernels, first run only — about {seconds} s\n"


def test_cold_ovd_compiles_only_the_simulator_and_an_engine_car_takes_longer(cold):
    out, started = cold
    assert rec.prepare_kernels("sedan_engine", "x.ovd", None) is None
    assert started == []
    assert out.getvalue().endswith(f"about {round(rec.COLD_SECONDS['engine'])} s\n")


def test_only_pvdkits_kernels_cold_compile_here_without_a_second_process(cold, monkeypatch):
    out, started = cold
    from pvdkit.ovd.kernels import scan

    monkeypatch.setattr(jit, "is_cached", lambda kernel: kernel is not scan)
    assert rec.prepare_kernels(None, None, None) is None  # the default output is .h5
    assert started == []
    assert out.getvalue().endswith(f"about {round(rec.H5_COLD_SECONDS)} s\n")


def test_warm_or_library_use_says_nothing_and_starts_nothing(cold, monkeypatch):
    out, started = cold
    monkeypatch.setattr(jit, "is_cached", lambda kernel: True)
    assert rec.prepare_kernels(None, "x.h5", None) is None
    jit.disable_notices()
    monkeypatch.setattr(jit, "is_cached", lambda kernel: False)
    assert rec.prepare_kernels(None, "x.h5", None) is None  # library use
    assert out.getvalue() == "" and started == []


def test_the_motorcycle_compiles_nothing_of_the_simulator(cold):
    out, started = cold
    assert rec.prepare_kernels("motorcycle", "x.ovd", None) is None
    assert out.getvalue() == "" and started == []


def test_warm_h5_kernels_records_a_stream(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    rec.warm_h5_kernels()  # compiles (or loads) the kernels a .h5 recording uses


def test_a_warm_record_prints_no_message(tmp_path, capsys):
    """The second run finds every kernel cached (the first may compile them)."""
    for name in ("a.h5", "b.h5"):
        assert cli.main(["record", "--duration", "0.1", "-o", str(tmp_path / name), "--quiet"]) == 0
    out = io.StringIO()
    jit.enable_notices(out)
    try:
        assert rec.prepare_kernels(None, str(tmp_path / "c.h5"), None) is None
    finally:
        jit.disable_notices()
    assert out.getvalue() == ""
    assert "compiling kernels" not in capsys.readouterr().err
