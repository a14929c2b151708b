"""Read recordings: CSV (spec/interfaces.md §1), NPZ, Parquet (extra ``parquet``), and behind the same
function ROS 2 bags (:mod:`dynid.io.ros2`, extra ``ros``) and UR RTDE logs (:mod:`dynid.io.rtde`).

CSV layout: optional ``# key: value`` metadata lines, exactly one header row, comma-separated
numbers. Columns by name, any order: ``t``, ``q1..qn``, ``tau1..taun``, optional ``dq1..dqn`` and
``ddq1..ddqn`` (``qd``/``qdd`` also accepted). Other columns are ignored.

Units: a ``# units: si`` or ``# units: softmc`` metadata line (a Parquet file's ``units`` key) declares the
position units; they are used when the caller gives none, and an explicit choice that contradicts them is an
error, as is a value dynid does not know (:func:`recording_units`).
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from ..errors import ConfigError, FileFormatError, InputDataError, MissingExtraError
from ..recording import Recording, check_values
from ..models.transmission import Transmission
from ..units import position_scale

__all__ = ["read_recording", "read_preamble", "recording_units", "write_recording_csv", "recording_csv", "MIN_SAMPLES",
           "UNITS"]

MIN_SAMPLES = 50
"""Fewest samples a recording may have (filtering, trimming and fitting need more in practice)."""

UNITS = ("si", "softmc")
"""Position units of a recording: SI (rad, m) or softMC user units (deg for rotary, mm for linear joints)."""

_ALIASES = {"q": "q", "tau": "tau", "dq": "dq", "qd": "dq", "ddq": "ddq", "qdd": "ddq"}
_COLUMN_RE = re.compile(r"^(q|tau|dq|qd|ddq|qdd)(\d+)$")


def read_recording(
    path: str | os.PathLike,
    *,
    n_joints: int | None = None,
    joint_kinds: Sequence[str] | None = None,
    units: str | None = None,
    require_tau: bool = False,
    use_derivatives: bool = True,
    transmission: Transmission | None = None,
    joint_names: Sequence[str] | None = None,
    topic: str | None = None,
    torque_constants: Sequence[float] | None = None,
) -> Recording:
    """Read a recording file and convert it to SI.

    Parameters
    ----------
    path : path-like
        ``.csv`` (or any text), ``.npz`` or ``.parquet`` file; a ROS 2 bag (``.mcap`` file or rosbag2
        folder, extra ``ros``: :mod:`dynid.io.ros2`); a UR RTDE log (recognised by its header
        ``timestamp actual_q_0 ...``: :mod:`dynid.io.rtde`).
    n_joints : int, optional
        Number of joints the model has. A file with more or fewer joints is rejected.
    joint_kinds : sequence of {"rotary", "linear"}, optional
        Needed for ``units="softmc"`` (deg for rotary, mm for linear joints).
    units : {"si", "softmc"}, optional
        Units of positions, velocities and accelerations in the file. Torques are N·m / N in both. Default:
        the file's ``# units:`` metadata line, else ``"si"``; a given value the line contradicts is an error.
    require_tau : bool
        Whether torque columns must be present (an error naming the missing columns otherwise). By
        default they may be absent (a motion to predict); :meth:`dynid.Identifier.fit` and ``dynid
        identify`` read with ``require_tau=True``.
    use_derivatives : bool
        Whether to keep ``dq``/``ddq`` columns when the file has them.
    transmission : Transmission, optional
        The model's drive trains (configuration key ``transmission``). Columns it declares motor side
        are converted to the joint side after the unit conversion: ``q = R^-1 q_motor + offsets``,
        ``dq = R^-1 dq_motor``, ``tau = R^T tau_motor`` (:mod:`dynid.models.transmission`).
    joint_names : sequence of str, optional
        ROS 2 bags: the model's joints in column order, matched by name to the messages' joints
        (configuration key ``joint_names``; default: the order of the first message).
    topic : str, optional
        ROS 2 bags: the ``sensor_msgs/msg/JointState`` topic to read, needed when there are several.
    torque_constants : sequence of float, optional
        RTDE logs: per joint [N·m/A], turning ``actual_current_*`` into torques (configuration key
        ``torque_constants``).

    Returns
    -------
    Recording

    Raises
    ------
    FileFormatError
        The file is missing, empty, not parseable, or lacks required columns; its ``# units:`` line holds
        a value dynid does not know.
    ConfigError
        ``units`` contradicts the file's ``# units:`` line.
    InputDataError
        The values are unusable: NaN/inf, time not increasing, too few samples, suspicious units.
    MissingExtraError
        A ``.mcap`` bag without the extra ``ros`` installed.
    """
    from . import ros2, rtde

    path = Path(path)
    src = str(path)
    if not path.exists():
        raise FileFormatError(f"{src}: no such file", hint="check the path of the recording")
    if path.is_dir() and not ros2.is_mcap(path):
        raise FileFormatError(f"{src}: is a directory, not a recording file")
    if units is not None and units not in UNITS:
        raise FileFormatError(f"units must be 'si' or 'softmc', got {units!r}")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        cols, meta = _read_npz(path)
    elif suffix in (".parquet", ".pq"):
        cols, meta = _read_parquet(path)
    elif suffix == ".mcap" or ros2.is_mcap(path):
        cols, meta = ros2.read_mcap(path, joint_names=joint_names, topic=topic, n_joints=n_joints,
                                    require_tau=require_tau)
    elif rtde.is_rtde_header(_first_row(path)):
        cols, meta = rtde.read_rtde(path, read_preamble(path), torque_constants=torque_constants, n_joints=n_joints,
                                    require_tau=require_tau)
    else:
        cols, meta = _read_csv(path)
    units = recording_units(meta, units, src, path)
    rec = _assemble(cols, meta, src, n_joints, require_tau, use_derivatives)
    motor_q = transmission is not None and transmission.position == "motor"
    if transmission is not None:
        transmission.check_joints(rec.n_joints, where=f"recording {src}")
    if units == "softmc" or joint_kinds is not None:
        kinds = list(joint_kinds) if joint_kinds is not None else ["rotary"] * rec.n_joints
        if len(kinds) != rec.n_joints:
            raise FileFormatError(f"{src}: {rec.n_joints} joints in the file but {len(kinds)} joint kinds given")
        scale = position_scale(kinds, units)
        # motor positions are judged by the joint travel they imply (spans do not depend on offsets)
        checked = rec if not motor_q else Recording(rec.t, np.linalg.solve(transmission.matrix, rec.q.T).T,
                                                    source=src)
        _check_units(checked, kinds, units, src)
        if units == "softmc":
            rec = Recording(rec.t, rec.q * scale, rec.tau,
                            None if rec.qd is None else rec.qd * scale,
                            None if rec.qdd is None else rec.qdd * scale, rec.meta, src)
    if transmission is not None:
        rec = transmission.to_joint(rec)
    return rec


def recording_units(meta: Mapping[str, str], units: str | None = None, src: str = "<recording>",
                    path: str | os.PathLike | None = None) -> str:
    """The position units a recording is read in: ``units`` when given, else its ``# units:`` metadata line,
    else ``"si"``.

    Parameters
    ----------
    meta : mapping of str to str
        The file's metadata (``# key: value`` lines, a Parquet file's keys); ``units`` is the key read.
    units : {"si", "softmc"}, optional
        The caller's choice (``None``: not chosen).
    src : str
        The file, for messages.
    path : path-like, optional
        The text file, to name the line of ``# units:`` in messages.

    Returns
    -------
    str
        ``"si"`` or ``"softmc"``.

    Raises
    ------
    FileFormatError
        The metadata's units are neither ``si`` nor ``softmc`` (``deg``, ``furlongs``, ...).
    ConfigError
        ``units`` contradicts the metadata's.
    """
    key = next((k for k in meta if k.strip().lower() == "units"), None)
    if key is None:
        return units or "si"
    declared = str(meta[key]).strip()
    value = declared.lower()
    if value in UNITS and units in (None, value):
        return value
    where, line = _units_line(src, path, key)
    if value not in UNITS:
        raise FileFormatError(
            f"{where}: {line} declares units dynid does not know; accepted: 'si' (rad, m) or 'softmc' (deg for rotary, "
            "mm for linear joints; torques are N m / N in both)",
            hint="write the file's positions in one of those and declare it, or remove the line and give the units",
            options=("units",))
    raise ConfigError(
        f"{where}: {line} contradicts the units {units!r} given for the file",
        hint=f"drop the units (the file's, {value!r}, are used) or correct the file's line", options=("units",))


def _units_line(src: str, path: str | os.PathLike | None, key: str) -> tuple[str, str]:
    """``(file, line n)`` and the text of the metadata line ``key`` of a text file (the Parquet key otherwise)."""
    if path is not None and Path(path).is_file():
        try:
            with open(path, encoding="utf-8-sig") as fh:
                for n, line in enumerate(fh, start=1):
                    s = line.strip()
                    if s and not s.startswith("#"):
                        break
                    if s.startswith("#") and s[1:].partition(":")[0].strip() == key:
                        return f"{src}, line {n}", repr(s)
        except (OSError, UnicodeDecodeError):
            pass
    return src, f"metadata {key!r}"


def _check_units(rec: Recording, kinds: Sequence[str], units: str, src: str) -> None:
    """Reject position ranges that are implausible in the declared units (e.g. degrees read as rad)."""
    span = rec.q.max(axis=0) - rec.q.min(axis=0)
    for j, kind in enumerate(kinds):
        if units == "si" and kind == "rotary" and span[j] > 8 * np.pi:
            raise InputDataError(
                f"{src}, column q{j + 1}: the joint travels {span[j]:.4g} rad (> 4 turns), which looks like degrees",
                hint="read it with units softmc for positions in deg/mm, or convert the column to rad", options=("units",),
            )
        if units == "si" and kind == "linear" and span[j] > 20.0:
            raise InputDataError(
                f"{src}, column q{j + 1}: the axis travels {span[j]:.4g} m, which looks like millimetres",
                hint="read it with units softmc for positions in deg/mm, or convert the column to m", options=("units",),
            )
        if units == "softmc" and kind == "rotary" and 0 < span[j] < 0.2 and np.abs(rec.q[:, j]).max() < 2 * np.pi:
            raise InputDataError(
                f"{src}, column q{j + 1}: in softMC units the joint moves only {span[j]:.3g} deg, "
                "which looks like radians",
                hint="read it with units si if the file is in SI units (rad, m)", options=("units",),
            )


def _assemble(cols: dict[str, np.ndarray], meta: dict[str, str], src: str, n_joints: int | None,
              require_tau: bool, use_derivatives: bool, *, min_samples: int = MIN_SAMPLES, first_row: int = 0,
              previous_t: float | None = None) -> Recording:
    """The recording of a file's columns (``first_row``, ``previous_t``: for a block of a longer file, the data rows
    before it and the time of the last, so messages name the file's rows)."""
    if "t" not in cols:
        raise FileFormatError(f"{src}: no column 't' (time in seconds)",
                              hint=f"the header must name t, q1.., tau1..; found {_names(cols)}")
    groups: dict[str, dict[int, np.ndarray]] = {"q": {}, "tau": {}, "dq": {}, "ddq": {}}
    for name, values in cols.items():
        m = _COLUMN_RE.match(name)
        if m:
            groups[_ALIASES[m.group(1)]][int(m.group(2))] = values
    nq = len(groups["q"])
    if nq == 0:
        raise FileFormatError(f"{src}: no joint position columns q1, q2, ...", hint=f"found columns {_names(cols)}")
    expected = list(range(1, nq + 1))
    if sorted(groups["q"]) != expected:
        if 0 in groups["q"] or 0 in groups["tau"]:
            raise FileFormatError(f"{src}: columns are numbered from 0 ({'q0' if 0 in groups['q'] else 'tau0'}); "
                                  "dynid numbers joints from 1", hint="rename the columns q1..qn, tau1..taun")
        missing = sorted(set(range(1, max(groups["q"]) + 1)) - set(groups["q"]))
        raise FileFormatError(f"{src}: position columns are not numbered 1..n: column q{missing[0]} is missing",
                              hint="name the position columns q1, q2, ... without gaps")
    if n_joints is not None and nq != n_joints:
        if nq > n_joints:
            raise FileFormatError(
                f"{src}: the file has {nq} joints (q1..q{nq}) but the model has {n_joints}: columns "
                f"{', '.join(f'q{j}' for j in range(n_joints + 1, nq + 1))} are extra",
                hint="choose the model that matches the robot, or remove the extra joint columns")
        raise FileFormatError(
            f"{src}: the model has {n_joints} joints but the file has only {nq}: column q{nq + 1} is missing",
            hint="choose the model that matches the robot, or add the missing joint columns")
    n = nq

    def stack(kind: str, required: bool) -> np.ndarray | None:
        g = groups[kind]
        if not g:
            if required:
                raise FileFormatError(f"{src}: no torque columns tau1..tau{n}",
                                      hint="identification needs the measured joint torques as tau1..taun")
            return None
        for j in range(1, n + 1):
            if j not in g:
                prefix = {"tau": "tau", "dq": "dq", "ddq": "ddq"}[kind]
                raise FileFormatError(f"{src}: column {prefix}{j} is missing (joints 1..{n} need one each)",
                                      hint=f"give {prefix}1..{prefix}{n} or none of them")
        extra = sorted(set(g) - set(range(1, n + 1)))
        if extra:
            prefix = {"tau": "tau", "dq": "dq", "ddq": "ddq"}[kind]
            raise FileFormatError(f"{src}: column {prefix}{extra[0]} has no matching position column q{extra[0]}",
                                  hint="every joint needs both a position and a torque column")
        return np.column_stack([g[j] for j in range(1, n + 1)])

    q = stack("q", True)
    tau = stack("tau", require_tau)
    dq = stack("dq", False) if use_derivatives else None
    ddq = stack("ddq", False) if use_derivatives and dq is not None else None
    t = cols["t"]
    if t.shape[0] < min_samples:
        raise InputDataError(f"{src}: only {t.shape[0]} samples; at least {MIN_SAMPLES} are needed",
                             hint="record longer (several cycles of every joint)")
    if first_row or previous_t is not None:
        check_values({"t": t, "q": q, "tau": tau, "qd": dq, "qdd": ddq}, src, first_row, previous_t)
    return Recording(t, q, tau, dq, ddq, meta, src)


