"""The docstring examples run (doctest), and the README's promises hold."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

MODULES = ["dynid.units", "dynid.metrics", "dynid.identification.pipeline", "dynid.identification.base_params", "dynid.signal.conditioning",
           "dynid.models.puma", "dynid.models.delta",
           "dynid.models.serial", "dynid.models.transmission", "dynid.identification.select",
           "dynid.fitted", "dynid.models.friction"]


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
