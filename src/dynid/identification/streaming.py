"""Identification of a recording of any length, block by block, in memory bounded by the block size.

A recording too long to hold (:data:`STREAM_VALUES` samples × joints and more, or any
:class:`~dynid.recording.RecordingSource`) is read several times from its start, one block of rows at a time, each
pass keeping only what it needs:

1. **scan** — the rows' count, the sample period (the median step), the ranges, the motion bandwidth (the default
   cutoff), and the checks :func:`~dynid.signal.conditioning.condition` makes of a whole recording;
2. **gates** — for every cutoff the selection may choose, the peak velocity and the velocity noise (the median spread
   of the high-passed velocity: every row's up to ``STREAM_VALUES`` samples × joints, as many rows at seeded random
   places beyond), hence the velocity and stick thresholds;
3. **selection** (``cutoff``/``friction``/``regularize`` ``auto``) — at every candidate cutoff, the rows the
   selection scores (:func:`~dynid.identification.select.selection_rows`: a seeded random row in each of 2500
   equal stretches of the recording), conditioned; :func:`~dynid.identification.select.select_auto` chooses on
   them as it does on a recording in memory;
4. **fit** — every sample the band needs (the fit's decimation grid of the whole recording), regressed block by
   block into per-joint R factors (:class:`~dynid.identification.rows.FactoredRows`), solved as the tall rows would
   be; the residual's correlation time from a few stretches of consecutive rows;
5. **evaluation** — the model torque on every row: softMC's errors, the residual and torque levels, the cycles and
   sticks (:class:`~dynid.identification.summary.LogSummary`, exact over every row), and the **evidence**: full-rate
   windows of the recording — ``EVIDENCE_WINDOWS`` spread over it and, per joint, the stretch around its largest
   error and around its torque's extremes — which the diagnoses read and the REC holds.

Every block is conditioned by the code that conditions a whole recording, with margins of its neighbours
(:mod:`dynid.signal.blocks`), so on a recording that fits in memory the streaming numbers match the whole
recording's when both share the whole-recording decisions (tested to 1e-9); the decisions themselves differ only
where a streaming statistic is estimated: the velocity noise's median beyond 500 000 samples × joints (then over as many rows, at random places),
the motion bandwidth beyond 2 M values (Welch's average of 131 072-row segments), the sample period where the
steps take more than 20 000 distinct values (a sample's median).

Not block by block (a clear error says so): the ``irls`` estimator, ``align``; read whole: a payload run; not done: the time-base repair
(a note says when the recording has repeated rows or skipped cycles that a recording in memory would have had
repaired).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from ..errors import ConfigError, IdentifiabilityError, InputDataError
from ..models.base import Plant
from ..recording import RecordingSource
from ..signal.blocks import BlockPlan, Extended, condition_block
from ..signal.conditioning import Conditioned, ConditioningOptions, StickCarry, check_recording
from ..signal.stream import (BLOCK_VALUES, STREAM_VALUES, Scan, blocks_of, cached, measure_gates,  # noqa: F401
                             scan_recording, workers)
from ..threads import blas_single_threaded
from ..units import velocity_unit
from .delay import DELAY_SEARCH_SAMPLES
from .checks import check_torque_range
from .diagnostics import assess
from .fit import conditioning_options, estimate
from .options import IdentifyOptions, check_cutoff_of
from .regression import build_regression, default_decimation
from .result import Identification
from .rows import FactoredRows, joint_rows
from .select import FACTORS, CandidateData, _specs, candidate_cutoffs, select_auto, selection_rows
from .summary import LogSummary

__all__ = ["identify_stream", "STREAM_VALUES", "BLOCK_VALUES", "EVIDENCE_WINDOWS", "EVIDENCE_ROWS"]

EVIDENCE_WINDOWS = 8
"""Full-rate windows spread over the recording that the diagnoses read and the REC holds."""
EVIDENCE_ROWS = 40_000
"""Rows of those windows together (each joint's stretches around its largest error and torque extremes come on
top: ``EXTREME_ROWS`` each)."""
EXTREME_ROWS = 1000
REGRESSION_VALUES = 1 << 21
"""Regression rows × parameters built at a time (16 MiB)."""
STRETCHES = 8
STRETCH_ROWS = 4000
"""Stretches of consecutive conditioned rows whose fit residual gives the correlation time."""

Progress = Callable[[str, float], None]


# ------------------------------------------------------------------------------------------------ 1. scan

# ------------------------------------------------------------------------------------------------ 2. gates

# ------------------------------------------------------------------------------------------------ 3. selection

class _Rows:
    """Conditioned rows picked from the blocks (by the recording's index), gathered into one Conditioned."""

    FIELDS = ("t", "q", "qd", "qdd", "tau", "q_raw", "tau_raw", "sign", "moving", "stuck", "near_stuck")

    def __init__(self) -> None:
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in self.FIELDS}
        self.template: Conditioned | None = None

    def add(self, cond: Conditioned, rows: np.ndarray | slice) -> None:
        self.template = self.template or cond
        for k in self.FIELDS:
            v = getattr(cond, k)
            if v is not None:
                self.parts[k].append(v[rows])

    def conditioned(self, start: int) -> Conditioned | None:
        if self.template is None:
            return None
        arrays = {k: np.concatenate(v) if v else None for k, v in self.parts.items()}
        return replace(self.template, **arrays, start=start)