def _first_row(path: Path) -> str:
    """The first line that is neither blank nor a ``#`` comment ('' when there is none or it is not text)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
    except OSError:
        return ""
    for line in head.decode("utf-8-sig", errors="replace").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return line
    return ""


def _names(cols) -> str:
    names = list(cols)
    return ", ".join(names[:12]) + (" ..." if len(names) > 12 else "") if names else "none"


def read_preamble(path: str | os.PathLike) -> tuple[dict[str, str], str | None, int]:
    """A text log's metadata and header: the ``# key: value`` lines before the first other non-blank line,
    that line (None when there is none) and the number of lines up to and including it.

    Raises
    ------
    FileFormatError
        The file is missing, unreadable or not UTF-8 text.
    """
    src = str(path)
    meta: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8-sig") as fh:
            for i, line in enumerate(fh):
                s = line.strip()
                if not s:
                    continue
                if not s.startswith("#"):
                    return meta, line, i + 1
                key, sep, value = s[1:].strip().partition(":")
                if sep:
                    meta[key.strip()] = value.strip()
    except FileNotFoundError:
        raise FileFormatError(f"{src}: no such file", hint="check the path of the recording") from None
    except UnicodeDecodeError as err:
        raise FileFormatError(f"{src}: not a UTF-8 text file (byte {err.start})",
                              hint="save the recording as UTF-8 CSV") from err
    except OSError as err:
        raise FileFormatError(f"{src}: cannot read the file ({err.strerror})") from err
    return meta, None, 0


def _read_csv(path: Path) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Metadata and header by hand (a few lines), the numbers by numpy's C parser straight from the
    file; the slow line-by-line scan runs only on failure, to name the bad row and column."""
    src = str(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
    except OSError as err:
        raise FileFormatError(f"{src}: cannot read the file ({err.strerror})") from err
    if b"\x00" in head:
        raise FileFormatError(f"{src}: contains NUL bytes, not a CSV text file",
                              hint="give a CSV, .npz or .parquet recording")
    meta, header, n_before = csv_header(path)
    ncol = len(header)
    import warnings

    from ..threads import num_threads
    from ._fastparse import parse_numeric_csv

    # the compiled parser (same numbers, ~4x faster) for plain numeric rows; numpy's for everything else
    data = parse_numeric_csv(path, n_before, ncol, threads=min(2, num_threads()))
    if data is None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "input contained no data" is handled below
                data = np.loadtxt(path, delimiter=",", dtype=float, ndmin=2, skiprows=n_before, comments="#",
                                  encoding="utf-8-sig")
        except (ValueError, UnicodeDecodeError):
            data = None
    if data is not None and data.size == 0:
        raise InputDataError(f"{src}: the header is there but there are no data rows",
                             hint="the recording holds no samples; record again")
    if data is None or data.shape[1] != ncol:
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as err:
            raise FileFormatError(f"{src}: not a UTF-8 text file (byte {err.start})",
                                  hint="save the recording as UTF-8 CSV") from err
        lines = text.splitlines()[n_before:]
        body = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
        _locate_bad_row(body, header, src)
        raise FileFormatError(f"{src}: rows do not have {ncol} comma-separated numbers")  # pragma: no cover
    cols = {h: data[:, k] for k, h in enumerate(header) if h}
    return cols, meta


def csv_header(path: str | os.PathLike) -> tuple[dict[str, str], list[str], int]:
    """A CSV recording's metadata, column names and the number of lines up to its header (checked: a header there,
    not numbers, no column twice).

    Raises
    ------
    FileFormatError
    """
    src = str(path)
    meta, header_line, n_before = read_preamble(path)
    if header_line is None:
        raise FileFormatError(f"{src}: the file is empty (no header row)",
                              hint="the first non-comment row must name the columns: t,q1,...,tau1,...")
    header = [h.strip().strip('"').strip("'").strip() for h in header_line.split(",")]
    if any(_is_number(h) for h in header if h):
        raise FileFormatError(f"{src}: the first row is numbers, not a header",
                              hint="add a header row naming the columns: t,q1,...,tau1,...")
    seen: set[str] = set()
    for h in header:
        if h and h in seen:
            raise FileFormatError(f"{src}, column {h!r} appears twice in the header")
        seen.add(h)
    return meta, header, n_before


def _locate_bad_row(body: list[str], header: list[str], src: str, first_row: int = 0) -> None:
    for r, line in enumerate(body, start=first_row + 1):
        fields = line.split(",")
        if len(fields) != len(header):
            raise FileFormatError(f"{src}: data row {r} has {len(fields)} fields but the header has {len(header)}",
                                  hint="every row needs one value per header column")
        for h, f in zip(header, fields):
            if not _is_number(f):
                raise FileFormatError(f"{src}, column {h or '?'}: row {r} holds {f.strip()[:20]!r}, not a number",
                                      hint="fix or remove that row")


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _read_npz(path: Path) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    src = str(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: np.asarray(z[k]) for k in z.files}
    except Exception as err:  # zipfile/pickle/format errors of every kind
        raise FileFormatError(f"{src}: not a readable .npz file ({type(err).__name__}: {err})") from err
    cols: dict[str, np.ndarray] = {}
    for key in ("t", "q", "tau", "dq", "ddq", "qd", "qdd"):
        if key not in arrays:
            continue
        a = arrays[key]
        if a.dtype.kind not in "fiu":
            raise FileFormatError(f"{src}: array {key!r} has dtype {a.dtype}, expected numbers")
        a = a.astype(float)
        if key == "t":
            if a.ndim != 1:
                raise FileFormatError(f"{src}: array 't' must be 1-D, got shape {a.shape}")
            cols["t"] = a
            continue
        if a.ndim == 1:
            a = a[:, None]
        if a.ndim != 2:
            raise FileFormatError(f"{src}: array {key!r} must have shape (N, n_joints), got {a.shape}")
        if "t" in arrays and a.shape[0] != np.asarray(arrays["t"]).shape[0]:
            raise FileFormatError(f"{src}: array {key!r} has {a.shape[0]} samples but t has {np.asarray(arrays['t']).shape[0]}")
        prefix = {"qd": "dq", "qdd": "ddq"}.get(key, key)
        for j in range(a.shape[1]):
            cols[f"{prefix}{j + 1}"] = a[:, j]
    if not cols:
        raise FileFormatError(f"{src}: the .npz holds none of the arrays t, q, tau",
                              hint="save arrays named t (N,), q (N, n), tau (N, n)")
    meta = {}
    if "meta" in arrays and arrays["meta"].dtype.kind == "U":
        meta = {"meta": str(arrays["meta"])}
    return cols, meta


def _read_parquet(path: Path) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    try:
        import pyarrow.parquet as pq
    except ImportError as err:
        raise MissingExtraError("reading .parquet recordings", "parquet", "pyarrow") from err
    src = str(path)
    try:
        table = pq.read_table(path)
    except Exception as err:
        raise FileFormatError(f"{src}: not a readable Parquet file ({err})") from err
    cols = {}
    for name in table.column_names:
        try:
            cols[name.strip()] = np.asarray(table.column(name).to_numpy(), dtype=float)
        except (TypeError, ValueError):
            if _COLUMN_RE.match(name.strip()) or name.strip() == "t":
                raise FileFormatError(f"{src}, column {name}: not numeric") from None
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()
            if not k.startswith(b"pandas") and not k.startswith(b"ARROW")}
    return cols, meta


