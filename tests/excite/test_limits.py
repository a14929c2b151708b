"""Joint limits and the final trajectory check."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.errors import ConfigError, ShapeError
from dynid.excite import JointLimits, LimitViolationError, check_limits
from dynid.models import make_model


def ramp(n=101, T=1.0):
    """q = t^2 on one joint: qd = 2t, qdd = 2 (analytic fixture)."""
    t = np.linspace(0.0, T, n)
    return t, (t**2)[:, None], (2 * t)[:, None], np.full((n, 1), 2.0)


def test_a_trajectory_within_every_limit_passes():
    t, q, qd, qdd = ramp()
    lim = JointLimits.create(1, position=[[-0.1, 1.1]], velocity=[2.5], acceleration=[2.5], torque=[1.0])
    c = check_limits(lim, t, q, qd, qdd, tau=np.full((t.size, 1), 0.5))
    assert c.ok and c.violations == ()
    assert c.usage["velocity"][0] == pytest.approx(2.0 / 2.5)
    assert c.usage["torque"][0] == pytest.approx(0.5)
    assert c.dt == pytest.approx(0.01)


@pytest.mark.parametrize("kw, text", [
    ({"position": [[-0.1, 0.5]]}, "position 1 rad beyond its upper limit 0.5 rad at t = 1.0000 s"),
    ({"velocity": [1.5]}, "velocity 2 rad/s exceeds its limit 1.5 rad/s at t = 1.0000 s"),
    ({"acceleration": [1.0]}, "acceleration 2 rad/s^2 exceeds its limit 1 rad/s^2"),
    ({"torque": [0.25]}, "torque 0.5 N m exceeds its limit 0.25 N m"),
])
def test_each_kind_of_violation_is_reported(kw, text):
    t, q, qd, qdd = ramp()
    c = check_limits(JointLimits.create(1, **kw), t, q, qd, qdd, tau=np.full((t.size, 1), 0.5))
    assert not c.ok
    assert any(text in v for v in c.violations), c.violations
    with pytest.raises(LimitViolationError, match="violates joint limits on the 10 ms check grid"):
        c.raise_if_violated()


def test_linear_joints_use_metres_and_newtons():
    t, q, qd, qdd = ramp()
    c = check_limits(JointLimits.create(1, velocity=[1.0]), t, q, qd, qdd, kinds=["linear"], joint_names=["Z"])
    assert "joint 1 (Z): velocity 2 m/s exceeds its limit 1 m/s" in c.violations[0]


def test_command_line_limits_override_the_configuration():
    cfg = JointLimits.create(2, position=[[-1, 1], [-2, 2]], velocity=[1.0, 2.0])
    cli = JointLimits.create(2, velocity=[np.nan, 5.0], torque=[3.0, np.nan])
    lim = cfg.override(cli)
    np.testing.assert_array_equal(lim.velocity, [1.0, 5.0])
    np.testing.assert_array_equal(lim.torque, [3.0, np.inf])
    np.testing.assert_array_equal(lim.position, [[-1, 1], [-2, 2]])
    box = lim.intersect_position([-0.5, -3.0], [0.5, 1.0])
    np.testing.assert_array_equal(box.position, [[-0.5, 0.5], [-2.0, 1.0]])


def test_limits_from_a_model_configuration():
    m = make_model("rotary1", {"position_limits": [[-2.0, 2.0]], "velocity_limits": [3.0], "torque_limits": [10.0]})
    lim = JointLimits.from_model(m)
    assert lim.to_dict() == {"position": [[-2.0, 2.0]], "velocity": [3.0], "acceleration": [None], "torque": [10.0]}


@pytest.mark.parametrize("kw, err", [
    ({"position": [[1.0, -1.0]]}, ConfigError),
    ({"velocity": [-1.0]}, ConfigError),
    ({"velocity": [1.0, 2.0]}, ShapeError),
    ({"position": [1.0, 2.0]}, ShapeError),
])
def test_bad_limits_are_rejected(kw, err):
    with pytest.raises(err):
        JointLimits.create(1, **kw)
