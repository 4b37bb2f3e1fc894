"""A small line-plot renderer writing PNG files with numpy and zlib only.

Why not Qt: simcore must not import Qt (the model layers stay Qt-free, as in the viewer's style
notes), and plots written by ``pvdkit bicycle --plots`` or the motorcycle scenario should work on a
headless machine without a display server. The plots are simple — axes, ticks, grid, polylines,
dashed markers, a legend and labels in a built-in 5x7 pixel font — and the output is a plain
8-bit RGB PNG that any viewer opens. :func:`decode_png` reads such files back (tests).
"""

from __future__ import annotations

import math
import os
import struct
import zlib
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

_GLYPHS_SRC = {
    "A": ".###.#...##...#######...##...##...#", "B": "####.#...##...#####.#...##...#####.",
    "C": ".###.#...##....#....#....#...#.###.", "D": "###..#..#.#...##...##...##..#.###..",
    "E": "######....#....####.#....#....#####", "F": "######....#....####.#....#....#....",
    "G": ".###.#...##....#.####...##...#.####", "H": "#...##...##...#######...##...##...#",
    "I": ".###...#....#....#....#....#...###.", "J": "..###...#....#....#....#.#..#..##..",
    "K": "#...##..#.#.#..##...#.#..#..#.#...#", "L": "#....#....#....#....#....#....#####",
    "M": "#...###.###.#.##.#.##...##...##...#", "N": "#...##...###..##.#.##..###...##...#",
    "O": ".###.#...##...##...##...##...#.###.", "P": "####.#...##...#####.#....#....#....",
    "Q": ".###.#...##...##...##.#.##..#..##.#", "R": "####.#...##...#####.#.#..#..#.#...#",
    "S": ".#####....#.....###.....#....#####.", "T": "#####..#....#....#....#....#....#..",
    "U": "#...##...##...##...##...##...#.###.", "V": "#...##...##...##...##...#.#.#...#..",
    "W": "#...##...##...##.#.##.#.##.#.#.#.#.", "X": "#...##...#.#.#...#...#.#.#...##...#",
    "Y": "#...##...#.#.#...#....#....#....#..", "Z": "#####....#...#...#...#...#....#####",
    "0": ".###.#...##..###.#.###..##...#.###.", "1": "..#...##....#....#....#....#...###.",
    "2": ".###.#...#....#...#...#...#...#####", "3": "#####...#...#.....#.....##...#.###.",
    "4": "...#...##..#.#.#..#.#####...#....#.", "5": "######....####.....#....##...#.###.",
    "6": "..##..#...#....####.#...##...#.###.", "7": "#####....#...#...#...#....#....#...",
    "8": ".###.#...##...#.###.#...##...#.###.", "9": ".###.#...##...#.####....#...#..##..",
    ".": "..........................##...##..", ",": ".....................##....#...#...",
    "-": "...............#####...............", "+": ".......#....#..#####..#....#.......",
    "/": ".........#...#...#...#...#.........", "(": "...#...#...#....#....#.....#.....#.",
    ")": ".#.....#.....#....#....#...#...#...", "[": ".###..#....#....#....#....#....###.",
    "]": ".###....#....#....#....#....#..###.", ":": "......##...##.........##...##......",
    "=": "..........#####.....#####..........", "%": "##...##..#...#...#...#...#..##...##",
    "^": "..#...#.#.#...#....................", "_": "..............................#####",
    "*": ".......#..#.#.#.###.#.#.#..#.......", " ": "." * 35,
}


def _glyph(src: str) -> np.ndarray:
    bits = np.array([c == "#" for c in src.ljust(35, ".")[:35]], dtype=bool)
    return bits.reshape(7, 5)


_GLYPHS = {k: _glyph(v) for k, v in _GLYPHS_SRC.items()}
_UNKNOWN = _glyph("#####" + "#...#" * 5 + "#####")

#: Default line colours (RGB), cycled by :meth:`Plot.line` when none is given.
PALETTE = ((31, 119, 180), (214, 39, 40), (44, 160, 44), (255, 127, 14), (148, 103, 189), (23, 190, 207))


