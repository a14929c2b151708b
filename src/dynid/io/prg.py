"""softMC parameter program ``IDNT<group>.PRG``: writer and reader (spec/files.md §1).

The writer reproduces softMC's layout line by line: seven comment lines (result, date, max and mean
relative errors, cutoff, lengths, moving lengths with thresholds), ``PROGRAM CONTINUE``,
``ATTACH``, every ``DynamicParameter`` slot in ``%.9e``, per-axis friction in softMC's sign
convention (and ``<axis>.TorqueThreshold`` when known), ``DynamicModel``, ``DETACH``,
``TERMINATE PROGRAM``. The reader accepts variations in case and spacing and both wrapped and
single-line headers.

What softMC has no line for goes to comment lines that softMC ignores and the reader parses back:
the friction model when it is not softMC's (``'dynid friction model: viscous+coulomb+offset``), its
extra terms (``'Friction term 'offset' (physical sign, no softMC property): A1 = ...``) and a
model's parameters beyond softMC's slots (``'dynid parameter J_Y = 6.1e-01 kg m^2 ...``).
:func:`model_values` turns the slots back into a model's SI parameter values.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..errors import FileFormatError

__all__ = ["PrgContent", "format_prg", "parse_prg", "read_prg", "model_values", "prg_unit"]


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
    comments : extra comment lines after the header (without the apostrophe)
    torque_thresholds : ``{axis: <axis>.TorqueThreshold}`` [N m or N]
    extra_parameters : ``{name: value}`` of a model's parameters that have no softMC slot (comment lines)
    extra_units : ``{name: unit}`` of those
    friction_model : dynid's friction model when it is not softMC's ``viscous+coulomb`` (a comment line)
    stribeck_velocity : [rad/s or m/s] of a ``stribeck`` term, or None
    friction_terms : ``{suffix: {axis or motor: value}}`` of the terms softMC has no property for
        (``offset``, ``coulomb_pos``, ``motor_viscous``, ...; physical sign, comment lines)
    exact_cutoff_hz, filter_order : the identification's filter when the header's 3-decimal cutoff is not
        exact or the order is not 4 (a comment line), else None
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
    torque_thresholds: Mapping[str, float] = field(default_factory=dict)
    extra_parameters: Mapping[str, float] = field(default_factory=dict)
    extra_units: Mapping[str, str] = field(default_factory=dict)
    friction_model: str | None = None
    stribeck_velocity: float | None = None
    friction_terms: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    exact_cutoff_hz: float | None = None
    filter_order: int | None = None


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
    if c.exact_cutoff_hz is not None or c.filter_order is not None:
        cut = c.cutoff_hz if c.exact_cutoff_hz is None else c.exact_cutoff_hz
        lines.append(f"'dynid filter: cutoff = {cut!r} Hz; order = {c.filter_order or 4}")
    if c.friction_model:
        vs = "" if c.stribeck_velocity is None else f"; stribeck velocity = {_e(c.stribeck_velocity)}"
        lines.append(f"'dynid friction model: {c.friction_model}{vs}")
    for term, vals in c.friction_terms.items():
        lines.append(f"'Friction term '{term}' (physical sign, no softMC property): "
                     + "; ".join(f"{owner} = {_e(v)}" for owner, v in vals.items()))
    lines += [f"'{x}" for x in c.comments]
    lines += ["", "PROGRAM CONTINUE", f"ATTACH {c.element}", ""]
    n_slots = max(c.parameters) if c.parameters else 0
    lines += [f"{c.element}.DynamicParameter[{i}] = {_e(c.parameters.get(i, 0.0))}" for i in range(1, n_slots + 1)]
    for name, v in c.extra_parameters.items():
        unit = c.extra_units.get(name, "")
        lines.append(f"'dynid parameter {name} = {_e(v)}{' ' + unit if unit else ''} (no softMC DynamicParameter slot)")
    for j, ax in enumerate(c.axes):
        lines += ["", f"{ax}.ViscousFriction = {_e(c.viscous.get(ax, 0.0))}", f"{ax}.CoulombFriction = {_e(c.coulomb.get(ax, 0.0))}"]
        if ax in c.torque_thresholds:
            lines.append(f"{ax}.TorqueThreshold = {_e(c.torque_thresholds[ax])}")
    if c.properties:
        lines.append("")
        lines += [f"{c.element}.{k} = {_e(v)}" for k, v in c.properties.items()]
    lines += ["", f"{c.element}.DynamicModel = {c.dynamic_model}", "", f"DETACH {c.element}", "TERMINATE PROGRAM"]
    return newline.join(lines) + newline


_FLOAT = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
_PATTERNS = {
    "title": (r"dynamic parameter identification for\s+(\w+)\s+(succeeded|failed)", re.I),
    "date": (r"identification date and time:\s*(\d{2}/\d{2}/\d{2}\s+\d{2}:\d{2}:\d{2})", re.I),
    "max": (r"max relative torque error:(.*)", re.I),
    "mean": (r"mean relative torque error:(.*)", re.I),
    "axis_pct": (r"axis\s+(\d+)\s*=\s*" + _FLOAT + r"\s*%", re.I),
    "allowed": (r"maximal allowed\s*=\s*" + _FLOAT, re.I),
    "cutoff": (r"signal filter cutoff frequency\s*=\s*" + _FLOAT, re.I),
    "length": (r"signal data length\s*=\s*(\d+)\s*samples\s*\(raw record length\s*=\s*(\d+)", re.I),
    "moving": (r"axis\s+(\d+)\s*=\s*(\d+)\s*samples\s*\(threshold\s*=\s*" + _FLOAT + r"\s*([\w/]+)\)", re.I),
    "param": (r"^(\w+)\.DynamicParameter\[(\d+)\]\s*=\s*(\S+)\s*$", re.I),
    "friction": (r"^(\w+)\.(ViscousFriction|CoulombFriction)\s*=\s*(\S+)\s*$", re.I),
    "model": (r"^(\w+)\.DynamicModel\s*=\s*(-?\d+)\s*$", re.I),
    "threshold": (r"^(\w+)\.TorqueThreshold\s*=\s*(\S+)\s*$", re.I),
    "extra": (r"^dynid parameter\s+(\S+)\s*=\s*" + _FLOAT + r"\s*(.*?)\s*(?:\(no softmc.*\))?\s*$", re.I),
    "fmodel": (r"^dynid friction model:\s*([\w+]+)\s*(?:;\s*stribeck velocity\s*=\s*" + _FLOAT + r")?", re.I),
    "fterm": (r"^friction term\s+'(\w+)'\s*\([^)]*\):\s*(.*)$", re.I),
    "filter": (r"^dynid filter:\s*cutoff\s*=\s*" + _FLOAT + r"\s*hz\s*;\s*order\s*=\s*(\d+)", re.I),
    "pair": (r"(\w+)\s*=\s*" + _FLOAT, 0),
    "prop": (r"^(\w+)\.(\w+)\s*=\s*(\S+)\s*$", re.I),
    "attach": (r"^attach\s+(\w+)\s*$", re.I),
}


class _Compiled(dict):
    """The patterns above, each compiled when first used (reading a PRG needs them; writing one does not)."""

    def __missing__(self, name: str) -> re.Pattern:
        self[name] = pattern = re.compile(*_PATTERNS[name])
        return pattern


_RE = _Compiled()


_DYNID_COMMENT = re.compile(r"^(dynid |friction term )", re.I)
"""Comment lines dynid adds after softMC's header (not part of softMC's header text)."""


def parse_prg(text: str, source: str = "<prg>") -> PrgContent:
    """Parse PRG text (case-insensitive keywords, free spacing, wrapped header lines)."""
    notes = [line.strip()[1:].strip() for line in text.splitlines() if line.strip().startswith("'")]
    header = " ".join(x for x in notes if not _DYNID_COMMENT.match(x))
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
    thresholds: dict[str, float] = {}
    model = None
    extra, extra_units, fterms = {}, {}, {}
    fmodel, vs, exact_cut, order = None, None, None, None
    for note in notes:
        try:
            if mm := _RE["extra"].match(note):
                extra[mm.group(1)] = float(mm.group(2))
                if mm.group(3):
                    extra_units[mm.group(1)] = mm.group(3)
            elif mm := _RE["fmodel"].match(note):
                fmodel, vs = mm.group(1), None if mm.group(2) is None else float(mm.group(2))
            elif mm := _RE["filter"].match(note):
                exact_cut, order = float(mm.group(1)), int(mm.group(2))
            elif mm := _RE["fterm"].match(note):
                fterms[mm.group(1)] = {owner: float(v) for owner, v in _RE["pair"].findall(mm.group(2))}
        except ValueError as err:
            raise FileFormatError(f"{source}: cannot read the value in comment line {note!r}") from err
    def _axis(name: str) -> str:
        """MC-Basic names are case-insensitive: an axis keeps the spelling of its first line."""
        for ax in axes:
            if ax.lower() == name.lower():
                return ax
        axes.append(name)
        return name

    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("'"):
            continue
        for key in ("param", "friction", "model", "threshold"):
            mm = _RE[key].match(line)
            if mm:
                break
        else:
            mm = None
        try:
            if mm and key == "param":
                params[int(mm.group(2))] = float(mm.group(3))
            elif mm and key == "friction":
                ax = _axis(mm.group(1))
                (visc if mm.group(2).lower() == "viscousfriction" else coul)[ax] = float(mm.group(3))
            elif mm and key == "model":
                model = int(mm.group(2))
            elif mm and key == "threshold":
                thresholds[_axis(mm.group(1))] = float(mm.group(2))
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
        parameters=params, axes=tuple(axes), viscous=visc, coulomb=coul, dynamic_model=model, properties=props,
        torque_thresholds=thresholds, extra_parameters=extra, extra_units=extra_units, friction_model=fmodel,
        stribeck_velocity=vs, friction_terms=fterms, exact_cutoff_hz=exact_cut, filter_order=order)


def read_prg(path: str | Path) -> PrgContent:
    """Read an ``IDNT<group>.PRG`` file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise FileFormatError(f"{path}: cannot read ({err.strerror})") from err
    return parse_prg(text, str(path))


