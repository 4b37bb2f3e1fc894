"""PNG plots of a bicycle-model analysis (what ``pvdkit bicycle --plots DIR`` writes).

Drawn by :mod:`pvdkit.plots` (matplotlib, the ``plots`` extra); each builder returns the
matplotlib ``Figure`` so that a notebook or a test can inspect or restyle it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pvdkit import plots
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

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Steer step used by the step-response plots (1 degree).
STEP_STEER = math.radians(1.0)

#: Size of every plot, pixels.
WIDTH, HEIGHT = 900, 560


def speed_range(p: BicycleParams, samples: int = 400) -> np.ndarray:
    """Speeds (m/s) worth plotting: past twice the characteristic speed and the params' speed, or
    up to 98 % of the critical speed for an oversteering vehicle."""
    vcrit = critical_speed(p)
    vch = characteristic_speed(p)
    top = max(40.0, 1.5 * p.speed, 2.5 * vch if vch else 0.0)
    if vcrit is not None:
        top = 0.98 * vcrit
    return np.linspace(0.5, top, samples)


def _chart(title: str, xlabel: str, ylabel: str) -> tuple[Figure, Axes]:
    fig, (ax,) = plots.figure(WIDTH, HEIGHT)
    ax.set_title(title, fontsize=13)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return fig, ax


def _marker(ax: Axes, *, x: float | None = None, y: float | None = None, color: str = "#5a5a5a",
            label: str | None = None) -> None:
    """A dashed vertical (``x``) or horizontal (``y``) marker line across the axes."""
    if x is not None:
        ax.axvline(x, color=color, linestyle="--", linewidth=1.2, label=label)
    if y is not None:
        ax.axhline(y, color=color, linestyle="--", linewidth=1.2, label=label)


def yaw_rate_gain_plot(p: BicycleParams) -> Figure:
    """Steady-state r/δ against speed, with the neutral-steer line V/L and the speed markers."""
    v = speed_range(p)
    g = steady_state_yaw_rate_gain(p, v)
    fig, ax = _chart("Steady-state yaw-rate gain", "speed V (m/s)", "r/δ (1/s)")
    ax.plot(v, g, color=plots.BLUE, linewidth=2, label="r/δ")
    ax.plot(v, v / p.wheelbase, color=plots.GREY, linewidth=2, linestyle="--", label="neutral V/L")
    ax.set_xlim(float(v[0]), float(v[-1]))
    ax.set_ylim(0.0, float(np.nanmax(g)) * 1.15)
    vch, vcrit = characteristic_speed(p), critical_speed(p)
    if vch is not None:
        _marker(ax, x=vch, color=plots.RED, label=f"V_ch {vch:.3g} m/s")
    if vcrit is not None:
        _marker(ax, x=vcrit, color=plots.RED, label=f"V_crit {vcrit:.3g} m/s")
    _marker(ax, x=p.speed, color=plots.GREEN, label=f"V {p.speed:.3g} m/s")
    ax.legend(loc="upper right")
    return fig


def _step_times(p: BicycleParams) -> np.ndarray:
    poles = np.linalg.eigvals(state_space(p)[0])
    slowest = float(np.max(poles.real))
    horizon = 6.0 / -slowest if slowest < 0.0 else 3.0
    return np.linspace(0.0, min(max(horizon, 0.5), 20.0), 600)


def _step_plot(p: BicycleParams, state: int, title: str, ylabel: str, label: str, color: str) -> Figure:
    """State ``state`` (0 sideslip, 1 yaw rate) after a 1° steer step, in degrees, with its
    steady-state value (when the vehicle has one)."""
    t = _step_times(p)
    response = step_response(p, STEP_STEER, t)[state]
    fig, ax = _chart(f"{title}, 1° steer step at {p.speed:.3g} m/s", "time (s)", ylabel)
    ax.plot(t, np.degrees(response), color=color, linewidth=2, label=label)
    ax.set_xlim(float(t[0]), float(t[-1]))
    if math.isfinite(float(steady_state_yaw_rate_gain(p))):
        _marker(ax, y=math.degrees(steady_state(p, STEP_STEER)[state]), label="steady state")
    ax.legend(loc="lower right")
    return fig


def step_response_plot(p: BicycleParams) -> Figure:
    """Yaw rate after a 1° steer step, with its steady-state value."""
    return _step_plot(p, 1, "Yaw rate", "yaw rate r (°/s)", "r(t)", plots.BLUE)


def sideslip_step_plot(p: BicycleParams) -> Figure:
    """Sideslip after a 1° steer step, with its steady-state value."""
    return _step_plot(p, 0, "Sideslip", "sideslip β (°)", "β(t)", plots.RED)


def pole_locus_plot(p: BicycleParams) -> Figure:
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
    fig, ax = _chart("Poles of r/δ as speed rises", "real part (1/s)", "imaginary part (rad/s)")
    ax.plot(upper.real, upper.imag, color=plots.BLUE, linewidth=2, label="pole 1")
    ax.plot(lower.real, lower.imag, color=plots.RED, linewidth=2, label="pole 2")
    reals = np.concatenate([upper.real, lower.real])
    ax.set_xlim(float(reals.min()) * 1.05, max(0.0, float(reals.max())) + 0.05 * float(np.ptp(reals)))
    for k, z in enumerate(yaw_rate_transfer_function(p).poles):
        ax.plot([z.real - 0.3, z.real + 0.3], [z.imag, z.imag], color=plots.BLACK, linewidth=3,
                label=f"at V {p.speed:.3g} m/s" if k == 0 else None)
    ax.legend(loc="best")
    return fig


#: File name -> plot builder, in the order :func:`write_plots` writes them.
PLOTS: dict[str, Callable[[BicycleParams], Figure]] = {
    "yaw_rate_gain.png": yaw_rate_gain_plot,
    "step_response.png": step_response_plot,
    "sideslip_step.png": sideslip_step_plot,
    "pole_locus.png": pole_locus_plot,
}


def write_plots(p: BicycleParams, directory: str | os.PathLike) -> list[Path]:
    """Write every plot of :data:`PLOTS` into ``directory`` (created if missing; its parent
    folder must exist, as for every pvdkit output); returns the paths. Needs the ``plots``
    extra (matplotlib); without it, one :class:`~pvdkit.types.PvdError` line names it."""
    p.validate()
    return plots.write_pngs(directory, ((name, build(p)) for name, build in PLOTS.items()))
