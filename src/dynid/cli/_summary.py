"""Human-readable summaries (stdout) of results."""

from __future__ import annotations

import numpy as np

from ..identification.pipeline import Identification
from ..units import velocity_unit
from ._common import fmt, style, table


def identification(ident: Identification, element: str, source: str) -> str:
    plant, cond, err, summary = ident.plant, ident.cond, ident.errors, ident.summary
    model = plant.model
    verdict = style("SUCCEEDED", "success") if ident.success else style("FAILED", "failure")
    out = [f"{model.name} ({model.title}) on {source}: identification {verdict} for {element}",
           f"  {ident.message}", ""]
    rows = []
    for j, joint in enumerate(model.joints):
        rows.append((f"{j + 1} {joint.name}", f"{100 * err.max_relative[j]:.2f} %", f"{100 * err.mean_relative[j]:.2f} %",
                     f"{summary.moving[j]}/{summary.data_length}",
                     f"{cond.velocity_threshold[j]:.6f} {velocity_unit(joint.kind)}"))
    out.append(table(rows, ["axis", "max rel. err", "mean rel. err", "moving/used", "threshold"]))
    out.append(f"cutoff {cond.cutoff_hz:.3f} Hz; data length {summary.data_length} of {summary.raw_length} raw samples; "
               f"condition number {ident.lsq.condition_number:.4g} (scaled {ident.lsq.condition_number_scaled:.4g}); "
               f"{ident.base.n_base} base parameters")
    out.append("")
    prow = []
    for i, (name, unit) in enumerate(zip(plant.param_names, plant.param_units)):
        v, s = ident.theta[i], ident.std[i]
        rel = f"{100 * s / abs(v):.2f} %" if np.isfinite(s) and v != 0 else "-"
        prow.append((name, fmt(v, 7), unit, fmt(s, 3) if np.isfinite(s) else "-", rel, ident.status[i]))
    out.append(table(prow, ["parameter", "value", "unit", "std", "rel. std", "status"]))
    combos = [(e) for e, i in zip(ident.base.expressions(), ident.base.independent) if e != plant.param_names[i]]
    if combos:
        out.append("base parameters (identified combinations): " + "; ".join(combos))
    for c in ident.confounded:
        out.append(f"confounded: {c.text}")
    for k, d in ident.derived.items():
        out.append(f"derived: {k} = {fmt(d['value'], 6)} {d['unit']} ({d['description']})")
    for note in ident.notes:
        out.append(f"note: {note}")
    out.append("")
    if ident.diagnostics:
        out.append("diagnostics:")
        order = {"error": 0, "warning": 1, "info": 2}
        for d in sorted(ident.diagnostics, key=lambda d: order.get(d.severity, 3)):
            out.append(f"  {style(f'[{d.severity}]', d.severity)} {d.message}")
            if d.next_step:
                out.append(f"      next: {d.next_step}")
    else:
        out.append("diagnostics: none — the motion and the fit look sound")
    return "\n".join(out)
