"""Do dynid's diagnoses cry wolf, or stay silent? False alarms and detections on simulated runs (issue 17).

    python benchmarks/diagnoses.py [--seeds 3] [--models NAME,..] [--shifts 1,2,3,4,5] [--jobs 2]
                                   [--no-scenarios] [--slow] [--real [DIR]]

Misalignment (torque and kinematics shifted in time). Every catalogue model the simulator can run
(``dynid models`` with example parameters) runs its identification program: the source's SineWave
program (spec/identification.md §1, ``dynid.excite.model_program``) or, for models the source has none
for, dynid's default (±20° / ±50 mm about home, frequencies 0.5 × {1, 1.27, 1.43, 1.13, 1.37, 1.19}
Hz); recordings capped at 20 s (6upru 10 s; puma-gravity its 150 s semi-static program, simulated on
the full PUMA since the semi-static model has no inertia to integrate). The simulator is the ideal
identification drive (no torque/position delay, 0.5 % torque noise, 20-bit encoders, 1 kHz), friction
viscous + Coulomb at 10 % of each axis' peak rigid-body torque (at least 1 % of the largest axis'),
seeds 0..S-1. Each run is identified as ``dynid identify`` does by default (friction model, cutoff and
regularisation chosen by the data). The false-alarm rate is the share of runs on which the
misalignment diagnosis fires; the same recordings with the torque delayed by 1..5 samples (row k of
the torque moved to row k + d) give the detection rate and the median estimated delay. The robots of
``dynid simulate``'s scenarios (realistic drives: torque ripple and feedback noise, Stribeck friction
the identified model lacks) are a second group; their recorded torque is the drive's mean over the
cycle *after* each position sample, i.e. half a sample early by construction.

"legacy" is the rule before issue 17 (Coulomb sign of the filtered velocity, report from half a
sample), evaluated on the same identifications.

Too slow (``--slow``): single axes under a 0.02 Hz sine (60 s) must fail with the ``too_slow`` error;
the clean catalogue runs above must not (column "too slow"), nor the demo (checked by the tests).

``--real``: the public recordings of ``benchmarks/real_data.py`` (Panda, TX40, KUKA A/B/C) with dynid's defaults:
the delay estimates and whether either diagnosis fires (real data may hold real delays).

Runtime: about 30 minutes for 3 seeds on two busy cores (``--jobs 2``); the Delta, the hexapod, the
semi-static PUMA (150 s) and the scenario robots dominate. ``--seeds 1`` for a quick look.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

G = 9.80665
SHIFTS = (1, 2, 3, 4, 5)
ISSUE_CASE = "linear2-issue17"
"""The issue's false alarm: the tests' simulated linear2 run (12 kg, 30° from vertical, Fv 40 N s/m, Fc 15 N,
0.7 Hz sine over -0.3 .. 0.4 m, 20 s), friction-dominated at its reversals."""
DEFAULT_REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "real"
LEGACY_MIN_SAMPLES = 0.5
LEGACY_GAIN = 0.05


# ------------------------------------------------------------------------------------------- the runs

def _program(model):
    """(start, target [SI], freqs [Hz], record_s, settle_s) of the model's identification program."""
    from dynid.excite import model_program
    from dynid.excite.programs import DEFAULT_BASE
    from dynid.units import to_si

    p = model_program(model)
    kinds = model.joint_kinds
    if p is None:
        home = model.home_positions()
        home = np.zeros(model.n_joints) if home is None else np.asarray(home, dtype=float)
        half = np.array([0.05 if k == "linear" else np.radians(20.0) for k in kinds])
        return home - half, home + half, 0.5 * np.array(DEFAULT_BASE[:model.n_joints]), 20.0, 2.0
    return (to_si(np.array(p.start), kinds, "softmc"), to_si(np.array(p.target), kinds, "softmc"),
            np.array(p.base) * p.factor, p.record_s, p.settle_s)


