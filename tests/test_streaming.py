"""Issue 26: identification that streams. A recording of any length is conditioned, regressed and solved block by
block; on a recording that fits in memory it gives the whole recording's numbers."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

import dynid
from dynid.errors import ConfigError, FileFormatError, InputDataError
from dynid.identification.pipeline import identify
from dynid.identification.streaming import identify_stream
from dynid.io.readers import read_recording, write_recording_csv
from dynid.io.sources import open_source
from dynid.models import Plant, make_model
from dynid.recording import ArraySource, CachedSource, Recording
from dynid.signal.blocks import BlockPlan, Spectrum, StepMedian, condition_block, extended_blocks
from dynid.signal.conditioning import ConditioningOptions, condition, default_cutoff, gate_of


def crank(n: int, f: float = 2.5, seed: int = 0, dt: float = 1e-3) -> Recording:
    """A vertical crank arm (rotary3: I 0.5, M*g*A 4.0, viscous 0.3, Coulomb 0.2) on one sine, 20-bit encoder."""
    t = np.arange(n) * dt
    w = 2 * np.pi * f
    q = 1.5 * np.sin(w * t)
    qd, qdd = 1.5 * w * np.cos(w * t), -1.5 * w * w * np.sin(w * t)
    tau = 0.5 * qdd - 4.0 * np.sin(q) + 0.3 * qd + 0.2 * np.sign(qd)
    tau += np.random.default_rng(seed).normal(size=n) * 0.065
    q = np.round(q * 2**20 / (2 * np.pi)) * (2 * np.pi) / 2**20
    return Recording(t, q[:, None], tau[:, None], source="crank")


def arm(n: int, seed: int = 1) -> tuple[Plant, Recording]:
    """A 3-axis SCARA-like recording (multi-sine, model torque + friction + noise), fast to make."""
    plant = Plant(make_model("scara3", {"L1": 0.325, "L2": 0.275, "friction": "viscous+coulomb"}))
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 1e-3
    f = rng.uniform(0.15, 0.9, (3, 3))
    a = rng.uniform(0.2, 0.6, (3, 3)) * np.array([[1.0], [1.0], [0.05]])
    w = 2 * np.pi * f
    s, c = np.sin(w[None] * t[:, None, None]), np.cos(w[None] * t[:, None, None])
    q = np.einsum("jh,njh->nj", a, s)
    qd = np.einsum("jh,jh,njh->nj", a, w, c)
    qdd = -np.einsum("jh,jh,njh->nj", a, w**2, s)
    theta = plant.model.example_parameters() if hasattr(plant.model, "example_parameters") else None
    theta = np.concatenate([np.asarray(theta, float), [3.0, 2.5, 40.0, 1.0, 0.8, 12.0]])
    tau = plant.torque(theta, q, qd, qdd)
    tau += rng.normal(size=tau.shape) * 0.005 * np.abs(tau).max(axis=0)
    return plant, Recording(t, q, tau, source="arm")


# ---------------------------------------------------------------------------------------------- blocks

@pytest.mark.parametrize("options", [ConditioningOptions(cutoff_hz=12.0),
                                     ConditioningOptions(cutoff_hz=30.0, torque_delay_s=0.0023),
                                     ConditioningOptions(cutoff_hz=4.0, smooth_sign=False)])
def test_blocks_with_margins_condition_as_the_whole_recording(options):
    """Every block conditioned with margins of its neighbours equals the whole recording conditioned at once (the
    filters' seams vanish), given the whole recording's gate."""
    rec = crank(60_000, f=0.7)
    whole = condition(rec, options)
    dt = rec.sample_period
    q_in, keep = rec.q, slice(whole.start, whole.start + whole.data_length)
    plan = BlockPlan(rec.n_samples, dt, whole.cutoff_hz, options, trim=whole.start)
    from dynid.signal.conditioning import filter_signals, _shift
    tau = _shift(rec.tau, options.torque_delay_s / dt) if options.torque_delay_s else rec.tau
    gate = gate_of(filter_signals(q_in, tau, None, None, cutoff=whole.cutoff_hz, dt=dt, options=options), keep, q_in,
                   whole.cutoff_hz, dt, options)
    plan = plan.with_gate(gate)
    parts = [c for c in (condition_block(e, plan) for e in extended_blocks(ArraySource(rec).blocks(7000), 9000,
                                                                            plan.margin)) if c is not None]
    assert len(parts) > 5
    # within 5 cutoff periods of the recording's ends the whole recording's own FFT filter wraps its two ends
    # together (through its padding) by ~1e-8 of the signal (~1e-6 in the acceleration, a second difference),
    # which the first and last blocks do differently: the fit's parameters move by ~1e-13 (test below)
    edge = int(5 / (whole.cutoff_hz * dt))
    inner = slice(edge, whole.data_length - edge)
    # the Coulomb columns' sign of a velocity within round-off of 0 (a sample at a reversal) may come out either way,
    # and the smoothed sign rings about its step for several filter lengths: compared 4 filter lengths away from
    # such samples, to what the ringing leaves there
    qd = whole.qd[:, 0]
    flips = np.abs(qd) < 1e-7 * np.abs(qd).max()
    near = np.convolve(flips, np.ones(2 * int(4 / (whole.cutoff_hz * dt)) + 1), mode="same") > 0
    assert near.mean() < 0.6
    for name in ("t", "q", "qd", "qdd", "tau", "tau_raw", "sign"):
        got = np.concatenate([getattr(c, name) for c in parts])
        if name == "sign":
            got, ref = got[~near], whole.sign[~near]
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-4)
            continue
        ref = getattr(whole, name)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-5 * np.abs(ref).max(), err_msg=name)
        np.testing.assert_allclose(got[inner], ref[inner], rtol=0, atol=1e-9 * np.abs(ref).max(), err_msg=name)
    for name in ("moving", "stuck", "near_stuck"):
        np.testing.assert_array_equal(np.concatenate([getattr(c, name) for c in parts]), getattr(whole, name),
                                      err_msg=name)


def test_extended_blocks_cover_the_recording_once_with_their_margins():
    rec = crank(10_001)
    seen = []
    for e in extended_blocks(ArraySource(rec).blocks(333), 1000, 150):
        np.testing.assert_array_equal(e.t, rec.t[e.first:e.first + e.t.shape[0]])
        assert e.lo == min(150, e.start) and e.t.shape[0] - e.hi == min(150, rec.n_samples - e.stop)
        seen.append((e.start, e.stop))
    assert seen[0][0] == 0 and seen[-1][1] == rec.n_samples
    assert all(a[1] == b[0] for a, b in zip(seen, seen[1:]))


def test_running_statistics_of_the_scan():
    rng = np.random.default_rng(3)
    steps = rng.choice([0.001, 0.00099, 0.00101, 0.002], size=100_001, p=[0.7, 0.1, 0.1, 0.1])
    m = StepMedian()
    for part in np.array_split(steps, 7):
        m.add(part)
    assert m.median() == np.median(steps)
    q = crank(50_000, f=1.3).q
    spec = Spectrum(1)
    for part in np.array_split(q, 6):
        spec.add(part)
    assert spec.exact
    assert default_cutoff(q, 1e-3) == pytest.approx(min(20 * spec.bandwidth(1e-3, np.array([True]))[0], 0.4e3))


# ---------------------------------------------------------------------------------------------- the whole

def test_streamed_crank_equals_the_whole_recording_fit():
    rec = crank(120_000)
    est = dynid.Identifier("rotary3")
    model, options = est.build_model(), est.options()
    a = identify(rec, Plant(model), options)
    b = identify_stream(ArraySource(rec), Plant(model), options)
    np.testing.assert_allclose(b.theta, a.theta, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.errors.max_relative, a.errors.max_relative, rtol=1e-9)
    np.testing.assert_allclose(b.errors.mean_relative, a.errors.mean_relative, rtol=1e-9)
    assert b.selections["selection"] == a.selections["selection"]
    assert b.summary.data_length == a.summary.data_length and b.summary.fit_rows == a.summary.fit_rows
    np.testing.assert_array_equal(b.summary.moving, a.summary.moving)
    np.testing.assert_allclose(b.cond.velocity_threshold, a.cond.velocity_threshold, rtol=1e-12)
    # (a recording the identification would hold in memory: the residual's correlation time is the whole one's)
    ok = np.isfinite(a.std)
    np.testing.assert_allclose(b.std[ok], a.std[ok], rtol=1e-8)
    assert [d.code for d in b.diagnostics] == [d.code for d in a.diagnostics]
    assert b.cond.data_length < 0.5 * a.cond.data_length        # the evidence: windows of the recording
    assert "read block by block" in b.notes[-1]


def test_streamed_arm_equals_the_whole_recording_fit():
    """Three joints, weighted least squares (per-joint weights from the residual)."""
    plant, rec = arm(90_000)
    options = dynid.Identifier("scara3", cutoff=None, friction="viscous+coulomb", regularize=0.0).options()
    a = identify(rec, plant, options)
    b = identify_stream(ArraySource(rec), plant, options)
    np.testing.assert_allclose(b.base_values, a.base_values, rtol=1e-8, atol=1e-10 * np.abs(a.base_values).max())
    np.testing.assert_allclose(b.lsq.weights, a.lsq.weights, rtol=1e-6)   # (residual std from R factors)
    np.testing.assert_allclose(b.errors.max_relative, a.errors.max_relative, rtol=1e-6)


def test_streamed_tx40_equals_the_whole_recording_fit(real_data, tmp_path):
    """The real Staubli TX40 log (motor side, a coupled wrist, every choice automatic, the physically consistent
    estimator): read block by block it gives the whole recording's choices and parameters."""
    tx40 = real_data / "staubli_tx40_figaroh"
    qm = np.loadtxt(tx40 / "pos_read_data.csv", delimiter=",", skiprows=1)
    taum = np.loadtxt(tx40 / "curr_data.csv", delimiter=",", skiprows=1)
    path = _csv(tmp_path, Recording(np.arange(qm.shape[0]) * 2e-4, qm, taum))
    config = {"transmission": {"gear_ratios": [32.0, 32.0, 45.0, -48.0, 45.0, 32.0], "coupling": [[6, 5, 32.0]],
                               "offsets": [0.0, -np.pi / 2, np.pi / 2, 0.0, 0.0, 0.0], "recorded": "motor"}}
    kw = dict(urdf=tx40 / "tx40.urdf", config=config)
    a = dynid.Identifier("serial", streaming="never", **kw).fit(path)
    b = dynid.Identifier("serial", streaming="always", **kw).fit(path)
    sa, sb = a.model_.info["selection"], b.model_.info["selection"]
    assert [sa[k] for k in ("cutoff_hz", "friction", "prior_regularization")] == \
        [sb[k] for k in ("cutoff_hz", "friction", "prior_regularization")]
    # (the scores agree but for the held-out rows where the robot rests at the end of the log: there the Coulomb
    # column's smoothed sign follows the sign of velocities within round-off of 0, which either filter may flip)
    np.testing.assert_allclose([c["held_out_nrmse"] for c in sb["candidates"]],
                               [c["held_out_nrmse"] for c in sa["candidates"]], rtol=0.01)
    assert a.result_.estimator == b.result_.estimator == "consistent"
    base_a, base_b = a.result_.base_values, b.result_.base_values
    np.testing.assert_allclose(base_b, base_a, rtol=1e-9, atol=1e-9 * np.abs(base_a).max())
    np.testing.assert_allclose(b.model_.theta, a.model_.theta, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(b.metrics_["max_relative_error"], a.metrics_["max_relative_error"], rtol=1e-9)


def test_fit_through_the_identifier_streams_a_long_recording_and_names_it():
    rec = crank(520_000)                          # above STREAM_VALUES: block by block
    est = dynid.Identifier("rotary3").fit(rec)
    assert est.metrics_["success"]
    assert any("read block by block" in n for n in est.model_.info["notes"])
    v = est.model_.values
    assert abs(v["I"] / 0.5 - 1) < 1e-3 and abs(v["M*g*A"] / 4.0 - 1) < 3e-3
    same = dynid.Identifier("rotary3", streaming="never").fit(rec)
    assert same.model_.conditioning["data_length"] == est.model_.conditioning["data_length"]
    assert same.result_.cond.data_length == est.model_.conditioning["data_length"]


def test_unsupported_options_say_so():
    rec = crank(60_000)
    for kw in ({"estimator": "irls"}, {"align": True}):
        with pytest.raises(ConfigError, match="not available for a recording read in blocks"):
            dynid.Identifier("rotary3", streaming="always", cutoff=None, friction="viscous+coulomb", **kw).fit(rec)


def test_a_user_cutoff_is_checked_on_the_scan():
    with pytest.raises(ConfigError, match="too low"):
        dynid.Identifier("rotary3", streaming="always", cutoff=1.0).fit(crank(60_000))


# ---------------------------------------------------------------------------------------------- files

def _csv(tmp_path, rec, name="run.csv", meta=None):
    path = tmp_path / name
    write_recording_csv(path, rec, meta=meta)
    return path


def test_csv_blocks_are_the_whole_files_rows(tmp_path):
    path = _csv(tmp_path, crank(30_000))
    whole = read_recording(path, n_joints=1)
    src = open_source(path, n_joints=1, require_tau=True)
    assert abs(src.n_samples_hint - 30_000) < 3000
    parts = list(src.blocks(1000))
    for name in ("t", "q", "tau"):
        np.testing.assert_array_equal(np.concatenate([getattr(b, name) for b in parts]), getattr(whole, name))
    cached = CachedSource(src)
    first = list(cached.blocks(1000))
    again = list(cached.blocks(1000))
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a.q, b.q)
        np.testing.assert_array_equal(a.tau, b.tau)


def test_softmc_units_and_a_motor_side_transmission_convert_each_block(tmp_path):
    from dynid.models.transmission import Transmission

    rec = crank(20_000)
    deg = Recording(rec.t, np.degrees(rec.q) * 50.0, rec.tau / 50.0, source="x")      # motor side, degrees
    path = _csv(tmp_path, deg)
    tr = Transmission.from_dict({"gear_ratios": [50.0], "recorded": "motor"})
    kw = dict(n_joints=1, joint_kinds=["rotary"], units="softmc", require_tau=True, transmission=tr)
    whole = read_recording(path, **kw)
    got = np.concatenate([b.q for b in open_source(path, **kw).blocks(777)])
    np.testing.assert_allclose(got, whole.q, rtol=1e-15)
    np.testing.assert_allclose(whole.q, rec.q, atol=1e-7)


def test_parquet_and_rtde_blocks_are_the_whole_files_rows(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rec = crank(25_000)
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"t": rec.t, "q1": rec.q[:, 0], "tau1": rec.tau[:, 0]}), path)
    whole = read_recording(path, n_joints=1)
    src = open_source(path, n_joints=1, require_tau=True)
    assert src.n_samples_hint == 25_000
    np.testing.assert_array_equal(np.concatenate([b.q for b in src.blocks(999)]), whole.q)
    rtde = tmp_path / "rtde.csv"
    rows = np.column_stack([rec.t, rec.q, rec.tau])
    body = "\n".join(" ".join(f"{v:.9g}" for v in r) for r in rows)
    rtde.write_text("timestamp actual_q_0 target_moment_0\n" + body + "\n")
    whole = read_recording(rtde, n_joints=1)
    got = list(open_source(rtde, n_joints=1, require_tau=True).blocks(999))
    np.testing.assert_array_equal(np.concatenate([b.tau for b in got]), whole.tau)


