"""The identification registry (issue 16): SQLite and a real PostgreSQL, concurrent writers, drift.

Acceptance: a registry lists all 8 robots recorded in it; a robot recorded again with 40 % more viscous
friction on one axis is flagged for that viscous term and nothing else (simulated SCARA, identified by
dynid, drift against the truth of the simulation); the same robot recorded again unchanged is flagged
for nothing.
"""

from __future__ import annotations

import datetime as dt
import doctest
import json
import math
import multiprocessing
import pickle
import re
import sqlite3
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import dynid
from dynid.cli.main import main
from dynid.errors import ConfigError, MissingExtraError
from dynid.fitted import FittedModel
from dynid.fleet import registry as registry_module
from dynid.fleet.registry import (DRIFT_SIGMAS, SCHEMA_VERSION, Registry, RegistryError, drift_rows, registry_url,
                                  robot_of, run_entry)
from dynid.models import Plant, make_model
from dynid.sim import SimOptions, SineMotion, simulate
from dynid.sim.scenarios import _SCARA as SCARA

from ._workers import write_runs

ROTARY = Plant(make_model("rotary3", {"friction": "viscous+coulomb"}))
THETA = [0.5, 0.0, 20.0, 0.0, 0.8, 1.5]               # I, L^2, M*g*A, g*L, A1.viscous, A1.coulomb
STD = [0.001, np.nan, 0.01, np.nan, 0.002, 0.005]     # L^2, g*L held: no std
STATUS = ("identified", "not identifiable", "identified", "not identifiable", "identified", "identified")


def rotary(theta=THETA, std=STD, success=True, errors=(0.012,)) -> FittedModel:
    """A rotary3 model with the given values (no identification: the registry stores what it is given)."""
    return FittedModel(ROTARY, theta, std, STATUS, metrics={"success": success, "max_relative_error": list(errors),
                                                            "diagnostics_detail": [{"evidence": list(range(50))}]})


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------------------------- basics

def test_docstring_example():
    assert doctest.testmod(registry_module, optionflags=doctest.ELLIPSIS).failed == 0


@pytest.mark.parametrize("given, expected", [
    ("fleet.db", "sqlite:///fleet.db"),
    ("/var/lib/dynid/fleet.db", "sqlite:////var/lib/dynid/fleet.db"),
    ("sqlite:///fleet.db", "sqlite:///fleet.db"),
    ("postgresql://dynid@db.local:5433/fleet", "postgresql+psycopg://dynid@db.local:5433/fleet"),
    ("postgres://dynid@db.local/fleet", "postgresql+psycopg://dynid@db.local/fleet"),
    ("postgresql+psycopg://dynid@db.local/fleet", "postgresql+psycopg://dynid@db.local/fleet"),
])
def test_registry_urls(given, expected):
    assert registry_url(given) == expected


@pytest.mark.parametrize("bad", ["", "  ", "mysql://u@h/db"])
def test_unsupported_registry_urls_are_config_errors(bad):
    with pytest.raises(ConfigError, match="registry URL|not supported"):
        registry_url(bad)


