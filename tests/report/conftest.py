"""Simulated identifications run through the command line as a user runs them, with their reports.

Each fixture simulates a vertical crank arm (rotary3), writes the recording as CSV, runs
``dynid identify`` then ``dynid report`` in-process, and returns the result folder. The bad runs
are the ones tests/test_diagnostics.py uses: too slow, a saturated torque feedback, and the wrong
model (rotary1, without gravity) on the crank arm.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dynid.cli.main import main
from dynid.io.readers import write_recording_csv
from dynid.models import Plant, make_model
from dynid.sim import SimOptions, SineMotion, simulate

CRANK = Plant(make_model("rotary3"))
THETA = [0.5, 0.0, 20.0, 0.0, 0.8, 1.5]
SOUND = SineMotion([-2.0], [2.0], [0.5], record_s=12)


def identify_and_report(tmp: Path, rec, model: str, capsys=None, extra=()) -> Path:
    """Write ``rec`` as CSV, run ``dynid identify`` and ``dynid report``; return the result folder."""
    csv = tmp / "run.csv"
    write_recording_csv(csv, rec)
    out = tmp / "out"
    code = main(["identify", str(csv), "--model", model, "--out", str(out), "--quiet", *extra])
    assert code in (0, 1), f"identify exited {code}"
    assert main(["report", str(out), "--quiet"]) == 0
    return out


@pytest.fixture(scope="session")
def sound_run(tmp_path_factory) -> Path:
    """A sound identification of the crank arm (no diagnostic expected)."""
    return identify_and_report(tmp_path_factory.mktemp("sound"), simulate(CRANK, THETA, SOUND, seed=11), "rotary3")


@pytest.fixture(scope="session")
def too_slow_run(tmp_path_factory) -> Path:
    """0.08 Hz instead of 0.5 Hz: inertia is drowned by friction and gravity."""
    motion = SineMotion([-2.0], [2.0], [0.08], record_s=40, settle_s=0.5)
    rec = simulate(CRANK, THETA, motion, SimOptions(sample_period=2e-3), seed=11)
    return identify_and_report(tmp_path_factory.mktemp("slow"), rec, "rotary3")


@pytest.fixture(scope="session")
def saturated_run(tmp_path_factory) -> Path:
    """The torque feedback clips at 80 % of the peak torque (the plateau softMC describes)."""
    peak = np.abs(simulate(CRANK, THETA, SOUND, seed=11).tau).max()
    rec = simulate(CRANK, THETA, SOUND, SimOptions(feedback_limit=[0.8 * peak]), seed=11)
    return identify_and_report(tmp_path_factory.mktemp("saturated"), rec, "rotary3")


@pytest.fixture(scope="session")
def wrong_model_run(tmp_path_factory) -> Path:
    """rotary1 (inertia and friction only) identified on the vertical crank arm: gravity is missing."""
    return identify_and_report(tmp_path_factory.mktemp("wrong"), simulate(CRANK, THETA, SOUND, seed=11), "rotary1")


def result_of(folder: Path) -> dict:
    return json.loads((folder / "result.json").read_text())
