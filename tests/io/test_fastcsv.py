"""The vectorised CSV formatter: same text as Python's %+.8e, fixed 16-byte cells, specials readable
(cells with a 3-digit exponent keep 8 significant digits)."""

from __future__ import annotations

import io

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dynid.io._fastcsv import format_rows


def parse(text: bytes) -> np.ndarray:
    return np.loadtxt(io.BytesIO(text), delimiter=",", ndmin=2)


def test_matches_python_formatting_cell_by_cell(rng):
    a = rng.normal(size=(500, 7)) * 10.0 ** rng.integers(-90, 90, size=(500, 7))
    a[0, 0], a[1, 1], a[2, 2] = 9.9999999999, 0.1, 1e5  # decade edges and rounding carries
    cells = format_rows(a).decode().replace("\n", ",").split(",")[:-1]
    expected = [f"{v:+.8e}" for v in a.ravel()]
    assert cells == expected


def test_special_values_round_trip():
    a = np.array([[0.0, -0.0, np.nan, np.inf, -np.inf, 1e-300, -2.5e150]])
    back = parse(format_rows(a))
    assert back[0, 0] == 0 and back[0, 1] == 0 and np.isnan(back[0, 2])
    assert back[0, 3] == np.inf and back[0, 4] == -np.inf
    np.testing.assert_allclose(back[0, 5:], a[0, 5:], rtol=1e-7)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 20), st.integers(1, 6)),
              elements=st.floats(allow_nan=True, allow_infinity=True, width=64)))
def test_any_array_reads_back_to_9_significant_digits(a):
    back = parse(format_rows(a))
    fin = np.isfinite(a)
    np.testing.assert_array_equal(np.isnan(back), np.isnan(a))
    np.testing.assert_array_equal(back[np.isinf(a)], a[np.isinf(a)])
    tiny = np.abs(a) < 1e-290  # subnormal range: only the order of magnitude is meaningful
    wide = (np.abs(a) >= 1e99) | (np.abs(a) < 1e-98)  # 3-digit exponents: 8 significant digits fit the cell
    ok = fin & ~tiny & ~wide
    np.testing.assert_allclose(back[ok], a[ok], rtol=5.1e-9, atol=0)
    ok = fin & ~tiny & wide
    np.testing.assert_allclose(back[ok], a[ok], rtol=5.1e-8, atol=0)


def test_blocks_on_two_threads_and_any_prefix_alignment_give_python_formatting(rng):
    a = rng.normal(size=(3000, 11)) * 10.0 ** rng.integers(-40, 40, size=(3000, 11))
    a[7, 3], a[2000, 0] = 0.0, np.nan
    cells = [f"{v:+.8e}" for v in a.ravel()]
    cells[7 * 11 + 3], cells[2000 * 11] = "0" + " " * 14, "nan" + " " * 12
    expected = "".join(c + ("\n" if (k + 1) % 11 == 0 else ",") for k, c in enumerate(cells)).encode()
    for prefix in (b"", b"h", b"# head\nt,q\n", b"12345678"):       # the cells land at every byte alignment
        for threads in (1, 2):
            text = format_rows(a, prefix=prefix, chunk_cells=1 << 12, threads=threads)   # 8 blocks
            assert isinstance(text, bytearray)
            assert text == prefix + expected


def test_rec_rows_formatted_ahead_give_the_same_file(rng):
    from dynid.io.rec import REC_HEADROOM, SIGNALS, format_rec, format_rec_rows, read_rec

    t = np.arange(500) * 1e-3
    channels = {s: rng.normal(size=(500, 2)) for s in SIGNALS}
    header = {"element": "A", "cutoff_hz": 10.0}
    plain = bytes(format_rec(t, channels, header))
    assert bytes(format_rec(t, channels, header, rows=format_rec_rows(t, channels))) == plain
    long_header = {"element": "A", "note": "x" * (REC_HEADROOM + 10)}      # longer than the room kept for it
    assert bytes(format_rec(t, channels, long_header, rows=format_rec_rows(t, channels, threads=1))) == bytes(
        format_rec(t, channels, long_header))
    head, tt, back = _read_rec_bytes(plain, read_rec)
    assert head == header
    np.testing.assert_allclose(tt, t, rtol=5e-9, atol=1e-15)
    np.testing.assert_allclose(back["tcmd"], channels["tcmd"], rtol=5.1e-9)


