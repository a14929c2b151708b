"""The docstring examples run (doctest), and the README's promises hold."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

MODULES = ["dynid.units", "dynid.metrics", "dynid.identification.pipeline", "dynid.identification.base_params", "dynid.signal.conditioning",
           "dynid.models.puma", "dynid.models.delta",
           "dynid.models.serial", "dynid.models.transmission", "dynid.identification.select",
           "dynid.fitted", "dynid.models.friction", "dynid.threads", "dynid.identification.identifier"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_readme_opens_with_the_two_commands():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = readme.split("```bash", 1)[1].split("```", 1)[0]
    lines = [ln.split("#")[0].strip() for ln in block.strip().splitlines()]
    assert lines == ["pip install . && dynid demo", "pip install '.[test]' && pytest"]


def test_readme_python_section_runs(tmp_path, monkeypatch, capsys):
    """The README's Python example, run as a user would paste it (in an empty folder)."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    code = readme.split("## Python", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md (Python)", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.split() == ["True", "0.2"]
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {"result.json", "IDNT1.PRG", "IDNT1.REC", "report.html"}