def catalogue_case(name: str):
    """(true plant, theta, motion, plant identified, description) of a catalogue model's simulated run."""
    from dynid.models import Plant, model_class
    from dynid.sim import SineMotion

    sim_name = "puma" if name == "puma-gravity" else name
    true_model = model_class(sim_name).example()
    ident_model = model_class(name).example()
    start, target, freqs, record_s, settle_s = _program(ident_model)
    record_s = min(record_s, {"puma-gravity": 150.0, "6upru": 10.0}.get(name, 20.0))
    motion = SineMotion(start, target, freqs, record_s=record_s, settle_s=settle_s)
    # friction belongs to the robot: sized on the robot's normal program (the semi-static one is 7.5x slower)
    normal = SineMotion(*_program(true_model)[:3], record_s=20.0, settle_s=0.0)
    t = np.arange(0.0, normal.duration, 1e-3)
    q, qd, qdd = normal.command(t)
    p = np.asarray(true_model.example_parameters(), dtype=float)
    peak = np.abs(true_model.torque(p, q, qd, qdd)).max(axis=0)
    peak = np.maximum(peak, 0.01 * peak.max())
    fc, fv = 0.1 * peak, 0.1 * peak / np.maximum(np.abs(qd).max(axis=0), 1e-9)
    plant = Plant(true_model.with_config(friction="viscous+coulomb"))
    theta = np.concatenate([p, np.column_stack([fv, fc]).ravel()])
    return plant, theta, motion, ident_model.with_config(friction="auto")


def _simulate(key: str, seed: int):
    """The recording and the model to identify of one run."""
    from dynid.sim import SimOptions, simulate

    if key.startswith("scenario-"):
        from dynid.sim import SineMotion
        from dynid.sim.closed_loop import Command, run_closed_loop
        from dynid.sim.scenarios import ROBOTS

        spec = ROBOTS[key.split("-", 1)[1]]
        plant, theta = spec.true_plant()
        motion = SineMotion(spec.ident_start, spec.ident_target, spec.ident_freqs_hz, record_s=spec.ident_record_s,
                            settle_s=spec.ident_settle_s)
        t = np.arange(round(motion.duration / 1e-3) + 1) * 1e-3
        run = run_closed_loop(plant, theta, Command(t, *motion.command(t)), spec.gains(), spec.drive(1e-3),
                              seed=seed)
        model = spec.ident_plant().model.with_config(friction="auto")
        return run.to_recording(start_s=spec.ident_settle_s), model
    if key == ISSUE_CASE:
        from dynid.models import Plant, make_model
        from dynid.sim import SineMotion

        plant = Plant(make_model("linear2"))
        theta = [12.0, 12.0 * G * np.cos(np.radians(30)), 0.0, 40.0, 15.0]
        motion = SineMotion([-0.3], [0.4], [0.7], record_s=20)
        return simulate(plant, theta, motion, SimOptions(noise=0.005), seed=seed), plant.model.with_config(friction="auto")
    plant, theta, motion, model = catalogue_case(key)
    return simulate(plant, theta, motion, SimOptions(), seed=seed), model


def _delayed(rec, d: int):
    """``rec`` with the torque ``d`` samples late (d > 0) or early (d < 0); the rows without data dropped."""
    from dynid.recording import Recording

    if d == 0:
        return rec
    n = rec.t.size
    if d > 0:
        return Recording(rec.t[d:], rec.q[d:], rec.tau[:n - d], source=rec.source)
    return Recording(rec.t[:n + d], rec.q[:n + d], rec.tau[-d:], source=rec.source)


@dataclass
class Outcome:
    key: str
    seed: int
    shift: int
    fired: bool
    delay_samples: float
    legacy_fired: bool
    legacy_delay_samples: float
    too_slow_error: bool
    passed: bool
    seconds: float
    error: str = ""


