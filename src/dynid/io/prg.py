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

__all__ = ["PrgContent", "format_prg", "parse_prg", "read_prg", "model_values", "friction_values", "prg_unit"]


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
    line_numbers : ``{line: number}`` (1-based) of the lines read: ``DynamicParameter[i]``,
        ``<axis>.ViscousFriction``, ``<axis>.CoulombFriction``, ``Friction term '<suffix>'`` (for messages)
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
    line_numbers: Mapping[str, int] = field(default_factory=dict, compare=False)


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
    """Parse PRG text (case-insensitive keywords, free spacing, wrapped header lines).

    Raises
    ------
    FileFormatError
        No header or ``DynamicModel`` line, a value that is not a number, or a value set twice (the same
        ``DynamicParameter`` slot, friction property of an axis, ``DynamicModel``, ... on two lines): the
        message names the file and both lines.
    """
    numbered = list(enumerate(text.splitlines(), start=1))
    notes = [(n, line.strip()[1:].strip()) for n, line in numbered if line.strip().startswith("'")]
    header = " ".join(x for _, x in notes if not _DYNID_COMMENT.match(x))
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
    once = _Once(source)
    dynid_notes = _parse_notes(notes, source, once)
    body = _parse_body(numbered, element, source, once)
    n = len(body["axes"])
    return PrgContent(
        element=element, success=success, date=date,
        max_error_percent=tuple(mx.get(j + 1, float("nan")) for j in range(max(n, len(mx)))),
        mean_error_percent=tuple(mn.get(j + 1, float("nan")) for j in range(max(n, len(mn)))),
        allowed_percent=float(ma.group(1)) if ma else 50.0,
        cutoff_hz=float(mc.group(1)) if mc else float("nan"),
        data_length=int(ml.group(1)) if ml else 0, raw_length=int(ml.group(2)) if ml else 0,
        moving_samples=tuple(int(x[1]) for x in mv), thresholds=tuple(float(x[2]) for x in mv),
        threshold_units=tuple(x[3] for x in mv), **body, **dynid_notes, line_numbers=once.lines)


