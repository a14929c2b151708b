"""The per-axis figures and the validation figures, as :class:`~._spec.FigureSpec` s.

Per axis: measured vs model torque with the error ``te`` (and the 50 % rule's band), velocity with
the gating threshold shaded, friction torque vs velocity, position against the limits.
"""

from __future__ import annotations

import numpy as np

from ..models.friction import FrictionCoefficients
from ._data import ReportData, Validation
from ._model import identified_model
from ._spec import COLORS, FigureSpec, Panel, Trace, density, envelope
from ._svg import MARGIN
from ..units import force_unit, velocity_unit

__all__ = ["axis_figures", "validation_figures", "task_space_figure", "torque_unit", "velocity_unit",
           "position_display", "gated_spans", "excluded_traces", "time_extent", "measured_friction",
           "base_correlation", "correlated_pairs", "correlation_figure", "WIDE", "NARROW", "CORRELATION_LIMIT"]

WIDE = 860
NARROW = 430
CORRELATION_LIMIT = 0.9
"""Base parameters whose estimates correlate above this (in absolute value) are shown as poorly determined."""
MAX_HEATMAP = 16


def plot_px(width: int) -> int:
    """Plot area width [px] of a figure ``width`` px wide: the envelope's bucket count."""
    return width - MARGIN["left"] - MARGIN["right"]


torque_unit = force_unit


def position_display(kind: str) -> tuple[float, str]:
    """(factor, unit) to show SI positions in softMC user units: deg for rotary, mm for linear joints."""
    return (180.0 / np.pi, "deg") if kind == "rotary" else (1000.0, "mm")


def gated_spans(t: np.ndarray, moving: np.ndarray) -> np.ndarray:
    """Time intervals ``(n, 2)`` [s] where ``moving`` is False (samples the fit did not use)."""
    d = np.diff(np.concatenate([[0], (~moving).astype(np.int8), [0]]))
    a, b = np.flatnonzero(d == 1), np.flatnonzero(d == -1) - 1
    return np.column_stack([t[a], t[b]]) if a.size else np.empty((0, 2))


def measured_friction(data: ReportData) -> tuple[np.ndarray, FrictionCoefficients] | None:
    """Friction torque the measurement implies, ``tfb - rigid-body model = friction model - te``, ``(N, n)``,
    and the identified friction (the model's own evaluator).

    None when the identified model cannot be loaded from result.json (:func:`._model.identified_model`).
    """
    fitted = identified_model(data)
    if fitted is None:
        return None
    coef = fitted.plant.friction_coefficients(fitted.theta)
    s = data.signals
    return coef.torque(s["vfb"], s["afb"]) - s["te"], coef


def excluded_traces(data: ReportData, j: int, *, legend: bool = True, slow: bool = True) -> list[Trace]:
    """Shaded time spans of joint ``j``'s samples the fit left out: below the velocity threshold (unless
    ``slow`` is False), stick-slip windows, and the trimmed ends (outside the REC's samples; draw the
    panel over :func:`time_extent` to show them)."""
    ex, t = data.samples, data.t
    out = []
    if slow:
        upper = data.result["conditioning"].get("upper_velocity_threshold") is not None
        label = "not used: outside the velocity thresholds" if upper else "not used: |v| below the threshold"
        out.append(Trace("vspans", gated_spans(t, ~ex.slow[:, j]), label=label if legend else None, color="#000000",
                         opacity=0.07))
    if ex.stick[:, j].any():
        out.append(Trace("vspans", gated_spans(t, ~ex.stick[:, j]), color=COLORS["limit"], opacity=0.22,
                         label="not used: stick-slip window" if legend else None))
    lo, hi = time_extent(data)
    spans = [s for s in ([lo, t[0]], [t[-1], hi]) if s[1] > s[0]]
    if spans:
        out.append(Trace("vspans", np.array(spans), label="trimmed (filter edge)" if legend else None,
                         color=COLORS["accent"], opacity=0.3))
    return out