def test_a_bad_cell_deep_in_a_long_file_is_named_by_its_row(tmp_path):
    rec = crank(400_000)
    path = _csv(tmp_path, rec)
    lines = path.read_text().splitlines()
    for bad, expect in (("nan", "column tau1: value nan at row 345679 is not finite"),
                        ("oops", "column tau1: row 345679 holds 'oops', not a number")):
        fields = lines[1 + 345678].split(",")
        damaged = lines[:1 + 345678] + [",".join(fields[:2] + [bad])] + lines[1 + 345679:]
        out = tmp_path / f"bad_{bad}.csv"
        out.write_text("\n".join(damaged) + "\n")
        with pytest.raises((InputDataError, FileFormatError), match=expect):
            dynid.Identifier("rotary3", streaming="always").fit(out)


def test_time_that_goes_back_across_blocks_is_named(tmp_path):
    rec = crank(300_000)
    t = rec.t.copy()
    t[200_000:] -= 1.0                      # the clock jumps back 1 s at row 200001
    path = tmp_path / "back.csv"
    rows = np.column_stack([t, rec.q, rec.tau])
    path.write_text("t,q1,tau1\n" + "\n".join(",".join(f"{v:.10g}" for v in r) for r in rows) + "\n")
    with pytest.raises(InputDataError, match="column t: time goes backwards at row 200001"):
        dynid.Identifier("rotary3", streaming="always").fit(path)


