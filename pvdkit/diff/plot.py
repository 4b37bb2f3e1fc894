"""PNG plots of diverging series, drawn with numpy and encoded with zlib (no plotting library).

Why not matplotlib or Qt: a CI job must be able to write these plots on a bare headless
machine, fast and without a display server or extra dependency; a plot here is two panels of
step curves and some text, which a few hundred lines of numpy draw deterministically (the
same inputs give the same bytes, so the output is testable).

Each plot: title (object, attribute, element), top panel A (blue) and B (orange) over the
comparison frames, bottom panel A − B with the tolerance band ``±(atol + rtol·|b|)``
shaded, and a red dashed marker at the first divergence in both panels. Values hold between
samples (zero-order hold), as in the comparison.
"""

from __future__ import annotations

import math
import os
import re
import struct
import zlib
from typing import TYPE_CHECKING

import numpy as np

from pvdkit import outputs

if TYPE_CHECKING:
    from pvdkit.diff.engine import Comparison
    from pvdkit.diff.result import DiffResult, SeriesDiff

__all__ = ["Canvas", "decode_png", "encode_png", "plot_series", "write_plots"]

WHITE = (255, 255, 255)
BLACK = (0, 0, 0)
GREY = (200, 200, 200)
LIGHT = (235, 235, 235)
BLUE = (31, 119, 180)
ORANGE = (255, 127, 14)
RED = (214, 39, 40)
BAND = (250, 215, 215)

# ============================================================================================
# PNG
# ============================================================================================

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def encode_png(rgb: np.ndarray) -> bytes:
    """An ``(h, w, 3)`` uint8 image as PNG bytes (8-bit RGB, filter "none" per row)."""
    img = np.ascontiguousarray(rgb, np.uint8)
    if img.ndim != 3 or img.shape[2] != 3:
        raise ValueError(f"encode_png: expected an (h, w, 3) array, got shape {img.shape}")
    h, w, _ = img.shape
    raw = np.zeros((h, 1 + 3 * w), np.uint8)
    raw[:, 1:] = img.reshape(h, 3 * w)
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (_PNG_SIGNATURE + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(raw.tobytes(), 6))
            + _chunk(b"IEND", b""))


def decode_png(data: bytes) -> np.ndarray:
    """Decode a PNG written by :func:`encode_png` (8-bit RGB, filter 0) — for tests and tools."""
    if data[:8] != _PNG_SIGNATURE:
        raise ValueError("not a PNG file")
    pos, idat = 8, b""
    w = h = 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        tag, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        if zlib.crc32(tag + body) & 0xFFFFFFFF != crc:
            raise ValueError(f"bad CRC in chunk {tag!r}")
        if tag == b"IHDR":
            w, h, depth, color = struct.unpack(">IIBB", body[:10])
            if (depth, color) != (8, 2):
                raise ValueError("only 8-bit RGB PNGs are supported")
        elif tag == b"IDAT":
            idat += body
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + 3 * w)
    if raw[:, 0].any():
        raise ValueError("only filter type 0 is supported")
    return raw[:, 1:].reshape(h, w, 3).copy()


# ============================================================================================
# A 5×7 bitmap font (printable ASCII)
# ============================================================================================

