"""Turn an :class:`~dynid.identification.pipeline.Identification` into the output files and write them atomically.

``IDNT<group>.PRG``, ``IDNT<group>.REC`` and ``result.json`` (spec/interfaces.md §2–3). All file
contents are rendered first and committed together (temporary files + rename), so a failed run
leaves nothing behind.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .. import __version__
from ..identification.pipeline import Identification, ParameterStatus
from ._atomic import commit_files
from .prg import PrgContent, format_prg
from .rec import format_rec
from .result_json import jsonable
from ..units import velocity_unit

__all__ = ["result_dict", "prg_content", "rec_text", "write_outputs", "default_element"]


def default_element(ident: Identification) -> str:
    """softMC element name: the robot type (``SCARA``...) or the axis name for a single axis."""
    model = ident.plant.model
    return model.joints[0].name if model.n_joints == 1 and model.element == "A1" else model.element


def result_dict(ident: Identification, *, element: str, group: int, source: Mapping[str, Any] | None = None,
                extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``result.json`` content (minimum schema of interfaces.md §3 plus more keys)."""
    plant, model, cond = ident.plant, ident.plant.model, ident.cond
    n_model = plant.n_model
    names = plant.param_names
    status = ident.status
    fr = plant.friction
    f_std = ident.std[n_model:]
    base = ident.base
    res = {
        "dynid_version": __version__,
        "model": model.name,
        "model_title": model.title,
        "softmc_dynamic_model": model.softmc_model,
        "element": element,
        "group": group,
        "config": model.config.to_dict(),
        "joints": [{"name": j.name, "type": j.kind} for j in model.joints],
        "parameters": {
            "names": list(names[:n_model]),
            "values": ident.theta[:n_model],
            "units": [p.unit for p in model.parameters],
            "index": [p.slot for p in model.parameters],
            "identifiable": [s == ParameterStatus.IDENTIFIED for s in status[:n_model]],
            "status": list(status[:n_model]),
            "std": ident.std[:n_model],
            "relative_std_percent": 100 * ident.std[:n_model] / np.abs(np.where(ident.theta[:n_model] == 0, np.nan, ident.theta[:n_model])),
        },
        "friction": {
            "model": fr.spec,
            "convention": "physical: motor torque = rigid body + Fv*qd + Fc*sign(qd) (+ offset ...)",
            "prg_sign": model.config.friction_sign,
            **fr.values_by_term(ident.theta[n_model:]),
            "std": fr.values_by_term(f_std),
            "names": list(fr.param_names),
            "values": ident.theta[n_model:],
            "units": list(fr.param_units),
            "status": list(status[n_model:]),
        },
        "base_parameters": {
            "count": base.n_base,
            "names": [names[i] for i in base.independent],
            "expressions": base.expressions(),
            "values": ident.base_values,
            "std": ident.base_std,
            "excited": ident.base_excited,
        },
        "derived": dict(ident.derived),
        "conditioning": {
            "sample_period_s": cond.sample_period_s,
            "cutoff_hz": cond.cutoff_hz,
            "filter_order": cond.options.filter_order,
            "raw_length": cond.raw_length,
            "data_length": cond.data_length,
            "trim_samples": cond.start,
            "velocity_threshold": cond.velocity_threshold,
            "velocity_threshold_units": [velocity_unit(k) for k in model.joint_kinds],
            "upper_velocity_threshold": cond.upper_velocity_threshold,
            "moving_samples": cond.moving_samples,
            "smooth_sign": cond.options.smooth_sign,
            "torque_delay_s": cond.options.torque_delay_s,
        },
        "metrics": {
            "max_relative_error": ident.errors.max_relative,
            "mean_relative_error": ident.errors.mean_relative,
            "allowed": ident.errors.allowed,
            "success": ident.success,
            "condition_number": ident.lsq.condition_number,
            "condition_number_scaled": ident.lsq.condition_number_scaled,
            "rank": ident.lsq.rank,
            "estimator": ident.estimator,
            "fit_decimation": ident.decimation,
            "fit_rows": int(np.sum(ident.cond.moving[::ident.decimation])),
            "weights": ident.lsq.weights,
            "residual_rms": np.sqrt(np.mean(np.where(cond.moving, ident.te, 0.0) ** 2, axis=0)
                                    * cond.data_length / np.maximum(cond.moving_samples, 1)),
            "diagnostics": [d.message for d in ident.diagnostics],
            "diagnostics_detail": [d.to_dict() for d in ident.diagnostics],
        },
        "success": ident.success,
        "message": ident.message,
        **({"physical_consistency": ident.consistent.to_dict()} if ident.consistent is not None else {}),
        "notes": list(ident.notes),
        "source": dict(source or {}),
        "created": _dt.datetime.now().isoformat(timespec="seconds"),
    }
    if extra:
        res.update(extra)
    return jsonable(res)