def text_size(text: str, scale: int = 2) -> tuple[int, int]:
    """(width, height) in pixels of ``text`` drawn at ``scale``."""
    return len(text) * 6 * scale - scale if text else 0, 7 * scale


def draw_text(img: np.ndarray, text: str, x: int, y: int, color: tuple[int, int, int] = (0, 0, 0),
              scale: int = 2, vertical: bool = False) -> None:
    """Draw ``text`` (upper-cased) with its top-left corner at (x, y); ``vertical`` rotates it 90°
    counter-clockwise (reading bottom to top, the corner is then bottom-left at (x, y))."""
    for i, ch in enumerate(text.upper()):
        g = _scaled_glyph(ch, scale, vertical)
        if vertical:
            gx, gy = x, y - (i + 1) * 6 * scale + scale
        else:
            gx, gy = x + i * 6 * scale, y
        _blit(img, g, gx, gy, color)


@lru_cache(maxsize=512)
def _scaled_glyph(ch: str, scale: int, vertical: bool) -> np.ndarray:
    g = _GLYPHS.get(ch, _UNKNOWN)
    if vertical:
        g = np.rot90(g)
    return np.repeat(np.repeat(g, scale, axis=0), scale, axis=1)


def _blit(img: np.ndarray, mask: np.ndarray, x: int, y: int, color: tuple[int, int, int]) -> None:
    h, w = mask.shape
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + w, img.shape[1]), min(y + h, img.shape[0])
    if x0 >= x1 or y0 >= y1:
        return
    sub = mask[y0 - y:y1 - y, x0 - x:x1 - x]
    img[y0:y1, x0:x1][sub] = color


