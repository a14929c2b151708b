"""The one friction evaluator: it equals the fit's regressor columns for every term, on one sample and on
many, allocates nothing per cycle, and the runtime uses it (coupled motors included)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dynid.models import Plant, make_model
from dynid.models.base import Joint
from dynid.models.friction import FRICTION_TERMS, MOTOR_TERMS, FrictionModel
from dynid.models.transmission import Transmission
from dynid.runtime import FeedForward, feedforward_batch

from ..runtime._alloc import worst_step_transient

JOINT_TERMS = [t for t in FRICTION_TERMS if t not in MOTOR_TERMS]
N_TX40 = (32.0, 32.0, 45.0, -48.0, 45.0, 32.0)
DH6 = [{"a": a, "alpha": al, "d": d} for a, al, d in [(0, 1.5708, 0.3), (0.4, 0, 0), (0.05, 1.5708, 0), (0, -1.5708, 0.3), (0, 1.5708, 0), (0, 0, 0.1)]]


def _specs():
    """Every per-joint term alone, the richest legal combination, and each with the coupled motors' terms."""
    singles = [(t,) for t in JOINT_TERMS]
    rich = ("viscous", "coulomb_asym", "offset", "stribeck", "armature")
    combos = singles + [rich, ("viscous", "coulomb", "offset")]
    out = []
    for c in combos:
        out.append("+".join(c))
        out.append("+".join(c + MOTOR_TERMS))
    return out


def _friction(spec: str, n: int = 6) -> FrictionModel:
    joints = [Joint(f"A{j + 1}", "rotary") for j in range(n)]
    tr = Transmission(N_TX40[:n], ((5, 4, 32.0),), position="motor", torque="motor")
    return FrictionModel(spec, joints, stribeck_velocity=0.2, transmission=tr)


