"""The built-in demonstration: simulate a robot, identify it, validate on another motion.

Robot: a vertical crank arm (softMC rotary model 3) with viscous + Coulomb friction, 0.5 % torque
noise and a 20-bit encoder, following the softMC identification program's SineWave motion.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from .identify import Identification, IdentifyOptions, identify
from .io.recording import write_recording_csv
from .io.result_json import load_result
from .models import Plant, make_model
from .outputs import write_outputs
from .predict import Prediction, predict
from .sim import SimOptions, SineMotion, simulate

__all__ = ["DemoResult", "run_demo", "DEMO_TRUE"]

# The simulated robot's true parameters (SI): crank arm with M = 4 kg at A = 0.5 m, payload
# interface at L = 0.6 m (L^2 and g*L come from the kinematics, held as known values).
DEMO_CONFIG = {"parameters": {"L^2": 0.36, "g*L": 9.80665 * 0.6},
               "position_limits": [[-2.2, 2.2]]}
DEMO_TRUE = {"I": 0.5, "L^2": 0.36, "M*g*A": 4.0 * 9.80665 * 0.5, "g*L": 9.80665 * 0.6,
             "A1.viscous": 0.8, "A1.coulomb": 1.5}


@dataclass(frozen=True)
class DemoResult:
    identification: Identification
    validation: Prediction
    true_values: dict
    files: dict


def run_demo(out_dir: str | Path, *, progress: Callable[[str, float], None] | None = None,
             seed: int = 7) -> DemoResult:
    """Simulate, identify, validate; write outputs (and the simulated recordings) into ``out_dir``."""
    step = progress or (lambda s, f: None)
    plant = Plant(make_model("rotary3", DEMO_CONFIG))
    theta = np.array([DEMO_TRUE[n] for n in plant.param_names])
    sim = SimOptions(sample_period=1e-3, noise=0.005)
    ident_motion = SineMotion(np.radians([-120.0]), np.radians([120.0]), [0.5], record_s=20.0)
    valid_motion = SineMotion(np.radians([-60.0]), np.radians([110.0]), [0.8], record_s=10.0)
    step("simulating identification run", 0.05)
    rec = simulate(plant, theta, ident_motion, sim, seed=seed)
    step("simulating validation run", 0.35)
    val = simulate(plant, theta, valid_motion, sim, seed=seed + 1)
    step("identifying", 0.6)
    ident = identify(rec, plant, IdentifyOptions())
    out = Path(out_dir)
    files = write_outputs(ident, out, source={"recording": "simulated (dynid demo)", "units": "si"})
    write_recording_csv(out / "identification_run.csv", rec)
    write_recording_csv(out / "validation_run.csv", val)
    step("validating", 0.9)
    pred = predict(load_result(out / "result.json"), val)
    step("done", 1.0)
    files.update({"identification_run.csv": out / "identification_run.csv", "validation_run.csv": out / "validation_run.csv"})
    return DemoResult(ident, pred, dict(DEMO_TRUE), files)
