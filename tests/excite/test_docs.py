"""The docstring examples of the excitation package run (doctest)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["dynid.excite", "dynid.excite.sine", "dynid.excite.limits", "dynid.excite.identifiability"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