def time_extent(data: ReportData) -> tuple[float, float]:
    """Time span [s] of the raw record: the REC's, widened by the samples trimmed at each end."""
    a, b = data.samples.trimmed
    dt = float(data.result["conditioning"].get("sample_period_s") or 0.0)
    return float(data.t[0]) - a * dt, float(data.t[-1]) + b * dt


def _excluded_note(data: ReportData, j: int) -> str:
    ex = data.samples
    if ex.exact[j]:
        return ""
    return (f" The shaded windows are recovered from result.json and the REC; they account for "
            f"{int(ex.used[:, j].sum())} used samples where the fit counted "
            f"{int(data.vector('conditioning', 'moving_samples')[j])}.")


def _torque_figure(data: ReportData, j: int, used: np.ndarray) -> FigureSpec:
    s, t = data.signals, data.t
    name, kind = data.joint_names[j], data.joint_kinds[j]
    unit = torque_unit(kind)
    n = plot_px(WIDE)
    m = used[:, j]
    allowed = float(data.result["metrics"].get("allowed", 0.5))
    ref = float(np.abs(s["tfb"][m, j]).max()) if m.any() else float(np.abs(s["tfb"][:, j]).max())
    mre = data.vector("metrics", "max_relative_error")[j]
    every = float(np.abs(s["te"][:, j]).max()) / ref if ref > 0 else np.nan
    title = f"error over the used samples: max {100 * mre:.2f} % of max |tfb| = {ref:.4g} {unit}"
    if np.isfinite(every) and np.isfinite(mre) and every > 1.01 * mre:
        title += f" (all samples: {100 * every:.2f} %)"
    xlim = time_extent(data)
    top = Panel((*excluded_traces(data, j),
                 Trace("line", *envelope(t, s["tfb"][:, j], n), label="measured tfb", color=COLORS["measured"], width=1.3),
                 Trace("line", *envelope(t, s["tcmd"][:, j], n), label="model tcmd", color=COLORS["model"], width=1.3)),
                ylabel=f"torque [{unit}]", title="measured vs model torque", height=210, xlim=xlim)
    bottom = Panel((*excluded_traces(data, j, legend=False),
                    Trace("hline", y=[-allowed * ref, allowed * ref], label=f"{100 * allowed:.0f} % rule limit",
                          color=COLORS["threshold"], dash=True, width=1.2, autoscale=False),
                    Trace("line", *envelope(t, s["te"][:, j], n), label="error te = tcmd - tfb", color=COLORS["error"])),
                   xlabel="time [s]", ylabel=f"te [{unit}]", title=title, height=190, xlim=xlim)
    return FigureSpec(f"axis{j + 1}_torque", f"Axis {j + 1} ({name}): torque", (top, bottom),
                      caption="Measured (filtered) torque tfb and the identified model's torque tcmd over the record; "
                              "below, their difference te with the band the 50 % rule allows. Shaded: samples the fit "
                              "and the errors leave out (grey: below the velocity threshold; pink: around reversals "
                              "where the joint stuck; blue, at the ends: trimmed for the filter's edge transient). "
                              "The error in the title is over the used samples, as softMC's rule counts it; a spike "
                              "inside a shaded window is not part of it." + _excluded_note(data, j))


