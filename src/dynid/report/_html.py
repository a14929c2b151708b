"""Assemble the self-contained report page: banner, next steps, diagnostics, validation, parameters, plots, facts.

The page has no script and loads nothing: styles are inline and every figure is an SVG data URI in
an ``<img>`` (so it can also be saved alone, and prints sharp).
"""

from __future__ import annotations

import html
import math
import shlex
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import quote

import numpy as np

from .. import __version__
from ..identification.diagnostics import MAX_CONDITION
from ._data import ReportData, Validation
from ._evidence import evidence_figure
from ._history import history_figure, history_html
from ._figures import (CORRELATION_LIMIT, axis_figures, base_correlation, correlated_pairs, correlation_figure,
                       task_space_figure, torque_unit, validation_figures)
from ._model import prior_comparison
from ._spec import FigureSpec
from ._svg import figure_size, figure_svg
from ..units import velocity_unit

__all__ = ["ReportFigures", "build_figures", "render_html", "SEVERITY_ORDER"]

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
MAX_PAIRS = 20  # correlated pairs listed
# The page may load nothing: images only from data URIs, styles only inline, no script at all.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


@dataclass(frozen=True)
class ReportFigures:
    """Every figure of a report: ``axes[j]`` per joint, ``evidence[k]`` per diagnostic (None: no plot),
    ``validation`` per joint, ``task`` the model's output positions (a platform's pose) or None,
    ``correlation`` the heat-map of the strongly correlated base parameters or None."""

    axes: list[list[FigureSpec]]
    evidence: list[FigureSpec | None]
    validation: list[FigureSpec]
    task: FigureSpec | None = None
    correlation: FigureSpec | None = None

    def all(self) -> list[FigureSpec]:
        return ([f for fs in self.axes for f in fs] + [f for f in self.evidence if f] + list(self.validation)
                + [f for f in (self.task, self.correlation) if f is not None])


def diagnostics_of(data: ReportData) -> list[Mapping[str, Any]]:
    """``metrics.diagnostics_detail`` sorted by severity (plain messages become warnings without evidence)."""
    m = data.result["metrics"]
    detail = m.get("diagnostics_detail")
    if detail is None:
        detail = [{"code": "diagnostic", "severity": "warning", "joint": None, "message": s, "evidence": {}}
                  for s in m.get("diagnostics", [])]
    return sorted(detail, key=lambda d: SEVERITY_ORDER.get(d.get("severity"), 3))


def build_figures(data: ReportData, validation: Validation | None = None) -> ReportFigures:
    """Build (but do not draw) every figure of the report."""
    diags = diagnostics_of(data)
    evidence = [evidence_figure(data, d, f"diagnostic{k + 1}_{d.get('code', 'x')}") for k, d in enumerate(diags)]
    val = validation_figures(data, validation) if validation is not None else []
    return ReportFigures(axis_figures(data), evidence, val, task_space_figure(data), correlation_figure(data))


# ---------------------------------------------------------------------------------------------- helpers

def _e(s: Any) -> str:
    return html.escape(str(s), quote=True)


def _num(v: Any, digits: int = 5) -> str:
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
        return "—" if v is None else _e(v)
    v = float(v)
    if not math.isfinite(v):
        return "—"
    return f"{v:.{digits}g}"


def _pct(v: Any, digits: int = 2) -> str:
    return "—" if v is None or not math.isfinite(float(v)) else f"{100 * float(v):.{digits}f} %"


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _figure_html(fig: FigureSpec) -> str:
    svg = figure_svg(fig)
    w, h = figure_size(fig)
    src = "data:image/svg+xml;charset=utf-8," + quote(svg, safe=" =:/,.-_;()'!*~")
    cap = f"<figcaption>{_e(fig.caption)}</figcaption>" if fig.caption else ""
    cls = "wide" if fig.width >= 800 else "narrow"
    return (f'<figure id="fig-{_e(fig.name)}" class="{cls}"><img src="{src}" width="{w}" height="{h}" '
            f'alt="{_e(fig.title)}">{cap}</figure>')


def _axis_label(data: ReportData, joint: Any) -> str:
    if isinstance(joint, int) and 1 <= joint <= data.n_joints:
        return f"axis {joint} ({_e(data.joint_names[joint - 1])})"
    return "all axes"


def _evidence_value(v: Any) -> str:
    if isinstance(v, Mapping):
        return "; ".join(f"{_e(k)}: {_evidence_value(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_evidence_value(x) for x in v[:8]) + (", …]" if len(v) > 8 else "]")
    return _num(v, 5)


# ---------------------------------------------------------------------------------------------- sections

def verdict_of(data: ReportData) -> tuple[bool, list[Mapping[str, Any]]]:
    """(passed, reasons): failed whenever ``metrics.success`` is false or ``metrics.verdict.passed`` is
    false; the reasons are ``metrics.verdict.reasons`` (``{code, joint, message}``), empty when absent."""
    m = data.result["metrics"]
    v = m.get("verdict") if isinstance(m.get("verdict"), Mapping) else {}
    passed = bool(m.get("success", data.result.get("success"))) and v.get("passed", True) is not False
    reasons = [r for r in v.get("reasons") or [] if isinstance(r, Mapping)]
    return passed, reasons


