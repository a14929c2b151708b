"""A recording's ``# units:`` metadata line (issue 26.2).

Rule: the file's declared units are used when the caller gives none; a value dynid does not know, and an
explicit choice the line contradicts, are errors naming the file and the line (exit 2, nothing written). dynid's
own files (``# units: si`` / ``softmc`` from ``dynid excite --out``, ``write_recording_csv``) keep reading.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynid.cli.main import main
from dynid.errors import ConfigError, FileFormatError
from dynid.excite.export import write_trajectory_csv
from dynid.fitted import FittedModel
from dynid.io.controller_log import read_controller_log
from dynid.io.readers import read_recording, write_recording_csv
from dynid.models import Plant, make_model

T = np.arange(0.0, 4.0, 0.002)
Q_RAD = 1.2 * np.sin(1.5 * T)                   # y = 1.2 sin(1.5 t) [rad]
TAU = 3.0 * np.cos(1.5 * T) + 0.5 * np.sin(T)


def crank_csv(path, units_line: str | None, *, deg: bool = False, extra: str = ""):
    """A one-joint recording, positions in deg when ``deg``, with an optional ``# units:`` line."""
    q = np.degrees(Q_RAD) if deg else Q_RAD
    head = f"# robot: R7\n{units_line}\n" if units_line is not None else "# robot: R7\n"
    path.write_text(head + extra + "t,q1,tau1\n" + "".join(f"{a:.17g},{b:.17g},{c:.17g}\n" for a, b, c in zip(T, q, TAU)))
    return path


@pytest.mark.parametrize("value", ["furlongs", "deg", "rad", "mm"])
def test_issue_26_unknown_units_line_is_refused_naming_file_line_and_choices(tmp_path, value):
    path = crank_csv(tmp_path / "run.csv", f"# units: {value}")
    with pytest.raises(FileFormatError, match=rf"run\.csv, line 2: '# units: {value}' declares units dynid does not "
                                              r"know; accepted: 'si' \(rad, m\) or 'softmc'") as err:
        read_recording(path, n_joints=1, joint_kinds=["rotary"])
    assert err.value.options == ("units",)
    with pytest.raises(FileFormatError, match=r"line 2: '# units: .*' declares units"):
        read_recording(path, units="si")                 # the line is wrong whatever is asked


