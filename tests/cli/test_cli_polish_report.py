"""`dynid report DIR` re-renders a result folder's report without dropping the validation section."""

from __future__ import annotations

import shutil

import pytest

from dynid.cli.main import main
from dynid.io.readers import write_recording_csv
from dynid.models import Plant, make_model
from dynid.sim import SimOptions, SineMotion, simulate

VALIDATION = 'id="validation"'


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("crank")
    plant = Plant(make_model("rotary3"))
    theta = [0.5, 0.0, 20.0, 0.0, 0.8, 1.5]
    write_recording_csv(d / "id.csv", simulate(plant, theta, SineMotion([-2.0], [2.0], [0.5], record_s=8),
                                               SimOptions(), seed=1))
    write_recording_csv(d / "val.csv", simulate(plant, theta, SineMotion([-1.0], [1.8], [0.8], record_s=4),
                                                SimOptions(), seed=2))
    write_recording_csv(d / "other.csv", simulate(plant, theta, SineMotion([-1.5], [1.5], [0.6], record_s=8),
                                                  SimOptions(), seed=3))
    return d


def _identify(rec, out) -> None:
    assert main(["identify", str(rec), "--model", "rotary3", "--out", str(out), "--quiet"]) == 0


def test_rerender_keeps_the_validation_section(data, tmp_path, capsys):
    out = tmp_path / "run"
    _identify(data / "id.csv", out)
    report = out / "report.html"
    assert VALIDATION not in report.read_text(encoding="utf-8")
    assert main(["predict", str(out / "result.json"), str(data / "val.csv"), "--report", str(report),
                 "--out", str(tmp_path / "tau.csv")]) == 0
    with_validation = report.read_text(encoding="utf-8")
    assert VALIDATION in with_validation and "val.csv" in with_validation
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(report)
    again = report.read_text(encoding="utf-8")
    assert VALIDATION in again and "val.csv" in again
    # the same errors, computed on every sample again
    section = lambda page: page[page.index(VALIDATION):page.index("</section>", page.index(VALIDATION))]  # noqa: E731
    assert section(again) == section(with_validation)


def test_a_report_elsewhere_keeps_its_own_validation(data, tmp_path):
    out = tmp_path / "run"
    _identify(data / "id.csv", out)
    page = tmp_path / "pages" / "validation.html"
    assert main(["predict", str(out / "result.json"), str(data / "val.csv"), "--report", str(page),
                 "--out", str(tmp_path / "tau.csv")]) == 0
    assert main(["report", str(out), "--quiet"]) == 0      # the folder's own report never had one
    assert VALIDATION not in (out / "report.html").read_text(encoding="utf-8")
    assert main(["report", str(out), "--out", str(page), "--quiet"]) == 0
    assert VALIDATION in page.read_text(encoding="utf-8")


def test_a_new_identification_drops_the_old_validation(data, tmp_path):
    """The stored validation belongs to the model it was computed with: re-identifying into the folder
    renders a report without it (and removes it)."""
    out = tmp_path / "run"
    _identify(data / "id.csv", out)
    assert main(["predict", str(out / "result.json"), str(data / "val.csv"), "--report", str(out / "report.html"),
                 "--out", str(tmp_path / "tau.csv")]) == 0
    stored = [p for p in out.iterdir() if p.name.startswith("report.") and p.name != "report.html"]
    assert len(stored) == 1
    _identify(data / "other.csv", out)
    assert VALIDATION not in (out / "report.html").read_text(encoding="utf-8")
    assert not stored[0].exists()
    assert main(["report", str(out), "--quiet"]) == 0
    assert VALIDATION not in (out / "report.html").read_text(encoding="utf-8")


def test_a_copied_folder_rerenders_whole(data, tmp_path):
    out = tmp_path / "run"
    _identify(data / "id.csv", out)
    assert main(["predict", str(out / "result.json"), str(data / "val.csv"), "--report", str(out / "report.html"),
                 "--out", str(tmp_path / "tau.csv")]) == 0
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    (copy / "report.html").unlink()
    assert main(["report", str(copy), "--quiet"]) == 0
    assert VALIDATION in (copy / "report.html").read_text(encoding="utf-8")
