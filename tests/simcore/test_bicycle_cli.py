"""``pvdkit bicycle``: text and JSON analysis, plots, recording, bad input."""

from __future__ import annotations

import argparse
import json
import math

import pytest

import simcore.cli.bicycle as bicycle_cli
from pvdkit.cli import main
from pvdkit.recording import Recording


def run_json(capsys, *args: str) -> dict:
    assert main(["bicycle", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_has_params_and_understeer_figures(capsys) -> None:
    d = run_json(capsys)
    for key in ("m", "iz", "lf", "lr", "cf", "cr", "speed", "understeer_gradient", "characteristic_speed",
                "critical_speed"):
        assert key in d
    assert (d["m"], d["iz"], d["lf"], d["lr"], d["cf"], d["cr"], d["speed"]) == (
        1500.0, 2500.0, 1.2, 1.6, 80000.0, 100000.0, 20.0)
    assert d["understeer_gradient"] == pytest.approx(3 / 700)
    assert d["characteristic_speed"] == pytest.approx(math.sqrt(2.8 * 700 / 3))
    assert d["critical_speed"] is None
    assert d["steady_state"]["yaw_rate_gain"] == pytest.approx(20 / (2.8 + 3 / 700 * 400))


def test_json_oversteer_and_neutral(capsys) -> None:
    d = run_json(capsys, "--cf", "120000", "--cr", "60000", "--speed", "35")
    assert d["critical_speed"] == pytest.approx(28.0) and d["characteristic_speed"] is None
    assert d["stable"] is False and d["steady_state"]["yaw_rate_gain"] is None
    d = run_json(capsys, "--cf=100000", "--cr=75000")
    assert d["understeer_gradient"] == pytest.approx(0.0, abs=1e-15)
    assert d["characteristic_speed"] is None and d["critical_speed"] is None


def test_text_report(capsys) -> None:
    assert main(["bicycle", "--m", "1200", "--speed", "15"]) == 0
    out = capsys.readouterr().out
    assert "understeer gradient K" in out and "characteristic speed" in out and "damping ratio" in out
    assert "m  = 1200 kg" in out and "V  = 15 m/s" in out


@pytest.mark.parametrize("args, what", [(["--m", "-1"], "--m"), (["--cr", "0"], "--cr"),
                                        (["--speed", "nan"], "--speed")])
def test_bad_values_exit_2_naming_the_option(capsys, args, what) -> None:
    assert main(["bicycle", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pvdkit: error: bicycle:") and what in err


@pytest.mark.parametrize("args, message", [
    (["--speed", "1e-320"], "bicycle: --speed must be a finite number in [0.1, 10000] m/s, got 1e-320"),
    (["--speed", "1e300"], "bicycle: --speed must be a finite number in [0.1, 10000] m/s, got 1e+300"),
    (["--m", "1e-300"], "bicycle: --m must be a finite number in [0.1, 1e+06] kg, got 1e-300"),
    (["--lf", "1e100"], "bicycle: --lf must be a finite number in [0.01, 100] m, got 1e+100"),
    (["--record", "{tmp}/b.ovd", "--steer", "nan"],
     "bicycle: --steer must be a finite angle in [-90, 90] degrees, got nan"),
    (["--record", "{tmp}/b.ovd", "--steer=-1e308"],
     "bicycle: --steer must be a finite angle in [-90, 90] degrees, got -1e+308"),
])
def test_values_beyond_what_the_model_can_compute_are_one_line(tmp_path, capsys, args, message) -> None:
    """``--speed 1e-320`` divided by zero and ``--m 1e-300`` overflowed (tracebacks); ``--steer nan``
    was recorded without a word and ``--steer 1e308`` only warned of an overflow."""
    assert main(["bicycle", *(a.format(tmp=tmp_path) for a in args)]) == 2
    err = capsys.readouterr().err
    assert err == f"pvdkit: error: {message}\n"
    assert not (tmp_path / "b.ovd").exists()


def test_the_ends_of_the_ranges_are_analysed_and_recorded(tmp_path, capsys) -> None:
    out = tmp_path / "b.h5"
    assert main(["bicycle", "--speed", "0.1", "--record", str(out), "--steer=-90", "--duration=0.1"]) == 0
    assert "recorded 10 frames (-90 deg steer step" in capsys.readouterr().out
    assert run_json(capsys, "--speed", "10000")["speed"] == 10000.0


def test_plots_and_recording(tmp_path, capsys) -> None:
    out = tmp_path / "step.ovd"
    assert main(["bicycle", "--plots", str(tmp_path / "png"), "--record", str(out), "--duration", "0.5"]) == 0
    text = capsys.readouterr().out
    assert "plots:" in text and "recorded 50 frames" in text
    assert sorted(p.name for p in (tmp_path / "png").iterdir()) == [
        "pole_locus.png", "sideslip_step.png", "step_response.png", "yaw_rate_gain.png"]
    rec = Recording.open(out)
    assert len(rec.objects_of_class("BicycleBodyState")) == 1
    assert main(["bicycle", "--record", str(tmp_path / "x.txt")]) == 2
    assert ".ovd or .h5" in capsys.readouterr().err


def test_add_bicycle_parser_on_a_plain_argparse(capsys) -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    bicycle_cli.add_bicycle_parser(sub)
    args = parser.parse_args(["bicycle", "--lf", "1.4", "--json"])
    assert args._run(args) == 0
    assert json.loads(capsys.readouterr().out)["lf"] == 1.4


def test_options_of_the_recording_without_record_are_refused(capsys):
    """``--steer 5`` alone used to be ignored without a word."""
    assert main(["bicycle", "--steer", "5", "--dt", "0.02"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--steer, --dt shape the recording; add --record" in err
