"""The recording reader: formats, units, and every class of bad input (one clear error, exit 2, no files)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynid.cli.main import main
from dynid.errors import DynidError
from dynid.io.readers import read_recording, write_recording_csv
from dynid.recording import Recording


def good_columns(n=2000, dt=1e-3):
    t = np.arange(n) * dt
    q = 1.5 * np.sin(2 * np.pi * 0.7 * t)
    tau = 0.4 * (-(2 * np.pi * 0.7) ** 2) * q - 12.0 * np.sin(q) + 0.5 * np.cos(2 * np.pi * 0.7 * t)
    return {"t": t, "q1": q, "tau1": tau}


def write_csv(path, cols, meta=None):
    lines = [f"# {k}: {v}" for k, v in (meta or {}).items()]
    names = list(cols)
    lines.append(",".join(names))
    rows = np.column_stack([np.asarray(cols[n], dtype=float) for n in names])
    lines += [",".join(repr(float(x)) for x in r) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_reads_csv_with_metadata_any_column_order_and_extra_columns(tmp_path):
    cols = good_columns()
    f = write_csv(tmp_path / "r.csv", {"tau1": cols["tau1"], "note": cols["t"] * 0, "t": cols["t"], "q1": cols["q1"]},
                  meta={"robot": "crank", "controller": "softMC"})
    rec = read_recording(f, n_joints=1)
    assert rec.meta["robot"] == "crank" and rec.n_samples == 2000
    np.testing.assert_array_equal(rec.q[:, 0], cols["q1"])


def test_softmc_units_convert_degrees_and_millimetres(tmp_path):
    cols = good_columns()
    f = write_csv(tmp_path / "deg.csv", {"t": cols["t"], "q1": np.degrees(cols["q1"]), "tau1": cols["tau1"]})
    rec = read_recording(f, n_joints=1, joint_kinds=["rotary"], units="softmc")
    np.testing.assert_allclose(rec.q[:, 0], cols["q1"], rtol=1e-12)
    f = write_csv(tmp_path / "mm.csv", {"t": cols["t"], "q1": 200 * cols["q1"], "tau1": cols["tau1"],
                                         "dq1": 200 * np.gradient(cols["q1"], 1e-3)})
    rec = read_recording(f, n_joints=1, joint_kinds=["linear"], units="softmc")
    np.testing.assert_allclose(rec.q[:, 0], 0.2 * cols["q1"], rtol=1e-12)
    assert rec.qd is not None and np.allclose(rec.qd[:, 0], 0.2 * np.gradient(cols["q1"], 1e-3))


def test_npz_and_csv_round_trip(tmp_path):
    cols = good_columns()
    rec = Recording(cols["t"], cols["q1"], cols["tau1"], meta={"a": "b"})
    write_recording_csv(tmp_path / "x.csv", rec)
    back = read_recording(tmp_path / "x.csv", n_joints=1)
    np.testing.assert_allclose(back.q, rec.q, rtol=1e-9)
    assert back.meta["a"] == "b"
    np.savez(tmp_path / "x.npz", t=cols["t"], q=cols["q1"], tau=cols["tau1"])
    back = read_recording(tmp_path / "x.npz", n_joints=1)
    np.testing.assert_array_equal(back.tau[:, 0], cols["tau1"])


def test_parquet_needs_its_extra_or_reads(tmp_path):
    pa = pytest.importorskip("pyarrow", reason="pyarrow (extra 'parquet') not installed")
    import pyarrow.parquet as pq

    cols = good_columns()
    pq.write_table(pa.table(cols), tmp_path / "x.parquet")
    assert read_recording(tmp_path / "x.parquet", n_joints=1).n_samples == 2000


# ----------------------------------------------------------------------------- bad inputs via the CLI

def _bad(tmp_path, name):
    cols = good_columns()
    f = tmp_path / "bad.csv"
    if name == "nan":
        cols["tau1"][700] = np.nan
        write_csv(f, cols)
        return f, "column tau1.*row 701"
    if name == "inf":
        cols["q1"][5] = np.inf
        write_csv(f, cols)
        return f, "column q1"
    if name == "time_backwards":
        cols["t"][900] = cols["t"][850]
        write_csv(f, cols)
        return f, "column t.*backwards"
    if name == "time_duplicate":
        cols["t"][901] = cols["t"][900]
        write_csv(f, cols)
        return f, "column t.*repeats"
    if name == "no_torque":
        del cols["tau1"]
        write_csv(f, cols)
        return f, "no torque columns"
    if name == "extra_joint":
        cols["q2"], cols["tau2"] = cols["q1"], cols["tau1"]
        write_csv(f, cols)
        return f, "q2.*extra"
    if name == "no_positions":
        del cols["q1"]
        write_csv(f, cols)
        return f, "no joint position columns"
    if name == "few_samples":
        write_csv(f, {k: v[:10] for k, v in cols.items()})
        return f, "only 10 samples"
    if name == "empty":
        f.write_text("")
        return f, "empty"
    if name == "header_only":
        f.write_text("t,q1,tau1\n")
        return f, "no data rows"
    if name == "text_value":
        write_csv(f, cols)
        lines = f.read_text().splitlines()
        lines[300] = lines[300].replace(lines[300].split(",")[2], "abc", 1)
        f.write_text("\n".join(lines))
        return f, "column tau1: row 300 holds 'abc'"
    if name == "ragged":
        write_csv(f, cols)
        lines = f.read_text().splitlines()
        lines[40] += ",1.0"
        f.write_text("\n".join(lines))
        return f, "row 40 has 4 fields"
    if name == "never_moves":
        cols["q1"][:] = 0.3
        write_csv(f, cols)
        return f, "column q1.*never moves"
    if name == "degrees_as_si":
        cols["q1"] = np.degrees(cols["q1"]) * 2
        write_csv(f, cols)
        return f, "column q1.*looks like degrees"
    if name == "milliseconds":
        cols["t"] = cols["t"] * 1000
        write_csv(f, cols)
        return f, "column t.*milliseconds"
    if name == "binary":
        f.write_bytes(bytes(range(256)) * 4)
        return f, "not a UTF-8|NUL"
    if name == "missing":
        return tmp_path / "nope.csv", "no such file"
    if name == "no_header":
        write_csv(f, cols)
        f.write_text("\n".join(f.read_text().splitlines()[1:]))
        return f, "not a header"
    raise AssertionError(name)


BAD = ["nan", "inf", "time_backwards", "time_duplicate", "no_torque", "extra_joint", "no_positions", "few_samples",
       "empty", "header_only", "text_value", "ragged", "never_moves", "degrees_as_si", "milliseconds", "binary",
       "missing", "no_header"]


@pytest.mark.parametrize("case", BAD)
def test_bad_input_gives_one_clear_message_exit_2_and_no_files(tmp_path, capsys, case):
    import re

    f, pattern = _bad(tmp_path, case)
    out = tmp_path / "out"
    code = main(["identify", str(f), "--model", "rotary3", "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert not out.exists()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines[0].startswith("dynid: error: ") and "Traceback" not in err
    assert len(lines) <= 2  # the message and its hint
    assert str(f.name) in lines[0]
    assert re.search(pattern, err), err


# ----------------------------------------------------------------------------- fuzzing

_cell = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr), st.sampled_from(["", "nan", "x", "1e400", "-", " "]),
                  st.integers(-5, 5).map(str))
_header = st.lists(st.sampled_from(["t", "q1", "tau1", "q2", "tau2", "dq1", "ddq1", "q3", "x", "", "t"]), min_size=0, max_size=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(header=_header, rows=st.lists(st.lists(_cell, min_size=0, max_size=7), min_size=0, max_size=70),
       comment=st.booleans())
def test_fuzzed_csv_never_raises_anything_but_dynid_errors(tmp_path, header, rows, comment):
    f = tmp_path / "fuzz.csv"
    text = ("# key: value\n" if comment else "") + ",".join(header) + "\n" + "\n".join(",".join(r) for r in rows)
    f.write_text(text)
    try:
        rec = read_recording(f, n_joints=1)
    except DynidError:
        return
    assert rec.q.shape[1] == 1 and np.isfinite(rec.q).all() and np.all(np.diff(rec.t) > 0)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=600), suffix=st.sampled_from([".csv", ".npz", ".txt"]))
def test_fuzzed_bytes_never_raise_anything_but_dynid_errors(tmp_path, data, suffix):
    f = tmp_path / f"fuzz{suffix}"
    f.write_bytes(data)
    with pytest.raises(DynidError):
        read_recording(f)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(50, 400), nan_at=st.one_of(st.none(), st.integers(0, 49)),
       scale=st.sampled_from([1e-9, 1.0, 1e3]))
def test_fuzzed_numeric_recordings_through_the_cli_exit_cleanly(tmp_path, n, nan_at, scale):
    rng = np.random.default_rng(n)
    t = np.cumsum(rng.uniform(0.5e-3, 1.5e-3, n))
    q = scale * np.cumsum(rng.normal(size=n)) * 1e-2
    tau = rng.normal(size=n)
    if nan_at is not None:
        tau[nan_at] = np.nan
    f = write_csv(tmp_path / "n.csv", {"t": t, "q1": q, "tau1": tau})
    code = main(["identify", str(f), "--model", "rotary1", "--out", str(tmp_path / "o"), "--quiet"])
    assert code in (0, 1, 2)


def test_a_byte_order_mark_before_the_preamble_or_the_header_changes_nothing(tmp_path):
    body = "t,q1,tau1\n" + "".join(f"{k * 0.001:.3f},{np.sin(k / 7):.9g},{np.cos(k / 5):.9g}\n" for k in range(60))
    plain = tmp_path / "plain.csv"
    plain.write_text("# robot: r1\n" + body, encoding="utf-8")
    ref = read_recording(plain)
    for name, text in (("bom_meta.csv", "\ufeff# robot: r1\n" + body), ("bom_header.csv", "\ufeff" + body)):
        p = tmp_path / name
        p.write_bytes(text.encode("utf-8"))
        rec = read_recording(p)
        np.testing.assert_array_equal(rec.t, ref.t)
        np.testing.assert_array_equal(rec.q, ref.q)
        np.testing.assert_array_equal(rec.tau, ref.tau)
    bad = tmp_path / "latin1.csv"
    bad.write_bytes(body.encode() + b"0.061,0.5,\xe9\n")
    with pytest.raises(DynidError, match="not a UTF-8 text file"):
        read_recording(bad)


def test_a_recording_pickles_with_its_metadata(tmp_path):
    """A Recording crosses to another process (a Dask worker, a process pool) as it is: arrays, metadata, source."""
    import pickle

    t = np.arange(5) * 1e-3
    rec = Recording(t, np.ones((5, 2)) * t[:, None], np.zeros((5, 2)), meta={"robot": "R1"}, source="a.csv")
    back = pickle.loads(pickle.dumps(rec))
    for name in ("t", "q", "tau"):
        np.testing.assert_array_equal(getattr(back, name), getattr(rec, name))
        assert not getattr(back, name).flags.writeable                     # as read-only as the original
    assert back.qd is None and dict(back.meta) == {"robot": "R1"} and back.source == "a.csv"
    with pytest.raises(TypeError):
        back.meta["robot"] = "R2"                                           # still a read-only view
