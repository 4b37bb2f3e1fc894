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

    def warm(target: str, *args: str):
        started.append((target, *args))
        return FakeProcess()

    monkeypatch.setattr(jit, "is_cached", lambda kernel: False)
    monkeypatch.setattr(jit, "warm_in_background", warm)
    out = io.StringIO()
    jit.enable_notices(out)
    yield out, started
    jit.disable_notices()


def test_cold_h5_says_so_and_compiles_alongside(cold):
    """The second process compiles pvdkit's recording kernels, then the simulator's from the end."""
    out, started = cold
    helper = rec.prepare_kernels(None, "x.h5", None)
    assert isinstance(helper, FakeProcess)
    assert started == [("simcore.cli.record:warm_record_kernels", "", "", "1")]
    seconds = round(rec.COLD_SECONDS["direct"])
    assert out.getvalue() == f"pvdkit: compiling kernels, first run only — about {seconds} s\n"


def test_cold_ovd_compiles_the_simulator_alongside_and_an_engine_car_takes_longer(cold):
    out, started = cold
    assert isinstance(rec.prepare_kernels("sedan_engine", "x.ovd", False), FakeProcess)
    assert started == [("simcore.cli.record:warm_record_kernels", "sedan_engine", "0", "0")]
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


@pytest.mark.parametrize(("vehicle", "physx"), [("", ""), ("sedan_engine", "0")])
def test_warm_record_kernels_runs_the_vehicles_sequence_from_its_end(monkeypatch, vehicle, physx):
    """Each component of the vehicle :func:`record` builds runs once, last first (so that the
    command, which compiles from the first, meets it in the middle)."""
    from simcore.component import ComponentSequence

    ran: list[str] = []
    entries = ComponentSequence.entries

    def watched(self):
        out = entries(self)
        for e in out:
            def update(dt, context, real=e.component.update, name=e.name):
                ran.append(name)
                return real(dt, context)

            e.component.update = update
        return out

    monkeypatch.setattr(ComponentSequence, "entries", watched)
    rec.warm_record_kernels(vehicle, physx, "0")
    from simcore.vehicle import Vehicle

    params, context = rec._with_physx_actor(rec.load_vehicle_params(vehicle or None)[0],
                                            rec._PHYSX_ARG[physx])
    names = [e.name for e in entries(Vehicle(params, context=context).fleet.sequence)]
    assert ran == names[::-1]
    assert ("physx_actor_end" in ran) == (physx == "")


def test_warm_record_kernels_skips_the_motorcycle():
    rec.warm_record_kernels("motorcycle", "", "0")  # numpy only: nothing to run


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


def test_a_cold_run_says_its_timings_include_compiling(tmp_path, capsys, monkeypatch):
    """A CI log gets no first-run message (stderr is no terminal), so the summary says why the
    first step took seconds; a warm run's summary does not."""
    monkeypatch.setattr(jit, "warm_in_background", lambda target, *args: FakeProcess())
    with monkeypatch.context() as m:
        m.setattr(jit, "is_cached", lambda kernel: False)
        assert cli.main(["record", "--duration", "0.05", "-o", str(tmp_path / "cold.h5"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "(compiling the kernels included: first run only)" in out
    assert "the first step, which creates the object graphs and compiles the kernels:" in out
    assert cli.main(["record", "--duration", "0.05", "-o", str(tmp_path / "warm.h5"), "--quiet"]) == 0
    assert "compil" not in capsys.readouterr().out
