"""softMC parameter program ``IDNT<group>.PRG``: writer and reader (spec/files.md §1).

The writer reproduces softMC's layout line by line: seven comment lines (result, date, max and mean
relative errors, cutoff, lengths, moving lengths with thresholds), ``PROGRAM CONTINUE``,
``ATTACH``, every ``DynamicParameter`` slot in ``%.9e``, per-axis friction in softMC's sign
convention, ``DynamicModel``, ``DETACH``, ``TERMINATE PROGRAM``. The reader accepts variations in
case and spacing and both wrapped and single-line headers.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ..errors import FileFormatError

__all__ = ["PrgContent", "format_prg", "parse_prg", "read_prg"]


@dataclass(frozen=True)
class PrgContent:
    """What a PRG holds (values exactly as written: softMC sign for friction, SI units).

    element : str ; success : bool ; date : datetime or None
    max_error_percent, mean_error_percent : per axis [%] ; allowed_percent : float
    cutoff_hz : float ; data_length, raw_length : int
    moving_samples : per axis ; thresholds : per axis [rad/s or m/s] ; threshold_units : per axis
    parameters : {slot: value} ; axes : axis names in order
    viscous, coulomb : {axis: value} (softMC sign) ; dynamic_model : int
    properties : other ``<element>.<Name> = value`` lines (payload), ``{Name: value}``
    """

    element: str
    success: bool
    max_error_percent: tuple[float, ...]
    mean_error_percent: tuple[float, ...]
    cutoff_hz: float
    data_length: int
    raw_length: int
    moving_samples: tuple[int, ...]
    thresholds: tuple[float, ...]
    parameters: Mapping[int, float]
    axes: tuple[str, ...]
    viscous: Mapping[str, float]
    coulomb: Mapping[str, float]
    dynamic_model: int
    allowed_percent: float = 50.0
    threshold_units: tuple[str, ...] = ()
    date: _dt.datetime | None = None
    properties: Mapping[str, float] = field(default_factory=dict)
    comments: tuple[str, ...] = ()


def _e(v: float) -> str:
    return f"{float(v) + 0.0:.9e}"


def format_prg(c: PrgContent, *, newline: str = "\n") -> str:
    """Render a :class:`PrgContent` as softMC program text."""
    n = len(c.axes)
    date = c.date or _dt.datetime.now()
    word = "succeeded" if c.success else "failed"
    units = c.threshold_units or ("rad/s",) * n
    lines = [
        f"'Dynamic parameter identification for {c.element} {word}!",
        f"'Identification date and time: {date.strftime('%d/%m/%y %H:%M:%S')}",
        "'Max relative torque error: " + "".join(f"axis {j + 1} = {c.max_error_percent[j]:.2f} %; " for j in range(n))
        + f"(maximal allowed = {c.allowed_percent:.2f} %)",
        "'Mean relative torque error: " + "".join(f"axis {j + 1} = {c.mean_error_percent[j]:.2f} %; " for j in range(n)),
        f"'Signal filter cutoff frequency = {c.cutoff_hz:.3f} Hz",
        f"'Signal data length = {c.data_length} samples (raw record length = {c.raw_length} samples)",
        "'Moving data length: " + "".join(
            f"axis {j + 1} = {c.moving_samples[j]} samples (threshold = {c.thresholds[j]:.6f} {units[j]}); " for j in range(n)),
    ]
    lines += [f"'{x}" for x in c.comments]
    lines += ["", "PROGRAM CONTINUE", f"ATTACH {c.element}", ""]
    n_slots = max(c.parameters) if c.parameters else 0
    lines += [f"{c.element}.DynamicParameter[{i}] = {_e(c.parameters.get(i, 0.0))}" for i in range(1, n_slots + 1)]
    for j, ax in enumerate(c.axes):
        lines += ["", f"{ax}.ViscousFriction = {_e(c.viscous.get(ax, 0.0))}", f"{ax}.CoulombFriction = {_e(c.coulomb.get(ax, 0.0))}"]
    if c.properties:
        lines.append("")
        lines += [f"{c.element}.{k} = {_e(v)}" for k, v in c.properties.items()]
    lines += ["", f"{c.element}.DynamicModel = {c.dynamic_model}", "", f"DETACH {c.element}", "TERMINATE PROGRAM"]
    return newline.join(lines) + newline


_FLOAT = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
_RE = {
    "title": re.compile(r"dynamic parameter identification for\s+(\w+)\s+(succeeded|failed)", re.I),
    "date": re.compile(r"identification date and time:\s*(\d{2}/\d{2}/\d{2}\s+\d{2}:\d{2}:\d{2})", re.I),
    "max": re.compile(r"max relative torque error:(.*)", re.I),
    "mean": re.compile(r"mean relative torque error:(.*)", re.I),
    "axis_pct": re.compile(r"axis\s+(\d+)\s*=\s*" + _FLOAT + r"\s*%", re.I),
    "allowed": re.compile(r"maximal allowed\s*=\s*" + _FLOAT, re.I),
    "cutoff": re.compile(r"signal filter cutoff frequency\s*=\s*" + _FLOAT, re.I),
    "length": re.compile(r"signal data length\s*=\s*(\d+)\s*samples\s*\(raw record length\s*=\s*(\d+)", re.I),
    "moving": re.compile(r"axis\s+(\d+)\s*=\s*(\d+)\s*samples\s*\(threshold\s*=\s*" + _FLOAT + r"\s*([\w/]+)\)", re.I),
    "param": re.compile(r"^(\w+)\.DynamicParameter\[(\d+)\]\s*=\s*(\S+)\s*$", re.I),
    "friction": re.compile(r"^(\w+)\.(ViscousFriction|CoulombFriction)\s*=\s*(\S+)\s*$", re.I),
    "model": re.compile(r"^(\w+)\.DynamicModel\s*=\s*(-?\d+)\s*$", re.I),
    "prop": re.compile(r"^(\w+)\.(\w+)\s*=\s*(\S+)\s*$", re.I),
    "attach": re.compile(r"^attach\s+(\w+)\s*$", re.I),
}


def parse_prg(text: str, source: str = "<prg>") -> PrgContent:
    """Parse PRG text (case-insensitive keywords, free spacing, wrapped header lines)."""
    header = " ".join(line.strip()[1:] for line in text.splitlines() if line.strip().startswith("'"))
    m = _RE["title"].search(header)
    if not m:
        raise FileFormatError(f"{source}: no 'Dynamic parameter identification for <ELEMENT> ...' header line",
                              hint="is this an IDNT<group>.PRG file?")
    element, success = m.group(1), m.group(2).lower() == "succeeded"
    date = None
    md = _RE["date"].search(header)
    if md:
        date = _dt.datetime.strptime(re.sub(r"\s+", " ", md.group(1)), "%d/%m/%y %H:%M:%S")

    def section(key: str, stop: str) -> str:
        mm = _RE[key].search(header)
        if not mm:
            return ""
        s = mm.group(1)
        k = s.lower().find(stop)
        return s[:k] if k >= 0 else s

    max_part = section("max", "mean relative")
    mean_part = section("mean", "signal filter")
    mx = {int(a): float(v) for a, v in _RE["axis_pct"].findall(max_part)}
    mn = {int(a): float(v) for a, v in _RE["axis_pct"].findall(mean_part)}
    ma = _RE["allowed"].search(max_part)
    mc = _RE["cutoff"].search(header)
    ml = _RE["length"].search(header)
    mv = _RE["moving"].findall(header[header.lower().find("moving data length"):]) if "moving data length" in header.lower() else []
    params: dict[int, float] = {}
    visc: dict[str, float] = {}
    coul: dict[str, float] = {}
    axes: list[str] = []
    props: dict[str, float] = {}
    model = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("'"):
            continue
        for key in ("param", "friction", "model"):
            mm = _RE[key].match(line)
            if mm:
                break
        else:
            mm = None
        try:
            if mm and key == "param":
                params[int(mm.group(2))] = float(mm.group(3))
            elif mm and key == "friction":
                ax = mm.group(1)
                if ax not in axes:
                    axes.append(ax)
                (visc if mm.group(2).lower() == "viscousfriction" else coul)[ax] = float(mm.group(3))
            elif mm and key == "model":
                model = int(mm.group(2))
            else:
                mp = _RE["prop"].match(line)
                if mp and mp.group(1).lower() == element.lower():
                    props[mp.group(2)] = float(mp.group(3))
        except ValueError as err:
            raise FileFormatError(f"{source}: cannot read the value in line {line!r}") from err
    if model is None:
        raise FileFormatError(f"{source}: no '<ELEMENT>.DynamicModel = <m>' line")
    n = len(axes)
    return PrgContent(
        element=element, success=success, date=date,
        max_error_percent=tuple(mx.get(j + 1, float("nan")) for j in range(max(n, len(mx)))),
        mean_error_percent=tuple(mn.get(j + 1, float("nan")) for j in range(max(n, len(mn)))),
        allowed_percent=float(ma.group(1)) if ma else 50.0,
        cutoff_hz=float(mc.group(1)) if mc else float("nan"),
        data_length=int(ml.group(1)) if ml else 0, raw_length=int(ml.group(2)) if ml else 0,
        moving_samples=tuple(int(x[1]) for x in mv), thresholds=tuple(float(x[2]) for x in mv),
        threshold_units=tuple(x[3] for x in mv),
        parameters=params, axes=tuple(axes), viscous=visc, coulomb=coul, dynamic_model=model, properties=props)


def read_prg(path: str | Path) -> PrgContent:
    """Read an ``IDNT<group>.PRG`` file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise FileFormatError(f"{path}: cannot read ({err.strerror})") from err
    return parse_prg(text, str(path))
