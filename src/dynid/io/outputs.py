"""Write an identification run: ``IDNT<group>.PRG``, ``IDNT<group>.REC`` and ``result.json``.

The PRG and result.json are rendered from the run's :class:`~dynid.fitted.FittedModel` (the one type
of an identified model); the REC also holds the run's conditioned signals. All file contents are
staged first (:class:`~dynid._atomic.Staging`) and committed together with the removal of the earlier run's
outputs they replace, so a failed or interrupted run leaves the folder as it was, and a finished one holds
this run's outputs only — beside the files that are not a run's, never touched (spec/interfaces.md §2–3).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import mmap
import os
from concurrent.futures import wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .._atomic import Staging
from .._json import jsonable
from ..fitted import RESULT_FILE, FittedModel
from ..threads import in_background, num_threads
from ..units import force_unit, position_unit, velocity_unit
from .prg import PrgContent, format_prg, prg_unit
from ._fastcsv import formatter_available
from .rec import finish_rec_rows, format_rec, format_rec_rows, rec_head, rec_rows_size, start_rec_rows, write_rec

__all__ = ["run_model", "result_dict", "prg_content", "rec_text", "rec_rows_of", "StagedRec", "stage_rec", "BegunRec", "begin_staged_rec", "finish_staged_rec", "RecAhead", "write_run", "stage_run", "earlier_outputs",
           "write_outputs", "report_files", "REPORT_NAME"]


def run_model(ident, *, element: str | None = None, group: int = 1, source: Mapping[str, Any] | None = None,
              extra: Mapping[str, Any] | None = None) -> FittedModel:
    """The FittedModel of an :class:`~dynid.identification.pipeline.Identification` with the run's
    element name, group, source and extra result.json keys."""
    model = ident.model
    return model.with_info(element=element or model.element, group=group, source=dict(source or {}),
                           created=_dt.datetime.now().isoformat(timespec="seconds"), **dict(extra or {}))


def result_dict(ident, *, element: str, group: int, source: Mapping[str, Any] | None = None,
                extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``result.json`` content of a run (minimum schema of interfaces.md §3 plus more keys)."""
    return run_model(ident, element=element, group=group, source=source, extra=extra).to_dict()


