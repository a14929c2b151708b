"""Backend-neutral figure descriptions and the data reductions that keep them small.

A :class:`FigureSpec` is a stack of :class:`Panel` s, each a list of :class:`Trace` s in data
coordinates. The SVG writer (:mod:`._svg`, no dependencies) and the PNG writer (:mod:`._png`,
matplotlib) draw the same specs, so the page and the exported figures show the same plots.

Long signals are reduced before they reach a spec: :func:`envelope` keeps the minimum and the
maximum of each pixel column (so a 50 000-sample record becomes ~1 500 points and no spike is lost),
:func:`density` keeps one dot per occupied cell of a scatter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Trace", "Panel", "FigureSpec", "envelope", "density", "diverging_color", "COLORS"]

# Okabe-Ito palette: distinguishable with the common colour-vision deficiencies, and in grey print.
COLORS = {
    "measured": "#222222",
    "raw": "#9a9a9a",
    "model": "#0072B2",
    "error": "#D55E00",
    "threshold": "#E69F00",
    "limit": "#CC79A7",
    "good": "#009E73",
    "accent": "#56B4E9",
}

TRACE_KINDS = ("line", "dots", "hband", "vspans", "hline", "vline", "bars", "hbars", "cells")


@dataclass(frozen=True)
class Trace:
    """One thing drawn in a panel, in data coordinates.

    kind : {"line", "dots", "hband", "vspans", "hline", "vline", "bars", "hbars", "cells"}
        ``line``: polyline through (x, y), NaN breaks it. ``dots``: markers at (x, y).
        ``hband``: the band ``y[0] <= y <= y[1]`` across the panel. ``vspans``: x intervals, ``x`` of
        shape (n, 2), across the panel. ``hline``/``vline``: lines at each value of ``y``/``x``.
        ``bars``: histogram, ``x`` the n + 1 bin edges, ``y`` the n heights. ``hbars``: horizontal
        bars of length ``x`` for the categories ``labels`` (top to bottom). ``cells``: a heat-map of the
        square matrix ``x`` (values in [-1, 1], NaN: blank) with ``labels`` naming its rows and
        columns (row 0 at the top), coloured by :func:`diverging_color`.
    x, y : ndarray
    label : str, optional
        Legend entry.
    color : str
        CSS colour ``#rrggbb``.
    width : float
        Line width [px] (marker diameter for dots).
    dash : bool
        Dashed line.
    opacity : float
        0..1 (bands and spans are drawn with it as fill opacity).
    labels : tuple of str
        Category names of ``hbars``.
    autoscale : bool
        Whether the trace widens the panel's automatic limits (False: e.g. a reference line that is
        drawn only when the data come near it).
    """

    kind: str
    x: np.ndarray = field(default_factory=lambda: np.empty(0))
    y: np.ndarray = field(default_factory=lambda: np.empty(0))
    label: str | None = None
    color: str = COLORS["measured"]
    width: float = 1.2
    dash: bool = False
    opacity: float = 1.0
    labels: tuple[str, ...] = ()
    autoscale: bool = True

    def __post_init__(self) -> None:
        if self.kind not in TRACE_KINDS:
            raise ValueError(f"Trace kind must be one of {TRACE_KINDS}, got {self.kind!r}")
        object.__setattr__(self, "x", np.asarray(self.x, dtype=float))
        object.__setattr__(self, "y", np.asarray(self.y, dtype=float))
        if self.kind in ("line", "dots") and self.x.shape != self.y.shape:
            raise ValueError(f"{self.kind} trace {self.label!r}: x has shape {self.x.shape} but y has {self.y.shape}")
        if self.kind == "bars" and self.x.size != self.y.size + 1:
            raise ValueError(f"bars trace {self.label!r}: {self.x.size} edges for {self.y.size} heights")
        if self.kind == "hbars" and self.x.size != len(self.labels):
            raise ValueError(f"hbars trace: {self.x.size} values for {len(self.labels)} labels")
        if self.kind == "cells" and self.x.shape != (len(self.labels), len(self.labels)):
            raise ValueError(f"cells trace: a {len(self.labels)} x {len(self.labels)} matrix expected for "
                             f"{len(self.labels)} labels, got shape {self.x.shape}")


@dataclass(frozen=True)
class Panel:
    """One set of axes: traces, axis labels, optional fixed limits; ``height`` in px."""

    traces: tuple[Trace, ...]
    xlabel: str = ""
    ylabel: str = ""
    title: str = ""
    xlim: tuple[float, float] | None = None
    ylim: tuple[float, float] | None = None
    height: int = 190
    legend: bool = True


@dataclass(frozen=True)
class FigureSpec:
    """A figure: panels stacked top to bottom; ``name`` is its file stem and HTML anchor."""

    name: str
    title: str
    panels: tuple[Panel, ...]
    caption: str = ""
    width: int = 860


def diverging_color(v: float, neg: str = COLORS["model"], pos: str = COLORS["error"]) -> str:
    """``#rrggbb`` of ``v`` in [-1, 1] on a white-centred scale: ``neg`` at -1, white at 0, ``pos`` at 1.

    NaN (a value that was not estimated) is light grey.

    Examples
    --------
    >>> diverging_color(0.0), diverging_color(1.0), diverging_color(-1.0), diverging_color(float("nan"))
    ('#ffffff', '#d55e00', '#0072b2', '#eeeeee')
    """
    if not np.isfinite(v):
        return "#eeeeee"
    a = min(abs(float(v)), 1.0)
    end = pos if v > 0 else neg
    rgb = [int(end[k:k + 2], 16) for k in (1, 3, 5)]
    return "#" + "".join(f"{round(255 + a * (c - 255)):02x}" for c in rgb)


def envelope(x: np.ndarray, y: np.ndarray, n_buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """Min/max envelope of a long signal: per bucket, its minimum and maximum sample in time order.

    Parameters
    ----------
    x, y : ndarray, shape (N,)
        Abscissa (increasing) and signal.
    n_buckets : int
        Number of buckets, about the pixel width of the plot.

    Returns
    -------
    xe, ye : ndarray, shape (M,), M <= 2 * n_buckets
        The input unchanged when ``N <= 2 * n_buckets``.

    Examples
    --------
    >>> xe, ye = envelope(np.arange(10.0), np.array([0, 5, 1, 1, -3, 2, 2, 2, 9, 0.0]), 2)
    >>> ye.tolist()
    [5.0, -3.0, 9.0, 0.0]
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = y.size
    if n <= 2 * n_buckets or n_buckets < 1:
        return x, y
    k = int(np.ceil(n / n_buckets))
    m = int(np.ceil(n / k))
    pad = m * k - n
    yp = np.concatenate([y, np.full(pad, y[-1])]).reshape(m, k)
    lo = np.argmin(yp, axis=1)
    hi = np.argmax(yp, axis=1)
    first = np.minimum(lo, hi)
    second = np.maximum(lo, hi)
    base = np.arange(m) * k
    idx = np.column_stack([base + first, base + second]).ravel()
    idx = np.minimum(idx, n - 1)
    keep = np.ones(idx.size, dtype=bool)
    keep[1::2] = idx[1::2] != idx[0::2]  # a bucket whose min and max are one sample gives one point
    idx = idx[keep]
    return x[idx], y[idx]