def run_case(key: str, seed: int, shifts: tuple[int, ...]) -> list[Outcome]:
    """Simulate one run, identify it and its delayed copies; one :class:`Outcome` per shift."""
    from dynid import Identifier
    from dynid.identification.diagnostics import estimate_delay

    warnings.simplefilter("ignore")
    try:
        rec, model = _simulate(key, seed)
    except Exception as err:  # noqa: BLE001 - a model the simulator cannot run is a row of the table
        return [Outcome(key, seed, 0, False, np.nan, False, np.nan, False, False, 0.0,
                        f"cannot simulate: {type(err).__name__}: {err}")]
    out = []
    for d in (0, *shifts):
        t0 = time.perf_counter()
        try:
            res = Identifier(model).fit(_delayed(rec, d)).result_
        except Exception as err:  # noqa: BLE001 - reported, not fatal
            out.append(Outcome(key, seed, d, False, np.nan, False, np.nan, False, False, 0.0,
                               f"{type(err).__name__}: {err}"))
            continue
        dt = res.cond.sample_period_s
        mis = [x for x in res.diagnostics if x.code == "misalignment"]
        delay, _ = estimate_delay(res)
        old, old_gain = estimate_delay(res, sign=res.cond.sign)
        legacy = abs(old / dt) >= LEGACY_MIN_SAMPLES and old_gain > LEGACY_GAIN
        slow = any(x.code == "too_slow" and x.severity == "error" for x in res.diagnostics)
        out.append(Outcome(key, seed, d, bool(mis), delay / dt, bool(legacy), old / dt, slow, bool(res.success),
                           time.perf_counter() - t0))
    return out


# ------------------------------------------------------------------------------------------- the table

def _rate(xs) -> str:
    xs = list(xs)
    return f"{sum(xs)}/{len(xs)}" if xs else "-"


def _row(label: str, rows: list[Outcome], shifts: tuple[int, ...]) -> str:
    clean = [o for o in rows if o.shift == 0 and not o.error]
    cells = []
    for d in shifts:
        s = [o for o in rows if o.shift == d and not o.error]
        cells.append(f"{_rate(o.fired for o in s):>5} ({_rate(o.legacy_fired for o in s):>5})")
    bad = [o for o in rows if o.error]
    return (f"{label:<20}{len(clean):>5}  {_rate(o.fired for o in clean):>5} ({_rate(o.legacy_fired for o in clean):>5})"
            f"  {_rate(o.too_slow_error for o in clean):>8} {_rate(o.passed for o in clean):>7}  "
            + " ".join(f"{c:>13}" for c in cells) + (f"   [{len(bad)} failed: {bad[0].error[:60]}]" if bad else ""))


GROUPS = (("simulated catalogue (ideal drive: no delay)", lambda k: not k.startswith("scenario-")),
          (("scenario robots (realistic drives; torque = the drive's mean over the cycle after the sample, "
            "~0.4 sample early by construction)"), lambda k: k.startswith("scenario-")))


def table(outcomes: list[Outcome], keys: list[str], shifts: tuple[int, ...]) -> str:
    head = (f"{'model':<20}{'runs':>5}  {'false alarms':>13}  {'too slow':>8} {'passed':>7}  "
            + " ".join(f"{f'lag {d} sample' + ('s' if abs(d) != 1 else ''):>13}" for d in shifts))
    sub = (f"{'':<20}{'':>5}  {'new (legacy)':>13}  {'(error)':>8} {'(clean)':>7}  "
           + " ".join(f"{'new (legacy)':>13}" for _ in shifts))
    lines = [head, sub]
    for title, member in GROUPS:
        group = [k for k in keys if member(k)]
        if not group:
            continue
        lines += ["-" * len(head), title]
        for key in group:
            rows = [o for o in outcomes if o.key == key]
            if not any(o.shift == 0 and not o.error for o in rows):
                lines.append(f"{key:<20}  {rows[0].error[:100] if rows else 'no runs'}")
                continue
            lines.append(_row(key, rows, shifts))
        lines.append(_row("all", [o for o in outcomes if o.key in group], shifts))
    lines.append("-" * len(head))
    lines.append("")
    lines.append("estimated delay [samples] over the catalogue runs, median (min .. max) — new estimator (Coulomb sign "
                 "of the recorded velocity) / legacy (of the filtered velocity):")
    cat = [o for o in outcomes if not o.key.startswith("scenario-")]
    for d in (0, *shifts):
        s = [o for o in cat if o.shift == d and not o.error and np.isfinite(o.delay_samples)]
        if not s:
            continue
        a = np.array([o.delay_samples for o in s])
        b = np.array([o.legacy_delay_samples for o in s])
        lines.append(f"  true lag {d}: new {np.median(a):+.2f} ({a.min():+.2f} .. {a.max():+.2f})   "
                     f"legacy {np.median(b):+.2f} ({b.min():+.2f} .. {b.max():+.2f})")
    fired = [o for o in outcomes if o.shift == 0 and o.fired]
    if fired:
        lines.append("runs without delay where the diagnosis fired: " + ", ".join(
            f"{o.key} seed {o.seed} ({o.delay_samples:+.2f})" for o in fired))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- too slow