def write_recording_csv(path: str | os.PathLike, rec: Recording, *, meta: dict[str, str] | None = None) -> None:
    """Write a recording as CSV (SI units) in the layout :func:`read_recording` reads, with its metadata and ``meta``
    as ``# key: value`` lines (the recording's ``units`` as ``si``: it holds SI values)."""
    from .._atomic import atomic_write_text

    atomic_write_text(path, recording_csv(rec, meta=meta))


def recording_csv(rec: Recording, *, meta: dict[str, str] | None = None) -> str:
    """A recording as the CSV text :func:`write_recording_csv` writes."""
    n = rec.n_joints
    names = ["t"] + [f"q{j + 1}" for j in range(n)]
    arrays = [rec.t[:, None], rec.q]
    if rec.tau is not None:
        names += [f"tau{j + 1}" for j in range(n)]
        arrays.append(rec.tau)
    if rec.qd is not None:
        names += [f"dq{j + 1}" for j in range(n)]
        arrays.append(rec.qd)
    if rec.qdd is not None:
        names += [f"ddq{j + 1}" for j in range(n)]
        arrays.append(rec.qdd)
    buf = io.StringIO()
    # the recording is SI whatever units it was read in (its metadata's ``units``); ``meta`` is the caller's word
    kept = {k: ("si" if k.strip().lower() == "units" else v) for k, v in rec.meta.items()}
    for k, v in {**kept, **(meta or {})}.items():
        buf.write(f"# {k}: {v}\n")
    buf.write(",".join(names) + "\n")
    np.savetxt(buf, np.hstack(arrays), delimiter=",", fmt="%.10g")
    return buf.getvalue()
