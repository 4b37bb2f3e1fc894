"""PNG plots of a bicycle-model analysis (what ``pvdkit bicycle --plots DIR`` writes)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from simcore.bicycle.analysis import (
    characteristic_speed,
    critical_speed,
    steady_state,
    steady_state_yaw_rate_gain,
    step_response,
    yaw_rate_transfer_function,
)
from simcore.bicycle.functions import state_space
from simcore.bicycle.params import BicycleParams
from simcore.bicycle.png import Plot

#: Steer step used by the step-response plots (1 degree).
STEP_STEER = math.radians(1.0)


def speed_range(p: BicycleParams, samples: int = 400) -> np.ndarray:
    """Speeds (m/s) worth plotting: past twice the characteristic speed and the params' speed, or
    up to 98 % of the critical speed for an oversteering vehicle."""
    vcrit = critical_speed(p)
    vch = characteristic_speed(p)
    top = max(40.0, 1.5 * p.speed, 2.5 * vch if vch else 0.0)
    if vcrit is not None:
        top = 0.98 * vcrit
    return np.linspace(0.5, top, samples)


def yaw_rate_gain_plot(p: BicycleParams) -> Plot:
    """Steady-state r/δ against speed, with the neutral-steer line V/L and the speed markers."""
    v = speed_range(p)
    plot = Plot("STEADY-STATE YAW-RATE GAIN", "SPEED (M/S)", "R/DELTA (1/S)")
    plot.line(v, steady_state_yaw_rate_gain(p, v), label="R/DELTA")
    plot.line(v, v / p.wheelbase, color=(150, 150, 150), label="NEUTRAL V/L", dashed=True)
    vch, vcrit = characteristic_speed(p), critical_speed(p)
    g = steady_state_yaw_rate_gain(p, v)
    plot.ylim = (0.0, float(np.nanmax(g)) * 1.15)
    if vch is not None:
        plot.vline(vch, (214, 39, 40), label=f"VCH {vch:.3g} M/S")
    if vcrit is not None:
        plot.vline(vcrit, (214, 39, 40), label=f"VCRIT {vcrit:.3g} M/S")
    plot.vline(p.speed, (44, 160, 44), label=f"V {p.speed:.3g} M/S")
    return plot


def _step_times(p: BicycleParams) -> np.ndarray:
    poles = np.linalg.eigvals(state_space(p)[0])
    slowest = float(np.max(poles.real))
    horizon = 6.0 / -slowest if slowest < 0.0 else 3.0
    return np.linspace(0.0, min(max(horizon, 0.5), 20.0), 600)


def step_response_plot(p: BicycleParams) -> Plot:
    """Yaw rate after a 1° steer step, with its steady-state value."""
    t = _step_times(p)
    _, r = step_response(p, STEP_STEER, t)
    plot = Plot(f"YAW RATE, 1 DEG STEER STEP AT {p.speed:.3g} M/S", "TIME (S)", "YAW RATE (DEG/S)",
                legend="lower right")
    plot.line(t, np.degrees(r), label="R(T)")
    gain = float(steady_state_yaw_rate_gain(p))
    if math.isfinite(gain):
        plot.hline(math.degrees(steady_state(p, STEP_STEER)[1]), label="STEADY STATE")
    return plot


def sideslip_step_plot(p: BicycleParams) -> Plot:
    """Sideslip after a 1° steer step, with its steady-state value."""
    t = _step_times(p)
    beta, _ = step_response(p, STEP_STEER, t)
    plot = Plot(f"SIDESLIP, 1 DEG STEER STEP AT {p.speed:.3g} M/S", "TIME (S)", "BETA (DEG)",
                legend="lower right")
    plot.line(t, np.degrees(beta), color=(214, 39, 40), label="BETA(T)")
    if math.isfinite(float(steady_state_yaw_rate_gain(p))):
        plot.hline(math.degrees(steady_state(p, STEP_STEER)[0]), label="STEADY STATE")
    return plot


def pole_locus_plot(p: BicycleParams) -> Plot:
    """The two poles of r/δ in the complex plane as the speed sweeps :func:`speed_range` (from 5 m/s:
    at walking pace the poles sit far out on the real axis); short black bars mark the params'
    own speed."""
    v = speed_range(p)
    v = v[v >= min(5.0, 0.5 * p.speed)]
    m, iz = p.mass, p.iz
    a1 = (p.cf + p.cr) / (m * v) + (p.lf ** 2 * p.cf + p.lr ** 2 * p.cr) / (iz * v)
    a0 = p.cf * p.cr * p.wheelbase ** 2 / (m * iz * v * v) - (p.lf * p.cf - p.lr * p.cr) / iz
    root = np.sqrt((a1 * a1 - 4.0 * a0).astype(np.complex128))
    upper, lower = (-a1 + root) / 2.0, (-a1 - root) / 2.0
    plot = Plot("POLES OF R/DELTA AS SPEED RISES", "REAL PART (1/S)", "IMAGINARY PART (RAD/S)")
    plot.line(upper.real, upper.imag, label="POLE 1")
    plot.line(lower.real, lower.imag, label="POLE 2")
    reals = np.concatenate([upper.real, lower.real])
    plot.xlim = (float(reals.min()) * 1.05, max(0.0, float(reals.max())) + 0.05 * float(np.ptp(reals)))
    here = yaw_rate_transfer_function(p).poles
    for z in here:
        plot.line(np.array([z.real - 0.3, z.real + 0.3]), np.array([z.imag, z.imag]), color=(0, 0, 0),
                  width=3)
    return plot


#: File name -> plot builder, in the order :func:`write_plots` writes them.
PLOTS = {
    "yaw_rate_gain.png": yaw_rate_gain_plot,
    "step_response.png": step_response_plot,
    "sideslip_step.png": sideslip_step_plot,
    "pole_locus.png": pole_locus_plot,
}


def write_plots(p: BicycleParams, directory: str | os.PathLike) -> list[Path]:
    """Write every plot of :data:`PLOTS` into ``directory`` (created if missing; its parent
    folder must exist, as for every pvdkit output); returns the paths."""
    from pvdkit.outputs import output_folder

    p.validate()
    out = output_folder(directory, "plot folder")
    paths = []
    for name, build in PLOTS.items():
        path = out / name
        build(p).save(path)
        paths.append(path)
    return paths
