"""Handling analysis of the linear bicycle model: closed forms for steady state and dynamics.

Everything here follows from the state-space form of :mod:`simcore.bicycle.functions`:

* understeer gradient K = (m / L)(lr / Cf − lf / Cr) in rad per (length / time^2): the extra
  steer needed per unit of lateral acceleration beyond the kinematic (Ackermann) steer L / R,
  δ = L / R + K a_y. K > 0 understeer, K < 0 oversteer, K = 0 neutral.
* steady-state yaw-rate gain r / δ = V / (L + K V²) = (V / L) / (1 + K V² / L).
* characteristic speed √(L / K) (K > 0): where r / δ peaks, at V_ch / (2 L).
* critical speed √(−L / K) (K < 0): where L + K V² = 0; above it no stable steady state exists.
* yaw-rate transfer function r(s) / δ(s) = (b1 s + b0) / (s² + a1 s + a0) with
  a1 = (Cf + Cr) / (m V) + (lf² Cf + lr² Cr) / (I_z V),
  a0 = Cf Cr L² / (m I_z V²) − (lf Cf − lr Cr) / I_z = Cf Cr L (L + K V²) / (m I_z V²),
  b1 = lf Cf / I_z, b0 = Cf Cr L / (m I_z V); natural frequency ω_n = √a0 and damping
  ratio ζ = a1 / (2 ω_n) when a0 > 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from simcore.bicycle.functions import expm, state_space
from simcore.bicycle.params import BicycleParams

#: Relative tolerance on L + K V^2 below which a speed counts as (at or above) critical.
_EPS = 1e-9
#: Step-response settling band (fraction of the final value).
SETTLING_BAND = 0.02


def understeer_gradient(p: BicycleParams) -> float:
    """K = (m / L)(lr / Cf − lf / Cr), rad per (length / time^2); > 0 understeer."""
    return p.mass / p.wheelbase * (p.lr / p.cf - p.lf / p.cr)


def characteristic_speed(p: BicycleParams) -> float | None:
    """√(L / K) for an understeering vehicle (K > 0), where the yaw-rate gain peaks; else None."""
    k = understeer_gradient(p)
    return math.sqrt(p.wheelbase / k) if k > 0.0 else None


def critical_speed(p: BicycleParams) -> float | None:
    """√(−L / K) for an oversteering vehicle (K < 0), the stability limit; else None."""
    k = understeer_gradient(p)
    return math.sqrt(-p.wheelbase / k) if k < 0.0 else None


def steady_state_yaw_rate_gain(p: BicycleParams, speed: float | np.ndarray | None = None) -> np.ndarray:
    """r / δ in steady turning, V / (L + K V²) (1 / time), at ``speed`` (default: the params').

    NaN at and above the critical speed, where the steady state exists only as an unstable
    equilibrium that the vehicle never reaches."""
    v = np.asarray(p.speed if speed is None else speed, dtype=np.float64)
    den = p.wheelbase + understeer_gradient(p) * v * v
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > _EPS * p.wheelbase, v / den, np.nan)


def steady_state_sideslip_gain(p: BicycleParams, speed: float | np.ndarray | None = None) -> np.ndarray:
    """β / δ in steady turning, (lr − m lf V² / (L Cr)) / (L + K V²) (dimensionless); NaN at and
    above the critical speed. Changes sign at V = √(lr L Cr / (m lf)): above it the tail swings
    out (β < 0 for a left turn)."""
    v = np.asarray(p.speed if speed is None else speed, dtype=np.float64)
    den = p.wheelbase + understeer_gradient(p) * v * v
    num = p.lr - p.mass * p.lf * v * v / (p.wheelbase * p.cr)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > _EPS * p.wheelbase, num / den, np.nan)


def steady_state(p: BicycleParams, steer: float) -> tuple[float, float]:
    """(β, r) solving A x + B δ = 0 directly (the closed forms above, computed another way)."""
    a, b = state_space(p)
    x = np.linalg.solve(a, -b * steer)
    return float(x[0]), float(x[1])


@dataclass(frozen=True)
class TransferFunction:
    """A rational transfer function num(s) / den(s), coefficients highest power first."""

    numerator: tuple[float, ...]
    denominator: tuple[float, ...]

    @property
    def poles(self) -> np.ndarray:
        """Roots of the denominator (complex, sorted by real part then imaginary part)."""
        return np.sort_complex(np.roots(self.denominator).astype(np.complex128))

    @property
    def zeros(self) -> np.ndarray:
        """Roots of the numerator."""
        return np.roots(self.numerator).astype(np.complex128)

    @property
    def dc_gain(self) -> float:
        """Value at s = 0 (the steady-state gain of a stable system)."""
        return self.numerator[-1] / self.denominator[-1]

    def __call__(self, s: complex | np.ndarray) -> np.ndarray:
        """Evaluate at ``s`` (e.g. ``1j * omega`` for the frequency response)."""
        return np.polyval(self.numerator, s) / np.polyval(self.denominator, s)

    @property
    def natural_frequency(self) -> float | None:
        """ω_n = √a0 of a second-order denominator s² + a1 s + a0 with a0 > 0 (rad / time); else None."""
        if len(self.denominator) != 3 or not self.denominator[2] / self.denominator[0] > 0.0:
            return None
        return math.sqrt(self.denominator[2] / self.denominator[0])

    @property
    def damping_ratio(self) -> float | None:
        """ζ = a1 / (2 ω_n) (dimensionless), None when ω_n is."""
        wn = self.natural_frequency
        if wn is None:
            return None
        return self.denominator[1] / self.denominator[0] / (2.0 * wn)


def yaw_rate_transfer_function(p: BicycleParams) -> TransferFunction:
    """r(s) / δ(s) from the closed-form coefficients (see the module docstring)."""
    m, v, iz, l_ = p.mass, p.speed, p.iz, p.wheelbase
    a1 = (p.cf + p.cr) / (m * v) + (p.lf ** 2 * p.cf + p.lr ** 2 * p.cr) / (iz * v)
    a0 = p.cf * p.cr * l_ * l_ / (m * iz * v * v) - (p.lf * p.cf - p.lr * p.cr) / iz
    b1 = p.lf * p.cf / iz
    b0 = p.cf * p.cr * l_ / (m * iz * v)
    return TransferFunction((b1, b0), (1.0, a1, a0))


def sideslip_transfer_function(p: BicycleParams) -> TransferFunction:
    """β(s) / δ(s) = (B1 s + A12 B2 − A22 B1) / (s² + a1 s + a0), from the state-space matrices."""
    a, b = state_space(p)
    return TransferFunction((b[0], a[0, 1] * b[1] - a[1, 1] * b[0]),
                            (1.0, -float(np.trace(a)), float(np.linalg.det(a))))


def step_response(p: BicycleParams, steer: float, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(β(t), r(t)) after a steer step δ = ``steer`` at t = 0 from straight running, in closed
    form x(t) = (I − e^{A t}) x_ss with x_ss = −A⁻¹ B δ (A's eigen-decomposition; the matrix
    exponential where A is defective or singular)."""
    t = np.asarray(times, dtype=np.float64)
    a, b = state_space(p)
    bd = b * steer
    lam, vec = np.linalg.eig(a)
    if abs(np.linalg.det(a)) > 1e-12 * max(1.0, float(np.max(np.abs(a)))) ** 2 and np.linalg.cond(vec) < 1e8:
        x_ss = np.linalg.solve(a, -bd)
        coeff = np.linalg.solve(vec, -x_ss.astype(np.complex128))  # x(0) - x_ss in the eigenbasis
        modes = np.exp(np.outer(t, lam)) * coeff  # (n, 2)
        x = x_ss[None, :] + np.real(modes @ vec.T)
        return x[:, 0], x[:, 1]
    out = np.empty((t.size, 2))
    m = np.zeros((3, 3))
    m[:2, :2] = a
    m[:2, 2] = bd
    for i, ti in enumerate(t.reshape(-1)):
        out[i] = expm(m * ti)[:2, 2]
    return out[:, 0].reshape(t.shape), out[:, 1].reshape(t.shape)


@dataclass(frozen=True)
class StepMetrics:
    """Yaw-rate step-response figures (times in ``time``, overshoot in percent of the final value).

    ``rise_time``: 10 % to 90 % of the final value; ``peak_time`` / ``overshoot``: first maximum
    (overshoot 0 when r never exceeds its final value); ``settling_time``: last time |r − r_ss|
    leaves the 2 % band."""

    final_value: float
    rise_time: float
    peak_time: float
    overshoot: float
    settling_time: float


def step_metrics(p: BicycleParams, steer: float = 1.0, samples: int = 4001) -> StepMetrics | None:
    """:class:`StepMetrics` of r(t) after a steer step, from the closed-form response on a grid
    spanning eight times the slowest pole's time constant; None for an unstable vehicle."""
    poles = np.linalg.eigvals(state_space(p)[0])
    slowest = float(np.max(poles.real))
    if slowest >= 0.0:
        return None
    t = np.linspace(0.0, 8.0 / -slowest, samples)
    _, r = step_response(p, steer, t)
    r_ss = steady_state(p, steer)[1]
    y = r / r_ss
    rise = float(np.interp(0.9, *_monotone_prefix(t, y)) - np.interp(0.1, *_monotone_prefix(t, y)))
    k = int(np.argmax(y))
    overshoot = max(0.0, (float(y[k]) - 1.0) * 100.0)
    outside = np.flatnonzero(np.abs(y - 1.0) > SETTLING_BAND)
    settling = float(t[outside[-1] + 1]) if outside.size and outside[-1] + 1 < t.size else float(t[0])
    return StepMetrics(r_ss, rise, float(t[k]) if overshoot > 0.0 else float("nan"), overshoot, settling)


def _monotone_prefix(t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The normalised response up to its first maximum as an increasing (y, t) table for interp."""
    k = int(np.argmax(y >= 0.999 * np.max(y)))
    yy = np.maximum.accumulate(y[: k + 1])
    keep = np.concatenate(([True], np.diff(yy) > 0.0))
    return yy[keep], t[: k + 1][keep]


@dataclass(frozen=True)
class BicycleAnalysis:
    """Everything :func:`analyse` computes for one set of params (see the module docstring)."""

    params: BicycleParams
    understeer_gradient: float
    characteristic_speed: float | None
    critical_speed: float | None
    yaw_rate_gain: float
    sideslip_gain: float
    lateral_acceleration_gain: float
    yaw_rate_tf: TransferFunction
    stable: bool
    step: StepMetrics | None

    @property
    def poles(self) -> np.ndarray:
        """Poles of r/δ (rad / time)."""
        return self.yaw_rate_tf.poles

    @property
    def natural_frequency(self) -> float | None:
        """ω_n of r/δ (rad / time), None above the critical speed."""
        return self.yaw_rate_tf.natural_frequency

    @property
    def damping_ratio(self) -> float | None:
        """ζ of r/δ, None above the critical speed."""
        return self.yaw_rate_tf.damping_ratio

    @property
    def handling(self) -> str:
        """``"understeer"``, ``"oversteer"`` or ``"neutral"`` from the sign of K."""
        k = self.understeer_gradient
        return "understeer" if k > 0.0 else "oversteer" if k < 0.0 else "neutral"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the params (m, iz, lf, lr, cf, cr, speed), then the analysis; None (JSON
        null) where a value does not apply."""
        tf = self.yaw_rate_tf
        out: dict[str, Any] = dict(self.params.as_dict())
        out.update({
            "wheelbase": self.params.wheelbase,
            "understeer_gradient": self.understeer_gradient,
            "characteristic_speed": self.characteristic_speed,
            "critical_speed": self.critical_speed,
            "handling": self.handling,
            "stable": self.stable,
            "steady_state": {
                "yaw_rate_gain": _finite_or_none(self.yaw_rate_gain),
                "sideslip_gain": _finite_or_none(self.sideslip_gain),
                "lateral_acceleration_gain": _finite_or_none(self.lateral_acceleration_gain),
            },
            "yaw_rate_transfer_function": {
                "numerator": list(tf.numerator),
                "denominator": list(tf.denominator),
                "poles": [[float(z.real), float(z.imag)] for z in tf.poles],
                "natural_frequency": tf.natural_frequency,
                "damping_ratio": tf.damping_ratio,
            },
            "step_response": None if self.step is None else {
                "final_yaw_rate_per_rad": self.step.final_value,
                "rise_time": self.step.rise_time,
                "peak_time": _finite_or_none(self.step.peak_time),
                "overshoot_percent": self.step.overshoot,
                "settling_time": self.step.settling_time,
            },
        })
        return out

    def format(self) -> str:
        """A human-readable report (what ``pvdkit bicycle`` prints)."""
        p = self.params
        tf = self.yaw_rate_tf

        def opt(v: float | None, fmt: str, unit: str = "") -> str:
            return "n/a" if v is None or not math.isfinite(v) else f"{v:{fmt}}{unit}"

        poles = ", ".join(f"{z.real:.4g}{z.imag:+.4g}j" if abs(z.imag) > 0 else f"{z.real:.4g}"
                          for z in tf.poles)
        lines = [
            "linear bicycle model",
            f"  m  = {p.mass:g} kg      Iz = {p.iz:g} kg m^2",
            f"  lf = {p.lf:g} m        lr = {p.lr:g} m        L = {p.wheelbase:g} m",
            f"  Cf = {p.cf:g} N/rad   Cr = {p.cr:g} N/rad",
            f"  V  = {p.speed:g} m/s",
            "steady state",
            f"  understeer gradient K   {self.understeer_gradient:.6g} rad/(m/s^2)  ({self.handling})",
            f"  characteristic speed    {opt(self.characteristic_speed, '.4g', ' m/s')}",
            f"  critical speed          {opt(self.critical_speed, '.4g', ' m/s')}",
            f"  yaw-rate gain r/delta   {opt(self.yaw_rate_gain, '.5g', ' 1/s')}",
            f"  sideslip gain b/delta   {opt(self.sideslip_gain, '.5g')}",
            f"  lat. accel. gain        {opt(self.lateral_acceleration_gain, '.5g', ' m/s^2 per rad')}",
            "yaw-rate transfer function r/delta = (b1 s + b0) / (s^2 + a1 s + a0)",
            f"  b1 = {tf.numerator[0]:.6g}  b0 = {tf.numerator[1]:.6g}",
            f"  a1 = {tf.denominator[1]:.6g}  a0 = {tf.denominator[2]:.6g}",
            f"  poles                   {poles}  ({'stable' if self.stable else 'UNSTABLE'})",
            f"  natural frequency       {opt(tf.natural_frequency, '.4g', ' rad/s')}",
            f"  damping ratio           {opt(tf.damping_ratio, '.4g')}",
        ]
        if self.step is not None:
            lines += [
                "step response of r (steer step at t = 0)",
                f"  rise time (10-90 %)     {self.step.rise_time:.4g} s",
                f"  peak time               {opt(self.step.peak_time, '.4g', ' s')}",
                f"  overshoot               {self.step.overshoot:.3g} %",
                f"  settling time (2 %)     {self.step.settling_time:.4g} s",
            ]
        return "\n".join(lines)


def _finite_or_none(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


def analyse(p: BicycleParams) -> BicycleAnalysis:
    """Validate ``p`` and compute every figure of :class:`BicycleAnalysis`."""
    p.validate()
    tf = yaw_rate_transfer_function(p)
    stable = bool(np.all(tf.poles.real < 0.0))
    gain = float(steady_state_yaw_rate_gain(p))
    return BicycleAnalysis(
        params=p,
        understeer_gradient=understeer_gradient(p),
        characteristic_speed=characteristic_speed(p),
        critical_speed=critical_speed(p),
        yaw_rate_gain=gain,
        sideslip_gain=float(steady_state_sideslip_gain(p)),
        lateral_acceleration_gain=gain * p.speed,
        yaw_rate_tf=tf,
        stable=stable,
        step=step_metrics(p) if stable else None,
    )