def prg_content(model: FittedModel, *, date: _dt.datetime | None = None,
                properties: Mapping[str, float] | None = None) -> PrgContent:
    """softMC PRG content of a fitted model.

    ``DynamicParameter`` slots hold the model's parameters in softMC's units (a model's ``prg_units``,
    e.g. the Galileo's TP/TB in mm; SI otherwise) and, where softMC's model carries the payload in a slot
    (``prg_payload``), parameter + configured payload. Parameters beyond softMC's slots (``prg_slots``)
    go to ``'dynid parameter`` comment lines. Friction is converted to the configured PRG sign (softMC:
    −1); ``<axis>.TorqueThreshold`` is written when the configuration gives ``torque_limits``. Comment
    lines state which parameters the run did not determine, and what would.
    """
    plant, dyn = model.plant, model.model
    k = plant.n_model
    sign = dyn.config.friction_sign
    fr = plant.friction.values_by_term(model.theta[k:])
    axes = tuple(j.name for j in dyn.joints)
    visc = fr.get("viscous", [0.0] * len(axes))
    coul = fr.get("coulomb", [0.0] * len(axes))
    n_prg = getattr(dyn, "prg_slots", None) or dyn.n_slots
    payload_slots = dict(getattr(dyn, "prg_payload", None) or {})
    slots: dict[int, float] = {}
    extra: dict[str, float] = {}
    extra_units: dict[str, str] = {}
    for p, v in zip(dyn.parameters, model.theta[:k]):
        v = float(v) + (float(getattr(dyn.payload, payload_slots[p.name])) if p.name in payload_slots else 0.0)
        if p.slot <= n_prg:
            slots[p.slot] = v * prg_unit(dyn, p.name, p.unit)[1]
        else:
            extra[p.name], extra_units[p.name] = v, p.unit
    for i in range(1, n_prg + 1):
        slots.setdefault(i, 0.0)
    terms: dict[str, dict[str, float]] = {}
    for term, vals in fr.items():
        if term not in ("viscous", "coulomb"):
            owners = plant.friction.motor_names if term.startswith("motor_") else axes
            terms[term] = dict(zip(owners, (float(v) for v in vals)))
    fspec = plant.friction.spec
    plain = fspec == "viscous+coulomb"
    stribeck = plant.friction.stribeck_velocity if "stribeck" in plant.friction.terms else None
    limits = dyn.config.torque_limits
    thresholds = {} if limits is None or len(limits) != len(axes) else dict(zip(axes, map(float, limits)))
    c, m = model.conditioning, model.metrics
    nan = float("nan")
    cutoff = float(c.get("cutoff_hz") or nan)
    order = int(c.get("filter_order", 4))
    exact = math.isfinite(cutoff) and (float(f"{cutoff:.3f}") != cutoff or order != 4)
    return PrgContent(
        element=model.element, success=bool(m.get("success")), date=date,
        max_error_percent=tuple(100 * _floats(m.get("max_relative_error"), len(axes))),
        mean_error_percent=tuple(100 * _floats(m.get("mean_relative_error"), len(axes))),
        allowed_percent=100 * float(m.get("allowed", 0.5)), cutoff_hz=cutoff,
        data_length=int(c.get("data_length", 0)), raw_length=int(c.get("raw_length", 0)),
        moving_samples=tuple(int(x) for x in c.get("moving_samples") or [0] * len(axes)),
        thresholds=tuple(_floats(c.get("velocity_threshold"), len(axes))),
        threshold_units=tuple(velocity_unit(kind) for kind in dyn.joint_kinds),
        parameters=slots, axes=axes,
        viscous={a: sign * v for a, v in zip(axes, visc)}, coulomb={a: sign * v for a, v in zip(axes, coul)},
        dynamic_model=dyn.softmc_model, properties=dict(properties or {}), comments=tuple(_statements(model, n_prg)),
        torque_thresholds=thresholds, extra_parameters=extra, extra_units=extra_units,
        friction_model=None if plain else fspec, stribeck_velocity=stribeck, friction_terms=terms,
        exact_cutoff_hz=cutoff if exact else None, filter_order=order if exact else None)


_UNDETERMINED = ("not identifiable", "not excited")


def _statements(model: FittedModel, n_prg: int) -> list[str]:
    """PRG comment lines: softMC's slot units where they are not SI, and, per parameter this run did not
    determine (structurally merged, a payload coefficient, not excited) or took from the configuration, what it
    is and what would determine it (the model's ``prg_determination``, else a rule by role and status)."""
    dyn = model.model
    lines = []
    units = getattr(dyn, "prg_units", None) or {}
    if units:
        lines.append("DynamicParameter units: " + "; ".join(
            f"[{p.slot}] {p.name} {prg_unit(dyn, p.name, p.unit)[0]}" for p in dyn.parameters if p.slot <= n_prg))
    how = dict(getattr(dyn, "prg_determination", None) or {})
    status = model.status[: model.plant.n_model]
    generic: dict[str, list[str]] = {}
    for p, st, v in zip(dyn.parameters, status, model.theta):
        where = f"DynamicParameter[{p.slot}]" if p.slot <= n_prg else "dynid parameter"
        unit, f = prg_unit(dyn, p.name, p.unit)
        shown = f"{p.name} ({where}) = {_num(v * f)} {unit}".rstrip()
        if p.role == "constant" and p.name in how:
            lines.append(f"From the configuration, not from the run: {shown}: {how[p.name]}")
        elif st in _UNDETERMINED and p.name in how:
            lines.append(f"Not determined by this run: {shown}: {how[p.name]}")
        elif st in _UNDETERMINED:
            if p.role == "payload":
                key = ("a payload coefficient: a run without payload cannot determine it; a second run carrying a "
                       "known payload does (dynid identify --payload-of <this run's result.json>)")
            elif st == "not excited":
                key = "this motion did not excite it: plan a motion that moves the axes it acts on (dynid excite)"
            else:
                key = "merges with other parameters (base parameters): no motion separates it"
            generic.setdefault(key, []).append(shown)
    for key, names in generic.items():
        lines.append(f"Not determined by this run ({key}): " + "; ".join(names))
    return lines


