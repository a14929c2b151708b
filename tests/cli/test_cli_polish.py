"""Command-line polish: a closed stdout pipe, unwritable outputs, help texts, 100-column listings."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dynid.cli.main import SUBCOMMAND_MODULES, main
from dynid.io.readers import write_recording_csv
from dynid.models import Plant, make_model, model_names
from dynid.sim import SimOptions, SineMotion, simulate

DYNID = [sys.executable, "-m", "dynid.cli.main"]
EXIT_PIPE = 141   # stdout closed by its reader: 128 + SIGPIPE, as a shell reports it


@pytest.fixture(scope="module")
def crank(tmp_path_factory):
    """A short simulated crank-arm recording and its identification (folder ``out``)."""
    d = tmp_path_factory.mktemp("crank")
    plant = Plant(make_model("rotary3"))
    theta = [0.5, 0.0, 20.0, 0.0, 0.8, 1.5]
    write_recording_csv(d / "id.csv", simulate(plant, theta, SineMotion([-2.0], [2.0], [0.5], record_s=8),
                                               SimOptions(), seed=1))
    assert main(["identify", str(d / "id.csv"), "--model", "rotary3", "--out", str(d / "out"), "--quiet",
                 "--no-report", "--json"]) == 0
    return d


# ------------------------------------------------------------------------------------------ closed pipe

@pytest.mark.parametrize("command", ["models", "identify"])
def test_closed_stdout_ends_with_141_and_no_traceback(command, crank, tmp_path):
    """`dynid ... | head` with the reader gone before the command writes: exit 141, nothing on stderr."""
    args = {"models": ["models"],
            "identify": ["identify", str(crank / "id.csv"), "--model", "rotary3", "--out", str(tmp_path / "o"),
                         "--no-report", "--json"]}[command]
    proc = subprocess.Popen(DYNID + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()   # the reader is gone: every write to stdout fails with EPIPE
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == EXIT_PIPE, err
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err


def test_reader_that_stops_after_one_line(crank):
    """`dynid models | head -1`: the first line arrives; no traceback, no usage-error status."""
    proc = subprocess.Popen(DYNID + ["models"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline().decode()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert first.startswith("model")
    assert proc.wait(timeout=60) in (0, EXIT_PIPE)
    assert "Traceback" not in err and "BrokenPipe" not in err, err


# ------------------------------------------------------------------------------------------ unwritable outputs

def _bad_path(kind: str, tmp_path: Path) -> Path:
    if kind == "under_a_file":
        (tmp_path / "afile").write_text("x")
        return tmp_path / "afile" / "out"
    if kind == "missing_parent_not_creatable":
        if not Path("/proc").is_dir():
            pytest.skip("needs /proc")
        return Path("/proc/dynid-no-such-folder/out")
    # read-only folder: root writes through permission bits, but not into sysfs
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        if not Path("/sys").is_dir() or _can_create_in("/sys"):
            pytest.skip("needs a folder root cannot write")
        return Path("/sys/dynid-out")
    ro = tmp_path / "read-only"
    ro.mkdir()
    ro.chmod(0o555)
    return ro / "out"


def _can_create_in(folder: str) -> bool:
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def _commands(crank: Path, bad: Path) -> dict[str, tuple[list[str], str]]:
    """Every command that writes, with one output option pointed at ``bad``: (argv, flag)."""
    res, rec = str(crank / "out" / "result.json"), str(crank / "id.csv")
    b = str(bad)
    return {
        "identify": (["identify", rec, "--model", "rotary3", "--quiet", "--out", b], "--out"),
        "demo": (["demo", "--quiet", "--out", b], "--out"),
        "predict": (["predict", res, rec, "--out", b + ".csv"], "--out"),
        "predict-report": (["predict", res, rec, "--report", b + ".html"], "--report"),
        "excite": (["excite", "--freqs", "1.1,1.3,1.5", "--out", b + ".csv"], "--out"),
        "excite-mcbasic": (["excite", "--model", "scara4", "--mcbasic", b + ".PRG"], "--mcbasic"),
        "simulate": (["simulate", "--scenario", "scara-move", "--out", b], "--out"),
        "simulate-plot": (["simulate", "--scenario", "scara-move", "--plot", b + ".png"], "--plot"),
        "feedforward": (["feedforward", res, rec, "--out", b + ".csv"], "--out"),
        "report": (["report", str(crank / "out"), "--out", b + ".html"], "--out"),
        "report-figures": (["report", str(crank / "out"), "--figures", b], "--figures"),
        "derive": (["derive", "--model", "rotary3", "--out", b], "--out"),
        "codegen": (["codegen", res, "--lang", "c", "--out", b], "--out"),
    }


def _files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*")}


@pytest.mark.parametrize("kind", ["under_a_file", "missing_parent_not_creatable", "read_only"])
@pytest.mark.parametrize("command", list(_commands(Path("."), Path("x"))))
def test_unwritable_output_is_one_line_and_exit_2(command, kind, crank, tmp_path, capsys):
    bad = _bad_path(kind, tmp_path)
    argv, flag = _commands(crank, bad)[command]
    before = _files(tmp_path), _files(crank)
    code = main(argv)
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured.err
    assert len(lines) == 1, captured.err
    target = argv[argv.index(flag) + 1]
    assert lines[0].startswith(f"dynid: error: cannot write to {target}: "), lines[0]
    assert lines[0].endswith(f"; choose another {flag}"), lines[0]
    assert "Errno" not in lines[0] and "Error:" not in lines[0]
    assert (_files(tmp_path), _files(crank)) == before   # nothing written, not even a folder


def test_report_into_an_unwritable_result_folder(crank, tmp_path, capsys):
    """Without --out the report goes into the result folder: checked first, and --out is the way out."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    folder = tmp_path / "run"
    folder.mkdir()
    for name in ("result.json", "IDNT1.REC"):
        (folder / name).write_bytes((crank / "out" / name).read_bytes())
    folder.chmod(0o555)
    try:
        assert main(["report", str(folder)]) == 2
    finally:
        folder.chmod(0o755)
    assert capsys.readouterr().err.strip().endswith("; choose another --out")


