"""The library's progress callbacks: ``progress(stage, fraction)`` (``fraction`` 0..1 of the call's work).

A long computation takes an optional callback and reports what it is doing; the command line draws it as a
bar (``dynid.cli._common.Progress``), the library never draws anything. :func:`part` hands a sub-task its
share of the bar.
"""

from __future__ import annotations

from typing import Callable, Optional

__all__ = ["ProgressCallback", "part", "quiet"]

ProgressCallback = Callable[[str, float], None]


def quiet(stage: str, fraction: float) -> None:
    """The callback of a caller that wants no progress."""


def part(progress: Optional[ProgressCallback], lo: float, hi: float, prefix: str = "") -> ProgressCallback:
    """The callback of a sub-task covering ``lo``..``hi`` of ``progress`` (None: :func:`quiet`); ``prefix`` is
    put before its stages (e.g. ``"run without the model: "``)."""
    if progress is None:
        return quiet
    return lambda stage, fraction: progress(prefix + stage, lo + (hi - lo) * min(max(float(fraction), 0.0), 1.0))
