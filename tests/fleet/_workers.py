"""A batch worker for the concurrency test, in a module of its own so that a spawned process imports
only what it needs (not pytest, not the simulator)."""

from __future__ import annotations

import numpy as np

from dynid.fitted import FittedModel
from dynid.fleet.registry import Registry
from dynid.models import Plant, make_model


def write_runs(url: str, worker: int, n: int) -> list[int]:
    """Record ``n`` runs of robot ``w<worker>`` (rotary3, viscous = worker + k / 1000); returns their ids."""
    plant = Plant(make_model("rotary3", {"friction": "viscous+coulomb"}))
    std = [0.001, np.nan, 0.01, np.nan, 0.002, 0.005]
    reg = Registry(url)
    try:
        return [reg.record(FittedModel(plant, [0.5, 0.0, 20.0, 0.0, worker + k / 1000, 1.5], std), robot=f"w{worker}")
                for k in range(n)]
    finally:
        reg.close()
