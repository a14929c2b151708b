"""The dependency-free plotting: ticks, envelope and density reductions, SVG output."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dynid.report._spec import FigureSpec, Panel, Trace, density, envelope
from dynid.report._svg import figure_size, figure_svg, nice_ticks, panel_limits, tick_labels

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@given(arrays(np.float64, st.integers(1, 3000), elements=finite), st.integers(1, 400))
@settings(max_examples=60, deadline=None)
def test_envelope_keeps_every_extreme(y, n_buckets):
    """Each bucket's min and max survive, in time order, in at most 2 points per bucket."""
    x = np.arange(y.size, dtype=float)
    xe, ye = envelope(x, y, n_buckets)
    assert xe.size == ye.size <= max(y.size if y.size <= 2 * n_buckets else 2 * n_buckets, 1)
    assert np.all(np.diff(xe) > 0)
    assert ye.min() == y.min() and ye.max() == y.max()
    np.testing.assert_array_equal(ye, y[xe.astype(int)])  # only real samples, at their own times


@given(st.floats(-1e4, 1e4), st.floats(1e-6, 1e4))
@settings(max_examples=100, deadline=None)
def test_nice_ticks_are_round_and_inside(lo, span):
    hi = lo + span
    t = nice_ticks(lo, hi)
    assert t.size >= 1 and np.all(t >= lo - 1e-9 * span) and np.all(t <= hi + 1e-9 * span)
    if t.size > 1:
        step = np.diff(t)
        # equal steps, up to the float resolution at the ticks' magnitude (1024 + k * 2e-7 rounds at 2e-13)
        np.testing.assert_allclose(step, step[0], rtol=1e-9, atol=8 * np.spacing(np.abs(t).max()))
        mantissa = step[0] / 10 ** np.floor(np.log10(step[0]))
        assert any(np.isclose(mantissa, m) for m in (1, 2, 2.5, 5, 10))
        assert len(set(tick_labels(t))) == t.size  # labels tell the ticks apart


def test_tick_labels():
    assert tick_labels(np.array([-0.5, 0.0, 0.5])) == ["-0.5", "0.0", "0.5"]
    assert tick_labels(np.array([0.0, 2.5, 5.0])) == ["0.0", "2.5", "5.0"]
    assert tick_labels(np.array([0.0, 100.0, 200.0])) == ["0", "100", "200"]


def test_density_keeps_one_dot_per_cell():
    rng = np.random.default_rng(3)
    x, y = rng.uniform(0, 1, 100_000), rng.uniform(0, 1, 100_000)
    xc, yc = density(x, y, (50, 20))
    assert xc.size == 50 * 20 and xc.min() > 0 and xc.max() < 1


def test_reference_lines_do_not_rescale_the_data():
    p = Panel((Trace("line", [0, 1], [0, 1]), Trace("hline", y=[100.0], autoscale=False)))
    assert panel_limits(p)[1][1] < 2


def test_figure_svg_is_well_formed_and_escaped():
    fig = FigureSpec("f", 'a <title> & "quotes"', (
        Panel((Trace("line", [0, 1, np.nan, 3], [1, 2, 3, 4], label="a<b"), Trace("dots", [1.0], [2.0]),
               Trace("hband", y=[0, 1]), Trace("vspans", [[0.5, 1.0]]), Trace("vline", x=[2.0]),
               Trace("bars", [0, 1, 2], [3, 4])), xlabel="x & y", ylabel="y", title="t"),
        Panel((Trace("hbars", x=[1.0, np.nan], labels=("p1", "p2")),))))
    root = ET.fromstring(figure_svg(fig))
    assert (int(root.get("width")), int(root.get("height"))) == figure_size(fig)
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert 'a <title> & "quotes"' in texts and "a<b" in texts and "p2" in texts


@pytest.mark.parametrize("kwargs, match", [
    ({"kind": "pie"}, "kind must be one of"),
    ({"kind": "line", "x": [1, 2], "y": [1]}, "x has shape"),
    ({"kind": "bars", "x": [0, 1], "y": [1, 2]}, "2 edges for 2 heights"),
    ({"kind": "hbars", "x": [1.0], "labels": ()}, "1 values for 0 labels"),
])
def test_trace_checks_its_data(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Trace(**kwargs)