class _Once:
    """The lines that set a value, by what they set (MC-Basic names case-insensitively, dynid's parameter names
    as written): a value set on two lines is an error naming both; ``lines`` maps each name to its line number."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines: dict[str, int] = {}
        self._first: dict[tuple[bool, str], int] = {}

    def __call__(self, name: str, n: int, shown: str | None = None, *, fold: bool = True) -> None:
        first = self._first.setdefault((fold, name.lower() if fold else name), n)
        if first != n:
            raise FileFormatError(f"{self.source}, line {n}: {shown or name} is set a second time (first on line "
                                  f"{first})", hint="a PRG sets each value once: delete the wrong line")
        self.lines[name] = n


def _parse_notes(notes: list[tuple[int, str]], source: str, once: _Once) -> dict[str, Any]:
    """dynid's comment lines: parameters beyond softMC's slots, friction model and terms, exact filter."""
    extra: dict[str, float] = {}
    extra_units: dict[str, str] = {}
    fterms: dict[str, dict[str, float]] = {}
    fmodel, vs, exact_cut, order = None, None, None, None
    for n, note in notes:
        try:
            if mm := _RE["extra"].match(note):
                once(f"dynid parameter {mm.group(1)}", n, fold=False)
                extra[mm.group(1)] = float(mm.group(2))
                if mm.group(3):
                    extra_units[mm.group(1)] = mm.group(3)
            elif mm := _RE["fmodel"].match(note):
                once("dynid friction model", n)
                fmodel, vs = mm.group(1), None if mm.group(2) is None else float(mm.group(2))
            elif mm := _RE["filter"].match(note):
                once("dynid filter", n)
                exact_cut, order = float(mm.group(1)), int(mm.group(2))
            elif mm := _RE["fterm"].match(note):
                once(f"Friction term '{mm.group(1)}'", n)
                pairs = _RE["pair"].findall(mm.group(2))
                fterms[mm.group(1)] = {owner: float(v) for owner, v in pairs}
                if len(fterms[mm.group(1)]) != len(pairs):
                    raise FileFormatError(f"{source}, line {n}: Friction term '{mm.group(1)}' names an axis twice",
                                          hint="a PRG sets each value once: delete the wrong value")
        except ValueError as err:
            if isinstance(err, FileFormatError):
                raise
            raise FileFormatError(f"{source}, line {n}: cannot read the value in comment line {note!r}") from err
    return {"extra_parameters": extra, "extra_units": extra_units, "friction_model": fmodel, "stribeck_velocity": vs,
            "friction_terms": fterms, "exact_cutoff_hz": exact_cut, "filter_order": order}


def _parse_body(numbered: list[tuple[int, str]], element: str, source: str, once: _Once) -> dict[str, Any]:
    """softMC's lines: ``DynamicParameter`` slots, per-axis friction and ``TorqueThreshold``, the element's other
    properties (payload) and ``DynamicModel``."""
    params: dict[int, float] = {}
    visc: dict[str, float] = {}
    coul: dict[str, float] = {}
    axes: list[str] = []
    props: dict[str, float] = {}
    thresholds: dict[str, float] = {}
    model = None

    def _axis(name: str) -> str:
        """MC-Basic names are case-insensitive: an axis keeps the spelling of its first line."""
        for ax in axes:
            if ax.lower() == name.lower():
                return ax
        axes.append(name)
        return name

    for n, raw in numbered:
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
                slot = int(mm.group(2))
                once(f"DynamicParameter[{slot}]", n, f"{mm.group(1)}.DynamicParameter[{slot}]")
                params[slot] = float(mm.group(3))
            elif mm and key == "friction":
                ax, prop = _axis(mm.group(1)), "ViscousFriction" if mm.group(2).lower() == "viscousfriction" else "CoulombFriction"
                once(f"{ax}.{prop}", n)
                (visc if prop == "ViscousFriction" else coul)[ax] = float(mm.group(3))
            elif mm and key == "model":
                once("DynamicModel", n, f"{mm.group(1)}.DynamicModel")
                model = int(mm.group(2))
            elif mm and key == "threshold":
                ax = _axis(mm.group(1))
                once(f"{ax}.TorqueThreshold", n)
                thresholds[ax] = float(mm.group(2))
            else:
                mp = _RE["prop"].match(line)
                if mp and mp.group(1).lower() == element.lower():
                    once(f"{element}.{mp.group(2)}", n, f"{mp.group(1)}.{mp.group(2)}")
                    props[mp.group(2)] = float(mp.group(3))
        except ValueError as err:
            if isinstance(err, FileFormatError):
                raise
            raise FileFormatError(f"{source}, line {n}: cannot read the value in line {line!r}") from err
    if model is None:
        raise FileFormatError(f"{source}: no '<ELEMENT>.DynamicModel = <m>' line")
    return {"parameters": params, "axes": tuple(axes), "viscous": visc, "coulomb": coul, "dynamic_model": model,
            "properties": props, "torque_thresholds": thresholds}


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
        A ``DynamicParameter`` slot of the model is missing (never taken as 0), a parameter beyond softMC's
        slots is missing (a PRG the controller wrote holds only softMC's slots), or a slot the model does not
        have holds a non-zero value.

    Warns
    -----
    UserWarning
        Non-zero slots beyond those of a model that describes only some of softMC's (``prg_slots``).
    """
    n_prg = getattr(model, "prg_slots", None) or max((p.slot for p in model.parameters), default=0)
    values: dict[str, float] = {}
    missing, absent = [], []
    for p in model.parameters:
        if p.slot <= n_prg:
            if p.slot in content.parameters:
                values[p.name] = content.parameters[p.slot] / prg_unit(model, p.name, p.unit)[1]
            else:
                missing.append(p)
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
                f"{_at(content, source, f'DynamicParameter[{unknown[0]}]')}: DynamicParameter[{unknown[0]}] = "
                f"{content.parameters[unknown[0]]:g} but model "
                f"{model.name!r} has {n_prg} slots", hint="is the model the one of the PRG's element?",
                options=("model",))
    if missing:
        more = ", ".join(f"[{p.slot}] ({p.name})" for p in missing[1:4]) + (", ..." if len(missing) > 4 else "")
        raise FileFormatError(
            f"{source}: no line '{content.element}.DynamicParameter[{missing[0].slot}] = ...' ({missing[0].name} of "
            f"model {model.name!r}){f', nor DynamicParameter {more}' if more else ''}: a PRG read as a model must "
            "set every DynamicParameter slot of the model",
            hint="use the complete PRG of the identification (or its result.json): a missing value is never taken as 0")
    bad = [k for k, v in values.items() if not math.isfinite(v)]
    if bad:
        raise FileFormatError(f"{source}: parameter {bad[0]} is not a finite number")
    return values


