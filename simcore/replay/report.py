"""What a replay measured: per vehicle and quantity, how far simcore is from PhysX, and where.

For a quantity with recorded values ``r`` and simulated ``s`` over the replayed steps (each step a
vector: the wheels, the force components …): ``rms_error = sqrt(mean((s - r)^2))``,
``rms_signal = sqrt(mean(r^2))``, ``relative`` their ratio, ``max_error`` the largest ``|s - r|``
and ``max_step`` its step, ``first_step_over`` the first step whose RMS error exceeds
``tolerance * rms_signal`` (None if none), ``phase`` the control phase (a run of steps with the same
kind of driver input) holding the largest share of the squared error. The chassis position is
judged against the distance travelled (its ``rms_signal`` is the RMS displacement from the start).
Gear and sticky-tire status count mismatched steps; gear shifts are paired with PhysX's.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pvdkit import outputs
from simcore.commands.states import AUTOMATIC_GEAR, DirectDriveGear
from simcore.replay.engine import ReplayVehicle, recorded_series
from simcore.replay.recorded import RecordedVehicle

#: Default relative-RMS tolerance of ``pvdkit replay``.
DEFAULT_TOLERANCE = 0.02
#: Quantities the open-loop verdict (exit status) looks at: wheel speeds on the steady steps
#: only (see :func:`chatter_steps`), engine and chassis speed on every step.
JUDGED = ("wheel_speed_steady", "engine_speed", "chassis_speed")
#: In one-step mode every continuous quantity is judged (the equations alone).
JUDGED_ONE_STEP = ("wheel_speed", "engine_speed", "jounce", "tire_force", "chassis_speed")
#: Unit of each continuous quantity's errors (the report's "max error" column).
UNITS = {"wheel_speed": "rad/s", "wheel_speed_steady": "rad/s", "engine_speed": "rad/s", "jounce": "m",
         "tire_force": "N", "chassis_speed": "m/s", "chassis_position": "m"}
#: A recorded wheel speed's step-to-step change smaller than this (rad/s) is not chatter.
CHATTER_JUMP = 0.1
#: Steps after a chatter during which the replay is still settling back onto PhysX's wheels.
CHATTER_SETTLE = 5


def chatter_steps(wheel_speed: np.ndarray) -> np.ndarray:
    """Per step (rows of ``wheel_speed``, one column per wheel): does some wheel chatter there —
    its speed jumping up, down and up again (or down, up, down) by more than ``CHATTER_JUMP``
    each time — or did one chatter in the ``CHATTER_SETTLE`` steps before?

    Why: at low speed PhysX's own wheels jump back and forth from step to step (the tire
    model's limit cycle), with a phase so sensitive to the start that no open-loop replay can
    follow it, whatever the drivetrain; one step at a time simcore does (one-step mode judges
    those steps). Outside them the open-loop replay follows PhysX's wheels to 1e-3 or better
    (``tests/simcore/test_replay.py``)."""
    w = np.asarray(wheel_speed, dtype=float)
    d = np.diff(w, axis=0)
    out = np.zeros(len(w), dtype=bool)
    if len(d) < 3:
        return out
    big = np.abs(d) > CHATTER_JUMP
    flips = ((d[:-2] * d[1:-1] < 0) & (d[1:-1] * d[2:] < 0) & big[:-2] & big[1:-1] & big[2:]).any(axis=1)
    for k in range(4 + CHATTER_SETTLE):  # d[i], d[i+1], d[i+2] span steps i..i+3
        n = min(len(flips), len(w) - k)  # a replay of a few steps ends before the settling does
        if n <= 0:
            break
        out[k:k + n] |= flips[:n]
    return out


def control_phases(rv: RecordedVehicle, steps: np.ndarray) -> list[tuple[str, int, int]]:
    """(label, first step, last step) runs of the same kind of driver input: handbrake, brake,
    throttle, steer (a tank's tracks thrust unequally), reverse (reverse gear requested, a tank's
    track thrust backwards, a raw vehicle's drive torque negative), else coast."""
    c = rv.commands.get("commands")
    if c is not None:
        throttle, steer = c["throttle"], c["steer"].astype(bool)
        n = len(throttle)
        reverse = np.zeros(n, bool)
        brake, handbrake = c["brakes"][:, 0], c["brakes"][:, 1]
        direct = rv.commands.get("direct_drive_transmission")
        engine = rv.commands.get("engine_drive_transmission") or rv.commands.get("tank_drive_transmission")
        if direct is not None:
            reverse = np.asarray(direct["gear"]).reshape(-1)[:n] == int(DirectDriveGear.REVERSE)
        elif engine is not None and rv.params.gearbox is not None:  # gears below neutral reverse
            target = np.asarray(engine["target_gear"]).reshape(-1)[:n]
            reverse = (target < rv.params.gearbox.neutral_gear) & (target != AUTOMATIC_GEAR)
            thrusts = engine.get("thrusts")
            if thrusts is not None:  # a tank steers and reverses by its tracks' thrusts
                reverse = reverse | (thrusts < 0).any(axis=1)
                steer = steer | (thrusts[:, 0] != thrusts[:, 1])
    else:  # raw: the per-wheel responses
        r = rv.responses
        throttle = np.abs(r["drive"]).max(axis=1)
        reverse = (r["drive"] < 0).any(axis=1)
        brake = np.abs(r["brake"]).max(axis=1)
        handbrake = np.zeros_like(brake)
        steer = np.abs(r["steer"]).max(axis=1) != 0
    labels = []
    for i in steps:
        parts = [name for name, on in (("handbrake", handbrake[i] > 0), ("brake", brake[i] > 0),
                                       ("throttle", throttle[i] > 0), ("steer", steer[i]),
                                       ("reverse", reverse[i])) if on]
        labels.append("+".join(parts) or "coast")
    phases: list[tuple[str, int, int]] = []
    for i, label in zip(steps, labels, strict=True):
        if phases and phases[-1][0] == label and phases[-1][2] == i - 1:
            phases[-1] = (label, phases[-1][1], int(i))
        else:
            phases.append((label, int(i), int(i)))
    return phases


def _phase_of(err2: np.ndarray, steps: np.ndarray, phases: list[tuple[str, int, int]]) -> str | None:
    total = float(err2.sum())
    if not total > 0.0:
        return None
    best, share = None, -1.0
    for label, a, b in phases:
        s = float(err2[(steps >= a) & (steps <= b)].sum())
        if s > share:
            best, share = f"{label} (steps {a}-{b}, {100 * s / total:.0f}% of the error)", s
    return best


def _continuous(sim: np.ndarray, rec: np.ndarray, steps: np.ndarray, tolerance: float,
                phases: list[tuple[str, int, int]], displacement: bool = False) -> dict[str, Any]:
    err = sim - rec
    per_step = np.sqrt((err ** 2).mean(axis=1))
    signal = rec - rec[0] if displacement else rec
    rms_signal = float(np.sqrt((signal ** 2).mean()))
    rms_error = float(np.sqrt((err ** 2).mean()))
    worst = np.abs(err).max(axis=1)
    over = np.flatnonzero(per_step > tolerance * rms_signal) if rms_signal > 0 else np.array([], int)
    k = int(worst.argmax())
    if rms_signal > 0:
        relative = rms_error / rms_signal
    else:
        relative = 0.0 if rms_error == 0 else float("inf")
    return {"rms_error": rms_error, "rms_signal": rms_signal, "relative": relative,
            "max_error": float(worst[k]), "max_step": int(steps[k]),
            "first_step_over": int(steps[over[0]]) if over.size else None,
            "phase": _phase_of((err ** 2).sum(axis=1), steps, phases)}


def _shifts(gear: np.ndarray, steps: np.ndarray) -> list[tuple[int, int]]:
    change = np.flatnonzero(np.diff(gear) != 0) + 1
    return [(int(steps[i]), int(gear[i])) for i in change]


def _gear(sim: np.ndarray, rec: np.ndarray, steps: np.ndarray) -> dict[str, Any]:
    s, r = sim[:, 0].astype(int), rec[:, 0].astype(int)
    ss, rs = _shifts(s, steps), _shifts(r, steps)
    offsets = []
    for step, gear in rs:  # each PhysX shift: the nearest simcore shift into the same gear
        same = [st for st, g in ss if g == gear]
        offsets.append(min((st - step for st in same), key=abs) if same else None)
    return {"mismatched_steps": int((s != r).sum()), "shifts": len(rs), "simulated_shifts": len(ss),
            "shift_offsets": offsets,
            "max_shift_offset": max((abs(o) for o in offsets if o is not None), default=0)
            if all(o is not None for o in offsets) and len(ss) == len(rs) else None}


def _max_error(quantity: str, m: dict[str, Any]) -> str:
    return f"{m['max_error']:.3g} {UNITS.get(quantity, '')} @ {m['max_step']}"


@dataclass
class ReplayReport:
    """The report of one replay (``as_dict`` is the ``--report`` JSON)."""

    recording: str
    mode: str
    from_step: int
    steps: int
    tolerance: float
    vehicles: dict[str, dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return {"recording": self.recording, "mode": self.mode, "from": self.from_step, "steps": self.steps,
                "tolerance": self.tolerance, "vehicles": self.vehicles}

    @property
    def ok(self) -> bool:
        """Every judged quantity of every vehicle within tolerance (and the gear shifts matched)."""
        return all(v["ok"] for v in self.vehicles.values())

    def write_json(self, path: str | Path) -> None:
        text = json.dumps(self.as_dict(), indent=2, default=_json_default) + "\n"
        outputs.write_text(path, text, "--report")

    def rows(self) -> list[tuple[str, str, str, str, str, str, str]]:
        """Terminal table rows, sorted by first divergence (never-diverging last)."""
        out = []
        for name, v in self.vehicles.items():
            for q, m in v["quantities"].items():
                if "relative" not in m:
                    continue
                first = m["first_step_over"]
                judged = q in v["judged"]
                out.append((first if first is not None else 10 ** 9, name, q, m, judged))
        out.sort(key=lambda r: (r[0], r[1], r[2]))
        return [(name, q, f"{m['relative']:.2e}", _max_error(q, m),
                 "-" if m["first_step_over"] is None else str(m["first_step_over"]),
                 ("ok" if m["relative"] <= self.tolerance else "OVER") if judged else "(info)",
                 m["phase"] or "") for _, name, q, m, judged in out]

    def text(self) -> str:
        head = ("vehicle", "quantity", "rel. RMS", "max error @ step", "first over", "verdict", "where")
        rows = [head, *self.rows()]
        widths = [max(len(r[k]) for r in rows) for k in range(len(head) - 1)]
        lines = [f"replay ({self.mode}, steps {self.from_step}-{self.from_step + self.steps - 1}, "
                 f"tolerance {self.tolerance:g} relative RMS) of {self.recording}"]
        for r in rows:
            lines.append("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1])
        lines.append("rel. RMS: RMS error / RMS of PhysX's value; first over: the first step whose error "
                     "passes tolerance x that RMS (one step can while the run stays within);")
        lines.append("verdict: ok / OVER for the quantities judged, (info) for those only reported; where: "
                     "the control phase holding most of the error")
        for name, v in self.vehicles.items():
            extra = []
            g = v["quantities"].get("gear")
            if g is not None:
                extra.append(f"gear: {g['mismatched_steps']} steps differ, {g['shifts']} PhysX shifts, "
                             f"offsets {g['shift_offsets']}")
            st = v["quantities"].get("sticky")
            if st is not None:
                n = st["mismatched_steps"]
                extra.append(f"sticky tires: {n} step{'s' if n != 1 else ''} differ{'s' if n == 1 else ''}")
            if v.get("note"):
                extra.append(v["note"])
            lines.append(f"{name} ({v['kind']}): " + "; ".join(extra) + (" — ok" if v["ok"] else " — OVER"))
        return "\n".join(lines)

    def write_html(self, path: str | Path) -> None:
        rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>"
                       for r in self.rows())
        notes = "".join(f"<li><b>{html.escape(n)}</b> ({html.escape(v['kind'])}): "
                        f"{'ok' if v['ok'] else 'over tolerance'}"
                        f"{(' — ' + html.escape(v['note'])) if v.get('note') else ''}</li>"
                        for n, v in self.vehicles.items())
        page = ("<!doctype html><meta charset='utf-8'><title>pvdkit replay</title>"
                "<style>body{font-family:sans-serif}td,th{padding:2px 8px;border-bottom:1px solid #ddd}"
                "table{border-collapse:collapse}</style>"
                f"<h1>Replay of {html.escape(self.recording)}</h1>"
                f"<p>mode {html.escape(self.mode)}, "
                f"steps {self.from_step}-{self.from_step + self.steps - 1}, "
                f"tolerance {self.tolerance:g} (relative RMS)</p><ul>{notes}</ul>"
                "<table><tr><th>vehicle</th><th>quantity</th><th>relative RMS</th><th>max error @ step</th>"
                f"<th>first step over</th><th>verdict</th><th>where</th></tr>{rows}</table>\n")
        outputs.write_text(path, page, "--html")


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer | np.floating):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def build_report(recording: str, mode: str, from_step: int, replayed: list[ReplayVehicle],
                 tolerance: float = DEFAULT_TOLERANCE) -> ReplayReport:
    """Compare each replayed vehicle with its recording (see the module docstring)."""
    vehicles: dict[str, dict[str, Any]] = {}
    n = 0
    for rep in replayed:
        rv = rep.recorded
        rec = recorded_series(rv)
        n = len(next(iter(rep.simulated.values())))
        steps = np.arange(from_step, from_step + n)
        phases = control_phases(rv, steps)
        quantities: dict[str, Any] = {}
        for q, values in rep.simulated.items():
            sim = np.asarray(values)
            r = np.asarray(rec[q])[steps]
            if q == "gear":
                quantities[q] = _gear(sim, r, steps)
            elif q == "sticky":
                quantities[q] = {"mismatched_steps": int((sim != r.astype(bool)).any(axis=1).sum())}
            else:
                quantities[q] = _continuous(sim.astype(float), r.astype(float), steps, tolerance, phases,
                                            displacement=q == "chassis_position")
        chatter = chatter_steps(np.asarray(rec["wheel_speed"])[steps])
        note = ""
        if mode == "one-step":
            judged = JUDGED_ONE_STEP
        else:
            judged = JUDGED
            steady = ~chatter
            if steady.any():
                sim = np.asarray(rep.simulated["wheel_speed"], dtype=float)[steady]
                r = np.asarray(rec["wheel_speed"], dtype=float)[steps][steady]
                quantities["wheel_speed_steady"] = _continuous(sim, r, steps[steady], tolerance, phases)
            why = "the tire model's low-speed limit cycle; no open-loop replay can follow its phase"
            if chatter.all():
                by = "chassis and engine" if "engine_speed" in quantities else "chassis"
                note = f"PhysX's own wheels chatter at every step ({why}): judged by {by} speed"
            elif chatter.any():
                note = (f"PhysX's own wheels chatter at {int(chatter.sum())} of {len(steps)} steps ({why}): "
                        f"wheel speeds judged on the other {int(steady.sum())}")
        judged = tuple(q for q in judged if q in quantities)
        ok = all(quantities[q]["relative"] <= tolerance for q in judged)
        g = quantities.get("gear")
        if g is not None and mode == "open-loop":
            ok = ok and g["max_shift_offset"] is not None and g["max_shift_offset"] <= 1
        elif g is not None:
            ok = ok and g["mismatched_steps"] == 0
        vehicles[rv.name] = {"kind": rv.kind, "quantities": quantities, "judged": list(judged), "ok": ok,
                             "chatter_steps": int(chatter.sum()), "note": note}
    return ReplayReport(recording, mode, from_step, n, tolerance, vehicles)
