"""softMC SineWave excitation: plan, repetition analysis, rating and frequency choice (spec/identification.md §2).

Motion (softMC ``SineWave`` after ``Move startPoint``): each joint oscillates between start and
target, ``q_j(t) = c_j - A_j cos(2 pi f_j t)`` with ``c = (start + target)/2``, ``A = (target - start)/2``;
frequencies are in Hz (the spec's documented choice). Peak velocity ``|A_j| 2 pi f_j``, peak
acceleration ``|A_j| (2 pi f_j)^2``; ``f_j · record_s`` cycles per joint are recorded.

Repetition analysis
-------------------
Frequencies are read as the nearest rationals ``p/q`` with ``q <= MAX_DENOMINATOR`` (10^6) that match
within ``RATIONAL_RTOL`` (1e-9, relative): decimals as typed are exact, and products such as
``0.3*1.27`` (0.38100000000000006 in floating point) are read as the decimal meant (381/1000). An
irrational ratio is read as a rational with a large denominator, i.e. a repeat period far beyond any
record; a frequency with no rational within the tolerance makes the set incommensurate (never repeats). The joint pattern repeats after
``T_rep = 1/gcd(f_1, .., f_n)``; joint j makes ``f_j T_rep`` cycles before it does. Each pair repeats
after ``1/gcd(f_i, f_j)``, i.e. after ``min(f_i, f_j)/gcd`` cycles of its slower joint.

Rating rule (reproduces the source's table: {1, 2, 1.2} bad, {1, 1.2, 1.2} medium, {1.1, 1.3, 1.5} good)
-----------------------------------------------------------------------------------------------------
*bad* if any of
  - all joints share one frequency (n >= 2), or a joint does not move (start = target);
  - a pair of different frequencies repeats within fewer than ``BAD_PAIR_CYCLES`` (3) cycles of its
    slower joint (integer ratios 1:2, 1:3, ... and 2:3, 2:5, ...): the same as recording < 3 cycles
    for that pair;
  - a joint makes fewer than ``min_cycles`` (3) cycles in the record;
  - (when limits are given) a peak velocity, acceleration or torque exceeds its limit.
*medium* otherwise, if any of
  - two joints have the same frequency: "always in phase". "The same" includes frequencies whose
    phase drifts apart by less than ``SAME_DRIFT_CYCLES`` (0.05 cycle) over the whole record;
  - a pair repeats within fewer than ``GOOD_PAIR_CYCLES`` (10) cycles of its slower joint.
*good* otherwise (the source's good set repeats only after 11, 13 and 15 cycles).

The rating is the frequency set's (as the source's table): a pattern that repeats several times within
a long record is noted (``notes``), not downgraded. Pairs whose phases drift apart by less than half a
cycle in the record are noted as "nearly in phase".

Identifiability (:func:`rate_plan` with ``identifiability=``, i.e. ``dynid excite --model``): a plan that
leaves base parameters confounded or not excited (:func:`~dynid.excite.identifiability.confounded_groups`:
a direction of the unit-column observation matrix with singular value < 1e-3 × the largest) is *bad*
whatever its frequencies, and each group is a reason naming its parameters, the combinations the
motion does determine and what would separate them ("a second frequency on joint 1 ..."). *good*
therefore requires every base parameter to be identifiable from the planned motion; poorly excited
parameters (expected relative std > 30 %) are reported beside the rating, not in it.

Frequency choice (the source's recipe: pick amplitudes, base ratios, scale all by one factor)
--------------------------------------------------------------------------------------------
:func:`choose_frequencies` targets ``f*_j = fraction · v_max,j / (2 pi A_j)`` (and the acceleration
limit if given), takes ``factor`` = the slowest ``f*`` (3 significant digits) and, from the fastest
joint down, the largest two-decimal base ratio ``b_j <= f*_j / factor`` that keeps every pair at
>= 10 cycles before repeating, at least ``CHOOSER_MIN_DRIFT`` (0.1) cycle of phase drift in the record,
>= ``min_cycles`` cycles per joint, and the whole set not repeating within the record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import reduce
from typing import Sequence

import numpy as np

from ..errors import ConfigError, ShapeError
from ..sim.motion import SineMotion
from .identifiability import Confounding, Identifiability
from .limits import JointLimits
from ..units import ROTARY, force_unit, kind_of_position_unit, position_unit

__all__ = [
    "SinePlan", "plan_sine", "Repetition", "PairRepetition", "analyse_repetition", "Rating", "rate_frequencies",
    "rate_plan", "with_identifiability", "FrequencyChoice", "choose_frequencies", "MAX_DENOMINATOR", "RATIONAL_RTOL",
    "BAD_PAIR_CYCLES", "GOOD_PAIR_CYCLES", "SAME_DRIFT_CYCLES", "MIN_CYCLES", "DEFAULT_RECORD_S", "DEFAULT_SETTLE_S",
]

MAX_DENOMINATOR = 1_000_000
RATIONAL_RTOL = 1e-9
BAD_PAIR_CYCLES = 3
GOOD_PAIR_CYCLES = 10
SAME_DRIFT_CYCLES = 0.05
NEAR_DRIFT_CYCLES = 0.5
CHOOSER_MIN_DRIFT = 0.1
MIN_CYCLES = 3.0
DEFAULT_RECORD_S = 20.0
"""The source's ``sleep 20000`` between IdentificationStart and IdentificationFinish."""
DEFAULT_SETTLE_S = 2.0
"""The source's ``sleep 2000`` after SineWave starts."""