def test_record_and_history_round_trip(registry_url):
    """What comes back is what was stored: values, std (NaN -> None), units, status, metrics, UTC time."""
    when = dt.datetime(2025, 3, 1, 15, 5, 0, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    fm = rotary()
    with Registry(registry_url) as reg:
        assert reg.schema_version == SCHEMA_VERSION
        run_id = reg.record(fm, robot=" cell-7 ", recording="/data/run1.csv", time=when)
        (h,) = reg.history()
        again = reg.model(run_id)
    assert h["id"] == run_id and h["robot"] == "cell-7" and h["model"] == "rotary3"
    assert h["time"] == "2025-03-01T14:05:00.000000+00:00"
    assert h["friction"] == "viscous+coulomb" and h["success"] is True and h["recording"] == "/data/run1.csv"
    assert h["parameters"] == {"I": 0.5, "L^2": 0.0, "M*g*A": 20.0, "g*L": 0.0, "A1.viscous": 0.8, "A1.coulomb": 1.5}
    assert h["std"] == {"I": 0.001, "L^2": None, "M*g*A": 0.01, "g*L": None, "A1.viscous": 0.002, "A1.coulomb": 0.005}
    assert h["units"]["A1.viscous"] == "N m s/rad" and h["units"]["I"] == "kg m^2"
    assert h["status"]["L^2"] == "not identifiable"
    assert h["metrics"] == {"success": True, "max_relative_error": [0.012]}   # the evidence stays in the result
    # the stored result.json rebuilds the model: the same torques
    q, dq, ddq = np.array([[0.3], [-1.0]]), np.array([[1.0], [-0.5]]), np.array([[2.0], [0.0]])
    np.testing.assert_array_equal(again.torque(q, dq, ddq), fm.torque(q, dq, ddq))


def test_run_entry_is_what_history_returns(tmp_path):
    """The report's view of the current run (not yet stored) equals the stored run."""
    fm = rotary(success=False)
    with Registry(tmp_path / "r.db") as reg:
        entry = run_entry(fm, robot="r", recording="x.csv", time="2025-01-02T03:04:05Z")
        reg.record(fm, robot="r", recording="x.csv", time="2025-01-02T03:04:05Z")
        (stored,) = reg.history("r")
    assert {**entry, "id": stored["id"]} == stored and stored["success"] is False


def test_history_is_ordered_by_time_and_filtered_by_robot(registry_url):
    with Registry(registry_url) as reg:
        late = reg.record(rotary(), robot="a", time="2025-05-01T00:00:00+00:00")
        early = reg.record(rotary(errors=(0.02,)), robot="a", time="2025-04-01T00:00:00+00:00")  # another result
        other = reg.record(rotary(), robot="b", time="2025-04-15T00:00:00+00:00")
        assert [r["id"] for r in reg.history("a")] == [early, late]
        assert [r["id"] for r in reg.history()] == [early, other, late]
        assert reg.history("nobody") == []
        assert reg.robots() == ["a", "b"] and reg.run_counts() == {"a": 2, "b": 1}
        first, latest = reg.first_and_latest("a")
        assert (first["id"], latest["id"]) == (early, late)
        assert [r["id"] for r in reg.first_and_latest("b")] == [other, other]
        with pytest.raises(ConfigError, match="no run of robot 'nobody' .*robots: a, b"):
            reg.drift("nobody")


def test_history_view_keeps_the_first_and_latest_runs(tmp_path, monkeypatch):
    """The report's view of a long history: the first run and the latest, numbered in the robot's history."""
    from dynid.report._history import history_figure, history_html

    monkeypatch.setattr(registry_module, "VIEW_RUNS", 3)
    with Registry(tmp_path / "r.db") as reg:
        for k in range(4):
            reg.record(rotary([0.5, 0.0, 20.0, 0.0, 0.8 + 0.01 * k, 1.5]), robot="a")
        view = reg.history_view(rotary([0.5, 0.0, 20.0, 0.0, 1.12, 1.5]), robot="a")
    assert [r["number"] for r in view["runs"]] == [1, 4, 5] and view["n_runs"] == 5
    assert view["runs"][-1]["current"] and view["runs"][-1]["id"] is None
    assert [d["name"] for d in view["drift"] if d["significant"]] == ["A1.viscous"]
    fig = history_figure(view)
    line = next(t for t in fig.panels[0].traces if t.kind == "line" and t.label == "A1.viscous (drift)")
    np.testing.assert_allclose(line.x, [1, 4, 5])
    np.testing.assert_allclose(line.y, [0.0, 100 * 0.03 / 0.8, 100 * 0.32 / 0.8])
    page = history_html(view, "<figure/>")
    assert "5 runs of robot <b>a</b>" in page and "5 (this run)" in page and "<code>A1.viscous</code> (+40.0 %)" in page


# ---------------------------------------------------------------------------------------------- drift rule

def test_drift_rule_is_three_combined_standard_deviations():
    """change = latest - first; sigma = hypot(std_first, std_latest); significant iff |change| > 3 sigma."""
    s = math.hypot(0.002, 0.002)
    first = run_entry(rotary(), robot="r")
    just_below = run_entry(rotary([0.5, 0.0, 20.0 - 2.99 * math.hypot(0.01, 0.01), 0.0, 0.8 + 2.99 * s, 1.5]),
                           robot="r")
    just_above = run_entry(rotary([0.5, 0.0, 20.0, 0.0, 0.8 - 3.01 * s, 1.5]), robot="r")
    assert DRIFT_SIGMAS == 3.0
    assert not any(d["significant"] for d in drift_rows(first, just_below))
    rows = {d["name"]: d for d in drift_rows(first, just_above)}
    assert [n for n, d in rows.items() if d["significant"]] == ["A1.viscous"]
    v = rows["A1.viscous"]
    assert v["change"] == pytest.approx(-3.01 * s) and v["sigma"] == pytest.approx(s) and v["z"] == pytest.approx(-3.01)
    assert v["first"] == 0.8 and v["unit"] == "N m s/rad"
    # held parameters have no sigma: never significant, whatever they did
    held = run_entry(rotary([0.5, 9.0, 20.0, 0.0, 0.8, 1.5]), robot="r")
    row = {d["name"]: d for d in drift_rows(first, held)}["L^2"]
    assert row["change"] == 9.0 and row["sigma"] is None and row["significant"] is False


def test_drift_lists_parameters_of_either_run():
    """A friction term only one run has (another friction model chosen) has no change."""
    first = run_entry(rotary(), robot="r")
    plant = Plant(make_model("rotary3", {"friction": "viscous+coulomb+offset"}))
    latest = run_entry(FittedModel(plant, THETA + [0.1], STD + [0.01]), robot="r")
    rows = {d["name"]: d for d in drift_rows(first, latest)}
    assert rows["A1.offset"]["first"] is None and rows["A1.offset"]["change"] is None
    assert not rows["A1.offset"]["significant"]
    assert list(rows)[-1] == "A1.offset"


# ---------------------------------------------------------------------------------------------- acceptance

def _scara_truth(viscous_factor: float = 1.0) -> tuple[Plant, np.ndarray]:
    plant = Plant(make_model("scara4", dict(SCARA.config, friction="viscous+coulomb")))
    friction = np.column_stack([SCARA.friction["viscous"], SCARA.friction["coulomb"]])
    friction[1, 0] *= viscous_factor                                   # axis 2's viscous friction
    return plant, np.concatenate([SCARA.params, friction.ravel()])


@pytest.fixture(scope="module")
def scara_runs():
    """Three identification runs of a simulated 4-axis SCARA (0.5 % torque noise, different seeds): new, new
    again, and worn (axis 2's viscous friction x 1.4). Identified by dynid with its defaults."""
    motion = SineMotion(SCARA.ident_start, SCARA.ident_target, SCARA.ident_freqs_hz, record_s=6)
    out = []
    for seed, factor in ((0, 1.0), (1, 1.0), (2, 1.4)):
        plant, theta = _scara_truth(factor)
        rec = simulate(plant, theta, motion, SimOptions(noise=0.005), seed=seed)
        est = dynid.Identifier("scara4", config=dict(SCARA.config)).fit(rec)
        assert est.success_
        out.append((rec, est.model_))
    return out


def test_acceptance_worn_axis_flagged_for_its_viscous_term_only(registry_url, scara_runs):
    (_, new), (_, again), (_, worn) = scara_runs
    with Registry(registry_url) as reg:
        for k, fm in enumerate((new, again)):
            reg.record(fm, robot="scara-1", time=f"2025-01-0{k + 1}T08:00:00+00:00")
        unchanged = reg.drift("scara-1")
        reg.record(worn, robot="scara-1", time="2025-06-01T08:00:00+00:00")
        drift = reg.drift("scara-1")
    assert len(unchanged) == len(new.param_names) and not [d["name"] for d in unchanged if d["significant"]]
    assert [d["name"] for d in drift if d["significant"]] == ["A2.viscous"]
    row = next(d for d in drift if d["name"] == "A2.viscous")
    assert row["change"] / row["first"] == pytest.approx(0.4, abs=0.02)
    assert row["sigma"] == pytest.approx(math.hypot(row["first_std"], row["latest_std"]))


def test_acceptance_registry_lists_all_eight_robots(registry_url, capsys):
    with Registry(registry_url) as reg:
        for k in range(8):
            reg.record(rotary(), robot=f"robot-{k + 1}", recording=f"/batch/robot-{k + 1}.csv")
    code, out, _ = cli(capsys, "registry", "robots", "--registry", registry_url, "--json")
    assert code == 0 and json.loads(out) == [f"robot-{k + 1}" for k in range(8)]
    code, out, _ = cli(capsys, "registry", "history", "--registry", registry_url, "--json")
    runs = json.loads(out)
    assert code == 0 and sorted(r["robot"] for r in runs) == [f"robot-{k + 1}" for k in range(8)]
    assert all({"robot", "time", "model", "success", "parameters"} <= set(r) for r in runs)
    assert runs[0]["parameters"]["A1.viscous"] == 0.8


# ---------------------------------------------------------------------------------------------- concurrency

def test_concurrent_writer_processes_lose_nothing(registry_url):
    """4 processes record 25 runs each at once into a registry none of them created (the schema is created
    by whichever comes first): all 100 runs and their parameters are there, each exactly once."""
    workers, n = 4, 25
    ctx = multiprocessing.get_context("forkserver")     # fresh processes, forked from one that imported dynid
    ctx.set_forkserver_preload(["tests.fleet._workers"])
    with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
        ids = list(pool.map(write_runs, [registry_url] * workers, range(workers), [n] * workers))
    with Registry(registry_url, create=False) as reg:
        runs = reg.history()
    assert len({i for batch in ids for i in batch}) == workers * n == len(runs)
    for w in range(workers):
        mine = [r for r in runs if r["robot"] == f"w{w}"]
        assert sorted(r["parameters"]["A1.viscous"] for r in mine) == pytest.approx([w + k / 1000 for k in range(n)])
        assert all(len(r["parameters"]) == 6 for r in mine)


# ---------------------------------------------------------------------------------------------- errors and schema

def test_reading_a_missing_sqlite_registry_does_not_create_it(tmp_path, capsys):
    path = tmp_path / "typo.db"
    with pytest.raises(RegistryError, match="no registry at .*typo.db"):
        Registry(path, create=False)
    code, _, err = cli(capsys, "registry", "history", "--registry", str(path))
    assert code == 2 and "no registry at" in err and not path.exists()


def test_a_file_that_is_no_database_is_named(tmp_path):
    bad = tmp_path / "run.csv"
    bad.write_text("t,q1,tau1\n" * 200)
    with pytest.raises(RegistryError, match="run.csv.*not a database") as info:
        Registry(bad)
    assert "not a SQLite database" in info.value.hint


def test_registry_of_a_newer_dynid_is_refused(tmp_path):
    path = tmp_path / "r.db"
    Registry(path).close()
    with sqlite3.connect(path) as con:
        con.execute("INSERT INTO dynid_schema VALUES (?, '2030-01-01', 'from the future')", (SCHEMA_VERSION + 1,))
    with pytest.raises(RegistryError, match=f"schema version {SCHEMA_VERSION + 1}"):
        Registry(path)


def test_unreachable_postgresql_server_is_named():
    import socket

    with socket.socket() as s:                      # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(RegistryError, match=f"127.0.0.1:{port}.*cannot") as info:
        Registry(f"postgresql://dynid:secret@127.0.0.1:{port}/fleet")
    assert "secret" not in str(info.value) and "server is running" in info.value.hint


def test_a_registry_pickles_as_its_url(tmp_path):
    """What a Dask or multiprocessing worker receives: the URL, reopened there."""
    with Registry(tmp_path / "r.db") as reg:
        reg.record(rotary(), robot="a")
        again = pickle.loads(pickle.dumps(reg))
    with again:
        assert again.url == reg.url and [r["robot"] for r in again.history()] == ["a"]


def test_unknown_robot_on_the_command_line(tmp_path, capsys):
    with Registry(tmp_path / "r.db") as reg:
        reg.record(rotary(), robot="a")
    code, _, err = cli(capsys, "registry", "history", "--registry", str(tmp_path / "r.db"), "--robot", "b")
    assert code == 2 and "no run of robot 'b' (robots: a)" in err
    code, out, _ = cli(capsys, "registry", "history", "--registry", str(tmp_path / "r.db"), "--robot", "a")
    assert code == 0 and out.splitlines()[0].split()[:4] == ["run", "time", "(UTC)", "robot"]
    code, out, _ = cli(capsys, "registry", "drift", "--registry", str(tmp_path / "r.db"), "--robot", "a")
    assert code == 0 and "only one run: nothing to compare yet" in out


def test_missing_sqlalchemy_names_the_extra(without_modules, tmp_path):
    without_modules("sqlalchemy")
    with pytest.raises(MissingExtraError, match="sqlalchemy") as info:
        Registry(tmp_path / "r.db")
    assert "dynid[fleet]" in info.value.hint


def test_robot_of_reads_the_metadata_line(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text("# source: controller\n# Robot :  cell 7 \nt,q1,tau1\n0,0,0\n")
    assert robot_of(path) == "cell 7"
    (tmp_path / "none.csv").write_text("t,q1,tau1\n0,0,0\n")
    assert robot_of(tmp_path / "none.csv") is None
    assert robot_of(dynid.Recording([0.0, 1.0], [0.0, 1.0], meta={"robot": "r9"})) == "r9"


# ---------------------------------------------------------------------------------------------- dynid identify

def _csv(tmp_path: Path, rec, name: str, robot: str | None) -> str:
    path = tmp_path / name
    dynid.write_recording_csv(path, rec, meta={"robot": robot} if robot else None)
    return str(path)


FAST = ("--model", "scara4", "--cutoff", "default", "--friction", "viscous+coulomb")  # no selection: plumbing tests


@pytest.fixture
def scara_config(tmp_path) -> str:
    path = tmp_path / "scara.json"
    path.write_text(json.dumps(dict(SCARA.config)))
    return str(path)


def test_identify_records_runs_and_the_report_shows_the_drift(tmp_path, capsys, scara_runs, scara_config):
    db = str(tmp_path / "fleet.db")
    recs = [_csv(tmp_path, rec, f"run{k}.csv", "scara-9") for k, (rec, _) in enumerate(scara_runs)]
    code, out, _ = cli(capsys, "identify", recs[0], *FAST, "--config", scara_config, "--out",
                       str(tmp_path / "a"), "--registry", db, "--quiet")
    assert code == 0 and "recorded as run 1 of robot scara-9" in out
    first = (tmp_path / "a" / "report.html").read_text()
    assert 'id="history"' in first and "first run" in first
    code, out, _ = cli(capsys, "identify", recs[2], *FAST, "--config", scara_config, "--out",
                       str(tmp_path / "b"), "--registry", f"sqlite:///{db}", "--json")
    assert code == 0 and json.loads(out)["source"]["robot"] == "scara-9"      # stdout stays result.json
    page = (tmp_path / "b" / "report.html").read_text()
    drift = page.split('id="history"', 1)[1].split("</section>", 1)[0]
    assert "<code>A2.viscous</code> (+" in drift and drift.count('<span class="bad">drift</span>') == 1
    # dynid report re-renders the history (kept beside the page, tied to this result.json)
    assert (tmp_path / "b" / "report.history.json").is_file()
    (tmp_path / "b" / "report.html").unlink()
    assert cli(capsys, "report", str(tmp_path / "b"), "--quiet")[0] == 0
    assert 'id="history"' in (tmp_path / "b" / "report.html").read_text()
    code, out, _ = cli(capsys, "registry", "drift", "--robot", "scara-9", "--registry", db, "--json")
    assert code == 0 and [d["name"] for d in json.loads(out) if d["significant"]] == ["A2.viscous"]
    code, out, _ = cli(capsys, "registry", "drift", "--robot", "scara-9", "--registry", db)
    assert code == 0 and re.search(r"significant drift \(\|change\| > 3 sigma\): A2\.viscous \(\+(3[89]|4[01])\.\d %\)\n$",
                                   out)
    # identified again without a registry: the stale history is not shown, and removed
    assert cli(capsys, "identify", recs[1], *FAST, "--config", scara_config, "--out",
               str(tmp_path / "b"), "--quiet")[0] == 0
    assert not (tmp_path / "b" / "report.history.json").exists()
    assert 'id="history"' not in (tmp_path / "b" / "report.html").read_text()


def test_identify_without_a_robot_id_fails_before_writing(tmp_path, capsys, scara_runs, scara_config):
    rec = _csv(tmp_path, scara_runs[0][0], "anon.csv", None)
    out = tmp_path / "out"
    code, _, err = cli(capsys, "identify", rec, *FAST, "--config", scara_config, "--out", str(out),
                       "--registry", str(tmp_path / "fleet.db"), "--quiet")
    assert code == 2 and "no robot id" in err and "--robot" in err and not out.exists()
    code, stdout, _ = cli(capsys, "identify", rec, *FAST, "--config", scara_config, "--out", str(out),
                          "--registry", str(tmp_path / "fleet.db"), "--robot", "given", "--quiet")
    assert code == 0 and "robot given" in stdout


def test_registry_failure_after_writing_says_so_and_add_recovers(tmp_path, capsys, scara_runs, scara_config,
                                                                  monkeypatch):
    """Another process holds the SQLite write lock longer than the busy timeout: the outputs are written,
    the command ends with status 2 naming them; 'dynid registry add' records the run later."""
    db = tmp_path / "fleet.db"
    Registry(db).close()
    monkeypatch.setattr(registry_module, "BUSY_TIMEOUT_S", 0.2)
    rec = _csv(tmp_path, scara_runs[0][0], "run.csv", "held")
    out = tmp_path / "out"
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        code, _, err = cli(capsys, "identify", rec, *FAST, "--config", scara_config, "--out", str(out),
                           "--registry", str(db), "--quiet")
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert code == 2 and f"the outputs in {out} were written, but the run was not registered" in err
    assert "dynid registry add" in err and (out / "result.json").is_file()
    with Registry(db) as reg:
        assert reg.history() == []
    code, stdout, _ = cli(capsys, "registry", "add", str(out), "--registry", str(db))
    assert code == 0 and "as run 1 of robot held" in stdout
    with Registry(db) as reg:
        (run,) = reg.history("held")
    assert run["recording"] == rec and run["model"] == "scara4"


# ---------------------------------------------------------------------------------------------- realistic runs

@pytest.mark.slow
def test_drift_on_closed_loop_runs_with_unmodelled_friction():
    """The SCARA as the runtime scenarios simulate it: closed loop with drive delay, torque ripple, encoder
    quantisation and Stribeck friction that the identified model lacks. Four unchanged runs flag nothing
    against the first (the unmodelled friction biases every run alike, so it cancels in the change), and a
    fifth with axis 2's viscous friction x 1.4 flags A2.viscous alone."""
    import dataclasses

    from dynid.sim.closed_loop import Command, run_closed_loop

    def run(spec, seed):
        plant, theta = spec.true_plant()
        motion = SineMotion(spec.ident_start, spec.ident_target, spec.ident_freqs_hz, record_s=10,
                            settle_s=spec.ident_settle_s)
        t = np.arange(int(round(motion.duration / 1e-3)) + 1) * 1e-3
        sim = run_closed_loop(plant, theta, Command(t, *motion.command(t)), spec.gains(), spec.drive(1e-3), seed=seed)
        est = dynid.Identifier("scara4", config=dict(spec.config)).fit(sim.to_recording(start_s=spec.ident_settle_s))
        return run_entry(est.model_, robot="scara")

    runs = [run(SCARA, seed) for seed in range(4)]
    for later in runs[1:]:
        assert not [d["name"] for d in drift_rows(runs[0], later) if d["significant"]]
    viscous = list(SCARA.friction["viscous"])
    viscous[1] *= 1.4
    worn = run(dataclasses.replace(SCARA, friction={**SCARA.friction, "viscous": tuple(viscous)}), 4)
    assert [d["name"] for d in drift_rows(runs[0], worn) if d["significant"]] == ["A2.viscous"]


# ---------------------------------------------------------------------------------------------- issue 26

@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///", "sqlite:///:memory:", ":memory:", "sqlite+pysqlite://",
                                 "sqlite:///file::memory:?cache=shared&uri=true", "sqlite:///file::memory:",
                                 "sqlite:///file:runs?mode=memory&uri=true", "sqlite:///file:runs.db?vfs=memdb&uri=true",
                                 "sqlite:///file:?uri=true"])