def _selection_pass(source: RecordingSource, scan: Scan, plans: dict[float, BlockPlan], options: IdentifyOptions,
                    default_hz: float, step: Progress) -> CandidateData:
    """Pass 3: the rows the selection scores at every candidate cutoff (:class:`CandidateData`)."""
    picks, gathered, positions = {}, {}, {}
    for fc, plan in plans.items():
        idx, pos = selection_rows(_Probe(plan), options)
        picks[fc], positions[fc], gathered[fc] = idx + plan.trim, pos, _Rows()
    carry = {fc: StickCarry.empty(scan.n_joints) for fc in plans}

    def pick(ext: Extended, fc: float) -> None:
        want = picks[fc]
        a, b = np.searchsorted(want, [ext.start, ext.stop])
        cond = condition_block(ext, plans[fc], carry[fc])     # (every block: the sticks run on from block to block)
        if cond is not None and a < b:
            gathered[fc].add(cond, want[a:b] - cond.start)

    margin = max(p.margin for p in plans.values())
    with workers(len(plans)) as pool:
        for ext in blocks_of(source, scan, margin, step, "conditioning the candidate cutoffs"):
            list(pool.map(lambda fc: pick(ext, fc), plans))
    conds = {fc: g.conditioned(plans[fc].trim) for fc, g in gathered.items()}
    pos_of = {id(c): positions[fc] for fc, c in conds.items() if c is not None}
    return CandidateData(scan.dt, default_hz, lambda fc, pool=None: conds.get(fc),
                         lambda cond: (np.arange(cond.data_length), pos_of[id(cond)]))


# ------------------------------------------------------------------------------------------------ 4. fit