def _reasons(data: ReportData, reasons: list[Mapping[str, Any]]) -> str:
    if not reasons:
        return ""
    items = "".join(f"<li><b>{_axis_label(data, r.get('joint'))}</b>: {_e(r.get('message', r.get('code', '')))}</li>"
                    for r in reasons)
    return f'<ul class="reasons">{items}</ul>'


def _banner(data: ReportData, diags: list[Mapping[str, Any]]) -> str:
    m = data.result["metrics"]
    passed, reasons = verdict_of(data)
    allowed = float(m.get("allowed", 0.5))
    mre = data.vector("metrics", "max_relative_error")
    mean = data.vector("metrics", "mean_relative_error")
    n_err = sum(d.get("severity") == "error" for d in diags)
    n_warn = sum(d.get("severity") == "warning" for d in diags)
    if not passed:
        cls, verdict = "fail", "FAILED"
        if np.any(~(mre < allowed)):
            sub = f"the maximum relative torque error exceeds {100 * allowed:.0f} % on at least one axis"
        else:
            sub = f"softMC's {100 * allowed:.0f} % rule holds, but the run fails dynid's checks"
        if reasons:
            sub += " — the reasons:"
    elif n_err or n_warn:
        cls, verdict = "warn", "PASSED, with findings"
        sub = (f"softMC's {100 * allowed:.0f} % rule holds, but the diagnostics found {n_err} error(s) and "
               f"{n_warn} warning(s): read them before trusting the parameters")
    else:
        cls, verdict = "pass", "PASSED"
        sub = f"softMC's {100 * allowed:.0f} % rule holds on every axis and no diagnostic fired"
    rows = []
    for j in range(data.n_joints):
        ok = mre[j] < allowed
        width = 0.0 if not math.isfinite(mre[j]) else min(100.0, 100 * mre[j] / (2 * allowed))
        bar = (f'<div class="bar"><div class="fill {"ok" if ok else "bad"}" style="width:{width:.1f}%"></div>'
               f'<div class="mark"></div></div>')
        rows.append((f"{j + 1} {_e(data.joint_names[j])}", _pct(mre[j]), bar, _pct(mean[j]),
                     '<span class="ok">✓ below</span>' if ok else '<span class="bad">✗ above</span>'))
    table = _table(["axis", "max rel. error", f"0 … {200 * allowed:.0f} % (mark: {100 * allowed:.0f} %)",
                    "mean rel. error", f"{100 * allowed:.0f} % rule"], rows, "errors")
    msg = _e(data.result.get("message", ""))
    end = "" if sub.endswith(":") else "."
    return (f'<section id="verdict" class="banner {cls}"><div class="verdict">{verdict}</div>'
            f'<p class="sub">{_e(sub)}{end}</p>{_reasons(data, reasons)}<p class="msg">{msg}</p>{table}</section>')


# What to do about each diagnostic when result.json's diagnostic carries no ``next_step`` of its own.
NEXT_STEPS = {
    "too_slow": "record again with a faster motion (raise the speed factor of the identification program), so that "
                "accelerating the inertia is a visible part of the torque",
    "few_cycles": "record longer: at least 3 full motion cycles on every axis",
    "small_range": "record again over a larger range, closer to both joint limits (set position_limits in the "
                   "configuration so the coverage is checked against them)",
    "saturation": "lower the speed factor or the range until the torque stays below the drive's limit, and record again",
    "systematic_residual": "check the torque scale and sign (TorqueFactor), then try a model or friction law with the "
                           "missing term ('dynid models' lists them; --friction adds friction terms)",
    "misalignment": "check the time stamps of the torque channel, or identify again with 'dynid identify ... --align'",
    "poor_conditioning": "excite the robot better: plan a motion with 'dynid excite --model MODEL --fourier 5 ...' "
                         "(it minimises the condition number), or identify fewer parameters",
    "poorly_identified": "excite the parameters it lists more (larger range and speed on the axes they act on; "
                         "'dynid excite --fourier' plans such a motion), or accept their uncertainty",
    "not_excited": "the parameter is held, not identified: excite the axes it acts on if it matters to you",
    "implausible_parameters": "check the configuration (geometry, payload, units, torque scale): a physically "
                              "impossible value usually means a wrong sign or unit, or an unexcited parameter",
    "large_noise": "nothing to fix in the model: the relative errors of this axis are dominated by noise",
    "undetermined": "record a motion that moves this axis over a larger range and with more than one frequency "
                    "('dynid excite' plans one), or give the undetermined parameters in the configuration",
}


@dataclass(frozen=True)
class Step:
    """One thing to do: ``severity`` of its finding, the ``joints`` it concerns (1-based; None: not one
    axis), and ``refs``, the (anchor, name) of the findings on the page that call for it."""

    severity: str
    text: str
    joints: tuple[Any, ...]
    refs: tuple[tuple[str, str], ...] = ()


def _step_text(code: str, item: Mapping[str, Any], diag: Mapping[str, Any] | None) -> str:
    for source in (diag, item):
        if source is not None and isinstance(source.get("next_step"), str) and source["next_step"].strip():
            return source["next_step"].strip()
    return NEXT_STEPS.get(code) or str(item.get("message", "")).strip()


