"""Measurement shared by the allocation tests of the per-cycle runtime objects."""

from __future__ import annotations

import tracemalloc
from typing import Callable, Sequence


def worst_step_transient(step: Callable[..., object], cycles: Sequence[tuple], warmup: int = 5) -> int:
    """Largest transient allocation [bytes] of one ``step(*args)`` over ``cycles[warmup:]`` (the first
    ``warmup`` cycles run untraced, so lazily created state does not count)."""
    for args in cycles[:warmup]:
        step(*args)
    tracemalloc.start()
    try:
        worst = 0
        for args in cycles[warmup:]:
            cur, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            step(*args)
            worst = max(worst, tracemalloc.get_traced_memory()[1] - cur)
    finally:
        tracemalloc.stop()
    return worst