def _read_rec_bytes(data: bytes, read_rec):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "IDNT1.REC"
        p.write_bytes(data)
        return read_rec(p)


def test_compiled_cells_are_the_vectorised_formatters_bytes(rng, monkeypatch):
    """The compiled kernel writes each cell by the numpy formatter's operations: the same bytes, on decade edges,
    rounding carries, subnormals, 3-digit exponents, zeros of both signs, NaN and inf, at any alignment."""
    import dynid.io._fastcsv as fastcsv

    if fastcsv._kernel() is None:
        import os

        import pytest

        assert os.environ.get("DYNID_REQUIRE_KERNEL") != "1", "dynid.io._csv_kernel was not built"
        pytest.skip("compiled kernel not built here (CI builds it: DYNID_REQUIRE_KERNEL=1)")
    with np.errstate(over="ignore"):                                  # (some become inf: fine, they are cells too)
        a = rng.normal(size=40_000) * 10.0 ** rng.integers(-320, 309, size=40_000)
    edges = [9.9999999949, 9.999999995, 9.9999999951, 0.5, 1.0, 1e-99, 9.99999999951e98, 1e99, 9.999999995e-99,
             5e-324, 2.2e-308, 1.7976931348623157e308, 0.0, -0.0, np.nan, np.inf, -np.inf, 123456789.5, 0.1]
    a = np.concatenate([a, edges, -np.array(edges), np.round(rng.normal(size=3_000), 9)])
    a = a[: a.size // 9 * 9].reshape(-1, 9)
    compiled = {(p, t): bytes(format_rows(a, prefix=p, chunk_cells=1 << 12, threads=t))
                for p in (b"", b"abc") for t in (1, 2)}
    monkeypatch.setattr(fastcsv, "_kernel", lambda: None)
    for (p, t), text in compiled.items():
        assert text == bytes(format_rows(a, prefix=p, chunk_cells=1 << 12, threads=t))


def test_rec_rows_in_two_steps_are_the_rows_of_one(rng):
    """The REC's recorded signals formatted while the model is fitted, the model's after: the same bytes as all at
    once (zeros and NaN included), and cells can be written column by column in any order."""
    import os

    import pytest

    from dynid.io._fastcsv import format_columns_into
    from dynid.io.rec import MODEL_SIGNALS, SIGNALS, finish_rec_rows, format_rec_rows, start_rec_rows

    t = np.arange(700) * 1e-3
    channels = {s: rng.normal(size=(700, 3)) * 10.0 ** rng.integers(-4, 4, size=(700, 3)) for s in SIGNALS}
    channels["tfb"][5, 1], channels["te"][9, 2], channels["pfb"][0, 0] = 0.0, np.nan, -0.0
    started = start_rec_rows(t, {s: v for s, v in channels.items() if s not in MODEL_SIGNALS})
    if started is None:
        assert os.environ.get("DYNID_REQUIRE_KERNEL") != "1", "dynid.io._csv_kernel was not built"
        pytest.skip("compiled kernel not built here")
    two = finish_rec_rows(started, {s: channels[s] for s in MODEL_SIGNALS})
    assert bytes(two) == bytes(format_rec_rows(t, channels))
    a = rng.normal(size=(50, 4))
    text = bytearray(b"#" + bytes(16 * 50 * 4))
    for c in (3, 0, 2, 1):
        assert format_columns_into(text, 1, a[:, [c]], [c], 4, chunk_cells=7)
    assert text == format_rows(a, prefix=b"#")
    with pytest.raises(ValueError, match="cell numbers"):
        format_columns_into(text, 1, a[:, :2], [0, 4], 4)
