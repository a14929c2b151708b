"""Exports of a planned excitation: trajectory CSV, softMC MC-Basic identification program, PNG plot.

All writers are atomic (staged, then renamed): an error leaves no partial file; given a ``staging``
(:class:`~dynid._atomic.Staging`) they stage their file there, for the caller to commit with the others.

MC-Basic program
----------------
The program has the shape of the source's example programs (spec/identification.md §1, the softMC wiki's
*Inverse Dynamic Model* page): declare the points, attach the element, disable it (``En = 0``) and
wait, set ``DynamicModel`` (allowed only while disabled), enable and wait, ``Move startPoint Abs = 1``
and wait while ``IsMoving``, ``SineWave sineTarget SineWaveFreq = SWfreq``, ``sleep <settle ms>``,
``IdentificationStart IdentFilterFreq = <Hz>``, ``sleep <record ms>``, ``IdentificationFinish``,
``stop``, wait, ``proceed``, disable, detach. A single axis's ``SineWave`` ends with ``Abs = 1`` as the
source's single-axis example does (its target is absolute, like the ``Move``); the robots' examples
write ``SineWave sineTarget SineWaveFreq = SWfreq``. Reconstructed from the spec's description; not
verified on a controller: the point declarations (``Dim Shared <name> As Joint Of <type>``, robot type
from the axis count: XY, XYZ, XYZR, XYZPR, XYZYPR; ``Double`` for a single axis) and the wait loops
(``While ... sleep 10 ... End While``) are dynid's; the motion and identification lines are the
source's. Positions are written in softMC user units (deg for rotary, mm for linear axes) and
frequencies in Hz; ``SWfreq = <factor>*{<base ratios>}`` when a factor was used, as the source writes.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import ConfigError, MissingExtraError, ShapeError
from .._atomic import Staging, put
from ..io._fastcsv import format_rows
from ..units import from_si, position_unit
from .sine import SinePlan

__all__ = ["trajectory_csv", "write_trajectory_csv", "mcbasic_program", "write_mcbasic", "plot_motion",
           "ROBOT_TYPES", "DEFAULT_FILTER_HZ"]

DEFAULT_FILTER_HZ = 80.0
"""The source's ``IdentificationStart IdentFilterFreq = 80``."""

ROBOT_TYPES = {2: "XY", 3: "XYZ", 4: "XYZR", 5: "XYZPR", 6: "XYZYPR"}
"""MC-Basic point type per number of axes (``Joint Of <type>``)."""


def _num(x: float) -> str:
    """Compact MC-Basic number: ``-160``, ``1.27``, ``0.381``."""
    s = f"{float(x):.10g}"
    return "0" if s in ("-0", "0") else s


def _vec(values: Sequence[float]) -> str:
    return "{" + ",".join(_num(v) for v in values) + "}"


def trajectory_csv(t, q, qd, qdd, *, meta: dict[str, str] | None = None) -> bytes:
    """CSV bytes with columns ``t, q1..qn, dq1..dqn, ddq1..ddqn`` (the recording layout, interfaces.md §1).

    Parameters
    ----------
    t : array-like, shape (N,)
        [s].
    q, qd, qdd : array-like, shape (N, n_joints)
        Positions, velocities, accelerations (in whatever units the caller chose; SI by default in
        :func:`write_trajectory_csv`).
    meta : dict, optional
        ``# key: value`` lines before the header.
    """
    t = np.asarray(t, dtype=float).ravel()
    arrays = [np.asarray(a, dtype=float) for a in (q, qd, qdd)]
    n = arrays[0].shape[1] if arrays[0].ndim == 2 else 0
    for name, a in zip(("q", "qd", "qdd"), arrays):
        if a.shape != (t.size, n):
            raise ShapeError(f"{name} has shape {a.shape}, expected ({t.size}, {n})")
    header = ["t"] + [f"{p}{j + 1}" for p in ("q", "dq", "ddq") for j in range(n)]
    head = "".join(f"# {k}: {v}\n" for k, v in (meta or {}).items()) + ",".join(header) + "\n"
    return head.encode("utf-8") + format_rows(np.column_stack([t, *arrays]))


