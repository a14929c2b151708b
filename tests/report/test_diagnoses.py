"""Deliberately bad identifications produce their diagnosis in the report, each with its evidence plot.

The runs (conftest.py) are a too slow motion, a saturated torque feedback and the wrong model
(rotary1 on a vertical crank arm). For each, the report must show a section for the diagnosis that
result.json carries, with the message and an evidence figure inside that section.
"""

from __future__ import annotations

import pytest

from ._page import parse_page
from .conftest import result_of


def diagnosis_section(folder, code):
    detail = [d for d in result_of(folder)["metrics"]["diagnostics_detail"] if d["code"] == code]
    assert detail, f"the identification did not diagnose {code!r}"
    page = parse_page(folder / "report.html")
    assert code in page.articles, f"no {code!r} section in the report"
    figures = [i for i in page.imgs if i.article == code]
    return detail[0], page.articles[code][0], figures, page


@pytest.mark.parametrize("run, code", [
    ("too_slow_run", "too_slow"),
    ("saturated_run", "saturation"),
    ("wrong_model_run", "systematic_residual"),
])
def test_bad_identification_is_diagnosed_in_the_report(request, run, code):
    folder = request.getfixturevalue(run)
    detail, text, figures, page = diagnosis_section(folder, code)
    assert detail["message"] in text
    assert len(figures) == 1 and page.svg(figures[0]) is not None
    # the banner does not call a run with an error- or warning-level finding a clean pass
    verdict = page.text.split('id="verdict"', 1)[1].split("</section>", 1)[0]
    assert "PASSED</div>" not in verdict


def test_saturation_plot_shows_the_plateau_window(saturated_run):
    detail, _, figures, page = diagnosis_section(saturated_run, "saturation")
    svg = page.svg(figures[0])
    texts = " ".join(t.text or "" for t in svg.iter("{http://www.w3.org/2000/svg}text"))
    ev = detail["evidence"]
    assert f"plateau at {ev['level']:.4g}" in texts and "measured tfb" in texts and "model tcmd" in texts


def test_wrong_model_plot_names_the_missing_term(wrong_model_run):
    detail, _, figures, page = diagnosis_section(wrong_model_run, "systematic_residual")
    assert detail["evidence"]["feature"] == "sin(q)"  # gravity, which rotary1 lacks
    assert "sin(q)" in figures[0].alt


def test_too_slow_plot_shows_the_threshold_and_the_inertial_torque(too_slow_run):
    _, _, figures, page = diagnosis_section(too_slow_run, "too_slow")
    texts = " ".join(t.text or "" for t in page.svg(figures[0]).iter("{http://www.w3.org/2000/svg}text"))
    assert "threshold" in texts and "inertial" in texts
