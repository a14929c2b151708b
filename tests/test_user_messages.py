"""What a user reads (issue 26): warnings on the command line as ``dynid: warning: <message>`` — one line, no
source path, no category, from any thread —, and messages, hints and help that point only to what the user
has (the README, ``dynid <cmd> --help``, docstrings), never to the unshipped specification."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import dynid
from dynid.cli import _common, models as models_cli
from dynid.cli.main import main

SRC = Path(dynid.__file__).resolve().parent
UNSHIPPED = re.compile(r"spec/|\b(interfaces|models|files|identification|units-and-runtime|lagrange-and-parallel)\.md\b"
                       r"|\.\./shared|/shared/|\b(benchmarks|tests|examples|docs)/")


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string statements (docstrings of modules, classes, functions and attributes)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        for stmt in body if isinstance(body, list) else ():
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                found.add(id(stmt.value))
    return found


def test_issue_26_no_message_points_to_unshipped_files():
    """Every string of src/ that is not a docstring (messages, hints, warnings, --help, model notes) names no
    file of the specification or the repository that an installed dynid does not have."""
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                    and UNSHIPPED.search(node.value):
                bad.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.value[:80]!r}")
    assert not bad, bad


def test_issue_26_help_texts_point_to_nothing_unshipped(capsys):
    """Every command's --help, rendered, and what 'dynid models' prints."""
    from dynid.cli.main import SUBCOMMAND_MODULES

    texts = []
    for argv in [["--help"]] + [[name, "--help"] for name in SUBCOMMAND_MODULES]:
        with pytest.raises(SystemExit):
            main(argv)
        texts.append(capsys.readouterr().out)
    with pytest.raises(SystemExit):
        main(["registry", "drift", "--help"])
    texts.append(capsys.readouterr().out)
    assert all(t.startswith("usage: dynid") for t in texts)
    for argv in (["models"], ["models", "--json"]):    # the models' notes (on main: 'spec/interfaces.md §4')
        assert main(argv) == 0
        texts.append(capsys.readouterr().out)
    assert not [m.group(0) for t in texts for m in UNSHIPPED.finditer(t)]


# ---------------------------------------------------------------------------------------------- warnings

def _crank_rtde(path: Path, *, repeat_row: int | None = 500) -> Path:
    """An RTDE log (space separated, the RTDE client's layout) of a crank arm swinging for 20 s at 500 Hz:
    tau = 0.5 qdd - 20 sin q + 0.8 qd + 1.5 sign(qd) + noise (rotary3, q = 0 up); with ``repeat_row`` one
    row is written twice (the reader drops it and warns)."""
    t = np.arange(10_000) * 2e-3
    w = 2 * np.pi * 0.5
    q = 2.0 * np.sin(w * t)
    qd, qdd = 2.0 * w * np.cos(w * t), -2.0 * w ** 2 * np.sin(w * t)
    tau = 0.5 * qdd - 20.0 * np.sin(q) + 0.8 * qd + 1.5 * np.sign(qd) + np.random.default_rng(3).normal(0, 0.05, t.size)
    rows = np.column_stack([t, q, tau])
    if repeat_row is not None:
        rows = np.insert(rows, repeat_row, rows[repeat_row], axis=0)
    np.savetxt(path, rows, header="timestamp actual_q_0 target_moment_0", comments="", fmt="%.9g")
    return path


def test_issue_26_a_library_warning_prints_as_one_dynid_line_without_a_path(tmp_path):
    """The dynid command as a user runs it: the reader's warning (a repeated time stamp dropped) is one line
    'dynid: warning: <message>'; no '.py:' path, no 'UserWarning'. Before: '/.../dynid/io/rtde.py:133:
    UserWarning: ...' and the source line below it."""
    log = _crank_rtde(tmp_path / "log.csv")
    proc = subprocess.run([sys.executable, "-m", "dynid.cli.main", "identify", str(log), "--model", "rotary3", "--out",
                           str(tmp_path / "out"), "--no-report", "--cutoff", "default"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert f"dynid: warning: {log}: 1 rows repeating a time stamp were dropped" in lines
    assert ".py:" not in proc.stderr and "Warning:" not in proc.stderr and "warnings.warn" not in proc.stderr


def test_issue_26_warnings_of_worker_threads_numpy_and_other_libraries_print_the_same(monkeypatch, capsys):
    """Inside a command: a warning from the main thread, a plain thread, a thread pool, numpy, and a
    DeprecationWarning-like category of another library: each as 'dynid: warning: <message>' on one line;
    the hook is gone after the command."""
    def run(args):
        warnings.warn("from the main thread\n  (second line)", UserWarning)
        t = threading.Thread(target=warnings.warn, args=("from a plain thread",))
        t.start()
        t.join()
        with ThreadPoolExecutor(2) as pool:
            pool.submit(warnings.warn, "from a pool thread", FutureWarning).result()
        with np.errstate(divide="warn"):
            np.log(np.zeros(1))
        return 0

    monkeypatch.setattr(models_cli, "run", run)
    before = warnings.showwarning
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert main(["models"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == ["dynid: warning: from the main thread (second line)",
                                "dynid: warning: from a plain thread", "dynid: warning: from a pool thread",
                                "dynid: warning: divide by zero encountered in log"]
    assert warnings.showwarning is before


def test_issue_26_a_warning_under_a_progress_bar_is_written_above_it(monkeypatch):
    """On a terminal the warning goes through the bar (the bar is redrawn below it), not into its line."""
    logged = []
    bar = _common.Progress("t")
    monkeypatch.setattr(bar, "log", logged.append)
    monkeypatch.setattr(_common, "_ACTIVE", [bar])
    _common.show_warning(UserWarning("disk\nnearly full"), UserWarning, "/x/y.py", 3)
    assert logged == ["dynid: warning: disk nearly full"]


def test_issue_26_batch_reports_each_recordings_warnings(tmp_path, capsys):
    """A batch's task warnings come back with its result (a Dask worker's would stay in the worker's log) and
    print as 'dynid: warning: <stem>: <message>'; --json has them per run."""
    folder = tmp_path / "logs"
    folder.mkdir()
    _crank_rtde(folder / "cell1.csv")
    _crank_rtde(folder / "cell2.csv", repeat_row=None)
    code = main(["batch", str(folder), "--model", "rotary3", "--out", str(tmp_path / "out"), "--no-report",
                 "--cutoff", "default", "--json"])
    out, err = capsys.readouterr()
    assert code == 0
    assert f"dynid: warning: cell1: {folder / 'cell1.csv'}: 1 rows repeating a time stamp were dropped" in err.splitlines()
    assert "cell2" not in err and ".py:" not in err
    import json

    runs = {Path(r["recording"]).stem: r for r in json.loads(out)["runs"]}
    assert runs["cell1"]["warnings"] == [f"{folder / 'cell1.csv'}: 1 rows repeating a time stamp were dropped"]
    assert runs["cell2"]["warnings"] == []
