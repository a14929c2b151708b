"""The Delta's own limits (``configuration_check``): transmission angles, distance from the parallel
singularity, assembly — what excitation design keeps every sample inside (issue 17, point 1).

Reference: plate positions drawn at random, actuator angles from the reference inverse kinematics
(numerical root finding, tests/models/_delta_reference.py), and the angles recomputed here from the
elbow and plate-joint positions written out from spec/interfaces.md §4.
"""

from __future__ import annotations

import numpy as np
import pytest

from dynid.errors import ShapeError
from dynid.models import make_model, model_class

from ._delta_reference import DeltaRobot, ik_reference

GEO = {"base_radius": 0.2, "platform_radius": 0.05, "upper_arm": 0.35, "forearm": 0.8}
EZ = np.array([0.0, 0.0, 1.0])


def _reference_values(rb: DeltaRobot, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Transmission angles (forearm vs the elbow's path) and 1/|det| of the forearm unit vectors."""
    out = np.empty(4)
    n = []
    for i in range(3):
        phi = 2 * np.pi * i / 3
        u = np.array([np.cos(phi), np.sin(phi), 0.0])
        B = rb.R * u + rb.L_AB * (np.cos(q[i]) * u - np.sin(q[i]) * EZ)
        dB = rb.L_AB * (-np.sin(q[i]) * u - np.cos(q[i]) * EZ)
        f = p + rb.r * u - B
        assert np.linalg.norm(f) == pytest.approx(rb.L_BC, abs=1e-12)       # the reference IK closed the chain
        out[i] = np.arccos(f @ dB / (np.linalg.norm(f) * np.linalg.norm(dB)))
        n.append(f / np.linalg.norm(f))
    out[3] = 1.0 / abs(np.linalg.det(np.array(n)))
    return out


def test_values_match_an_independent_computation():
    rb = DeltaRobot()
    model = make_model("delta3", GEO)
    rng = np.random.default_rng(5)
    P, Q = [], []
    while len(P) < 30:
        rad, a = 0.3 * np.sqrt(rng.uniform()), rng.uniform(0, 2 * np.pi)
        p = np.array([rad * np.cos(a), rad * np.sin(a), rng.uniform(-1.0, -0.45)])
        try:
            Q.append(ik_reference(rb, p))
        except ValueError:
            continue
        P.append(p)
    check = model.configuration_check(np.array(Q))
    ref = np.array([_reference_values(rb, p, q) for p, q in zip(P, Q)])
    np.testing.assert_allclose(check.values, ref, rtol=1e-9)
    np.testing.assert_allclose(check.limits, [np.arccos(0.25)] * 3 + [10.0])
    assert check.units == ("rad", "rad", "rad", "") and len(check.names) == 4


def test_well_conditioned_samples_are_inside_and_a_folded_elbow_or_no_assembly_is_not():
    model = model_class("delta3").example()
    q, _, _ = model.sample_states(np.random.default_rng(2), 200)
    assert np.all(model.configuration_check(q).margins() >= 0)    # what sample_states calls well conditioned
    folded = model.configuration_check([[3.0, 3.0, 3.0]])          # assembles, elbows folded past 90 deg
    assert np.all(np.isfinite(folded.values)) and np.all(folded.margins()[0, :3] < 0)
    short = make_model("delta3", {**GEO, "forearm": 0.45})
    apart = short.configuration_check([[1.2, -0.5, -0.5], [0.9, 0.9, 0.9]])
    assert np.all(np.isinf(apart.values[0])) and np.all(apart.margins()[0] == -np.inf)
    assert np.all(np.isfinite(apart.values[1]))


def test_delta4_checks_the_arms_only_and_shapes_are_validated():
    model = model_class("delta4").example()
    a = model.configuration_check([[0.3, 0.2, 0.4, 0.0]]).values
    b = model.configuration_check([[0.3, 0.2, 0.4, 2.5]]).values
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ShapeError, match="shape"):
        model.configuration_check([[0.3, 0.2, 0.4]])