def _fit_pass(source: RecordingSource, scan: Scan, plan: BlockPlan, plant: Plant, options: IdentifyOptions,
              step: Progress):
    """Pass 4: the regression of every sample the band needs, compressed (:class:`FactoredRows`)."""
    k = options.decimate or default_decimation(_Probe(plan))
    rows, first = None, None
    stretches = _Stretches(plan, scan.n_joints, k)
    summary = LogSummary(scan.n_joints, scan.n_samples, plan.trim, k, plan.gate.threshold)
    carry = StickCarry.empty(scan.n_joints)
    for ext in blocks_of(source, scan, plan.margin, step, "fitting"):
        cond = condition_block(ext, plan, carry)
        if cond is None:
            continue
        g0 = cond.start - plan.trim                  # the block's first conditioned row
        summary.add(cond, None, g0)
        # the regression in parts of at most REGRESSION_VALUES (rows x joints x parameters): a block's rows at the
        # band's stride can be tens of MB for a 6-axis arm at a high cutoff
        part = max(k, REGRESSION_VALUES // max(plant.n_joints * plant.n_params, 1) * k)
        for a in range(0, cond.data_length, part):
            piece = cond if part >= cond.data_length else _slice(cond, a, min(a + part, cond.data_length), copy=False)
            reg = build_regression(piece, plant, options, offset=(-(g0 + a)) % k, base=first.base if first else None)
            if rows is None:
                rows, first = FactoredRows(plant.n_joints, plant.n_params), reg
            rows.add(reg.rows.W, reg.rows.y, reg.rows.joint)
            del reg
        stretches.offer(cond, g0)
    if rows is None:
        raise InputDataError(f"{source.source}: no rows are left after trimming", hint="record longer")
    _check_motion(summary, plan, source.source, plant.model.joint_kinds)
    rows.residual_series = stretches.series(plant, options, first.base)
    return replace(first, rows=rows, decimation=k), summary.finish()


class _Stretches:
    """Consecutive conditioned rows kept for the fit residual's correlation time (the inflation of the parameters'
    variance): the whole recording where the identification would hold it in memory (``STREAM_VALUES``: the
    correlation time is then the whole residual's, as in memory), else ``STRETCHES`` stretches of
    ``STRETCH_ROWS`` rows spread over it."""

    def __init__(self, plan: BlockPlan, n_joints: int, k: int) -> None:
        self.whole = plan.data_length * n_joints <= STREAM_VALUES
        self.every = max(1, plan.data_length // STRETCHES)
        self.k = k
        self.pieces: list[tuple[int, Conditioned, int]] = []          # (stretch, rows, fit grid offset)

    def offer(self, cond: Conditioned, g0: int) -> None:
        """A block's conditioned rows (its first the recording's conditioned row ``g0``)."""
        if self.whole:
            self.pieces.append((0, _slice(cond, 0, cond.data_length), (-g0) % self.k))
            return
        nxt = len(self.pieces) * self.every            # where the block holds the next stretch's start
        if len(self.pieces) < STRETCHES and g0 <= nxt < g0 + cond.data_length:
            a = nxt - g0
            self.pieces.append((len(self.pieces), _slice(cond, a, a + STRETCH_ROWS), (-(g0 + a)) % self.k))

    def series(self, plant: Plant, options: IdentifyOptions, base):
        """``series(x)``: each joint's residual ``y − W x`` over each stretch (the pieces of one stretch joined)."""
        def series(x: np.ndarray):
            out: dict[tuple[int, int], list[np.ndarray]] = {}
            for group, cond, offset in self.pieces:
                reg = build_regression(cond, plant, options, offset=offset, base=base)
                res = reg.rows.residual(x)
                for j, sel in enumerate(joint_rows(reg.rows.joint, plant.n_joints)):
                    out.setdefault((group, j), []).append(res[sel])
            return [(j, np.concatenate(parts)) for (_, j), parts in out.items()]
        return series


class _Probe:
    """The few attributes :func:`default_decimation` reads, of a plan."""

    def __init__(self, plan: BlockPlan) -> None:
        self.cutoff_hz, self.sample_period_s, self.data_length = plan.cutoff, plan.dt, plan.data_length


def _slice(cond: Conditioned, a: int, b: int, copy: bool = True) -> Conditioned:
    """Rows ``a:b`` of a block, copied (a view would keep the whole block in memory) unless ``copy`` is False."""
    rows = slice(a, b)
    take = (lambda v: np.array(v[rows])) if copy else (lambda v: v[rows])
    return replace(cond, **{k: None if getattr(cond, k) is None else take(getattr(cond, k)) for k in _Rows.FIELDS},
                   start=cond.start + a)


def _check_motion(summary: LogSummary, plan: BlockPlan, source: str, kinds) -> None:
    """:func:`~dynid.signal.conditioning.condition`'s check that every joint has enough gated samples."""
    for j in range(summary.n_joints):
        if summary.moving[j] < 20:
            raise InputDataError(
                f"{source}, column q{j + 1}: joint {j + 1} has only {int(summary.moving[j])} of {summary.data_length} "
                f"samples above the velocity threshold {plan.gate.threshold[j]:.4g} {velocity_unit(kinds[j])}",
                hint="the joint barely moves: excite it (move faster / wider) or lower the velocity threshold")


# ------------------------------------------------------------------------------------------------ 5. evaluation

class _Evidence:
    """The full-rate windows the diagnoses read and the REC holds: ``EVIDENCE_WINDOWS`` fixed ones spread over the
    recording, and per joint the stretch around its largest error and its torque's extremes so far."""

    def __init__(self, plan: BlockPlan, n: int) -> None:
        N = plan.data_length
        width = max(1, min(N, EVIDENCE_ROWS) // EVIDENCE_WINDOWS)
        starts = np.linspace(0, max(N - width, 0), EVIDENCE_WINDOWS).astype(np.int64) + plan.trim
        self.windows = [(int(s), int(s) + width) for s in starts]          # recording rows
        self.fixed: dict[int, tuple[Conditioned, np.ndarray]] = {}        # pieces by their first row
        self.extreme: dict[tuple[str, int], tuple[float, Conditioned, np.ndarray]] = {}
        self.n = n

    def add(self, cond: Conditioned, tcmd: np.ndarray) -> None:
        s0, s1 = cond.start, cond.start + cond.data_length
        for a, b in self.windows:
            lo, hi = max(a, s0), min(b, s1)
            if lo < hi:
                self.fixed[lo] = (_slice(cond, lo - s0, hi - s0), np.array(tcmd[lo - s0:hi - s0]))
        te = np.where(cond.moving, np.abs(tcmd - cond.tau), -np.inf)
        half = EXTREME_ROWS // 2
        for what, score in (("error", te), ("high", cond.tau_raw), ("low", -cond.tau_raw)):
            k = np.argmax(score, axis=0)
            for j in range(self.n):                                        # per joint
                v = float(score[k[j], j])
                key = (what, j)
                if key not in self.extreme or v > self.extreme[key][0]:
                    a = max(0, int(k[j]) - half)
                    b = min(cond.data_length, a + EXTREME_ROWS)
                    self.extreme[key] = (v, _slice(cond, a, b), np.array(tcmd[a:b]))

    def conditioned(self) -> tuple[Conditioned, np.ndarray]:
        pieces = sorted([*self.fixed.values(), *((c, t) for _, c, t in self.extreme.values())],
                        key=lambda p: p[0].start)
        conds, torques, seams, end = [], [], [], -1
        for c, t in pieces:                                  # (a few dozen pieces) overlapping ones merged
            if c.start < end:
                skip = end - c.start
                if skip >= c.data_length:
                    continue
                c, t = _slice(c, skip, c.data_length), t[skip:]
            if c.start != end:
                seams.append(sum(x.data_length for x in conds))
            conds.append(c)
            torques.append(t)
            end = c.start + c.data_length
        whole = replace(conds[0], **{k: None if getattr(conds[0], k) is None else
                                     np.concatenate([getattr(c, k) for c in conds]) for k in _Rows.FIELDS})
        # the delay search shifts the torque by up to DELAY_SEARCH_SAMPLES rows: none of its rows may reach across
        # a seam between windows
        moving = whole.moving.copy()
        reach = DELAY_SEARCH_SAMPLES + 1
        for s in seams[1:]:
            moving[max(0, s - reach):s + reach] = False
        return replace(whole, moving=moving), np.concatenate(torques)


def _evaluate_pass(source: RecordingSource, scan: Scan, plan: BlockPlan, plant: Plant, theta: np.ndarray,
                   summary: LogSummary, step: Progress) -> tuple[LogSummary, Conditioned, np.ndarray]:
    """Pass 5: the model torque on every row: the summary with the errors, and the evidence."""
    full = LogSummary(scan.n_joints, scan.n_samples, plan.trim, summary.decimation, plan.gate.threshold)
    full.excitation_hz = scan.bandwidth
    evidence = _Evidence(plan, scan.n_joints)
    carry = StickCarry.empty(scan.n_joints)
    for ext in blocks_of(source, scan, plan.margin, step, "evaluating the model"):
        cond = condition_block(ext, plan, carry)
        if cond is None:
            continue
        tcmd = plant.torque(theta, cond.q, cond.qd, cond.qdd, sign=cond.sign)
        full.add(cond, tcmd, cond.start - plan.trim)
        evidence.add(cond, tcmd)
    cond, tcmd = evidence.conditioned()
    return full.finish(), cond, tcmd


# ------------------------------------------------------------------------------------------------ the whole

def _unsupported(options: IdentifyOptions, source: str, n: int) -> None:
    what = ("the irls estimator" if options.estimator == "irls" else
            "--align (the torque delay estimate)" if options.align_torque else None)
    if what:
        raise ConfigError(f"{source}: {what} is not available for a recording read in blocks ({n} samples)",
                          hint="use the default estimator (or give the delay with torque_delay), or identify a cut of "
                               "the recording", options=("estimator", "align"))


@blas_single_threaded
def identify_stream(source: RecordingSource, plant: Plant, options: IdentifyOptions = IdentifyOptions(), *,
                    progress: Progress | None = None, check_cutoff: float | None = None) -> Identification:
    """Identify ``plant`` from a recording read block by block (see the module docstring).

    Returns the :class:`Identification` :func:`~dynid.identification.pipeline.identify` would give, whose ``cond``
    and ``tcmd`` are the evidence windows and whose ``summary`` holds the whole recording's numbers.
    ``check_cutoff``: a cutoff the user gave [Hz], checked against softMC's rule
    (:func:`~dynid.identification.options.check_cutoff`) once the first pass knows the recording.

    Raises
    ------
    InputDataError, IdentifiabilityError, ConfigError
        As :func:`~dynid.identification.pipeline.identify`.
    """
    step = progress or (lambda stage, frac: None)
    source = cached(source)
    if source.n_joints != plant.n_joints:
        raise IdentifiabilityError(f"{source.source}: {source.n_joints} joints recorded, model {plant.model.name!r} "
                                   f"has {plant.n_joints}")
    if not source.has_tau:
        raise IdentifiabilityError(f"{source.source}: the recording has no torque columns",
                                   hint="identification needs tau1..taun")
    scan = scan_recording(source, _span(step, 0.0, 0.15, "reading"))
    if hasattr(source, "check_ranges"):
        source.check_ranges(scan.q_min, scan.q_max)
    _unsupported(options, source.source, scan.n_samples)
    check_recording(scan.dt, scan.q_max > scan.q_min, scan.qd_any if scan.has_qd else None, source.source)
    check_torque_range(scan.tau_min, scan.tau_max, scan.n_samples, source.source, plant.model.joint_kinds)
    if check_cutoff is not None:
        check_cutoff_of(check_cutoff, scan.dt, scan.motion_bandwidth, scan.default_cutoff(ConditioningOptions()),
                        source.source)
    ridge = options.select_regularization and plant.model.prior_parameters() is not None
    selecting = options.select_cutoff or plant.auto_friction or ridge
    # conditioned as the selection conditions (its first candidate's coupled motors' signs), or as the plant says
    first = Plant(plant.model.with_config(friction=_specs(plant, plant.auto_friction, None)[0])) if selecting else plant
    copt = conditioning_options(first, options)
    default_hz = scan.default_cutoff(copt)
    cutoffs = candidate_cutoffs(default_hz, scan.dt, copt, FACTORS if options.select_cutoff else None)
    for fc in cutoffs:
        if fc >= 0.5 / scan.dt:
            raise ConfigError(f"cutoff {fc:g} Hz is not below the Nyquist frequency {0.5 / scan.dt:g} Hz of the "
                              "recording", hint="choose a lower cutoff", options=("cutoff",))
    plans = {fc: BlockPlan(scan.n_samples, scan.dt, fc, replace(copt, cutoff_hz=fc),
                           time_base=scan.time_base_record()) for fc in cutoffs}
    for fc, plan in plans.items():
        if plan.data_length < 20:
            raise InputDataError(f"{source.source}: {scan.n_samples} samples leave only {plan.data_length} after "
                                 f"trimming {plan.trim} at each end for the {fc:.3g} Hz filter",
                                 hint="record longer or raise the cutoff", options=("cutoff",))
    plans = measure_gates(source, scan, plans, copt, _span(step, 0.15, 0.35, "measuring the velocity noise"))
    notes = []
    selections = {}
    if selecting:
        data = _selection_pass(source, scan, plans, options, default_hz, _span(step, 0.35, 0.55, "choosing"))
        sel = select_auto(None, plant, options, cutoff=options.select_cutoff, friction=plant.auto_friction,
                          ridge=ridge, data=data)
        plant, options = sel.applied(plant, options)
        notes.append(sel.note())
        selections["selection"] = sel.to_dict()
        fc = sel.cutoff_hz
    else:
        fc = cutoffs[0]
    plan = replace(plans[fc], options=replace(conditioning_options(plant, options), cutoff_hz=fc))
    reg, partial = _fit_pass(source, scan, plan, plant, options, _span(step, 0.55, 0.75, "fitting"))
    est = estimate(reg, plant, options)
    summary, cond, tcmd = _evaluate_pass(source, scan, plan, plant, est.theta, partial,
                                         _span(step, 0.75, 0.95, "evaluating the model"))
    errors = summary.errors(options.allowed_error)
    windows = int(np.count_nonzero(np.diff(cond.t) > 1.5 * scan.dt)) + 1
    notes = [*([plan.time_base["note"]] if plan.time_base.get("note") else []), *est.notes, *notes,
             f"read block by block ({scan.n_samples} samples): the fit on every sample the band needs "
             f"({summary.fit_rows} rows), the errors over every row; the diagnoses and the REC on {windows} "
             f"full-rate windows of the recording ({cond.data_length} rows)"]
    ident = est.identification(cond, tcmd, errors, summary, notes)
    ident = replace(ident, selections={**ident.selections, **selections})
    step("diagnostics", 0.95)
    ident = assess(ident)
    step("done", 1.0)
    return ident


def _span(step: Progress, lo: float, hi: float, stage: str) -> Progress:
    return lambda s, frac: step(s or stage, lo + (hi - lo) * min(max(frac, 0.0), 1.0))