def _diag_anchor(d: Mapping[str, Any], k: int) -> tuple[str, str]:
    """(id, name) of the ``k``-th (0-based) diagnostic's article, as :func:`_diagnostics` writes it."""
    code = str(d.get("code", ""))
    return f"diag-{code}-{k + 1}", code.replace("_", " ")


def next_steps(data: ReportData, diags: list[Mapping[str, Any]]) -> list[Step]:
    """The concrete steps the verdict and the diagnostics call for, errors first.

    A reason of a failed verdict takes its step from the diagnostic of the same code and joint
    (its ``next_step``, else :data:`NEXT_STEPS`); a failed run without reasons gets one step per axis
    over the 50 % rule. Each other diagnostic adds its own step (info-level ones only when they carry
    a ``next_step``); identical steps of several axes are merged.
    """
    passed, reasons = verdict_of(data)
    m = data.result["metrics"]
    index = {(d.get("code"), d.get("joint")): k for k, d in enumerate(diags)}
    found: list[tuple[str, str, Any, tuple[str, str] | None]] = []
    for r in reasons:
        k = index.get((r.get("code"), r.get("joint")))
        diag = diags[k] if k is not None else None
        found.append(("error", _step_text(str(r.get("code", "")), r, diag), r.get("joint"),
                      _diag_anchor(diag, k) if diag is not None else None))
    if not passed and not reasons:
        allowed = float(m.get("allowed", 0.5))
        mre = data.vector("metrics", "max_relative_error")
        for j in np.flatnonzero(~(mre < allowed)).tolist():
            found.append(("error", f"the max relative torque error {_pct(mre[j])} exceeds {100 * allowed:.0f} %: fix "
                                   "the findings below for this axis; if none names it, check that the model matches "
                                   "the mechanics ('dynid models') and the torque scale (TorqueFactor)", j + 1, None))
    covered = {(r.get("code"), r.get("joint")) for r in reasons}
    for k, d in enumerate(diags):
        sev = str(d.get("severity", "warning"))
        if (d.get("code"), d.get("joint")) in covered or (sev == "info" and not d.get("next_step")):
            continue
        found.append((sev, _step_text(str(d.get("code", "")), d, d), d.get("joint"), _diag_anchor(d, k)))
    merged: dict[tuple[str, str], tuple[list[Any], list[tuple[str, str]]]] = {}
    for sev, text, joint, ref in found:
        joints, refs = merged.setdefault((sev, text), ([], []))
        joints.append(joint)
        if ref is not None:
            refs.append(ref)
    out = [Step(sev, text, tuple(joints), tuple(refs)) for (sev, text), (joints, refs) in merged.items()]
    return sorted(out, key=lambda st: SEVERITY_ORDER.get(st.severity, 3))


def _joints_label(data: ReportData, joints: tuple[Any, ...]) -> str:
    """``axis 3 (A3)``, ``axes 1 (A1), 3 (A3)``, or empty when the step is about no one axis."""
    named = sorted({j for j in joints if isinstance(j, int) and 1 <= j <= data.n_joints})
    if len(named) == 1:
        return _axis_label(data, named[0])
    return "axes " + ", ".join(f"{j} ({_e(data.joint_names[j - 1])})" for j in named) if named else ""


def _step_html(data: ReportData, st: Step) -> str:
    who = _joints_label(data, st.joints)
    seen = dict(st.refs)       # one link per finding, in order
    refs = ", ".join(f'<a href="#{_e(a)}">{_e(name)}</a>' for a, name in seen.items())
    head = " · ".join(x for x in (f"<b>{who}</b>" if who else "", refs) if x)
    return (f'<li class="{_e(st.severity)}"><span class="sev">{_e(st.severity)}</span> '
            f"{head + ': ' if head else ''}{_e(st.text)}</li>")


def _usage(data: ReportData) -> str:
    """How to use a model that passed: load the PRG, validate, feed-forward, monitor (exact commands)."""
    r = data.result
    folder = data.shown_result_path.parent
    res = shlex.quote(str(data.shown_result_path))
    group = r.get("group", 1)
    prg = shlex.quote(str(folder / f"IDNT{group}.PRG"))
    slots = [i for i in (r["parameters"].get("index") or []) if isinstance(i, int)]
    dyn = (f"{_e(r.get('element', ''))}.DynamicParameter[{min(slots)}..{max(slots)}]" if slots
           else "the DynamicParameters")
    report = shlex.quote(str(folder / "validation.html"))
    axes = ", ".join(_e(n) for n in data.joint_names)
    items = [
        f"<b>Load the parameters on the controller</b>: <code>{_e(prg)}</code> sets {dyn}, DynamicModel "
        f"{_e(r.get('softmc_dynamic_model', '—'))} and the friction of {axes} (softMC's sign).",
        "<b>Validate</b> on a motion the fit has not seen: "
        f"<code>dynid predict {_e(res)} OTHER_RUN.csv --report {_e(report)}</code>",
        "<b>Feed-forward</b>: the additive torque of every controller cycle of a commanded trajectory, "
        f"<code>dynid feedforward {_e(res)} TRAJ.csv --out taddcmd.csv</code>, or the model as C code for the "
        f"controller: <code>dynid codegen {_e(res)} --lang c --out {_e(shlex.quote(str(folder / 'codegen')))}</code>",
        "<b>Monitor collisions</b>: replay a log through softMC's torque-error detector, with thresholds from this "
        f"run's residuals: <code>dynid monitor {_e(res)} LOG.csv</code>",
    ]
    return '<ul class="usage">' + "".join(f"<li>{x}</li>" for x in items) + "</ul>"