def write_trajectory_csv(path: str | os.PathLike, t, q, qd, qdd, *, kinds: Sequence[str] | None = None,
                         units: str = "si", meta: dict[str, str] | None = None, staging: Staging | None = None) -> Path:
    """Write a sampled trajectory as CSV (atomic), SI or softMC user units.

    Parameters
    ----------
    path : path-like
    t : array-like, shape (N,)
        [s].
    q, qd, qdd : array-like, shape (N, n_joints)
        SI: rad, m and their derivatives.
    kinds : sequence of {"rotary", "linear"}, optional
        Needed for ``units="softmc"`` (deg for rotary, mm for linear joints).
    units : {"si", "softmc"}
    meta : dict, optional
        Extra ``# key: value`` lines.
    staging : Staging, optional
        Stage the file there (committed by the caller).

    Returns
    -------
    Path
    """
    if units not in ("si", "softmc"):
        raise ConfigError(f"units must be 'si' or 'softmc', got {units!r}")
    q, qd, qdd = (np.asarray(a, dtype=float) for a in (q, qd, qdd))
    if units == "softmc":
        if kinds is None:
            raise ConfigError("softMC units need the joint kinds (rotary or linear) of every joint")
        q, qd, qdd = (from_si(a, kinds, "softmc") for a in (q, qd, qdd))
    m = {"units": units}
    if kinds is not None:
        m["position_units"] = ",".join(position_unit(k, units) for k in kinds)
    m.update(meta or {})
    path = Path(path)
    put(path, trajectory_csv(t, q, qd, qdd, meta=m), staging)
    return path


def mcbasic_program(plan: SinePlan, *, element: str, dynamic_model: int, kinds: Sequence[str] | None = None,
                    filter_hz: float = DEFAULT_FILTER_HZ, title: str | None = None) -> str:
    """The softMC identification program for a SineWave plan (shape in the module docstring).

    Parameters
    ----------
    plan : SinePlan
        SI positions (converted to softMC user units with ``kinds``).
    element : str
        softMC element (``SCARA``, ``PUMA``, ``A1``, ...).
    dynamic_model : int
        softMC ``DynamicModel`` number.
    kinds : sequence of {"rotary", "linear"}, optional
        Joint kinds for the unit conversion (default all rotary: deg).
    filter_hz : float
        ``IdentFilterFreq`` [Hz]: the low-pass cutoff softMC applies to position and torque; must be above
        the highest sine frequency and below 125 Hz.
    title : str, optional
        First comment line.

    Returns
    -------
    str
        Program text, ``\\n`` line ends.

    Raises
    ------
    ConfigError
        A bad element name, or ``filter_hz`` not above the highest frequency or not below 125 Hz.
    """
    n = plan.n_joints
    kinds = list(kinds) if kinds is not None else ["rotary"] * n
    if len(kinds) != n:
        raise ShapeError(f"kinds has {len(kinds)} entries, the plan has {n} joints")
    if not element.isidentifier():
        raise ConfigError(f"element must be an MC-Basic identifier (e.g. SCARA, A1), got {element!r}")
    if not (plan.freqs_hz.max() < filter_hz < 125.0):
        raise ConfigError(f"IdentFilterFreq {filter_hz:g} Hz must be above the highest sine frequency "
                          f"({plan.freqs_hz.max():g} Hz) and below 125 Hz")
    start = from_si(plan.start[None, :], kinds, "softmc")[0]
    target = from_si(plan.target[None, :], kinds, "softmc")[0]
    if n == 1:
        decl, fmt = "Double", (lambda v: _num(v[0]))
    else:
        if n not in ROBOT_TYPES:
            raise ConfigError(f"no MC-Basic point type for {n} axes", hint="MC-Basic point types: "
                              + ", ".join(f"{k} axes: {v}" for k, v in ROBOT_TYPES.items()))
        decl, fmt = f"Joint Of {ROBOT_TYPES[n]}", _vec
    if plan.factor != 1.0:
        base = plan.freqs_hz / plan.factor
        freq = f"{_num(plan.factor)}*{_num(base[0]) if n == 1 else _vec(base)}"
    else:
        freq = fmt(plan.freqs_hz)
    units = ", ".join(f"{position_unit(k, 'softmc')}" for k in kinds)
    e = element
    wait = lambda cond: [f"  While {cond}", "    sleep 10", "  End While"]  # noqa: E731
    lines = [
        f"' {title or f'{e}: softMC dynamic parameter identification (SineWave excitation), written by dynid excite'}",
        f"' startPoint, sineTarget in softMC user units ({units}); SineWaveFreq in Hz",
        f"' record {_num(plan.record_s)} s after {_num(plan.settle_s)} s of settling; IdentFilterFreq {_num(filter_hz)} Hz",
        "",
        f"Dim Shared startPoint As {decl}",
        f"Dim Shared sineTarget As {decl}",
        f"Dim Shared SWfreq As {decl}",
        "",
        "Program",
        f"  startPoint = {fmt(start)}",
        f"  sineTarget = {fmt(target)}",
        f"  SWfreq = {freq}",
        "",
        f"  Attach {e}",
        f"  {e}.En = 0",
        *wait(f"{e}.En = 1"),
        f"  {e}.DynamicModel = {int(dynamic_model)}",
        f"  {e}.En = 1",
        *wait(f"{e}.En = 0"),
        "",
        "  Move startPoint Abs = 1",
        *wait(f"{e}.IsMoving"),
        "",
        "  SineWave sineTarget SineWaveFreq = SWfreq" + (" Abs = 1" if n == 1 else ""),
        f"  sleep {int(round(plan.settle_s * 1000))}",
        f"  IdentificationStart IdentFilterFreq = {_num(filter_hz)}",
        f"  sleep {int(round(plan.record_s * 1000))}",
        "  IdentificationFinish",
        "",
        "  stop",
        *wait(f"{e}.IsMoving"),
        "  proceed",
        f"  {e}.En = 0",
        f"  Detach {e}",
        "End Program",
    ]
    return "\n".join(lines) + "\n"


