"""TorqueThreshold (issue 17.4): written to the PRG, read back, and softMC's error on exceeding it.

spec/units-and-runtime.md §3: ``<axis>.TorqueThreshold`` is the limit on TADDCOMMAND and exceeding it
raises an error. The threshold comes from the configuration's ``torque_limits``; runtime offers softMC's
behaviour (``on_threshold="error"``, the command line's default) or clamping. Reference torques are the
rotary crank's closed form ``I·qdd − MgA·sin q + Fv·qd + Fc·sign(qd)`` and the SCARA's Plant.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid
from dynid.cli.main import main
from dynid.fitted import FittedModel
from dynid.io.outputs import prg_content
from dynid.io.prg import format_prg, read_prg
from dynid.models import Plant, make_model, model_class
from dynid.runtime import (FeedForward, FeedForwardStatus, TorqueThresholdError, check_torque_threshold,
                           feedforward_batch)

I, MGA, FV, FC = 0.5, 4.0, 0.1, 0.3          # rotary3: I, L^2 = 0, M*g*A, g*L = 0, A1.viscous, A1.coulomb
THETA = [I, 0.0, MGA, 0.0, FV, FC]
LIMIT = 5.0


def crank_torque(q, qd, qdd):
    return I * qdd - MGA * np.sin(q) + FV * qd + FC * np.sign(qd)


def write_crank_prg(path, limits=(LIMIT,)):
    config = {"torque_limits": list(limits)} if limits is not None else {}
    fm = FittedModel(Plant(make_model("rotary3", config)), THETA,
                     conditioning={"cutoff_hz": 10.0, "data_length": 100, "raw_length": 100},
                     metrics={"success": True, "max_relative_error": [0.1], "mean_relative_error": [0.01]})
    path.write_text(format_prg(prg_content(fm)))
    return path


@pytest.fixture
def trajectory(tmp_path):
    """q = 1.2 sin(2π t): the crank's torque reaches |tau| ≈ 8 N m, above the 5 N m threshold."""
    t = np.arange(0.0, 2.0, 1e-3)
    w = 2 * np.pi
    q, qd, qdd = 1.2 * np.sin(w * t), 1.2 * w * np.cos(w * t), -1.2 * w**2 * np.sin(w * t)
    path = tmp_path / "traj.csv"
    np.savetxt(path, np.column_stack([t, q, qd, qdd]), delimiter=",", header="t,q1,dq1,ddq1", comments="")
    return path, t, q, qd, qdd


def test_prg_writes_torque_threshold_and_load_reads_it(tmp_path):
    prg = write_crank_prg(tmp_path / "IDNT1.PRG")
    text = prg.read_text()
    assert "A1.TorqueThreshold = 5.000000000e+00" in text.splitlines()
    # softMC's order: friction of the axis, then its threshold
    lines = text.splitlines()
    assert lines.index("A1.TorqueThreshold = 5.000000000e+00") == lines.index("A1.CoulombFriction = -3.000000000e-01") + 1
    assert read_prg(prg).torque_thresholds == {"A1": 5.0}
    loaded = dynid.load(prg, "rotary3")
    assert loaded.model.config.torque_limits == (5.0,)
    assert FeedForward.from_result(loaded).torque_threshold.tolist() == [5.0]
    unlimited = write_crank_prg(tmp_path / "IDNT2.PRG", limits=None)
    assert "TorqueThreshold" not in unlimited.read_text()
    assert dynid.load(unlimited, "rotary3").model.config.torque_limits is None


def test_controller_threshold_line_with_other_spacing_and_case(tmp_path):
    text = write_crank_prg(tmp_path / "IDNT1.PRG").read_text().replace("A1.TorqueThreshold = 5.000000000e+00",
                                                                        "a1.torquethreshold   =  200")
    (tmp_path / "IDNT1.PRG").write_text(text)
    assert dynid.load(tmp_path / "IDNT1.PRG", "rotary3").model.config.torque_limits == (200.0,)


def scara():
    model = model_class("scara4").example()
    plant = Plant(model)
    theta = np.concatenate([model.example_parameters(), np.tile([1.0, 2.0], 4)])
    return plant, theta


