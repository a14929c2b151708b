"""The robot's history in a run's report: its runs in the registry and this run's drift against its first.

Fed by a plain mapping, what :meth:`dynid.fleet.registry.Registry.history_view` returns: ``robot``,
``registry`` (URL without password), ``runs`` (oldest first, this run last with ``"current": True``;
each with ``number`` (1 = the robot's first run), ``time, model, friction, success, recording,
parameters, metrics``), ``n_runs`` (the robot's runs, when ``runs`` leaves some out), ``drift`` (per
parameter: ``name, unit, first, latest, change, sigma, significant, z``), ``compared_with`` (the
number of the run the drift is against: the robot's first of the same model and configuration; None:
none), ``comparison`` (which runs were compared and skipped, in sentences) and ``sigmas`` (the
significance rule). The report keeps it beside the page (``report.history.json``, tied to the
result.json it was made with) so that ``dynid report`` renders the section again.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..io.outputs import HISTORY_SUFFIX, report_files
from ._spec import COLORS, FigureSpec, Panel, Trace

__all__ = ["history_figure", "history_html", "history_path", "history_bytes", "stored_history", "HISTORY_SUFFIX"]

MAX_RUNS = 40      # runs listed in the table (the latest)
MAX_LINES = 6      # parameters drawn in the figure
_PALETTE = (COLORS["error"], COLORS["model"], COLORS["good"], COLORS["limit"], COLORS["threshold"], COLORS["accent"])


def _e(s: Any) -> str:
    return html.escape(str(s), quote=True)


def _num(v: Any, digits: int = 5) -> str:
    if v is None or not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
        return "—"
    return f"{v:.{digits}g}"


def _when(iso: Any) -> str:
    return str(iso)[:19].replace("T", " ") if iso else "—"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "num") -> str:
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _relative(row: Mapping[str, Any]) -> float | None:
    first, change = row.get("first"), row.get("change")
    if not first or change is None:
        return None
    return change / abs(first)


def _shown(drift: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The parameters drawn: significant ones first, then the largest |change / sigma|, non-zero first values."""
    rows = [d for d in drift if d.get("first") and d.get("latest") is not None]
    rows.sort(key=lambda d: (not d.get("significant"), -abs(d["z"]) if d.get("z") is not None else math.inf))
    return rows[:MAX_LINES]


def history_figure(view: Mapping[str, Any]) -> FigureSpec | None:
    """Each drawn parameter's change from the run compared with (the robot's first of the same model and
    configuration) [%], run by run (None: fewer than two runs)."""
    runs = list(view.get("runs") or [])
    shown = _shown(view.get("drift") or [])
    if len(runs) < 2 or not shown:
        return None
    x = np.array([r.get("number", k + 1) for k, r in enumerate(runs)], dtype=float)
    n = int(x[-1])
    traces = [Trace("hline", y=np.array([0.0]), color="#999999", width=1.0, dash=True)]
    for k, d in enumerate(shown):
        first = float(d["first"])
        y = np.array([np.nan if (v := (r.get("parameters") or {}).get(d["name"])) is None else 100 * (v / abs(first) -
                      np.sign(first)) for r in runs], dtype=float)
        color = _PALETTE[k % len(_PALETTE)]
        label = d["name"] + (" (drift)" if d.get("significant") else "")
        traces += [Trace("line", x, y, label=label, color=color, width=1.6),
                   Trace("dots", x, y, color=color, width=6.0)]
    panel = Panel(tuple(traces), xlabel=f"run (1 = the robot's first, {n} = this run)",
                  ylabel=f"change from run {view.get('compared_with', 1)} [%]", xlim=(0.5, max(n, 4.5) + 0.5), height=260)
    return FigureSpec("history", f"Parameters of robot {view.get('robot', '')} over its runs", (panel,),
                      caption="Each parameter relative to its value in the run compared with, the robot's first of "
                              "the same model and configuration (0 % = unchanged); "
                              "the parameters that drifted most, in standard deviations, are drawn.")


def _max_error(run: Mapping[str, Any]) -> str:
    errs = [e for e in (run.get("metrics") or {}).get("max_relative_error") or [] if e is not None]
    return f"{100 * max(errs):.2f} %" if errs else "—"


