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
import shutil
from collections.abc import Iterable
from typing import TYPE_CHECKING

from pvdkit import outputs
from pvdkit.diff.result import DiffResult, SeriesDiff
from pvdkit.terminal import printable

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

__all__ = ["DEFAULT_WIDTH", "format_text", "report_width", "to_json", "to_junit", "write_json", "write_junit"]


def _g(x: float | None) -> str:
    if x is None:
        return "-"
    if math.isinf(x):
        return "inf"
    return f"{x:.3g}"


def _errors(s: SeriesDiff) -> tuple[str, str]:
    """max|a-b| and max rel as shown. A differing series whose errors are 0 differs only where one
    side has no value (it ended, or set it later): "-", not a 0 that reads as a contradiction."""
    if s.is_different and s.max_abs == 0 and not s.max_rel:
        return "-", "-"
    return _g(s.max_abs), _g(s.max_rel)


def _frame(f: int | None) -> str:
    return "-" if f is None else ("setup" if f < 0 else str(f))


def seconds_text(x: float | None) -> str:
    """Simulated seconds as the reports print them (0.1 ms; ``-`` when unknown)."""
    return "-" if x is None else f"{x:.4f}"


def at_time(s: SeriesDiff) -> str:
    """`` (t = 3.0167 s)`` after a first divergence's frame, or nothing when its time is unknown."""
    return "" if s.first_seconds is None else f" (t = {seconds_text(s.first_seconds)} s)"


def headline(res: DiffResult) -> str:
    """One line: EQUAL or DIFFERENT with the counts that matter."""
    s = res.summary()
    if res.equal:
        w = res.options.frames  # the frames of A in the window
        lo = w.start or 0
        n = max(0, min(w.stop if w.stop is not None else res.frames_a, res.frames_a) - lo)
        return (f"EQUAL: {s['attributes_compared']:,} attributes of {s['objects_matched']:,} objects equal "
                f"within tolerance ({n:,} frame{'s' * (n != 1)})")
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


#: Width of the text report when it is not written to a terminal (CI logs, files, pipes).
DEFAULT_WIDTH = 100
#: Lines of A / B value text shown per differing attribute when the values go below their row.
MAX_VALUE_LINES = 3


def report_width() -> int:
    """The terminal's width (``COLUMNS`` if set), :data:`DEFAULT_WIDTH` when not a terminal."""
    return max(shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns, 40)


def _vehicle_line(res: DiffResult) -> str:
    """The header line of a comparison of one vehicle (``--vehicle``); "" otherwise."""
    if res.options.vehicle is None:
        return ""
    if res.vehicle_a == res.vehicle_b:
        return f"vehicle: {res.vehicle_a} (only its objects are compared)"
    return f"vehicle: {res.vehicle_a} in A with {res.vehicle_b} in B (only their objects are compared)"