def nice_ticks(lo: float, hi: float, target: int = 6) -> np.ndarray:
    """Round tick values (1, 2, 5 x 10^k steps) covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return np.array([lo])
    raw = (hi - lo) / target
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1.0, 2.0, 5.0, 10.0) if m * mag >= raw)
    start = math.ceil(lo / step - 1e-9) * step
    ticks = np.arange(start, hi + step * 1e-9, step)
    return np.where(np.abs(ticks) < step * 1e-9, 0.0, ticks)


def _tick_label(v: float) -> str:
    s = f"{v:.6g}"
    if "e" in s:
        m, e = s.split("e")
        s = f"{float(m):g}e{int(e)}"
    return s


@dataclass
class _Series:
    x: np.ndarray
    y: np.ndarray
    color: tuple[int, int, int]
    label: str | None
    width: int
    dashed: bool


@dataclass
class Plot:
    """One line chart. Add series with :meth:`line`, markers with :meth:`vline` / :meth:`hline`,
    then :meth:`render` (an (h, w, 3) uint8 array) or :meth:`save` (a PNG file).

    NaN values break a line; ``xlim`` / ``ylim`` fix the ranges (default: the data's, padded 5 %);
    ``legend`` is ``"upper right"`` or ``"lower right"``.
    """

    title: str
    xlabel: str
    ylabel: str
    width: int = 900
    height: int = 560
    xlim: tuple[float, float] | None = None
    ylim: tuple[float, float] | None = None
    legend: str = "upper right"
    _series: list[_Series] = field(default_factory=list)

    def line(self, x: np.ndarray, y: np.ndarray, color: tuple[int, int, int] | None = None,
             label: str | None = None, width: int = 2, dashed: bool = False) -> Plot:
        """Add a polyline through (x, y)."""
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        if x.shape != y.shape:
            raise ValueError(f"Plot.line: x and y need the same length, got {x.shape} and {y.shape}")
        if color is None:
            color = PALETTE[sum(1 for s in self._series if not s.dashed) % len(PALETTE)]
        self._series.append(_Series(x, y, color, label, width, dashed))
        return self

    def vline(self, x: float, color: tuple[int, int, int] = (90, 90, 90), label: str | None = None) -> Plot:
        """A dashed vertical marker at ``x`` spanning the y range."""
        self._series.append(_Series(np.array([x, x]), np.array([np.nan, np.nan]), color, label, 1, True))
        return self

    def hline(self, y: float, color: tuple[int, int, int] = (90, 90, 90), label: str | None = None) -> Plot:
        """A dashed horizontal marker at ``y`` spanning the x range."""
        self._series.append(_Series(np.array([np.nan, np.nan]), np.array([y, y]), color, label, 1, True))
        return self

    def _range(self, axis: str, fixed: tuple[float, float] | None) -> tuple[float, float]:
        if fixed is not None:
            return float(fixed[0]), float(fixed[1])
        vals = [getattr(s, axis)[np.isfinite(getattr(s, axis))] for s in self._series]
        allv = np.concatenate(vals) if vals else np.zeros(0)
        if allv.size == 0:
            return 0.0, 1.0
        lo, hi = float(allv.min()), float(allv.max())
        if hi - lo < 1e-12 * max(1.0, abs(hi)):
            lo, hi = lo - 0.5 * max(1.0, abs(lo)), hi + 0.5 * max(1.0, abs(hi))
        pad = 0.05 * (hi - lo)
        return (lo - pad, hi + pad) if axis == "y" else (lo, hi)

    def render(self) -> np.ndarray:
        """The chart as an (height, width, 3) uint8 RGB image."""
        w, h = self.width, self.height
        img = np.full((h, w, 3), 255, dtype=np.uint8)
        left, right, top, bottom = 110, 30, 50, 80
        pw, ph = w - left - right, h - top - bottom
        x0, x1 = self._range("x", self.xlim)
        y0, y1 = self._range("y", self.ylim)

        def px(x: np.ndarray) -> np.ndarray:
            return left + (np.asarray(x) - x0) / (x1 - x0) * (pw - 1)

        def py(y: np.ndarray) -> np.ndarray:
            return top + (y1 - np.asarray(y)) / (y1 - y0) * (ph - 1)

        for t in nice_ticks(x0, x1):
            c = int(round(float(px(t))))
            img[top:top + ph, c] = (225, 225, 225)
            img[top + ph:top + ph + 6, c] = (0, 0, 0)
            lab = _tick_label(t)
            tw, _ = text_size(lab)
            draw_text(img, lab, c - tw // 2, top + ph + 10)
        for t in nice_ticks(y0, y1):
            r = int(round(float(py(t))))
            img[r, left:left + pw] = (225, 225, 225)
            img[r, left - 6:left] = (0, 0, 0)
            lab = _tick_label(t)
            tw, th = text_size(lab)
            draw_text(img, lab, left - 10 - tw, r - th // 2)
        if y0 < 0.0 < y1:
            img[int(round(float(py(0.0)))), left:left + pw] = (160, 160, 160)
        img[top, left:left + pw] = img[top + ph - 1, left:left + pw] = (0, 0, 0)
        img[top:top + ph, left] = img[top:top + ph, left + pw - 1] = (0, 0, 0)

        clip = (left, top, left + pw, top + ph)
        for s in self._series:
            if np.all(np.isnan(s.y)):  # vertical marker
                xs, ys = s.x, np.array([y0, y1])
            elif np.all(np.isnan(s.x)):  # horizontal marker
                xs, ys = np.array([x0, x1]), s.y
            else:
                xs, ys = s.x, s.y
            _polyline(img, px(xs), py(ys), s.color, s.width, s.dashed, clip)

        tw, _ = text_size(self.title)
        draw_text(img, self.title, (w - tw) // 2, 14)
        tw, _ = text_size(self.xlabel)
        draw_text(img, self.xlabel, left + (pw - tw) // 2, h - 32)
        tw, _ = text_size(self.ylabel)
        draw_text(img, self.ylabel, 14, top + (ph + tw) // 2, vertical=True)
        labelled = [s for s in self._series if s.label]
        if labelled:
            lw = max(text_size(s.label or "")[0] for s in labelled) + 56
            lh = 22 * len(labelled) + 8
            lx, ly = left + pw - lw - 10, top + 10 if self.legend == "upper right" else top + ph - lh - 10
            box = img[ly:ly + lh, lx:lx + lw]
            box[...] = 255
            box[0, :] = box[-1, :] = box[:, 0] = box[:, -1] = (120, 120, 120)
            for i, s in enumerate(labelled):
                yy = ly + 8 + 22 * i
                _polyline(img, np.array([lx + 8.0, lx + 40.0]), np.array([yy + 7.0, yy + 7.0]), s.color,
                          max(s.width, 2), s.dashed, (0, 0, img.shape[1], img.shape[0]))
                draw_text(img, s.label or "", lx + 48, yy)
        return img

    def save(self, path: str | os.PathLike) -> None:
        """Render and write a PNG file."""
        write_png(path, self.render())


def _polyline(img: np.ndarray, xs: np.ndarray, ys: np.ndarray, color: tuple[int, int, int], width: int,
              dashed: bool, clip: tuple[int, int, int, int]) -> None:
    """Stamp a square brush along each segment whose both ends are finite (NaN breaks the line)."""
    xs = np.asarray(xs, dtype=np.float64)
    ys = np.asarray(ys, dtype=np.float64)
    if xs.size < 2:
        return
    ax, ay, bx, by = xs[:-1], ys[:-1], xs[1:], ys[1:]
    ok = np.isfinite(ax) & np.isfinite(ay) & np.isfinite(bx) & np.isfinite(by)
    ax, ay, bx, by = ax[ok], ay[ok], bx[ok], by[ok]
    n = (np.maximum(np.abs(bx - ax), np.abs(by - ay)) + 1).astype(np.int64)
    keep = n <= 20000
    ax, ay, bx, by, n = ax[keep], ay[keep], bx[keep], by[keep], n[keep]
    if n.size == 0:
        return
    seg = np.repeat(np.arange(n.size), n + 1)
    start = np.concatenate(([0], np.cumsum(n + 1)[:-1]))
    t = (np.arange(seg.size) - start[seg]) / n[seg]
    sx = ax[seg] + (bx - ax)[seg] * t
    sy = ay[seg] + (by - ay)[seg] * t
    if dashed:
        length = np.hypot(bx - ax, by - ay)
        run = np.concatenate(([0.0], np.cumsum(length)[:-1]))
        dist = run[seg] + length[seg] * t
        on = (dist // 6) % 2 == 0
        sx, sy = sx[on], sy[on]
    cx = np.rint(sx).astype(np.int64)
    cy = np.rint(sy).astype(np.int64)
    half = width // 2
    for dx in range(-half, width - half):
        for dy in range(-half, width - half):
            x, y = cx + dx, cy + dy
            inside = (x >= clip[0]) & (x < clip[2]) & (y >= clip[1]) & (y < clip[3])
            img[y[inside], x[inside]] = color


def encode_png(rgb: np.ndarray) -> bytes:
    """PNG bytes of an (h, w, 3) uint8 image (8-bit RGB, no interlace, filter 0 on every row)."""
    a = np.ascontiguousarray(rgb, dtype=np.uint8)
    if a.ndim != 3 or a.shape[2] != 3:
        raise ValueError(f"encode_png: expected an (h, w, 3) image, got shape {a.shape}")
    h, w, _ = a.shape
    raw = np.concatenate([np.zeros((h, 1), dtype=np.uint8), a.reshape(h, w * 3)], axis=1).tobytes()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def write_png(path: str | os.PathLike, rgb: np.ndarray) -> None:
    """Write an (h, w, 3) uint8 image as a PNG file — atomically, so a failure never leaves a
    half image under ``path`` (:func:`pvdkit.outputs.write_bytes`; its folder must exist)."""
    from pvdkit.outputs import write_bytes

    write_bytes(path, encode_png(rgb), "plot")


def decode_png(data: bytes) -> np.ndarray:
    """Read back a PNG written by :func:`encode_png` (8-bit RGB, filter 0); ValueError otherwise."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("decode_png: not a PNG file (bad signature)")
    pos, idat, size = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        if zlib.crc32(kind + body) != crc:
            raise ValueError(f"decode_png: bad CRC in chunk {kind!r}")
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if (depth, ctype, interlace) != (8, 2, 0):
                raise ValueError("decode_png: only 8-bit RGB non-interlaced images are supported")
            size = (h, w)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    if size is None:
        raise ValueError("decode_png: no IHDR chunk")
    h, w = size
    rows = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, 1 + 3 * w)
    if np.any(rows[:, 0] != 0):
        raise ValueError("decode_png: only filter type 0 is supported")
    return rows[:, 1:].reshape(h, w, 3).copy()
