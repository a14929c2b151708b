"""Shared fixtures: seeded generators, simulated recordings, the shared real-data folder."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_REAL = ROOT.parent / "shared" / "data" / "real"


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="session")
def real_data() -> Path:
    """../shared/data/real (never copied into the repo); tests using it skip when it is absent."""
    if not SHARED_REAL.is_dir():
        pytest.skip(f"real recordings not found at {SHARED_REAL} (../shared/data/real beside the repository)")
    return SHARED_REAL


@pytest.fixture
def without_modules(monkeypatch):
    """``without_modules("matplotlib", ...)``: those packages (and their submodules already
    imported) cannot be imported for the rest of the test, as on a machine without them."""
    def hide(*names: str) -> None:
        for name in names:
            for key in [m for m in sys.modules if m.startswith(name + ".")] + [name]:
                monkeypatch.setitem(sys.modules, key, None)
    return hide