def test_issue_26_unknown_units_line_exits_2_writing_nothing(tmp_path, capsys):
    path = crank_csv(tmp_path / "run.csv", "# units: furlongs")
    out = tmp_path / "out"
    assert main(["identify", str(path), "--model", "rotary3", "--out", str(out), "--no-report"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and f"{path}, line 2: '# units: furlongs'" in err[0] and "'softmc'" in err[0]
    assert err[1].endswith("(--units)")
    assert not out.exists()


def test_issue_26_declared_units_are_used_when_none_is_given(tmp_path):
    """``# units: softmc`` with degrees: read as degrees (was: taken for radians, 57 x too large — or refused
    as 'looks like degrees' when the travel was large)."""
    from dynid.io.readers import recording_units

    soft = crank_csv(tmp_path / "soft.csv", "# units: softmc", deg=True)
    plain = crank_csv(tmp_path / "si.csv", None)
    a = read_recording(soft, n_joints=1, joint_kinds=["rotary"])
    b = read_recording(plain, n_joints=1, joint_kinds=["rotary"])
    np.testing.assert_allclose(a.q, b.q, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(a.tau, b.tau)            # torques are N m in both
    assert recording_units(a.meta) == "softmc" and recording_units(b.meta) == "si"
    c = read_recording(crank_csv(tmp_path / "upper.csv", "#units:  SoftMC", deg=True), n_joints=1,
                       joint_kinds=["rotary"], units="softmc")
    np.testing.assert_allclose(c.q, b.q, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("declared, given", [("softmc", "si"), ("si", "softmc")])
def test_issue_26_units_contradicting_the_file_are_refused_naming_both(tmp_path, declared, given):
    path = crank_csv(tmp_path / "run.csv", f"# units: {declared}", deg=declared == "softmc")
    with pytest.raises(ConfigError, match=rf"run\.csv, line 2: '# units: {declared}' contradicts the units "
                                          rf"'{given}' given for the file") as err:
        read_recording(path, n_joints=1, joint_kinds=["rotary"], units=given)
    assert f"the file's, '{declared}', are used" in err.value.hint and err.value.options == ("units",)


def test_issue_26_explicit_units_contradicting_the_file_exit_2(tmp_path, capsys):
    path = crank_csv(tmp_path / "run.csv", "# units: softmc", deg=True)
    fm = FittedModel(Plant(make_model("rotary3")), [0.5, 0.0, 4.0, 0.0, 0.1, 0.3], conditioning={"cutoff_hz": 10.0})
    fm.save(tmp_path / "res")
    out = tmp_path / "p.csv"
    assert main(["predict", str(tmp_path / "res"), str(path), "--units", "si", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "line 2: '# units: softmc' contradicts the units 'si'" in err and "(--units)" in err
    assert not out.exists()
    assert main(["identify", str(path), "--model", "rotary3", "--units", "si", "--out", str(tmp_path / "o"),
                 "--no-report"]) == 2
    assert "contradicts the units 'si'" in capsys.readouterr().err and not (tmp_path / "o").exists()
    # not chosen: the file's units, as with --units softmc
    assert main(["predict", str(tmp_path / "res"), str(path), "--out", str(out)]) == 0
    assert main(["predict", str(tmp_path / "res"), str(path), "--units", "softmc", "--out",
                 str(tmp_path / "p2.csv")]) == 0
    assert out.read_text() == (tmp_path / "p2.csv").read_text()


def test_feedforward_reads_dynids_softmc_trajectory_by_its_units_line(tmp_path, capsys):
    """``dynid excite --out-units softmc`` writes ``# units: softmc``: feed-forward of that file equals that of the
    SI file, without ``--units``; the command columns follow the same units."""
    fm = FittedModel(Plant(make_model("rotary3")), [0.5, 0.0, 4.0, 0.0, 0.1, 0.3], conditioning={"cutoff_hz": 10.0})
    fm.save(tmp_path / "res")
    qd, qdd = 1.8 * np.cos(1.5 * T), -2.7 * np.sin(1.5 * T)
    si = write_trajectory_csv(tmp_path / "si.csv", T, Q_RAD[:, None], qd[:, None], qdd[:, None], kinds=["rotary"])
    soft = write_trajectory_csv(tmp_path / "soft.csv", T, Q_RAD[:, None], qd[:, None], qdd[:, None], kinds=["rotary"],
                                units="softmc")
    assert soft.read_text().startswith("# units: softmc\n")
    for src in (si, soft):
        assert main(["feedforward", str(tmp_path / "res"), str(src), "--delay", "0", "--no-clamp",
                     "--out", str(tmp_path / f"ff_{src.stem}.csv")]) == 0
    a = np.genfromtxt(tmp_path / "ff_si.csv", delimiter=",", names=True)
    b = np.genfromtxt(tmp_path / "ff_soft.csv", delimiter=",", names=True)
    np.testing.assert_allclose(b["taddcmd1"], a["taddcmd1"], rtol=1e-7, atol=1e-9 * np.abs(a["taddcmd1"]).max())
    cmd = crank_csv(tmp_path / "cmd.csv", "# units: softmc", deg=True)
    text = cmd.read_text().splitlines()
    text[2] += ",pcmd1"
    text[3:] = [f"{line},{np.degrees(q):.17g}" for line, q in zip(text[3:], Q_RAD)]
    cmd.write_text("\n".join(text) + "\n")
    log = read_controller_log(cmd, n_joints=1, joint_kinds=["rotary"])
    np.testing.assert_allclose(log.get("pcmd")[:, 0], Q_RAD, rtol=1e-12, atol=1e-15)


def test_a_recording_read_in_softmc_units_is_written_back_as_si(tmp_path):
    """``write_recording_csv`` writes SI: a recording read from a ``# units: softmc`` file keeps its other metadata
    and declares ``si``, and reads back the same."""
    rec = read_recording(crank_csv(tmp_path / "soft.csv", "# units: softmc", deg=True), n_joints=1,
                         joint_kinds=["rotary"])
    write_recording_csv(tmp_path / "back.csv", rec)
    assert (tmp_path / "back.csv").read_text().splitlines()[:2] == ["# robot: R7", "# units: si"]
    again = read_recording(tmp_path / "back.csv", n_joints=1, joint_kinds=["rotary"])
    np.testing.assert_allclose(again.q, rec.q, rtol=1e-9)


def test_identify_records_the_units_the_file_was_read_in(tmp_path, capsys):
    from dynid.sim import SineMotion, simulate

    plant = Plant(make_model("rotary3"))
    rec = simulate(plant, [0.5, 0.0, 4.0, 0.0, 0.1, 0.3], SineMotion([-2.0], [2.0], [0.5], record_s=8.0), seed=1)
    q_deg = np.degrees(rec.q[:, 0])
    path = tmp_path / "run.csv"
    path.write_text("# units: softmc\nt,q1,tau1\n" + "".join(f"{a:.17g},{b:.17g},{c:.17g}\n" for a, b, c in
                                                             zip(rec.t, q_deg, rec.tau[:, 0])))
    assert main(["identify", str(path), "--model", "rotary3", "--out", str(tmp_path / "o"), "--no-report",
                 "--json"]) in (0, 1)
    capsys.readouterr()
    data = json.loads((tmp_path / "o" / "result.json").read_text())
    assert data["source"]["units"] == "softmc"
    assert data["parameters"]["values"][2] == pytest.approx(4.0, rel=0.05)     # M*g*A: the degrees were read as such


def test_parquet_units_metadata_is_checked(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.table({"t": T, "q1": Q_RAD, "tau1": TAU}).replace_schema_metadata({"units": "deg"})
    pq.write_table(table, tmp_path / "run.parquet")
    with pytest.raises(FileFormatError, match=r"run\.parquet: metadata 'units' declares units dynid does not know"):
        read_recording(tmp_path / "run.parquet")
