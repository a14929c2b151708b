"""Shared fixtures: seeded generators, simulated recordings, the shared real-data folder."""

from __future__ import annotations

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
