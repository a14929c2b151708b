"""Choices the data make: the cutoff, the friction model, the prior regularisation, the torque delay.

Cutoff, friction model and prior regularisation (``cutoff: auto``, ``friction: auto``, ``regularize: auto``
— dynid's defaults) are chosen together by :func:`select_auto`: every combination is identified on one
part of the recording and scored on the held-out part, both ways round (fit on the first 70 % and
validate on the last 30 %, then the reverse). The score is the torque NRMSE (RMSE / RMS of the measured
torque, per joint, averaged over joints and folds) of the prediction against the raw measured torque,
evaluated as ``dynid predict`` evaluates it (the Coulomb step at the sign of the velocity). Among the
combinations within ``MIN_GAIN`` (2 %, relative) of the best: the fewest friction parameters, then the
default cutoff, then no regularisation, then the lowest score; a cutoff other than the default competes
only where it beats the default's best by ``CUTOFF_GAIN`` (5 %).

- Cutoff candidates: ``factor × default`` (0.5, 1, 2, 4; below 0.4 fs), the default being 20 × the
  motion bandwidth (:func:`dynid.signal.conditioning.default_cutoff`), which looks only at the positions.
  They are walked from the default: upward while the best score of a cutoff improves on the previous one,
  otherwise downward while it improves (the held-out error is unimodal in the cutoff — signal distortion
  below the best cutoff, noise above it — so a candidate beyond a worse one cannot win); three of the four
  are scored in the usual case.
  How much of the torque above it the model explains depends on the robot: link-side torque sensors on
  a light arm see elastic vibrations the rigid model lacks (a lower cutoff is better), while motor
  torques of a heavy geared robot carry the rotor inertia's response to fast motor accelerations (a
  higher one is better).
- Friction candidates: :data:`CANDIDATES` (with the coupled motors' terms, :func:`candidates_for`).
- Regularisation toward the a-priori model: :data:`RIDGES`, where the model has a-priori inertias.

It is fast because nothing is refitted from scratch: per cutoff the recording is conditioned once and the
regressor evaluated once on a subsample; each candidate's fit and held-out error come from small Gram
matrices (per joint, on the columns its rows touch; the friction columns of all candidates from the fewest
candidates that hold them; all candidates' small solves at once). With two threads the nearest other cutoff is
conditioned and scored on a second one while the default is, and each further cutoff the walk needs is conditioned
on both. :func:`select_friction` and :func:`select_cutoff` are its one-choice views.

Torque delay (``--align``): :func:`aligned` fits once, estimates the torque/kinematics delay from the
residual and, when it is at least half a sample, fits again with the torque shifted.

>>> from dynid.models import make_model, Plant
>>> from dynid.sim import SineMotion, simulate
>>> plant = Plant(make_model("rotary1"))
>>> rec = simulate(plant, [0.02, 0.5, 0.3], SineMotion([-1.0], [1.0], [1.0], record_s=8.0), seed=1)
>>> sel = select_cutoff(rec, plant)
>>> sel.chosen_hz in sel.scores
True
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import numpy as np

from ..errors import DynidError
from ..fitted import SIGN_NOISE_FACTOR
from ..models.base import Plant
from ..recording import Recording
from ..signal.conditioning import MAX_CUTOFF_SHARE, Conditioned, default_cutoff
from ..threads import in_background, num_threads
from .delay import MIN_DELAY_SAMPLES, estimate_delay
from .base_params import structural_base
from .fit import Fit, condition_for
from .regression import default_decimation, known_parameters
from .options import IdentifyOptions
from .result import Identification

__all__ = ["CANDIDATES", "FrictionSelection", "select_friction", "candidates_for", "CutoffSelection", "AutoSelection", "select_auto",
           "analyse_ahead", "RIDGES",
           "select_cutoff", "FACTORS", "aligned", "MIN_GAIN", "FIT_SHARE", "selection_rows", "CandidateData",
           "recording_candidates", "candidate_cutoffs"]

MIN_GAIN = 0.02
"""A richer friction model, or another cutoff than the default, must lower the held-out error by this
fraction (relative) to be chosen."""
CUTOFF_GAIN = 0.05
"""Another cutoff than the default must lower the held-out error by this fraction (relative)."""
FIT_SHARE = 0.7
"""Share of the recording each fold fits (the rest is held out)."""


CANDIDATES = (
    "viscous+coulomb",
    "viscous+coulomb+offset",
    "viscous+coulomb_asym",
    "viscous+coulomb+offset+armature",
    "viscous+coulomb_asym+armature",
    "viscous+coulomb+offset+stribeck",
    "viscous+coulomb+offset+stribeck+armature",
)
MOTOR_CANDIDATE_TERMS = "motor_viscous+motor_coulomb"
"""Appended to every candidate when the transmission has coupled motors (``+motor_armature`` as well
where the candidate has joint armature): their friction moves with several joints."""


def candidates_for(model, candidates: Sequence[str] = CANDIDATES) -> tuple[str, ...]:
    """The candidate friction models for ``model``: with coupled motors, their terms on every candidate."""
    tr = model.config.transmission
    if tr is None or not tr.coupled_motors:
        return tuple(candidates)
    out = []
    for c in candidates:
        extra = MOTOR_CANDIDATE_TERMS + ("+motor_armature" if "armature" in c.split("+") else "")
        out.append(f"{c}+{extra}")
    return tuple(out)


@dataclass(frozen=True)
class FrictionSelection:
    """The chosen friction model and the validation score of every candidate (NRMSE, or None if it failed)."""

    chosen: str
    scores: dict

    def table(self) -> list[tuple[str, float | None]]:
        return list(self.scores.items())

    def note(self) -> str:
        parts = [f"{k}: {'-' if v is None else f'{100 * v:.3f} %'}" for k, v in self.scores.items()]
        return f"friction model chosen by validation error: {self.chosen} (held-out NRMSE " + "; ".join(parts) + ")"


def select_friction(rec: Recording, plant: Plant, options: IdentifyOptions | None = None,
                    candidates: Sequence[str] | None = None, progress: Callable[[str, float], None] | None = None
                    ) -> FrictionSelection:
    """Choose the friction model of ``plant`` for ``rec`` by two-fold held-out torque error, at the options'
    cutoff (:func:`select_auto` with only the friction choice; ``candidates`` default :func:`candidates_for`)."""
    sel = select_auto(rec, plant, options, cutoff=False, friction=True, ridge=False, candidates=candidates,
                      progress=progress)
    return FrictionSelection(sel.friction, {f: v for (_, f, _), v in sel.scores.items()})


FACTORS = (0.5, 1.0, 2.0, 4.0)


@dataclass(frozen=True)
class CutoffSelection:
    """The chosen cutoff [Hz], the default it was compared with, and every candidate's score
    (held-out NRMSE, or None if the candidate could not be identified)."""

    chosen_hz: float
    default_hz: float
    scores: dict

    def note(self) -> str:
        parts = [f"{fc:.3g} Hz: {'-' if v is None else f'{100 * v:.3f} %'}" for fc, v in self.scores.items()]
        return (f"cutoff chosen by validation error: {self.chosen_hz:.3g} Hz (default {self.default_hz:.3g} Hz; "
                "held-out NRMSE " + "; ".join(parts) + ")")

    def to_dict(self) -> dict:
        return {"chosen_hz": self.chosen_hz, "default_hz": self.default_hz,
                "candidates_hz": list(self.scores), "held_out_nrmse": list(self.scores.values())}


def select_cutoff(rec: Recording, plant: Plant, options: IdentifyOptions | None = None,
                  factors: Sequence[float] = FACTORS, progress: Callable[[str, float], None] | None = None
                  ) -> CutoffSelection:
    """Choose the low-pass cutoff for identifying ``plant`` from ``rec`` by two-fold held-out torque error
    (:func:`select_auto` with only the cutoff choice; candidates ``factor × default``, below 0.4 fs)."""
    sel = select_auto(rec, plant, options, cutoff=True, friction=False, ridge=False, factors=factors,
                      progress=progress)
    return CutoffSelection(sel.cutoff_hz, sel.default_hz, {c: v for (c, _, _), v in sel.scores.items()})


def aligned(fit: Fit) -> Fit:
    """``fit`` with the torque/kinematics delay estimated after a first fit and, if it is at least half a
    sample (``MIN_DELAY_SAMPLES``), the torque shifted and fitted again (``IdentifyOptions.align_torque``)."""

    def fit_aligned(rec: Recording, plant: Plant, options: IdentifyOptions, progress=None) -> Identification:
        first = fit(rec, plant, replace(options, align_torque=False))
        delay, _ = estimate_delay(first)
        if abs(delay) < MIN_DELAY_SAMPLES * first.cond.sample_period_s:
            return first
        copt = replace(options.conditioning, torque_delay_s=options.conditioning.torque_delay_s + delay)
        return fit(rec, plant, replace(options, conditioning=copt, align_torque=False), progress=progress)

    return fit_aligned


# ------------------------------------------------------------------------------ the joint choice

SELECTION_SAMPLES = 2500
"""At most this many (decimated) samples score the candidates of :func:`select_auto`."""


def selection_rows(cond: Conditioned, options: IdentifyOptions) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``cond`` that score the candidates, and their positions in the recording (0..1).

    At most about ``SELECTION_SAMPLES``: the fit's rows (every k-th at the band's stride,
    :func:`~dynid.identification.regression.default_decimation`) where there are no more; otherwise one row at a
    random place in each of ``SELECTION_SAMPLES`` equal stretches (seeded: the same rows every run). A fixed stride
    longer than the band's can land on a multiple of a periodic motion's period and score every candidate on a few
    phases of the motion; random places within the stretches cannot lock onto any period."""
    N = cond.data_length
    k = options.decimate or default_decimation(cond)
    if -(-N // k) <= SELECTION_SAMPLES:
        idx = np.arange(0, N, k)
    else:
        edges = np.linspace(0.0, N, SELECTION_SAMPLES + 1)
        u = np.random.default_rng(options.seed).uniform(size=SELECTION_SAMPLES)
        idx = np.unique(np.minimum((edges[:-1] + u * np.diff(edges)).astype(np.int64), N - 1))
    return idx, idx / max(N, 1)


@dataclass(frozen=True)
class CandidateData:
    """What :func:`select_auto` scores the candidates on: the recording's ``sample_period`` [s] and default cutoff
    ``default_hz``, ``condition(fc, pool)`` — the recording conditioned at cutoff ``fc`` (None where it cannot be;
    ``pool`` an idle worker for half of it) — and ``rows(cond)`` — the scoring rows of that and their positions in
    the recording (:func:`selection_rows`). :func:`recording_candidates` makes it for a recording in memory; a
    recording read in blocks gives the rows it kept."""

    sample_period: float
    default_hz: float
    condition: Callable
    rows: Callable


def candidate_cutoffs(default_hz: float, dt: float, copt, factors: Sequence[float] | None = FACTORS) -> list[float]:
    """The cutoffs :func:`select_auto` scores: ``factor × default`` below softMC's 125 Hz and 0.4 fs, and the default
    (``factors`` None: no choice — the options' cutoff, else the default)."""
    if factors is None:
        return [copt.cutoff_hz if copt.cutoff_hz is not None else default_hz]
    top = min(MAX_CUTOFF_SHARE * copt.max_cutoff_hz, 0.4 / dt)         # softMC's rule: below 125 Hz
    return sorted({float(f * default_hz) for f in factors if 0 < f * default_hz <= top} | {default_hz})


def recording_candidates(rec: Recording, plant: Plant, options: IdentifyOptions) -> CandidateData:
    """:class:`CandidateData` of a recording in memory (conditioned whole at each cutoff)."""
    copt = options.conditioning
    dt = rec.sample_period

    def conditioned(fc: float, pool=None) -> Conditioned | None:
        opts = replace(options, conditioning=replace(copt, cutoff_hz=fc), align_torque=False)
        try:
            return condition_for(rec, plant, opts, pool=pool)
        except DynidError:
            return None

    return CandidateData(dt, default_cutoff(rec.q, dt, copt), conditioned, lambda cond: selection_rows(cond, options))
RIDGES = (0.0, 0.01, 0.1)
"""Prior-regularisation strengths tried by ``auto`` when the model has a-priori inertias
(:attr:`IdentifyOptions.prior_regularization`)."""


@dataclass(frozen=True)
class AutoSelection:
    """The cutoff, friction model and prior regularisation chosen together by held-out error.

    ``scores``: ``{(cutoff_hz, friction, ridge): held-out NRMSE}`` of every combination tried.
    """

    cutoff_hz: float
    friction: str
    ridge: float
    default_hz: float
    scores: dict
    conditioned: Conditioned | None = field(default=None, repr=False, compare=False)
    """The recording conditioned at the chosen cutoff when the selection has it (the default cutoff's),
    for the final fit to reuse (:func:`~dynid.identification.fit.fit_once` checks its options)."""

    def note(self) -> str:
        best = self.scores.get((self.cutoff_hz, self.friction, self.ridge), float("nan"))
        parts = [f"cutoff {self.cutoff_hz:.3g} Hz (default {self.default_hz:.3g} Hz)", f"friction {self.friction}"]
        if any(r for _, _, r in self.scores):
            parts.append(f"prior regularisation {self.ridge:g}")
        return (f"chosen by held-out error (two folds, {len(self.scores)} combinations): " + ", ".join(parts)
                + f"; held-out NRMSE {100 * best:.3f} %")

    def applied(self, plant: Plant, options: IdentifyOptions) -> tuple[Plant, IdentifyOptions]:
        """``plant`` and ``options`` with the choices made: the cutoff and regularisation fixed, the friction model
        where the plant let the data choose it."""
        options = replace(options, select_cutoff=False, select_regularization=False, prior_regularization=self.ridge,
                          conditioning=replace(options.conditioning, cutoff_hz=self.cutoff_hz))
        if plant.auto_friction:
            plant = Plant(plant.model.with_config(friction=self.friction))
        return plant, options

    def to_dict(self) -> dict:
        return {"cutoff_hz": self.cutoff_hz, "friction": self.friction, "prior_regularization": self.ridge,
                "default_cutoff_hz": self.default_hz,
                "candidates": [{"cutoff_hz": c, "friction": f, "prior_regularization": r, "held_out_nrmse": v}
                               for (c, f, r), v in self.scores.items()]}


def _solve_gram(G: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``G x = h`` for small symmetric positive semi-definite ``G`` ``(..., p, p)``, ``h`` ``(..., p)`` (unit-diagonal
    scaling, a tiny jitter for the directions the data do not see: those get the minimum-norm-like value, which
    predicts alike)."""
    d = np.sqrt(np.maximum(np.diagonal(G, axis1=-2, axis2=-1), 0.0))
    d = np.where(d == 0, 1.0, d)
    Gs = G / (d[..., :, None] * d[..., None, :])
    k = np.arange(G.shape[-1])
    Gs[..., k, k] += 1e-10
    return np.linalg.solve(Gs, (h / d)[..., None])[..., 0] / d


def _specs(plant: Plant, friction: bool, candidates: Sequence[str] | None) -> tuple[str, ...]:
    """The friction models :func:`select_auto` compares (the plant's own where it chooses none)."""
    if not friction:
        return (plant.friction.spec,)
    return candidates_for(plant.model) if candidates is None else tuple(candidates)


def _known(plant: Plant) -> dict[int, float]:
    """The plant's known (held) model parameters, by index."""
    return {i: v for i, v in known_parameters(plant).items() if i < plant.model.n_params}


def _analyse(first: Plant, options: IdentifyOptions):
    """The structural base parameters :func:`select_auto` works with (remembered: see :func:`analyse_ahead`)."""
    return structural_base(first, n_states=options.structural_states, seed=options.seed, exclude=list(_known(first)))


def analyse_ahead(plant: Plant, options: IdentifyOptions | None = None) -> None:
    """Start, on a second thread, the structural analysis :func:`select_auto` will ask for — it depends on the
    model only — so that it runs while the recording is read (with more than one thread allowed; the selection
    then finds it done or under way: :func:`~dynid.identification.base_params.structural_base` remembers it)."""
    options = options if options is not None else IdentifyOptions()
    if num_threads() < 2:
        return

    def work() -> None:
        _analyse(Plant(plant.model.with_config(friction=_specs(plant, plant.auto_friction, None)[0])), options)

    in_background(work)


def select_auto(rec: Recording | None, plant: Plant, options: IdentifyOptions | None = None, *, cutoff: bool = True,
                friction: bool = True, ridge: bool = True, factors: Sequence[float] = FACTORS,
                candidates: Sequence[str] | None = None,
                progress: Callable[[str, float], None] | None = None,
                data: CandidateData | None = None) -> AutoSelection:
    """Choose the cutoff, the friction model and the prior regularisation together, fast.

    Every combination is scored as :func:`select_friction` and :func:`select_cutoff` score theirs — two
    folds (fit on the first 70 % / hold out the last 30 %, and the reverse), held-out torque NRMSE against
    the raw measured torque, averaged over joints and folds — but without refitting from scratch: per
    cutoff the recording is conditioned once and the regressor evaluated once on the decimated samples
    (the rigid-body base columns and the union of the candidates' friction columns); per time block and
    joint its Gram matrices are summed, and each candidate's weighted (and regularised) least squares and
    its held-out error come from those small matrices. The choice: among the combinations within
    ``MIN_GAIN`` (2 %) of the best score, the fewest friction parameters, then the default cutoff, then no
    regularisation, then the lowest score; another cutoff only where it beats the default's best by
    ``CUTOFF_GAIN`` (5 %).

    ``cutoff``/``friction``/``ridge``: which choices to make (the others stay as ``options``/``plant`` say).
    ``data``: what to score on (:class:`CandidateData`; default: ``rec`` conditioned at each cutoff).
    """
    options = options if options is not None else IdentifyOptions()
    model = plant.model
    step = progress or (lambda stage, frac: None)
    copt = options.conditioning
    specs = _specs(plant, friction, candidates)
    first = Plant(model.with_config(friction=specs[0]))
    data = data if data is not None else recording_candidates(rec, first, options)
    dt, default_hz = data.sample_period, data.default_hz
    cutoffs = candidate_cutoffs(default_hz, dt, copt, factors if cutoff else None)
    prior = model.prior_parameters()
    ridges = RIDGES if ridge and prior is not None else (options.prior_regularization,)
    conditioned = data.condition

    # the conditionings are the bulk of the work: with two threads, the nearest other cutoff (the step up) is
    # conditioned and scored on a second one, started now, while this thread prepares, conditions the default and
    # scores it; the walk then knows where to go, and each further cutoff it needs is conditioned on both threads
    # (the torque's filter and the stick detection on the second) and scored here — nothing is conditioned in vain
    home = default_hz if default_hz in cutoffs else cutoffs[0]
    i0 = cutoffs.index(home)
    up, down = cutoffs[i0 + 1:], cutoffs[:i0][::-1]
    ahead = ThreadPoolExecutor(1) if num_threads() > 1 and len(cutoffs) > 1 else None
    pending: dict[float, Future] = {}
    nearest = (up or down)[0] if ahead is not None else None    # (with two threads, there are other cutoffs)
    if ahead is not None:
        pending[nearest] = ahead.submit(conditioned, nearest)
    try:
        plants = {s: first if s == specs[0] else Plant(model.with_config(friction=s)) for s in specs}
        # the rigid-body base columns (friction never merges into them except an armature about a base axis,
        # which the small solves absorb), the known parameters, the prior's base values
        known = _known(first)
        base = _analyse(first, options)
        rb = np.array([i for i in base.independent if i < model.n_params], dtype=int)
        hold = np.zeros(first.n_params)
        for i, v in known.items():
            hold[i] = v
        if prior is not None:
            for i in range(model.n_params):
                if i not in known:
                    hold[i] = prior[i]
        groups = model.link_parameter_groups()
        linked = np.concatenate(groups) if groups else np.arange(model.n_params)
        base_prior = base.base_values(hold)[: rb.size] if prior is not None else np.zeros(rb.size)
        ridge_mask = np.isin(rb, linked) if prior is not None else np.zeros(rb.size, bool)
        names: list[str] = []                                   # the union of the candidates' friction columns
        cols_of: dict[str, list[int]] = {}
        for s, p in plants.items():
            cols_of[s] = []
            for nm in p.friction.param_names:
                if nm not in names:
                    names.append(nm)
                cols_of[s].append(rb.size + names.index(nm))
        P = rb.size + len(names)
        # the union's columns from as few candidates as cover it (greedy: most new columns first; a term's column does
        # not depend on the model's other terms): usually two, the richest model and one with coulomb_asym
        cover: list[tuple[str, list[int], list[int]]] = []          # (spec, its column positions, union positions)
        missing = set(names)
        while missing:
            s = max(specs, key=lambda c: len(missing & set(plants[c].friction.param_names)))
            own = plants[s].friction.param_names
            new = [k for k, nm in enumerate(own) if nm in missing]
            cover.append((s, new, [names.index(own[k]) for k in new]))
            missing -= {own[k] for k in new}
        known_vec = np.zeros(model.n_params)
        for i, v in known.items():
            known_vec[i] = v
        in_spec = np.zeros((len(specs), P), bool)                  # each candidate's columns of the union
        in_spec[:, : rb.size] = True
        for i, s in enumerate(specs):
            in_spec[i, cols_of[s]] = True
        G_fold_mask = (in_spec[:, :, None] & in_spec[:, None, :]).astype(float)
        ridge_cols = np.zeros(P)                                   # the columns the ridge pulls toward the prior
        ridge_cols[: rb.size] = ridge_mask
        target = np.zeros(P)
        target[: rb.size] = base_prior
        scores: dict[tuple[float, str, float], float] = {}

        # per joint, the union's friction columns that can be nonzero in its row: (cover entry, parameter of that
        # entry's model) by union position; with coupled motors (columns in every row) all of them
        compact = all(plants[s].friction.n_motor_params == 0 for s, _, _ in cover)
        by_joint: list[list[tuple[int, int, int]]] = [[] for _ in range(model.n_joints)]   # (union position, entry,
        for e, (s, own, union) in enumerate(cover):                                        # term of the joint)
            k = plants[s].friction.n_per_joint
            for p, u in zip(own, union):
                by_joint[p // k if compact else 0].append((u, e, p % k if compact else p))
        for entries in by_joint:
            entries.sort()

        def friction_columns(both, M: int, n: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
            """Per joint: the union positions of its friction columns that are not all zero, and those columns with
            the fit's sign and with the evaluation's ``(M, k)`` (``both``: the fit's rows, then the evaluation's)."""
            out = []
            if compact:                                  # block-diagonal: each joint's own few columns, compactly
                blocks = [plants[s].friction.joint_columns(*both[:2], plants[s].friction.split_signs(both[2])[0])
                          for s, _, _ in cover]
                for j in range(n):
                    X = np.stack([blocks[e][:, j, i] for _, e, i in by_joint[j]], axis=1) \
                        if by_joint[j] else np.zeros((2 * M, 0))
                    out.append((np.array([u for u, _, _ in by_joint[j]], dtype=int), X[:M], X[M:]))
            else:
                F = np.empty((2 * M, n, P - rb.size))
                for s, own, union in cover:                             # (one call for both signs)
                    F[..., union] = plants[s].friction.columns(*both)[..., own]
                out = [(np.arange(P - rb.size), F[:M, j], F[M:, j]) for j in range(n)]
            for j, (u, A, E) in enumerate(out):                         # columns all zero in this joint's rows
                keep = np.any(A != 0, axis=0) | np.any(E != 0, axis=0)
                out[j] = (u[keep], A[:, keep], E[:, keep])
            return out

        def score_at(fc: float, cond: Conditioned | None) -> dict[tuple[float, str, float], float]:
            """The score of every combination at cutoff ``fc`` on ``cond`` (none where it could not be conditioned);
            reads only what is prepared above (either thread)."""
            out: dict[tuple[float, str, float], float] = {}
            if cond is None:
                return out
            # scored on a subsample: the fold fits estimate a few dozen parameters, a few thousand states do
            idx, pos = data.rows(cond)
            q, qd, qdd = cond.q[idx], cond.qd[idx], cond.qdd[idx]
            Ym = model.regressor(q, qd, qdd)
            M, n = q.shape
            off = model.offset(q, qd, qdd) + Ym @ known_vec
            # the held-out rows are scored as dynid predict evaluates them: the Coulomb step at sign(qd) where the
            # velocity is known (the fit's smoothed sign would blur every reversal and favour high cutoffs)
            sign_fit = cond.sign[idx]
            sign_eval = sign_fit.copy()
            known_v = (SIGN_NOISE_FACTOR * cond.velocity_noise if cond.velocity_noise is not None
                       else cond.velocity_threshold)
            exact = np.where(np.abs(qd) > known_v, np.sign(qd), 0.0)
            if cond.near_stuck is not None:
                exact = np.where(cond.near_stuck[idx], sign_fit[:, :n], exact)
            sign_eval[:, :n] = exact
            # the fit rows A = [rigid-body base columns | friction columns with the fit's sign] and the evaluation rows
            # E = [the same | with the evaluation's sign], built per joint below
            both = (np.concatenate([qd, qd]), np.concatenate([qdd, qdd]), np.concatenate([sign_fit, sign_eval]))
            fric_cols = friction_columns(both, M, n)
            del both
            y_fit = cond.tau[idx] - off
            y_raw = cond.tau_raw[idx] - off
            moving = cond.moving[idx]
            blocks = np.digitize(pos, [1 - FIT_SHARE, FIT_SHARE])          # 0: first 30 %, 1: middle, 2: last 30 %
            in_block = [blocks == b for b in range(3)]
            G_fit = np.zeros((3, n, P, P))
            h_fit = np.zeros((3, n, P))
            yy_fit = np.zeros((3, n))
            n_fit = np.zeros((3, n))
            G_all = np.zeros((3, n, P, P))
            h_all = np.zeros((3, n, P))
            yy_all = np.zeros((3, n))
            tt_all = np.zeros((3, n))
            n_all = np.zeros((3, n))
            tau_raw = cond.tau_raw[idx]
            # a joint's rows touch only some columns (not the links before it, not the other joints' friction): its
            # Gram matrices are built on those, the rest are zeros anyway
            rigid_of = np.count_nonzero(Ym, axis=0)[:, rb] > 0           # (n, rigid columns)
            for j in range(n):                                              # per joint and time block: BLAS products
                rigid = np.nonzero(rigid_of[j])[0]
                Yj = Ym[:, j][:, rb[rigid]]                                 # (its base columns it touches)
                fric, Fj_fit, Fj_eval = fric_cols[j]
                c = np.concatenate([rigid, rb.size + fric])
                cc = np.ix_(c, c)
                Aj = np.concatenate([Yj, Fj_fit], axis=1)
                Ej_all = np.concatenate([Yj, Fj_eval], axis=1)
                for b in range(3):
                    rows = in_block[b]
                    m = moving[rows, j]
                    Am = Aj[rows & moving[:, j]]
                    G_fit[b, j][cc], h_fit[b, j, c] = Am.T @ Am, Am.T @ y_fit[rows, j][m]
                    yy_fit[b, j], n_fit[b, j] = y_fit[rows, j][m] @ y_fit[rows, j][m], m.sum()
                    Ej = Ej_all[rows]
                    G_all[b, j][cc], h_all[b, j, c] = Ej.T @ Ej, Ej.T @ y_raw[rows, j]
                    yy_all[b, j], n_all[b, j] = y_raw[rows, j] @ y_raw[rows, j], rows.sum()
                    tt_all[b, j] = tau_raw[rows, j] @ tau_raw[rows, j]
            del Ym, fric_cols
            folds = (((0, 1), 2), ((1, 2), 0))
            G_fold = [G_fit[list(b)].sum(axis=0) for b, _ in folds]            # (n, P, P) per fold
            h_fold = [h_fit[list(b)].sum(axis=0) for b, _ in folds]
            yy_fold = [yy_fit[list(b)].sum(axis=0) for b, _ in folds]
            n_fold = [np.maximum(n_fit[list(b)].sum(axis=0), 1) for b, _ in folds]
            rms_held = [np.sqrt(tt_all[h] / np.maximum(n_all[h], 1)) for _, h in folds]
            # every candidate at once: its columns of the union selected (the others zero: decoupled in the small
            # solves, they come out 0 and add nothing), per fold the weights, then each ridge
            G_sel = G_fold_mask[:, None]                                       # (specs, 1, P, P)
            h_sel = in_spec[:, None].astype(float)
            errs = np.zeros((len(specs), len(ridges), len(folds)))
            for f, (_, held) in enumerate(folds):
                Gj = G_fold[f][None] * G_sel                                    # (specs, n, P, P)
                hj = h_fold[f][None] * h_sel                                    # (specs, n, P)
                w = np.ones((len(specs), n))
                if options.weighting == "residual_std" and n > 1 and options.estimator != "ols":
                    x0 = _solve_gram(Gj.sum(axis=1), hj.sum(axis=1))            # (specs, P)
                    res = yy_fold[f] - 2 * np.einsum("sjp,sp->sj", hj, x0) + np.einsum("sp,sjpq,sq->sj", x0, Gj, x0)
                    sd = np.sqrt(np.maximum(res, 0) / n_fold[f])
                    w = 1.0 / np.maximum(sd, 1e-6 * np.maximum(sd.max(axis=1, keepdims=True), 1e-300))
                    w /= w.max(axis=1, keepdims=True)
                elif options.weighting == "torque_std" and n > 1:
                    sd = np.sqrt(yy_fold[f] / n_fold[f])
                    w = np.broadcast_to(1.0 / np.where(sd > 0, sd, 1.0), (len(specs), n)).copy()
                    w /= w.max(axis=1, keepdims=True)
                G0 = np.einsum("sj,sjpq->spq", w**2, Gj)
                h0 = np.einsum("sj,sjp->sp", w**2, hj)
                Gh, hh = G_all[held][None] * G_sel, h_all[held][None] * h_sel
                rms = rms_held[f]
                ok = rms > 0
                d = np.sqrt(np.maximum(np.diagonal(G0, axis1=1, axis2=2), 1e-300))   # (specs, P)
                G = np.repeat(G0[:, None], len(ridges), axis=1)                # (specs, ridges, P, P)
                h = np.repeat(h0[:, None], len(ridges), axis=1)
                if any(r > 0 for r in ridges):
                    top = np.linalg.eigvalsh(G0 / (d[:, :, None] * d[:, None, :]))[:, -1]
                    on_diag = np.arange(P)
                    for i, r in enumerate(ridges):
                        if r > 0:
                            lam2 = (r**2 * top)[:, None] * d**2 * ridge_cols            # (specs, P)
                            G[:, i, on_diag, on_diag] += lam2
                            h[:, i] = h0 + lam2 * target
                x = _solve_gram(G, h)                                           # (specs, ridges, P)
                sse = (yy_all[held] - 2 * np.einsum("srp,sjp->srj", x, hh)
                       + np.einsum("srp,sjpq,srq->srj", x, Gh, x))
                # relative to the held-out torque; no joint with torque held out: nothing to score against (not 0/0)
                errs[..., f] = (np.mean(np.sqrt(np.maximum(sse[..., ok], 0) / n_all[held][ok]) / rms[ok], axis=-1)
                                if ok.any() else np.inf)
            for i, s in enumerate(specs):
                for j, r in enumerate(ridges):
                    v = float(np.mean(errs[i, j]))
                    out[(float(fc), s, float(r))] = v if v == v else np.inf     # NaN: unscorable, never 'best'
            return out

        if ahead is not None:                       # the nearest cutoff scored where it is conditioned
            at_nearest = pending.pop(nearest)
            pending[nearest] = ahead.submit(lambda: (at_nearest.result(), score_at(nearest, at_nearest.result())))

        def score(fc: float) -> Conditioned | None:
            """Score every combination at cutoff ``fc`` (into ``scores``); the conditioned recording."""
            step(f"choosing: cutoff {fc:.3g} Hz", 0.3 * len({c for c, _, _ in scores}) / max(len(cutoffs) - 1, 1))
            job = pending.pop(fc, None)
            if job is not None:
                cond, found = job.result()
            else:                                   # split over both threads once the second is free
                cond = conditioned(fc, None if pending else ahead)
                found = score_at(fc, cond)
            scores.update(found)
            return cond

        # the cutoffs, walked from the default: up while the best score improves, else down while it improves — the
        # held-out error is unimodal in the cutoff (distortion below the optimum, noise above), so the skipped
        # candidates could not have won; typically 3 of the 4 conditionings
        def best_at(fc: float) -> float:
            return min((v for (c, _, _), v in scores.items() if c == fc), default=np.inf)

        kept = score(home)
        for direction in (up, down):
            prev, moved = best_at(home), False
            for fc in direction:
                score(fc)
                if not best_at(fc) < prev:
                    break
                prev, moved = best_at(fc), True
            if moved:
                break
        if not scores:
            return AutoSelection(float(cutoffs[0]), specs[0], float(ridges[0]), float(default_hz), {})
        # another cutoff than the default must be clearly better (the scores share the recording's noise, but a
        # few per cent between cutoffs is within what a different subsample gives)
        at_default = [v for (fc, _, _), v in scores.items() if fc == default_hz]
        bar = (1.0 - CUTOFF_GAIN) * min(at_default) if at_default else np.inf
        allowed = {key: v for key, v in scores.items() if key[0] == default_hz or v < bar} or scores
        best = min(allowed.values())
        size = {s: plants[s].friction.n_params for s in specs}
        near = [(size[s], fc != default_hz, r != 0.0, v, fc, s, r) for (fc, s, r), v in allowed.items()
                if v <= (1.0 + MIN_GAIN) * best]
        *_, fc, s, r = min(near)
        return AutoSelection(float(fc), s, float(r), float(default_hz), scores, kept if fc == home else None)
    finally:
        if ahead is not None:
            for job in pending.values():
                job.cancel()
            ahead.shutdown(wait=True)