# ------------------------------------------------------------------------------------------ help texts

def _help(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as e:
        main(argv + ["--help"])
    assert e.value.code == 0
    return capsys.readouterr().out


def test_every_help_text_is_clean(capsys):
    """No literal '%%' (argparse does not %-format descriptions) and no '(default: None)'."""
    for argv in [[]] + [[c] for c in SUBCOMMAND_MODULES]:
        text = _help(argv, capsys)
        assert "%%" not in text, (argv, [ln for ln in text.splitlines() if "%%" in ln])
        bad = [ln for ln in text.splitlines() if re.search(r"default:?\s+(None|False)\b", ln)]
        assert not bad, (argv, bad)


def test_defaults_that_exist_are_still_shown(capsys):
    text = " ".join(_help(["identify"], capsys).split())
    assert "(default: dynid-out)" in text and "(default: 1)" in text and "(default: auto)" in text
    assert "'auto' (default)" in text and "20 x the motion bandwidth" in text and "50 % rule" in text


# ------------------------------------------------------------------------------------------ dynid models

def _norm(text: str) -> str:
    return " ".join(text.split())


def test_models_listing_fits_100_columns(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    long = [ln for ln in out.splitlines() if len(ln) > 100]
    assert not long, [len(ln) for ln in long]
    for name in model_names():
        assert re.search(rf"^{re.escape(name)}\s", out, re.M), name


@pytest.mark.parametrize("name", model_names())
def test_models_detail_fits_100_columns_and_keeps_everything(name, capsys):
    import json

    assert main(["models", name, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert main(["models", name]) == 0
    out = capsys.readouterr().out
    long = [ln for ln in out.splitlines() if len(ln) > 100]
    assert not long, [len(ln) for ln in long]
    flat = _norm(out)
    for p in d["parameters"]:
        assert p["name"] in out and _norm(p["description"]) in flat, p["name"]
    for key in d["model_config_keys"]:
        assert _norm(f"{key}: {d['config_keys'][key]}") in flat, key
    if d["notes"]:
        assert _norm(d["notes"]) in flat


def test_models_listing_writes_repeated_body_names_as_braces():
    from dynid.cli.models import _parameter_names

    names = [f"{b}.{p}" for b in ("link1", "link2") for p in ("m", "mx")]
    assert _parameter_names(names) == "{link1 link2}.{m mx}"
    assert _parameter_names(["link1.m", "link2.mx"]) == "link1.m link2.mx"   # not a product: as is
    assert _parameter_names(["I", "L^2"]) == "I L^2"


# ------------------------------------------------------------------------------------------ process exit

def test_the_command_ends_fast_with_its_status_and_all_its_output(crank, tmp_path):
    """The console entry ends the process without tearing the interpreter down (``entry``): the JSON on stdout
    is whole, the files are written, the status is the command's; a failing run still exits 2 with its message."""
    from importlib.metadata import entry_points

    assert [e.value for e in entry_points(group="console_scripts") if e.name == "dynid"] == ["dynid.cli.main:entry"]
    proc = subprocess.run(DYNID + ["identify", str(crank / "id.csv"), "--model", "rotary3", "--out",
                                   str(tmp_path / "o"), "--no-report", "--json", "--quiet"],
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout)["success"] is True
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["IDNT1.PRG", "IDNT1.REC", "result.json"]
    bad = subprocess.run(DYNID + ["identify", str(tmp_path / "missing.csv"), "--model", "rotary3", "--out",
                                  str(tmp_path / "p")], capture_output=True, timeout=120)
    err = bad.stderr.decode()
    assert bad.returncode == 2 and err.startswith("dynid: error:") and "missing.csv" in err and "Traceback" not in err
    assert not (tmp_path / "p").exists()
