"""The report of a simulated identification: self-contained, complete, consistent with result.json."""

from __future__ import annotations

import json
import shutil
import time

import numpy as np
import pytest

from dynid.cli.main import main
from dynid.errors import FileFormatError
from dynid.io.readers import write_recording_csv
from dynid.fitted import load
from dynid.fitted import predict
from dynid.report import Validation, load_report_data, render_report, write_validation_report
from dynid.sim import SineMotion, simulate

from ._page import parse_page
from ._synthetic import write_synthetic_result
from .conftest import CRANK, THETA, result_of

AXIS_FIGURES = ("torque", "velocity", "friction", "position")


def check_self_contained(page) -> None:
    """Nothing is fetched at view time: no script, no external style sheet, only data URIs as sources."""
    assert "script" not in page.tags and "link" not in page.tags and "iframe" not in page.tags
    for tag, attr, value in page.urls:
        v = value.strip().lower()
        if attr == "href":
            assert v.startswith("#"), f"<{tag} {attr}={value[:60]}> leaves the page"
        else:
            assert v.startswith("data:"), f"<{tag} {attr}={value[:60]}> is not embedded"
    style = page.text.split("<style>", 1)[1].split("</style>", 1)[0]
    assert "@import" not in style and "url(" not in style
    csp = [m for m in page.meta if m.get("http-equiv", "").lower() == "content-security-policy"]
    assert csp and "default-src 'none'" in csp[0]["content"]


def check_figures(page, n_joints: int) -> None:
    """Every per-axis figure is there, and every figure is a well-formed SVG of its stated size."""
    for j in range(1, n_joints + 1):
        for kind in AXIS_FIGURES:
            assert f"fig-axis{j}_{kind}" in page.figure_ids(), f"axis {j} {kind} figure missing"
    for img in page.imgs:
        svg = page.svg(img)
        assert svg.tag.endswith("svg") and int(svg.get("width")) == img.width and int(svg.get("height")) == img.height
        assert img.alt and img.width > 0 and img.height > 0
        assert len(svg.findall(".//{http://www.w3.org/2000/svg}path")) >= 2  # the grid and the data were drawn


def test_report_is_self_contained_and_complete(sound_run):
    page = parse_page(sound_run / "report.html")
    check_self_contained(page)
    check_figures(page, 1)
    for section in ("verdict", "diagnostics", "parameters", "axis1", "conditioning", "files"):
        assert section in page.ids


def test_report_shows_result_json(sound_run):
    """Banner, errors, parameters and facts come from result.json (compared with the file, not constants)."""
    res = result_of(sound_run)
    text = (sound_run / "report.html").read_text()
    verdict = text.split('id="verdict"', 1)[1].split("</section>", 1)[0]
    assert ("PASSED" in verdict) == res["metrics"]["success"] and ("FAILED" in verdict) != res["metrics"]["success"]
    for v in res["metrics"]["max_relative_error"] + res["metrics"]["mean_relative_error"]:
        assert f"{100 * v:.2f} %" in verdict
    params = text.split('id="parameters"', 1)[1].split("</section>", 1)[0]
    for name, value in zip(res["parameters"]["names"] + res["friction"]["names"],
                           res["parameters"]["values"] + res["friction"]["values"]):
        assert f"<code>{name}</code>" in params and f"{value:.7g}" in params
    facts = text.split('id="conditioning"', 1)[1].split("</section>", 1)[0]
    assert f"{res['conditioning']['cutoff_hz']:.4g} Hz" in facts and str(res["conditioning"]["data_length"]) in facts
    assert f"{res['metrics']['condition_number']:.4g}" in facts


def test_sound_run_has_no_diagnostic_sections(sound_run):
    assert result_of(sound_run)["metrics"]["diagnostics_detail"] == []
    page = parse_page(sound_run / "report.html")
    assert page.articles == {} and "None fired" in page.text


def test_report_without_the_rec_shows_the_tables(sound_run, tmp_path):
    shutil.copy(sound_run / "result.json", tmp_path / "result.json")
    page = parse_page(render_report(tmp_path))
    check_self_contained(page)
    recorded = [i for i in page.imgs if i.figure != "fig-correlation"]   # the heat-map needs result.json only
    assert recorded == [] and "IDNT1.REC was not found" in page.text and "parameters" in page.ids


def test_cli_report_out_and_png_figures(sound_run, tmp_path):
    pytest.importorskip("matplotlib")
    out, figs = tmp_path / "r.html", tmp_path / "figs"
    assert main(["report", str(sound_run), "--out", str(out), "--figures", str(figs), "--quiet"]) == 0
    page = parse_page(out)
    names = {i.removeprefix("fig-") for i in page.figure_ids()}
    pngs = {p.stem for p in figs.glob("*.png")}
    assert names and pngs == names
    for p in figs.glob("*.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_png_figures_need_the_report_extra(sound_run, tmp_path, without_modules, capsys):
    """Without matplotlib, --figures says which extra to install (exit 2) and writes nothing."""
    without_modules("matplotlib")
    out = tmp_path / "r.html"
    assert main(["report", str(sound_run), "--out", str(out), "--figures", str(tmp_path / "f")]) == 2
    assert "pip install 'dynid[report]'" in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "f").exists()


