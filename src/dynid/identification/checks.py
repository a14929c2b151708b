"""Checks of a recording before an identification: what no fit can repair is refused up front, naming the column.

>>> import numpy as np
>>> from dynid.recording import Recording
>>> t = np.arange(100) * 0.01
>>> rec = Recording(t, np.sin(t)[:, None], np.zeros((100, 1)), source="run.csv")
>>> check_torque(rec, ["rotary"])
Traceback (most recent call last):
...
dynid.errors.InputDataError: run.csv, column tau1: the measured torque is 0 N m in every one of the 100 samples: the torque channel is not recorded; check that joint's torque channel (is it recorded? is its TorqueFactor set?): identification needs the measured torque
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputDataError
from ..recording import Recording
from ..units import force_unit

__all__ = ["check_torque", "check_torque_range"]


def check_torque(rec: Recording, joint_kinds: Sequence[str] | None = None) -> None:
    """Refuse a recording in which a joint's measured torque never changes.

    A torque that is the same in every sample — 0 where the channel is not recorded, a constant where it is
    stuck or scaled by a TorqueFactor of 0 around an offset — carries nothing of the motion: the fit would
    explain it by a constant or by nothing at all.

    Parameters
    ----------
    rec : Recording
        SI, joint side; ``tau`` ``(N, n_joints)`` [N m or N] (a recording without torque passes).
    joint_kinds : sequence of {"rotary", "linear"}, optional
        For the unit in the message (default rotary: N m).

    Raises
    ------
    InputDataError
        Naming the file, the first constant column (``tau2``) and its value, and the other constant columns.
    """
    if rec.tau is None or rec.n_samples == 0:
        return
    check_torque_range(rec.tau.min(axis=0), rec.tau.max(axis=0), rec.n_samples, rec.source, joint_kinds)


def check_torque_range(lowest: np.ndarray, highest: np.ndarray, n_samples: int, source: str,
                       joint_kinds: Sequence[str] | None = None) -> None:
    """:func:`check_torque` of a recording whose measured torque spans ``lowest``..``highest`` per joint over its
    ``n_samples`` samples (a recording read in blocks knows them from its first pass)."""
    constant = np.flatnonzero(np.asarray(lowest) == np.asarray(highest))
    if constant.size == 0:
        return
    j = int(constant[0])
    value = float(lowest[j]) + 0.0
    unit = force_unit(joint_kinds[j] if joint_kinds is not None else "rotary")
    why = "the torque channel is not recorded" if value == 0.0 else "the torque channel does not follow the motion"
    others = ", ".join(f"tau{k + 1}" for k in constant[1:])
    raise InputDataError(
        f"{source}, column tau{j + 1}: the measured torque is {value:g} {unit} in every one of the {n_samples} "
        f"samples: {why}" + (f" (so are {others})" if others else ""),
        hint="check that joint's torque channel (is it recorded? is its TorqueFactor set?): identification needs the "
             "measured torque")
