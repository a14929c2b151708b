"""Draw a :class:`~._spec.FigureSpec` as a standalone SVG document (no dependencies).

Coordinates are written as integers in tenths of a pixel (the drawing is scaled by 0.1), which
keeps a 1 500-point line near 12 kB. Text uses the system sans-serif font, so the SVG needs no
external resource and shows the same inside an ``<img>``, when printed and when saved alone.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

import numpy as np

from ._spec import FigureSpec, Panel, Trace, diverging_color

__all__ = ["figure_svg", "figure_size", "panel_limits", "nice_ticks", "tick_labels", "cell_labels", "MARGIN"]

MARGIN = {"left": 66, "right": 14, "top": 26, "bottom": 40}
TITLE_H = 24
FONT = "DejaVu Sans,Helvetica,Arial,sans-serif"


def nice_ticks(lo: float, hi: float, target: int = 6) -> np.ndarray:
    """Round tick values (1, 2, 2.5 or 5 times a power of ten) inside ``[lo, hi]``.

    Examples
    --------
    >>> nice_ticks(0.0, 1.0).tolist()
    [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    >>> nice_ticks(-3.3, 7.1, 4).tolist()
    [0.0, 5.0]
    >>> nice_ticks(-3.3, 7.1).tolist()
    [-2.0, 0.0, 2.0, 4.0, 6.0]
    """
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return np.array([lo]) if math.isfinite(lo) else np.empty(0)
    raw = (hi - lo) / max(target, 1)
    e = math.floor(math.log10(raw))
    mag = 10.0 ** e
    mult = 10.0
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        if m * mag >= raw:
            mult = m
            break
    step = mult * mag
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    k = np.arange(first, last + 1) * mult
    # k * mult / 10**-e rounds correctly where k * (mult * 10**e) would not (3 * 0.2 = 0.6000000000000001)
    ticks = k / 10.0 ** (-e) if e < 0 else k * 10.0**e
    return ticks


def tick_labels(ticks: np.ndarray) -> list[str]:
    """Shortest fixed-point labels that tell the ticks apart (``g`` format for extreme magnitudes)."""
    if ticks.size == 0:
        return []
    big = float(np.max(np.abs(ticks)))
    step = float(np.min(np.diff(ticks))) if ticks.size > 1 else (abs(float(ticks[0])) or 1.0)
    if big >= 1e5 or (big > 0 and big < 1e-3):
        for digits in range(3, 18):  # the fewest significant digits that still tell the ticks apart
            out = [f"{v:.{digits}g}" for v in ticks]
            if len(set(out)) == len(out):
                break
        return out
    dec = max(0, -math.floor(math.log10(step) + 1e-12))
    if any(abs(round(v, dec) - v) > step * 1e-6 for v in ticks):
        dec += 1
    out = [f"{v:.{dec}f}" for v in ticks]
    return [f"{0.0:.{dec}f}" if float(s) == 0 else s for s in out]


def panel_limits(panel: Panel) -> tuple[tuple[float, float], tuple[float, float]]:
    """The (x, y) limits of a panel: its fixed limits, else the traces' extent (y padded by 6 %)."""
    xs, ys = [], []
    for tr in panel.traces:
        if not tr.autoscale:
            continue
        if tr.kind in ("line", "dots"):
            xs.append(tr.x)
            ys.append(tr.y)
        elif tr.kind in ("hband", "hline"):
            ys.append(tr.y)
        elif tr.kind == "vline":
            xs.append(tr.x)
        elif tr.kind == "bars":
            xs.append(tr.x)
            ys.append(np.append(tr.y, 0.0))
        elif tr.kind == "hbars":
            xs.append(np.append(tr.x, 0.0))
            ys.append(np.array([-0.5, len(tr.labels) - 0.5]))
        elif tr.kind == "cells":
            xs.append(np.array([-0.5, len(tr.labels) - 0.5]))
            ys.append(np.array([-0.5, len(tr.labels) - 0.5]))
    if any(t.kind == "cells" for t in panel.traces):   # the cells fill the frame exactly
        return _span(xs, pad=0.0), _span(ys, pad=0.0)
    bars = any(t.kind == "hbars" for t in panel.traces)
    xlim = panel.xlim or _span(xs, pad=0.04 if bars else 0.0)
    ylim = panel.ylim or _span(ys, pad=0.06)
    return xlim, ylim


def _span(arrays: list[np.ndarray], pad: float) -> tuple[float, float]:
    vals = np.concatenate([a.ravel() for a in arrays]) if arrays else np.empty(0)
    vals = vals[np.isfinite(vals)]
    if vals.size == 0:
        return 0.0, 1.0
    lo, hi = float(vals.min()), float(vals.max())
    if hi <= lo:
        d = abs(lo) * 0.1 or 1.0
        return lo - d, hi + d
    d = (hi - lo) * pad
    return lo - d, hi + d


class _Frame:
    """Data -> tenths-of-pixel transform of one panel."""

    def __init__(self, x0: float, y0: float, w: float, h: float, xlim, ylim) -> None:
        self.x0, self.y0, self.w, self.h = x0, y0, w, h
        self.xlim, self.ylim = xlim, ylim
        self.sx = w / ((xlim[1] - xlim[0]) or 1.0)
        self.sy = h / ((ylim[1] - ylim[0]) or 1.0)

    def px(self, x):
        return self.x0 + (np.asarray(x, dtype=float) - self.xlim[0]) * self.sx

    def py(self, y):
        return self.y0 + self.h - (np.asarray(y, dtype=float) - self.ylim[0]) * self.sy


def _ints(v: np.ndarray) -> np.ndarray:
    """Pixels -> integer tenths, clamped so that off-panel values stay drawable (the clip hides them)."""
    return np.round(np.clip(v, -1e5, 1e5) * 10).astype(np.int64)


def _polyline(xp: np.ndarray, yp: np.ndarray) -> str:
    ok = np.isfinite(xp) & np.isfinite(yp)
    parts = []
    edges = np.flatnonzero(np.diff(np.concatenate([[0], ok.astype(np.int8), [0]])))
    for a, b in zip(edges[0::2], edges[1::2]):
        xy = np.empty(2 * (b - a), dtype=np.int64)
        xy[0::2] = _ints(xp[a:b])
        xy[1::2] = _ints(yp[a:b])
        s = " ".join(map(str, xy.tolist()))
        head, _, rest = s.partition(" ")
        head2, _, rest = rest.partition(" ")
        parts.append(f"M{head} {head2}" + (f"L{rest}" if rest else "h0"))
    return "".join(parts)


def _color_attrs(tr: Trace) -> str:
    return f'stroke="{tr.color}"' + (f' stroke-opacity="{tr.opacity:.2f}"' if tr.opacity < 1 else "")


def _trace_svg(tr: Trace, fr: _Frame) -> str:
    x0, x1 = fr.x0, fr.x0 + fr.w
    y0, y1 = fr.y0, fr.y0 + fr.h
    dash = ' stroke-dasharray="60 40"' if tr.dash else ""
    if tr.kind == "line":
        d = _polyline(fr.px(tr.x), fr.py(tr.y))
        return (f'<path d="{d}" fill="none" {_color_attrs(tr)} stroke-width="{10 * tr.width:.0f}" '
                f'stroke-linejoin="round"{dash}/>') if d else ""
    if tr.kind == "dots":
        xp, yp = _ints(fr.px(tr.x)), _ints(fr.py(tr.y))
        d = "".join(f"M{a} {b}h0" for a, b in zip(xp.tolist(), yp.tolist()))
        return (f'<path d="{d}" fill="none" {_color_attrs(tr)} stroke-width="{10 * tr.width:.0f}" '
                'stroke-linecap="round"/>') if d else ""
    if tr.kind == "hband":
        a, b = sorted(fr.py(tr.y[:2]).tolist())
        return (f'<rect x="{_i(x0)}" y="{_i(a)}" width="{_i(x1 - x0)}" height="{_i(b - a)}" fill="{tr.color}" '
                f'fill-opacity="{tr.opacity:.2f}"/>')
    if tr.kind == "vspans":
        spans = tr.x.reshape(-1, 2)
        d = "".join(f"M{_i(a)} {_i(y0)}H{_i(b)}V{_i(y1)}H{_i(a)}Z"
                    for a, b in zip(fr.px(spans[:, 0]).tolist(), fr.px(spans[:, 1]).tolist()))
        return f'<path d="{d}" fill="{tr.color}" fill-opacity="{tr.opacity:.2f}"/>' if d else ""
    if tr.kind in ("hline", "vline"):
        if tr.kind == "hline":
            d = "".join(f"M{_i(x0)} {_i(v)}H{_i(x1)}" for v in fr.py(tr.y).tolist())
        else:
            d = "".join(f"M{_i(v)} {_i(y0)}V{_i(y1)}" for v in fr.px(tr.x).tolist())
        return f'<path d="{d}" {_color_attrs(tr)} stroke-width="{10 * tr.width:.0f}"{dash}/>' if d else ""
    if tr.kind == "bars":
        xe, base = fr.px(tr.x), fr.py(0.0)
        top = fr.py(tr.y)
        d = "".join(f"M{_i(a)} {_i(base)}V{_i(t)}H{_i(b)}V{_i(base)}Z"
                    for a, b, t, h in zip(xe[:-1].tolist(), xe[1:].tolist(), top.tolist(), tr.y.tolist()) if h != 0)
        return f'<path d="{d}" fill="{tr.color}" fill-opacity="{tr.opacity:.2f}"/>' if d else ""
    if tr.kind == "hbars":
        n = len(tr.labels)
        yc = fr.py(np.arange(n)[::-1])
        half = 0.35 * fr.sy
        base = fr.px(0.0)
        d = "".join(f"M{_i(base)} {_i(c - half)}H{_i(e)}V{_i(c + half)}H{_i(base)}Z"
                    for c, e in zip(yc.tolist(), fr.px(tr.x).tolist()) if math.isfinite(e))
        return f'<path d="{d}" fill="{tr.color}" fill-opacity="{tr.opacity:.2f}"/>' if d else ""
    if tr.kind == "cells":  # one path per colour, a white gap between the cells
        n = len(tr.labels)
        gap = 0.5
        by_color: dict[str, list[str]] = {}
        for r in range(n):
            ya, yb = sorted(fr.py([n - 1 - r - 0.5, n - 1 - r + 0.5]).tolist())
            for c in range(n):
                xa, xb = float(fr.px(c - 0.5)) + gap, float(fr.px(c + 0.5)) - gap
                by_color.setdefault(diverging_color(tr.x[r, c]), []).append(
                    f"M{_i(xa)} {_i(ya + gap)}H{_i(xb)}V{_i(yb - gap)}H{_i(xa)}Z")
        return "".join(f'<path d="{"".join(d)}" fill="{color}"/>' for color, d in by_color.items())
    return ""  # pragma: no cover - kinds are checked by Trace


def _i(v: float) -> int:
    return int(round(max(-1e5, min(1e5, v)) * 10))


def _text(x: float, y: float, s: str, *, size: int = 11, anchor: str = "middle", color: str = "#333",
          rotate: bool = False, weight: str = "normal") -> str:
    tr = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if rotate else ""
    w = ' font-weight="bold"' if weight != "normal" else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{color}"{w}{tr}>'
            f"{escape(s)}</text>")