def _velocity_figure(data: ReportData, j: int, used: np.ndarray) -> FigureSpec:
    s, t = data.signals, data.t
    name, kind = data.joint_names[j], data.joint_kinds[j]
    thr = data.vector("conditioning", "velocity_threshold", 0.0)[j]
    upper = data.result["conditioning"].get("upper_velocity_threshold")
    traces = [Trace("hband", y=[-thr, thr], label=f"gated out: |v| < {thr:.4g} {velocity_unit(kind)}",
                    color=COLORS["threshold"], opacity=0.3)]
    if upper is not None:
        u = data.vector("conditioning", "upper_velocity_threshold", np.inf)[j]
        if np.isfinite(u):
            traces.append(Trace("hline", y=[-u, u], label="upper threshold", color=COLORS["threshold"], dash=True))
    traces += excluded_traces(data, j, slow=False)
    traces.append(Trace("line", *envelope(t, s["vfb"][:, j], plot_px(WIDE)), label="velocity vfb",
                        color=COLORS["model"]))
    n_used, n_all = int(used[:, j].sum()), used.shape[0]
    n_moving = n_all - int(data.samples.slow[:, j].sum())
    title = f"{n_used} of {n_all} samples ({100 * n_used / n_all:.0f} %) used by the fit"
    if n_moving != n_used:
        title += f"; {n_moving} above the threshold"
    return FigureSpec(f"axis{j + 1}_velocity", f"Axis {j + 1} ({name}): velocity and gating",
                      (Panel(tuple(traces), xlabel="time [s]", ylabel=f"velocity [{velocity_unit(kind)}]",
                             title=title, height=200, xlim=time_extent(data)),),
                      caption="Filtered velocity. Samples inside the shaded band are below the velocity threshold "
                              "and are not used by the fit (friction is not defined near zero velocity); nor are the "
                              "samples around a reversal where the joint stuck (pink, when any) and the ends trimmed "
                              "for the filter (blue).")


def _friction_figure(data: ReportData, j: int, used: np.ndarray, friction) -> FigureSpec:
    s = data.signals
    name, kind = data.joint_names[j], data.joint_kinds[j]
    m = used[:, j]
    v = s["vfb"][m, j]
    tu, vu = torque_unit(kind), velocity_unit(kind)
    if friction is not None:
        f_meas, coef = friction
        y = f_meas[m, j]
        vg = np.linspace(v.min(), v.max(), 401) if v.size else np.zeros(1)
        vg = vg[np.abs(vg) > 0]
        qd = np.zeros((vg.size, data.n_joints))
        qd[:, j] = vg
        curve = coef.torque(qd, np.zeros_like(qd))[:, j]
        traces = (Trace("dots", *density(v, y, (200, 110)), label="measured - rigid-body model", color=COLORS["raw"],
                        width=3.0),
                  Trace("line", vg, curve, label=f"model ({coef.model.spec})", color=COLORS["model"], width=1.4))
        title, ylabel = "friction torque vs velocity", f"friction [{tu}]"
        caption = ("Friction the measurement implies (measured torque minus the identified rigid-body torque, used "
                   "samples) against the identified friction law. A shape the line does not follow (Stribeck dip, "
                   "asymmetry, offset) suggests a richer friction model.")
    else:
        traces = (Trace("dots", *density(v, s["tfb"][m, j], (200, 110)), label="measured", color=COLORS["raw"], width=2.6),
                  Trace("dots", *density(v, s["tcmd"][m, j], (200, 110)), label="model", color=COLORS["model"], width=2.0))
        title, ylabel = "torque vs velocity", f"torque [{tu}]"
        caption = "Measured and model torque against velocity (used samples)."
    return FigureSpec(f"axis{j + 1}_friction", f"Axis {j + 1} ({name}): friction",
                      (Panel(traces, xlabel=f"velocity [{vu}]", ylabel=ylabel, title=title, height=270),),
                      caption=caption, width=NARROW)


def position_limits(data: ReportData) -> list | None:
    lims = data.result.get("config", {}).get("position_limits")
    return lims if isinstance(lims, list) and len(lims) == data.n_joints else None