def friction_values(content: PrgContent, friction: Any, sign: float, source: str = "<prg>") -> list[float]:
    """The physical coefficients ``(n_params,)`` of ``friction`` held by a PRG: ``ViscousFriction`` and
    ``CoulombFriction`` (softMC's sign × ``sign``) and dynid's ``Friction term`` comment lines.

    Parameters
    ----------
    content : PrgContent
    friction : FrictionModel
        Over the PRG's axes (in the order of ``content.axes``); its terms say which lines are needed.
    sign : float
        The PRG's friction sign (softMC: −1).
    source : str
        The file, for messages.

    Raises
    ------
    FileFormatError
        A line the friction model needs is missing (never taken as 0), or a line holds a non-zero value of a
        term the friction model does not have (it would be dropped). The message names the line.
    """
    axes, spec = content.axes, friction.spec
    by_term: dict[str, list] = {}
    for term, prop, held in (("viscous", "ViscousFriction", content.viscous),
                             ("coulomb", "CoulombFriction", content.coulomb)):
        if term not in friction.terms:
            _unused(content, source, [(f"{a}.{prop}", v) for a, v in held.items()], spec)
            continue
        gone = [a for a in axes if a not in held]
        if gone:
            raise FileFormatError(
                f"{source}: no line '{gone[0]}.{prop} = ...': friction model {spec!r} needs the {term} friction of "
                f"every axis{f' ({len(gone)} axes lack it)' if len(gone) > 1 else ''}",
                hint="use the complete PRG of the identification (or its result.json): a missing value is never "
                     "taken as 0")
        by_term[term] = [sign * held[a] for a in axes]
    used = set(friction.suffixes) | set(friction.motor_terms)
    for term, vals in content.friction_terms.items():
        if term not in used:
            _unused(content, source, [(f"Friction term '{term}'", v) for v in vals.values()], spec)
            continue
        owners = friction.motor_names if term.startswith("motor_") else axes
        low = {k.lower(): v for k, v in vals.items()}
        by_term[term] = [low.get(o.lower()) for o in owners]
    theta = friction.flatten_terms(by_term)
    lost = [friction.param_names[i] for i, v in enumerate(theta) if v is None]
    if lost:
        raise FileFormatError(f"{source}: no value for friction parameter {lost[0]} of model {spec!r}",
                              hint="check the PRG's 'Friction term' comment lines: a missing value is never taken as 0")
    return [float(v) for v in theta]


def _unused(content: PrgContent, source: str, lines: list[tuple[str, float]], spec: str) -> None:
    """Refuse a non-zero value on a line the friction model ``spec`` has no term for."""
    for what, v in lines:
        if v != 0.0:
            raise FileFormatError(
                f"{_at(content, source, what)}: {what} holds {v:g} but friction model {spec!r} has no such term "
                "(the value would be dropped)",
                hint="give the PRG's friction model in its 'dynid friction model' comment line, or set the value to 0")


def _at(content: PrgContent, source: str, what: str) -> str:
    """``file, line n`` of the line that sets ``what`` (``file`` when unknown)."""
    n = content.line_numbers.get(what)
    return source if n is None else f"{source}, line {n}"
