"""Bounds on the work a computation may take on, measured, with the reason for each (a command that would run
for hours refuses, or stops with its best answer and says so).

Kept apart from the modules they bound so that the command line's ``--help`` can quote them without
importing those modules.
"""

from __future__ import annotations

__all__ = ["MAX_HARMONICS", "HARMONICS_WHY", "TIME_BUDGET_S"]

MAX_HARMONICS = 20
"""Most harmonics of an optimised Fourier excitation (:class:`dynid.excite.FourierOptions`).

Measured with ``dynid excite --model puma --fourier N`` over the source's PUMA range, 20 s record, no time
budget, on 2 cores: N = 5 9 s, 10 33 s, 15 76 s, 20 287 s, 25 958 s — about N^5 (each SLSQP step solves a
least-squares problem of (2N - 1) coefficients per joint under constraints on a grid of 16 N samples per
joint), so N = 50 would take hours; the condition number stops improving past N = 10 (21 at N = 5, 14–17
from N = 10 on)."""

HARMONICS_WHY = ("The optimiser's work grows about as N^5: on a 6-axis arm (PUMA, 20 s record) N = 10 takes half "
                 "a minute, N = 20 five minutes, N = 25 sixteen, N = 50 would take hours; past N = 10 the condition "
                 "number no longer improves.")
"""Why :data:`MAX_HARMONICS` (the error says it)."""

TIME_BUDGET_S = 120.0
"""Default wall time of :func:`dynid.excite.optimize_fourier` [s]: then the best design found so far is returned
(within it N <= 15 finishes on a 6-axis arm; N = 20 is stopped with its best design)."""