def _next(data: ReportData, diags: list[Mapping[str, Any]]) -> str:
    passed, _ = verdict_of(data)
    steps = next_steps(data, diags)
    out = ['<section id="next"><h2>What to do next</h2>']
    if steps:
        out.append('<ol class="steps">' + "".join(_step_html(data, st) for st in steps) + "</ol>")
    if passed:
        serious = any(st.severity in ("error", "warning") for st in steps)
        out.append("<p>Once these findings are addressed or accepted, use the model:</p>" if serious else
                   "<p>The run passed with no warnings: the model is ready to use.</p>")
        out.append(_usage(data))
    elif not steps:
        out.append("<p>The run failed; fix the findings below and record again.</p>")
    out.append("</section>")
    return "".join(out)


def _diagnostics(data: ReportData, diags: list[Mapping[str, Any]], figs: list[FigureSpec | None]) -> str:
    if not diags:
        return ('<section id="diagnostics"><h2>Diagnostics</h2><p class="none">None fired: the motion is fast, long '
                "and wide enough, nothing saturates, the torque is aligned with the motion and the error looks like "
                "noise.</p></section>")
    out = ['<section id="diagnostics"><h2>Diagnostics</h2>',
           "<p>Automatic checks for the failure causes of softMC's identification (too slow, saturation, fewer than 3 "
           "cycles, small range, wrong model or torque scale, ...). Each comes with the evidence behind it.</p>"]
    for k, (d, fig) in enumerate(zip(diags, figs)):
        sev = str(d.get("severity", "warning"))
        code = str(d.get("code", ""))
        ev = d.get("evidence") or {}
        rows = [(_e(key), _evidence_value(v)) for key, v in ev.items()]
        table = _table(["evidence", "value"], rows, "evidence") if rows else ""
        plot = _figure_html(fig) if fig is not None else ""
        out.append(f'<article class="diag {_e(sev)}" id="diag-{_e(code)}-{k + 1}" data-code="{_e(code)}">'
                   f'<h3><span class="sev">{_e(sev)}</span> {_e(code.replace("_", " "))} — '
                   f"{_axis_label(data, d.get('joint'))}</h3><p>{_e(d.get('message', ''))}</p>{table}{plot}</article>")
    out.append("</section>")
    return "".join(out)


def _validation(data: ReportData, val: Validation, figs: list[FigureSpec]) -> str:
    out = ['<section id="validation"><h2>Validation</h2>',
           f"<p>The identified model predicting the torque of <b>{_e(val.source or 'another recording')}</b> "
           f"({val.t.size} samples, {val.t[-1] - val.t[0]:.3g} s), a motion it was not fitted on.</p>"]
    err = val.errors()
    if err is None:
        out.append("<p>The recording has no torque columns: the prediction is shown without errors.</p>")
    else:
        rows = []
        for j in range(val.predicted.shape[1]):
            kind = data.joint_kinds[j] if j < data.n_joints else "rotary"
            rows.append((f"{j + 1} {_e(data.joint_names[j]) if j < data.n_joints else ''}",
                         f"{_num(err['rmse'][j], 4)} {torque_unit(kind)}", _pct(err["nrmse_rms"][j]),
                         _pct(err["nrmse_range"][j]), _pct(err["max_relative"][j]), _pct(err["mean_relative"][j])))
        out.append(_table(["axis", "RMSE", "RMSE / RMS(tau)", "RMSE / range(tau)", "max rel. error",
                           "mean rel. error"], rows, "num"))
        out.append('<p class="note">Relative errors as softMC defines them (|error| / max |measured torque|), here '
                   "on every sample of the validation recording; the measured torque is not filtered.</p>")
    out += [_figure_html(f) for f in figs]
    out.append("</section>")
    return "".join(out)


def _status_text(name: str, status: str, combos: Mapping[str, str]) -> str:
    if status == "identified" and name in combos:
        return f'identified as the base combination <code>{_e(combos[name])}</code>'
    return _e(status)