_GLYPHS = {
    " ": ".....|.....|.....|.....|.....|.....|.....", "!": "..#..|..#..|..#..|..#..|..#..|.....|..#..",
    '"': ".#.#.|.#.#.|.....|.....|.....|.....|.....", "#": ".#.#.|.#.#.|#####|.#.#.|#####|.#.#.|.#.#.",
    "$": "..#..|.####|#.#..|.###.|..#.#|####.|..#..", "%": "##...|##..#|...#.|..#..|.#...|#..##|...##",
    "&": ".##..|#..#.|#.#..|.#...|#.#.#|#..#.|.##.#", "'": "..#..|..#..|.....|.....|.....|.....|.....",
    "(": "...#.|..#..|.#...|.#...|.#...|..#..|...#.", ")": ".#...|..#..|...#.|...#.|...#.|..#..|.#...",
    "*": ".....|..#..|#.#.#|.###.|#.#.#|..#..|.....", "+": ".....|..#..|..#..|#####|..#..|..#..|.....",
    ",": ".....|.....|.....|.....|..##.|..#..|.#...", "-": ".....|.....|.....|#####|.....|.....|.....",
    ".": ".....|.....|.....|.....|.....|.##..|.##..", "/": ".....|....#|...#.|..#..|.#...|#....|.....",
    "0": ".###.|#...#|#..##|#.#.#|##..#|#...#|.###.", "1": "..#..|.##..|..#..|..#..|..#..|..#..|.###.",
    "2": ".###.|#...#|....#|...#.|..#..|.#...|#####", "3": "#####|...#.|..#..|...#.|....#|#...#|.###.",
    "4": "...#.|..##.|.#.#.|#..#.|#####|...#.|...#.", "5": "#####|#....|####.|....#|....#|#...#|.###.",
    "6": "..##.|.#...|#....|####.|#...#|#...#|.###.", "7": "#####|....#|...#.|..#..|.#...|.#...|.#...",
    "8": ".###.|#...#|#...#|.###.|#...#|#...#|.###.", "9": ".###.|#...#|#...#|.####|....#|...#.|.##..",
    ":": ".....|.##..|.##..|.....|.##..|.##..|.....", ";": ".....|.##..|.##..|.....|.##..|..#..|.#...",
    "<": "...#.|..#..|.#...|#....|.#...|..#..|...#.", "=": ".....|.....|#####|.....|#####|.....|.....",
    ">": ".#...|..#..|...#.|....#|...#.|..#..|.#...", "?": ".###.|#...#|....#|...#.|..#..|.....|..#..",
    "@": ".###.|#...#|....#|.##.#|#.#.#|#.#.#|.###.", "A": ".###.|#...#|#...#|#####|#...#|#...#|#...#",
    "B": "####.|#...#|#...#|####.|#...#|#...#|####.", "C": ".###.|#...#|#....|#....|#....|#...#|.###.",
    "D": "###..|#..#.|#...#|#...#|#...#|#..#.|###..", "E": "#####|#....|#....|####.|#....|#....|#####",
    "F": "#####|#....|#....|####.|#....|#....|#....", "G": ".###.|#...#|#....|#.###|#...#|#...#|.####",
    "H": "#...#|#...#|#...#|#####|#...#|#...#|#...#", "I": ".###.|..#..|..#..|..#..|..#..|..#..|.###.",
    "J": "..###|...#.|...#.|...#.|...#.|#..#.|.##..", "K": "#...#|#..#.|#.#..|##...|#.#..|#..#.|#...#",
    "L": "#....|#....|#....|#....|#....|#....|#####", "M": "#...#|##.##|#.#.#|#.#.#|#...#|#...#|#...#",
    "N": "#...#|#...#|##..#|#.#.#|#..##|#...#|#...#", "O": ".###.|#...#|#...#|#...#|#...#|#...#|.###.",
    "P": "####.|#...#|#...#|####.|#....|#....|#....", "Q": ".###.|#...#|#...#|#...#|#.#.#|#..#.|.##.#",
    "R": "####.|#...#|#...#|####.|#.#..|#..#.|#...#", "S": ".####|#....|#....|.###.|....#|....#|####.",
    "T": "#####|..#..|..#..|..#..|..#..|..#..|..#..", "U": "#...#|#...#|#...#|#...#|#...#|#...#|.###.",
    "V": "#...#|#...#|#...#|#...#|#...#|.#.#.|..#..", "W": "#...#|#...#|#...#|#.#.#|#.#.#|#.#.#|.#.#.",
    "X": "#...#|#...#|.#.#.|..#..|.#.#.|#...#|#...#", "Y": "#...#|#...#|.#.#.|..#..|..#..|..#..|..#..",
    "Z": "#####|....#|...#.|..#..|.#...|#....|#####", "[": ".###.|.#...|.#...|.#...|.#...|.#...|.###.",
    "\\": ".....|#....|.#...|..#..|...#.|....#|.....", "]": ".###.|...#.|...#.|...#.|...#.|...#.|.###.",
    "^": "..#..|.#.#.|#...#|.....|.....|.....|.....", "_": ".....|.....|.....|.....|.....|.....|#####",
    "`": ".#...|..#..|.....|.....|.....|.....|.....", "a": ".....|.....|.###.|....#|.####|#...#|.####",
    "b": "#....|#....|#.##.|##..#|#...#|#...#|####.", "c": ".....|.....|.###.|#....|#....|#...#|.###.",
    "d": "....#|....#|.##.#|#..##|#...#|#...#|.####", "e": ".....|.....|.###.|#...#|#####|#....|.###.",
    "f": "..##.|.#..#|.#...|###..|.#...|.#...|.#...", "g": ".....|.####|#...#|#...#|.####|....#|.###.",
    "h": "#....|#....|#.##.|##..#|#...#|#...#|#...#", "i": "..#..|.....|.##..|..#..|..#..|..#..|.###.",
    "j": "...#.|.....|..##.|...#.|...#.|#..#.|.##..", "k": "#....|#....|#..#.|#.#..|##...|#.#..|#..#.",
    "l": ".##..|..#..|..#..|..#..|..#..|..#..|.###.", "m": ".....|.....|##.#.|#.#.#|#.#.#|#...#|#...#",
    "n": ".....|.....|#.##.|##..#|#...#|#...#|#...#", "o": ".....|.....|.###.|#...#|#...#|#...#|.###.",
    "p": ".....|.....|####.|#...#|####.|#....|#....", "q": ".....|.....|.##.#|#..##|.####|....#|....#",
    "r": ".....|.....|#.##.|##..#|#....|#....|#....", "s": ".....|.....|.###.|#....|.###.|....#|####.",
    "t": ".#...|.#...|###..|.#...|.#...|.#..#|..##.", "u": ".....|.....|#...#|#...#|#...#|#..##|.##.#",
    "v": ".....|.....|#...#|#...#|#...#|.#.#.|..#..", "w": ".....|.....|#...#|#...#|#.#.#|#.#.#|.#.#.",
    "x": ".....|.....|#...#|.#.#.|..#..|.#.#.|#...#", "y": ".....|.....|#...#|#...#|.####|....#|.###.",
    "z": ".....|.....|#####|...#.|..#..|.#...|#####", "{": "...#.|..#..|..#..|.#...|..#..|..#..|...#.",
    "|": "..#..|..#..|..#..|..#..|..#..|..#..|..#..", "}": ".#...|..#..|..#..|...#.|..#..|..#..|.#...",
    "~": ".....|.....|.#...|#.#.#|...#.|.....|.....",
}
_FONT = {ch: np.array([[c == "#" for c in row] for row in g.split("|")], bool) for ch, g in _GLYPHS.items()}
GLYPH_W, GLYPH_H = 5, 7