# ------------------------------------------------------------------------------------------ plan

@dataclass(frozen=True)
class SinePlan:
    """A softMC SineWave identification motion (SI units).

    Attributes
    ----------
    start, target : ndarray, shape (n_joints,)
        ``Move startPoint`` and ``SineWave sineTarget`` [rad or m].
    freqs_hz : ndarray, shape (n_joints,)
        ``SineWaveFreq`` per joint [Hz] (= ``factor * base``).
    record_s : float
        Recording time [s] (``sleep`` between IdentificationStart and IdentificationFinish).
    settle_s : float
        Motion before the recording starts [s].
    factor : float
        The speed factor the frequencies were scaled by (1 when given directly).
    """

    start: np.ndarray
    target: np.ndarray
    freqs_hz: np.ndarray
    record_s: float = DEFAULT_RECORD_S
    settle_s: float = DEFAULT_SETTLE_S
    factor: float = 1.0

    def __post_init__(self) -> None:
        start = np.array(self.start, dtype=float).ravel()
        n = start.size
        arrays = {"start": start}
        for name in ("target", "freqs_hz"):
            a = np.array(getattr(self, name), dtype=float).ravel()
            if a.size != n:
                raise ShapeError(f"{name} has {a.size} values but start has {n} (one per joint)")
            arrays[name] = a
        for name, a in arrays.items():
            if not np.all(np.isfinite(a)):
                raise ConfigError(f"{name} must be finite numbers, got {a.tolist()}")
            a.flags.writeable = False
            object.__setattr__(self, name, a)
        if np.any(self.freqs_hz <= 0):
            raise ConfigError(f"sine frequencies must be positive [Hz], got {self.freqs_hz.tolist()}")
        if not (math.isfinite(self.record_s) and self.record_s > 0):
            raise ConfigError(f"record time must be positive [s], got {self.record_s}")
        if not (math.isfinite(self.settle_s) and self.settle_s >= 0):
            raise ConfigError(f"settle time must be >= 0 [s], got {self.settle_s}")
        if not (math.isfinite(self.factor) and self.factor > 0):
            raise ConfigError(f"factor must be positive, got {self.factor}")

    @property
    def n_joints(self) -> int:
        return int(self.start.size)

    @property
    def base(self) -> np.ndarray:
        """Base ratios ``freqs_hz / factor`` ``(n_joints,)``."""
        return self.freqs_hz / self.factor

    @property
    def center(self) -> np.ndarray:
        return 0.5 * (self.start + self.target)

    @property
    def amplitude(self) -> np.ndarray:
        """``(target - start)/2`` ``(n_joints,)`` [rad or m] (signed)."""
        return 0.5 * (self.target - self.start)

    @property
    def peak_velocity(self) -> np.ndarray:
        """``|A| 2 pi f`` ``(n_joints,)`` [rad/s or m/s]."""
        return np.abs(self.amplitude) * 2 * np.pi * self.freqs_hz

    @property
    def peak_acceleration(self) -> np.ndarray:
        """``|A| (2 pi f)^2`` ``(n_joints,)`` [rad/s² or m/s²]."""
        return np.abs(self.amplitude) * (2 * np.pi * self.freqs_hz) ** 2

    @property
    def cycles(self) -> np.ndarray:
        """Cycles per joint in the record ``(n_joints,)``."""
        return self.freqs_hz * self.record_s

    def motion(self) -> SineMotion:
        """The simulator's :class:`~dynid.sim.SineMotion` for this plan."""
        return SineMotion(self.start, self.target, self.freqs_hz, record_s=self.record_s, settle_s=self.settle_s)

    def sample(self, dt: float, *, include_settle: bool = False):
        """Commanded ``(t, q, qd, qdd)`` on a grid of spacing ``dt`` [s].

        ``t`` ``(N,)`` counts from the start of the recording (``include_settle=False``, the default: the
        window the identification sees) or from the start of the SineWave.
        """
        if not dt > 0:
            raise ConfigError(f"dt must be positive, got {dt}")
        t0 = 0.0 if include_settle else self.settle_s
        span = self.record_s + (self.settle_s if include_settle else 0.0)
        t = np.arange(int(math.floor(span / dt + 1e-9)) + 1) * dt
        q, qd, qdd = self.motion().command(t + t0)
        return t, q, qd, qdd


