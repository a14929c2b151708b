"""Feed-forward runtime object: delay line, threshold check, batch form, allocation-free step."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynid.cli.main import main
from dynid.errors import ConfigError
from dynid.models import Plant, make_model
from dynid.runtime import FeedForward, FeedForwardStatus, feedforward_batch

from ._alloc import worst_step_transient

ROT3 = [0.5, 0.0, 4.0, 0.0, 0.1, 0.3]          # I, L^2, MgA, gL, Fv, Fc


@pytest.fixture(scope="module")
def puma():
    plant = Plant(make_model("puma", {"friction": "viscous+coulomb+armature"}))
    theta = np.concatenate([plant.model.example_parameters(), np.tile([3.0, 4.0, 0.3], 6)])
    return plant, theta


def _run_steps(ff, P, V, A, prefill=None):
    st_ = ff.new_state(prefill)
    out, comp, status = [], [], []
    for k in range(P.shape[0]):
        status.append(ff.step(st_, P[k], V[k], A[k]))
        out.append(st_.taddcmd.copy())
        comp.append(st_.computed.copy())
    return np.array(out), np.array(comp), status


@given(delay=st.integers(0, 7), seed=st.integers(0, 2**16))
@settings(max_examples=25, deadline=None)
def test_delay_line_shifts_by_exactly_the_delay(delay, seed):
    """Output at cycle k is the value computed at cycle k - delay; the first `delay` cycles send the prefill."""
    rng = np.random.default_rng(seed)
    plant = Plant(make_model("rotary3"))
    ff = FeedForward(plant, ROT3, delay_cycles=delay)
    P, V, A = rng.normal(size=(3, 30, 1))
    out, comp, _ = _run_steps(ff, P, V, A, prefill=[7.0])
    np.testing.assert_array_equal(out[delay:], comp[: 30 - delay])
    np.testing.assert_array_equal(out[:delay], 7.0)
    # the computed value is the model: I·qdd - MgA·sin(q) + Fv·qd + Fc·sign(qd)
    expect = 0.5 * A[:, 0] - 4.0 * np.sin(P[:, 0]) + 0.1 * V[:, 0] + 0.3 * np.sign(V[:, 0])
    np.testing.assert_allclose(comp[:, 0], expect, rtol=1e-12, atol=1e-12)


def test_step_equals_batch_and_the_model(puma, rng):
    plant, theta = puma
    ff = FeedForward(plant, theta, delay_cycles=3, torque_threshold=[80, 150, 60, 15, 15, 15])
    q, qd, qdd = plant.model.sample_states(rng, 200)
    out, comp, status = _run_steps(ff, q, qd, qdd)
    batch = feedforward_batch(ff, q, qd, qdd)
    np.testing.assert_allclose(out, batch.taddcmd, rtol=0, atol=1e-9)
    np.testing.assert_allclose(comp, batch.computed, rtol=0, atol=1e-9)
    exceeded = np.array([s == FeedForwardStatus.THRESHOLD_EXCEEDED for s in status])
    np.testing.assert_array_equal(exceeded, batch.exceeded.any(axis=1))
    unclamped = plant.torque(theta, q, qd, qdd)
    ok = ~batch.exceeded
    np.testing.assert_allclose(comp[ok], unclamped[ok], atol=1e-9)


def test_threshold_is_reported_and_clamped_not_raised():
    plant = Plant(make_model("rotary1"))
    ff = FeedForward(plant, [2.0, 0.0, 0.0], delay_cycles=0, torque_threshold=5.0)
    st_ = ff.new_state()
    assert ff.step(st_, np.zeros(1), np.zeros(1), np.array([1.0])) == FeedForwardStatus.OK
    assert st_.taddcmd[0] == 2.0
    assert ff.step(st_, np.zeros(1), np.zeros(1), np.array([-4.0])) == FeedForwardStatus.THRESHOLD_EXCEEDED
    assert st_.exceeded.tolist() == [True] and st_.taddcmd[0] == -5.0
    noclamp = FeedForward(plant, [2.0, 0.0, 0.0], delay_cycles=0, torque_threshold=5.0, clamp=False)
    s2 = noclamp.new_state()
    assert noclamp.step(s2, np.zeros(1), np.zeros(1), np.array([-4.0])) == FeedForwardStatus.THRESHOLD_EXCEEDED
    assert s2.taddcmd[0] == -8.0


def test_invalid_input_repeats_the_last_value():
    plant = Plant(make_model("rotary1"))
    ff = FeedForward(plant, [2.0, 0.0, 0.0], delay_cycles=1)
    st_ = ff.new_state()
    ff.step(st_, np.zeros(1), np.zeros(1), np.array([1.5]))
    assert ff.step(st_, np.zeros(1), np.array([np.nan]), np.zeros(1)) == FeedForwardStatus.INVALID_INPUT
    assert st_.computed[0] == 3.0 and st_.taddcmd[0] == 3.0
    ff.step(st_, np.zeros(1), np.zeros(1), np.zeros(1))
    assert st_.taddcmd[0] == 3.0                                        # the repeated value, one cycle later


def test_payload_is_included():
    """scara4: a payload mass adds M_p·zdd + g·M_p on axis 3 (models.md §4)."""
    plant = Plant(make_model("scara4", {"L1": 0.3, "L2": 0.25}))
    p = np.asarray(plant.model.example_parameters())
    theta = np.concatenate([p, np.zeros(8)])

    class Ident:  # the two attributes FeedForward.from_result reads
        pass
    ident = Ident()
    ident.plant, ident.theta = plant, theta
    ff0 = FeedForward.from_result(ident, delay_cycles=0)
    ff2 = FeedForward.from_result(ident, delay_cycles=0, payload_mass=2.0)
    q = np.array([0.1, 0.5, 0.05, 0.0])
    acc = np.array([0.0, 0.0, 3.0, 0.0])
    d = ff2.torque(q, np.zeros(4), acc) - ff0.torque(q, np.zeros(4), acc)
    assert d[2] == pytest.approx(2.0 * (3.0 + plant.model.gravity))


def test_bad_configuration():
    plant = Plant(make_model("rotary1"))
    with pytest.raises(ConfigError, match="AdditiveTorqueDelay"):
        FeedForward(plant, [1.0, 0.0, 0.0], delay_cycles=-1)
    with pytest.raises(ConfigError, match="3 values"):
        FeedForward(plant, [1.0, 0.0], delay_cycles=3)
    with pytest.raises(ConfigError, match="positive"):
        FeedForward(plant, [1.0, 0.0, 0.0], torque_threshold=0.0)


def test_step_allocates_no_arrays(puma, rng):
    """Every intermediate array of the compiled PUMA path has 6 to 168 floats; a temporary among them would
    show in the transient peak. What remains are Python's bound-method and int objects (< 400 B)."""
    plant, theta = puma
    ff = FeedForward(plant, theta, delay_cycles=3, torque_threshold=[1, 150, 60, 15, 15, 15])
    st_ = ff.new_state()
    q, qd, qdd = plant.model.sample_states(rng, 50)
    worst = worst_step_transient(ff.step, [(st_, q[k], qd[k], qdd[k]) for k in range(50)])
    assert worst < 400, worst