def test_batch_error_names_axis_sample_and_value(rng):
    plant, theta = scara()
    q, qd, qdd = plant.model.sample_states(rng, 300)
    tau = plant.torque(theta, q, qd, qdd)
    limit = np.abs(tau).max(axis=0) * np.array([1.5, 0.5, 1.5, 1.5])      # only axis 2 exceeds
    first = int(np.nonzero(np.abs(tau[:, 1]) > limit[1])[0][0])
    ff = FeedForward(plant, theta, delay_cycles=0, torque_threshold=limit, on_threshold="error")
    t = np.arange(300) * 1e-3
    with pytest.raises(TorqueThresholdError, match=rf"axis A2 at sample {first} \(t = {t[first]:.6g} s\)") as err:
        feedforward_batch(ff, q, qd, qdd, t=t)
    e = err.value
    assert (e.joint, e.sample) == (1, first)
    assert e.value == pytest.approx(tau[first, 1], rel=1e-12) and e.threshold == pytest.approx(limit[1])
    assert f"{abs(tau[first, 1]):.6g} > {limit[1]:.6g}" in e.message and e.options == ("on_threshold",)

    clamped = feedforward_batch(FeedForward(plant, theta, delay_cycles=0, torque_threshold=limit,
                                            on_threshold="clamp"), q, qd, qdd)
    np.testing.assert_allclose(clamped.taddcmd, np.clip(tau, -limit, limit), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(clamped.exceeded, np.abs(tau) > limit)
    flagged = feedforward_batch(FeedForward(plant, theta, delay_cycles=0, torque_threshold=limit,
                                            on_threshold="report"), q, qd, qdd)
    np.testing.assert_allclose(flagged.taddcmd, tau, rtol=1e-12, atol=1e-12)
    assert flagged.n_exceeded.tolist() == (np.abs(tau) > limit).sum(axis=0).tolist()


def test_step_signals_the_error_and_never_raises():
    plant = Plant(make_model("rotary3"))
    ff = FeedForward(plant, THETA, delay_cycles=0, torque_threshold=LIMIT, on_threshold="error")
    st = ff.new_state()
    assert ff.step(st, np.zeros(1), np.zeros(1), np.array([20.0])) == FeedForwardStatus.THRESHOLD_ERROR
    assert st.taddcmd.tolist() == [LIMIT] and st.exceeded.tolist() == [True]     # never beyond the threshold
    assert ff.step(st, np.zeros(1), np.zeros(1), np.array([1.0])) == FeedForwardStatus.OK
    legacy = FeedForward(plant, THETA, delay_cycles=0, torque_threshold=LIMIT)    # clamp=True: "clamp"
    assert legacy.on_threshold == "clamp"
    assert legacy.step(legacy.new_state(), np.zeros(1), np.zeros(1), np.array([20.0])) == \
        FeedForwardStatus.THRESHOLD_EXCEEDED


def test_check_without_threshold_and_bad_mode():
    tau = np.array([[1e9, -1e9]])
    out, ex = check_torque_threshold(tau, None, "error")
    assert not ex.any() and out is not None
    with pytest.raises(dynid.errors.ConfigError, match="on_threshold"):
        check_torque_threshold(tau, [1.0, 1.0], "ignore")


def test_cli_feedforward_errors_like_softmc_by_default(tmp_path, trajectory, capsys):
    prg = write_crank_prg(tmp_path / "IDNT1.PRG")
    path, t, q, qd, qdd = trajectory
    tau = crank_torque(q, qd, qdd)
    first = int(np.nonzero(np.abs(tau) > LIMIT)[0][0])
    out = tmp_path / "ff.csv"
    assert main(["feedforward", str(prg), str(path), "--model", "rotary3", "--delay", "0", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"TorqueThreshold exceeded on axis A1 at sample {first} (t = {t[first]:.6g} s)" in err
    assert f"|Taddcmd| = {abs(tau[first]):.6g} > 5" in err and "(--on-threshold)" in err
    assert not out.exists()                                   # no partial output

    assert main(["feedforward", str(prg), str(path), "--model", "rotary3", "--delay", "0", "--on-threshold", "clamp",
                 "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    data = np.genfromtxt(out, delimiter=",", names=True)
    np.testing.assert_allclose(data["taddcmd1"], np.clip(tau, -LIMIT, LIMIT), rtol=1e-7, atol=1e-9)
    np.testing.assert_array_equal(data["exceeded1"], np.abs(tau) > LIMIT)
    assert summary["torque_threshold"] == [5.0] and summary["on_threshold"] == "clamp"
    assert summary["exceeded_cycles"] == [int((np.abs(tau) > LIMIT).sum())]

    # spec §5: with --delay 0 --no-clamp the additive torque equals the model's torque
    assert main(["feedforward", str(prg), str(path), "--model", "rotary3", "--delay", "0", "--no-clamp",
                 "--out", str(out)]) == 0
    np.testing.assert_allclose(np.genfromtxt(out, delimiter=",", names=True)["taddcmd1"], tau, rtol=1e-7, atol=1e-9)
    assert main(["feedforward", str(prg), str(path), "--model", "rotary3", "--threshold", "100", "--out", str(out)]) == 0
    capsys.readouterr()


def test_cli_monitor_checks_the_threshold(tmp_path, trajectory, capsys):
    prg = write_crank_prg(tmp_path / "IDNT1.PRG")
    _, t, q, qd, qdd = trajectory
    tau = crank_torque(q, qd, qdd)
    log = tmp_path / "log.csv"
    np.savetxt(log, np.column_stack([t, q, tau, q, qd, qdd]), delimiter=",", comments="",
               header="t,q1,tau1,pcmd1,vcmd1,acmd1")
    args = ["monitor", str(prg), str(log), "--model", "rotary3", "--delay", "0", "--temax", "50", "--tef", "1", "--json"]
    assert main(args) == 2
    assert "TorqueThreshold exceeded on axis A1" in capsys.readouterr().err
    assert main(args + ["--on-threshold", "clamp"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["torque_threshold"] == [5.0] and out["threshold_exceeded_cycles"] == [int((np.abs(tau) > LIMIT).sum())]
    # the clamped Taddcmd against the measured torque (unfiltered: TorqueErrorFilter 1): TE = clamp(tau) - tau
    assert out["max_abs_te"][0] == pytest.approx(np.abs(np.clip(tau, -LIMIT, LIMIT) - tau).max(), rel=1e-6)
    assert main(args[:-1] + ["--threshold", "100"]) == 0
    capsys.readouterr()