def plan_sine(start, target, freqs_hz, *, factor: float = 1.0, record_s: float = DEFAULT_RECORD_S,
              settle_s: float = DEFAULT_SETTLE_S) -> SinePlan:
    """A SineWave plan with ``f = factor · freqs_hz`` (SI positions).

    Parameters
    ----------
    start, target : array-like, shape (n_joints,)
        [rad or m].
    freqs_hz : array-like, shape (n_joints,)
        Base frequencies [Hz] (e.g. ``{1.56, 1, 1.31, ...}``), multiplied by ``factor``.
    factor : float
        Speed factor (the source's ``0.15*{...}``).
    record_s, settle_s : float
        [s].

    Examples
    --------
    >>> p = plan_sine([-1.0, 0.0], [1.0, 0.5], [1.1, 1.3], factor=0.5, record_s=10)
    >>> p.freqs_hz.tolist(), p.cycles.round(2).tolist()
    ([0.55, 0.65], [5.5, 6.5])
    """
    f = np.asarray(freqs_hz, dtype=float) * float(factor)
    return SinePlan(start, target, f, record_s=float(record_s), settle_s=float(settle_s), factor=float(factor))


# ------------------------------------------------------------------------------------ repetition

def _rational(f: float) -> Fraction | None:
    r = Fraction(f).limit_denominator(MAX_DENOMINATOR)
    return r if abs(float(r) - f) <= RATIONAL_RTOL * abs(f) else None


def _gcd(a: Fraction, b: Fraction) -> Fraction:
    return Fraction(math.gcd(a.numerator * b.denominator, b.numerator * a.denominator), a.denominator * b.denominator)


@dataclass(frozen=True)
class PairRepetition:
    """Repetition of one pair of joints.

    joints : (int, int), 1-based ; freqs_hz : (float, float)
    cycles : (int, int) or None — cycles of each joint before the pair pattern repeats (None: never)
    repeat_period_s : float or None
    same : bool — the two frequencies are equal, or drift apart by < ``SAME_DRIFT_CYCLES`` in the record
    drift_cycles : float — ``|f_i - f_j| · record_s``, how far their phases drift apart in the record
    """

    joints: tuple[int, int]
    freqs_hz: tuple[float, float]
    cycles: tuple[int, int] | None
    repeat_period_s: float | None
    same: bool
    drift_cycles: float

    @property
    def slower_cycles(self) -> int | None:
        """Cycles of the slower joint before the pair repeats."""
        return None if self.cycles is None else min(self.cycles)

    @property
    def ratio(self) -> str | None:
        """``"5:6"``: the frequency ratio in lowest terms."""
        return None if self.cycles is None else f"{self.cycles[0]}:{self.cycles[1]}"

    def to_dict(self) -> dict:
        return {"joints": list(self.joints), "freqs_hz": list(self.freqs_hz), "ratio": self.ratio,
                "cycles_to_repeat": None if self.cycles is None else list(self.cycles),
                "repeat_period_s": self.repeat_period_s, "same_frequency": self.same, "drift_cycles": self.drift_cycles}