def _position_figure(data: ReportData, j: int) -> FigureSpec:
    s, t = data.signals, data.t
    name, kind = data.joint_names[j], data.joint_kinds[j]
    k, unit = position_display(kind)
    q = s["pfbRaw"][:, j] * k
    traces = [Trace("hband", y=[q.min(), q.max()], label="visited", color=COLORS["good"], opacity=0.15)]
    lims = position_limits(data)
    if lims is not None:
        lo, hi = lims[j]
        traces.append(Trace("hline", y=[lo * k, hi * k], label="limits", color=COLORS["limit"], dash=True, width=1.6))
        title = f"covers {100 * np.ptp(q) / ((hi - lo) * k):.0f} % of the limits"
    else:
        title = f"range {np.ptp(q):.4g} {unit} (no position_limits configured)"
    traces.append(Trace("line", *envelope(t, q, plot_px(NARROW)), label="position", color=COLORS["measured"]))
    return FigureSpec(f"axis{j + 1}_position", f"Axis {j + 1} ({name}): position coverage",
                      (Panel(tuple(traces), xlabel="time [s]", ylabel=f"position [{unit}]", title=title, height=270),),
                      caption="Measured position against the configured limits: a model is only trusted over the "
                              "range the identification motion visited.", width=NARROW)


def axis_figures(data: ReportData) -> list[list[FigureSpec]]:
    """Per joint: torque, velocity, friction and position figures (empty without the REC)."""
    if not data.has_signals:
        return []
    used = data.used()
    friction = measured_friction(data)
    return [[_torque_figure(data, j, used), _velocity_figure(data, j, used),
             _friction_figure(data, j, used, friction), _position_figure(data, j)]
            for j in range(data.n_joints)]


_TASK_COLORS = (COLORS["model"], COLORS["error"], COLORS["good"])


def task_space_figure(data: ReportData) -> FigureSpec | None:
    """The model's output positions over the run (a hexapod's platform pose from forward kinematics of
    the recorded legs): translations in mm and rotations in deg, one panel each. None for models
    without a task space, or without the REC or the model."""
    if not data.has_signals:
        return None
    fitted = identified_model(data)
    if fitted is None:
        return None
    try:
        ts = fitted.plant.model.task_space(data.signals["pfb"])
    except (ValueError, ArithmeticError):     # e.g. legs that do not assemble: the axis plots still show them
        return None
    if ts is None:
        return None
    t, n = data.t, plot_px(WIDE)
    panels = []
    for unit, k, shown in (("m", 1000.0, "mm"), ("rad", 180.0 / np.pi, "deg")):
        cols = [c for c, u in enumerate(ts.units) if u == unit]
        if not cols:
            continue
        traces = []
        for i, c in enumerate(cols):   # a coordinate far from 0 (the platform's height) about its mean
            y = ts.values[:, c] * k
            mid = float(np.mean(y))
            off = abs(mid) > np.ptp(y)
            traces.append(Trace("line", *envelope(t, y - mid if off else y, n),
                                label=f"{ts.names[c]} − {mid:.4g}" if off else ts.names[c],
                                color=_TASK_COLORS[i % len(_TASK_COLORS)]))
        traces = tuple(traces)
        span = ", ".join(f"{ts.names[c]} {np.ptp(ts.values[:, c]) * k:.3g}" for c in cols)
        panels.append(Panel(traces, ylabel=f"[{shown}]", title=f"range: {span} {shown}", height=200))
    panels[-1] = Panel(panels[-1].traces, xlabel="time [s]", ylabel=panels[-1].ylabel, title=panels[-1].title,
                       height=panels[-1].height)
    return FigureSpec("task_space", ts.title[:1].upper() + ts.title[1:], tuple(panels),
                      caption=f"The {ts.title} over the identification run, computed from the recorded joint positions "
                              "by the model's forward kinematics: the part of the workspace the identified model was "
                              "fitted on.")


