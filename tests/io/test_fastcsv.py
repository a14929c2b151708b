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