@pytest.mark.slow
def test_a_million_row_periodic_crank_log_identifies_from_the_command_line(tmp_path):
    """The issue's case: one 2.5 Hz sine at 1 kHz, 1 M rows: the fit used to keep every 100th row (4 phases of
    the motion) and failed with I = 6.4 for 0.5."""
    path = _csv(tmp_path, crank(1_000_000))
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "dynid.cli.main", "identify", str(path), "--model", "rotary3",
                          "--no-report", "--out", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    result = json.loads((out / "result.json").read_text())
    v = dict(zip(result["parameters"]["names"], result["parameters"]["values"]))
    assert abs(v["I"] / 0.5 - 1) < 0.01 and abs(v["M*g*A"] / 4.0 - 1) < 0.01
    assert result["conditioning"]["raw_length"] == 1_000_000
    assert result["metrics"]["fit_rows"] > 400_000                        # every sample the band needs
    head = json.loads((out / "IDNT1.REC").read_text().splitlines()[0][1:])
    assert head["data_length"] == result["conditioning"]["data_length"] and "windows_s" in head


def test_a_long_log_with_repeated_rows_and_skipped_cycles_says_its_time_base_was_not_repaired():
    """Read in blocks, the time base is not put back on the controller's grid (a recording in memory is): the run
    says so, with the counts, instead of filtering the rows as equally spaced without a word."""
    rec = crank(120_000)
    keep = np.ones(rec.n_samples, dtype=bool)
    keep[1000::997] = False                                    # skipped cycles
    t, q, tau = rec.t[keep], rec.q[keep].copy(), rec.tau[keep]
    rep = np.arange(1500, t.size, 1499)
    q[rep] = q[rep - 1]                                        # rows repeating the previous one
    est = dynid.Identifier("rotary3", streaming="always", cutoff=None, friction="viscous+coulomb")
    est.fit(Recording(t, q, tau, source="logger"))
    tb = est.model_.conditioning["time_base"]
    assert tb["repaired"] is False and tb["reason"] == "read in blocks"
    note = next(n for n in est.model_.info["notes"] if n.startswith("time base not repaired"))
    assert int(note.split(": ")[1].split(" rows")[0]) >= rep.size            # (and a few equal encoder counts)
    assert f"{(~keep).sum()} controller cycles were skipped" in note