def prg_unit(model: Any, name: str, si_unit: str) -> tuple[str, float]:
    """softMC's PRG unit of parameter ``name`` of ``model`` and the factor from SI (PRG = SI × factor):
    the model's ``prg_units`` entry, else the SI unit with factor 1 (softMC computes in SI)."""
    return dict(getattr(model, "prg_units", None) or {}).get(name, (si_unit, 1.0))


def model_values(content: PrgContent, model: Any, source: str = "<prg>") -> dict[str, float]:
    """The SI values of ``model``'s parameters held by a PRG: ``DynamicParameter`` slots (converted from
    softMC's units, :func:`prg_unit`) and, for parameters beyond softMC's slots (the model's
    ``prg_slots``), dynid's ``'dynid parameter`` comment lines.

    Parameters
    ----------
    content : PrgContent
    model : DynamicModel
        Its ``parameters`` (name, unit, slot) give the layout.
    source : str
        The file, for messages.

    Returns
    -------
    dict
        ``{parameter name: value}`` (SI), every parameter of ``model``.

    Raises
    ------
    FileFormatError
        A parameter beyond softMC's slots is missing (a PRG the controller wrote holds only softMC's
        slots), or a slot the model does not have holds a non-zero value.

    Warns
    -----
    UserWarning
        Slots the model has but the PRG does not hold (they are taken as 0).
    """
    n_prg = getattr(model, "prg_slots", None) or max((p.slot for p in model.parameters), default=0)
    values: dict[str, float] = {}
    missing, absent = [], []
    for p in model.parameters:
        if p.slot <= n_prg:
            if p.slot in content.parameters:
                values[p.name] = content.parameters[p.slot] / prg_unit(model, p.name, p.unit)[1]
            else:
                values[p.name] = 0.0
                missing.append(f"[{p.slot}] {p.name}")
        elif p.name in content.extra_parameters:
            values[p.name] = float(content.extra_parameters[p.name])
        else:
            absent.append(p.name)
    if absent:
        raise FileFormatError(
            f"{source}: model {model.name!r} has parameters beyond softMC's {n_prg} DynamicParameter slots "
            f"({', '.join(absent[:4])}{' ...' if len(absent) > 4 else ''}) and this PRG does not hold them "
            "(only a PRG written by dynid carries them, as 'dynid parameter' comment lines)",
            hint="use the result.json of the identification, or a PRG dynid wrote")
    unknown = sorted(i for i, v in content.parameters.items() if i > n_prg and v != 0.0)
    if unknown:
        if getattr(model, "prg_slots", None):
            warnings.warn(f"{source}: DynamicParameter{unknown} are softMC parameters model {model.name!r} does not "
                          "describe; ignored", stacklevel=2)
        else:
            raise FileFormatError(
                f"{source}: DynamicParameter[{unknown[0]}] = {content.parameters[unknown[0]]:g} but model "
                f"{model.name!r} has {n_prg} slots", hint="is the model the one of the PRG's element?",
                options=("model",))
    if missing:
        warnings.warn(f"{source}: the PRG holds no DynamicParameter {', '.join(missing)} of model {model.name!r}; "
                      "taken as 0", stacklevel=2)
    bad = [k for k, v in values.items() if not math.isfinite(v)]
    if bad:
        raise FileFormatError(f"{source}: parameter {bad[0]} is not a finite number")
    return values