def _parameters(data: ReportData) -> str:
    r = data.result
    p, fr = r["parameters"], r.get("friction", {})
    base = r.get("base_parameters") or {}
    combos = {n: e for n, e in zip(base.get("names", []), base.get("expressions", [])) if n != e}
    rows = []

    def add(idx, name, value, unit, std, status):
        rel = abs(std / value) if std is not None and value not in (None, 0) else None
        flag = ' class="bad"' if rel is not None and rel > 0.3 else ""
        rows.append((_e(idx), f"<code>{_e(name)}</code>", _num(value, 7), _e(unit), _num(std, 3),
                     f"<span{flag}>{_pct(rel)}</span>" if rel is not None else "—",
                     _status_text(name, status, combos)))

    n = len(p["names"])
    statuses = p.get("status") or ["identified" if ok else "not identifiable" for ok in p.get("identifiable", [True] * n)]
    for k in range(n):
        add(p.get("index", [""] * n)[k], p["names"][k], p["values"][k], p["units"][k],
            (p.get("std") or [None] * n)[k], statuses[k])
    fn = fr.get("names", [])
    fstd = []
    if isinstance(fr.get("std"), Mapping) and fn:
        per_term = fr["std"]
        suffixes = [x.rsplit(".", 1)[-1] for x in fn]
        counters: dict[str, int] = {}
        for s in suffixes:
            i = counters.get(s, 0)
            vals = per_term.get(s, [])
            fstd.append(vals[i] if i < len(vals) else None)
            counters[s] = i + 1
    for k, name in enumerate(fn):
        add("", name, fr["values"][k], fr.get("units", [""] * len(fn))[k], fstd[k] if k < len(fstd) else None,
            (fr.get("status") or ["identified"] * len(fn))[k])
    out = ['<section id="parameters"><h2>Parameters</h2>',
           f"<p>Model <b>{_e(r.get('model'))}</b> ({_e(r.get('model_title', ''))}), softMC DynamicModel "
           f"{_e(r.get('softmc_dynamic_model', '—'))}; friction <code>{_e(fr.get('model', '—'))}</code> in the physical "
           "sign convention (positive coefficients oppose motion; the PRG writes softMC's sign). # is the softMC "
           "DynamicParameter index. A relative standard deviation above 30 % is marked.</p>",
           _table(["#", "parameter", "value", "unit", "std", "rel. std", "status"], rows, "num params")]
    if base.get("expressions"):
        brow = []
        for k, e in enumerate(base["expressions"]):
            v = (base.get("values") or [None] * len(base["expressions"]))[k]
            s = (base.get("std") or [None] * len(base["expressions"]))[k]
            exc = (base.get("excited") or [True] * len(base["expressions"]))[k]
            rel = abs(s / v) if s is not None and v not in (None, 0) else None
            brow.append((f"<code>{_e(e)}</code>", _num(v, 7), _num(s, 3), _pct(rel), "yes" if exc else "no"))
        out.append(f"<h3>Base parameters ({_e(base.get('count', len(brow)))})</h3><p>The combinations this recording "
                   "identifies; each model parameter above is one of them, a part of one, or held.</p>")
        out.append(_table(["base parameter", "value", "std", "rel. std", "excited"], brow, "num"))
    derived = r.get("derived") or {}
    if derived:
        drow = [(f"<code>{_e(k)}</code>", _num(v.get("value") if isinstance(v, Mapping) else v, 6),
                 _e(v.get("unit", "")) if isinstance(v, Mapping) else "",
                 _e(v.get("description", "")) if isinstance(v, Mapping) else "") for k, v in derived.items()]
        out.append("<h3>Derived quantities</h3>" + _table(["quantity", "value", "unit", "meaning"], drow, "num"))
    notes = r.get("notes") or []
    if notes:
        out.append("<ul class='notes'>" + "".join(f"<li>{_e(x)}</li>" for x in notes) + "</ul>")
    out.append("</section>")
    return "".join(out)


def _prior(data: ReportData) -> str:
    """A-priori against identified values; empty when the model has no a-priori values."""
    rows = prior_comparison(data)
    if not rows:
        return ""
    body = []
    for row in rows:
        z = row.change
        zs = "—" if not math.isfinite(z) else f"{z:+.1f}"
        body.append((f"<code>{_e(row.name)}</code>", _num(row.prior, 6), _num(row.value, 6), _num(row.std, 3),
                     f'<span class="bad">{zs}</span>' if math.isfinite(z) and abs(z) > 3 else zs))
    return ('<section id="prior"><h2>A priori vs identified</h2>'
            "<p>The model's a-priori values (the URDF's or the configuration's link inertias) against what this "
            "recording identified, for every excited base parameter (a combination's a-priori value is the same "
            "combination of the a-priori parameters; friction has none). <i>Change</i> is (identified − a priori) / "
            "std: within ±3 the data agree with the description; beyond (marked) the robot differs from it, or "
            "the description is off.</p>"
            + _table(["parameter", "a priori", "identified", "std", "change [std]"], body, "num") + "</section>")


def _confounded(data: ReportData) -> list[Mapping[str, Any]] | None:
    """result.json's ``confounded`` groups (top level, or in ``base_parameters``), or None when absent."""
    groups = data.result.get("confounded")
    if groups is None:
        groups = (data.result.get("base_parameters") or {}).get("confounded")
    return [g for g in groups if isinstance(g, Mapping)] if isinstance(groups, list) else None


