"""Universal Robots RTDE logs (CSV) as recordings.

The RTDE client's ``record.py`` writes a header row ``timestamp actual_q_0 actual_q_1 ...`` and one
row per controller cycle, space-separated; other loggers (``ur_rtde``) write the same names
comma-separated. Both are read, recognised by the header (not by the file name). Columns used:

``timestamp``                        controller time [s]
``actual_q_0..``                     joint positions [rad] → q
``actual_qd_0..``                    joint velocities [rad/s] → dq (optional)
``target_moment_0..``                target joint torques [N·m] → tau
``actual_current_0..``               motor currents [A] × the configuration's ``torque_constants``
                                     [N·m/A per joint] → tau

When torque constants are given and the log has currents, the torque is current × constant;
otherwise ``target_moment``. Other columns are ignored; lines before the header that start with
``#`` are metadata (``# key: value``). Rows are sorted by time and rows repeating a time stamp are
dropped (a warning counts them). The log is only read: nothing is written beside it.
"""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import ConfigError, FileFormatError

__all__ = ["read_rtde", "is_rtde_header", "rtde_layout", "RtdeLayout"]

_SPLIT = re.compile(r"[,;\s]+")
_VECTOR = re.compile(r"^(actual_q|actual_qd|target_moment|actual_current)_(\d+)$")


def is_rtde_header(line: str) -> bool:
    """True when a header row names the RTDE columns ``timestamp`` and ``actual_q_0``."""
    names = set(_SPLIT.split(line.strip()))
    return "timestamp" in names and "actual_q_0" in names


def read_rtde(path: str | os.PathLike, preamble: tuple[dict[str, str], str | None, int], *,
              torque_constants: Sequence[float] | None = None,
              n_joints: int | None = None, require_tau: bool = False
              ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Columns and metadata of an RTDE log (see the module docstring).

    Parameters
    ----------
    path : path-like
    preamble : (meta, header line, lines up to it)
        The log's ``#`` lines and header, as :func:`dynid.io.readers.read_preamble` reads them.
    torque_constants : sequence of float, optional
        Per joint [N·m/A] (configuration key ``torque_constants``), for logs with ``actual_current_*``.
    n_joints : int, optional
        Number of joints of the model (checked against the ``actual_q_*`` columns).
    require_tau : bool
        Whether the log must give torques.

    Returns
    -------
    cols : dict of str to ndarray
        ``t`` (N,) [s], ``q1..qn`` and where available ``dq1..dqn``, ``tau1..taun``, SI.
    meta : dict of str to str
        The ``#`` lines, plus ``format: ur-rtde`` and ``torque`` (which columns gave it).

    Raises
    ------
    FileFormatError
        Unreadable log, joint columns not numbered from 0, a number of joints unlike the model's, no
        torque columns when ``require_tau``.
    ConfigError
        Torques are needed, the log has only currents, and no (or the wrong number of) torque constants.
    """
    layout = rtde_layout(path, preamble, torque_constants=torque_constants, n_joints=n_joints,
                         require_tau=require_tau)
    data = _numbers(Path(path), layout.delimiter, layout.skip, layout.cols_at, layout.want, layout.n_cols)
    t = data[:, 0]
    order = np.argsort(t, kind="stable")
    backwards = int((np.diff(t) < 0).sum())
    t_sorted = t[order]
    keep = order[np.r_[True, np.diff(t_sorted) > 0]]
    if backwards or keep.size < t.size:
        warnings.warn(f"{path}: " + "; ".join(x for x in (
            f"{backwards} rows out of time order were sorted" if backwards else "",
            f"{t.size - keep.size} rows repeating a time stamp were dropped" if keep.size < t.size else "") if x),
            stacklevel=3)
    return layout.columns(data[keep]), layout.meta


@dataclass(frozen=True)
class RtdeLayout:
    """Where an RTDE log's columns are: the header's ``delimiter`` (None: whitespace), the lines before the data
    (``skip``), the header's ``n_cols``, the columns read (``cols_at``, named ``want``: the time, then q, dq and the
    torque source per joint), the joints ``n``, the torque source (``torque``: ``target_moment``,
    ``actual_current`` or None) and its ``constants``, the metadata."""

    delimiter: str | None
    skip: int
    n_cols: int
    cols_at: list
    want: list
    n: int
    has_qd: bool
    torque: str | None
    constants: np.ndarray | None
    meta: dict

    def columns(self, data: np.ndarray) -> dict[str, np.ndarray]:
        """The recording's columns (``t``, ``q1..``, ``dq1..``, ``tau1..``, SI) of rows of the ``cols_at`` numbers."""
        n = self.n
        cols = {"t": data[:, 0]}
        k = 1
        for prefix, present in (("q", True), ("dq", self.has_qd), ("tau", self.torque is not None)):
            if not present:
                continue
            block = data[:, k:k + n]
            if prefix == "tau" and self.torque == "actual_current":
                block = block * self.constants
            for j in range(n):
                cols[f"{prefix}{j + 1}"] = block[:, j]
            k += n
        return cols


