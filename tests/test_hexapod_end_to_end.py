"""The 6-UPRU hexapod through every consumer, as a user runs it: identify, predict, report, feed-forward,
collision monitoring, simulation (issue 13). The model itself is checked against MuJoCo in
tests/models/test_hexapod.py; here the question is whether the pipeline, writers and runtime carry it
without knowing it is a parallel robot.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid
from dynid.cli.main import main
from dynid.models import Plant
from dynid.models.hexapod import EXAMPLE_GEOMETRY, Hexapod
from dynid.recording import Recording
from dynid.runtime import FeedForward, FeedForwardStatus

FRICTION = np.tile([40.0, 12.0], 6)          # viscous [N s/m], Coulomb [N] per leg


def leg_motion(seed: int, T: float = 12.0, dt: float = 1e-3):
    """Legs oscillating about home: three sines each, random frequencies and phases (exact derivatives)."""
    rng = np.random.default_rng(seed)
    model = Hexapod.example()
    t = np.arange(0.0, T, dt)
    f = rng.uniform(0.3, 1.2, (3, 6))
    a = rng.uniform(0.005, 0.015, (3, 6))
    ph = rng.uniform(0, 2 * np.pi, (3, 6))
    w = 2 * np.pi * f
    arg = w[None] * t[:, None, None] + ph[None]
    q = model.home_positions() + (a * np.sin(arg)).sum(axis=1)
    qd = (a * w * np.cos(arg)).sum(axis=1)
    qdd = -(a * w**2 * np.sin(arg)).sum(axis=1)
    return t, q, qd, qdd


def recording(seed: int, noise: float = 0.005) -> Recording:
    """What a controller logs: 1 kHz, leg lengths quantised to 1 µm, actuator forces with 0.5 % noise."""
    model = Hexapod.example()
    theta = np.concatenate([model.example_parameters(), FRICTION])
    t, q, qd, qdd = leg_motion(seed)
    tau = Plant(model).torque(theta, q, qd, qdd)
    tau = tau + np.random.default_rng(seed + 100).normal(size=tau.shape) * noise * np.abs(tau).max(axis=0)
    return Recording(t, np.round(q / 1e-6) * 1e-6, tau)


@pytest.fixture(scope="module")
def identified(tmp_path_factory):
    d = tmp_path_factory.mktemp("hexapod")
    (d / "hexapod.json").write_text(json.dumps(EXAMPLE_GEOMETRY))
    dynid.write_recording_csv(d / "ident.csv", recording(1))
    dynid.write_recording_csv(d / "valid.csv", recording(2))
    status = main(["identify", str(d / "ident.csv"), "--model", "6upru", "--config", str(d / "hexapod.json"),
                   "--out", str(d / "out")])
    return d, status


def test_models_lists_6upru(capsys):
    assert main(["models", "--json"]) == 0
    models = {m["name"]: m for m in json.loads(capsys.readouterr().out)}
    hexa = models["6upru"]
    assert [j["type"] for j in hexa["joints"]] == ["linear"] * 6
    assert {"base_points", "platform_points", "base_u_axes", "platform_u_axes", "home_pose"} <= set(hexa["config_keys"])


@pytest.mark.slow
def test_identify_then_predict_another_motion_within_3_percent(identified, capsys):
    d, status = identified
    capsys.readouterr()
    assert status == 0
    result = json.loads((d / "out" / "result.json").read_text())
    assert result["model"] == "6upru" and result["metrics"]["success"]
    assert set(result["base_parameters"]["expressions"]) >= {"rod.m + 1/6*platform.m"}
    assert main(["predict", str(d / "out" / "result.json"), str(d / "valid.csv"), "--out", str(d / "pred.csv")]) == 0
    capsys.readouterr()
    pred = np.loadtxt(d / "pred.csv", delimiter=",", skiprows=1)
    valid = dynid.read_recording(d / "valid.csv")
    rows = np.searchsorted(valid.t, pred[:, 0])
    assert np.allclose(valid.t[rows], pred[:, 0])
    measured = valid.tau[rows]
    nrmse = np.sqrt(np.mean((pred[:, 1:] - measured) ** 2, axis=0)) / np.std(measured, axis=0)
    assert np.all(nrmse < 0.03), nrmse
    fitted = dynid.load(d / "out")
    np.testing.assert_allclose(fitted.theta[-12:], FRICTION, rtol=0.05)   # the legs' friction comes back


@pytest.mark.slow
def test_report_shows_the_platform_pose(identified):
    d, _ = identified
    page = (d / "out" / "report.html").read_text()
    assert 'id="task"' in page and "Platform pose" in page and "roll" in page


@pytest.mark.slow
def test_feedforward_per_cycle_equals_the_fitted_model_and_survives_bad_commands(identified):
    """The per-cycle runtime (forward kinematics seeded by the previous cycle) gives FittedModel.torque;
    a command the legs cannot assemble is reported, not raised, and the previous torque is held."""
    d, _ = identified
    fitted = dynid.load(d / "out")
    ff = FeedForward.from_result(fitted, delay_cycles=0)
    st = ff.new_state()
    _, q, qd, qdd = leg_motion(3, T=0.05)
    out = np.empty_like(q)
    for k in range(q.shape[0]):
        assert ff.step(st, q[k], qd[k], qdd[k]) is FeedForwardStatus.OK
        out[k] = st.taddcmd
    np.testing.assert_allclose(out, fitted.torque(q, qd, qdd), rtol=1e-9, atol=1e-9)
    held = st.taddcmd.copy()
    assert ff.step(st, np.array([0.1, 0.1, 0.1, 2.0, 2.0, 2.0]), qd[0], qdd[0]) is FeedForwardStatus.INVALID_INPUT
    np.testing.assert_array_equal(st.taddcmd, held)


@pytest.mark.slow
def test_monitor_detects_a_force_step_on_one_leg(identified, capsys):
    """Collision monitoring with the identified hexapod: quiet on a clean motion, and a 150 N push on leg 4
    from t = 6 s is flagged on leg 4."""
    d, _ = identified
    rec = recording(4)
    dynid.write_recording_csv(d / "clean.csv", rec)
    hit = rec.tau.copy()
    hit[rec.t >= 6.0, 3] += 150.0
    dynid.write_recording_csv(d / "hit.csv", Recording(rec.t, rec.q, hit))
    assert main(["monitor", str(d / "out" / "result.json"), str(d / "clean.csv"), "--json"]) == 0
    clean = json.loads(capsys.readouterr().out)
    assert clean["n_detections"] == 0
    main(["monitor", str(d / "out" / "result.json"), str(d / "hit.csv"), "--json"])
    found = json.loads(capsys.readouterr().out)
    assert found["n_detections"] >= 1 and 6.0 <= found["first_detection_s"] < 6.1
    assert {det["joint"] for det in found["detections"]} == {4}          # 1-based


@pytest.mark.slow
def test_closed_loop_simulation_follows_the_command():
    """dynid's simulator runs the hexapod (forward dynamics through the forward kinematics, servo, friction):
    it tracks a leg sine, and the recorded forces agree with the model's inverse dynamics of the motion."""
    from dynid.sim import SimOptions, SineMotion, simulate

    model = Hexapod.example()
    theta = np.concatenate([model.example_parameters(), FRICTION])
    home = model.home_positions()
    motion = SineMotion(home - 0.02, home + 0.02, np.array([1.0, 1.27, 1.43, 1.13, 1.37, 1.19]), record_s=0.4,
                        settle_s=0.0)
    rec = simulate(Plant(model), theta, motion, SimOptions(noise=0.0, linear_resolution=1e-10))
    q_cmd = motion.command(rec.t)[0]
    assert np.abs(rec.q - q_cmd).max() < 1e-3                 # the servo follows within 1 mm
    mid = slice(50, -50)
    dt = rec.t[1] - rec.t[0]
    qd = np.gradient(rec.q, dt, axis=0)
    qdd = np.gradient(qd, dt, axis=0)
    tau = Plant(model).torque(theta, rec.q, qd, qdd)
    scale = np.abs(rec.tau).max()
    assert np.abs(rec.tau[mid] - tau[mid]).max() < 0.05 * scale