def format_text(res: DiffResult, max_report: int = 20, width: int | None = None) -> str:
    """The human report: header, recording notes, schema changes, missing/extra objects and
    the table of differing attributes sorted by first divergence (at most ``max_report``
    lines per section), fitted to ``width`` columns (default :func:`report_width`).

    Nothing that says what differs is cut to fit: the table groups its rows under their
    object's full path (wrapped when longer than a line) and names only the attribute in the
    row; when the A and B values do not fit beside the numbers they go on lines of their own
    below the row (at most :data:`MAX_VALUE_LINES` each)."""
    width = report_width() if width is None else max(int(width), 40)
    o = res.options
    lines: list[str] = []
    for text in (f"pvdkit diff  A: {res.a}  B: {res.b}",
                 f"tolerance: {o.tolerances.describe()}; frames: {o.frames} (aligned by {o.align}); "
                 f"{res.frames_a:,} / {res.frames_b:,} frames",
                 _vehicle_line(res),
                 headline(res)):
        if text:
            lines.extend(_wrap(text, width, "", "  "))
    if res.unmatched_ignored:
        n = res.unmatched_ignored
        lines.extend(_wrap(f"{n:,} object{'s' * (n != 1)} in one recording only, of classes the config's "
                           "ignore_unmatched names: not compared", width, "", "  "))

    def section(title: str, items: list[str]) -> None:
        if not items:
            return
        lines.append("")
        lines.append(f"{title} ({len(items):,}):")
        for it in items[:max_report]:
            lines.extend(_wrap(it, width, "  ", "    "))
        if len(items) > max_report:
            lines.append(f"  … {len(items) - max_report:,} more (--max-report)")

    section("recording", [n.message for n in res.notes])
    section("schema changes", [c.describe() for c in res.schema])
    section("objects missing in B", [_obj_text(x) for x in res.objects_only_a])
    section("objects extra in B", [_obj_text(x) for x in res.objects_only_b])
    # What differs only because one recording ended is one line, not a row per attribute: a
    # shorter run listed hundreds of rows reading "none (B ended)" above the real differences.
    diff, after_end = res.split_at_end()
    if diff:
        lines.append("")
        lines.extend(_wrap(f"differing attributes ({len(diff):,}), by first divergence, grouped by object:",
                           width, "", "  "))
        lines.extend(_table(diff[:max_report], width))
        if len(diff) > max_report:
            lines.append(f"  … {len(diff) - max_report:,} more (--max-report)")
    if after_end:
        n, side = len(after_end), res.ended_side
        lines.append("")
        lines.extend(_wrap(f"{n:,} attribute{'s' * (n != 1)} differ{'s' * (n == 1)} only after {side} ended "
                           f"(frame {res.ended_at:,} on, where {side} has no values; listed in the JSON "
                           "report)",
                           width, "", "  "))
    return "\n".join(lines) + "\n"


def _obj_text(x) -> str:
    name = f" {x.name!r}" if x.name else ""
    life = f"frames {_frame(x.created)}..{'end' if x.destroyed is None else _frame(x.destroyed)}"
    return f"{x.shown} ({x.cls}{name}), {life}"


def _wrap(text: str, width: int, first: str, rest: str, max_lines: int | None = None, *,
          path: bool = False) -> list[str]:
    """``text`` in lines of at most ``width`` columns, cut between words (a word longer than a
    line after a ``/``, else anywhere; an object ``path``, whose parts hold spaces such as
    ``wheel 1``, after a ``/`` first), the first line indented by ``first``, the others by ``rest``;
    beyond ``max_lines`` the last line ends in "…"."""
    if len(first) + len(text) <= width and "\n" not in text:
        return [first + text]
    t = " ".join(text.split())
    out: list[str] = []
    indent = first
    while True:
        room = max(width - len(indent), 10)
        if len(t) <= room:
            out.append(indent + t)
            break
        # Between words; inside a word only when it is longer than a line (a path: after a
        # "/"), never inside a number such as 1,201.
        cut = t.rfind("/", 0, room) + 1 if path else 0
        if cut <= room // 3:
            cut = t.rfind(" ", 0, room + 1)
        if cut <= room // 3:
            cut = t.rfind("/", 0, room)
            cut = cut + 1 if cut > room // 3 else room
        out.append((indent + t[:cut]).rstrip())
        t = t[cut:].lstrip()
        indent = rest
    if max_lines is not None and len(out) > max_lines:
        out = out[:max_lines]
        last = out[-1]
        out[-1] = last[:width - 1] + "…" if len(last) >= width else last + "…"
    return out


