"""The docstring examples of the runtime and simulation modules run (doctest)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["dynid.runtime.drive_units", "dynid.runtime.feedforward", "dynid.runtime.collision", "dynid.sim.profile",
           "dynid.sim.closed_loop"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