def _legend_items(panel: Panel) -> list[tuple[Trace, float]]:
    return [(t, 6.2 * len(t.label) + 32) for t in panel.traces if t.label] if panel.legend else []


def _header_layout(panel: Panel, w: float) -> tuple[list[list[tuple[Trace, float]]], bool, int]:
    """Legend rows, whether the first row shares the title line, and the number of header lines."""
    items = _legend_items(panel)
    title_w = 7.4 * len(panel.title) + 16 if panel.title else 0.0
    if sum(iw for _, iw in items) + title_w <= w:
        return [items] if items else [], True, 1
    rows: list[list[tuple[Trace, float]]] = []
    for it in items:
        if rows and sum(iw for _, iw in rows[-1]) + it[1] <= w:
            rows[-1].append(it)
        else:
            rows.append([it])
    return rows, False, len(rows) + (1 if panel.title else 0)


def cell_labels(tr: Trace) -> list[str]:
    """Row labels of a ``cells`` trace: ``"k name"``, ``k`` the column number the x axis shows."""
    return [f"{k + 1} {s}" for k, s in enumerate(tr.labels)]


def _cell_axes(tr: Trace, fr: "_Frame") -> list[str]:
    """Column numbers below a heat-map, ``"k name"`` left of its rows, and the values in the cells."""
    n = len(tr.labels)
    bottom = fr.y0 + fr.h + 14
    out = [_text(float(fr.px(c)), bottom, str(c + 1), size=10) for c in range(n)]
    out += [_text(fr.x0 - 5, float(fr.py(n - 1 - r)) + 3.5, s, size=10, anchor="end")
            for r, s in enumerate(cell_labels(tr))]
    return out + _cell_values(tr, fr)


