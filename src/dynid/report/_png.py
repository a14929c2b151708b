"""Draw :class:`~._spec.FigureSpec` s as PNG files with matplotlib (extra ``report``).

Only ``--figures DIR`` needs this: the HTML page draws the same specs itself. matplotlib is used
through its object API with the Agg canvas, so no global pyplot state and no display is involved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import numpy as np

from ..errors import MissingExtraError
from .._atomic import Staging, commit_files
from ._spec import FigureSpec, Panel, Trace, diverging_color
from ._svg import cell_labels, panel_limits

__all__ = ["write_pngs", "figure_png"]


def _matplotlib():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as err:
        raise MissingExtraError("PNG figures of the report", "report", "matplotlib") from err
    return Figure, FigureCanvasAgg


def _draw(ax, panel: Panel) -> None:
    for tr in panel.traces:
        _draw_trace(ax, tr)
    xlim, ylim = panel_limits(panel)  # the SVG's limits, so both drawings frame the data alike
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    if panel.title:
        ax.set_title(panel.title, loc="left", fontsize=10, fontweight="bold")
    if any(t.kind == "cells" for t in panel.traces):
        ax.grid(False)
    else:
        ax.grid(True, color="#e6e6e6", linewidth=0.8)
    ax.set_axisbelow(True)
    if panel.legend and any(t.label for t in panel.traces):
        ax.legend(loc="best", fontsize=8, framealpha=0.85)


def _draw_trace(ax, tr: Trace) -> None:
    ls = "--" if tr.dash else "-"
    lab = tr.label
    if tr.kind == "line":
        ax.plot(tr.x, tr.y, color=tr.color, lw=tr.width, ls=ls, label=lab, alpha=tr.opacity)
    elif tr.kind == "dots":
        ax.scatter(tr.x, tr.y, s=tr.width**2, color=tr.color, label=lab, alpha=tr.opacity, linewidths=0)
    elif tr.kind == "hband" and tr.y.size >= 2:
        ax.axhspan(tr.y[0], tr.y[1], color=tr.color, alpha=tr.opacity, lw=0, label=lab)
    elif tr.kind == "vspans":  # one collection, not an artist per span (a long record has hundreds)
        from matplotlib.collections import PolyCollection

        verts = [[(a, 0.0), (b, 0.0), (b, 1.0), (a, 1.0)] for a, b in tr.x.reshape(-1, 2)]
        ax.add_collection(PolyCollection(verts, transform=ax.get_xaxis_transform(), facecolors=tr.color,
                                         alpha=tr.opacity, linewidths=0, label=lab), autolim=False)
    elif tr.kind == "hline":
        for k, v in enumerate(tr.y):
            ax.axhline(v, color=tr.color, lw=tr.width, ls=ls, label=lab if k == 0 else None)
    elif tr.kind == "vline":
        for k, v in enumerate(tr.x):
            ax.axvline(v, color=tr.color, lw=tr.width, ls=ls, label=lab if k == 0 else None)
    elif tr.kind == "bars":
        ax.bar(tr.x[:-1], tr.y, width=np.diff(tr.x), align="edge", color=tr.color, alpha=tr.opacity, label=lab)
    elif tr.kind == "hbars":
        n = len(tr.labels)
        ax.barh(np.arange(n)[::-1], np.nan_to_num(tr.x, nan=0.0), height=0.7, color=tr.color, alpha=tr.opacity,
                label=lab)
        ax.set_yticks(np.arange(n)[::-1], tr.labels, fontsize=8)
    elif tr.kind == "cells":
        _draw_cells(ax, tr)


def _draw_cells(ax, tr: Trace) -> None:
    """A heat-map as the SVG draws it: row 0 on top, columns numbered, the value in each cell."""
    from matplotlib.patches import Rectangle

    n = len(tr.labels)
    for r in range(n):
        for c in range(n):
            v = tr.x[r, c]
            ax.add_patch(Rectangle((c - 0.5, n - 1 - r - 0.5), 1.0, 1.0, facecolor=diverging_color(v),
                                   edgecolor="white"))
            if np.isfinite(v) and n <= 16:
                ax.text(c, n - 1 - r, f"{v:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if abs(v) > 0.6 else "#222222")
    ax.set_xticks(np.arange(n), [str(k + 1) for k in range(n)], fontsize=8)
    ax.set_yticks(np.arange(n)[::-1], cell_labels(tr), fontsize=8)


def figure_png(fig: FigureSpec, dpi: int = 150) -> bytes:
    """The figure as PNG bytes, at the same size in inches as the SVG at 96 px per inch."""
    import io

    Figure, FigureCanvasAgg = _matplotlib()
    heights = [p.height for p in fig.panels]
    w_in = fig.width / 96
    h_in = (sum(heights) + (24 if fig.title else 0)) / 96
    f = Figure(figsize=(w_in, h_in), dpi=dpi, layout="constrained")
    FigureCanvasAgg(f)
    axes = f.subplots(len(fig.panels), 1, squeeze=False, height_ratios=heights)[:, 0]
    for ax, panel in zip(axes, fig.panels):
        _draw(ax, panel)
    if fig.title:
        f.suptitle(fig.title, x=0.01, ha="left", fontsize=11, fontweight="bold")
    buf = io.BytesIO()
    f.savefig(buf, format="png", dpi=dpi, facecolor="white")
    return buf.getvalue()


def write_pngs(figures: Iterable[FigureSpec], out_dir: str | Path, dpi: int = 150, *,
               staging: Staging | None = None) -> list[Path]:
    """Write ``<name>.png`` for every figure into ``out_dir`` (atomically, all or none; ``staging``: staged there,
    for the caller to commit)."""
    out = Path(out_dir)
    files = {out / f"{fig.name}.png": figure_png(fig, dpi) for fig in figures}
    if staging is None:
        commit_files(files)
    else:
        for path, data in files.items():
            staging.write(path, data)
    return list(files)