@dataclass(frozen=True)
class Repetition:
    """When the joint pattern of a frequency set repeats.

    freqs_hz : (n,) ; record_s : float
    repeat_period_s : float or None — ``1/gcd`` of all frequencies (None: incommensurate, never repeats)
    cycles_to_repeat : tuple of int or None — cycles of each joint within one repeat period
    cycles : (n,) — cycles of each joint in the record
    pairs : tuple of PairRepetition, every pair i < j
    """

    freqs_hz: np.ndarray
    record_s: float
    repeat_period_s: float | None
    cycles_to_repeat: tuple[int, ...] | None
    cycles: np.ndarray
    pairs: tuple[PairRepetition, ...]

    @property
    def repeats_in_record(self) -> float:
        """How many times the whole pattern repeats within the record (0 if it never does)."""
        return 0.0 if self.repeat_period_s is None else self.record_s / self.repeat_period_s


def analyse_repetition(freqs_hz, record_s: float = DEFAULT_RECORD_S) -> Repetition:
    """Repetition periods of a frequency set and of every pair of joints (see the module docstring).

    Parameters
    ----------
    freqs_hz : array-like, shape (n_joints,)
        [Hz], positive.
    record_s : float
        Recording time [s].

    Examples
    --------
    >>> r = analyse_repetition([1.1, 1.3, 1.5], record_s=20)
    >>> r.repeat_period_s, r.cycles_to_repeat
    (10.0, (11, 13, 15))
    """
    f = np.array(freqs_hz, dtype=float).ravel()
    if f.size == 0 or np.any(~np.isfinite(f)) or np.any(f <= 0):
        raise ConfigError(f"frequencies must be positive numbers [Hz], got {f.tolist()}")
    if not record_s > 0:
        raise ConfigError(f"record time must be positive [s], got {record_s}")
    rats = [_rational(float(x)) for x in f]
    if all(r is not None for r in rats):
        g = reduce(_gcd, rats)
        t_rep: float | None = float(1 / g)
        cyc: tuple[int, ...] | None = tuple(int(r / g) for r in rats)
    else:
        t_rep, cyc = None, None
    pairs = []
    for i in range(f.size):
        for j in range(i + 1, f.size):
            drift = abs(f[i] - f[j]) * record_s
            ri, rj = rats[i], rats[j]
            if ri is not None and rj is not None:
                gp = _gcd(ri, rj)
                pc: tuple[int, int] | None = (int(ri / gp), int(rj / gp))
                pt: float | None = float(1 / gp)
            else:
                pc, pt = None, None
            same = (ri is not None and ri == rj) or drift < SAME_DRIFT_CYCLES
            pairs.append(PairRepetition((i + 1, j + 1), (float(f[i]), float(f[j])), pc, pt, bool(same), float(drift)))
    return Repetition(f, float(record_s), t_rep, cyc, f * record_s, tuple(pairs))


# ---------------------------------------------------------------------------------------- rating

RATINGS = ("bad", "medium", "good")


@dataclass(frozen=True)
class Rating:
    """Verdict on an excitation: ``rating`` in ``("bad", "medium", "good")``, the ``reasons`` for it
    (the worst findings, or what makes it good) and informational ``notes``; ``confounded``: the
    parameter groups the motion cannot separate (``None``: identifiability not analysed, no model)."""

    rating: str
    reasons: tuple[str, ...]
    notes: tuple[str, ...]
    repetition: Repetition
    confounded: tuple[Confounding, ...] | None = None

    def to_dict(self) -> dict:
        r = self.repetition
        return {"rating": self.rating, "reasons": list(self.reasons), "notes": list(self.notes),
                "confounded": None if self.confounded is None else [c.to_dict() for c in self.confounded],
                "repeat_period_s": r.repeat_period_s,
                "cycles_to_repeat": None if r.cycles_to_repeat is None else list(r.cycles_to_repeat),
                "repeats_in_record": r.repeats_in_record, "cycles": [float(f"{c:.12g}") for c in r.cycles],
                "record_s": r.record_s, "freqs_hz": [float(x) for x in r.freqs_hz],
                "pairs": [p.to_dict() for p in r.pairs]}


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _plural(n: int | float, word: str) -> str:
    return f"{_fmt(n) if isinstance(n, float) else n} {word}{'' if n == 1 else 's'}"