@pytest.mark.parametrize("spec", _specs())
def test_evaluator_equals_the_regressor_columns(spec, rng):
    fr = _friction(spec)
    theta = rng.uniform(-2.0, 2.0, fr.n_params)
    qd = rng.normal(size=(300, 6))
    qd[::17] = 0.0                                 # rest: sign 0
    qdd = rng.normal(size=(300, 6))
    fc = fr.coefficients(theta)
    expected = fr.columns(qd, qdd) @ theta
    np.testing.assert_allclose(fc.torque(qd, qdd), expected, rtol=1e-12, atol=1e-12)
    # a replacement sign (the conditioning's filtered sign) reaches both in the same way
    s = np.tanh(qd / 0.3)
    ms = np.tanh(fc.motor_velocities(qd) / 0.3)
    np.testing.assert_allclose(fc.torque(qd, qdd, s, ms), fr.columns(qd, qdd, s, ms) @ theta, rtol=1e-12, atol=1e-12)
    # one sample at a time (the per-cycle path, its own buffers) equals the batch
    one = np.zeros(6)
    for k in (0, 1, 17, 299):
        one[:] = 0.0
        fc.add_into(qd[k], qdd[k], np.sign(qd[k]), one)
        np.testing.assert_allclose(one, expected[k], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("spec", ["viscous+coulomb+offset+armature", "viscous+coulomb_asym+stribeck+" + "+".join(MOTOR_TERMS)])
def test_per_cycle_evaluation_allocates_nothing(spec, rng):
    fc = _friction(spec).coefficients(rng.uniform(0.1, 1.0, _friction(spec).n_params))
    out, s = np.zeros(6), np.empty(6)

    def step(qd, qdd):
        fc.sign_into(qd, s)
        fc.add_into(qd, qdd, s, out)

    cycles = [(rng.normal(size=6), rng.normal(size=6)) for _ in range(30)]
    worst = worst_step_transient(step, cycles)
    assert worst < 160, worst   # below one (6,) float array (160 bytes): only the interpreter's call frames


def test_actuator_inertia_is_the_armature_columns(rng):
    fr = _friction("viscous+armature+" + "+".join(MOTOR_TERMS))
    theta = rng.uniform(0.1, 1.0, fr.n_params)
    fc = fr.coefficients(theta)
    qdd = rng.normal(size=(50, 6))
    zero = np.zeros_like(qdd)
    np.testing.assert_allclose(qdd @ fc.inertia().T, fr.columns(zero, qdd) @ theta, rtol=1e-12, atol=1e-12)


def test_plant_torque_uses_the_evaluator_with_conditioned_signs(rng):
    """Plant.torque = rigid body + evaluator; the conditioning's extra sign columns feed the coupled motors."""
    cfg = {"friction": "viscous+coulomb+offset+" + "+".join(MOTOR_TERMS),
           "transmission": {"gear_ratios": list(N_TX40), "coupling": [[6, 5, 32.0]], "recorded": "joint"}}
    plant = Plant(make_model("serial", {**cfg, "dh": DH6}))
    theta = rng.uniform(0.1, 1.0, plant.n_params)
    q, qd, qdd = (rng.normal(size=(40, 6)) for _ in range(3))
    sign = np.concatenate([np.tanh(qd), np.tanh(plant.friction.motor_velocities(qd))], axis=1)
    Y = plant.regressor(q, qd, qdd, sign=sign)
    np.testing.assert_allclose(plant.torque(theta, q, qd, qdd, sign=sign), Y @ theta + plant.offset(q, qd, qdd),
                               rtol=1e-10, atol=1e-10)


def test_feedforward_with_a_coupled_wrist_motor_equals_the_plant(rng):
    """0.1.0 ended here in 'cannot reshape array of size 26 into shape (6,4)'."""
    cfg = {"friction": "viscous+coulomb+offset+motor_viscous+motor_coulomb",
           "transmission": {"gear_ratios": list(N_TX40), "coupling": [[6, 5, 32.0]], "recorded": "joint"}}
    plant = Plant(make_model("serial", {**cfg, "dh": DH6}))
    assert plant.friction.n_params == 6 * 3 + 2
    theta = rng.uniform(0.1, 1.0, plant.n_params)
    ff = FeedForward(plant, theta, delay_cycles=0, clamp=False)
    q, qd, qdd = (rng.normal(size=(25, 6)) for _ in range(3))
    st = ff.new_state()
    stepped = np.array([(ff.step(st, q[k], qd[k], qdd[k]), st.taddcmd.copy())[1] for k in range(25)])
    expected = plant.torque(theta, q, qd, qdd)
    np.testing.assert_allclose(stepped, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(feedforward_batch(ff, q, qd, qdd).taddcmd, expected, rtol=1e-12, atol=1e-12)


def test_every_term_pair_builds(rng):
    """Terms combine freely (except coulomb with coulomb_asym), and the evaluator follows."""
    for a, b in itertools.combinations(JOINT_TERMS, 2):
        if {a, b} == {"coulomb", "coulomb_asym"}:
            continue
        fr = _friction(f"{a}+{b}", n=6)
        theta = rng.normal(size=fr.n_params)
        qd, qdd = rng.normal(size=(10, 6)), rng.normal(size=(10, 6))
        np.testing.assert_allclose(fr.coefficients(theta).torque(qd, qdd), fr.columns(qd, qdd) @ theta, atol=1e-12)


@pytest.mark.parametrize("spec", _specs())
def test_joint_columns_are_the_blocks_of_the_regressor_columns(spec, rng):
    """The compact per-joint columns the selection builds its Gram matrices from are the entries of the full
    columns, joint ``j``'s parameter ``i`` at ``j * n_per_joint + i`` of row ``j`` (all else zero but the motors')."""
    fc = _friction(spec)
    qd, qdd = rng.normal(size=(50, 6)), rng.normal(size=(50, 6))
    sign = np.tanh(qd / 0.1)
    full = fc.columns(qd, qdd, sign)
    compact = fc.joint_columns(qd, qdd, sign)
    k = fc.n_per_joint
    assert compact.shape == (50, 6, k)
    for j in range(6):
        np.testing.assert_array_equal(full[:, j, j * k:(j + 1) * k], compact[:, j])
        others = np.delete(full[:, j, :6 * k], np.s_[j * k:(j + 1) * k], axis=1)
        assert not others.any()
    np.testing.assert_array_equal(fc.joint_columns(qd, qdd), fc.joint_columns(qd, qdd, np.sign(qd)))