def density(x: np.ndarray, y: np.ndarray, shape: tuple[int, int] = (260, 140),
            xlim: tuple[float, float] | None = None,
            ylim: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One point per occupied cell of a ``shape = (nx, ny)`` grid: a scatter of any length, drawn small.

    Parameters
    ----------
    x, y : ndarray, shape (N,)
    shape : (int, int)
        Grid cells along x and y (about the plot size in markers).
    xlim, ylim : (float, float), optional
        Grid extent; default the data range.

    Returns
    -------
    xc, yc : ndarray, shape (M,)
        Centres of the occupied cells, M <= nx * ny.

    Examples
    --------
    >>> xc, yc = density(np.array([0.0, 0.01, 1.0]), np.array([0.0, 0.01, 1.0]), (10, 10))
    >>> xc.size
    2
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size == 0:
        return x, y
    nx, ny = shape
    x0, x1 = xlim if xlim else (float(x.min()), float(x.max()))
    y0, y1 = ylim if ylim else (float(y.min()), float(y.max()))
    sx = (x1 - x0) or 1.0
    sy = (y1 - y0) or 1.0
    ix = np.clip(((x - x0) / sx * nx).astype(np.int64), 0, nx - 1)
    iy = np.clip(((y - y0) / sy * ny).astype(np.int64), 0, ny - 1)
    cells = np.unique(ix * ny + iy)
    cx, cy = np.divmod(cells, ny)
    return x0 + (cx + 0.5) * sx / nx, y0 + (cy + 0.5) * sy / ny