def prg_content(ident: Identification, *, element: str, date: _dt.datetime | None = None,
                properties: Mapping[str, float] | None = None) -> PrgContent:
    """softMC PRG content. Friction is converted to the configured PRG sign (softMC: −1)."""
    plant, model, cond = ident.plant, ident.plant.model, ident.cond
    sign = model.config.friction_sign
    fr = plant.friction.values_by_term(ident.friction_values)
    axes = tuple(j.name for j in model.joints)
    visc = fr.get("viscous", [0.0] * len(axes))
    coul = fr.get("coulomb", [0.0] * len(axes))
    slots = {p.slot: float(v) for p, v in zip(model.parameters, ident.model_values)}
    for i in range(1, model.n_slots + 1):
        slots.setdefault(i, 0.0)
    comments = []
    for term, vals in fr.items():
        if term not in ("viscous", "coulomb"):
            owners = plant.friction.motor_names if term.startswith("motor_") else axes
            comments.append(f"Friction term '{term}' (physical sign, no softMC property): "
                            + "; ".join(f"{ax} = {v:.9e}" for ax, v in zip(owners, vals)))
    return PrgContent(
        element=element, success=ident.success, date=date,
        max_error_percent=tuple(100 * ident.errors.max_relative),
        mean_error_percent=tuple(100 * ident.errors.mean_relative),
        allowed_percent=100 * ident.errors.allowed, cutoff_hz=cond.cutoff_hz,
        data_length=cond.data_length, raw_length=cond.raw_length,
        moving_samples=tuple(int(x) for x in cond.moving_samples), thresholds=tuple(cond.velocity_threshold),
        threshold_units=tuple(velocity_unit(k) for k in model.joint_kinds),
        parameters=slots, axes=axes,
        viscous={a: sign * v for a, v in zip(axes, visc)}, coulomb={a: sign * v for a, v in zip(axes, coul)},
        dynamic_model=model.softmc_model, properties=dict(properties or {}), comments=tuple(comments))


def rec_text(ident: Identification, *, element: str) -> bytes:
    """``IDNT<group>.REC`` content (SI units)."""
    cond, model = ident.cond, ident.plant.model
    channels = {"tfbRaw": cond.tau_raw, "pfbRaw": cond.q_raw, "tfb": cond.tau, "pfb": cond.q, "vfb": cond.qd,
                "afb": cond.qdd, "tcmd": ident.tcmd, "te": ident.te}
    header = jsonable({
        "element": element, "model": model.name, "softmc_dynamic_model": model.softmc_model,
        "sample_period_s": cond.sample_period_s, "cutoff_hz": cond.cutoff_hz,
        "velocity_threshold": cond.velocity_threshold, "moving_samples": cond.moving_samples,
        "raw_length": cond.raw_length, "data_length": cond.data_length, "first_raw_sample": cond.start,
        "joints": [j.name for j in model.joints],
        **({"transmission": model.config.transmission.to_dict()} if model.config.transmission is not None else {}),
        "units": {"t": "s", "position": [("rad" if k == "rotary" else "m") for k in model.joint_kinds],
                  "velocity": [velocity_unit(k) for k in model.joint_kinds],
                  "torque": [("N m" if k == "rotary" else "N") for k in model.joint_kinds]},
        "signals": {"tfbRaw": "measured torque" + (" (joint side, converted by the transmission)"
                                                   if _motor_side(model) else ""), "pfbRaw": "measured position", "tfb": "filtered torque",
                    "pfb": "filtered position", "vfb": "velocity", "afb": "acceleration",
                    "tcmd": "model torque (TorqueAdditiveCommand)", "te": "tcmd - tfb"},
    })
    return format_rec(cond.t, channels, header)


def _motor_side(model) -> bool:
    tr = model.config.transmission
    return tr is not None and tr.records_motor_side


def write_outputs(ident: Identification, out_dir: str | Path, *, element: str | None = None, group: int = 1,
                  source: Mapping[str, Any] | None = None, extra_files: Mapping[str, bytes] | None = None,
                  properties: Mapping[str, float] | None = None, extra: Mapping[str, Any] | None = None,
                  date: _dt.datetime | None = None) -> dict[str, Path]:
    """Render and atomically write PRG, REC and result.json (plus ``extra_files``) into ``out_dir``."""
    import json

    out = Path(out_dir)
    element = element or default_element(ident)
    files = {
        out / f"IDNT{group}.PRG": format_prg(prg_content(ident, element=element, date=date, properties=properties)).encode(),
        out / f"IDNT{group}.REC": rec_text(ident, element=element),
        out / "result.json": (json.dumps(result_dict(ident, element=element, group=group, source=source, extra=extra),
                                         indent=2) + "\n").encode(),
    }
    for name, data in (extra_files or {}).items():
        files[out / name] = data
    commit_files(files)
    return {p.name: p for p in files}