def _correlation(data: ReportData, fig: FigureSpec | None) -> str:
    """Strongly correlated base parameters (heat-map and pairs) and the confounded groups; empty when
    result.json has neither ``base_parameters.correlation`` nor ``confounded``."""
    corr, groups = base_correlation(data), _confounded(data)
    if corr is None and groups is None:
        return ""
    out = ['<section id="correlation"><h2>Poorly determined parameters</h2>',
           f"<p>Base parameters whose estimates correlate above {CORRELATION_LIMIT:g} (in absolute value) are not "
           "determined one by one: the recording fixes a combination of them, and their values trade off against "
           "each other within their standard deviations. A richer motion separates them.</p>"]
    if corr is not None:
        pairs = correlated_pairs(corr)
        names = data.result["base_parameters"]["names"]
        if pairs:
            if fig is not None:
                out.append(_figure_html(fig))
            rows = [(f"<code>{_e(names[a])}</code>", f"<code>{_e(names[b])}</code>", f"{r:+.3f}")
                    for a, b, r in pairs[:MAX_PAIRS]]
            out.append(_table(["parameter", "parameter", "correlation"], rows, "num pairs"))
            if len(pairs) > MAX_PAIRS:
                out.append(f'<p class="note">{len(pairs) - MAX_PAIRS} weaker pairs above {CORRELATION_LIMIT:g} '
                           "not listed.</p>")
        else:
            out.append(f'<p class="none">No two base parameters correlate above {CORRELATION_LIMIT:g}: each is '
                       "determined on its own.</p>")
    if groups:
        rows = [(", ".join(f"<code>{_e(n)}</code>" for n in g.get("parameters") or []),
                 f"<code>{_e(g.get('combination', '—'))}</code>", _e(g.get("message", ""))) for g in groups]
        out.append("<h3>Confounded parameters</h3><p>Parameters this recording cannot tell apart: only the "
                   "combination next to them is identified.</p>"
                   + _table(["parameters", "identified combination", "meaning"], rows, "confounded"))
    out.append("</section>")
    return "".join(out)


def _payload(data: ReportData) -> str:
    """Payload: the known payload the run used, and a payload estimate when result.json carries one."""
    r = data.result
    cfg = (r.get("config") or {}).get("payload") or {}
    est = r.get("payload")
    known = any((cfg.get(k) or 0) > 0 for k in ("mass", "inertia"))
    if not known and not est:
        return ""
    out = ['<section id="payload"><h2>Payload</h2>']
    if known:
        out.append(f"<p>This run carried a known payload: mass {_num(cfg.get('mass'))} kg, inertia "
                   f"{_num(cfg.get('inertia'))} kg m². With it the payload-coefficient parameters (e.g. L², g·L, "
                   "g·cos α) become identifiable.</p>")
    if isinstance(est, Mapping) and est:
        if isinstance(est.get("names"), list):
            n = len(est["names"])
            rows = [(f"<code>{_e(est['names'][k])}</code>", _num((est.get("values") or [None] * n)[k], 6),
                     _e((est.get("units") or [""] * n)[k]), _num((est.get("std") or [None] * n)[k], 3)) for k in range(n)]
            out.append("<h3>Payload estimate</h3>" + _table(["quantity", "value", "unit", "std"], rows, "num"))
        else:
            rows = [(f"<code>{_e(k)}</code>", _evidence_value(v)) for k, v in est.items()]
            out.append("<h3>Payload estimate</h3>" + _table(["quantity", "value"], rows, "num"))
    out.append("</section>")
    return "".join(out)


def _task(fig: FigureSpec | None) -> str:
    if fig is None:
        return ""
    return f'<section id="task"><h2>{_e(fig.title)}</h2>{_figure_html(fig)}</section>'


def _axes(data: ReportData, figs: list[list[FigureSpec]]) -> str:
    if not figs:
        return ""
    out = ['<section id="axes"><h2>Signals per axis</h2>']
    for j, fs in enumerate(figs):
        wide = "".join(_figure_html(f) for f in fs if f.width >= 800)
        narrow = "".join(_figure_html(f) for f in fs if f.width < 800)
        out.append(f'<div class="axis" id="axis{j + 1}"><h3>Axis {j + 1} ({_e(data.joint_names[j])}, '
                   f"{_e(data.joint_kinds[j])})</h3>{wide}<div class='pair'>{narrow}</div></div>")
    out.append("</section>")
    return "".join(out)


def _conditioning(data: ReportData) -> str:
    c, m = data.result["conditioning"], data.result["metrics"]
    dt = c.get("sample_period_s")
    facts = [("sample period", f"{_num(1000 * dt if dt else None, 5)} ms ({_num(1 / dt if dt else None, 5)} Hz)"),
             ("low-pass cutoff", f"{_num(c.get('cutoff_hz'), 4)} Hz, zero-phase Butterworth order "
                                 f"{_e(c.get('filter_order', '—'))}"),
             ("signal data length (used)", _num(c.get("data_length"), 10)),
             ("raw data length", _num(c.get("raw_length"), 10)),
             ("samples trimmed at the start", _num(c.get("trim_samples"), 10)),
             ("condition number", f"{_num(m.get('condition_number'), 4)} (scaled: {_num(m.get('condition_number_scaled'), 4)})"
                                  f'<p class="explain" id="condition-explained">{condition_explained(data)}</p>'),
             ("rank / base parameters", f"{_e(m.get('rank', '—'))} / "
                                        f"{_e((data.result.get('base_parameters') or {}).get('count', '—'))}"),
             ("torque delay compensated", f"{_num(c.get('torque_delay_s'), 4)} s"),
             ("Coulomb sign filtered like the torque", _e(c.get("smooth_sign", "—")))]
    rows = []
    thr = data.vector("conditioning", "velocity_threshold")
    upper = data.vector("conditioning", "upper_velocity_threshold")
    moving = data.vector("conditioning", "moving_samples")
    rms = data.vector("metrics", "residual_rms")
    units = c.get("velocity_threshold_units") or [velocity_unit(k) for k in data.joint_kinds]
    n_used = c.get("data_length") or 0
    for j in range(data.n_joints):
        rows.append((f"{j + 1} {_e(data.joint_names[j])}", f"{_num(thr[j], 4)} {_e(units[j])}",
                     _num(upper[j], 4) if math.isfinite(upper[j]) else "—",
                     f"{_num(moving[j], 10)} ({_pct(moving[j] / n_used if n_used else None, 0)})",
                     f"{_num(rms[j], 4)} {torque_unit(data.joint_kinds[j])}"))
    return ('<section id="conditioning"><h2>Conditioning</h2>'
            + _table(["fact", "value"], facts, "facts")
            + _table(["axis", "velocity threshold", "upper threshold", "moving samples", "residual RMS"], rows, "num")
            + "</section>")


