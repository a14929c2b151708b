"""The report modules' docstring examples run (doctest)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["dynid.report._spec", "dynid.report._svg", "dynid.report._report", "dynid.report._figures"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
