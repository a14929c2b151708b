"""Exports: the source's SCARA MC-Basic program, trajectory CSV, PNG plot, atomic writes."""

from __future__ import annotations


import numpy as np
import pytest

from dynid.errors import ConfigError, MissingExtraError
from dynid.excite import mcbasic_program, plan_sine, plot_motion, write_mcbasic, write_trajectory_csv
from dynid.io.readers import read_recording
from dynid.models.scara import IDENT_FILTER_HZ, IDENT_RECORD_S, IDENT_SETTLE_S, IDENT_START, IDENT_TARGET
from dynid.units import to_si

SCARA_KINDS = ["rotary", "rotary", "linear", "rotary"]

# The source's 4-axis SCARA identification program (spec/identification.md §1), line by line.
SCARA_PROGRAM_LINES = [
    "startPoint = {-160,-160,0,-350}",
    "sineTarget = {160,160,150,350}",
    "SWfreq = 0.3*{1,1.27,1.43,1.13}",
    "Attach SCARA",
    "SCARA.En = 0",
    "SCARA.DynamicModel = 1",
    "SCARA.En = 1",
    "Move startPoint Abs = 1",
    "While SCARA.IsMoving",
    "SineWave sineTarget SineWaveFreq = SWfreq",
    "sleep 2000",
    "IdentificationStart IdentFilterFreq = 80",
    "sleep 20000",
    "IdentificationFinish",
    "stop",
    "proceed",
    "SCARA.En = 0",
    "Detach SCARA",
]


def scara_plan():
    start = to_si(np.array([IDENT_START]), SCARA_KINDS, "softmc")[0]
    target = to_si(np.array([IDENT_TARGET]), SCARA_KINDS, "softmc")[0]
    return plan_sine(start, target, [1, 1.27, 1.43, 1.13], factor=0.3, record_s=IDENT_RECORD_S, settle_s=IDENT_SETTLE_S)


def test_scara_program_reproduces_the_source_lines_in_order():
    text = mcbasic_program(scara_plan(), element="SCARA", dynamic_model=1, kinds=SCARA_KINDS, filter_hz=IDENT_FILTER_HZ)
    lines = [ln.strip() for ln in text.splitlines()]
    pos = []
    for x in SCARA_PROGRAM_LINES:  # each expected line, in order, after the previous one
        pos.append(lines.index(x, pos[-1] + 1 if pos else 0))
    assert lines.index("Program") < pos[0] and lines[-1] == "End Program"
    assert "Dim Shared startPoint As Joint Of XYZR" in lines


def test_program_without_a_factor_lists_the_frequencies():
    p = plan_sine([-1.0], [1.0], [1.5], record_s=5.0, settle_s=1.5)
    text = mcbasic_program(p, element="A1", dynamic_model=3)
    assert "SWfreq = 1.5" in text and "startPoint = -57.29577951" in text and "sleep 1500" in text
    assert "sleep 5000" in text and "Dim Shared SWfreq As Double" in text


@pytest.mark.parametrize("kw, match", [({"filter_hz": 0.1}, "above the highest sine frequency"),
                                       ({"filter_hz": 150.0}, "below 125 Hz"),
                                       ({"element": "2 bad"}, "identifier")])
def test_bad_program_settings_write_nothing(tmp_path, kw, match):
    out = tmp_path / "IDENT.PRG"
    args = {"element": "SCARA", "dynamic_model": 1, "kinds": SCARA_KINDS, **kw}
    with pytest.raises(ConfigError, match=match):
        write_mcbasic(out, scara_plan(), **args)
    assert list(tmp_path.iterdir()) == []


def test_trajectory_csv_round_trips_through_the_recording_reader(tmp_path):
    p = scara_plan()
    t, q, qd, qdd = p.sample(1e-3, include_settle=True)
    path = write_trajectory_csv(tmp_path / "traj.csv", t, q, qd, qdd, kinds=SCARA_KINDS, meta={"source": "test"})
    rec = read_recording(path, n_joints=4, joint_kinds=SCARA_KINDS, require_tau=False)
    np.testing.assert_allclose(rec.t, t, atol=1e-9)
    np.testing.assert_allclose(rec.q, q, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(rec.qd, qd, rtol=1e-8, atol=1e-9)
    head = path.read_text().splitlines()[:4]
    assert head[0] == "# units: si" and head[3].startswith("t,q1,q2,q3,q4,dq1")
    soft = write_trajectory_csv(tmp_path / "soft.csv", t, q, qd, qdd, kinds=SCARA_KINDS, units="softmc")
    rec2 = read_recording(soft, n_joints=4, joint_kinds=SCARA_KINDS, units="softmc", require_tau=False)
    np.testing.assert_allclose(rec2.q, q, rtol=1e-8, atol=1e-9)


def test_plot_is_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    p = scara_plan()
    t, q, _, _ = p.sample(0.05, include_settle=True)
    out = plot_motion(tmp_path / "plan.png", t, q, kinds=SCARA_KINDS, units="softmc")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_names_the_extra(tmp_path, without_modules):
    without_modules("matplotlib")
    with pytest.raises(MissingExtraError, match="matplotlib") as e:
        plot_motion(tmp_path / "x.png", np.arange(3.0), np.zeros((3, 1)))
    assert "dynid[report]" in e.value.hint and not (tmp_path / "x.png").exists()