def rate_frequencies(freqs_hz, record_s: float = DEFAULT_RECORD_S, *, min_cycles: float = MIN_CYCLES,
                     moving: Sequence[bool] | None = None) -> Rating:
    """Rate a SineWave frequency set like the source's table (rule in the module docstring).

    Parameters
    ----------
    freqs_hz : array-like, shape (n_joints,)
        [Hz].
    record_s : float
        Recording time [s].
    min_cycles : float
        Cycles each joint must make in the record (3; semi-static PUMA runs need only 1).
    moving : sequence of bool, optional
        False for a joint whose start equals its target (it does not move at all).

    Returns
    -------
    Rating

    Examples
    --------
    >>> [rate_frequencies(f).rating for f in ([1, 2, 1.2], [1, 1.2, 1.2], [1.1, 1.3, 1.5])]
    ['bad', 'medium', 'good']
    >>> rate_frequencies([1, 1.2, 1.2]).reasons[0]
    'joints 2 and 3 have the same frequency: always in phase'
    """
    rep = analyse_repetition(freqs_hz, record_s)
    n = rep.freqs_hz.size
    bad: list[str] = []
    phase: list[str] = []
    medium: list[str] = []
    notes: list[str] = []
    if moving is not None:
        for j, m in enumerate(moving):
            if not m:
                bad.append(f"joint {j + 1} does not move (start = target)")
    if n >= 2 and all(p.same for p in rep.pairs):
        bad.append("all joints have the same frequency: always in phase, the data is not scattered")
    for p in rep.pairs:
        i, j = p.joints
        if p.same:
            if p.cycles is not None and p.cycles == (1, 1):
                phase.append(f"joints {i} and {j} have the same frequency: always in phase")
            else:
                phase.append(f"joints {i} and {j} have practically the same frequency ({_fmt(p.freqs_hz[0])} and "
                              f"{_fmt(p.freqs_hz[1])} Hz, phases drift only {p.drift_cycles:.3f} cycle in the record): "
                              f"always in phase")
            continue
        if p.cycles is not None:
            ci, cj = p.cycles
            text = (f"joints {i} and {j} (frequency ratio {p.ratio}) repeat after {_plural(ci, 'cycle')} of joint {i} "
                    f"and {_plural(cj, 'cycle')} of joint {j} (every {_fmt(p.repeat_period_s)} s)")
            if min(ci, cj) < BAD_PAIR_CYCLES:
                bad.append(text + ": integer ratio, the pair repeats after few cycles")
            elif min(ci, cj) < GOOD_PAIR_CYCLES:
                medium.append(text)
        if p.drift_cycles < NEAR_DRIFT_CYCLES:
            notes.append(f"joints {i} and {j} ({_fmt(p.freqs_hz[0])} and {_fmt(p.freqs_hz[1])} Hz) drift apart by only "
                         f"{p.drift_cycles:.2f} cycle in the {_fmt(rep.record_s)} s record: nearly in phase")
    for j, c in enumerate(rep.cycles):
        if c < min_cycles:
            bad.append(f"joint {j + 1} makes only {c:.3g} cycles in the {_fmt(rep.record_s)} s record (at least "
                       f"{_fmt(float(min_cycles))} needed): record at least {_fmt(min_cycles / rep.freqs_hz[j])} s")
    if rep.repeat_period_s is not None and rep.repeats_in_record > 1:
        notes.append(f"the whole pattern repeats every {_fmt(rep.repeat_period_s)} s, {rep.repeats_in_record:.3g} times "
                     f"in the {_fmt(rep.record_s)} s record: later repeats add averaging, not new joint combinations")
    medium = phase + medium
    if bad:
        return Rating("bad", tuple(bad + medium), tuple(notes), rep)
    if medium:
        return Rating("medium", tuple(medium), tuple(notes), rep)
    good = ["all frequencies differ" if n > 1 else "a single joint"]
    if n > 1:
        worst = min((p for p in rep.pairs if p.cycles is not None), key=lambda p: p.slower_cycles, default=None)
        if rep.cycles_to_repeat is None:
            good.append("the frequencies are incommensurate: the joint pattern never repeats")
        else:
            good.append("no pair repeats within fewer than " + (f"{worst.slower_cycles}" if worst else "many")
                        + " cycles; the whole set repeats only after "
                        + ", ".join(str(c) for c in rep.cycles_to_repeat)
                        + f" cycles (every {_fmt(rep.repeat_period_s)} s)")
    good.append(f"every joint makes at least {_fmt(float(min_cycles))} cycles in the {_fmt(rep.record_s)} s record ("
                + ", ".join(f"{c:.3g}" for c in rep.cycles) + ")")
    return Rating("good", tuple(good), tuple(notes), rep)