def _cell_values(tr: Trace, fr: "_Frame") -> list[str]:
    """The value printed in each cell (two decimals), dark or white for contrast; none when cells are small."""
    n = len(tr.labels)
    if fr.w / max(n, 1) < 26:
        return []
    out = []
    for r in range(n):
        for c in range(n):
            v = tr.x[r, c]
            s = "—" if not math.isfinite(v) else "0" if abs(v) < 0.005 else f"{v:.2f}".replace("-", "−")
            color = "#ffffff" if math.isfinite(v) and abs(v) > 0.6 else "#222222"
            out.append(_text(float(fr.px(c)), float(fr.py(n - 1 - r)) + 3.5, s, size=9, color=color))
    return out


def _panel_svg(panel: Panel, top: float, width: int, clip_id: str) -> tuple[str, float]:
    hbars = next((t for t in panel.traces if t.kind == "hbars"), None)
    cells = next((t for t in panel.traces if t.kind == "cells"), None)
    left = MARGIN["left"]
    if hbars is not None:
        left = max(left, 14 + 6.5 * max((len(s) for s in hbars.labels), default=4))
    if cells is not None:
        left = max(left, 14 + 6.5 * max((len(s) for s in cell_labels(cells)), default=4))
    x0 = left
    w = width - left - MARGIN["right"]
    rows, shared, n_lines = _header_layout(panel, w)
    extra = 16 * max(0, n_lines - 1)
    y0 = top + MARGIN["top"] + extra
    h = panel.height - MARGIN["top"] - MARGIN["bottom"] - extra
    xlim, ylim = panel_limits(panel)
    fr = _Frame(x0, y0, w, h, xlim, ylim)
    out = [f'<clipPath id="{clip_id}"><rect x="{x0}" y="{y0}" width="{w}" height="{h}"/></clipPath>',
           f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="#fff" stroke="#bbb"/>']
    grid, labels = [], []
    if cells is not None:
        labels = _cell_axes(cells, fr)
    else:
        xt = _ticks(xlim, w / 90)
        for v, s in zip(xt.tolist(), tick_labels(xt)):
            p = float(fr.px(v))
            grid.append(f"M{p:.1f} {y0}V{y0 + h}")
            labels.append(_text(p, y0 + h + 14, s, size=10))
    if hbars is not None:
        for k, s in enumerate(hbars.labels):
            p = float(fr.py(len(hbars.labels) - 1 - k))
            labels.append(_text(x0 - 5, p + 3.5, s, size=10, anchor="end"))
    elif cells is None:
        yt = _ticks(ylim, h / 40)
        for v, s in zip(yt.tolist(), tick_labels(yt)):
            p = float(fr.py(v))
            grid.append(f"M{x0} {p:.1f}H{x0 + w}")
            labels.append(_text(x0 - 5, p + 3.5, s, size=10, anchor="end"))
    out.append(f'<path d="{"".join(grid)}" stroke="#e6e6e6" stroke-width="1"/>')
    body = "".join(_trace_svg(tr, fr) for tr in panel.traces)
    out.append(f'<g clip-path="url(#{clip_id})"><g transform="scale(0.1)">{body}</g></g>')
    out.extend(labels)
    if panel.xlabel:
        out.append(_text(x0 + w / 2, y0 + h + 32, panel.xlabel))
    if panel.ylabel:
        out.append(_text(14, y0 + h / 2, panel.ylabel, rotate=True))
    if panel.title:
        out.append(_text(x0, top + 16, panel.title, anchor="start", weight="bold", size=12))
    for k, row in enumerate(rows):
        line = k if shared or not panel.title else k + 1
        if shared:
            out.append(_legend(row, x0 + w, top + 16 + 16 * line))
        else:
            out.append(_legend(row, x0 + sum(iw for _, iw in row), top + 16 + 16 * line))
    return "".join(out), top + panel.height


def _ticks(lim: tuple[float, float], target: float) -> np.ndarray:
    """At least three ticks where the span allows, about ``target`` of them."""
    n = max(3, int(target))
    ticks = nice_ticks(*lim, target=n)
    while ticks.size < 3 and n < 12:
        n += 1
        ticks = nice_ticks(*lim, target=n)
    return ticks


def _legend(items: list[tuple[Trace, float]], right: float, y: float) -> str:
    out, x = [], right
    for tr, iw in reversed(items):
        x -= iw
        tx = x + 24
        out.append(_text(tx, y, tr.label, size=11, anchor="start"))
        if tr.kind in ("hband", "vspans", "bars", "hbars"):
            out.append(f'<rect x="{tx - 20:.1f}" y="{y - 9:.1f}" width="16" height="10" fill="{tr.color}" '
                       f'fill-opacity="{max(tr.opacity, 0.35):.2f}"/>')
        elif tr.kind == "dots":
            out.append(f'<circle cx="{tx - 10:.1f}" cy="{y - 4:.1f}" r="3" fill="{tr.color}"/>')
        else:
            dash = ' stroke-dasharray="6 4"' if tr.dash else ""
            out.append(f'<path d="M{tx - 21:.1f} {y - 4:.1f}h18" stroke="{tr.color}" stroke-width="2"{dash}/>')
    return "".join(out)


def figure_svg(fig: FigureSpec) -> str:
    """The figure as a standalone SVG document (``width`` px wide, panels stacked)."""
    parts = []
    y = TITLE_H if fig.title else 4
    for k, panel in enumerate(fig.panels):
        s, y = _panel_svg(panel, y, fig.width, f"c{k}")
        parts.append(s)
    height = int(math.ceil(y)) + 2
    title = _text(8, 17, fig.title, anchor="start", size=14, weight="bold") if fig.title else ""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{fig.width}" height="{height}" '
            f'viewBox="0 0 {fig.width} {height}" font-family="{FONT}">'
            f'<rect width="100%" height="100%" fill="#fff"/>{title}{"".join(parts)}</svg>')


def figure_size(fig: FigureSpec) -> tuple[int, int]:
    """(width, height) in px of :func:`figure_svg`'s drawing."""
    y = (TITLE_H if fig.title else 4) + sum(p.height for p in fig.panels)
    return fig.width, int(math.ceil(y)) + 2
