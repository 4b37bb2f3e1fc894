"""Linear bicycle model: equations, closed forms, exact simulation, PVD recording and plots."""

from __future__ import annotations

import importlib.util
import io
import math
import sys

import numpy as np
import pytest

from pvdkit.recording import Recording
from pvdkit.streams import MemoryStream
from pvdkit.types import PvdError
from pvdkit.writer import OmniPvdWriter
from simcore.bicycle import (
    DEFAULT_BICYCLE,
    BicycleModel,
    BicycleParams,
    analyse,
    characteristic_speed,
    critical_speed,
    derivatives,
    sideslip_transfer_function,
    simulate,
    state_space,
    steady_state,
    steady_state_sideslip_gain,
    steady_state_yaw_rate_gain,
    step_response,
    understeer_gradient,
    yaw_rate_transfer_function,
)
from simcore.bicycle.functions import discretize, expm, lateral_acceleration
from simcore.frame import SAE_J670, Scale

US = DEFAULT_BICYCLE  # understeering: K = 3/700, V_ch = sqrt(653.33...) m/s
OS = DEFAULT_BICYCLE.replace(cf=120000.0, cr=60000.0)  # oversteering: K = -1/280, V_crit = 28 m/s exactly
NEUTRAL = DEFAULT_BICYCLE.replace(cf=100000.0, cr=75000.0)  # lr/Cf == lf/Cr


def random_params(rng: np.random.Generator) -> BicycleParams:
    return BicycleParams(mass=rng.uniform(800, 3000), iz=rng.uniform(800, 6000), lf=rng.uniform(0.8, 1.8),
                         lr=rng.uniform(0.8, 1.8), cf=rng.uniform(3e4, 2e5), cr=rng.uniform(3e4, 2e5),
                         speed=rng.uniform(3, 40))


# ---------------------------------------------------------------------------------- equations


def test_state_space_matches_the_force_and_moment_balance() -> None:
    rng = np.random.default_rng(1)
    for _ in range(20):
        p = random_params(rng)
        a, b = state_space(p)
        beta, r, delta = rng.normal(scale=0.05, size=3)
        dbeta, dr = derivatives(p, beta, r, delta)
        np.testing.assert_allclose(a @ [beta, r] + b * delta, [dbeta, dr], rtol=1e-12, atol=1e-12)


def test_signs_left_steer_turns_left_and_tires_push_left() -> None:
    beta, r = steady_state(US, 0.02)
    assert r > 0.0  # counter-clockwise = left turn for a left (positive) steer
    assert float(lateral_acceleration(US, beta, r, 0.02)) == pytest.approx(US.speed * r, rel=1e-12)
    # Initial response: the front axle alone gets a slip angle, pushing the nose left.
    dbeta, dr = derivatives(US, 0.0, 0.0, 0.02)
    assert dr > 0.0 and dbeta > 0.0
    # A stable vehicle: both eigenvalues in the left half plane at ordinary speeds.
    assert np.all(np.linalg.eigvals(state_space(US)[0]).real < 0.0)


def test_the_seed_equations_are_not_those_of_a_stable_car() -> None:
    """The teaching page's dβ/dt has +(Cf + Cr)/(mV) β: a self-amplifying sideslip."""
    a, _ = state_space(US)
    assert a[0, 0] == pytest.approx(-(US.cf + US.cr) / (US.mass * US.speed))
    assert a[0, 0] < 0.0 and a[1, 0] == pytest.approx(-(US.lf * US.cf - US.lr * US.cr) / US.iz)


# ------------------------------------------------------------------------------- closed forms


def test_understeer_gradient_and_speeds_closed_form() -> None:
    assert understeer_gradient(US) == pytest.approx(1500 / 2.8 * (1.6 / 80000 - 1.2 / 100000), rel=1e-14)
    assert understeer_gradient(US) == pytest.approx(3.0 / 700.0, rel=1e-12)
    assert characteristic_speed(US) == pytest.approx(math.sqrt(2.8 * 700 / 3), rel=1e-12)
    assert critical_speed(US) is None
    assert understeer_gradient(OS) == pytest.approx(-1.0 / 280.0, rel=1e-12)
    assert critical_speed(OS) == pytest.approx(28.0, rel=1e-12)
    assert characteristic_speed(OS) is None
    assert understeer_gradient(NEUTRAL) == pytest.approx(0.0, abs=1e-15)
    assert characteristic_speed(NEUTRAL) is None and critical_speed(NEUTRAL) is None
    v = np.linspace(1, 60, 7)
    np.testing.assert_allclose(steady_state_yaw_rate_gain(NEUTRAL, v), v / 2.8, rtol=1e-12)


