"""Reports of a :class:`~pvdkit.diff.result.DiffResult`: a text table, JSON and JUnit XML.

Why three: people read the table in a terminal or a CI log; tools read JSON; CI servers
(GitLab, Jenkins, GitHub test reporters) read JUnit XML and show each failing attribute as a
failed test, with the first divergence in the message. The JUnit layout is stable across runs
(one test case per ``Class.attribute`` over all objects of that class, plus test cases for
the recording, the schema and the object set), so a CI's test history stays comparable.
"""

from __future__ import annotations

import json
import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Iterable

from pvdkit import outputs
from pvdkit.diff.result import DiffResult, SeriesDiff

__all__ = ["format_text", "to_json", "to_junit", "write_json", "write_junit"]


def _g(x: float | None) -> str:
    if x is None:
        return "-"
    if math.isinf(x):
        return "inf"
    return f"{x:.3g}"


def _clip(text: str | None, width: int) -> str:
    t = "-" if text is None else " ".join(text.split())
    return t if len(t) <= width else t[:width - 1] + "…"


def _frame(f: int | None) -> str:
    return "-" if f is None else ("setup" if f < 0 else str(f))


def headline(res: DiffResult) -> str:
    """One line: EQUAL or DIFFERENT with the counts that matter."""
    s = res.summary()
    if res.equal:
        return (f"EQUAL: {s['attributes_compared']:,} attributes of {s['objects_matched']:,} objects equal "
                f"within tolerance ({res.frames_a:,} frames)")
    parts = [f"{s['attributes_differing']:,} of {s['attributes_compared']:,} attributes differ"]
    if res.objects_only_a:
        parts.append(f"{len(res.objects_only_a):,} object{'s' * (len(res.objects_only_a) != 1)} missing in B")
    if res.objects_only_b:
        parts.append(f"{len(res.objects_only_b):,} extra object{'s' * (len(res.objects_only_b) != 1)} in B")
    if res.schema:
        parts.append(f"{len(res.schema):,} schema change{'s' * (len(res.schema) != 1)}")
    notes = [n for n in res.notes if n.difference]
    if notes:
        parts.append(f"{len(notes)} recording-level difference{'s' * (len(notes) != 1)}")
    ff = s["first_divergence_frame"]
    if ff is not None:
        parts.append(f"first divergence at frame {_frame(ff)}")
    return "DIFFERENT: " + ", ".join(parts)


def format_text(res: DiffResult, max_report: int = 20, width: int = 160) -> str:
    """The human report: header, recording notes, schema changes, missing/extra objects and
    the table of differing attributes sorted by first divergence (at most ``max_report``
    lines per section)."""
    o = res.options
    lines = [f"pvdkit diff  A: {res.a}  B: {res.b}",
             f"tolerance: {o.tolerances.describe()}; frames: {o.frames} (aligned by {o.align}); "
             f"{res.frames_a:,} / {res.frames_b:,} frames",
             headline(res)]

    def section(title: str, items: list[str]) -> None:
        if not items:
            return
        lines.append("")
        lines.append(f"{title} ({len(items):,}):")
        lines.extend(f"  {it}" for it in items[:max_report])
        if len(items) > max_report:
            lines.append(f"  … {len(items) - max_report:,} more (--max-report)")

    section("recording", [n.message for n in res.notes])
    section("schema changes", [c.describe() for c in res.schema])
    section("objects missing in B", [_obj_text(x) for x in res.objects_only_a])
    section("objects extra in B", [_obj_text(x) for x in res.objects_only_b])
    diff = res.differing_series
    if diff:
        lines.append("")
        lines.append(f"differing attributes ({len(diff):,}), by first divergence:")
        lines.extend(_table(diff[:max_report], width))
        if len(diff) > max_report:
            lines.append(f"  … {len(diff) - max_report:,} more (--max-report)")
    return "\n".join(lines) + "\n"


def _obj_text(x) -> str:
    name = f" {x.name!r}" if x.name else ""
    life = f"frames {_frame(x.created)}..{'end' if x.destroyed is None else _frame(x.destroyed)}"
    return f"{x.label} ({x.cls}{name}), {life}"


