"""A recording whose torque never changes (issue 26.3).

A torque channel that is not recorded reads 0 everywhere; one stuck (or a TorqueFactor of 0 on a constant
offset) reads a constant. Neither can identify anything: ``dynid identify`` ended in ``ValueError: min() arg is an
empty sequence`` (zero) or fitted the constant (exit 0/1 with nonsense). Now: one message naming the column,
exit 2, no outputs. The selection, where the empty ``min()`` came from, no longer fails on such data.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid
from dynid.cli.main import main
from dynid.errors import InputDataError
from dynid.identification.select import select_auto
from dynid.io.readers import write_recording_csv
from dynid.models import Plant, make_model, model_class
from dynid.recording import Recording
from dynid.sim import SineMotion, simulate


@pytest.fixture(scope="module")
def crank():
    """A simulated crank arm (rotary3), 8 s of sine."""
    plant = Plant(make_model("rotary3"))
    return simulate(plant, [0.5, 0.0, 4.0, 0.0, 0.1, 0.3], SineMotion([-2.0], [2.0], [0.5], record_s=8.0), seed=1)


@pytest.fixture(scope="module")
def scara():
    """A simulated SCARA (scara4 example), 8 s of sine on all four axes."""
    model = model_class("scara4").example()
    plant = Plant(model)
    theta = np.concatenate([model.example_parameters(), np.full(plant.friction.n_params, 0.2)])
    return simulate(plant, theta, SineMotion([-2, -2, 0, -4], [2, 2, 0.1, 4], [0.3, 0.381, 0.429, 0.339],
                                             record_s=8.0), seed=1)


def _with_tau(rec: Recording, j: int, value: float) -> Recording:
    tau = rec.tau.copy()
    tau[:, j] = value
    return Recording(rec.t, rec.q, tau, source="run.csv")


@pytest.mark.parametrize("value, what", [(0.0, "0 N m in every one of the"), (2.5, "2.5 N m in every one of the")])
def test_issue_26_constant_crank_torque_exits_2_naming_the_column(tmp_path, capsys, crank, value, what):
    path = tmp_path / "run.csv"
    write_recording_csv(path, _with_tau(crank, 0, value))
    out = tmp_path / "out"
    assert main(["identify", str(path), "--model", "rotary3", "--out", str(out), "--no-report"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and err[0].startswith(f"dynid: error: {path}, column tau1: the measured torque is {what}")
    assert "TorqueFactor" in err[1]
    assert not out.exists()


def test_issue_26_one_constant_joint_of_several_is_named(tmp_path, capsys, scara):
    """One of four joints constant (tau2): the message names that column; a linear joint says N."""
    path = tmp_path / "run.csv"
    write_recording_csv(path, _with_tau(scara, 1, 1.0))
    out = tmp_path / "out"
    cfg = tmp_path / "scara.json"
    cfg.write_text(json.dumps(dict(model_class("scara4").example_config)))
    assert main(["identify", str(path), "--model", "scara4", "--config", str(cfg), "--out", str(out),
                 "--no-report"]) == 2
    err = capsys.readouterr().err
    assert f"{path}, column tau2: the measured torque is 1 N m in every one of the" in err
    assert "tau1" not in err and "tau3" not in err and not out.exists()
    with pytest.raises(InputDataError, match=r"column tau3: the measured torque is 0 N in every one of the .* "
                                             r"samples: the torque channel is not recorded"):
        dynid.Identifier("scara4", config=dict(model_class("scara4").example_config)).fit(_with_tau(scara, 2, 0.0))


def test_issue_26_payload_run_with_zero_torque_is_refused(tmp_path, capsys, crank):
    robot = dynid.FittedModel(Plant(make_model("rotary3")), [0.5, 0.0, 4.0, 0.0, 0.1, 0.3],
                              conditioning={"cutoff_hz": 10.0})
    robot.save(tmp_path / "robot")
    path = tmp_path / "loaded.csv"
    write_recording_csv(path, _with_tau(crank, 0, 0.0))
    assert main(["identify", str(path), "--model", "rotary3", "--payload-of", str(tmp_path / "robot"),
                 "--out", str(tmp_path / "out"), "--no-report"]) == 2
    assert "column tau1: the measured torque is 0 N m" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_issue_26_selection_scores_zero_torque_as_unscorable_not_a_crash(crank):
    """Where the empty ``min()`` came from: with no torque to compare against, every held-out NRMSE was NaN
    (0/0), no candidate was 'within 2 % of the best', and the choice had nothing to choose from. The scores are
    now inf and the choice falls to the simplest candidate at the default cutoff without regularisation."""
    rec = _with_tau(crank, 0, 0.0)
    plant = Plant(make_model("rotary3", {"friction": "auto"}))
    sel = select_auto(rec, plant)
    assert sel.scores and all(v == np.inf for v in sel.scores.values())
    sizes = {s: Plant(make_model("rotary3", {"friction": s})).friction.n_params for _, s, _ in sel.scores}
    assert sizes[sel.friction] == min(sizes.values())
    assert sel.cutoff_hz == sel.default_hz and sel.ridge == 0.0


def test_checks_docstring_example():
    import doctest

    from dynid.identification import checks

    assert doctest.testmod(checks, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE).failed == 0