def test_npz_blocks_are_the_whole_files_rows(tmp_path):
    """An .npz recording is read a block of rows at a time from its members (compressed or not); one whose arrays
    are in Fortran order is read whole."""
    rec = crank(30_000)
    qd = np.gradient(rec.q, rec.t, axis=0)
    for save in (np.savez, np.savez_compressed):
        path = tmp_path / f"{save.__name__}.npz"
        save(path, t=rec.t, q=rec.q, tau=rec.tau, dq=qd, meta=np.array("robot: r1"))
        whole = read_recording(path, n_joints=1)
        src = open_source(path, n_joints=1, require_tau=True)
        assert src.n_samples_hint == 30_000 and dict(src.meta) == dict(whole.meta)
        blocks = list(src.blocks(4321))
        for name in ("t", "q", "tau", "qd"):
            np.testing.assert_array_equal(np.concatenate([getattr(b, name) for b in blocks]), getattr(whole, name))
    fortran = tmp_path / "fortran.npz"
    np.savez(fortran, t=rec.t, q=np.asfortranarray(np.column_stack([rec.q, rec.q])),
             tau=np.asfortranarray(np.column_stack([rec.tau, rec.tau])))
    assert open_source(fortran, n_joints=2) is None


def test_a_long_recordings_prediction_block_by_block_equals_the_whole(tmp_path, monkeypatch):
    """dynid predict of a long log is written block by block (bounded memory): the same torques and errors."""
    import dynid.signal.stream

    rec = crank(60_000)
    model = dynid.Identifier("rotary3", cutoff=None, friction="viscous+coulomb").fit(rec).model_
    whole = model.predict(rec)
    with monkeypatch.context() as m:
        m.setattr(dynid.signal.stream, "BLOCK_VALUES", 8192)           # (blocks of 8 192 rows)
        parts = list(model.predict_blocks(ArraySource(crank(60_000, seed=0))))
    assert len(parts) > 1
    np.testing.assert_array_equal(np.concatenate([p.rows for p in parts]), whole.rows)
    got, peak = np.concatenate([p.tau for p in parts]), np.abs(whole.tau).max()
    edge = int(5 / (model.cutoff_hz * 1e-3))                # (the whole filter's own wrap at the ends, see above)
    np.testing.assert_allclose(got[edge:-edge], whole.tau[edge:-edge], rtol=0, atol=1e-9 * peak)
    np.testing.assert_allclose(got, whole.tau, rtol=0, atol=1e-5 * peak)
    # the command line on a file long enough to be read in blocks
    long = crank(520_000)
    path = _csv(tmp_path, long)
    model.save(tmp_path / "m")
    out = tmp_path / "pred.csv"
    run = subprocess.run([sys.executable, "-m", "dynid.cli.main", "predict", str(tmp_path / "m" / "result.json"),
                          str(path), "--out", str(out), "--json"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    got = np.loadtxt(out, delimiter=",", skiprows=1)
    ref = model.predict(long)
    np.testing.assert_allclose(got[:, 0], ref.t, rtol=1e-8)
    np.testing.assert_allclose(got[:, 1], ref.tau[:, 0], rtol=0, atol=1e-6 * np.abs(ref.tau).max())
    report = json.loads(run.stdout)["validation"]
    assert report["rows"] == ref.t.size
    assert report["relative_error"] == pytest.approx(ref.relative_error(), rel=1e-6)