def _table(rows: list[SeriesDiff], width: int) -> list[str]:
    head = ["frame", "time", "object.attribute", "status", "differ/frames", "max|a-b|", "max rel", "A", "B"]
    body = []
    for s in rows:
        body.append([
            _frame(s.first_frame), "-" if s.first_time is None else str(s.first_time),
            f"{s.object}.{s.attribute}", s.status, f"{s.differing}/{s.compared}", _g(s.max_abs),
            _g(s.max_rel),
            s.a_value or "-", s.b_value or "-",
        ])
    fixed = [max(len(r[k]) for r in [head, *body]) for k in range(len(head))]
    # The object path and values absorb the width limit.
    room = max(width - sum(fixed[k] for k in (0, 1, 3, 4, 5, 6)) - 2 * len(head), 60)
    fixed[2] = min(fixed[2], max(30, room // 2))
    fixed[7] = fixed[8] = min(max(fixed[7], fixed[8]), max(12, (room - fixed[2]) // 2))
    right = {0, 1, 4, 5, 6}
    out = []
    for r in [head, *body]:
        cells = []
        for k, c in enumerate(r):
            c = _clip(c, fixed[k])
            cells.append(c.rjust(fixed[k]) if k in right else c.ljust(fixed[k]))
        out.append(("  " + "  ".join(cells)).rstrip())
    return out


# ============================================================================================
# JSON
# ============================================================================================


def to_json(res: DiffResult, *, include_equal: bool = False) -> str:
    """The result as JSON text (see :meth:`DiffResult.to_dict`)."""
    return json.dumps(res.to_dict(include_equal=include_equal), indent=2, allow_nan=False) + "\n"


def write_json(res: DiffResult, path: str | os.PathLike, *, include_equal: bool = False,
               what: str = "JSON report") -> None:
    """Write :func:`to_json` to ``path`` (atomically; its folder must exist, ``what`` names the
    output in errors)."""
    _write(path, to_json(res, include_equal=include_equal), what)


# ============================================================================================
# JUnit XML
# ============================================================================================


def _suite(parent: ET.Element, name: str, cases: Iterable[tuple[str, str, str | None, str | None]]) -> None:
    """Add a testsuite of ``(classname, name, failure message or None, details)`` cases."""
    cases = list(cases)
    fails = sum(1 for c in cases if c[2] is not None)
    suite = ET.SubElement(parent, "testsuite", name=name, tests=str(len(cases)), failures=str(fails),
                          errors="0", skipped="0", time="0")
    for classname, case, msg, details in cases:
        tc = ET.SubElement(suite, "testcase", classname=classname, name=case, time="0")
        if msg is not None:
            f = ET.SubElement(tc, "failure", message=_xml_safe(msg), type="difference")
            f.text = _xml_safe(details or msg)


def _xml_safe(text: str) -> str:
    """Drop characters XML 1.0 cannot hold (control characters from raw strings)."""
    return "".join(ch for ch in text if ch in "\t\n\r" or ord(ch) >= 0x20)


def _series_line(s: SeriesDiff) -> str:
    return (f"{s.object}.{s.attribute}: {s.status}, first divergence at frame {_frame(s.first_frame)}"
            f"{'' if s.first_time is None else f' (time {s.first_time})'}: A {s.a_value} B {s.b_value}; "
            f"{s.differing} of {s.compared} frames differ; max|a-b| {_g(s.max_abs)}, max rel {_g(s.max_rel)} "
            f"({s.tolerance.describe()})")


def to_junit(res: DiffResult) -> str:
    """JUnit XML: suites ``recording``, ``schema``, ``objects``, then one suite per class with
    one test case per attribute (failing when any object of the class differs)."""
    root = ET.Element("testsuites", name=f"pvdkit diff {res.a} vs {res.b}")
    rec_cases = []
    for kind, title in (("damaged", "integrity"), ("frame_count", "frame count"),
                        ("frame_times", "frame times")):
        notes = [n.message for n in res.notes if n.kind == kind and n.difference]
        if kind == "damaged" or notes:
            rec_cases.append(("recording", title, notes[0] if notes else None, "\n".join(notes) or None))
    by_class: dict[str, dict[str, list[SeriesDiff]]] = {}
    for s in res.series:
        by_class.setdefault(s.cls, {}).setdefault(s.attribute, []).append(s)
    pseudo = {"<recording>", "<frame>"}
    for cls in sorted(pseudo & set(by_class)):
        for attr, group in by_class[cls].items():
            rec_cases.append(("recording", f"{cls}.{attr}", *_group_failure(group)))
    _suite(root, "recording", rec_cases)

    schema_classes = sorted({c.cls for c in res.schema})
    changes: dict[str, list[str]] = {}
    for c in res.schema:
        changes.setdefault(c.cls, []).append(c.describe())
    all_classes = sorted(set(by_class) - pseudo | set(schema_classes))
    _suite(root, "schema", [("schema", cls,
                             f"{len(changes[cls])} schema change(s) in {cls}: {changes[cls][0]}"
                             if cls in changes else None, "\n".join(changes.get(cls, [])) or None)
                            for cls in all_classes])

    obj_issues: dict[str, list[str]] = {}
    for x in res.objects_only_a:
        obj_issues.setdefault(x.cls, []).append(f"missing in B: {_obj_text(x)}")
    for x in res.objects_only_b:
        obj_issues.setdefault(x.cls, []).append(f"extra in B: {_obj_text(x)}")
    obj_classes = sorted(set(by_class) - pseudo | set(obj_issues))
    _suite(root, "objects", [("objects", cls, f"{len(obj_issues[cls])} object(s) of {cls} unmatched: "
                              f"{obj_issues[cls][0]}" if cls in obj_issues else None,
                              "\n".join(obj_issues.get(cls, [])) or None) for cls in obj_classes])

    for cls in sorted(set(by_class) - pseudo):
        _suite(root, cls, [(cls, attr, *_group_failure(group))
                           for attr, group in sorted(by_class[cls].items())])

    tests = failures = 0
    for suite in root:
        tests += int(suite.get("tests", "0"))
        failures += int(suite.get("failures", "0"))
    root.set("tests", str(tests))
    root.set("failures", str(failures))
    root.set("errors", "0")
    root.set("time", f"{res.seconds:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _group_failure(group: list[SeriesDiff]) -> tuple[str | None, str | None]:
    bad = sorted((s for s in group if s.is_different), key=SeriesDiff.sort_key)
    if not bad:
        return None, None
    first = bad[0]
    msg = (f"{len(bad)} of {len(group)} object(s) differ; first divergence at frame "
           f"{_frame(first.first_frame)}"
           f"{'' if first.first_time is None else f' (time {first.first_time})'} in {first.object}: "
           f"A {first.a_value} B {first.b_value}")
    return msg, "\n".join(_series_line(s) for s in bad)


def write_junit(res: DiffResult, path: str | os.PathLike, *, what: str = "JUnit report") -> None:
    """Write :func:`to_junit` to ``path`` (atomically; its folder must exist, ``what`` names the
    output in errors)."""
    _write(path, to_junit(res), what)


def _write(path: str | os.PathLike, text: str, what: str) -> None:
    """Write a report atomically; a missing folder is an error (never created)."""
    outputs.write_text(path, text, what)