def test_bad_input_exits_2(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "result.json" in capsys.readouterr().err
    (tmp_path / "result.json").write_text('{"model": "rotary3"}')
    assert main(["report", str(tmp_path)]) == 2
    assert "has no 'joints'" in capsys.readouterr().err


def test_rec_of_another_robot_is_refused(sound_run, tmp_path):
    res = result_of(sound_run)
    res["joints"] = res["joints"] * 2
    (tmp_path / "result.json").write_text(json.dumps(res))
    shutil.copy(sound_run / "IDNT1.REC", tmp_path / "IDNT1.REC")
    with pytest.raises(FileFormatError, match="1 joints recorded"):
        load_report_data(tmp_path)


def test_validation_report(sound_run, tmp_path):
    """dynid predict --report: the validation section shows per-axis errors and measured vs predicted torque."""
    val = simulate(CRANK, THETA, SineMotion([-1.0], [1.8], [0.8], record_s=6), seed=2)
    csv = tmp_path / "val.csv"
    write_recording_csv(csv, val)
    from dynid.io.readers import read_recording

    pred = predict(load(sound_run / "result.json"), read_recording(csv, n_joints=1))
    out = write_validation_report(sound_run / "result.json", pred, tmp_path / "validation.html", source="val.csv")
    page = parse_page(out)
    check_self_contained(page)
    assert "validation" in page.ids and "fig-validation_axis1" in page.figure_ids()
    section = page.text.split('id="validation"', 1)[1].split("</section>", 1)[0]
    err = Validation.from_prediction(pred).errors()
    assert "val.csv" in section and f"{100 * err['nrmse_rms'][0]:.2f} %" in section


def test_validation_without_measured_torque():
    v = Validation(np.arange(5.0), np.ones(5), None)
    assert v.predicted.shape == (5, 1) and v.errors() is None
    with pytest.raises(ValueError, match="t has shape"):
        Validation(np.arange(4.0), np.ones(5), None)


def test_large_run_page_is_small_and_fast(tmp_path):
    """50 000 samples x 6 joints: the page stays a few hundred kB (min/max envelopes) and renders in seconds."""
    d = write_synthetic_result(tmp_path / "big")
    t0 = time.perf_counter()
    page_text = render_report(d)
    elapsed = time.perf_counter() - t0
    assert len(page_text.encode()) < 3e6
    assert elapsed < 5.0  # target 1 s on an idle machine; generous for a shared CI runner
    page = parse_page(page_text)
    check_self_contained(page)
    check_figures(page, 6)
    detail = result_of(d)["metrics"]["diagnostics_detail"]
    assert sorted(page.articles) == sorted(x["code"] for x in detail)
    # every code that has an evidence plot got one inside its own section
    for code in ("too_slow", "saturation", "few_cycles", "small_range", "poorly_identified", "large_noise",
                 "systematic_residual"):
        assert any(i.article == code for i in page.imgs), code


def test_failed_identification_has_a_failed_banner(tmp_path):
    """linear1 (no gravity) on a vertical linear axis fails the 50 % rule: the banner says so, per axis."""
    from dynid.models import Plant, make_model

    from .conftest import identify_and_report

    plant = Plant(make_model("linear2"))
    rec = simulate(plant, [10.0, 10 * 9.80665, 0.0, 20.0, 5.0], SineMotion([-0.1], [0.1], [0.4], record_s=10), seed=3)
    folder = identify_and_report(tmp_path, rec, "linear1", extra=("--friction", "viscous+coulomb"))
    res = result_of(folder)
    assert res["metrics"]["success"] is False
    page = parse_page(folder / "report.html")
    check_self_contained(page)
    check_figures(page, 1)
    verdict = page.text.split('id="verdict"', 1)[1].split("</section>", 1)[0]
    assert "FAILED" in verdict and "✗ above" in verdict
    assert "position [mm]" in " ".join(t.text or "" for i in page.imgs if i.figure == "fig-axis1_position"
                                       for t in page.svg(i).iter("{http://www.w3.org/2000/svg}text"))


def test_payload_run_shows_the_payload(tmp_path):
    """A run with a known payload shows it; a payload estimate in result.json (IdentPayload runs) is tabulated."""
    from dynid.models import Plant, make_model

    cfg = {"payload": {"mass": 2.0, "inertia": 0.01}}
    plant = Plant(make_model("rotary3", cfg))
    rec = simulate(plant, [0.5, 0.36, 20.0, 9.80665 * 0.6, 0.8, 1.5], SineMotion([-2.0], [2.0], [0.5], record_s=8),
                   seed=5)
    csv, out = tmp_path / "p.csv", tmp_path / "out"
    write_recording_csv(csv, rec)
    (tmp_path / "cfg.json").write_text(json.dumps(cfg))
    assert main(["identify", str(csv), "--model", "rotary3", "--config", str(tmp_path / "cfg.json"), "--out", str(out),
                 "--quiet"]) in (0, 1)
    page = parse_page(render_report(out))
    assert "payload" in page.ids
    section = page.text.split('id="payload"', 1)[1].split("</section>", 1)[0]
    assert "mass 2 kg" in section and "inertia 0.01 kg" in section
    res = result_of(out)
    res["payload"] = {"names": ["payload mass"], "values": [1.987], "units": ["kg"], "std": [0.004]}
    (out / "result.json").write_text(json.dumps(res))
    section = render_report(out).split('id="payload"', 1)[1].split("</section>", 1)[0]
    assert "Payload estimate" in section and "payload mass" in section and "1.987" in section