def good_condition(n_base: int) -> float:
    """The scaled condition number below which the excitation is good: a few parameters (a single axis)
    separate easily, so more is asked of them than of a many-parameter arm."""
    return 30.0 if n_base <= 6 else 100.0


def condition_rating(scaled: float | None, n_base: int) -> str:
    """``good``, ``acceptable`` or ``poor`` for a scaled condition number and model size (``unknown``: none)."""
    if scaled is None or not math.isfinite(scaled):
        return "unknown"
    return "good" if scaled <= good_condition(n_base) else "acceptable" if scaled <= MAX_CONDITION else "poor"


def condition_explained(data: ReportData) -> str:
    """What the condition number measures, which one to judge, what is good for this model, what to do."""
    m = data.result["metrics"]
    base = data.result.get("base_parameters") or {}
    n = int(base.get("count") or m.get("rank") or len(data.result["parameters"]["names"]))
    scaled = m.get("condition_number_scaled")
    rating = condition_rating(scaled if isinstance(scaled, (int, float)) else None, n)
    head = f"This run: <b>{rating}</b>. " if rating != "unknown" else ""
    return (head + "It is the ratio of the regressor's largest to smallest singular value: a torque error moves "
            "the worst-determined combination of parameters up to that many times more than the best-determined "
            "one. Judge the scaled one (columns normalised, so independent of the parameters' units, "
            f"which inflate the unscaled one): for {n} base parameters up to {good_condition(n):.0f} is good, up to "
            f"{MAX_CONDITION:.0f} acceptable (read the std); above, some combinations are hardly excited — record a "
            "richer motion (more frequencies, larger range and speed; <code>dynid excite --fourier</code> minimises "
            "it) or identify fewer parameters.")


def _files(data: ReportData) -> str:
    r = data.result
    items = [f"<li><code>{_e(data.shown_result_path)}</code></li>"]
    if data.rec_path:
        items.append(f"<li><code>{_e(data.shown_rec_path)}</code></li>")
    src = (r.get("source") or {}).get("recording")
    notes = "".join(f'<p class="note">{_e(n)}.</p>' for n in data.notes)
    return (f'<footer id="files"><h2>Files</h2>{notes}<p>Rendered from:</p><ul>{"".join(items)}</ul>'
            f"<p>Recording: <code>{_e(src or '—')}</code>. Identified {_e(r.get('created', '—'))} with dynid "
            f"{_e(r.get('dynid_version', '—'))}; report by dynid {_e(__version__)}. Re-render with "
            f"<code>dynid report {_e(data.shown_result_path.parent)}</code>.</p></footer>")


