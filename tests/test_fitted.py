"""FittedModel, the one identified-model type, and the Python API of spec/interfaces.md §6.

- every friction term (offset, Stribeck with its velocity, asymmetric Coulomb, armature, coupled motors)
  and the transmission survive save → load exactly, also when the friction model was given as an object
  rather than in the configuration (0.1.0 lost the offset there);
- the API round trip on a SCARA with a constant torque offset: Identifier.fit → predict → save → load →
  ``dynid predict`` all agree (1e-9; CSV precision for the CLI);
- ``dynid feedforward --delay 0 --no-clamp`` on the Stäubli TX40 identified with its coupled wrist motor
  equals ``FittedModel.torque``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid
from dynid import FittedModel, Identifier, load
from dynid.cli.main import main
from dynid.errors import FileFormatError
from dynid.io.readers import write_recording_csv
from dynid.models import Plant, make_model
from dynid.models.friction import FrictionModel
from dynid.recording import Recording

TX40_N = [32.0, 32.0, 45.0, -48.0, 45.0, 32.0]
TX40_TRANSMISSION = {"gear_ratios": TX40_N, "coupling": [[6, 5, 32.0]],
                     "offsets": [0.0, -np.pi / 2, np.pi / 2, 0.0, 0.0, 0.0], "recorded": "motor"}
OFFSET_FRICTION = "viscous+coulomb+offset"


def multisine(lo, hi, base_hz, harmonics, duration_s, rate_hz, seed):
    """Positions, velocities, accelerations ``(N, n)`` of a sum of sines inside ``[lo, hi]``."""
    rng = np.random.default_rng(seed)
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    t = np.arange(0.0, duration_s, 1.0 / rate_hz)
    w = 2 * np.pi * base_hz * np.asarray(harmonics, float)
    ph = rng.uniform(0, 2 * np.pi, (lo.size, w.size))
    amp = 0.45 * (hi - lo)[:, None] / w.size * rng.uniform(0.6, 1.0, (lo.size, w.size))
    arg = w[None, None, :] * t[:, None, None] + ph[None]
    q = 0.5 * (lo + hi) + np.sum(amp * np.sin(arg), axis=2)
    qd = np.sum(amp * w * np.cos(arg), axis=2)
    qdd = -np.sum(amp * w**2 * np.sin(arg), axis=2)
    return t, q, qd, qdd


def _states(rng, n, N=64):
    return rng.uniform(-1.5, 1.5, (N, n)), rng.normal(size=(N, n)), rng.normal(size=(N, n))


# ------------------------------------------------------------------------------------- save / load

RICH = ["viscous+coulomb+offset", "viscous+coulomb_asym+offset+armature", "viscous+coulomb+stribeck",
        "viscous+coulomb+offset+armature+motor_viscous+motor_coulomb+motor_armature"]


@pytest.mark.parametrize("spec", RICH)
def test_every_friction_term_survives_save_and_load(spec, tmp_path, rng):
    """The friction model given as an object (not in the configuration), a non-default Stribeck velocity, a
    coupled wrist motor: the loaded model's torques are bit-identical."""
    cfg = {"dh": [{"a": a, "alpha": al, "d": d} for a, al, d in
                  [(0, 1.5708, 0.3), (0.4, 0, 0), (0.05, 1.5708, 0), (0, -1.5708, 0.3), (0, 1.5708, 0), (0, 0, 0.1)]],
           "transmission": {**TX40_TRANSMISSION, "recorded": "joint"}}
    model = make_model("serial", cfg)                           # config friction: softMC's viscous+coulomb
    plant = Plant(model, FrictionModel(spec, model.joints, stribeck_velocity=0.37,
                                       transmission=model.config.transmission))
    theta = rng.uniform(0.05, 2.0, plant.n_params)
    fm = FittedModel(plant, theta, std=theta * 0.01)
    same = load(fm.save(tmp_path))
    assert same.friction.spec == plant.friction.spec and same.friction.stribeck_velocity == 0.37
    assert same.param_names == plant.param_names
    q, dq, ddq = _states(rng, 6)
    np.testing.assert_array_equal(same.torque(q, dq, ddq), fm.torque(q, dq, ddq))
    np.testing.assert_array_equal(same.std, fm.std)
    assert same.model.config.transmission.to_dict() == model.config.transmission.to_dict()
    # and the file written again is the same file
    d1 = json.loads((tmp_path / "result.json").read_text())
    assert same.to_dict() == {**d1, "dynid_version": dynid.__version__}