def slow_cases():
    """Single axes under a 0.02 Hz sine, 60 s (what a 'too slow' identification run looks like)."""
    from dynid.models import Plant, make_model
    from dynid.sim import SineMotion
    from dynid.sim.scenarios import ROBOTS

    return {
        "rotary3 crank 0.02 Hz": (Plant(make_model("rotary3")), [0.5, 0.0, 20.0, 0.0, 0.8, 1.5],
                                  SineMotion([-2.0], [2.0], [0.02], record_s=60, settle_s=1.0), "I"),
        "linear2 0.02 Hz": (Plant(make_model("linear2")), [12.0, 12.0 * G * np.cos(np.radians(30)), 0.0, 40.0, 15.0],
                            SineMotion([-0.3], [0.4], [0.02], record_s=60, settle_s=1.0), "M"),
        "linear1 0.02 Hz": (Plant(make_model("linear1")), [12.0, 40.0, 15.0],
                            SineMotion([-0.3], [0.4], [0.02], record_s=60, settle_s=1.0), "M"),
        "puma semi-static 0.02": (*ROBOTS["puma"].true_plant(),
                                  SineMotion(np.radians([-100.0, -170.0, 100.0, -60.0, -60.0, -100.0]),
                                             np.radians([100.0, -40.0, 235.0, 60.0, 60.0, 100.0]),
                                             0.02 * np.array([1.56, 1.0, 1.31, 1.47, 1.21, 1.17]), record_s=60,
                                             settle_s=0.5), None),
    }


def run_slow(label: str, seed: int) -> str:
    from dynid import Identifier
    from dynid.sim import SimOptions, simulate

    warnings.simplefilter("ignore")
    plant, theta, motion, name = slow_cases()[label]
    rec = simulate(plant, theta, motion, SimOptions(noise=0.005), seed=seed)
    if name is None:      # the PUMA: the full model with rotor inertias, as the program's source robot has them
        res = Identifier("puma", friction="viscous+coulomb+armature").fit(rec).result_
        ratio = "-"
    else:
        res = Identifier(plant.model.name).fit(rec).result_
        ratio = f"{name} identified / true = {res.values[name] / theta[plant.param_names.index(name)]:8.3g}"
    d = [x for x in res.diagnostics if x.code == "too_slow"]
    errors = sorted(x.joint for x in d if x.severity == "error")
    shares = ", ".join(f"{100 * x.evidence['acceleration_torque_share']:.2g}" for x in d if x.severity == "error")
    return (f"{label:<24} seed {seed}  {ratio:<28} too_slow errors on axes {errors or '-'}  "
            f"passed: {res.success!s:<5}  acceleration torque share [%] {shares or '-'}")


# ------------------------------------------------------------------------------------------- real data