def validation_figures(data: ReportData, val: Validation) -> list[FigureSpec]:
    """Per joint: measured vs predicted torque and their difference on the validation recording."""
    out = []
    n = plot_px(WIDE)
    for j in range(val.predicted.shape[1]):
        name = data.joint_names[j] if j < data.n_joints else f"{j + 1}"
        unit = torque_unit(data.joint_kinds[j]) if j < data.n_joints else ""
        traces = []
        if val.measured is not None:
            traces.append(Trace("line", *envelope(val.t, val.measured[:, j], n), label="measured", color=COLORS["measured"]))
        traces.append(Trace("line", *envelope(val.t, val.predicted[:, j], n), label="model prediction",
                            color=COLORS["model"]))
        panels = [Panel(tuple(traces), ylabel=f"torque [{unit}]", title="measured vs predicted torque", height=210,
                        xlabel="" if val.measured is not None else "time [s]")]
        if val.measured is not None:
            e = val.predicted[:, j] - val.measured[:, j]
            panels.append(Panel((Trace("line", *envelope(val.t, e, n), label="prediction - measured",
                                       color=COLORS["error"]),), xlabel="time [s]", ylabel=f"error [{unit}]",
                                title="prediction error", height=180))
        out.append(FigureSpec(f"validation_axis{j + 1}", f"Validation, axis {j + 1} ({name})", tuple(panels),
                              caption="The identified model's torque for a motion it was not fitted on, against the "
                                      "measured (unfiltered) torque of that recording."))
    return out


def base_correlation(data: ReportData) -> np.ndarray | None:
    """result.json's ``base_parameters.correlation`` ``(n_base, n_base)`` (NaN where not estimated), or None
    when it is absent or does not match the base parameters."""
    base = data.result.get("base_parameters") or {}
    corr, names = base.get("correlation"), base.get("names") or []
    if not isinstance(corr, list) or not names:
        return None
    try:
        c = np.array([[np.nan if v is None else float(v) for v in row] for row in corr], dtype=float)
    except (TypeError, ValueError):
        return None
    return c if c.shape == (len(names), len(names)) else None


def correlated_pairs(corr: np.ndarray, limit: float = CORRELATION_LIMIT) -> list[tuple[int, int, float]]:
    """Pairs ``(i, j, r)``, ``i < j``, whose correlation exceeds ``limit`` in absolute value, strongest first.

    Examples
    --------
    >>> correlated_pairs(np.array([[1.0, -0.95, 0.2], [-0.95, 1.0, np.nan], [0.2, np.nan, 1.0]]))
    [(0, 1, -0.95)]
    """
    i, j = np.triu_indices(corr.shape[0], 1)
    r = corr[i, j]
    keep = np.isfinite(r) & (np.abs(r) > limit)
    out = [(int(a), int(b), float(v)) for a, b, v in zip(i[keep], j[keep], r[keep])]
    return sorted(out, key=lambda x: -abs(x[2]))


def correlation_figure(data: ReportData) -> FigureSpec | None:
    """Heat-map of the correlations among the base parameters that correlate above
    :data:`CORRELATION_LIMIT` with another (at most 16, the most correlated), or None when none does."""
    corr = base_correlation(data)
    if corr is None:
        return None
    pairs = correlated_pairs(corr)
    if not pairs:
        return None
    worst: dict[int, float] = {}
    for a, b, r in pairs:
        for k in (a, b):
            worst[k] = max(worst.get(k, 0.0), abs(r))
    shown = sorted(sorted(worst, key=lambda k: -worst[k])[:MAX_HEATMAP])
    names = data.result["base_parameters"]["names"]
    labels = tuple(str(names[k])[:32] for k in shown)
    cell = 30
    left = 14 + 6.5 * max(len(f"{len(labels)} {s}") for s in labels)
    width = int(max(360, left + cell * len(labels) + MARGIN["right"]))
    panel = Panel((Trace("cells", corr[np.ix_(shown, shown)], labels=labels),),
                  height=MARGIN["top"] + MARGIN["bottom"] + cell * len(labels), legend=False)
    more = len(worst) - len(shown)
    return FigureSpec("correlation", "Correlation of the poorly separated base parameters", (panel,),
                      caption="Correlation between the estimates of the base parameters that correlate above "
                              f"{CORRELATION_LIMIT:g} (in absolute value) with another; column k is row k. Red: the "
                              "two estimates err the same way, blue: opposite ways; near ±1 the recording cannot tell "
                              "them apart, only a combination of them."
                              + (f" {more} more are left out." if more > 0 else ""),
                      width=width)

