"""Every example runs in a fresh process against the dynid under test (peers' examples break on import paths;
ours must not), and needs nothing outside the repository (issue 26: a fresh clone has no ../shared)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import dynid

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


def _run(script: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python script args`` in ``cwd`` with only the tested dynid's folder on the path: the installed package,
    or the tree PYTHONPATH gave the tests (the example itself relies on no path)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(Path(dynid.__file__).resolve().parents[1])
    return subprocess.run([sys.executable, str(script), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(script, tmp_path):
    proc = _run(script, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "succeeded" in proc.stdout


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_issue_26_examples_need_nothing_beside_the_repository(script):
    """No example reads ../shared (absent from a fresh clone): the URDF example uses the UR5 bundled with it."""
    text = script.read_text(encoding="utf-8")
    assert "shared" not in text and "parents[2]" not in text


def test_issue_26_the_urdf_example_says_what_is_missing(tmp_path):
    script = next(p for p in EXAMPLES if p.name == "serial_robot_from_urdf.py")
    proc = _run(script, str(tmp_path / "robot.urdf"), cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (f"serial_robot_from_urdf.py: error: no URDF at {tmp_path / 'robot.urdf'}: give the path "
                           "of a robot's URDF\n")