def test_cli_feedforward_batch(tmp_path, capsys):
    """`dynid feedforward RESULT.json TRAJ.csv --delay 3 --out FILE` shifts the model torque by 3 rows."""
    from dynid.identification import identify
    from dynid.io.outputs import write_outputs
    from dynid.sim import SineMotion, simulate

    plant = Plant(make_model("rotary3"))
    rec = simulate(plant, [0.05, 0.0, 2.0, 0.0, 0.02, 0.1], SineMotion([-1.0], [1.0], [0.8], record_s=6.0), seed=1)
    ident = identify(rec, plant)
    write_outputs(ident, tmp_path / "id")
    t = np.arange(0, 2.0, 1e-3)
    q = 0.5 * np.sin(2 * np.pi * t)
    qd = 0.5 * 2 * np.pi * np.cos(2 * np.pi * t)
    qdd = -0.5 * (2 * np.pi) ** 2 * np.sin(2 * np.pi * t)
    traj = tmp_path / "traj.csv"
    np.savetxt(traj, np.column_stack([t, q, qd, qdd]), delimiter=",", header="t,q1,dq1,ddq1", comments="")
    out = tmp_path / "taddcmd.csv"
    assert main(["feedforward", str(tmp_path / "id" / "result.json"), str(traj), "--delay", "3", "--out", str(out),
                 "--torque-factor", "100", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["delay_cycles"] == 3 and summary["rows"] == t.size
    data = np.genfromtxt(out, delimiter=",", names=True)
    model = ident.plant.torque(ident.theta, q[:, None], qd[:, None], qdd[:, None])[:, 0]
    np.testing.assert_allclose(data["taddcmd1"][3:], model[:-3], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(data["taddcmd1"][:3], model[0] - ident.theta[4] * qd[0] - ident.theta[5], atol=1e-7)
    np.testing.assert_array_equal(data["permille1"], np.rint(100 * data["taddcmd1"]))