def with_identifiability(rating: Rating, identifiability: Identifiability | None) -> Rating:
    """``rating`` capped by the predicted identifiability: confounded or unexcited base parameters make it
    *bad*, with one reason per confounded group first (unexcited parameters with the same remedy share one)
    and the groups in ``confounded``; unchanged otherwise (``confounded`` then ``()``: analysed, none).

    Parameters
    ----------
    rating : Rating
    identifiability : Identifiability or None
        :func:`~dynid.excite.predict_identifiability` of the same motion (None: returned as is).
    """
    if identifiability is None:
        return rating
    conf = tuple(identifiability.confounded)
    if not conf:
        return Rating(rating.rating, rating.reasons, rating.notes, rating.repetition, ())
    found: list[str | tuple[str, list[str]]] = []
    idle: dict[str, list[str]] = {}              # unexcited parameters with the same remedy: one reason
    for c in conf:
        if not c.not_excited:
            found.append(c.reason)
        elif c.remedy in idle:
            idle[c.remedy].extend(c.parameters)
        else:
            idle[c.remedy] = list(c.parameters)
            found.append((c.remedy, idle[c.remedy]))
    texts = []
    for item in found:
        if isinstance(item, str):
            texts.append(item)
            continue
        remedy, names = item
        who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        texts.append(f"{who} {'is' if len(names) == 1 else 'are'} not excited by this motion (not identifiable)"
                     + (f"; {remedy}" if remedy else ""))
    reasons = tuple(texts) + (rating.reasons if rating.rating != "good" else ())
    return Rating("bad", reasons, rating.notes, rating.repetition, conf)


def rate_plan(plan: SinePlan, limits: JointLimits | None = None, *, min_cycles: float = MIN_CYCLES,
              peak_torque=None, joint_names: Sequence[str] | None = None, units: Sequence[str] | None = None,
              identifiability: Identifiability | None = None) -> Rating:
    """:func:`rate_frequencies` for a plan, plus its peaks against ``limits`` (exceeding one is *bad*) and,
    with ``identifiability``, confounded or unexcited parameters (*bad*, :func:`with_identifiability`).

    Parameters
    ----------
    plan : SinePlan
    limits : JointLimits, optional
    min_cycles : float
    peak_torque : array-like, shape (n_joints,), optional
        Predicted peak torque [N m or N] (checked against ``limits.torque``).
    joint_names : sequence of str, optional
    units : sequence of str, optional
        Position unit per joint for messages (default ``rad``).
    identifiability : Identifiability, optional
        :func:`~dynid.excite.predict_identifiability` of the plan's motion.

    Examples
    --------
    A mass on a spring (``linear3``) moved by one sine: the frequencies alone are fine, but M, K and K*X0
    are confounded (``qdd + g`` is a combination of ``q`` and 1), so the plan is *bad*:

    >>> from dynid.excite import predict_identifiability
    >>> from dynid.models import Plant, make_model
    >>> plan = plan_sine([0.0], [0.1], [1.0])
    >>> rate_plan(plan).rating
    'good'
    >>> _, q, qd, qdd = plan.sample(1e-2)
    >>> r = rate_plan(plan, identifiability=predict_identifiability(Plant(make_model("linear3")), q, qd, qdd,
    ...                                                            record_s=plan.record_s))
    >>> r.rating, r.confounded[0].parameters, r.confounded[0].combinations[0]
    ('bad', ('M', 'K', 'K*X0'), 'K - 39.48*M')
    """
    base = rate_frequencies(plan.freqs_hz, plan.record_s, min_cycles=min_cycles, moving=plan.amplitude != 0)
    if limits is None:
        return with_identifiability(base, identifiability)
    if limits.n_joints != plan.n_joints:
        raise ShapeError(f"limits are for {limits.n_joints} joints, the plan has {plan.n_joints}")
    names = list(joint_names) if joint_names is not None else [f"A{j + 1}" for j in range(plan.n_joints)]
    pu = list(units) if units is not None else [position_unit(ROTARY)] * plan.n_joints
    kinds = [kind_of_position_unit(u) for u in pu]
    bad: list[str] = []
    notes = list(base.notes)
    checks = [("velocity", plan.peak_velocity, limits.velocity, [u + "/s" for u in pu]),
              ("acceleration", plan.peak_acceleration, limits.acceleration, [u + "/s^2" for u in pu])]
    if peak_torque is not None:
        tu = [force_unit(k) for k in kinds]
        checks.append(("torque", np.asarray(peak_torque, dtype=float), limits.torque, tu))
    for kind, peak, lim, un in checks:
        for j in range(plan.n_joints):
            if not np.isfinite(lim[j]):
                continue
            if peak[j] > lim[j]:
                bad.append(f"joint {j + 1} ({names[j]}): peak {kind} {peak[j]:.4g} {un[j]} exceeds its limit {lim[j]:.4g} "
                           f"{un[j]}" + (": the drive saturates" if kind == "torque" else ": lower the factor"))
            elif kind == "velocity" and peak[j] < 0.5 * lim[j]:
                notes.append(f"joint {j + 1} ({names[j]}) reaches only {100 * peak[j] / lim[j]:.0f} % of its velocity limit: "
                             f"a larger factor excites it better")
    for j in range(plan.n_joints):
        lo, hi = limits.lower[j], limits.upper[j]
        a, b = min(plan.start[j], plan.target[j]), max(plan.start[j], plan.target[j])
        if (np.isfinite(lo) and a < lo - 1e-12 * max(1.0, abs(lo))) or (np.isfinite(hi) and b > hi + 1e-12 * max(1.0, abs(hi))):
            bad.append(f"joint {j + 1} ({names[j]}): the range {a:.6g}..{b:.6g} {pu[j]} leaves its position limits "
                       f"{lo:.6g}..{hi:.6g} {pu[j]}")
    if bad:
        reasons = tuple(bad) + (base.reasons if base.rating != "good" else ())
        return with_identifiability(Rating("bad", reasons, tuple(notes), base.repetition), identifiability)
    return with_identifiability(Rating(base.rating, base.reasons, tuple(notes), base.repetition), identifiability)