def rtde_layout(path: str | os.PathLike, preamble: tuple[dict[str, str], str | None, int], *,
                torque_constants: Sequence[float] | None = None, n_joints: int | None = None,
                require_tau: bool = False) -> RtdeLayout:
    """The :class:`RtdeLayout` of an RTDE log's header (the checks of :func:`read_rtde`)."""
    path = Path(path)
    src = str(path)
    meta, header, skip = _header(path, preamble)
    delimiter = "," if "," in header else None
    names = [h.strip().strip('"') for h in (header.split(",") if delimiter else header.split())]
    groups: dict[str, dict[int, int]] = {}
    for col, name in enumerate(names):
        m = _VECTOR.match(name)
        if m:
            groups.setdefault(m.group(1), {})[int(m.group(2))] = col
    n = len(groups["actual_q"])
    for kind, g in groups.items():
        if sorted(g) != list(range(len(g))) or (len(g) != n):
            want = ", ".join(f"{kind}_{j}" for j in range(n))
            raise FileFormatError(f"{src}: columns {kind}_* are {', '.join(f'{kind}_{j}' for j in sorted(g))}, "
                                  f"expected {want} (one per joint, numbered from 0)",
                                  hint="log every joint of each vector field")
    if n_joints is not None and n != n_joints:
        raise FileFormatError(f"{src}: the log has {n} joints (actual_q_0..actual_q_{n - 1}) but the model has "
                              f"{n_joints}", hint="choose the model that matches the robot")
    constants = None
    if torque_constants is not None:
        constants = np.asarray(torque_constants, dtype=float).ravel()
        if constants.size == 1:
            constants = np.full(n, constants[0])
        if constants.size != n:
            raise ConfigError(f"torque_constants has {constants.size} values but {src} has {n} joints",
                              hint="give one torque constant [N m/A] per joint")
    if constants is not None and "actual_current" in groups:
        torque = "actual_current"
    elif "target_moment" in groups:
        torque = "target_moment"
    elif "actual_current" in groups:
        torque = None
        if require_tau:
            raise ConfigError(f"{src}: the log gives motor currents (actual_current_0..) but no torque constants",
                              hint="set torque_constants [N m/A per joint] in the model configuration to convert "
                                   "the currents to torques")
    else:
        torque = None
        if require_tau:
            raise FileFormatError(f"{src}: the log has no torques: neither target_moment_0.. nor actual_current_0.. "
                                  "columns", hint="record target_moment or actual_current in the RTDE output recipe")
    want = ["timestamp"] + [f"actual_q_{j}" for j in range(n)]
    if "actual_qd" in groups:
        want += [f"actual_qd_{j}" for j in range(n)]
    if torque is not None:
        want += [f"{torque}_{j}" for j in range(n)]
    meta = {**meta, "format": "ur-rtde"}
    if torque is not None:
        meta["torque"] = ("actual_current x torque_constants" if torque == "actual_current" else "target_moment")
    return RtdeLayout(delimiter, skip, len(names), [names.index(w) for w in want], want, n, "actual_qd" in groups,
                      torque, constants, meta)


def _header(path: Path, preamble: tuple[dict[str, str], str | None, int]) -> tuple[dict[str, str], str, int]:
    """``# key: value`` lines, the header row, and the number of lines up to it (checked to be RTDE's)."""
    meta, header, skip = preamble
    if header is None or not is_rtde_header(header.strip()):
        raise FileFormatError(f"{path}: no RTDE header row (timestamp actual_q_0 ...)",
                              hint="give the log as written by the RTDE client's record.py")
    return meta, header.strip(), skip


def _numbers(path: Path, delimiter: str | None, skip: int, cols_at: list[int], want: list[str],
             n_cols: int) -> np.ndarray:
    src = str(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "input contained no data" is handled below
            data = np.loadtxt(path, delimiter=delimiter, skiprows=skip, usecols=cols_at, comments="#", ndmin=2,
                              encoding="utf-8-sig")
    except (ValueError, IndexError):
        data = None
    if data is None:
        with open(path, encoding="utf-8-sig") as fh:
            rows = fh.read().splitlines()[skip:]
        for r, line in enumerate((x for x in rows if x.strip() and not x.lstrip().startswith("#")), start=1):
            fields = line.split(delimiter)
            if len(fields) != n_cols:
                raise FileFormatError(f"{src}: data row {r} has {len(fields)} fields but the header has {n_cols}",
                                      hint="every row needs one value per header column")
            for name, c in zip(want, cols_at):
                try:
                    float(fields[c])
                except ValueError:
                    raise FileFormatError(f"{src}, column {name}: row {r} holds {fields[c].strip()[:20]!r}, not a "
                                          "number", hint="fix or remove that row") from None
        raise FileFormatError(f"{src}: the RTDE log cannot be read as numbers")  # pragma: no cover
    if data.size == 0:
        raise FileFormatError(f"{src}: the header is there but there are no data rows",
                              hint="the log holds no samples; record again")
    return data
