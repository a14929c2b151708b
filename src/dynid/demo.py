"""The built-in demonstration: simulate a robot, identify it, validate on another motion.

Robot: a 4-axis SCARA (softMC SCARA Dynamic Model 1, 600 mm class, example link data) with viscous +
Coulomb friction on every axis, 0.5 % torque noise and 20-bit encoders (1 µm on the vertical axis),
under a position/velocity servo at 1 kHz. It runs the source's SCARA identification program
(spec/identification.md §1): ``Move {-160,-160,0,-350}``, ``SineWave {160,160,150,350}`` with
``SineWaveFreq = 0.3*{1,1.27,1.43,1.13}``, ``sleep 2000``, record 20 s. A second motion the robot
never did during identification validates the identified model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from .identification.pipeline import Identification, IdentifyOptions, identify
from .io.readers import recording_csv
from .fitted import RESULT_FILE, Prediction, load
from .models import Plant, model_class
from .models.scara import (IDENT_FREQS_HZ, IDENT_RECORD_S, IDENT_SETTLE_S, IDENT_START, IDENT_TARGET)
from .signal.conditioning import condition
from .io.outputs import run_model, stage_run
from .report import Validation, report_files, write_report
from .sim import SimOptions, SineMotion, simulate
from .units import to_si

__all__ = ["DemoResult", "run_demo", "DEMO_FRICTION", "VALIDATION_PROGRAM"]

DEMO_FRICTION = {"viscous": (2.0, 1.5, 30.0, 0.3), "coulomb": (3.0, 2.0, 10.0, 0.6)}
"""Friction of the simulated SCARA, physical sign [N m s/rad or N s/m; N m or N] per axis."""
VALIDATION_PROGRAM = {"start": (-120.0, -140.0, 20.0, -300.0), "target": (150.0, 130.0, 130.0, 300.0),
                      "freqs_hz": (0.27, 0.39, 0.33, 0.45), "record_s": 10.0}
"""A different SineWave program for validation [deg, deg, mm, deg], Hz, s."""


@dataclass(frozen=True)
class DemoResult:
    identification: Identification
    validation: Prediction
    true_values: dict
    files: dict
    validation_model_error: np.ndarray
    """NRMSE of the identified model against the true robot's torque on the validation motion, per axis."""


def _motion(start, target, freqs, record_s, settle_s, kinds):
    return SineMotion(to_si(np.array(start), kinds, "softmc"), to_si(np.array(target), kinds, "softmc"),
                      freqs, record_s=record_s, settle_s=settle_s)


def run_demo(out_dir: str | Path, *, progress: Callable[[str, float], None] | None = None,
             seed: int = 7, report: bool = True) -> DemoResult:
    """Simulate, identify, validate; write the outputs, the simulated recordings and (``report``) the report with
    the validation into ``out_dir`` — all together, the earlier demo's outputs replaced (an error or an interrupt
    leaves ``out_dir`` as it was)."""
    step = progress or (lambda s, f: None)
    model = model_class("scara4").example()
    plant = Plant(model)
    kinds = model.joint_kinds
    fr = np.column_stack([DEMO_FRICTION["viscous"], DEMO_FRICTION["coulomb"]]).ravel()
    theta = np.concatenate([model.example_parameters(), fr])
    sim = SimOptions(sample_period=1e-3, noise=0.005)
    ident_motion = _motion(IDENT_START, IDENT_TARGET, IDENT_FREQS_HZ, IDENT_RECORD_S, IDENT_SETTLE_S, kinds)
    vp = VALIDATION_PROGRAM
    valid_motion = _motion(vp["start"], vp["target"], vp["freqs_hz"], vp["record_s"], IDENT_SETTLE_S, kinds)
    step("simulating the identification run", 0.05)
    rec = simulate(plant, theta, ident_motion, sim, seed=seed)
    step("simulating the validation run", 0.4)
    val = simulate(plant, theta, valid_motion, sim, seed=seed + 1)
    step("identifying", 0.65)
    ident = identify(rec, plant, IdentifyOptions())
    out = Path(out_dir)
    fitted = run_model(ident, source={"recording": "simulated (dynid demo)", "units": "si"})
    staging, files = stage_run(fitted, ident.cond, ident.tcmd, out)
    with staging:
        for name, run in (("identification_run.csv", rec), ("validation_run.csv", val)):
            files[name] = out / name
            staging.write(files[name], recording_csv(run).encode())
        step("validating", 0.8)
        identified = load(staging.staged(out / RESULT_FILE))
        pred = identified.predict(val)
        # the identified model against the true robot on the same (conditioned) validation motion
        cond = condition(val, identified.conditioning_options(), kinds, require_motion=False)
        est = identified.torque(cond.q, cond.qd, cond.qdd)
        true_tau = plant.torque(theta, cond.q, cond.qd, cond.qdd)
        model_error = np.sqrt(np.mean((est - true_tau) ** 2, axis=0)) / np.sqrt(np.mean(true_tau**2, axis=0))
        if report:
            step("writing the report", 0.9)
            page = write_report(out, validation=Validation.from_prediction(pred, "validation_run.csv"), staging=staging)
            files.update((p.name, p) for p in report_files(page)[:2])     # the page and its validation's data
        staging.commit(list(files.values()))
    step("done", 1.0)
    true_values = dict(zip(plant.param_names, theta.tolist()))
    return DemoResult(ident, pred, true_values, files, model_error)
