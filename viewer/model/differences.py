"""What differs between the recording shown (A) and a compared one: ``pvdkit diff`` in the viewer.

Why: comparing two runs in plots answers "how do these curves differ" once the right curves are
on screen; which attributes of which objects differ at all, and where each first diverges, is
what ``pvdkit diff`` finds. :func:`find_differences` runs the same comparison
(:func:`pvdkit.diff.compare`: objects matched by identity, every series, exact by default) on
the two open recordings — the ones the viewer shows, whatever happened to their files since —
and lists the differing attributes by first divergence, each mapped back to A's object so the
viewer can select it, plot it and go to that frame.

The comparison reads every series of both recordings (``Recording.preload``): memory for their
samples, a fraction of a second for an 8-s PhysX recording, a few seconds for a 256-car fleet.
It runs on demand.
"""

from __future__ import annotations

from dataclasses import dataclass

from pvdkit.diff import DiffOptions, DiffResult, FrameWindow, SeriesDiff, ToleranceConfig, compare
from pvdkit.recording import Object
from pvdkit.types import PvdError
from viewer.model.session import RecordingSession

__all__ = ["Difference", "Differences", "find_differences", "parse_tolerance"]

#: Kinds of series difference a plot can show (numbers over time).
PLOTTABLE = ("float", "int", "enum", "flags")
#: Most differences listed (a fleet run with a varied param differs in ~160,000 series); the
#: summary counts them all.
MAX_ROWS = 5000


@dataclass(frozen=True)
class Difference:
    """One differing attribute: where it first diverges and by how much."""

    #: The attribute's object in A (None: it has no counterpart object there).
    object: Object | None
    #: The object as the viewer names it (its readable path in A, else ``pvdkit diff``'s label).
    path: str
    cls: str
    attribute: str
    kind: str
    status: str
    first_frame: int | None
    first_time: float | None
    differing: int
    compared: int
    max_abs: float | None
    a_value: str | None
    b_value: str | None

    @property
    def spec(self) -> str:
        """``Class.attribute``, as the plot box takes it."""
        return f"{self.cls}.{self.attribute}"

    @property
    def plottable(self) -> bool:
        return self.object is not None and self.kind in PLOTTABLE


@dataclass(frozen=True)
class Differences:
    """The differing attributes of A against B, first divergence first, and a one-line summary."""

    rows: list[Difference]
    summary: str
    result: DiffResult


def parse_tolerance(text: str) -> ToleranceConfig:
    """The tolerances typed in the panel: empty or ``exact``; ``rtol=0.02 atol=1e-6`` (either,
    both, in any order); or a ``pvdkit diff --config`` TOML file, optionally followed by
    overrides (``simcore/replay/physx_diff.toml rtol=0.01``). :class:`PvdError` naming the
    word that is none of these."""
    config, values = ToleranceConfig(), {}
    for word in text.split():
        key, eq, value = word.partition("=")
        if eq and key in ("atol", "rtol"):
            try:
                values[key] = float(value)
            except ValueError:
                raise PvdError(f"tolerance {word!r}: {key} must be a number") from None
        elif word.lower().endswith(".toml") and not eq:
            config = ToleranceConfig.load(word)
        elif word.lower() != "exact":
            raise PvdError(f"tolerance {word!r}: expected rtol=R, atol=A, a .toml file or exact")
    return config.with_defaults(**values) if values else config


def find_differences(a: RecordingSession, b: RecordingSession, sync: str = "frame",
                     tolerance: ToleranceConfig | None = None, frames: str = "") -> Differences:
    """Compare the open recordings ``a`` (A, the one shown) and ``b``: frames paired by number
    (``sync="frame"``) or by simulated time (``"time"``), as the viewer pairs them; exactly,
    or within ``tolerance`` (:func:`parse_tolerance`); over every frame, or the window
    ``frames`` as ``pvdkit diff --frames`` takes it (``1:`` skips the setup before frame 1,
    ``100:200``). :class:`PvdError` for a window that is none."""
    options = DiffOptions(tolerance or ToleranceConfig(), FrameWindow.parse(frames or None),
                          "time" if sync == "time" else "index")
    ra, rb = a.recording, b.recording
    ra.preload()
    if rb is not ra:
        rb.preload(ra)
    res = compare(ra, rb, options)
    # What differs only because one recording ended is said once in the summary, not as rows
    # reading "none (B ended)" that bury the real differences (as pvdkit diff's text report).
    differing, after_end = res.split_at_end()
    rows = [_row(a, sd) for sd in differing[:MAX_ROWS]]
    summary = _summary(res, differing, a.name, b.name)
    if len(differing) > MAX_ROWS:
        summary += f" (the first {MAX_ROWS} listed)"
    if after_end:
        what = "more attribute" if differing else "attribute"
        summary += (f"; {_count(len(after_end), what)} only after {res.ended_side} ended "
                    f"(frame {res.ended_at} on)")
    return Differences(rows, summary, res)


def _row(a: RecordingSession, sd: SeriesDiff) -> Difference:
    objects = a.recording.objects
    obj = objects[sd.index_a] if 0 <= sd.index_a < len(objects) else None
    path = (a.path_of(obj) if obj is not None else None) or sd.object
    # Frame -1 holds what was written before the first frame (registrations, first objects).
    frame = sd.first_frame
    first_time = a.timebase.time_of(frame) if frame is not None and frame >= 0 else None
    return Difference(obj, path, sd.cls, sd.attribute, sd.kind, sd.status, sd.first_frame, first_time,
                      sd.differing, sd.compared, sd.max_abs, sd.a_value, sd.b_value)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _summary(res: DiffResult, differing: list[SeriesDiff], name_a: str, name_b: str) -> str:
    if res.equal:
        return f"{name_a} and {name_b}: equal (every attribute of every matched object, within tolerance)"
    n = len(differing)
    parts = [f"{_count(n, 'attribute')} differ{'s' if n == 1 else ''}"] if n else []
    if res.objects_only_a:
        parts.append(f"{_count(len(res.objects_only_a), 'object')} only in A")
    if res.objects_only_b:
        parts.append(f"{_count(len(res.objects_only_b), 'object')} only in B")
    if res.schema:
        parts.append(_count(len(res.schema), "schema change"))
    first = differing[0].first_frame if differing else None
    where = "" if first is None else f", first at frame {first}"
    if not parts and res.ended_at is not None:
        parts.append(f"{res.ended_side} ends at frame {res.ended_at}")
    return f"{name_a} vs {name_b}: " + ", ".join(parts or ["they differ"]) + where