def _num(v: float) -> str:
    return f"{float(v) + 0.0:.6g}"


def _recorded_channels(cond) -> dict[str, np.ndarray]:
    return {"tfbRaw": cond.tau_raw, "pfbRaw": cond.q_raw, "tfb": cond.tau, "pfb": cond.q, "vfb": cond.qd,
            "afb": cond.qdd}


def _model_channels(cond, tcmd: np.ndarray) -> dict[str, np.ndarray]:
    return {"tcmd": tcmd, "te": tcmd - cond.tau}


def _rec_channels(cond, tcmd: np.ndarray) -> dict[str, np.ndarray]:
    return {**_recorded_channels(cond), **_model_channels(cond, tcmd)}


def rec_rows_of(cond, tcmd: np.ndarray, *, threads: int = 2,
                started: mmap.mmap | None = None) -> bytearray | mmap.mmap:
    """The rows of the ``IDNT<group>.REC`` of the conditioned signals ``cond`` and model torque ``tcmd``,
    formatted before the fitted model (and so the header) is known, for :func:`rec_text` ``rows=``. ``started``:
    the rows of :func:`rec_rows_start` for ``cond`` (begun before the model torque was known), completed here."""
    if started is not None:
        return finish_rec_rows(started, _model_channels(cond, tcmd))
    return format_rec_rows(cond.t, _rec_channels(cond, tcmd), threads=threads)


def rec_rows_start(cond) -> mmap.mmap | None:
    """The REC rows of ``cond`` with the recorded signals formatted, the model's left for :func:`rec_rows_of`
    (None without the compiled formatter)."""
    return start_rec_rows(cond.t, _recorded_channels(cond))


def rec_text(model: FittedModel, cond, tcmd: np.ndarray, *,
             rows: bytearray | mmap.mmap | None = None) -> bytearray | memoryview:
    """``IDNT<group>.REC`` content (SI units, bytes-like): the conditioned signals ``cond`` of the run and the
    model torque ``tcmd`` ``(N, n_joints)`` on them; ``rows``: those already formatted by :func:`rec_rows_of`
    (used once)."""
    return format_rec(cond.t, _rec_channels(cond, tcmd), _rec_header(model.element, model.model, cond, model.conditioning),
                      rows=rows)