def run_real(folder: str) -> list[str]:
    """The public recordings of ``benchmarks/real_data.py`` (Panda, TX40, KUKA A/B/C), identified with dynid's
    defaults and that benchmark's configuration: the delay estimates and the two diagnoses."""
    import importlib.util

    from dynid import Identifier
    from dynid.identification.diagnostics import estimate_delay

    warnings.simplefilter("ignore")
    spec = importlib.util.spec_from_file_location("real_data_benchmark", Path(__file__).with_name("real_data.py"))
    rb = importlib.util.module_from_spec(spec)
    sys.modules["real_data_benchmark"] = rb
    spec.loader.exec_module(rb)
    root = Path(folder)
    runs = []
    d = rb.load_panda(root)
    runs.append(("Panda", Identifier("serial", urdf=d["urdf"], config={"friction": rb.PANDA_FRICTION}), d["rec"]))
    d = rb.load_tx40(root)
    runs.append(("TX40", Identifier("serial", urdf=d["urdf"], config={"friction": rb.TX40_FRICTION,
                                                                       "transmission": rb.TX40_TRANSMISSION}), d["rec"]))
    d = rb.load_kuka(root)
    runs += [(f"KUKA {n}", Identifier("serial", config=d["config"]), d["recs"][n]) for n in "ABC"]
    lines = []
    for name, est, rec in runs:
        res = est.fit(rec).result_
        dt = res.cond.sample_period_s
        new, gain = estimate_delay(res)
        old, old_gain = estimate_delay(res, sign=res.cond.sign)
        mis = [x for x in res.diagnostics if x.code == "misalignment"]
        slow = [x.joint for x in res.diagnostics if x.code == "too_slow" and x.severity == "error"]
        lines.append(f"{name:<8} delay new {new / dt:+.2f} samples (residual -{100 * gain:.1f} %), legacy "
                     f"{old / dt:+.2f} (-{100 * old_gain:.1f} %); misalignment {'reported' if mis else '-':<8} "
                     f"too slow (error) on axes {slow or '-'}; verdict {'passed' if res.success else 'failed'}")
    return lines


# ------------------------------------------------------------------------------------------- main

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--models", help="comma-separated catalogue models (default: every one with example parameters)")
    ap.add_argument("--shifts", default=",".join(map(str, SHIFTS)), help="torque delays [samples] for detection")
    ap.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    ap.add_argument("--no-scenarios", action="store_true", help="leave out the scenario robots")
    ap.add_argument("--slow", action="store_true", help="also the 0.02 Hz 'too slow' runs")
    ap.add_argument("--real", nargs="?", const=str(DEFAULT_REAL), metavar="DIR",
                    help="also the public recordings of benchmarks/real_data.py (default ../shared/data/real)")
    args = ap.parse_args(argv)
    from dynid.models import model_class, model_names

    if args.models:
        keys = [k.strip() for k in args.models.split(",") if k.strip()]
    else:
        keys = [ISSUE_CASE] + [n for n in model_names() if model_class(n).example().example_parameters() is not None]
        if not args.no_scenarios:
            keys += ["scenario-scara", "scenario-delta", "scenario-puma"]
    shifts = tuple(int(s) for s in args.shifts.split(",") if s.strip())
    t0 = time.perf_counter()
    jobs = [(k, s) for k in keys for s in range(args.seeds)]
    outcomes: list[Outcome] = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_case, k, s, shifts): (k, s) for k, s in jobs}
        for i, fut in enumerate(futures):
            res = fut.result()
            outcomes.extend(res)
            k, s = futures[fut]
            print(f"[{i + 1}/{len(jobs)}] {k} seed {s}: {sum(o.seconds for o in res):.0f} s identifying", file=sys.stderr,
                  flush=True)
    print(f"misalignment diagnosis, {args.seeds} seed(s) per model ({time.perf_counter() - t0:.0f} s)\n")
    print(table(outcomes, keys, shifts))
    if args.slow:
        print("\ntoo slow: single axes under a 0.02 Hz sine (60 s)")
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for line in pool.map(run_slow, *zip(*[(lab, s) for lab in slow_cases() for s in range(args.seeds)])):
                print(line, flush=True)
    if args.real:
        print(f"\nreal recordings ({args.real}), dynid's defaults:")
        for line in run_real(args.real):
            print("  " + line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