CSS = """
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;color:#1d1d1d;
margin:0;background:#f4f5f7}
main{max-width:1040px;margin:0 auto;padding:18px 22px 40px;background:#fff}
h1{font-size:22px;margin:6px 0 2px} h2{font-size:19px;margin:30px 0 8px;border-bottom:2px solid #e3e3e3;padding-bottom:3px}
h3{font-size:16px;margin:18px 0 6px}
.meta{color:#555;margin:0 0 12px}
nav{font-size:14px;margin:0 0 14px} nav a{margin-right:14px}
a{color:#0059a0}
code{font:13px/1.3 ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;background:#f3f3f3;padding:0 3px;border-radius:3px}
table{border-collapse:collapse;margin:8px 0 12px;font-size:14px}
th,td{border-bottom:1px solid #e5e5e5;padding:4px 10px;text-align:left;vertical-align:top}
th{background:#fafafa;font-weight:600}
table.num td{font-variant-numeric:tabular-nums}
.banner{border-radius:8px;padding:12px 18px;margin:8px 0 10px;border:2px solid}
.banner.pass{background:#e9f7ef;border-color:#1e8449}.banner.warn{background:#fff6e0;border-color:#c98a00}
.banner.fail{background:#fdecea;border-color:#c0392b}
.verdict{font-size:28px;font-weight:800;letter-spacing:.5px}
.pass .verdict{color:#1e8449}.warn .verdict{color:#9a6a00}.fail .verdict{color:#c0392b}
.banner .sub{margin:2px 0}.banner .msg{margin:2px 0 6px;color:#444}
.banner table{background:#fff}
.bar{position:relative;width:200px;height:12px;background:#eee;border-radius:3px;margin-top:4px}
.bar .fill{height:12px;border-radius:3px}.fill.ok{background:#27ae60}.fill.bad{background:#c0392b}
.bar .mark{position:absolute;left:50%;top:-3px;width:2px;height:18px;background:#333}
.ok{color:#1e8449}.bad{color:#c0392b;font-weight:600}
.diag{border-left:5px solid #c98a00;background:#fffdf7;padding:6px 14px;margin:12px 0;border-radius:4px}
.diag.error{border-color:#c0392b;background:#fff8f7}.diag.info{border-color:#56B4E9;background:#f7fbfe}
.diag h3{margin:6px 0}.sev{text-transform:uppercase;font-size:12px;padding:1px 6px;border-radius:3px;color:#fff;
background:#c98a00;vertical-align:middle}.error .sev{background:#c0392b}.info .sev{background:#3a87b5}
.none{background:#e9f7ef;padding:8px 12px;border-radius:4px}
figure{margin:10px 0 16px}figure img{display:block;max-width:100%;height:auto;border:1px solid #e3e3e3}
figcaption{font-size:13px;color:#555;margin-top:4px;max-width:860px}
.pair{display:flex;flex-wrap:wrap;gap:0 16px}.pair figure{flex:1 1 400px;max-width:430px;margin-top:0}
.axis{border-top:1px solid #eee}
.note{color:#666;font-size:13px}
footer{margin-top:30px;font-size:14px;color:#444}
.reasons{margin:4px 0 6px;padding-left:22px}
.steps{padding-left:24px}.steps li{margin:5px 0}.usage li{margin:5px 0}
.explain{font-size:13px;color:#444;margin:4px 0 0;max-width:620px}
@media print{
 html,body,main{background:#fff;color:#000}
 body{font-size:10.5pt}main{max-width:none;padding:0}
 nav{display:none}
 h2,h3,p,li,td,th,figcaption,.note,.meta,.explain,.banner .msg,footer,.ok,.bad{color:#000}
 .verdict,.pass .verdict,.warn .verdict,.fail .verdict{color:#000}
 .banner,.banner.pass,.banner.warn,.banner.fail,.diag,.diag.error,.diag.info{background:#fff}
 .none,.banner table,th,code{background:#fff}
 .sev,.error .sev,.info .sev{color:#000;background:#fff;border:1px solid #000}
 a{color:#000;text-decoration:none}
 figure,figure img,.diag,.banner,tr{break-inside:avoid;page-break-inside:avoid}
 h2,h3{break-after:avoid;page-break-after:avoid}
 table{width:100%;max-width:100%;table-layout:auto;font-size:9pt}
 th,td{padding:2px 6px;overflow-wrap:anywhere}
 code{overflow-wrap:anywhere}
 figure img{max-width:100%;height:auto;border:none}
 .pair{display:block}.pair figure{max-width:100%}
 .axis{break-before:page}
 .bar .fill,.bar .mark{-webkit-print-color-adjust:exact;print-color-adjust:exact}
}
@page{size:A4;margin:14mm}
"""


def render_html(data: ReportData, figures: ReportFigures, validation: Validation | None = None,
                history: Mapping[str, Any] | None = None) -> str:
    """The whole page as one string (``history``: the robot's runs in a registry, see :mod:`._history`)."""
    r = data.result
    diags = diagnostics_of(data)
    kind = "Validation and identification report" if validation is not None else "Identification report"
    element = r.get("element") or ", ".join(data.joint_names)
    title = f"{kind}: {element} — {r.get('model', '')}"
    prior, correlation, payload = _prior(data), _correlation(data, figures.correlation), _payload(data)
    links = [("verdict", "verdict"), ("next", "what to do next"), ("diagnostics", f"diagnostics ({len(diags)})")]
    if validation is not None:
        links.append(("validation", "validation"))
    links.append(("parameters", "parameters"))
    hfig = history_figure(history) if history else None
    hist = history_html(history, _figure_html(hfig) if hfig is not None else "")
    links += [(a, t) for a, t, sec in (("prior", "a priori", prior), ("correlation", "correlation", correlation),
                                       ("payload", "payload", payload), ("history", "robot history", hist)) if sec]
    if figures.task is not None:
        links.append(("task", figures.task.title.lower()))
    if figures.axes:
        links += [(f"axis{j + 1}", f"axis {j + 1}") for j in range(data.n_joints)]
    links += [("conditioning", "conditioning"), ("files", "files")]
    nav = "<nav>" + "".join(f'<a href="#{a}">{_e(t)}</a>' for a, t in links) + "</nav>"
    src = (r.get("source") or {}).get("recording")
    meta = (f'<p class="meta">{_e(r.get("model_title", ""))} · softMC DynamicModel {_e(r.get("softmc_dynamic_model", "—"))}'
            f" · group {_e(r.get('group', 1))} · {data.n_joints} {'axis' if data.n_joints == 1 else 'axes'} · identified {_e(r.get('created', '—'))}"
            f"{' · recording ' + _e(src) if src else ''}</p>")
    body = [f"<h1>{_e(title)}</h1>", meta, nav, _banner(data, diags), _next(data, diags),
            _diagnostics(data, diags, figures.evidence)]
    if validation is not None:
        body.append(_validation(data, validation, figures.validation))
    body += [_parameters(data), prior, correlation, payload, hist, _task(figures.task), _axes(data, figures.axes),
             _conditioning(data), _files(data)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            f"<meta name=\"generator\" content=\"dynid {_e(__version__)}\"><title>{_e(title)}</title>"
            f"<style>{CSS}</style></head><body><main>{''.join(body)}</main></body></html>\n")
