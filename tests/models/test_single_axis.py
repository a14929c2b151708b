"""The six softMC single-axis models against independent computations.

References are written here from physical quantities (masses, lengths, g), not from the model
code: the catalogue's equations (spec/models.md §1–2) and, for the vertical crank arm, a numerical
Euler–Lagrange derivation from its kinetic and potential energy.
"""

from __future__ import annotations

import numpy as np
import pytest

from dynid.models import make_model

G = 9.80665


@pytest.fixture
def motion(rng):
    n = 200
    return rng.uniform(-3, 3, (n, 1)), rng.normal(size=(n, 1)), rng.normal(size=(n, 1)) * 5


# physical robot: arm inertia, COM and payload data
I_ARM, M_ARM, A_COM = 0.42, 3.0, 0.35
M_P, I_P, L_P = 1.7, 0.02, 0.55


def test_rotary1(motion):
    q, qd, qdd = motion
    m = make_model("rotary1", {"payload": {"mass": M_P, "inertia": I_P}})
    expected = (I_ARM + I_P) * qdd
    np.testing.assert_allclose(m.torque([I_ARM], q, qd, qdd), expected, rtol=1e-12)


def test_rotary2_horizontal_crank(motion):
    q, qd, qdd = motion
    m = make_model("rotary2", {"payload": {"mass": M_P, "inertia": I_P}})
    expected = (I_ARM + I_P + L_P**2 * M_P) * qdd
    np.testing.assert_allclose(m.torque([I_ARM, L_P**2], q, qd, qdd), expected, rtol=1e-12)


def test_rotary3_matches_euler_lagrange_of_a_vertical_crank(rng):
    """T = ½ (I + I_p + M_p L²) qd², V = (M g A + M_p g L) cos q (crank up at q = 0)."""
    m = make_model("rotary3", {"payload": {"mass": M_P, "inertia": I_P}})
    p = [I_ARM, L_P**2, M_ARM * G * A_COM, G * L_P]
    J = I_ARM + I_P + M_P * L_P**2

    def lagrangian(q, qd):
        return 0.5 * J * qd**2 - (M_ARM * G * A_COM + M_P * G * L_P) * np.cos(q)

    h = 1e-5
    t = np.linspace(0, 2, 41)
    q_t = lambda tt: 1.3 * np.sin(2.1 * tt) + 0.4 * np.cos(3.3 * tt)  # noqa: E731
    qd_t = lambda tt: (q_t(tt + h) - q_t(tt - h)) / (2 * h)  # noqa: E731
    dL_dqd = lambda tt: (lagrangian(q_t(tt), qd_t(tt) + h) - lagrangian(q_t(tt), qd_t(tt) - h)) / (2 * h)  # noqa: E731
    tau_el = ((dL_dqd(t + h) - dL_dqd(t - h)) / (2 * h)
              - (lagrangian(q_t(t) + h, qd_t(t)) - lagrangian(q_t(t) - h, qd_t(t))) / (2 * h))
    q = q_t(t)[:, None]
    qd = qd_t(t)[:, None]
    qdd = ((q_t(t + h) - 2 * q_t(t) + q_t(t - h)) / h**2)[:, None]
    np.testing.assert_allclose(m.torque(p, q, qd, qdd)[:, 0], tau_el, rtol=2e-4, atol=2e-4)


def test_rotary3_catalogue_equation(motion):
    q, qd, qdd = motion
    m = make_model("rotary3", {"payload": {"mass": M_P, "inertia": I_P}})
    p = [I_ARM, L_P**2, M_ARM * G * A_COM, G * L_P]
    expected = (I_ARM + I_P + L_P**2 * M_P) * qdd - (M_ARM * G * A_COM + M_P * G * L_P) * np.sin(q)
    np.testing.assert_allclose(m.torque(p, q, qd, qdd), expected, rtol=1e-12)


def test_linear1(motion):
    _, xd, xdd = motion
    x = xd * 0.1
    m = make_model("linear1", {"payload": {"mass": M_P}})
    np.testing.assert_allclose(m.torque([5.0], x, xd, xdd), (5.0 + M_P) * xdd, rtol=1e-12)


def test_linear2_tilted_axis(motion):
    """F = (M + M_p) xdd + (M + M_p) g cos(alpha), alpha = 35 deg from the vertical."""
    _, xd, xdd = motion
    x = xd * 0.1
    alpha = np.radians(35.0)
    M = 6.5
    m = make_model("linear2", {"payload": {"mass": M_P}})
    p = [M, M * G * np.cos(alpha), G * np.cos(alpha)]
    np.testing.assert_allclose(m.torque(p, x, xd, xdd), (M + M_P) * (xdd + G * np.cos(alpha)), rtol=1e-12)
    assert m.derived(dict(zip(m.param_names, p)))["alpha"]["value"] == pytest.approx(35.0)


def test_linear3_spring(motion):
    """F = (M + M_p)(xdd + g) + K (x − X0)."""
    _, xd, xdd = motion
    x = xd * 0.1
    M, K, X0 = 4.0, 1500.0, 0.03
    m = make_model("linear3", {"payload": {"mass": M_P}})
    expected = (M + M_P) * (xdd + G) + K * (x - X0)
    np.testing.assert_allclose(m.torque([M, K, K * X0], x, xd, xdd), expected, rtol=1e-12)
    assert m.derived({"M": M, "K": K, "K*X0": K * X0})["X0"]["value"] == pytest.approx(X0)


@pytest.mark.parametrize("name,number", [("rotary1", 1), ("rotary2", 2), ("rotary3", 3),
                                         ("linear1", 1), ("linear2", 2), ("linear3", 3)])
def test_softmc_numbering(name, number):
    m = make_model(name)
    assert m.softmc_model == number
    assert [p.slot for p in m.parameters] == list(range(1, m.n_params + 1))
    assert m.joints[0].kind == ("rotary" if name.startswith("rotary") else "linear")


def test_payload_columns_vanish_without_payload(motion):
    q, qd, qdd = motion
    Y = make_model("rotary3").regressor(q, qd, qdd)
    assert np.all(Y[:, :, 1] == 0) and np.all(Y[:, :, 3] == 0)
    Y = make_model("linear2").regressor(q, qd, qdd)
    assert np.all(Y[:, :, 2] == 0)