def test_issue_26_a_registry_that_vanishes_at_exit_is_refused(url, tmp_path, monkeypatch):
    """An in-memory (or temporary) SQLite database loses every run when the command ends: refused."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="in-memory database: the runs recorded in it would be lost") as info:
        Registry(url)
    assert info.value.hint == "give a file: sqlite:///path/to/runs.db" and info.value.options == ("registry",)
    assert list(tmp_path.iterdir()) == []                      # nothing created either


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite:///file::memory:?cache=shared&uri=true"])
def test_issue_26_identify_and_batch_refuse_an_in_memory_registry_before_any_work(url, tmp_path, capsys, scara_runs,
                                                                                   scara_config):
    rec = _csv(tmp_path, scara_runs[0][0], "run.csv", "r1")
    out = tmp_path / "out"
    for argv in (["identify", rec, *FAST, "--config", scara_config, "--out", str(out), "--registry", url, "--quiet"],
                 ["batch", rec, *FAST, "--config", scara_config, "--out", str(out), "--registry", url]):
        code, stdout, err = cli(capsys, *argv)
        assert code == 2 and "in-memory database" in err and "hint: give a file: sqlite:///path/to/runs.db" in err
        assert "Traceback" not in err and stdout == "" and not out.exists()
    code, _, err = cli(capsys, "registry", "history", "--registry", url)
    assert code == 2 and "in-memory database" in err


def _run_of(plant, viscous, *, success=True) -> FittedModel:
    theta = [0.5, 0.0, 20.0, 0.0, viscous, 1.5][:plant.n_model] + [viscous, 1.5]
    std = ([0.001, np.nan, 0.01, np.nan][:plant.n_model]) + [0.002, 0.005]
    return FittedModel(plant, theta, std, metrics={"success": success, "max_relative_error": [0.01]})


def test_issue_26_drift_compares_only_runs_of_the_same_model_and_configuration(registry_url, capsys):
    """Run 1 is of another model (rotary2, different I), run 2 of another configuration (a 2 kg payload) with
    another viscous friction: the latest run 4 is compared with run 3 (same model and configuration), and the
    output names the runs compared and the runs skipped, with the reason. Before: run 4 against run 1, I and
    A1.viscous reported as drift."""
    rotary2 = Plant(make_model("rotary2", {"friction": "viscous+coulomb"}))
    payload = Plant(make_model("rotary3", {"friction": "viscous+coulomb", "payload": {"mass": 2.0, "inertia": 0.0}}))
    with Registry(registry_url) as reg:
        ids = [reg.record(fm, robot="cell", time=f"2025-0{k + 1}-01T00:00:00+00:00") for k, fm in enumerate((
            FittedModel(rotary2, [0.9, 0.0, 0.5, 1.5], [0.001, np.nan, 0.002, 0.005]),
            _run_of(payload, 1.6), _run_of(ROTARY, 0.8), _run_of(ROTARY, 0.801)))]
        plan = reg.comparison("cell")
        drift = reg.drift("cell")
    assert (plan.first["id"], plan.latest["id"]) == (ids[2], ids[3])
    assert [(s["id"], s["reason"].split(" (")[0]) for s in plan.skipped] == [
        (ids[0], "model rotary2, not rotary3"), (ids[1], "another configuration of rotary3")]
    assert not [d["name"] for d in drift if d["significant"]]
    assert {d["name"]: d["first"] for d in drift}["A1.viscous"] == 0.8
    code, out, err = cli(capsys, "registry", "drift", "--robot", "cell", "--registry", registry_url)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert re.match(rf"robot cell: compared run {ids[3]} \(2025-04-01 00:00:00 UTC, rotary3\) with run {ids[2]} "
                    r"\(2025-03-01 .*\), the first run of the same model and configuration$", lines[0])
    assert lines[1].startswith(f"skipped run {ids[0]} (2025-01-01 00:00:00 UTC, rotary2): model rotary2, not rotary3")
    assert lines[2].startswith(f"skipped run {ids[1]} (2025-02-01 00:00:00 UTC, rotary3): another configuration")
    assert out.endswith("no parameter changed by more than 3 sigma\n")
    code, out, err = cli(capsys, "registry", "drift", "--robot", "cell", "--registry", registry_url, "--json")
    rows = json.loads(out)
    assert code == 0 and not any(r["significant"] for r in rows)
    assert {(r["first_run"], r["latest_run"]) for r in rows} == {(ids[2], ids[3])}
    assert f"dynid: note: compared run {ids[3]}" in err and f"dynid: note: skipped run {ids[0]}" in err


def test_issue_26_a_run_without_a_configuration_fingerprint_is_compared_by_model_and_says_so(registry_url, capsys):
    """A run whose stored result.json holds no configuration (no fingerprint) is compared by model alone."""
    sa = pytest.importorskip("sqlalchemy")
    with Registry(registry_url) as reg:
        old = reg.record(rotary(), robot="r", time="2024-01-01T00:00:00+00:00")
        new = reg.record(rotary([0.5, 0.0, 20.0, 0.0, 0.9, 1.5]), robot="r", time="2025-01-01T00:00:00+00:00")
        with reg.engine.begin() as conn:
            conn.execute(sa.text("UPDATE dynid_runs SET config_fingerprint = NULL WHERE id = :id"), {"id": old})
        plan = reg.comparison("r")
    assert (plan.first["id"], plan.latest["id"]) == (old, new) and [r["id"] for r in plan.by_model_only] == [old]
    code, out, _ = cli(capsys, "registry", "drift", "--robot", "r", "--registry", registry_url)
    assert code == 0 and f"run {old} (2024-01-01 00:00:00 UTC, rotary3) was recorded without a configuration " \
                         "fingerprint: compared by model only" in out
    assert "significant drift (|change| > 3 sigma): A1.viscous" in out


def test_issue_26_the_same_result_is_recorded_once_per_robot(registry_url):
    """The same result.json content (its creation time aside) is one run of a robot; another robot may have it."""
    fm = rotary()
    with Registry(registry_url) as reg:
        first = reg.add(fm, robot="a", result={**fm.to_dict(), "created": "2025-01-01T00:00:00"})
        again = reg.add(fm, robot="a", time="2026-01-01T00:00:00Z", result={**fm.to_dict(), "created": "2026-01-01"})
        assert reg.record(fm, robot="a") == first[0]
        other = reg.add(fm, robot="b")
        changed = reg.add(rotary(errors=(0.02,)), robot="a")
        assert reg.find(fm.to_dict(), "a") == first[0] and reg.find(fm.to_dict(), "nobody") is None
        assert reg.run_counts() == {"a": 2, "b": 1}
    assert first[1] and again == (first[0], False) and other[1] and other[0] != first[0] and changed[1]


def _as_version_1(url: str) -> None:
    """Turn a registry back into schema version 1 (what dynid 0.1 wrote): without the run's hashes."""
    sa = pytest.importorskip("sqlalchemy")
    with Registry(url) as reg, reg.engine.begin() as conn:
        conn.execute(sa.text("DROP INDEX ix_dynid_runs_robot_result"))
        for col in ("result_hash", "config_fingerprint"):
            conn.execute(sa.text(f"ALTER TABLE dynid_runs DROP COLUMN {col}"))
        conn.execute(sa.text("DELETE FROM dynid_schema WHERE version > 1"))