def test_identified_offset_survives_when_the_friction_is_not_in_the_config(tmp_path, rng):
    """0.1.0: an identification with friction viscous+coulomb+offset passed as an object lost the offset
    on write -> load (the loader rebuilt friction from config.friction)."""
    model = make_model("rotary3")
    plant = Plant(model, FrictionModel(OFFSET_FRICTION, model.joints))
    theta = [0.5, 0.0, 4.0, 0.0, 0.1, 0.3, 0.25]                    # I, L^2, MgA, gL, Fv, Fc, offset
    t, q, qd, qdd = multisine([-2.0], [2.0], 0.3, [1, 2, 3], 20.0, 500.0, seed=3)
    tau = plant.torque(theta, q, qd, qdd) + 0.002 * rng.standard_normal(q.shape)
    res = dynid.identify(Recording(t, q, tau), plant)
    assert res.model.values["A1.offset"] == pytest.approx(0.25, rel=0.02)
    from dynid.io.outputs import write_outputs

    write_outputs(res, tmp_path)
    same = load(tmp_path)
    assert same.friction.spec == OFFSET_FRICTION
    q2, dq2, ddq2 = _states(rng, 1)
    np.testing.assert_array_equal(same.torque(q2, dq2, ddq2), res.model.torque(q2, dq2, ddq2))


def test_load_names_the_file_and_what_is_wrong(tmp_path):
    with pytest.raises(FileFormatError, match="no such file"):
        load(tmp_path / "missing.json")
    fm = FittedModel(Plant(make_model("rotary3")), [0.5, 0.0, 4.0, 0.0, 0.1, 0.3])
    d = fm.to_dict()
    d["friction"]["names"] = ["A1.viscous"]
    (tmp_path / "result.json").write_text(json.dumps(d))
    with pytest.raises(FileFormatError, match=r"result.json: friction names do not match"):
        load(tmp_path)
    assert main(["predict", str(tmp_path / "result.json"), str(tmp_path / "result.json")]) == 2


# ------------------------------------------------------------------------------------- the API round trip

SCARA = {"L1": 0.325, "L2": 0.275}


def _scara_recordings(tmp_path):
    """A SCARA whose drives carry a constant torque offset, at 0.5 % noise: identification and validation runs."""
    model = make_model("scara4", {**SCARA, "friction": OFFSET_FRICTION})
    plant = Plant(model)
    fr = np.array([[2.0, 3.0, -1.2], [1.5, 2.2, 0.8], [40.0, 15.0, -20.0], [0.2, 0.3, 0.05]]).ravel()
    theta = np.concatenate([model.example_parameters(), fr])
    lo, hi = [-2.0, -2.2, -0.15, -2.5], [2.0, 2.2, -0.01, 2.5]
    rng = np.random.default_rng(11)
    for name, seed, base in (("id", 1, 0.1), ("val", 2, 0.13)):
        t, q, qd, qdd = multisine(lo, hi, base, [1, 2, 3, 5, 7], 25.0, 500.0, seed)
        tau = plant.torque(theta, q, qd, qdd)
        tau = tau + 0.005 * np.sqrt(np.mean(tau**2, axis=0)) * rng.standard_normal(tau.shape)
        write_recording_csv(tmp_path / f"{name}.csv", Recording(t, q, tau))
    return theta, plant


