"""End to end with model ``serial``: ``dynid identify --urdf`` then ``dynid predict`` on another motion.

The robot (Stäubli TX40 URDF) is simulated by an independent engine, Pinocchio's ``rnea``, plus
viscous and Coulomb joint friction and 0.5 % Gaussian torque noise; the model is identified from
one multi-sine motion and must predict a different one within 3 % NRMSE per joint.
"""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import numpy as np
import pytest

from dynid.cli.main import main
from dynid.io.readers import write_recording_csv
from dynid.recording import Recording

pin = pytest.importorskip("pinocchio")

G = 9.80665
FV = np.array([8.0, 5.5, 2.0, 1.1, 1.9, 0.65])      # N m s/rad, of the TX40 README's order
FC = np.array([7.0, 8.0, 6.0, 2.5, 3.0, 0.3])       # N m
NOISE = 0.005


def multisine(lo, hi, base_hz, harmonics, duration_s, rate_hz, seed):
    """Periodic multi-sine q(t) inside [lo, hi] (60 % of the range), with analytic qd and qdd."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, duration_s, 1.0 / rate_hz)
    n = lo.size
    w = 2 * np.pi * base_hz * np.asarray(harmonics, dtype=float)
    amp = rng.uniform(0.5, 1.0, (n, w.size)) / w      # larger amplitude at low frequency
    amp *= (0.3 * (hi - lo) / amp.sum(axis=1))[:, None]
    phase = rng.uniform(0, 2 * np.pi, (n, w.size))
    arg = t[:, None, None] * w[None, None, :] + phase[None]
    centre = 0.5 * (lo + hi)
    q = centre + np.sum(amp * np.sin(arg), axis=2)
    qd = np.sum(amp * w * np.cos(arg), axis=2)
    qdd = -np.sum(amp * w**2 * np.sin(arg), axis=2)
    return t, q, qd, qdd


def simulate_urdf(urdf, seed, base_hz, harmonics, duration_s=20.0, rate_hz=500.0, fv=FV, fc=FC):
    model = pin.buildModelFromUrdf(str(urdf))
    model.gravity.linear = np.array([0.0, 0.0, -G])
    data = model.createData()
    lo, hi = model.lowerPositionLimit.copy(), model.upperPositionLimit.copy()
    t, q, qd, qdd = multisine(lo, hi, base_hz, harmonics, duration_s, rate_hz, seed)
    tau = np.array([pin.rnea(model, data, q[k], qd[k], qdd[k]) for k in range(t.size)])
    tau += fv * qd + fc * np.sign(qd)
    rng = np.random.default_rng(seed + 100)
    tau += NOISE * np.sqrt(np.mean(tau**2, axis=0)) * rng.standard_normal(tau.shape)
    return Recording(t, q, tau)


def identify_then_predict(urdf, tmp_path, capsys, seed, fv=FV, fc=FC):
    """Simulate an identification motion and a different validation motion, ``dynid identify`` the first,
    ``dynid predict`` the second; returns (result.json, validation NRMSE per joint). Checks the exit
    codes, ``success`` and the identified friction (5 %)."""
    sim = dict(fv=fv, fc=fc)
    write_recording_csv(tmp_path / "id.csv", simulate_urdf(urdf, seed=seed, base_hz=0.1, harmonics=[1, 2, 3, 5, 7, 9], **sim))
    write_recording_csv(tmp_path / "val.csv", simulate_urdf(urdf, seed=seed + 1, base_hz=0.125, harmonics=[1, 3, 4, 6, 8], **sim))
    code = main(["identify", str(tmp_path / "id.csv"), "--model", "serial", "--urdf", str(urdf),
                 "--out", str(tmp_path / "out"), "--no-report", "--json", "--quiet"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["success"] is True
    np.testing.assert_allclose(result["friction"]["viscous"], fv, rtol=0.05)
    np.testing.assert_allclose(result["friction"]["coulomb"], fc, rtol=0.05)
    code = main(["predict", str(tmp_path / "out" / "result.json"), str(tmp_path / "val.csv"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    return result, np.array(report["validation"]["nrmse_rms"])


def test_identify_then_predict_another_motion(real_data, tmp_path, capsys):
    result, nrmse = identify_then_predict(real_data / "staubli_tx40_figaroh/tx40.urdf", tmp_path, capsys, seed=1)
    assert result["config"]["chain"]["links"][0]["name"] == "link_1"     # rebuildable without the URDF
    assert result["base_parameters"]["count"] == 48                      # 36 inertial + 12 friction
    assert nrmse.shape == (6,) and np.all(nrmse <= 0.03), nrmse


UR5_URDF = Path(__file__).resolve().parents[1] / "data" / "ur5.urdf"
UR5_FV = np.array([3.0, 3.0, 2.0, 0.6, 0.6, 0.3])
UR5_FC = np.array([4.0, 4.0, 3.0, 1.2, 1.0, 0.5])


def test_ur5_urdf_with_ros_tags_identify_then_predict(tmp_path, capsys):
    """A UR5 URDF as ROS packages ship it (world link, package:// meshes that are absent,
    transmissions, Gazebo and safety tags, ±2π limits) simulated by Pinocchio with joint friction
    and 0.5 % noise: identified from one motion, it predicts another within 3 % NRMSE per joint."""
    result, nrmse = identify_then_predict(UR5_URDF, tmp_path, capsys, seed=4, fv=UR5_FV, fc=UR5_FC)
    assert result["config"]["chain"]["links"][0]["name"] == "shoulder_link"    # world link and fixed joint merged
    assert nrmse.shape == (6,) and np.all(nrmse <= 0.03), nrmse


def test_standard_parameters_keep_the_urdf_values_where_the_data_are_silent(real_data):
    from dynid.identification import identify
    from dynid.models import Plant, make_model

    urdf = real_data / "staubli_tx40_figaroh/tx40.urdf"
    plant = Plant(make_model("serial", urdf=urdf))
    ident = identify(simulate_urdf(urdf, seed=3, base_hz=0.1, harmonics=[1, 2, 3, 5, 7], duration_s=10.0), plant)
    theta = ident.theta  # identify() holds what the data cannot identify at the model's prior
    prior = plant.model.prior_parameters()
    dep = ident.base.dependent[ident.base.dependent < plant.n_model]
    np.testing.assert_array_equal(theta[dep], prior[dep])
    np.testing.assert_allclose(ident.base.base_values(theta), ident.base_values, rtol=1e-9, atol=1e-9)
    # the data were simulated with the URDF values: every standard parameter comes back close to them
    assert np.abs(theta[: plant.n_model] - prior).max() < 0.05 * np.abs(prior).max()
    zero_held = ident.base.to_full(ident.base_values, np.zeros(ident.base.dependent.size))
    q, qd, qdd = ident.cond.q[:200], ident.cond.qd[:200], ident.cond.qdd[:200]
    np.testing.assert_allclose(plant.torque(theta, q, qd, qdd), plant.torque(zero_held, q, qd, qdd), rtol=1e-8, atol=1e-8)


def test_serial_docstring_examples():
    import dynid.models.serial as serial

    assert doctest.testmod(serial, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE).failed == 0