def write_mcbasic(path: str | os.PathLike, plan: SinePlan, *, staging: Staging | None = None, **kwargs) -> Path:
    """Write :func:`mcbasic_program` to ``path`` (atomic, or staged in ``staging``); ``kwargs`` as for
    :func:`mcbasic_program`."""
    path = Path(path)
    put(path, mcbasic_program(plan, **kwargs).encode("utf-8"), staging)
    return path


def plot_motion(path: str | os.PathLike, t, q, *, joint_names: Sequence[str] | None = None,
                kinds: Sequence[str] | None = None, units: str = "si", limits=None, title: str | None = None,
                mark_s: float | None = None, staging: Staging | None = None) -> Path:
    """PNG of the planned joint motions, one panel per joint (matplotlib, extra ``report``).

    Parameters
    ----------
    path : path-like
    t : array-like, shape (N,)
        [s].
    q : array-like, shape (N, n_joints)
        SI positions.
    joint_names, kinds : sequence of str, optional
    units : {"si", "softmc"}
        Units of the axes.
    limits : JointLimits, optional
        Position limits drawn as dashed lines.
    title : str, optional
    mark_s : float, optional
        A time [s] marked by a dotted vertical line (e.g. where the recording starts).
    staging : Staging, optional
        Stage the file there (committed by the caller).

    Raises
    ------
    MissingExtraError
        matplotlib is not installed (``pip install 'dynid[report]'``).
    """
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise MissingExtraError("the plot of the planned motion", "report", "matplotlib") from err
    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float)
    n = q.shape[1]
    kinds = list(kinds) if kinds is not None else ["rotary"] * n
    names = list(joint_names) if joint_names is not None else [f"A{j + 1}" for j in range(n)]
    qq = from_si(q, kinds, units)
    fig, axes = plt.subplots(n, 1, figsize=(8, 1.6 * n + 0.8), sharex=True, squeeze=False)
    for j in range(n):  # one panel per joint
        ax = axes[j, 0]
        ax.plot(t, qq[:, j], lw=1.0)
        if limits is not None:
            for b in (limits.lower[j], limits.upper[j]):
                if np.isfinite(b):
                    ax.axhline(from_si(np.array([[b]]), [kinds[j]], units)[0, 0], ls="--", lw=0.8, color="0.5")
        if mark_s is not None:
            ax.axvline(mark_s, ls=":", lw=0.8, color="0.3")
        ax.set_ylabel(f"{names[j]} [{position_unit(kinds[j], units)}]")
        ax.grid(True, lw=0.3)
    axes[-1, 0].set_xlabel("t [s]")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    path = Path(path)
    put(path, buf.getvalue(), staging)
    return path