# ------------------------------------------------------------------------------ frequency choice

@dataclass(frozen=True)
class FrequencyChoice:
    """Proposed SineWave frequencies ``freqs_hz = factor · base`` (Hz).

    factor : float ; base : (n,) two-decimal ratios ; freqs_hz : (n,)
    target_hz : (n,) the frequency at which each joint would reach ``fraction`` of its limits
    utilisation : (n,) ``freqs_hz / target_hz`` (1 = the joint reaches the requested fraction)
    rating : Rating of the proposal
    """

    factor: float
    base: np.ndarray
    freqs_hz: np.ndarray
    target_hz: np.ndarray
    utilisation: np.ndarray
    rating: Rating = field(repr=False)

    def to_dict(self) -> dict:
        return {"factor": self.factor, "base": self.base.tolist(), "freqs_hz": self.freqs_hz.tolist(),
                "target_hz": self.target_hz.tolist(), "utilisation": self.utilisation.tolist()}


def _round_down_sig(x: float, digits: int = 3) -> float:
    e = math.floor(math.log10(x)) - digits + 1
    return math.floor(x / 10.0**e + 1e-9) * 10.0**e


def choose_frequencies(amplitudes, velocity_limits, record_s: float = DEFAULT_RECORD_S, *, fraction: float = 0.8,
                       acceleration_limits=None, min_cycles: float = MIN_CYCLES, decimals: int = 2) -> FrequencyChoice:
    """Propose frequencies for given amplitudes and limits (the source's factor recipe, see module docstring).

    Parameters
    ----------
    amplitudes : array-like, shape (n_joints,)
        ``|target - start|/2`` per joint [rad or m], positive.
    velocity_limits : array-like, shape (n_joints,)
        [rad/s or m/s], same length unit as ``amplitudes``.
    record_s : float
        Recording time [s].
    fraction : float
        Target fraction of each velocity (and acceleration) limit, in (0, 1].
    acceleration_limits : array-like, shape (n_joints,), optional
        [rad/s² or m/s²].
    min_cycles : float
        Cycles each joint must make in the record.
    decimals : int
        Decimals of the base ratios (2: ``1.27``; 3 is tried automatically when 2 cannot satisfy the rules).

    Returns
    -------
    FrequencyChoice

    Raises
    ------
    ConfigError
        The limits are too low for ``min_cycles`` cycles of the full amplitude in the record (the hint
        gives the record time needed), or no admissible set exists.

    Examples
    --------
    >>> c = choose_frequencies([1.0, 1.0, 1.0], [2.0, 2.0, 2.0], record_s=20)
    >>> c.rating.rating, bool(np.all(c.utilisation <= 1))
    ('good', True)
    """
    A = np.abs(np.array(amplitudes, dtype=float).ravel())
    n = A.size
    v = np.array(velocity_limits, dtype=float).ravel()
    if v.size != n:
        raise ShapeError(f"velocity_limits has {v.size} values, amplitudes {n}")
    if np.any(A <= 0) or not np.all(np.isfinite(A)):
        raise ConfigError(f"amplitudes must be positive (start != target), got {A.tolist()}")
    if np.any(~np.isfinite(v)) or np.any(v <= 0):
        raise ConfigError(f"choosing frequencies needs a finite positive velocity limit per joint, got {v.tolist()}",
                          hint="give velocity limits, or velocity_limits in the configuration", options=("limits",))
    if not 0 < fraction <= 1:
        raise ConfigError(f"fraction must be in (0, 1], got {fraction}")
    target = fraction * v / (2 * np.pi * A)
    if acceleration_limits is not None:
        acc = np.array(acceleration_limits, dtype=float).ravel()
        if acc.size != n:
            raise ShapeError(f"acceleration_limits has {acc.size} values, amplitudes {n}")
        target = np.minimum(target, np.where(np.isfinite(acc), np.sqrt(fraction * acc / A) / (2 * np.pi), np.inf))
    f_min = min_cycles / record_s
    slow = np.nonzero(target < f_min)[0]
    if slow.size:
        j = int(slow[0])
        raise ConfigError(f"joint {j + 1} cannot make {min_cycles:g} cycles of its full amplitude in {record_s:g} s "
                          f"within {100 * fraction:g} % of its limits (at most {target[j]:.4g} Hz)",
                          hint=f"record at least {min_cycles / target[j]:.4g} s, narrow its range or raise its limits")
    last_err = None
    for dec in (decimals, decimals + 1):
        try:
            return _choose(target, record_s, min_cycles, dec)
        except ConfigError as err:
            last_err = err
    raise last_err  # type: ignore[misc]


