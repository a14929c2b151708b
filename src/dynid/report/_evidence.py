"""One evidence plot per automatic diagnosis (codes of :mod:`dynid.identification.diagnostics`).

Each builder takes the report data and one ``diagnostics_detail`` entry ``{code, severity, joint,
message, evidence}`` and returns a :class:`~._spec.FigureSpec`, or None when the finding is a
number with nothing to plot (the report then shows the evidence table alone). Codes this module
does not know (added by a later dynid) get the table only.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from ..identification import diagnostics as dg
from ._data import ReportData
from ._figures import (NARROW, WIDE, gated_spans, plot_px, position_display, position_limits, torque_unit,
                       velocity_unit)
from ._model import inertial_torque, missing_term
from ._spec import COLORS, FigureSpec, Panel, Trace, density, envelope

__all__ = ["evidence_figure", "EVIDENCE_PLOTS"]

Builder = Callable[[ReportData, Mapping[str, Any], str], "FigureSpec | None"]


def _joint(d: Mapping[str, Any], data: ReportData) -> int | None:
    j = d.get("joint")
    return j - 1 if isinstance(j, int) and 1 <= j <= data.n_joints else None


def _too_slow(data, d, name):
    j = _joint(d, data)
    if j is None or not data.has_signals:
        return None
    ev = d.get("evidence", {})
    v = np.abs(data.signals["vfb"][:, j])
    thr = float(ev.get("velocity_threshold", data.vector("conditioning", "velocity_threshold", 0.0)[j]))
    edges = np.linspace(0.0, max(float(v.max()), 2 * thr, 1e-12), 61)
    counts = np.histogram(v, edges)[0].astype(float)
    pct = 100 * counts / max(v.size, 1)
    below = np.where(edges[1:] <= thr, pct, 0.0)
    traces = (Trace("bars", edges, pct - below, label="used", color=COLORS["model"], opacity=0.8),
              Trace("bars", edges, below, label="below threshold", color=COLORS["threshold"], opacity=0.9),
              Trace("vline", x=[thr], label="threshold", color=COLORS["error"], width=1.6, dash=True))
    frac = ev.get("moving_fraction", float(np.mean(v > thr)))
    panels = [Panel(traces, xlabel=f"|velocity| [{velocity_unit(data.joint_kinds[j])}]", ylabel="samples [%]",
                    title=f"{100 * frac:.0f} % of the samples above the threshold (rule >= "
                          f"{100 * dg.MIN_MOVING_FRACTION:.0f} %)", height=220)]
    inertial = inertial_torque(data)
    if inertial is not None:
        n = plot_px(WIDE)
        share = ev.get("inertial_share")
        unit = torque_unit(data.joint_kinds[j])
        panels.append(Panel((Trace("line", *envelope(data.t, data.signals["tfb"][:, j], n), label="measured tfb",
                                   color=COLORS["measured"]),
                             Trace("line", *envelope(data.t, inertial[:, j], n), label="inertial part M(q) qdd",
                                   color=COLORS["error"], width=1.6)),
                            xlabel="time [s]", ylabel=f"torque [{unit}]", height=210,
                            title=(f"inertial torque {100 * share:.1f} % of the measured (RMS; rule >= "
                                   f"{100 * dg.MIN_INERTIAL_SHARE:.0f} %)") if share is not None else "inertial torque"))
    return FigureSpec(name, f"Too slow: axis {j + 1} speeds and inertial torque", tuple(panels),
                      caption="Share of the samples at each speed, and the part of the torque that accelerating the "
                              "identified inertia takes. In a slow motion it is drowned by friction and gravity, so "
                              "the inertia is barely seen: raise the speed factor.")


def _few_cycles(data, d, name):
    j = _joint(d, data)
    if j is None or not data.has_signals:
        return None
    t, v = data.t, data.signals["vfb"][:, j]
    thr = data.vector("conditioning", "velocity_threshold", 0.0)[j]
    s = np.where(v > thr, 1, np.where(v < -thr, -1, 0))
    nz = np.flatnonzero(s)
    rev = nz[1:][np.diff(s[nz]) != 0] if nz.size else np.empty(0, int)
    cycles = d.get("evidence", {}).get("cycles", rev.size / 2)
    traces = (Trace("hband", y=[-thr, thr], label="threshold band", color=COLORS["threshold"], opacity=0.3),
              Trace("vline", x=t[rev], label="reversals", color=COLORS["error"], dash=True),
              Trace("line", *envelope(t, v, plot_px(WIDE)), label="velocity", color=COLORS["model"]))
    return FigureSpec(name, f"Fewer than {dg.MIN_CYCLES:.0f} cycles: axis {j + 1} velocity", (
        Panel(traces, xlabel="time [s]", ylabel=f"velocity [{velocity_unit(data.joint_kinds[j])}]",
              title=f"{cycles:.1f} cycles = {rev.size} reversals / 2 (rule >= {dg.MIN_CYCLES:.0f})", height=210),),
        caption="Each dashed line is a reversal of the motion beyond the threshold. With fewer than three cycles "
                "the fit can follow the particular path rather than the robot; record longer.")


def _small_range(data, d, name):
    j = _joint(d, data)
    if j is None or not data.has_signals:
        return None
    k, unit = position_display(data.joint_kinds[j])
    q = data.signals["pfbRaw"][:, j] * k
    traces = [Trace("hband", y=[q.min(), q.max()], label="visited", color=COLORS["good"], opacity=0.2)]
    lims = position_limits(data)
    ev = d.get("evidence", {})
    if lims is not None:
        traces.append(Trace("hline", y=[lims[j][0] * k, lims[j][1] * k], label="limits", color=COLORS["limit"],
                            dash=True, width=1.8))
        title = f"covers {100 * ev.get('coverage', np.ptp(q) / ((lims[j][1] - lims[j][0]) * k)):.0f} % of the limits " \
                f"(rule >= {100 * dg.MIN_RANGE_FRACTION:.0f} %)"
    else:
        mid = 0.5 * (q.min() + q.max())
        half = 0.5 * dg.MIN_ROTARY_RANGE_DEG * (k * np.pi / 180.0)
        traces.append(Trace("hline", y=[mid - half, mid + half], label=f"{dg.MIN_ROTARY_RANGE_DEG:.0f} deg span",
                            color=COLORS["limit"], dash=True, width=1.8))
        title = f"range {np.ptp(q):.3g} {unit} (rule >= {dg.MIN_ROTARY_RANGE_DEG:.0f} deg without position_limits)"
    traces.append(Trace("line", *envelope(data.t, q, plot_px(WIDE)), label="position", color=COLORS["measured"]))
    return FigureSpec(name, f"Small range: axis {j + 1} position", (
        Panel(tuple(traces), xlabel="time [s]", ylabel=f"position [{unit}]", title=title, height=220),),
        caption="The model is fitted on the visited range only; move closer to both limits so it holds elsewhere.")


def _saturation(data, d, name):
    j = _joint(d, data)
    if j is None or not data.has_signals:
        return None
    ev = d.get("evidence", {})
    t, s = data.t, data.signals
    unit = torque_unit(data.joint_kinds[j])
    if "t_start" in ev and "t_end" in ev:
        a, b = float(ev["t_start"]), float(ev["t_end"])
        pad = max(2.0 * (b - a), 0.2)
        w = (t >= a - pad) & (t <= b + pad)
        spans = np.array([[a, b]])
        title = f"plateau at {ev.get('level', np.nan):.4g} {unit} for {1000 * ev.get('plateau_s', b - a):.0f} ms"
    else:
        w = np.ones(t.size, dtype=bool)
        spans = np.empty((0, 2))
        title = "measured torque against the drive limit"
    n = plot_px(WIDE)
    traces = [Trace("vspans", spans, label="plateau", color=COLORS["threshold"], opacity=0.25),
              Trace("line", *envelope(t[w], s["tfbRaw"][w, j], n), label="raw tfb", color=COLORS["raw"], width=1.0),
              Trace("line", *envelope(t[w], s["tfb"][w, j], n), label="measured tfb", color=COLORS["measured"], width=1.6),
              Trace("line", *envelope(t[w], s["tcmd"][w, j], n), label="model tcmd", color=COLORS["model"], width=1.6)]
    levels = [v for v in (ev.get("level"), ev.get("torque_limit")) if v is not None]
    if levels:
        traces.insert(1, Trace("hline", y=levels, label="level", color=COLORS["error"], dash=True))
    return FigureSpec(name, f"Saturation: axis {j + 1} torque plateau", (
        Panel(tuple(traces), xlabel="time [s]", ylabel=f"torque [{unit}]", title=title, height=240),),
        caption="The measured torque stops at a level while the model (which knows no saturation) keeps going: the "
                "drive or its torque feedback saturates. Lower the speed factor or the range.")


def _feature(data: ReportData, j: int, name: str) -> np.ndarray | None:
    q, qd, qdd = (data.signals[k][:, j] for k in ("pfb", "vfb", "afb"))
    table = {"sin(q)": np.sin, "cos(q)": np.cos, "q": lambda x: x}
    if name in table:
        return table[name](q)
    return {"qd": qd, "sign(qd)": np.sign(qd), "qdd": qdd, "qd*|qd|": qd * np.abs(qd)}.get(name)


def _systematic(data, d, name):
    j = _joint(d, data)
    if j is None or not data.has_signals:
        return None
    ev = d.get("evidence", {})
    feat = str(ev.get("feature", ""))
    m = data.used()[:, j]
    te = data.signals["te"][:, j]
    unit = torque_unit(data.joint_kinds[j])
    r2 = ev.get("r2")
    title = f"a term in {feat} explains {100 * r2:.0f} % of the error" if r2 is not None else f"a term in {feat}"
    caption = ("A noise-like error scatters around zero; one that a function of the joint state follows is a term the "
               "model lacks (gravity: sin(q); a spring: q; friction: qd or sign(qd)) or a wrong torque scale.")
    x = _feature(data, j, feat)
    fit = missing_term(data, j, x if x is not None else np.ones_like(te))
    n = plot_px(WIDE)
    if fit is not None:
        t, e, term = fit
        traces = (Trace("line", *envelope(t, e, n), label="te (used samples)", color=COLORS["error"], width=1.2),
                  Trace("line", *envelope(t, term, n), label=f"best missing term in {feat}", color=COLORS["model"],
                        width=1.4, dash=True))
        return FigureSpec(name, f"Systematic error: axis {j + 1} te and a missing {feat} term", (
            Panel(traces, xlabel="time [s]", ylabel=f"te [{unit}]", title=title, height=230),),
            caption=caption + " The blue line is the best fit of the error by that term once the part the model "
                              "already expresses is removed (the omitted-term test the diagnosis runs).")
    if x is None:  # "constant" or unknown: the error over time, with its mean
        traces = (Trace("vspans", gated_spans(data.t, m), color="#000000", opacity=0.06),
                  Trace("hline", y=[float(te[m].mean()) if m.any() else 0.0], label="mean of te", color=COLORS["model"],
                        width=1.8),
                  Trace("line", *envelope(data.t, te, n), label="te", color=COLORS["error"]))
        xlabel = "time [s]"
    else:
        traces = (Trace("dots", *density(x[m], te[m], (260, 110)), label="te (used samples)", color=COLORS["error"],
                        width=2.4, opacity=0.6),)
        xlabel = feat
    return FigureSpec(name, f"Systematic error: axis {j + 1} te vs {feat}", (
        Panel(traces, xlabel=xlabel, ylabel=f"te [{unit}]", title=title, height=240),), caption=caption)


def _misalignment(data, d, name):
    """The residual-vs-shift curve when the diagnosis stored it (evidence ``shift_curve``); else numbers only.

    The curve cannot be recomputed faithfully from the output files (the fit's filtered Coulomb sign
    is not in the REC), and an approximation would contradict the diagnosis it illustrates.
    """
    ev = d.get("evidence", {})
    curve = ev.get("shift_curve")
    if not (isinstance(curve, Mapping) and "shift_s" in curve and "residual" in curve):
        return None
    x = 1000 * np.asarray(curve["shift_s"], dtype=float)
    y = np.asarray(curve["residual"], dtype=float)
    if x.shape != y.shape or x.size < 2:
        return None
    traces = (Trace("line", x, y, label="residual after refit", color=COLORS["model"], width=1.8),
              Trace("dots", x, y, color=COLORS["model"], width=5),
              Trace("vline", x=[1000 * float(ev.get("delay_s", 0.0))], label="estimated delay", color=COLORS["error"],
                    dash=True, width=1.6))
    return FigureSpec(name, "Misalignment: fit residual vs torque shift", (
        Panel(traces, xlabel="torque shift [ms] (positive: the torque lags)", ylabel="residual (relative)",
              title=f"minimum at {1000 * float(ev.get('delay_s', 0.0)):.2f} ms", height=230),),
        caption="The model refitted with the measured torque shifted against the positions. A minimum away from "
                "zero is a delay between the channels (a fit absorbs much of it into friction and inertia, so the "
                "unshifted error alone hides it): check the time stamps or use 'dynid identify --align'.")


def _relative_std(data, d, name):
    base = data.result.get("base_parameters") or {}
    names = base.get("expressions") or base.get("names") or []
    vals = base.get("values") or []
    std = base.get("std") or []
    if not names or len(vals) != len(names) or len(std) != len(names):
        return None
    rel = np.array([100 * s / abs(v) if (s is not None and v not in (None, 0)) else np.nan
                    for v, s in zip(vals, std)], dtype=float)
    shown = np.minimum(rel, 1000.0)
    labels = tuple(str(n)[:40] for n in names)
    limit = 100 * dg.MAX_RELATIVE_STD
    traces = (Trace("hbars", x=np.where(shown > limit, np.nan, shown), labels=labels, label="relative std",
                    color=COLORS["model"], opacity=0.85),
              Trace("hbars", x=np.where(shown > limit, shown, np.nan), labels=labels, label="above the limit",
                    color=COLORS["error"], opacity=0.9),
              Trace("vline", x=[limit], label=f"{limit:.0f} % limit", color=COLORS["threshold"], dash=True, width=1.6))
    cn = data.result["metrics"].get("condition_number_scaled")
    title = f"scaled condition number {cn:.4g} (limit {dg.MAX_CONDITION:.0f})" if cn is not None else ""
    return FigureSpec(name, "Parameter uncertainty (relative standard deviation of the base parameters)", (
        Panel(traces, xlabel="relative std [%] (capped at 1000)", title=title, height=70 + 22 * len(labels)),),
        caption="Parameters the motion hardly excites have a large relative standard deviation; a richer motion "
                "(more frequencies, larger range, payload) lowers it.", width=WIDE)


def _noise(data, d, name):
    j = _joint(d, data)
    if j is None or not data.has_signals:
        return None
    t, s = data.t, data.signals
    m = data.used()[:, j]
    centre = int(np.flatnonzero(m)[m.sum() // 2]) if m.any() else t.size // 2
    w = slice(max(0, centre - 250), min(t.size, centre + 250))
    traces = (Trace("line", t[w], s["tfbRaw"][w, j], label="raw tfb", color=COLORS["raw"], width=1.0),
              Trace("line", t[w], s["tfb"][w, j], label="filtered tfb", color=COLORS["measured"], width=1.6),
              Trace("line", t[w], s["tcmd"][w, j], label="model tcmd", color=COLORS["model"], width=1.6))
    return FigureSpec(name, f"Large noise: axis {j + 1} raw vs filtered torque (500 samples)", (
        Panel(traces, xlabel="time [s]", ylabel=f"torque [{torque_unit(data.joint_kinds[j])}]", height=220),),
        caption="Noise comparable to the torque itself makes relative errors large on this axis (typical of small "
                "wrist joints); it is not a modelling error.", width=NARROW * 2)


EVIDENCE_PLOTS: dict[str, Builder] = {
    "too_slow": _too_slow,
    "few_cycles": _few_cycles,
    "small_range": _small_range,
    "saturation": _saturation,
    "systematic_residual": _systematic,
    "misalignment": _misalignment,
    "poor_conditioning": _relative_std,
    "poorly_identified": _relative_std,
    "large_noise": _noise,
}


def evidence_figure(data: ReportData, diag: Mapping[str, Any], name: str) -> FigureSpec | None:
    """The evidence plot of one diagnostic (None: numbers only), named ``name``."""
    builder = EVIDENCE_PLOTS.get(str(diag.get("code")))
    return builder(data, diag, name) if builder else None