class Canvas:
    """An RGB raster with the few primitives a plot needs (rectangles, lines, text, curves)."""

    def __init__(self, width: int, height: int, background: tuple[int, int, int] = WHITE) -> None:
        self.img = np.empty((height, width, 3), np.uint8)
        self.img[:] = background
        self.height, self.width = height, width

    def rect(self, x0: int, y0: int, x1: int, y1: int, color: tuple[int, int, int]) -> None:
        """Fill ``[x0, x1) × [y0, y1)`` (clipped to the canvas)."""
        x0, x1 = max(0, x0), min(self.width, x1)
        y0, y1 = max(0, y0), min(self.height, y1)
        if x1 > x0 and y1 > y0:
            self.img[y0:y1, x0:x1] = color

    def frame(self, x0: int, y0: int, x1: int, y1: int, color: tuple[int, int, int]) -> None:
        """Outline of ``[x0, x1] × [y0, y1]``."""
        self.rect(x0, y0, x1 + 1, y0 + 1, color)
        self.rect(x0, y1, x1 + 1, y1 + 1, color)
        self.rect(x0, y0, x0 + 1, y1 + 1, color)
        self.rect(x1, y0, x1 + 1, y1 + 1, color)

    def dashed_vline(self, x: int, y0: int, y1: int, color: tuple[int, int, int], width: int = 2) -> None:
        for y in range(y0, y1, 8):
            self.rect(x - width // 2, y, x - width // 2 + width, min(y + 5, y1), color)

    def text(self, x: int, y: int, text: str, color: tuple[int, int, int] = BLACK, scale: int = 1,
             align: str = "left") -> int:
        """Draw ``text`` with its top-left (or top-right for ``align="right"``) at (x, y);
        returns its width in pixels. Characters outside printable ASCII print as ``?``."""
        step = (GLYPH_W + 1) * scale
        w = len(text) * step
        if align == "right":
            x -= w
        elif align == "center":
            x -= w // 2
        for k, ch in enumerate(text):
            g = _FONT.get(ch, _FONT["?"])
            if scale > 1:
                g = np.kron(g, np.ones((scale, scale), bool))
            gx, gy = x + k * step, y
            ys, xs = np.nonzero(g)
            ys, xs = ys + gy, xs + gx
            ok = (ys >= 0) & (ys < self.height) & (xs >= 0) & (xs < self.width)
            self.img[ys[ok], xs[ok]] = color
        return w

    def steps(self, x0: int, y0: int, w: int, h: int, cols: np.ndarray, rows: np.ndarray,
              color: tuple[int, int, int], end: int | None = None) -> None:
        """A zero-order-hold curve in the box (x0, y0, w, h): sample k sits at pixel column
        ``cols[k]`` (non-decreasing) and row ``rows[k]`` (NaN = no value: a gap) and holds
        until the next sample (the last until column ``end``). Drawn 2 px wide, one vertical
        run per column covering every value the column passes through."""
        if not len(cols):
            return
        end = w - 1 if end is None else end
        c = np.arange(w)
        k = np.searchsorted(cols, c, side="right") - 1  # sample in force at the column's end
        held = np.where(k >= 0, rows[np.maximum(k, 0)], np.nan)
        kin = np.searchsorted(cols, c, side="left") - 1  # sample in force entering the column
        enter = np.where(kin >= 0, rows[np.maximum(kin, 0)], np.nan)
        lo = np.fmin(held, enter)
        hi = np.fmax(held, enter)
        finite = np.isfinite(rows)
        if finite.any():
            lo_at = np.full(w, np.nan)
            hi_at = np.full(w, np.nan)
            cc = cols[finite].astype(np.int64)
            rr = rows[finite]
            inside = (cc >= 0) & (cc < w)
            np.fmin.at(lo_at, cc[inside], rr[inside])
            np.fmax.at(hi_at, cc[inside], rr[inside])
            lo, hi = np.fmin(lo, lo_at), np.fmax(hi, hi_at)
        on = np.isfinite(lo) & (c >= cols[0]) & (c <= end) & np.isfinite(held)
        lo = np.clip(np.nan_to_num(lo), 0, h - 1).astype(np.int64)
        hi = np.clip(np.nan_to_num(hi), 0, h - 1).astype(np.int64)
        r = np.arange(h)[:, None]
        mask = (r >= lo[None, :] - 1) & (r <= hi[None, :]) & on[None, :]
        mask[:, 1:] |= mask[:, :-1]
        box = self.img[y0:y0 + h, x0:x0 + w]
        box[mask[:box.shape[0], :box.shape[1]]] = color

    def png(self) -> bytes:
        return encode_png(self.img)


# ============================================================================================
# Plots
# ============================================================================================


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    raw = (hi - lo) / max(n - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.ceil(lo / step - 1e-9) * step
    ticks = []
    t = start
    while t <= hi + step * 1e-9 and len(ticks) < 50:
        ticks.append(0.0 if abs(t) < step * 1e-9 else t)
        t += step
    return ticks


def _range(*arrays: np.ndarray) -> tuple[float, float]:
    vals = np.concatenate([a[np.isfinite(a)] for a in arrays]) if arrays else np.zeros(0)
    if not len(vals):
        return -1.0, 1.0
    lo, hi = float(vals.min()), float(vals.max())
    if hi - lo <= max(abs(lo), abs(hi)) * 1e-12 or hi == lo:
        pad = max(abs(lo) * 0.05, 1e-12) if lo else 1.0
        return lo - pad, hi + pad
    pad = (hi - lo) * 0.06
    return lo - pad, hi + pad


def plot_series(frames: np.ndarray, a: np.ndarray, b: np.ndarray, band: np.ndarray, *, title: str,
                subtitle: str = "", first_frame: int | None = None, width: int = 960,
                height: int = 640) -> bytes:
    """PNG bytes of one comparison: A and B over ``frames`` (NaN = unset), A − B with the band
    ``±band``, a dashed marker at ``first_frame``."""
    cv = Canvas(width, height)
    left, right = 96, width - 24
    pw = right - left
    cv.text(left, 10, _fit(title, pw // 12), BLACK, scale=2)
    if subtitle:
        cv.text(left, 32, _fit(subtitle, pw // 6), (90, 90, 90))
    top1, h1 = 64, int((height - 64 - 60) * 0.6)
    top2 = top1 + h1 + 30
    h2 = height - top2 - 40
    f = frames.astype(np.float64)
    if len(f):
        x_lo, x_hi = float(f.min()), float(f.max())
    else:
        x_lo, x_hi = 0.0, 1.0
    if x_hi <= x_lo:
        x_hi = x_lo + 1.0
    cols = np.rint((f - x_lo) / (x_hi - x_lo) * (pw - 1)).astype(np.int64)
    d = a - b
    for top, h, series, label in ((top1, h1, (a, b), "value"), (top2, h2, (d, band, -band), "A - B")):
        y_lo, y_hi = _range(*series)
        cv.rect(left, top, right, top + h, WHITE)

        def to_row(v: np.ndarray, top=top, h=h, y_lo=y_lo, y_hi=y_hi) -> np.ndarray:
            return (y_hi - v) / (y_hi - y_lo) * (h - 1)

        for t in _nice_ticks(y_lo, y_hi):
            r = int(round(float(to_row(np.array(t)))))
            if 0 <= r < h:
                cv.rect(left, top + r, right, top + r + 1, LIGHT)
                cv.text(left - 6, top + r - 3, f"{t:.4g}", (60, 60, 60), align="right")
        if label == "A - B":
            up, dn = to_row(band), to_row(-band)
            k = np.searchsorted(cols, np.arange(pw), side="right") - 1
            ok = (k >= 0) & np.isfinite(up[np.maximum(k, 0)]) & np.isfinite(dn[np.maximum(k, 0)])
            rr = np.arange(h)[:, None]
            mask = ok[None, :] & (rr >= up[np.maximum(k, 0)][None, :]) & (rr <= dn[np.maximum(k, 0)][None, :])
            cv.img[top:top + h, left:right][mask] = BAND
            z = int(round(float(to_row(np.array(0.0)))))
            if 0 <= z < h:
                cv.rect(left, top + z, right, top + z + 1, GREY)
            cv.steps(left, top, pw, h, cols, to_row(d), BLACK)
        else:
            cv.steps(left, top, pw, h, cols, to_row(b), ORANGE)
            cv.steps(left, top, pw, h, cols, to_row(a), BLUE)
        cv.frame(left - 1, top - 1, right, top + h, (120, 120, 120))
        if first_frame is not None and len(f):
            x = left + int(round((first_frame - x_lo) / (x_hi - x_lo) * (pw - 1)))
            if left <= x < right:
                cv.dashed_vline(x, top, top + h, RED)
    # x ticks under each panel, legend above the top panel.
    for top, h in ((top1, h1), (top2, h2)):
        for t in _nice_ticks(x_lo, x_hi, 8):
            x = left + int(round((t - x_lo) / (x_hi - x_lo) * (pw - 1)))
            cv.rect(x, top + h, x + 1, top + h + 4, (120, 120, 120))
            cv.text(x, top + h + 7, f"{t:g}", (60, 60, 60), align="center")
    cv.text(right, height - 14, "frame", (60, 60, 60), align="right")
    x = left
    for text, color in (("A", BLUE), ("B", ORANGE), ("A - B", BLACK), ("tolerance", (220, 120, 120)),
                        ("first divergence", RED)):
        cv.rect(x, 50, x + 14, 54, color)
        x += 18 + cv.text(x + 18, 48, text, color) + 16
    return cv.png()


def _fit(text: str, n: int) -> str:
    text = text.encode("ascii", "replace").decode()
    return text if len(text) <= n else text[:max(n - 3, 1)] + "..."


def plot_rank(s: SeriesDiff) -> tuple:
    """Sort key of "most diverging": largest relative error, then absolute, then earliest."""
    rel = s.max_rel if s.max_rel is not None else -1.0
    ab = s.max_abs if s.max_abs is not None else -1.0
    ff = s.first_frame if s.first_frame is not None else math.inf
    return (-rel, -ab, ff)


def write_plots(cmp: Comparison, res: DiffResult, directory: str | os.PathLike, limit: int = 8) -> list[str]:
    """Write PNG plots of the ``limit`` most diverging numeric series (float and int kinds)
    into ``directory`` (created if missing; its parent folder must exist) and return the file
    paths. Each file is written atomically (:mod:`pvdkit.outputs`)."""
    d = os.fspath(outputs.output_folder(directory, "plot folder"))
    cands = sorted((s for s in res.differing_series if s.kind in ("float", "int")), key=plot_rank)
    paths = []
    for rank, s in enumerate(cands[:max(limit, 0)], 1):
        al = cmp.aligned(s)
        if al is None or not len(al.frames):
            continue
        comp = f"[{al.component}]" if s.component or _width(cmp, s) > 1 else ""
        ft = "" if s.first_time is None else f" (time {s.first_time})"
        err = f"max|a-b| {s.max_abs:.4g}" if s.max_abs is not None else s.status
        sub = (f"A {os.path.basename(res.a)}  B {os.path.basename(res.b)}  first divergence: frame "
               f"{s.first_frame}{ft}  {err}  {s.tolerance.describe()}")
        png = plot_series(al.frames, al.a, al.b, al.band, title=f"{s.object}.{s.attribute}{comp}  ({s.cls})",
                          subtitle=sub, first_frame=s.first_frame)
        name = f"{rank:02d}_{_slug(f'{s.object}.{s.attribute}')}.png"
        path = os.path.join(d, name)
        outputs.write_bytes(path, png, "plot")
        paths.append(path)
    return paths


def _width(cmp: Comparison, s: SeriesDiff) -> int:
    rec, idx = (cmp.a, s.index_a) if s.index_a >= 0 else (cmp.b, s.index_b)
    for x in rec.all_series(rec.objects[idx]):
        if x.name == s.attribute:
            raw = getattr(x, "raw", None)
            return raw.shape[1] if isinstance(raw, np.ndarray) and raw.ndim == 2 else 1
    return 1


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:120] or "series"