def _choose(target: np.ndarray, record_s: float, min_cycles: float, decimals: int) -> FrequencyChoice:
    n = target.size
    unit = 10**decimals
    factor = _round_down_sig(float(target.min()), 3)
    fac = Fraction(str(factor))
    chosen: dict[int, int] = {}
    order = np.argsort(-target, kind="stable")
    n_min = math.ceil(min_cycles / record_s / factor * unit - 1e-9)
    for j in order:  # greedy, fastest joint first; each search is a short scan of integers
        top = int(math.floor(target[j] / factor * unit + 1e-9))
        pick = None
        for cand in range(top, n_min - 1, -1):
            ok = True
            for m in chosen.values():
                if cand == m:
                    ok = False
                    break
                g = math.gcd(cand, m)
                if min(cand, m) // g < GOOD_PAIR_CYCLES:
                    ok = False
                    break
                if abs(cand - m) / unit * factor * record_s < CHOOSER_MIN_DRIFT:
                    ok = False
                    break
            if ok:
                pick = cand
                break
        if pick is None:
            raise ConfigError(f"no admissible frequency for joint {j + 1} between {min_cycles:g} cycles in the record and "
                              f"{target[j]:.4g} Hz", hint="record longer, or raise the velocity limits")
        chosen[int(j)] = pick
    ints = [chosen[j] for j in range(n)]
    g = reduce(math.gcd, ints)
    t_rep = float(Fraction(unit) / (fac * g))
    if n > 1 and t_rep <= record_s:
        raise ConfigError(f"the proposed set repeats every {t_rep:.4g} s, within the {record_s:g} s record",
                          hint="use finer base ratios")
    base = np.array(ints, dtype=float) / unit
    freqs = np.array([float(fac * Fraction(i, unit)) for i in ints])
    rating = rate_frequencies(freqs, record_s, min_cycles=min_cycles)
    return FrequencyChoice(float(factor), base, freqs, target, freqs / target, rating)