def test_api_round_trip_on_a_scara_with_a_torque_offset(tmp_path, capsys, rng):
    theta, plant = _scara_recordings(tmp_path)
    rec = dynid.read_recording(tmp_path / "id.csv")                    # joints from the columns
    assert rec.n_joints == 4
    est = Identifier("scara4", config=SCARA, friction=OFFSET_FRICTION)
    assert est.fit(rec) is est
    assert est.metrics_["success"] is True and est.metrics_ == est.model_.metrics
    got = np.array([est.model_.values[f"{j}.offset"] for j in ("A1", "A2", "A4")])
    # (axis 3's offset is the same column as its gravity load m·g: only their sum is identifiable)
    np.testing.assert_allclose(got, theta[plant.n_model + 2::3][[0, 1, 3]], rtol=0.05)
    p = est.predict(tmp_path / "val.csv")
    assert p.tau.shape == (p.t.size, 4)
    assert np.all(p.nrmse() < 0.02), p.nrmse()
    # save -> load: identical torques, every term kept
    est.model_.save(tmp_path / "api")
    same = dynid.load(tmp_path / "api")
    q, dq, ddq = _states(rng, 4)
    np.testing.assert_allclose(same.torque(q, dq, ddq), est.model_.torque(q, dq, ddq), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(same.predict(dynid.read_recording(tmp_path / "val.csv")).tau, p.tau,
                               rtol=1e-12, atol=1e-12)
    # the command line, a thin layer over the same API, writes what the API computes
    assert main(["identify", str(tmp_path / "id.csv"), "--model", "scara4", "--config", _json(tmp_path, SCARA),
                 "--friction", OFFSET_FRICTION, "--out", str(tmp_path / "cli"), "--no-report", "--quiet"]) == 0
    capsys.readouterr()
    cli = dynid.load(tmp_path / "cli")
    np.testing.assert_allclose(cli.theta, est.model_.theta, rtol=1e-9, atol=1e-12)
    assert main(["predict", str(tmp_path / "cli" / "result.json"), str(tmp_path / "val.csv"),
                 "--out", str(tmp_path / "tau.csv")]) == 0
    written = np.loadtxt(tmp_path / "tau.csv", delimiter=",", skiprows=1)
    np.testing.assert_allclose(written[:, 0], p.t, rtol=1e-8)
    np.testing.assert_allclose(written[:, 1:], p.tau, rtol=2e-8, atol=1e-8 * np.abs(p.tau).max())


def test_identifier_follows_the_scikit_learn_conventions():
    est = Identifier("rotary3", cutoff="auto", estimator="irls")
    assert est.get_params()["cutoff"] == "auto" and est.get_params()["allowed"] == 50.0
    assert est.set_params(allowed=30.0) is est and est.allowed == 30.0
    assert "estimator='irls'" in repr(est)
    with pytest.raises(dynid.ConfigError, match="not fitted"):
        est.predict("x.csv")
    with pytest.raises(dynid.ConfigError, match="no option"):
        est.set_params(cuttoff=3)
    assert est.options().select_cutoff and est.options().allowed_error == 0.3


def _json(tmp_path, data) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return str(path)


# ------------------------------------------------------------------------------------- TX40 feed-forward

def test_tx40_feedforward_with_the_coupled_wrist_motor_equals_the_fitted_model(real_data, tmp_path, capsys):
    """The real TX40 recording (motor side, 5 kHz) identified with the coupled motor's friction terms;
    ``dynid feedforward`` (the per-cycle runtime) of a joint trajectory equals FittedModel.torque."""
    d = real_data / "staubli_tx40_figaroh"
    qm = np.loadtxt(d / "pos_read_data.csv", delimiter=",", skiprows=1)
    taum = np.loadtxt(d / "curr_data.csv", delimiter=",", skiprows=1)
    n = qm.shape[0] // 2                                               # half the record keeps the test quick
    write_recording_csv(tmp_path / "tx40.csv", Recording(np.arange(n) * 2e-4, qm[:n], taum[:n]))
    spec = OFFSET_FRICTION + "+motor_viscous+motor_coulomb"
    est = Identifier("serial", urdf=d / "tx40.urdf", config={"transmission": TX40_TRANSMISSION}, friction=spec)
    est.fit(tmp_path / "tx40.csv").write(tmp_path / "out", report=False)
    model = dynid.load(tmp_path / "out")
    assert model.friction.param_names[-2:] == ("motor6.viscous", "motor6.coulomb")
    t, q, qd, qdd = multisine(np.full(6, -1.0), np.full(6, 1.0), 0.2, [1, 2, 3], 2.0, 1000.0, seed=5)
    header = ["t", *(f"q{j}" for j in range(1, 7)), *(f"dq{j}" for j in range(1, 7)), *(f"ddq{j}" for j in range(1, 7))]
    np.savetxt(tmp_path / "traj.csv", np.column_stack([t, q, qd, qdd]), delimiter=",", header=",".join(header),
               comments="", fmt="%.17g")
    assert main(["feedforward", str(tmp_path / "out" / "result.json"), str(tmp_path / "traj.csv"), "--delay", "0",
                 "--no-clamp", "--out", str(tmp_path / "ff.csv")]) == 0
    ff = np.loadtxt(tmp_path / "ff.csv", delimiter=",", skiprows=1)[:, 1:7]
    expected = model.torque(q, qd, qdd)
    np.testing.assert_allclose(ff, expected, rtol=2e-8, atol=1e-8 * np.abs(expected).max())
    # the coupled motor's terms are really in it: without them joint 5 differs
    plain = model.plant.torque(np.r_[model.theta[:-2], 0.0, 0.0], q, qd, qdd)
    assert np.abs(plain[:, 4] - expected[:, 4]).max() > 1e-3


def test_a_motion_without_torque_reads_and_predicts_but_does_not_identify(tmp_path):
    _scara_recordings(tmp_path)
    val = dynid.read_recording(tmp_path / "val.csv")
    motion = Recording(val.t, val.q, source=str(tmp_path / "motion.csv"))
    write_recording_csv(tmp_path / "motion.csv", motion)
    rec = dynid.read_recording(tmp_path / "motion.csv")                 # a motion to predict: no tau columns
    assert rec.tau is None
    est = Identifier("scara4", config=SCARA, friction=OFFSET_FRICTION).fit(tmp_path / "id.csv")
    p = est.predict(rec)
    assert p.measured is None and p.tau.shape[1] == 4
    with pytest.raises(dynid.FileFormatError, match="motion.csv.*tau"):
        Identifier("scara4", config=SCARA).fit(tmp_path / "motion.csv")
    with pytest.raises(dynid.IdentifiabilityError, match="no torque columns"):
        Identifier("scara4", config=SCARA).fit(rec)


def test_json_layout_is_the_same_data_with_scalar_lists_on_one_line():
    import json

    from dynid._json import dumps, jsonable

    data = jsonable({"a": [1.5, float("nan"), 2], "m": np.arange(6.0).reshape(2, 3), "e": {}, "l": [], "u": "µ, \"x\"",
                     "nested": [{"k": [True, None]}, [1, [2, 3]]], "n": np.float64(0.1), "i": np.int64(3)})
    text = dumps(data)
    assert json.loads(text) == json.loads(json.dumps(data, indent=2)) == data
    lines = text.splitlines()
    assert '  "a": [1.5, null, 2],' in lines and '    [0.0, 1.0, 2.0],' in lines   # a row of a matrix per line
    assert '  "e": {},' in lines and '  "l": [],' in lines
    assert text.isascii()                                                       # as json.dumps' default