def test_understeer_gradient_is_extra_steer_per_lateral_acceleration() -> None:
    """δ = L / R + K a_y in steady turning, for any speed and any balance."""
    rng = np.random.default_rng(2)
    for _ in range(10):
        p = random_params(rng)
        if critical_speed(p) is not None and p.speed >= critical_speed(p):
            continue
        delta = 0.01
        _, r = steady_state(p, delta)
        radius = p.speed / r
        assert p.wheelbase / radius + understeer_gradient(p) * p.speed * r == pytest.approx(delta, rel=1e-10)


def test_yaw_rate_gain_peaks_at_the_characteristic_speed() -> None:
    v = np.linspace(1.0, 80.0, 200001)
    g = steady_state_yaw_rate_gain(US, v)
    vch = characteristic_speed(US)
    assert v[np.argmax(g)] == pytest.approx(vch, abs=1e-3)
    assert float(np.max(g)) == pytest.approx(vch / (2 * US.wheelbase), rel=1e-9)


def test_steady_gains_closed_form_match_the_linear_solve() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        p = random_params(rng)
        vcrit = critical_speed(p)
        if vcrit is not None and p.speed >= vcrit:
            continue
        beta, r = steady_state(p, 1.0)
        assert float(steady_state_yaw_rate_gain(p)) == pytest.approx(r, rel=1e-10)
        assert float(steady_state_sideslip_gain(p)) == pytest.approx(beta, rel=1e-9, abs=1e-12)


def test_no_steady_state_at_or_above_the_critical_speed() -> None:
    assert np.isnan(steady_state_yaw_rate_gain(OS, 28.0)) and np.isnan(steady_state_yaw_rate_gain(OS, 35.0))
    fast = analyse(OS.with_speed(35.0))
    assert not fast.stable and fast.step is None and fast.natural_frequency is None
    assert fast.poles.real.max() > 0.0 and fast.to_dict()["steady_state"]["yaw_rate_gain"] is None
    assert analyse(OS.with_speed(20.0)).stable


def test_transfer_functions_match_the_state_space_model() -> None:
    rng = np.random.default_rng(4)
    for _ in range(10):
        p = random_params(rng)
        a, b = state_space(p)
        tf_r, tf_b = yaw_rate_transfer_function(p), sideslip_transfer_function(p)
        np.testing.assert_allclose(np.sort_complex(tf_r.poles), np.sort_complex(np.linalg.eigvals(a)),
                                   rtol=1e-9, atol=1e-9)
        for s in (0.3 + 2.0j, 5.0j, -1.0 + 0.5j):
            x = np.linalg.solve(s * np.eye(2) - a, b)
            assert complex(tf_r(s)) == pytest.approx(complex(x[1]), rel=1e-10)
            assert complex(tf_b(s)) == pytest.approx(complex(x[0]), rel=1e-10)


def test_natural_frequency_and_damping() -> None:
    tf = yaw_rate_transfer_function(US)
    wn, zeta = tf.natural_frequency, tf.damping_ratio
    poles = tf.poles
    assert abs(poles[0]) == pytest.approx(wn, rel=1e-12)  # complex pair: |p| = ω_n
    assert -poles[0].real / wn == pytest.approx(zeta, rel=1e-12)
    assert 0.0 < zeta < 1.0  # this car overshoots a little
    assert tf.dc_gain == pytest.approx(float(steady_state_yaw_rate_gain(US)), rel=1e-12)
    a = analyse(US)
    assert a.step is not None and a.step.overshoot > 0.0
    # Second-order overshoot with a zero: more than the zero-free exp(-πζ/√(1-ζ²)) would give.
    assert a.step.overshoot / 100 > 0.5 * math.exp(-math.pi * zeta / math.sqrt(1 - zeta * zeta))


# --------------------------------------------------------------------------------- simulation


def test_expm_against_closed_forms() -> None:
    theta = 2.7
    rot = expm(np.array([[0.0, -theta], [theta, 0.0]]))
    np.testing.assert_allclose(rot, [[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]],
                               atol=1e-14)
    np.testing.assert_allclose(expm(np.diag([-30.0, 0.5, 4.0])), np.diag(np.exp([-30.0, 0.5, 4.0])),
                               rtol=1e-13)


@pytest.mark.parametrize("dt", [0.001, 0.01, 0.05])
def test_step_simulation_equals_the_analytic_response_for_any_dt(dt: float) -> None:
    delta = 0.02
    trace = simulate(US, delta, 3.0, dt)
    beta, r = step_response(US, delta, trace.time)
    np.testing.assert_allclose(trace.yaw_rate, r, atol=1e-13)
    np.testing.assert_allclose(trace.sideslip, beta, atol=1e-13)
    assert trace.yaw_rate[-1] == pytest.approx(float(steady_state_yaw_rate_gain(US)) * delta, rel=1e-9)


