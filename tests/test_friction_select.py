"""Friction model selection by validation error (friction: auto)."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.identification import identify
from dynid.models import Plant, make_model
from dynid.sim import SimOptions, TrajectoryMotion, simulate

T = np.arange(0.0, 22.0, 1e-3)
MOTION = TrajectoryMotion(T, 1.5 * np.sin(2 * np.pi * 0.4 * T) + 0.5 * np.sin(2 * np.pi * 1.1 * T), settle_s=2.0)


def run(truth_friction, theta_friction):
    truth = Plant(make_model("rotary3", {"friction": truth_friction}))
    rec = simulate(truth, [0.5, 0.0, 20.0, 0.0, *theta_friction], MOTION, SimOptions(noise=0.005), seed=3)
    return identify(rec, Plant(make_model("rotary3", {"friction": "auto"})))


def test_auto_finds_an_asymmetric_friction():
    """Truth: Fc·sign(qd) + 0.6 N m. While moving, 'coulomb+offset' and 'coulomb_asym' describe it equally
    (Fc+ = Fc + 0.6, Fc- = Fc - 0.6); auto must pick one of them and recover the asymmetry."""
    res = run("viscous+coulomb+offset", [0.8, 1.5, 0.6])
    terms = res.plant.friction.terms
    v = res.values
    if "offset" in terms:
        asym = v["A1.offset"]
    else:
        assert "coulomb_asym" in terms
        asym = (v["A1.coulomb_pos"] - v["A1.coulomb_neg"]) / 2
    assert asym == pytest.approx(0.6, rel=0.05)
    assert any("chosen by held-out error" in n and "friction" in n for n in res.notes)
    assert res.plant.model.config.friction == res.plant.friction.spec  # result.json rebuilds the chosen model


def test_auto_keeps_softmc_friction_when_richer_models_do_not_help():
    res = run("viscous+coulomb", [0.8, 1.5])
    assert res.plant.friction.spec == "viscous+coulomb"


def test_missing_offset_is_diagnosed_with_the_remedy():
    truth = Plant(make_model("rotary3", {"friction": "viscous+coulomb+offset"}))
    rec = simulate(truth, [0.5, 0.0, 20.0, 0.0, 0.8, 1.5, 3.0], MOTION, SimOptions(noise=0.005), seed=4)
    res = identify(rec, Plant(make_model("rotary3")))
    d = [x for x in res.diagnostics if x.code == "systematic_residual"]
    assert d and d[0].evidence["feature"] == "constant" and "--friction viscous+coulomb+offset" in d[0].message