def _table(rows: list[SeriesDiff], width: int) -> list[str]:
    """Rows grouped under their object's path (groups in order of their first row), then the
    attribute and numbers; A and B beside them when every value fits, else below each row."""
    head = ["frame", "time [s]", "attribute", "status", "differ/frames", "max|a-b|", "max rel", "A", "B"]
    groups: dict[str, list[SeriesDiff]] = {}
    for s in rows:
        groups.setdefault(s.shown, []).append(s)
    body = {id(s): [_frame(s.first_frame), seconds_text(s.first_seconds), s.attribute,
                    s.status, f"{s.differing}/{s.compared}", *_errors(s),
                    " ".join((s.a_value or "-").split()), " ".join((s.b_value or "-").split())]
            for s in rows}
    cols = [max(len(r[k]) for r in [head, *body.values()]) for k in range(len(head))]
    indent = "    "
    numbers = len(indent) + sum(cols[:7]) + 2 * 6
    if numbers > width:  # a long attribute name: it goes on a line of its own where needed
        cols[2] = max(len(head[2]), width - (numbers - cols[2]))
        numbers = len(indent) + sum(cols[:7]) + 2 * 6
    if numbers > width:  # too narrow for a table: one short paragraph per attribute
        return _records(groups, width)
    values_inline = numbers + 2 + cols[7] + 2 + cols[8] <= width
    right = {0, 1, 4, 5, 6}

    def line(cells: list[str], n: int) -> str:
        return (indent + "  ".join(c.rjust(cols[k]) if k in right else c.ljust(cols[k])
                                   for k, c in enumerate(cells[:n]))).rstrip()

    shown = 9 if values_inline else 7
    out = [line(head, shown)]
    for label, members in groups.items():
        out.extend(_wrap(label, width, "  ", "      ", path=True))
        for s in members:
            cells = body[id(s)]
            if len(cells[2]) > cols[2]:
                out.extend(_wrap(cells[2], width, indent + " " * (sum(cols[:2]) + 4), indent + "  "))
                cells = [*cells[:2], "", *cells[3:]]
            out.append(line(cells, shown))
            if not values_inline:
                pad = indent + "  "
                out.extend(_wrap(f"A: {cells[7]}", width, pad, pad + "   ", MAX_VALUE_LINES))
                out.extend(_wrap(f"B: {cells[8]}", width, pad, pad + "   ", MAX_VALUE_LINES))
    return out


def _records(groups: dict[str, list[SeriesDiff]], width: int) -> list[str]:
    """The table's content for a terminal too narrow for its columns, wrapped to ``width``."""
    out: list[str] = []
    for label, members in groups.items():
        out.extend(_wrap(label, width, "  ", "      ", path=True))
        for s in members:
            when = _frame(s.first_frame) + at_time(s)
            abs_error, rel_error = _errors(s)
            out.extend(_wrap(f"{s.attribute}: {s.status} from frame {when}, {s.differing}/{s.compared} "
                             f"frames, max|a-b| {abs_error}, max rel {rel_error}",
                             width, "    ", "      "))
            out.extend(_wrap(f"A: {s.a_value or '-'}", width, "      ", "         ", MAX_VALUE_LINES))
            out.extend(_wrap(f"B: {s.b_value or '-'}", width, "      ", "         ", MAX_VALUE_LINES))
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
    import xml.etree.ElementTree as ET

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
    abs_error, rel_error = _errors(s)
    return (f"{s.shown}.{s.attribute}: {s.status}, first divergence at frame {_frame(s.first_frame)}"
            f"{at_time(s)}: A {s.a_value} B {s.b_value}; "
            f"{s.differing} of {s.compared} frames differ; max|a-b| {abs_error}, max rel {rel_error} "
            f"({s.tolerance.describe()})")


def to_junit(res: DiffResult) -> str:
    """JUnit XML: suites ``recording``, ``schema``, ``objects``, then one suite per class with
    one test case per attribute (failing when any object of the class differs)."""
    import xml.etree.ElementTree as ET  # here: a diff without --junit does not load the XML library

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
    info = [n.message for n in res.notes if not n.difference]
    if info:  # notes that are no difference (unused config rules, few objects matched): CI shows them
        ET.SubElement(root[-1], "system-out").text = _xml_safe("\n".join(info))

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
           f"{at_time(first)} in {first.shown}: "
           f"A {first.a_value} B {first.b_value}")
    return msg, "\n".join(_series_line(s) for s in bad)


def write_junit(res: DiffResult, path: str | os.PathLike, *, what: str = "JUnit report") -> None:
    """Write :func:`to_junit` to ``path`` (atomically; its folder must exist, ``what`` names the
    output in errors)."""
    _write(path, to_junit(res), what)


def _write(path: str | os.PathLike, text: str, what: str) -> None:
    """Write a report atomically; a missing folder is an error (never created). Names that are
    no UTF-8 are written escaped (``\\xff``): a report file is UTF-8 text, XML or JSON."""
    outputs.write_text(path, printable(text), what)
