"""Controller logs and commanded trajectories: a recording plus optional command columns.

ROS 2 bags and UR RTDE logs are read as recordings (:func:`~dynid.io.readers.read_recording`); they
carry no command columns.

Besides the recording columns (spec/interfaces.md §1: ``t, q1.., tau1.., dq1.., ddq1..``) a
controller log may hold, per joint, ``pcmd``, ``vcmd``, ``acmd`` (the command) and ``taddcmd``
(the additive torque sent to the drive). CSV and ``.npz`` (arrays of shape ``(N, n_joints)`` under
those names) are read. Command columns follow the position units (``units``, else the file's ``# units:``
line, else SI); torques are N·m / N.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import FileFormatError, InputDataError
from ..recording import Recording
from ..units import position_scale
from .readers import _read_csv, read_recording, recording_units

__all__ = ["ControllerLog", "read_controller_log", "COMMAND_COLUMNS"]

COMMAND_COLUMNS = ("pcmd", "vcmd", "acmd", "taddcmd")
_RE = re.compile(r"^(pcmd|vcmd|acmd|taddcmd)(\d+)$")


@dataclass(frozen=True)
class ControllerLog:
    """A recording (SI) and the command columns found in the file.

    recording : Recording ; columns : {name: (N, n_joints)} for the names of :data:`COMMAND_COLUMNS`
    present in full (SI: positions, velocities, accelerations converted from ``units``)
    """

    recording: Recording
    columns: dict

    def get(self, name: str) -> np.ndarray | None:
        return self.columns.get(name)


def read_controller_log(path: str | os.PathLike, *, n_joints: int, joint_kinds: Sequence[str] | None = None,
                        units: str | None = None, require_tau: bool = True, joint_names: Sequence[str] | None = None,
                        topic: str | None = None, torque_constants: Sequence[float] | None = None) -> ControllerLog:
    """Read a controller log (see the module docstring).

    Raises
    ------
    FileFormatError, InputDataError
        As :func:`~dynid.io.readers.read_recording`; also for command columns that do not cover
        every joint or hold non-finite values.
    """
    from . import ros2, rtde
    from .readers import _first_row

    path = Path(path)
    rec = read_recording(path, n_joints=n_joints, joint_kinds=joint_kinds, units=units, require_tau=require_tau,
                         joint_names=joint_names, topic=topic, torque_constants=torque_constants)
    if path.suffix.lower() == ".mcap" or ros2.is_mcap(path) or rtde.is_rtde_header(_first_row(path)):
        groups = {}                     # ROS 2 bags and RTDE logs: measured signals only, no command columns
    elif path.suffix.lower() == ".npz":
        with np.load(path, allow_pickle=False) as z:
            raw = {k: np.asarray(z[k], dtype=float) for k in COMMAND_COLUMNS if k in z.files}
        groups = {k: {j + 1: v[:, j] for j in range(v.shape[1])} for k, v in raw.items() if v.ndim == 2}
    elif path.suffix.lower() in (".parquet", ".pq"):
        groups = {}
    else:
        cols, _ = _read_csv(path)
        groups: dict[str, dict[int, np.ndarray]] = {}
        for name, values in cols.items():
            m = _RE.match(name)
            if m:
                groups.setdefault(m.group(1), {})[int(m.group(2))] = values
    kinds = list(joint_kinds) if joint_kinds is not None else ["rotary"] * n_joints
    scale = position_scale(kinds, recording_units(rec.meta, units))     # (the reader checked the file's line)
    out = {}
    for name, g in groups.items():
        missing = [j for j in range(1, n_joints + 1) if j not in g]
        if missing:
            raise FileFormatError(f"{path}: column {name}{missing[0]} is missing (joints 1..{n_joints} need one each)",
                                  hint=f"give {name}1..{name}{n_joints} or none of them")
        a = np.column_stack([g[j] for j in range(1, n_joints + 1)])
        if a.shape[0] != rec.n_samples:
            raise FileFormatError(f"{path}: column {name}1 has {a.shape[0]} rows, t has {rec.n_samples}")
        bad = ~np.isfinite(a)
        if bad.any():
            row, col = np.argwhere(bad)[0]
            raise InputDataError(f"{path}, column {name}{col + 1}: value at row {row + 1} is not finite",
                                 hint="remove or interpolate the bad samples")
        out[name] = a if name == "taddcmd" else a * scale
    return ControllerLog(rec, out)