def test_simulation_against_an_independent_rk4_for_a_sine_steer() -> None:
    p, dt = OS, 1e-3
    steer = lambda t: 0.01 * math.sin(2.0 * t)  # noqa: E731
    trace = simulate(p, steer, 2.0, dt)
    x = np.zeros(2)
    ref = [x.copy()]
    for k in range(len(trace.time) - 1):
        d = trace.steer[k]  # held during the step, as the simulation does

        def f(y: np.ndarray, d: float = d) -> np.ndarray:
            return np.array(derivatives(p, y[0], y[1], d))

        k1 = f(x)
        k2 = f(x + 0.5 * dt * k1)
        k3 = f(x + 0.5 * dt * k2)
        k4 = f(x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ref.append(x.copy())
    ref = np.array(ref)
    np.testing.assert_allclose(trace.sideslip, ref[:, 0], atol=1e-11)
    np.testing.assert_allclose(trace.yaw_rate, ref[:, 1], atol=1e-11)


def test_steady_circle_radius_is_speed_over_yaw_rate() -> None:
    trace = simulate(US, 0.02, 8.0, 0.01)
    r = trace.yaw_rate[-1]
    radius = US.speed / r
    course = trace.yaw + trace.sideslip
    centres = trace.pos + radius * np.column_stack([-np.sin(course), np.cos(course)])
    late = centres[len(centres) // 2:]
    assert np.ptp(late, axis=0).max() < 1e-6 * radius
    np.testing.assert_allclose(np.hypot(*(trace.pos[-1] - late[-1])), radius, rtol=1e-9)
    # the heading integrates the yaw rate exactly (trapezoid of a smooth curve, fine grid)
    assert trace.yaw[-1] == pytest.approx(np.trapezoid(trace.yaw_rate, trace.time), rel=1e-4)


def test_axle_states_follow_from_slip_angles() -> None:
    trace = simulate(US, 0.03, 1.0, 0.01)
    assert np.allclose(trace.lateral_force, trace.slip_angle * [US.cf, US.cr])
    np.testing.assert_allclose(trace.lateral_acceleration[1:], trace.lateral_force[1:].sum(axis=1) / US.mass)
    model = BicycleModel(US)
    model.steer = 0.03
    model.step(0.01)
    assert model.states.axles.steer.tolist() == [0.03, 0.0]


def test_discretize_rejects_bad_dt_and_params_validate() -> None:
    with pytest.raises(ValueError, match="dt"):
        discretize(US, 0.0)
    with pytest.raises(ValueError, match="BicycleParams.cr"):
        US.replace(cr=-1.0).validate()
    with pytest.raises(ValueError, match="BicycleParams.speed"):
        analyse(US.replace(speed=0.0))
    with pytest.raises(ValueError, match="one angle per step"):
        simulate(US, np.zeros(3), 1.0, 0.1)


def test_transform_and_scale_keeps_the_dynamics() -> None:
    cm = US.transform_and_scale(SAE_J670, SAE_J670, Scale(1.0), Scale(100.0))
    assert cm.lf == pytest.approx(120.0) and cm.iz == pytest.approx(2500.0 * 1e4)
    assert understeer_gradient(cm) == pytest.approx(understeer_gradient(US) / 100.0)  # rad per cm/s^2
    assert characteristic_speed(cm) == pytest.approx(100.0 * characteristic_speed(US))
    a, b = analyse(US), analyse(cm)
    assert b.yaw_rate_gain == pytest.approx(a.yaw_rate_gain) and b.natural_frequency == pytest.approx(
        a.natural_frequency)


# -------------------------------------------------------------------------------- PVD, plots


def test_pvd_recording_holds_the_model() -> None:
    from simcore.bicycle.pvd import record_bicycle

    stream = MemoryStream()
    trace, recorder = record_bicycle(OmniPvdWriter(stream), OS, 0.01, 1.0, 0.01)
    assert recorder.frames == 100
    rec = Recording.open(stream.getvalue())
    body = rec.objects_of_class("BicycleBodyState")[0]
    frames, r = rec.series(body, "yawRate")
    np.testing.assert_array_equal(np.asarray(r), trace.yaw_rate[1:])
    assert rec.value_at(body, "pos", 99)[:2].tolist() == trace.pos[-1].tolist()
    params = rec.objects_of_class("BicycleModelParams")[0]
    assert len(rec.series(params, "mass")) == 1  # params written once
    analysis = rec.objects_of_class("BicycleModelAnalysis")[0].state_at(0)
    assert analysis["criticalSpeed"] == pytest.approx(28.0) and math.isnan(analysis["characteristicSpeed"])
    axles = rec.objects_of_class("BicycleAxleState")
    assert [o.name for o in axles] == ["BicycleAxleState0", "BicycleAxleState1"]
    np.testing.assert_array_equal(rec.series(axles[1], "lateralForce").values, trace.lateral_force[1:, 1])
    model = rec.objects_of_class("BicycleModel")[0].state_at(0)
    assert model["bodyState"] == body.handle
    sim = rec.objects_of_class("Simulation")[0]
    assert rec.value_at(sim, "time", 99) == pytest.approx(1.0)


#: Plot tests need matplotlib (the ``plots`` extra, part of ``dev``); a base install runs
#: :func:`test_plots_without_matplotlib_name_the_extra` instead.
needs_matplotlib = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                                      reason="needs the plots extra: pip install 'pvdkit[plots]'")


def _near(img: np.ndarray, color: str, tol: int = 40) -> np.ndarray:
    """Pixels within ``tol`` per channel of ``color`` (``"#rrggbb"``; lines are antialiased)."""
    rgb = np.array([int(color[i:i + 2], 16) for i in (1, 3, 5)])
    return np.all(np.abs(img.astype(int) - rgb) <= tol, axis=2)


@needs_matplotlib
def test_plots_are_pngs_with_the_curves(tmp_path) -> None:
    from PIL import Image

    from pvdkit.plots import BLUE, RED
    from simcore.bicycle.plots import PLOTS, write_plots

    paths = write_plots(US, tmp_path / "plots")
    assert [p.name for p in paths] == list(PLOTS)
    for p in paths:
        data = p.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        img = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
        assert img.shape == (560, 900, 3)
        curve = _near(img, BLUE) | _near(img, RED)
        assert curve.sum() > 500, p.name  # a curve was drawn
        assert (img < 64).all(axis=2).sum() > 500, p.name  # and text, ticks and frame


@needs_matplotlib
def test_plot_figures_hold_the_series() -> None:
    from simcore.bicycle.plots import (
        pole_locus_plot,
        sideslip_step_plot,
        step_response_plot,
        yaw_rate_gain_plot,
    )

    def labels(fig) -> list[str]:
        (ax,) = fig.axes
        return [t.get_text() for t in ax.get_legend().get_texts()]

    vch = characteristic_speed(US)
    fig = yaw_rate_gain_plot(US)
    assert labels(fig) == ["r/δ", "neutral V/L", f"V_ch {vch:.3g} m/s", "V 20 m/s"]
    (ax,) = fig.axes
    gain = ax.get_lines()[0]
    np.testing.assert_allclose(gain.get_ydata(), steady_state_yaw_rate_gain(US, gain.get_xdata()))
    assert ax.get_lines()[2].get_xdata()[0] == pytest.approx(vch)  # the V_ch marker
    assert ax.get_title() == "Steady-state yaw-rate gain" and ax.get_xlabel() == "speed V (m/s)"
    vcrit = critical_speed(OS)
    assert labels(yaw_rate_gain_plot(OS)) == ["r/δ", "neutral V/L", f"V_crit {vcrit:.3g} m/s", "V 20 m/s"]

    fig = step_response_plot(US)
    assert labels(fig) == ["r(t)", "steady state"]
    r_line, ss = fig.axes[0].get_lines()
    assert ss.get_ydata()[0] == pytest.approx(math.degrees(steady_state(US, math.radians(1.0))[1]))
    assert r_line.get_ydata()[0] == 0.0
    assert r_line.get_ydata()[-1] == pytest.approx(ss.get_ydata()[0], rel=1e-3)  # settled
    assert labels(sideslip_step_plot(US)) == ["β(t)", "steady state"]

    fig = pole_locus_plot(US)
    assert labels(fig) == ["pole 1", "pole 2", "at V 20 m/s"]
    bars = fig.axes[0].get_lines()[2:]
    poles = sorted(yaw_rate_transfer_function(US).poles, key=lambda z: z.imag)
    assert sorted(b.get_ydata()[0] for b in bars) == pytest.approx([z.imag for z in poles])


def test_plots_without_matplotlib_name_the_extra(tmp_path, monkeypatch, capsys) -> None:
    from pvdkit.cli import main
    from simcore.bicycle.plots import write_plots

    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)  # import of it fails as if not installed
    line = "--plots needs the plots extra: pip install 'pvdkit[plots]'"
    with pytest.raises(PvdError) as exc:
        write_plots(US, tmp_path / "plots")
    assert str(exc.value) == line
    assert not (tmp_path / "plots").exists()  # checked before the folder is made
    assert main(["bicycle", "--plots", str(tmp_path / "cli")]) == 2
    err = capsys.readouterr().err
    assert err.endswith(line + "\n") and err.count("\n") == 1
