"""The compiled CSV parser gives numpy's loadtxt's numbers bit for bit, and hands every file it cannot read
exactly back to numpy (None), so the reader's messages stay numpy-based."""

from __future__ import annotations

import os

import numpy as np
import pytest

from dynid.io._fastparse import parse_numeric_csv, parser_available
from dynid.io.readers import read_recording

needs_parser = pytest.mark.skipif(not parser_available(), reason="the compiled CSV parser is not built here")


def test_built_where_required():
    """DYNID_REQUIRE_KERNEL=1 (CI, which has a C compiler): a missing parser fails instead of skipping."""
    if os.environ.get("DYNID_REQUIRE_KERNEL") == "1":
        assert parser_available(), "dynid.io._csv_kernel was not built"


def _loadtxt(path, skip):
    return np.loadtxt(path, delimiter=",", skiprows=skip, comments="#", encoding="utf-8-sig", ndmin=2)


def _same_bits(a, b):
    assert a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64))


@needs_parser
@pytest.mark.parametrize("fmt", ["%+.8e", "%.17g", "%.3f", "%g", "%.12e", "%d", "%.25f", "%.20e", "%.15E"])
def test_values_are_numpys_bit_for_bit(tmp_path, fmt):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(3000, 5)) * 10.0 ** rng.integers(-30, 30, size=(3000, 5))
    x[::7, 1] = rng.integers(-10**6, 10**6, size=x[::7, 1].shape)    # integers
    x[5, 2], x[6, 2], x[7, 2], x[8, 2] = 0.0, -0.0, 4.9e-320, 1.7e308     # zeros, a denormal, near the top
    if fmt == "%d":
        x = np.round(x).clip(-1e15, 1e15)
    path = tmp_path / "r.csv"
    np.savetxt(path, x, fmt=fmt, delimiter=",", header="a,b,c,d,e", comments="")
    _same_bits(parse_numeric_csv(path, 1, 5, threads=1), _loadtxt(path, 1))


@needs_parser
def test_layout_variants(tmp_path):
    """Preamble lines, a BOM, CRLF line ends, spaces and tabs around fields, blank and comment lines, a
    comment after the numbers, no final newline; and the two-thread split of a large body."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(60000, 3))
    rows = [f" {a:+.8e},\t{b:.17g} ,{c:.6f}" for a, b, c in x]
    rows[10] += "  # a comment"
    rows.insert(20, "")
    rows.insert(30, "# a comment line")
    text = "\ufeff# robot: R1\n# units: si\nt,q1,tau1\n" + "\r\n".join(rows)
    path = tmp_path / "r.csv"
    path.write_text(text, encoding="utf-8")
    got = parse_numeric_csv(path, 3, 3, threads=2)
    _same_bits(got, _loadtxt(path, 3))
    assert got.shape == (60000, 3)


@needs_parser
@pytest.mark.parametrize("bad", ["nan", "inf", "", '"1.0"', "0x1p3", "1.0.0", "1e", "--1", "1_000", "abc", "1,2"])
def test_anything_else_goes_back_to_numpy(tmp_path, bad):
    path = tmp_path / "r.csv"
    path.write_text(f"t,q1,tau1\n0,1,2\n1,{bad},3\n2,3,4\n")
    assert parse_numeric_csv(path, 1, 3, threads=1) is None


@needs_parser
def test_the_reader_uses_it_with_the_same_result(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    t = np.arange(2000) * 1e-3
    path = tmp_path / "r.csv"
    cols = np.column_stack([t, np.sin(t), rng.normal(size=t.size)])
    np.savetxt(path, cols, fmt="%+.8e", delimiter=",", header="t,q1,tau1", comments="")
    fast = read_recording(path)
    monkeypatch.setenv("DYNID_NO_KERNEL", "1")
    import dynid.io._fastparse as fp
    fp._parser.cache_clear()
    try:
        assert not fp.parser_available()
        slow = read_recording(path)
    finally:
        fp._parser.cache_clear()
    for name in ("t", "q", "tau"):
        _same_bits(getattr(fast, name), getattr(slow, name))
