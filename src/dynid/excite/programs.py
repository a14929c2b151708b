"""The source's example identification programs (spec/identification.md §1), in softMC user units.

They are the defaults of ``dynid excite --model NAME`` when ``--start``, ``--target`` or ``--freqs`` are
not given, and the reference sine program the Fourier optimiser is compared with. For a model the
source has no program for but which has a home position (the hexapod), :func:`model_program` makes
dynid's own: every joint ±50 mm (linear) or ±20° (rotary) about home, the source's SCARA frequency
ratios extended to six axes, factor 0.5.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..models.scara import IDENT_FILTER_HZ, IDENT_FREQS_HZ, IDENT_RECORD_S, IDENT_SETTLE_S, IDENT_START, IDENT_TARGET

__all__ = ["SourceProgram", "SOURCE_PROGRAMS", "source_program", "model_program", "DEFAULT_BASE"]


@dataclass(frozen=True)
class SourceProgram:
    """One example program: ``start``/``target`` in softMC user units (deg, mm), ``SWfreq = factor*{base}`` [Hz]."""

    start: tuple[float, ...]
    target: tuple[float, ...]
    factor: float
    base: tuple[float, ...]
    record_s: float = 20.0
    settle_s: float = 2.0
    filter_hz: float = 80.0
    min_cycles: float = 3.0
    origin: str = "source"
    """``source``: the source's example program; ``dynid``: dynid's default for a model the source has none for."""

    def subset(self, n: int) -> "SourceProgram":
        """The first ``n`` axes (the source's 3-axis variants use the first three values)."""
        return SourceProgram(self.start[:n], self.target[:n], self.factor, self.base[:n], self.record_s, self.settle_s,
                             self.filter_hz, self.min_cycles, self.origin)


_SCARA_BASE = tuple(round(f / 0.3, 10) for f in IDENT_FREQS_HZ)
_PUMA = ((-100.0, -170.0, 100.0, -60.0, -60.0, -100.0), (100.0, -40.0, 235.0, 60.0, 60.0, 100.0),
         (1.56, 1.0, 1.31, 1.47, 1.21, 1.17))
_SINGLE = SourceProgram((-350.0,), (350.0,), 1.0, (1.5,))
_DELTA = SourceProgram((-30.0, -30.0, -30.0, -200.0), (70.0, 70.0, 70.0, 200.0), 0.3, (1.0, 1.27, 1.43, 1.13))
_SCARA = SourceProgram(IDENT_START, IDENT_TARGET, 0.3, _SCARA_BASE, IDENT_RECORD_S, IDENT_SETTLE_S, IDENT_FILTER_HZ)

SOURCE_PROGRAMS: dict[str, SourceProgram] = {
    **{f"rotary{k}": _SINGLE for k in (1, 2, 3)},
    **{f"linear{k}": _SINGLE for k in (1, 2, 3)},
    "scara4": _SCARA,
    "scara3": _SCARA.subset(3),
    "delta4": _DELTA,
    "delta3": _DELTA.subset(3),
    "puma": SourceProgram(_PUMA[0], _PUMA[1], 0.15, _PUMA[2]),
    # semi-static: same points, 0.02*{...}, 2-3 minutes, one cycle is enough (identification.md §7)
    "puma-gravity": SourceProgram(_PUMA[0], _PUMA[1], 0.02, _PUMA[2], record_s=150.0, min_cycles=1.0),
}


def source_program(model_name: str, n_joints: int) -> SourceProgram | None:
    """The source's program for a model (None if the source has none or the axis count differs)."""
    p = SOURCE_PROGRAMS.get(model_name)
    return p if p is not None and len(p.start) == n_joints else None


DEFAULT_BASE = (1.0, 1.27, 1.43, 1.13, 1.37, 1.19, 1.31, 1.07)
"""Base frequency ratios of dynid's default programs (the source's SCARA ratios, then more incommensurate ones)."""


def model_program(model) -> SourceProgram | None:
    """The source's program for ``model``; else dynid's default about the model's home position
    (:meth:`~dynid.models.DynamicModel.home_positions`), or None when the model has neither."""
    p = source_program(model.name, model.n_joints)
    if p is not None:
        return p
    home = model.home_positions()
    if home is None or model.n_joints > len(DEFAULT_BASE):
        return None
    half = np.array([50.0 if k == "linear" else 20.0 for k in model.joint_kinds])       # mm, deg
    centre = np.asarray(home, dtype=float) * np.array([1000.0 if k == "linear" else 180.0 / np.pi
                                                       for k in model.joint_kinds])
    return SourceProgram(tuple((centre - half).round(6).tolist()), tuple((centre + half).round(6).tolist()), 0.5,
                         DEFAULT_BASE[:model.n_joints], origin="dynid")