def test_issue_26_a_version_1_registry_gets_the_hashes_of_its_runs(registry_url):
    """Upgrading fills in the hashes of the stored runs from their result.json: drift and the dedup work on
    them as on new runs."""
    fm, payload = rotary(), Plant(make_model("rotary3", {"friction": "viscous+coulomb", "payload": {"mass": 2.0}}))
    with Registry(registry_url) as reg:
        old = reg.record(fm, robot="r", time="2024-01-01T00:00:00+00:00")
        reg.record(_run_of(payload, 2.0), robot="r", time="2024-06-01T00:00:00+00:00")
    _as_version_1(registry_url)
    with Registry(registry_url) as reg:
        assert reg.schema_version == 2 == SCHEMA_VERSION
        assert [r["config_fingerprint"] for r in reg.history("r")][0] == run_entry(fm, robot="r")["config_fingerprint"]
        assert reg.add(fm, robot="r") == (old, False)
        latest = reg.record(rotary([0.5, 0.0, 20.0, 0.0, 0.8005, 1.5]), robot="r", time="2025-01-01T00:00:00+00:00")
        plan = reg.comparison("r")
    assert (plan.first["id"], plan.latest["id"]) == (old, latest) and len(plan.skipped) == 1
    assert not plan.by_model_only


def test_issue_26_registry_add_twice_and_identify_again_record_one_run(tmp_path, capsys, scara_runs, scara_config):
    """identify --registry, then 'registry add' of its folder, then identify of the same recording again (a
    new folder, a new creation time): one run; the second and third say which run holds it, status 0, and the
    report of the third shows that run as this one (not a second copy)."""
    db = str(tmp_path / "fleet.db")
    rec = _csv(tmp_path, scara_runs[0][0], "run.csv", "twice")
    code, out, _ = cli(capsys, "identify", rec, *FAST, "--config", scara_config, "--out", str(tmp_path / "a"),
                       "--registry", db, "--quiet")
    assert code == 0 and "recorded as run 1 of robot twice" in out
    code, out, _ = cli(capsys, "registry", "add", str(tmp_path / "a"), "--registry", db)
    assert code == 0 and out.startswith(f"already recorded: {tmp_path / 'a' / 'result.json'} as run 1 of robot twice")
    code, out, _ = cli(capsys, "identify", rec, *FAST, "--config", scara_config, "--out", str(tmp_path / "b"),
                       "--registry", db, "--quiet")
    assert code == 0 and "already recorded (the same result) as run 1 of robot twice" in out
    view = json.loads((tmp_path / "b" / "report.history.json").read_text())
    assert view["n_runs"] == 1 and view["runs"][0]["current"] and view["runs"][0]["id"] == 1
    with Registry(db) as reg:
        assert reg.run_counts() == {"twice": 1}
    code, out, _ = cli(capsys, "registry", "add", str(tmp_path / "b"), "--registry", db, "--robot", "other")
    assert code == 0 and out.startswith("recorded ") and "as run 2 of robot other" in out


def test_issue_26_runs_docstring_example():
    from dynid.fleet import runs

    assert doctest.testmod(runs, optionflags=doctest.ELLIPSIS).failed == 0
