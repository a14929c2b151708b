"""Colours and progress bars on a terminal, plain text when piped, with or without rich."""

from __future__ import annotations

import io
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from dynid.cli import _common
from dynid.cli._common import Progress, style

pty = pytest.importorskip("pty")

# a dynid run in which 'rich' cannot be imported, as on a machine without the extra 'terminal'
NO_RICH = ("import sys; sys.modules['rich'] = None; sys.modules['rich.progress'] = None; "
           "from dynid.cli.main import main; sys.exit(main())")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    env["TERM"] = "xterm-256color"
    env.update(extra)
    return env


def _dynid(argv: list[str], *, rich: bool = True) -> list[str]:
    return [sys.executable, "-m", "dynid.cli.main", *argv] if rich else [sys.executable, "-c", NO_RICH, *argv]


def _run_on_terminal(cmd: list[str], env: dict[str, str]) -> tuple[float | None, bytes, bytes, int]:
    """Run ``cmd`` with stderr on a pseudo-terminal, stdout piped: (seconds to the first byte on the
    terminal, terminal bytes, stdout bytes, exit status)."""
    master, slave = pty.openpty()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    first, chunks = None, []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 0.05)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:   # the terminal's other side closed (the process ended)
                break
            if not data:
                break
            first = time.perf_counter() - t0 if first is None else first
            chunks.append(data)
        out = proc.stdout.read()
    finally:
        os.close(master)
        proc.stdout.close()
    return first, b"".join(chunks), out, proc.wait(timeout=120)


@pytest.fixture(scope="module")
def large_recording(tmp_path_factory) -> Path:
    """300 000 samples of a swinging crank arm (1 kHz, 5 minutes)."""
    path = tmp_path_factory.mktemp("large") / "large.csv"
    t = np.arange(300_000) * 1e-3
    w = 2 * np.pi * 0.5
    q = 2.0 * np.sin(w * t)
    qd, qdd = 2.0 * w * np.cos(w * t), -2.0 * w**2 * np.sin(w * t)
    tau = 0.5 * qdd + 20.0 * np.cos(q) + 0.8 * qd + 1.5 * np.sign(qd)
    tau += np.random.default_rng(0).normal(0.0, 0.05, t.size)
    np.savetxt(path, np.column_stack([t, q, tau]), delimiter=",", header="t,q1,tau1", comments="", fmt="%.9g")
    return path


# ------------------------------------------------------------------------------------------ style()

def test_style_colours_only_a_colour_terminal(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    term = _Terminal()
    assert style("FAILED", "failure", term) == "\033[1;31mFAILED\033[0m"
    assert style("SUCCEEDED", "success", term) == "\033[1;32mSUCCEEDED\033[0m"
    assert style("[warning]", "warning", term) == "\033[33m[warning]\033[0m"
    assert style("[error]", "error", term).startswith("\033[31m")
    assert style("x", "no such kind", term) == "x"
    assert style("FAILED", "failure", io.StringIO()) == "FAILED"      # piped / captured: plain
    monkeypatch.setenv("NO_COLOR", "1")
    assert style("FAILED", "failure", term) == "FAILED"
    monkeypatch.setenv("NO_COLOR", "")                               # empty: as if unset (no-color.org)
    assert style("FAILED", "failure", term) != "FAILED"
    monkeypatch.setenv("TERM", "dumb")
    assert style("FAILED", "failure", term) == "FAILED"


# ------------------------------------------------------------------------------------------ piped: plain

def test_piped_output_has_no_escape_codes(large_recording, tmp_path):
    """Everything a script reads (stdout and stderr of a run, of a listing, of an error) is plain."""
    runs = [["identify", str(large_recording), "--model", "rotary3", "--out", str(tmp_path / "o"), "--no-report"],
            ["models"],
            ["identify", str(large_recording), "--model", "rotary3", "--out", str(large_recording / "x")]]
    for argv in runs:
        proc = subprocess.run(_dynid(argv), capture_output=True, env=_env(), timeout=300)
        assert proc.returncode in (0, 1, 2)
        assert b"\x1b" not in proc.stdout and b"\x1b" not in proc.stderr, argv
        assert proc.stdout or proc.stderr


# ------------------------------------------------------------------------------------------ terminal

@pytest.mark.parametrize("rich", [True, False], ids=["rich", "plain"])
def test_progress_shows_within_a_second_of_the_start(rich, large_recording, tmp_path):
    """A 300k-row recording: the bar (reading is a stage) is on the terminal within a second."""
    if rich:
        pytest.importorskip("rich")
    argv = ["identify", str(large_recording), "--model", "rotary3", "--out", str(tmp_path / "o"), "--no-report"]
    first, term, out, code = _run_on_terminal(_dynid(argv, rich=rich), _env())
    assert code in (0, 1), term.decode(errors="replace")
    assert first is not None and first < 1.0, first
    text = term.decode(errors="replace")
    assert "identify" in text and "reading large.csv" in text
    assert ("\u2501" in text) == rich           # rich's bar characters, or the plain '#---' bar
    assert b"\x1b" not in out                   # stdout is piped: plain summary


def test_error_word_is_coloured_on_a_terminal_unless_NO_COLOR(tmp_path):
    (tmp_path / "afile").write_text("x")
    argv = ["derive", "--model", "rotary3", "--out", str(tmp_path / "afile" / "d")]
    _, term, _, code = _run_on_terminal(_dynid(argv), _env())
    assert code == 2 and b"\x1b[31merror:\x1b[0m cannot write to" in term
    _, term, _, code = _run_on_terminal(_dynid(argv), _env(NO_COLOR="1"))
    assert code == 2 and b"\x1b" not in term and b"dynid: error: cannot write to" in term


# ------------------------------------------------------------------------------------------ Progress

def test_plain_progress_bar_without_rich(monkeypatch):
    monkeypatch.setattr(_common, "_rich_available", lambda: False)
    term = _Terminal()
    with Progress("identify", stream=term) as progress:
        progress("reading run.csv", 0.0)
        part = progress.part(0.05, 0.85)
        part("regressor", 0.5)
        part("conditioning", 0.0)      # a sub-task starting over: the bar does not go back
        assert progress.fraction == pytest.approx(0.45)
    text = term.getvalue()
    assert "identify [" in text and "reading run.csv" in text and " 45% regressor" in text
    assert text.endswith("\r") and text.rsplit("\r", 2)[-2].strip() == ""   # the line is cleared
    assert "\x1b" not in text


def test_progress_is_silent_when_piped_or_quiet(monkeypatch):
    for stream, quiet in ((io.StringIO(), False), (_Terminal(), True)):
        with Progress("identify", quiet=quiet, stream=stream) as progress:
            progress("reading", 0.0)
            progress("done", 1.0)
        assert stream.getvalue() == ""


def test_progress_works_without_rich_installed(without_modules):
    without_modules("rich")
    term = _Terminal()
    with Progress("demo", stream=term) as progress:
        progress("simulating", 0.1)
    assert "demo [" in term.getvalue()