def history_html(view: Mapping[str, Any] | None, figure_html: str = "") -> str:
    """The ``Robot history`` section (empty without a view); ``figure_html`` is :func:`history_figure` drawn."""
    if not view:
        return ""
    runs = list(view.get("runs") or [])
    drift = list(view.get("drift") or [])
    sigmas = float(view.get("sigmas") or 3.0)
    robot = view.get("robot", "")
    total = int(view.get("n_runs") or len(runs))
    out = [f'<section id="history"><h2>Robot history: {_e(robot)}</h2>',
           f"<p>{total} run{'s' if total != 1 else ''} of robot <b>{_e(robot)}</b> in the registry "
           f"<code>{_e(view.get('registry', ''))}</code>, this run last.</p>"]
    ref = view.get("compared_with", 1 if len(runs) > 1 else None)   # (views kept before 'compared_with')
    first = next((r for r in runs if r.get("number") == ref), runs[0] if runs else {})
    if len(runs) < 2:
        out.append('<p class="none">This is the robot\'s first run: later runs will be compared with it.</p>')
    elif ref is None:
        out.append('<p class="none">This is the robot\'s first run of this model and configuration: later runs of '
                   'them will be compared with it.</p>')
    else:
        flagged = [d for d in drift if d.get("significant")]
        if flagged:
            parts = ", ".join(f"<code>{_e(d['name'])}</code>" + (f" ({100 * r:+.1f} %)" if (r := _relative(d)) is not None
                                                                  else "") for d in flagged)
            out.append(f'<p class="bad">Drift against run {ref} ({_e(_when(first.get("time")))} UTC): {parts} '
                       f"changed by more than {sigmas:g} combined standard deviations. Growing friction is the "
                       "classic sign of wear; a changed rigid-body parameter points to a changed payload, tool or "
                       "configuration.</p>")
        else:
            out.append(f'<p class="none">No parameter changed by more than {sigmas:g} combined standard deviations '
                       f"since run {ref} ({_e(_when(first.get('time')))} UTC).</p>")
        out.append(figure_html)
    if len(view.get("comparison") or ()) > 1:      # runs skipped, or compared by model alone
        out.append('<p class="note">' + "; ".join(_e(line) for line in view["comparison"]) + ".</p>")
    listed = runs[-MAX_RUNS:]
    rows = []
    for pos, r in enumerate(listed, start=len(runs) - len(listed) + 1):
        k = r.get("number", pos)
        ok = r.get("success")
        rec = Path(str(r["recording"])).name if r.get("recording") else "—"
        rows.append((f"{k}" + (" (this run)" if r.get("current") else ""), _e(_when(r.get("time"))),
                     _e(r.get("model", "")), _e(r.get("friction") or "—"),
                     "—" if ok is None else '<span class="ok">✓</span>' if ok else '<span class="bad">✗</span>',
                     _max_error(r), f"<code>{_e(rec)}</code>"))
    out.append("<h3>Runs</h3>")
    if len(listed) < total:
        out.append(f'<p class="note">The latest {len(listed)} of {total} runs.</p>')
    out.append(_table(["run", "time (UTC)", "model", "friction", "success", "max rel. error", "recording"], rows))
    if len(runs) >= 2 and drift:
        rows = []
        for d in drift:
            z = d.get("z")
            rows.append((f"<code>{_e(d['name'])}</code>", _e(d.get("unit") or ""), _num(d.get("first")),
                         _num(d.get("latest")), "—" if d.get("change") is None else f"{d['change']:+.4g}",
                         _num(d.get("sigma"), 3), "—" if z is None else f"{z:+.1f}",
                         '<span class="bad">drift</span>' if d.get("significant") else ""))
        out.append(f"<h3>This run against run {ref}</h3><p>Run {ref} is the robot's first run of the same model and "
                   f"configuration. Change = this run − run {ref}; σ = √(std<sub>first</sub>² + "
                   f"std<sub>this</sub>²); a parameter drifted when |change| &gt; {sigmas:g} σ (held parameters have "
                   "no σ).</p>")
        out.append(_table(["parameter", "unit", f"run {ref}", "this run", "change", "σ", "change/σ", ""], rows))
    out.append("</section>")
    return "".join(out)


# ---------------------------------------------------------------------------------------------- kept beside the page

def history_path(report: str | Path) -> Path:
    """Where the history shown in ``report`` is kept: ``report.history.json`` beside ``report.html``."""
    return report_files(report)[2]


def fingerprint(result_path: Path) -> str:
    """sha256 of the result.json a history belongs to."""
    return hashlib.sha256(Path(result_path).read_bytes()).hexdigest()


def history_bytes(view: Mapping[str, Any], result_path: Path) -> bytes:
    """``view`` as JSON, tied to ``result_path``'s content."""
    return (json.dumps({"result_sha256": fingerprint(result_path), **view}, indent=1) + "\n").encode()


def stored_history(path: Path, result_path: Path) -> tuple[dict[str, Any] | None, bool]:
    """The history kept at ``path`` if it belongs to ``result_path``'s result.json, else None; and whether
    ``path`` is stale (from another identification: to be removed with the report it belonged to). An
    unreadable file is left alone (and not shown)."""
    if not path.is_file():
        return None, False
    try:
        view = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, False
    if not isinstance(view, dict):
        return None, False
    if view.pop("result_sha256", None) != fingerprint(result_path):
        return None, True
    return view, False
