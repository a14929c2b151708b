"""What the report tells a reader beyond the numbers: which samples the fit left out, a-priori against
identified values, poorly separated parameters, the condition number, what to do next, and a printable page."""

from __future__ import annotations

import json
import re
import shutil
from html import unescape
from pathlib import Path

import numpy as np
import pytest

from dynid.cli.main import main
from dynid.io.readers import write_recording_csv
from dynid.models import Plant, make_model
from dynid.report import load_report_data, render_report, write_figures
from dynid.report._html import build_figures
from dynid.report._spec import FigureSpec, Panel, Trace
from dynid.report._svg import figure_svg
from dynid.sim import SineMotion, simulate

from ..conftest import ROOT
from ._page import parse_page
from .conftest import result_of

SVG = "{http://www.w3.org/2000/svg}"
SPATIAL3 = ROOT / "tests" / "data" / "spatial3.urdf"
SCALE = 1.2   # the simulated arm is 20 % heavier than its URDF says


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> Path:
    """``dynid demo``: a SCARA whose vertical axis sticks at its reversals (spikes in the error there)."""
    out = tmp_path_factory.mktemp("demo") / "dynid-demo"
    assert main(["demo", "--out", str(out), "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def urdf_run(tmp_path_factory) -> Path:
    """A 3-link arm identified with its URDF (the a-priori values) while the robot is 20 % heavier."""
    tmp = tmp_path_factory.mktemp("urdf")
    model = make_model("serial", urdf=SPATIAL3)
    plant = Plant(model)
    theta = np.concatenate([SCALE * np.asarray(model.prior_parameters()), [1.0, 2.0] * model.n_joints])
    motion = SineMotion([-1.5, -1.0, -1.5], [1.5, 1.0, 1.5], [0.31, 0.43, 0.57], record_s=10)
    rec = simulate(plant, theta, motion, seed=4)
    write_recording_csv(tmp / "run.csv", rec)
    assert main(["identify", str(tmp / "run.csv"), "--model", "serial", "--urdf", str(SPATIAL3), "--out",
                 str(tmp / "out"), "--no-report", "--quiet", "--regularize", "0",
                 "--estimator", "wls"]) in (0, 1)
    return tmp / "out"


def section(page: str, sid: str) -> str:
    return page.split(f'id="{sid}"', 1)[1].split("</section>", 1)[0]


def rows_of(html_text: str) -> list[list[str]]:
    """The body rows of the tables in ``html_text``, as cell texts."""
    body = "".join(re.findall(r"<tbody>(.*?)</tbody>", html_text, re.S))
    return [[unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td>(.*?)</td>", r, re.S)]
            for r in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def svg_texts(page, figure_id: str) -> str:
    return " ".join(t.text or "" for i in page.imgs if i.figure == figure_id for t in page.svg(i).iter(f"{SVG}text"))


def rewrite(folder: Path, dest: Path, change) -> Path:
    """A copy of a result folder with its result.json changed by ``change(dict)``."""
    shutil.copytree(folder, dest)
    res = result_of(dest)
    change(res)
    (dest / "result.json").write_text(json.dumps(res))
    return dest


# ------------------------------------------------------------------------------- 1. excluded samples

def test_used_samples_are_recovered_exactly(demo_run):
    """Gating and the stick-slip windows rebuilt from result.json count the samples the fit used, and give
    back softMC's error of result.json; over every sample, axis 3's error is far larger (its sticks)."""
    data = load_report_data(demo_run)
    res = data.result
    used = data.used()
    assert used.sum(axis=0).tolist() == res["conditioning"]["moving_samples"]
    assert data.samples.stick[:, 2].any() and data.samples.exact.all()
    tfb, te = data.signals["tfb"], data.signals["te"]
    for j, mre in enumerate(res["metrics"]["max_relative_error"]):
        ref = np.abs(tfb[used[:, j], j]).max()
        assert np.abs(te[used[:, j], j]).max() / ref == pytest.approx(mre, rel=1e-6)
    ref3 = np.abs(tfb[used[:, 2], 2]).max()
    assert np.abs(te[:, 2]).max() / ref3 > 5 * res["metrics"]["max_relative_error"][2]


def test_torque_plot_shades_what_the_fit_left_out(demo_run):
    """Axis 3: the error's spike lies in a shaded stick-slip window, the title gives the error over the used
    samples as such (and the larger one over all samples), the trimmed ends are drawn outside the REC."""
    data = load_report_data(demo_run)
    fig = build_figures(data).axes[2][0]
    top, bottom = fig.panels
    mre = data.result["metrics"]["max_relative_error"][2]
    assert "over the used samples" in bottom.title and f"max {100 * mre:.2f} %" in bottom.title
    used = data.used()[:, 2]
    every = np.abs(data.signals["te"][:, 2]).max() / np.abs(data.signals["tfb"][used, 2]).max()
    assert f"(all samples: {100 * every:.2f} %)" in bottom.title and every > 5 * mre
    spans = {t.label: t.x.reshape(-1, 2) for t in top.traces if t.kind == "vspans"}
    stick = spans["not used: stick-slip window"]
    t_peak = data.t[np.argmax(np.abs(data.signals["te"][:, 2]))]
    assert np.any((stick[:, 0] <= t_peak) & (t_peak <= stick[:, 1]))
    assert len(stick) == data.result["metrics"]["diagnostics_detail"][1]["evidence"]["stick_count"]
    assert sum(t.kind == "vspans" for t in bottom.traces) == 3          # the same shading under the error
    trimmed = spans["trimmed (filter edge)"]
    dt = data.result["conditioning"]["sample_period_s"]
    start = data.result["conditioning"]["trim_samples"]
    assert start > 0 and trimmed[0, 1] - trimmed[0, 0] == pytest.approx(start * dt) and top.xlim[0] < data.t[0]
    page = parse_page(render_report(demo_run))
    drawn = svg_texts(page, "fig-axis3_torque")
    assert "not used: stick-slip window" in drawn and "error over the used samples" in drawn
    assert "stick-slip window" not in svg_texts(page, "fig-axis1_torque")   # axis 1 never sticks


# ------------------------------------------------------------------------------- 2. a priori vs identified

def test_a_priori_table_compares_the_urdf_with_the_identified_values(urdf_run):
    """Every excited inertial base parameter is listed; the robot is 20 % heavier than its URDF, so each
    identified combination is 1.2 times its a-priori value, and the change is (identified - prior) / std."""
    res = result_of(urdf_run)
    page = render_report(urdf_run)
    rows = rows_of(section(page, "prior"))
    base = res["base_parameters"]
    friction = set(res["friction"]["names"])
    inertial = [e for e, x in zip(base["expressions"], base["excited"])
                if x and not any(n in e for n in friction)]
    assert [r[0] for r in rows] == inertial and len(rows) >= 10
    for name, prior, value, std, change in rows:
        prior, value, std = float(prior), float(value), float(std)
        assert value == pytest.approx(SCALE * prior, abs=4 * std + 2e-3 * abs(value)), name
        assert float(change) == pytest.approx((value - prior) / std, abs=0.06 + 1e-3 * abs(float(change)))
    assert '<a href="#prior">' in page


def test_no_a_priori_section_without_prior_values(demo_run, sound_run):
    """Catalogue models carry no a-priori values: the section and its link are left out."""
    for run in (demo_run, sound_run):
        page = render_report(run)
        assert 'id="prior"' not in page and "#prior" not in page


# ------------------------------------------------------------------------------- 3. correlation

def _with_correlation(res: dict) -> None:
    names = res["base_parameters"]["names"]
    n = len(names)
    c = np.eye(n)
    c[0, 1] = c[1, 0] = 0.97
    c[2, 3] = c[3, 2] = -0.93
    c[4, 5] = c[5, 4] = 0.85
    corr = c.tolist()
    corr[6][7] = corr[7][6] = None
    res["base_parameters"]["correlation"] = corr
    res["confounded"] = [{"parameters": [names[0], names[1]], "combination": f"{names[0]} + 0.1*{names[1]}",
                          "message": "only their sum moves the torque"}]


def test_correlation_section_shows_the_poorly_separated_parameters(demo_run, tmp_path):
    folder = rewrite(demo_run, tmp_path / "corr", _with_correlation)
    names = result_of(folder)["base_parameters"]["names"]
    page = parse_page(render_report(folder))
    sec = section(page.text, "correlation")
    pairs = [r for r in rows_of(sec) if len(r) == 3 and r[2][:1] in "+-"]
    assert pairs == [[names[0], names[1], "+0.970"], [names[2], names[3], "-0.930"]]   # 0.85 is not above 0.9
    assert f"{names[0]} + 0.1*{names[1]}" in unescape(sec) and "only their sum moves the torque" in sec
    heat = next(i for i in page.imgs if i.figure == "fig-correlation")
    svg = page.svg(heat)
    cells = [c for e in svg.iter(f"{SVG}path") if e.get("fill", "").startswith("#") for c in e.get("d").split("Z") if c]
    assert len(cells) == 16                                            # 4 x 4 cells
    labels = " ".join(t.text or "" for t in svg.iter(f"{SVG}text"))
    assert all(f"{k + 1} {names[k]}" in labels for k in range(4)) and names[4] not in labels
    assert "0.97" in labels and "−0.93" in labels
    assert '<a href="#correlation">' in page.text


def test_correlation_figure_is_exported_as_png(demo_run, tmp_path):
    pytest.importorskip("matplotlib")
    folder = rewrite(demo_run, tmp_path / "corr", _with_correlation)
    written = write_figures(folder, tmp_path / "figs")
    assert (tmp_path / "figs" / "correlation.png") in written


def test_correlation_section_is_omitted_or_says_none(demo_run, tmp_path):
    """Neither correlation nor confounded groups in result.json (an older run): no section, no link; a
    correlation without a strong pair and no confounded group: the section says so."""
    def older(res):
        res["base_parameters"].pop("correlation", None)
        res.pop("confounded", None)

    page = render_report(rewrite(demo_run, tmp_path / "old", older))
    assert 'id="correlation"' not in page and "#correlation" not in page

    def weak(res):
        n = len(res["base_parameters"]["names"])
        res["base_parameters"]["correlation"] = np.eye(n).tolist()
        res["confounded"] = []

    page = render_report(rewrite(demo_run, tmp_path / "weak", weak))
    assert "No two base parameters correlate above 0.9" in section(page, "correlation")
    assert 'id="fig-correlation"' not in page


def test_cells_trace_checks_its_shape():
    with pytest.raises(ValueError, match="2 x 2 matrix"):
        Trace("cells", np.zeros((2, 3)), labels=("a", "b"))
    fig = FigureSpec("c", "", (Panel((Trace("cells", [[1.0, np.nan], [np.nan, -1.0]], labels=("a<", "b")),),
                                     height=120, legend=False),), width=300)
    svg = figure_svg(fig)
    assert 'fill="#d55e00"' in svg and 'fill="#0072b2"' in svg and 'fill="#eeeeee"' in svg and "a&lt;" in svg


# ------------------------------------------------------------------------------- 4. condition number

def condition_row(folder: Path) -> str:
    facts = section(render_report(folder), "conditioning")
    row = next(r for r in re.findall(r"<tr>(.*?)</tr>", facts, re.S) if "condition number" in r)
    return unescape(re.sub(r"<[^>]+>", "", row))


def test_condition_number_is_explained_next_to_it(demo_run):
    res = result_of(demo_run)
    text = condition_row(demo_run)
    assert f"{res['metrics']['condition_number']:.4g}" in text
    n = res["base_parameters"]["count"]
    for words in ("singular value", "Judge the scaled one", "independent of the parameters' units",
                  f"for {n} base parameters up to 100 is good", "up to 1000 acceptable", "dynid excite --fourier",
                  "identify fewer parameters"):
        assert words in text, words


@pytest.mark.parametrize("run, scaled, rating", [("demo_run", 50.0, "good"), ("demo_run", 500.0, "acceptable"),
                                                 ("demo_run", 5000.0, "poor"), ("sound_run", 50.0, "acceptable"),
                                                 ("sound_run", 20.0, "good")])
def test_condition_number_rating_depends_on_the_model_size(request, tmp_path, run, scaled, rating):
    """16 base parameters (the SCARA): up to 100 is good; 4 (the crank arm): up to 30."""
    def set_scaled(res):
        res["metrics"]["condition_number_scaled"] = scaled

    text = condition_row(rewrite(request.getfixturevalue(run), tmp_path / "c", set_scaled))
    assert f"This run: {rating}." in text


# ------------------------------------------------------------------------------- 5. what to do next

def test_next_steps_of_a_run_with_findings(demo_run):
    """The demo passes with a warning: the step for it comes before the diagnostics, then how to use the model."""
    page = render_report(demo_run)
    assert page.index('id="verdict"') < page.index('id="next"') < page.index('id="diagnostics"')
    steps = section(page, "next")
    items = re.findall(r"<li class=\"(\w+)\">(.*?)</li>", steps, re.S)
    assert [sev for sev, _ in items] == ["warning"]        # the stick-slip info carries no step
    assert "axis 3 (A3)" in items[0][1] and "faster motion" in items[0][1]
    assert '<a href="#diag-too_slow-1">too slow</a>' in items[0][1] and 'id="diag-too_slow-1"' in page
    assert "Once these findings are addressed or accepted" in steps
    res_json = str(demo_run / "result.json")
    for cmd in (f"dynid feedforward {res_json} TRAJ.csv", f"dynid monitor {res_json} LOG.csv",
                f"dynid predict {res_json} OTHER_RUN.csv", f"dynid codegen {res_json} --lang c", "IDNT1.PRG",
                "SCARA.DynamicParameter[1..8]"):
        assert cmd in unescape(steps), cmd


def test_clean_pass_says_how_to_use_the_model(sound_run):
    steps = unescape(section(render_report(sound_run), "next"))
    assert "passed with no warnings" in steps and "<ol" not in steps
    assert f"dynid feedforward {sound_run / 'result.json'} TRAJ.csv --out taddcmd.csv" in steps


def test_failed_verdict_lists_reasons_and_errors_first(demo_run, tmp_path):
    """metrics.success false: FAILED with verdict.reasons; the steps put errors first and use next_step."""
    def fail(res):
        m = res["metrics"]
        m["success"] = False
        m["diagnostics_detail"].append({"code": "saturation", "severity": "error", "joint": 1,
                                        "message": "axis 1 (A1): the torque flattens", "evidence": {},
                                        "next_step": "lower the speed factor to 80 %"})
        m["diagnostics_detail"][0]["next_step"] = "raise the speed factor of axis 3 to 150 %"
        m["verdict"] = {"passed": False, "softmc_rule": True,
                        "reasons": [{"code": "saturation", "joint": 1, "message": "axis 1 saturates at 80 N"}]}

    page = render_report(rewrite(demo_run, tmp_path / "fail", fail))
    verdict = section(page, "verdict")
    assert "FAILED" in verdict and "PASSED" not in verdict and "axis 1 saturates at 80 N" in verdict
    assert "softMC&#x27;s 50 % rule holds, but the run fails" in verdict
    items = re.findall(r"<li class=\"(\w+)\">(.*?)</li>", section(page, "next"), re.S)
    assert [sev for sev, _ in items] == ["error", "warning"]
    assert "lower the speed factor to 80 %" in items[0][1] and "axis 3 to 150 %" in items[1][1]
    assert "dynid feedforward" not in section(page, "next")          # no usage advice for a failed run


@pytest.mark.parametrize("verdict", [None, {"passed": True, "softmc_rule": True, "reasons": []}])
def test_banner_fails_whenever_success_is_false(demo_run, tmp_path, verdict):
    def fail(res):
        res["metrics"]["success"] = False
        if verdict is not None:
            res["metrics"]["verdict"] = verdict

    page = render_report(rewrite(demo_run, tmp_path / "f", fail))
    assert "FAILED" in section(page, "verdict") and "PASSED" not in section(page, "verdict")
    assert "check that the model matches" not in section(page, "next")     # every axis is below the rule


def test_failed_run_without_reasons_gets_a_step_per_failing_axis(demo_run, tmp_path):
    def fail(res):
        res["metrics"]["success"] = False
        res["metrics"]["max_relative_error"][1] = 0.7

    steps = section(render_report(rewrite(demo_run, tmp_path / "f", fail)), "next")
    items = re.findall(r"<li class=\"(\w+)\">(.*?)</li>", steps, re.S)
    assert items[0][0] == "error" and "axis 2 (A2)" in items[0][1] and "70.00 % exceeds 50 %" in items[0][1]


# ------------------------------------------------------------------------------- 6. print layout

def test_print_stylesheet(sound_run):
    """@media print: no navigation, figures and diagnostics kept on one page, tables within the page width,
    black text on white."""
    page = render_report(sound_run)
    css = page.split("<style>", 1)[1].split("</style>", 1)[0]
    start = css.index("@media print{")
    depth, k = 0, start
    for k in range(css.index("{", start), len(css)):
        depth += {"{": 1, "}": -1}.get(css[k], 0)
        if depth == 0:
            break
    rules = dict(re.findall(r"([^{}]+)\{([^{}]*)\}", css[css.index("{", start) + 1:k]))
    rules = {sel.strip(): body for sel, body in rules.items()}

    def rule(selector: str) -> str:
        return " ".join(b for s, b in rules.items() if selector in [x.strip() for x in s.split(",")])

    assert "display:none" in rule("nav")
    assert "break-inside:avoid" in rule("figure") and "break-inside:avoid" in rule(".diag")
    assert "width:100%" in rule("table") and "max-width:100%" in rule("table")
    assert "max-width:100%" in rule("figure img")
    assert "color:#000" in rule("body") and "background:#fff" in rule("body")
    assert "background:#fff" in rule(".banner") and "color:#000" in rule("td")