def _rec_header(element: str, dyn, cond, conditioning: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The REC's header: the run's conditioning and the model's joints and units (not its parameters).

    ``conditioning``: the fitted model's (result.json's) — its lengths and moving samples are the whole recording's,
    where the REC holds windows of a long one (``cond``'s rows: the header then says which)."""
    tr = dyn.config.transmission
    motor_side = tr is not None and tr.records_motor_side
    lengths = {"moving_samples": cond.moving_samples, "raw_length": cond.raw_length, "data_length": cond.data_length,
               "first_raw_sample": cond.start}
    windows = {}
    if conditioning is not None and int(conditioning.get("data_length", cond.data_length)) != cond.data_length:
        lengths = {"moving_samples": conditioning["moving_samples"], "raw_length": conditioning["raw_length"],
                   "data_length": conditioning["data_length"], "first_raw_sample": conditioning["trim_samples"]}
        gaps = np.flatnonzero(np.diff(cond.t) > 1.5 * cond.sample_period_s)
        starts, ends = np.r_[0, gaps + 1], np.r_[gaps, cond.data_length - 1]
        windows = {"rows": f"{cond.data_length} rows: {starts.size} full-rate windows of the recording (it was read in "
                           "blocks); the lengths, moving samples and errors are over every row",
                   "windows_s": [[float(cond.t[a]), float(cond.t[b])] for a, b in zip(starts, ends)]}
    return jsonable({
        "element": element, "model": dyn.name, "softmc_dynamic_model": dyn.softmc_model,
        "sample_period_s": cond.sample_period_s, "cutoff_hz": cond.cutoff_hz,
        "velocity_threshold": cond.velocity_threshold, **lengths, **windows,
        "joints": [j.name for j in dyn.joints],
        **({"transmission": tr.to_dict()} if tr is not None else {}),
        "units": {"t": "s", "position": [position_unit(k) for k in dyn.joint_kinds],
                  "velocity": [velocity_unit(k) for k in dyn.joint_kinds],
                  "torque": [force_unit(k) for k in dyn.joint_kinds]},
        "signals": {"tfbRaw": "measured torque" + (" (joint side, converted by the transmission)" if motor_side else ""),
                    "pfbRaw": "measured position", "tfb": "filtered torque",
                    "pfb": "filtered position", "vfb": "velocity", "afb": "acceleration",
                    "tcmd": "model torque (TorqueAdditiveCommand)", "te": "tcmd - tfb"},
    })


@dataclass(frozen=True)
class StagedRec:
    """An ``IDNT<group>.REC`` written into its folder under a temporary name before the run's other outputs are
    known (:func:`stage_rec`); :func:`write_run` ``staged=`` renames it in with them."""

    staging: Staging
    path: Path
    header: dict
    cond: Any
    tcmd: np.ndarray


@dataclass(frozen=True)
class BegunRec:
    """A REC being formatted in place in its mapped temporary file (:func:`begin_staged_rec`)."""

    staging: Staging
    path: Path
    header: dict
    mapped: mmap.mmap
    offset: int


def begin_staged_rec(out_dir: str | Path, group: int, element: str, dyn, cond) -> BegunRec | None:
    """The REC of the conditioned signals ``cond`` begun in ``out_dir``: a temporary file of its final size (the
    cells have a fixed width), its blocks allocated and mapped, the header and the recorded signals formatted into
    it; :func:`finish_staged_rec` adds the model's. The rows are formatted where the file's pages are, without a
    buffer to copy from. None where that cannot be (no compiled formatter, a file system that cannot preallocate):
    :func:`stage_rec` then."""
    if not formatter_available():
        return None
    staging, path, header = Staging(), _rec_path(out_dir, group), _rec_header(element, dyn, cond)
    head = rec_head(cond.n_joints, header)
    try:
        mapped = staging.mapped(path, len(head) + rec_rows_size(cond.data_length, cond.n_joints))
        if mapped is None:
            staging.discard()
            return None
        try:
            mapped[: len(head)] = head
            start_rec_rows(cond.t, _recorded_channels(cond), into=mapped, offset=len(head))
        except BaseException:
            mapped.close()
            raise
    except BaseException:
        staging.discard()
        raise
    return BegunRec(staging, path, header, mapped, len(head))


def finish_staged_rec(begun: BegunRec, cond, tcmd: np.ndarray) -> StagedRec:
    """:func:`begin_staged_rec`'s REC with the model torque ``tcmd`` formatted in, its mapping closed: the bytes
    :func:`write_run` would write, staged for it."""
    try:
        finish_rec_rows(begun.mapped, _model_channels(cond, tcmd), offset=begun.offset)
    except BaseException:
        begun.staging.discard()
        raise
    finally:
        begun.mapped.close()
    return StagedRec(begun.staging, begun.path, begun.header, cond, tcmd)


def stage_rec(out_dir: str | Path, group: int, element: str, dyn, cond, tcmd: np.ndarray, *,
              rows: bytearray | mmap.mmap | None = None) -> StagedRec:
    """Write the REC of the conditioned signals ``cond`` and model torque ``tcmd`` into ``out_dir`` under a temporary
    name, with the header of softMC element ``element`` and model ``dyn`` (the fitted parameters are not in the
    REC): what :func:`write_run` would write, ahead of it (:meth:`dynid.Identifier.fit` does this on a second thread
    while the diagnoses run). Not committed, the temporary is removed (:class:`~dynid._atomic.Staging`)."""
    staging, path, header = Staging(), _rec_path(out_dir, group), _rec_header(element, dyn, cond)
    try:
        staging.write(path, format_rec(cond.t, _rec_channels(cond, tcmd), header, rows=rows))
    except BaseException:
        staging.discard()
        raise
    return StagedRec(staging, path, header, cond, tcmd)


def _rec_path(out_dir: str | Path, group: int) -> Path:
    """Where a staged REC goes (absolute: :func:`write_run` compares it with its own)."""
    return Path(os.path.abspath(out_dir)) / f"IDNT{group}.REC"


def write_outputs(ident, out_dir: str | Path, *, element: str | None = None, group: int = 1,
                  source: Mapping[str, Any] | None = None, extra_files: Mapping[str, bytes] | None = None,
                  properties: Mapping[str, float] | None = None, extra: Mapping[str, Any] | None = None,
                  date: _dt.datetime | None = None, also: Mapping[Path, bytes] | None = None) -> dict[str, Path]:
    """Render and write PRG, REC and result.json (plus ``extra_files`` beside them, and ``also`` — files
    elsewhere — with them) of an identification run into ``out_dir``, as :func:`write_run` does."""
    model = run_model(ident, element=element, group=group, source=source, extra=extra)
    return write_run(model, ident.cond, ident.tcmd, out_dir, extra_files=extra_files, properties=properties,
                     date=date, also=also)


class RecAhead:
    """A run's REC written into the outputs' folder on a second thread while the identification runs, where that
    folder is known — ``target`` ``(out_dir, group, element, model)`` — and two threads are allowed (nothing
    otherwise: :func:`write_run` then makes the REC, and no tens of MB are held for a write that may never come):
    the recorded signals formatted into the REC's temporary file as soon as the final fit's recording is
    conditioned (:meth:`start`, the identification's ``on_conditioned``), the model's once its torque is known
    (:meth:`finish`, ``on_evaluated``) — in place in the mapped file (:func:`begin_staged_rec`), else formatted in
    memory and written (:func:`stage_rec`). :meth:`take` gives :func:`write_run` its ``staged=`` for the run's
    final ``cond`` and ``tcmd``; :meth:`drop` removes what will not be taken (also removed when collected or at
    exit)."""

    def __init__(self, target: tuple | None = None) -> None:
        self.target = target
        self._begun: tuple | None = None            # (cond, future of start's job)
        self._ready: tuple | None = None            # (cond, tcmd, future of finish's job)

    def start(self, cond) -> None:
        """Begin the REC of ``cond``: its recorded signals formatted on a second thread."""
        self._begun = None
        target = self.target
        if target is None or num_threads() < 2:
            return

        def job():
            begun = begin_staged_rec(*target, cond)
            return begun if begun is not None else rec_rows_start(cond)

        self._begun = (cond, in_background(job))

    def finish(self, cond, tcmd: np.ndarray) -> None:
        """Complete the REC with the model torque ``tcmd`` on ``cond`` on a second thread (what :meth:`start` began
        for this ``cond``, else all of it)."""
        begun, self._begun = self._begun, None
        target = self.target
        if target is None or num_threads() < 2:
            return

        def job():
            started = begun[1].result() if begun is not None else None
            if started is not None and begun[0] is not cond:            # (begun for another fit: not this REC)
                _drop(started)
                started = None
            if isinstance(started, BegunRec):
                return finish_staged_rec(started, cond, tcmd)
            return stage_rec(*target, cond, tcmd, rows=rec_rows_of(cond, tcmd, threads=1, started=started))

        self._ready = (cond, tcmd, in_background(job))

    def wait(self) -> StagedRec | None:
        """The finished job's :class:`StagedRec` (None: nothing under way)."""
        return self._ready[2].result() if self._ready is not None else None

    def take(self, cond, tcmd: np.ndarray) -> dict[str, Any]:
        """:func:`write_run`'s ``staged`` for ``cond`` and ``tcmd`` (empty: none, or it failed — the REC is then
        made by :func:`write_run`, which reports an error as usual); used once."""
        ready, self._ready = self._ready, None
        if ready is None:
            return {}
        if ready[0] is not cond or ready[1] is not tcmd:
            _drop_when_done(ready[2])
            return {}
        try:
            return {"staged": ready[2].result()}
        except Exception:
            return {}

    def drop(self, wait: bool = False) -> None:
        """Remove what was begun or made and not taken (once its job is done; ``wait``: before returning — a failed
        fit leaves nothing behind by the time its error is reported)."""
        for pending in (self._begun, self._ready):
            if pending is None:
                continue
            if not wait:
                _drop_when_done(pending[-1])
                continue
            try:
                result = pending[-1].result()
            except BaseException:
                continue
            _drop(result)
        self._begun = self._ready = None


def _drop(result) -> None:
    """Remove a REC a job staged or began; rows in memory are left to the collector."""
    if isinstance(result, BegunRec):
        result.mapped.close()
    if isinstance(result, (BegunRec, StagedRec)):
        result.staging.discard()


def _drop_when_done(job) -> None:
    def drop(done) -> None:
        try:
            result = done.result()
        except BaseException:
            return
        _drop(result)

    job.add_done_callback(drop)


def write_run(model: FittedModel, cond, tcmd: np.ndarray, out_dir: str | Path, *,
              extra_files: Mapping[str, bytes] | None = None, properties: Mapping[str, float] | None = None,
              date: _dt.datetime | None = None, staged: StagedRec | None = None,
              also: Mapping[Path, bytes] | None = None) -> dict[str, Path]:
    """Write the files of a fitted model with its run's conditioned signals ``cond`` and model torque
    ``tcmd`` (``IDNT<group>`` from ``model.group``) into ``out_dir`` (and ``also``, files elsewhere, with them):
    :func:`stage_run`, then committed — every file goes under its name only once all are written, and the earlier
    run's outputs this one does not write (:func:`earlier_outputs`) are removed with it; an error or an interrupt
    leaves the folder as it was."""
    staging, written = stage_run(model, cond, tcmd, out_dir, extra_files=extra_files, properties=properties,
                                 date=date, staged=staged)
    with staging:
        for path, data in (also or {}).items():
            staging.write(path, data)
        staging.commit(list(written.values()))
    return written


def stage_run(model: FittedModel, cond, tcmd: np.ndarray, out_dir: str | Path, *,
              extra_files: Mapping[str, bytes] | None = None, properties: Mapping[str, float] | None = None,
              date: _dt.datetime | None = None, staged: StagedRec | None = None,
              tag: str = "") -> tuple[Staging, dict[str, Path]]:
    """Stage the files :func:`write_run` writes — ``IDNT<group>.PRG``, ``.REC``, ``result.json``, ``extra_files``
    — and the removal of :func:`earlier_outputs` of ``out_dir``; the caller adds more (the report) and commits.
    ``staged``: the REC already written during the fit (:class:`RecAhead`; used where it is this run's REC, with
    this model's header, in ``out_dir``; else removed); its :class:`~dynid._atomic.Staging` is the one returned.
    A large REC not staged is formatted and written on a second thread while the PRG and result.json are rendered.
    ``tag``: the new staging's (:class:`~dynid._atomic.Staging`). On an error nothing is left staged."""
    out = Path(out_dir)
    group = model.group
    files = [out / f"IDNT{group}.PRG", out / f"IDNT{group}.REC", out / RESULT_FILE, *(out / n for n in extra_files or {})]
    if staged is not None and not (staged.cond is cond and staged.tcmd is tcmd
                                   and staged.path == _rec_path(out, group)
                                   and staged.staging.holds(staged.path)
                                   and staged.header == _rec_header(model.element, model.model, cond,
                                                                    model.conditioning)):
        staged.staging.discard()
        staged = None
    staging = staged.staging if staged is not None else Staging(tag)
    try:
        # a REC not staged during the fit, tens of MB: formatted and written on a second thread while the PRG and
        # result.json are rendered
        aside = None
        if staged is None and cond.data_length * cond.n_joints > 20_000:
            aside = in_background(_stage_rec, staging, files[1], model, cond, tcmd)
        try:
            staging.write(files[0], format_prg(prg_content(model, date=date, properties=properties)).encode())
            staging.write(files[2], model.result_json())
            for name, data in (extra_files or {}).items():
                staging.write(out / name, data)
            if aside is not None:
                aside.result()
            elif staged is None:
                _stage_rec(staging, files[1], model, cond, tcmd)
        finally:
            if aside is not None:               # (done before the staging discards what it wrote)
                wait([aside])
        staging.remove(*earlier_outputs(out, group))
    except BaseException:
        staging.discard()
        raise
    return staging, {p.name: p for p in files}


REPORT_NAME = "report.html"
VALIDATION_SUFFIX = ".validation.npz"
HISTORY_SUFFIX = ".history.json"
"""A run's report (:mod:`dynid.report`) and the companions kept beside it: ``<report stem>`` + these suffixes."""


def report_files(report: str | Path) -> tuple[Path, Path, Path]:
    """A report and the companions kept beside it: the page, its validation's data, its robot history (what a
    run without a report removes of an earlier run's)."""
    report = Path(report)
    return report, report.with_name(report.stem + VALIDATION_SUFFIX), report.with_name(report.stem + HISTORY_SUFFIX)


def earlier_outputs(out_dir: str | Path, group: int) -> list[Path]:
    """The files of an identification run in ``out_dir`` that a new run of ``group`` replaces or removes:
    ``IDNT<group>.PRG``/``.REC``, ``result.json``, the report and its companions (:func:`report_files`: a new run's
    report, if it has one, shows the new run only) and the ``IDNT<g>.PRG``/``.REC`` of the group the folder's
    result.json names (the earlier run's). Files of other names — and other groups' PRG/REC without a result.json
    naming them — are not a run's outputs: never touched."""
    out = Path(out_dir)
    groups = [group]
    try:
        earlier = json.loads((out / RESULT_FILE).read_bytes()).get("group")
    except (OSError, ValueError, AttributeError):
        earlier = None
    if isinstance(earlier, int) and not isinstance(earlier, bool) and earlier not in groups:
        groups.append(earlier)
    return [out / RESULT_FILE, *(out / f"IDNT{g}.{ext}" for g in groups for ext in ("PRG", "REC")),
            *report_files(out / REPORT_NAME)]


def _stage_rec(staging: Staging, path: Path, model: FittedModel, cond, tcmd: np.ndarray) -> None:
    """The REC written into the staging a few thousand rows at a time (the bytes :func:`rec_text` gives)."""
    fh = staging.open(path)
    try:
        write_rec(fh, cond.t, _rec_channels(cond, tcmd), _rec_header(model.element, model.model, cond,
                                                                      model.conditioning))
    finally:
        fh.close()


def _floats(values, n: int) -> np.ndarray:
    if values is None:
        return np.full(n, np.nan)
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)
