"""``dynid excite``: plan and rate a softMC SineWave identification motion, predict what it identifies,
optimise a Fourier excitation, export the trajectory, the MC-Basic program and a plot."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .._atomic import Staging
from ..bounds import HARMONICS_WHY, MAX_HARMONICS, TIME_BUDGET_S
from ..errors import ConfigError
from .._json import jsonable
from ..models import Plant
from ..units import position_scale, position_unit
from . import _common
from ._common import EXIT_FAILED, EXIT_OK, Progress, parse_floats, print_json

DESCRIPTION = """\
Plan an identification motion before running it.

SineWave (softMC): each joint oscillates between --start and --target at f = factor x freqs [Hz].
The rating follows the source's table ({1,2,1.2} bad, {1,1.2,1.2} medium, {1.1,1.3,1.5} good) with the
reasons; with --model it adds the condition number of the base-parameter observation matrix, peak
velocities/accelerations/torques against the limits and which parameters are poorly excited, and a
motion that leaves parameters confounded (only a combination of them identifiable, e.g. M and K of a
spring axis under one sine) or not excited at all is rated bad, whatever its frequencies: the reasons
name the group, the combination the motion determines and what would separate them.
--mcbasic writes the softMC identification program, --out the trajectory (t, q, dq, ddq) as CSV.

Fourier (--fourier N): an N-harmonic periodic trajectory inside the --start/--target range that
minimises the condition number (with a D-optimal term, --dopt-weight), starting and ending at rest,
with every limit checked on a 1 ms grid (exit status 1 and limits_ok false if one is violated; no
trajectory is written then). It is compared with a reference sine program over the same range
(--freqs/--factor, or the source's program for the model), whose peak velocities and accelerations
are the limits of joints that have none configured (--limits, --acc-limits, velocity_limits). One
optimiser start imitates that sine; beats_sine says whether the design's condition number is lower
(sine_note why not). Closed chains (delta3, delta4, 6upru) also keep the mechanism's own limits
(assembly, transmission/U-joint angles, distance from singularity) on every sample.
""" + f"""N is at most {MAX_HARMONICS} (the work grows about as N^5); the search stops at --time-budget (default
{TIME_BUDGET_S:g} s) with the best design it has found, and says so (stopped_early in --json). A progress bar
shows the optimiser's iterations.
"""

EPILOG = """\
examples:
  dynid excite --freqs 1.1,1.3,1.5 --record-s 20 --json
  dynid excite --model puma --units softmc --start=-100,-170,100,-60,-60,-100 \\
               --target=100,-40,235,60,60,100 --freqs 1.56,1,1.31,1.47,1.21,1.17 --factor 0.15 --json
  dynid excite --model scara4 --mcbasic IDENT.PRG          (the source's SCARA example program)
  dynid excite --model puma --fourier 5 --units softmc --start=-100,-170,100,-60,-60,-100 \\
               --target=100,-40,235,60,60,100 --record-s 20 --seed 1 --out traj.csv --json
Write negative values with '=' (--start=-100,...): argparse reads '-100,...' as an option otherwise.
Units: --start/--target/--limits follow --units (si: rad, m; softmc: deg for rotary, mm for linear joints);
JSON values are SI. Frequencies are in Hz.
"""


def add_parser(sub) -> None:
    p = sub.add_parser("excite", help="plan, rate and optimise identification motions (SineWave, Fourier)",
                       description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("sine wave")
    g.add_argument("--freqs", metavar="F1,F2,..", help="base frequencies per joint [Hz], multiplied by --factor "
                   "(default with --model: the source's program for that model)")
    g.add_argument("--factor", type=float, default=None, metavar="K", help="speed factor: f = K x freqs (default 1)")
    g.add_argument("--record-s", type=float, default=None, metavar="S", help="recording time [s] (default 20, the "
                   "source's sleep 20000)")
    g.add_argument("--settle-s", type=float, default=None, metavar="S", help="motion before recording [s] (default 2)")
    g.add_argument("--min-cycles", type=float, default=None, metavar="C", help="cycles each joint must make (default 3; "
                   "1 for puma-gravity)")
    g.add_argument("--choose", action="store_true", help="propose the frequencies from the amplitudes, the velocity "
                   "limits and the record time (source's recipe: base ratios scaled by one factor)")
    g.add_argument("--fraction", type=float, default=0.8, metavar="F", help="--choose: target fraction of each "
                   "velocity limit")
    m = p.add_argument_group("model and limits")
    m.add_argument("--model", metavar="NAME", help="model name (see 'dynid models'); adds condition number, torques")
    m.add_argument("--config", metavar="FILE", help="model configuration (JSON, YAML or TOML)")
    m.add_argument("--urdf", metavar="FILE", help="URDF of the robot (model 'serial')")
    m.add_argument("--friction", metavar="TERMS", help="friction model, e.g. viscous+coulomb+offset")
    m.add_argument("--start", metavar="A,B,..", help="start point per joint (in --units); write --start=-1,2")
    m.add_argument("--target", metavar="A,B,..", help="sine target per joint (in --units)")
    m.add_argument("--units", choices=("si", "softmc"), default=None,
                   help="units of --start/--target/--limits: si (rad, m) or softmc (deg, mm); default si")
    m.add_argument("--limits", metavar="V1,V2,..", help="velocity limit per joint (--units per second)")
    m.add_argument("--acc-limits", metavar="A1,A2,..", help="acceleration limit per joint (--units per s^2)")
    m.add_argument("--torque-limits", metavar="T1,T2,..", help="torque/force limit per joint [N m or N]")
    m.add_argument("--noise", type=float, default=0.005, metavar="F",
                   help="torque noise for the predicted parameter std, fraction of each joint's peak torque")
    m.add_argument("--sample-period", type=float, default=1e-3, metavar="S", help="recording sample period [s]")
    f = p.add_argument_group("Fourier optimisation")
    f.add_argument("--fourier", type=int, metavar="N", help=f"optimise an N-harmonic Fourier trajectory (needs --model; "
                   f"1 <= N <= {MAX_HARMONICS}: the optimiser's work grows about as N^5 — on a 6-axis arm N = 10 takes "
                   "half a minute, N = 20 five)")
    f.add_argument("--periods", default="auto", metavar="P", help="periods per record, or 'auto' (default): as many as "
                   "let the middle harmonic use the velocity and acceleration limits over the range")
    f.add_argument("--objective", choices=("cond", "cond_scaled", "dopt"), default="cond",
                   help="cond: condition number; cond_scaled: with unit columns; dopt: -log det (D-optimality)")
    f.add_argument("--dopt-weight", type=float, default=None, metavar="K",
                   help="cond objectives: minimise log cond(W) - K x mean log singular value (0: the pure condition "
                        "number; the D-optimal term keeps the excitation large). Default: the model's (3; 0 for 6upru)")
    f.add_argument("--restarts", type=int, default=3, metavar="R", help="random starts")
    f.add_argument("--seed", type=int, default=0, metavar="K", help="seed of the random starts")
    f.add_argument("--max-iter", type=int, default=60, metavar="I", help="SLSQP iterations of the final polish")
    f.add_argument("--time-budget", type=_budget, default=TIME_BUDGET_S, metavar="S",
                   help="wall time the optimisation may take [s], or 'none': when it is used up the best design found "
                        "so far is taken, and the output says so (stopped_early in --json)")
    o = p.add_argument_group("outputs")
    o.add_argument("--out", metavar="TRAJ.csv", help="write the trajectory (t, q1.., dq1.., ddq1..) as CSV")
    o.add_argument("--out-units", choices=("si", "softmc"), default="si", help="units of the CSV")
    o.add_argument("--dt", type=float, default=1e-3, metavar="S", help="sample period of the CSV [s]")
    o.add_argument("--mcbasic", metavar="FILE", help="write the softMC identification program (SineWave)")
    o.add_argument("--element", metavar="NAME", help="softMC element in the program (default: the model's, e.g. SCARA)")
    o.add_argument("--dynamic-model", type=int, metavar="M", help="softMC DynamicModel number (default: the model's)")
    o.add_argument("--filter-hz", type=float, default=None, metavar="HZ", help="IdentFilterFreq (default 80)")
    o.add_argument("--plot", metavar="FILE.png", help="plot of the planned joint motions (needs matplotlib: extra 'report')")
    o.add_argument("--json", action="store_true", help="print the result as JSON (SI values)")
    o.add_argument("--quiet", action="store_true", help="no progress bar")
    o.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=run)


# ------------------------------------------------------------------------------------------ helpers

def _budget(text: str) -> float | None:
    """``--time-budget``: seconds > 0, or 'none'."""
    if text.strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected seconds > 0 or 'none', got {text!r}")
    return value


def _floats(text: str | None, name: str, n: int | None = None) -> np.ndarray | None:
    if text is None:
        return None
    v = np.array(parse_floats(text, name), dtype=float)
    if v.size == 0:
        raise ConfigError(f"{name} is empty", hint=f"give comma-separated numbers, e.g. {name}=1,2,3")
    if n is not None:
        if v.size == 1 and n > 1:
            v = np.full(n, v[0])
        if v.size != n:
            raise ConfigError(f"{name} has {v.size} values but there are {n} joints")
    if not np.all(np.isfinite(v)):
        raise ConfigError(f"{name} must be finite numbers, got {text!r}")
    return v


def _build_model(args):
    """The model from --config; without one, the example robot of that kind (e.g. a 600 mm SCARA)."""
    from ..identification.identifier import Identifier
    from ..models import model_class

    config = args.config if args.config else dict(model_class(args.model).example_config)
    return Identifier(args.model, config=config, urdf=args.urdf, friction=args.friction).build_model()


def _looks_like_softmc(values: list[np.ndarray], kinds) -> bool:
    """SI positions beyond two turns (rotary) or 10 m (linear) are taken for softMC user units."""
    for v in values:
        if v is None:
            continue
        for x, k in zip(v, kinds):
            if (k == "rotary" and abs(x) > 4 * np.pi) or (k == "linear" and abs(x) > 10.0):
                return True
    return False


def _units_note(msg: str) -> None:
    sys.stderr.write(f"dynid: note: {msg}\n")


# --------------------------------------------------------------------------------------------- run

def run(args) -> int:
    from ..excite import (
        JointLimits, choose_frequencies, model_program, plan_sine, predict_identifiability, rate_frequencies, rate_plan,
    )

    model = _build_model(args) if args.model else None
    if args.fourier is not None and model is None:
        raise ConfigError("--fourier needs --model", hint="e.g. dynid excite --model puma --fourier 5 --start=... --target=...")
    n = model.n_joints if model is not None else None
    kinds = list(model.joint_kinds) if model is not None else None
    src = model_program(model) if model is not None else None
    start_in = _floats(args.start, "--start", n)
    target_in = _floats(args.target, "--target", n)
    if (start_in is None) != (target_in is None):
        raise ConfigError("give both --start and --target (or neither)")
    units = args.units
    defaults_from_source = False
    if start_in is None and src is not None:
        start_in, target_in, units_src = np.array(src.start), np.array(src.target), "softmc"
        defaults_from_source = True
    else:
        units_src = None
    if n is None and start_in is not None:
        n = start_in.size
        if target_in.size != n:
            raise ConfigError(f"--start has {n} values but --target has {target_in.size}")
    if units is None:
        units = units_src or "si"
        if units_src is None and kinds is not None and _looks_like_softmc([start_in, target_in], kinds):
            units = "softmc"
            _units_note("--start/--target values beyond two turns (or 10 m) are read as softMC units (deg, mm); "
                        "pass --units si or --units softmc to choose explicitly")
    elif units_src is not None and units != "softmc":
        units_src = None
        start_in, target_in = np.array(src.start), np.array(src.target)
        scale = position_scale(kinds, "softmc") / position_scale(kinds, units)
        start_in, target_in = start_in * scale, target_in * scale
    args.units = units
    pos_scale = position_scale(kinds, units) if kinds is not None else np.ones(n or 0)
    if kinds is None and units == "softmc" and start_in is not None:
        _units_note("without --model the joint kinds are unknown: velocities are reported in the --start/--target units "
                    "per second, not converted to SI")

    # frequencies
    freqs = _floats(args.freqs, "--freqs", n)
    factor = args.factor
    record_s = args.record_s
    settle_s = args.settle_s
    min_cycles = args.min_cycles
    if src is not None:
        record_s = src.record_s if record_s is None else record_s
        settle_s = src.settle_s if settle_s is None else settle_s
        min_cycles = src.min_cycles if min_cycles is None else min_cycles
    record_s = 20.0 if record_s is None else record_s
    settle_s = 2.0 if settle_s is None else settle_s
    min_cycles = 3.0 if min_cycles is None else min_cycles
    if not (np.isfinite(record_s) and record_s > 0):
        raise ConfigError(f"--record-s must be positive, got {record_s}")
    if not (np.isfinite(settle_s) and settle_s >= 0):
        raise ConfigError(f"--settle-s must be >= 0, got {settle_s}")
    freqs_from_source = False
    if freqs is None and not args.choose and src is not None and args.fourier is None:
        freqs, factor, freqs_from_source = np.array(src.base), (src.factor if factor is None else factor), True
    if factor is None:
        factor = 1.0
    if not (np.isfinite(factor) and factor > 0):
        raise ConfigError(f"--factor must be positive, got {factor}")

    # limits (SI): configuration, then the command line
    limits = JointLimits.from_model(model) if model is not None else None
    cli_v = _floats(args.limits, "--limits", n)
    cli_a = _floats(args.acc_limits, "--acc-limits", n)
    cli_t = _floats(args.torque_limits, "--torque-limits", n)
    if any(x is not None for x in (cli_v, cli_a, cli_t)):
        if n is None:
            raise ConfigError("--limits need the number of joints: give --model or --start/--target")
        cli = JointLimits.create(n, velocity=None if cli_v is None else cli_v * pos_scale,
                                 acceleration=None if cli_a is None else cli_a * pos_scale, torque=cli_t)
        limits = cli if limits is None else limits.override(cli)
    start = None if start_in is None else start_in * pos_scale
    target = None if target_in is None else target_in * pos_scale

    out: dict = {"mode": "fourier" if args.fourier is not None else "sine", "units": units,
                 "model": model.name if model is not None else None}
    if defaults_from_source:
        out["defaults"] = ("start/target from the source's example program for this model" if src.origin == "source" else
                           "start/target from dynid's default program for this model (home ± 50 mm / ± 20 deg; the "
                           "source has none)")
    if model is not None:
        out["joints"] = [{"name": j.name, "type": j.kind} for j in model.joints]
    if args.fourier is not None:
        return _run_fourier(args, model, kinds, start, target, freqs, factor, record_s, settle_s, min_cycles, limits, src,
                            out)

    # ---- sine plan
    if args.choose:
        if start is None:
            raise ConfigError("--choose needs --start and --target (the amplitudes)")
        if limits is None or not np.all(np.isfinite(limits.velocity)):
            raise ConfigError("--choose needs a velocity limit per joint", hint="give --limits V1,V2,.. or velocity_limits in --config")
        choice = choose_frequencies(0.5 * (target - start), limits.velocity, record_s, fraction=args.fraction,
                                    acceleration_limits=None if not np.all(np.isfinite(limits.acceleration)) else limits.acceleration,
                                    min_cycles=min_cycles)
        freqs, factor = choice.base, choice.factor
        out["choice"] = choice.to_dict()
    if freqs is None:
        raise ConfigError("give --freqs (base frequencies per joint in Hz)",
                          hint="or --choose with --start/--target and velocity limits, or --model with a source program")
    if n is not None and freqs.size != n:
        raise ConfigError(f"--freqs has {freqs.size} values but there are {n} joints")
    if np.any(freqs <= 0):
        raise ConfigError(f"--freqs must be positive [Hz], got {freqs.tolist()}")
    f_hz = freqs * factor
    out.update({"freqs_hz": [float(f"{x:.12g}") for x in f_hz], "factor": factor, "base": freqs.tolist(), "settle_s": settle_s,
                "min_cycles": min_cycles})
    if freqs_from_source:
        out["defaults"] = ("frequencies (and points) from the source's example program for this model"
                           if src.origin == "source" else
                           "frequencies (and points) from dynid's default program for this model (the source has none)")
    plan = None
    if start is not None:
        plan = plan_sine(start, target, freqs, factor=factor, record_s=record_s, settle_s=settle_s)
    ident = None
    peak_torque = None
    if plan is not None and model is not None:
        plant = Plant(model)
        t, q, qd, qdd = plan.sample(_grid_dt(record_s))
        with Progress("excite", quiet=args.quiet or args.json) as progress:
            progress("the motion's observation matrix and parameter uncertainty", 0.1)
            ident = predict_identifiability(plant, q, qd, qdd, record_s=record_s, noise=args.noise,
                                            sample_period_s=args.sample_period, limits=limits)
        peak_torque = ident.peak_torque
    if plan is not None:
        pu = [position_unit(k) for k in kinds] if kinds is not None else None
        rating = rate_plan(plan, limits, min_cycles=min_cycles, peak_torque=peak_torque,
                           joint_names=[j.name for j in model.joints] if model is not None else None, units=pu,
                           identifiability=ident)
    else:
        rating = rate_frequencies(f_hz, record_s, min_cycles=min_cycles)
    out.update(rating.to_dict())
    out["peak_velocity"] = None if plan is None else plan.peak_velocity.tolist()
    out["peak_acceleration"] = None if plan is None else plan.peak_acceleration.tolist()
    out["peak_torque"] = None if peak_torque is None else peak_torque.tolist()
    out["condition_number"] = None if ident is None else ident.condition_number
    out["condition_number_scaled"] = None if ident is None else ident.condition_number_scaled
    if plan is not None:
        out["start"], out["target"] = plan.start.tolist(), plan.target.tolist()
    if ident is not None:
        out["identifiability"] = ident.to_dict()
    if limits is not None:
        out["limits"] = limits.to_dict()
    with Staging() as staging:     # every output written, or none
        files = _write_sine_outputs(args, model, kinds, plan, src, limits, staging)
        staging.commit()
    out["files"] = files
    if args.json:
        print_json(jsonable(out))
    else:
        _print_sine(out, model)
    return EXIT_OK


def _grid_dt(record_s: float) -> float:
    """Grid of the predictions: 1 ms, at most 20 000 samples (the condition number converges long before)."""
    return max(1e-3, record_s / 20000)


def _write_sine_outputs(args, model, kinds, plan, src, limits, staging: Staging) -> dict:
    from ..excite import plot_motion, write_mcbasic, write_trajectory_csv

    files = {}
    if (args.out or args.mcbasic or args.plot) and plan is None:
        raise ConfigError("--out, --mcbasic and --plot need --start and --target (or --model with a source program)")
    if args.mcbasic:
        element = args.element or (model.element if model is not None else None)
        dyn = args.dynamic_model if args.dynamic_model is not None else (model.softmc_model if model is not None else None)
        if element is None or dyn is None:
            raise ConfigError("--mcbasic needs --model (or --element and --dynamic-model)")
        if kinds is None and args.units != "softmc":
            raise ConfigError("--mcbasic without --model needs --units softmc (the program is written in deg/mm)")
        filt = args.filter_hz if args.filter_hz is not None else (src.filter_hz if src is not None else 80.0)
        files["mcbasic"] = str(write_mcbasic(args.mcbasic, plan, element=element, dynamic_model=dyn, kinds=kinds,
                                             filter_hz=filt, staging=staging))
    if args.out:
        t, q, qd, qdd = plan.sample(args.dt, include_settle=True)
        if args.out_units == "softmc" and kinds is None:
            raise ConfigError("--out-units softmc needs --model (the joint kinds)")
        meta = {"source": "dynid excite (softMC SineWave; t = 0 at the SineWave start, recording from "
                          f"t = {plan.settle_s:g} s)", "freqs_hz": ",".join(f"{x:.10g}" for x in plan.freqs_hz)}
        files["trajectory"] = str(write_trajectory_csv(args.out, t, q, qd, qdd, kinds=kinds, units=args.out_units, meta=meta,
                                                       staging=staging))
    if args.plot:
        t, q, _, _ = plan.sample(_grid_dt(plan.record_s + plan.settle_s) * 10, include_settle=True)
        files["plot"] = str(plot_motion(args.plot, t, q, joint_names=[j.name for j in model.joints] if model else None,
                                        kinds=kinds, units=args.units or "si", limits=limits, mark_s=plan.settle_s,
                                        title="planned SineWave motion (recording starts at "
                                              f"{plan.settle_s:g} s)", staging=staging))
    return files


def _print_sine(out: dict, model) -> None:
    fmt = _common.fmt
    lines = [f"rating: {out['rating']}"]
    lines += [f"  - {r}" for r in out["reasons"]]
    if out["notes"]:
        lines.append("notes:")
        lines += [f"  - {r}" for r in out["notes"]]
    rp = out["repeat_period_s"]
    lines.append(f"frequencies [Hz]: {', '.join(fmt(f, 4) for f in out['freqs_hz'])}  (factor {fmt(out['factor'], 4)})")
    lines.append(f"record {fmt(out['record_s'], 4)} s; pattern repeats every "
                 + ("never (incommensurate)" if rp is None else f"{fmt(rp, 5)} s"))
    rows = []
    n = len(out["freqs_hz"])
    for j in range(n):
        row = [j + 1, fmt(out["cycles"][j], 4)]
        row.append("-" if out["peak_velocity"] is None else fmt(out["peak_velocity"][j], 4))
        row.append("-" if out["peak_acceleration"] is None else fmt(out["peak_acceleration"][j], 4))
        row.append("-" if out["peak_torque"] is None else fmt(out["peak_torque"][j], 4))
        rows.append(row)
    lines.append(_common.table(rows, ["joint", "cycles", "peak vel", "peak acc", "peak torque"]))
    if out["condition_number"] is not None:
        idf = out["identifiability"]
        lines.append(f"condition number (base parameters): {fmt(out['condition_number'], 5)} "
                     f"(unit columns: {fmt(out['condition_number_scaled'], 5)})")
        if idf["poorly_excited"]:
            lines.append("poorly excited (expected relative std > 30 %): " + ", ".join(idf["poorly_excited"]))
        if not idf["confounded"]:
            lines.append("confounded or unexcited parameters: none")
        for s in idf["saturation"]:
            lines.append(f"warning: {s}")
    for k, v in out.get("files", {}).items():
        lines.append(f"{k}: {v}")
    print("\n".join(lines))


# ----------------------------------------------------------------------------------------- fourier

def _run_fourier(args, model, kinds, start, target, freqs, factor, record_s, settle_s, min_cycles, limits, src, out) -> int:
    from ..excite import (
        FourierOptions, JointLimits, optimize_fourier, plan_sine, plot_motion, predict_identifiability, rate_plan,
        write_trajectory_csv,
    )

    n = model.n_joints
    if args.mcbasic:
        raise ConfigError("--mcbasic writes the SineWave program; the Fourier trajectory is exported with --out (CSV)")
    if not 1 <= args.fourier <= MAX_HARMONICS:
        raise ConfigError(f"--fourier {args.fourier}: give 1 to {MAX_HARMONICS} harmonics. " + HARMONICS_WHY,
                          hint=f"--fourier 5 (the default of the 6-UPRU paper) to {MAX_HARMONICS}, or more --periods")
    plant = Plant(model)
    if start is None:
        if model.config.position_limits is None:
            raise ConfigError("--fourier needs the position range: --start and --target (or position_limits in --config)")
        start, target = np.array(model.config.position_limits, dtype=float).T
    lo, hi = np.minimum(start, target), np.maximum(start, target)
    if np.any(hi <= lo):
        raise ConfigError("--start and --target must differ for every joint (they bound the Fourier trajectory)")
    cfg = JointLimits.from_model(model)
    bad = np.nonzero((lo < cfg.lower - 1e-12) | (hi > cfg.upper + 1e-12))[0]
    if bad.size:
        j = int(bad[0])
        raise ConfigError(f"joint {j + 1}: the range {lo[j]:.6g}..{hi[j]:.6g} leaves its configured position limits "
                          f"{cfg.lower[j]:.6g}..{cfg.upper[j]:.6g} (SI)")
    base_limits = (limits if limits is not None else JointLimits.create(n)).intersect_position(lo, hi)
    # reference sine program over the same range: --freqs/--factor, or the source's frequencies for this model
    ref = None
    if freqs is None and src is not None:
        freqs, factor = np.array(src.base), (src.factor if args.factor is None else args.factor)
    if freqs is not None:
        if freqs.size != n:
            raise ConfigError(f"--freqs has {freqs.size} values but model {model.name!r} has {n} joints")
        ref = plan_sine(start, target, freqs, factor=factor, record_s=record_s, settle_s=settle_s)
    lim = base_limits
    filled = []
    if ref is not None:
        v = np.where(np.isfinite(lim.velocity), lim.velocity, ref.peak_velocity)
        a = np.where(np.isfinite(lim.acceleration), lim.acceleration, ref.peak_acceleration)
        filled = [k for k, arr in (("velocity", lim.velocity), ("acceleration", lim.acceleration)) if not np.all(np.isfinite(arr))]
        lim = JointLimits(lim.lower, lim.upper, v, a, lim.torque)
    periods = _periods(args.periods, lim, record_s, args.fourier)
    dopt = model.fourier_dopt_weight if args.dopt_weight is None else args.dopt_weight
    opts = FourierOptions(harmonics=args.fourier, periods=periods, objective=args.objective, restarts=args.restarts,
                          dopt_weight=dopt,
                          seed=args.seed, max_iter=args.max_iter, screen_iter=min(15, args.max_iter),
                          time_budget_s=args.time_budget)
    progress = Progress("excite", quiet=args.quiet or args.json)
    design = optimize_fourier(plant, lim, record_s, opts, strict=False, progress=progress.part(0.0, 0.85),
                              reference_hz=None if ref is None else ref.freqs_hz)
    if design.stopped_early:
        progress.log(f"dynid: note: {design.message}")
    progress("the design's parameter uncertainty", 0.85)
    t, q, qd, qdd = design.trajectory.sample(record_s, _grid_dt(record_s))
    ident = predict_identifiability(plant, q, qd, qdd, record_s=record_s, noise=args.noise,
                                    sample_period_s=args.sample_period, limits=lim)
    out.update({"harmonics": args.fourier, "periods": periods, "period_s": design.trajectory.period_s,
                "record_s": record_s, "seed": args.seed, "restarts": args.restarts, "objective": args.objective,
                "dopt_weight": dopt,
                "condition_number": design.condition_number, "condition_number_scaled": design.condition_number_scaled,
                "limits_ok": design.limits_ok, "violations": list(design.check.violations),
                "limit_usage": design.check.to_dict()["usage"], "check_grid_s": design.check.dt, "scale": design.scale,
                "configuration_usage": design.check.to_dict().get("configuration_usage", {}),
                "run_time_s": design.run_time_s, "optimiser": list(design.restarts),
                "stopped_early": design.stopped_early, "time_budget_s": args.time_budget,
                "peak_velocity": np.abs(qd).max(axis=0).tolist(), "peak_acceleration": np.abs(qdd).max(axis=0).tolist(),
                "peak_torque": None if ident.peak_torque is None else ident.peak_torque.tolist(),
                "limits": lim.to_dict(), "start": start.tolist(), "target": target.tolist(),
                "identifiability": ident.to_dict(), "trajectory": design.trajectory.to_dict(), "message": design.message})
    if filled:
        out["limits_note"] = (f"{' and '.join(filled)} limits not configured: taken per joint from the peaks of the "
                              "reference sine program over the same range")
    if ref is not None:
        progress("the reference sine program", 0.93)
        rt, rq, rqd, rqdd = ref.sample(_grid_dt(record_s))
        rid = predict_identifiability(plant, rq, rqd, rqdd, record_s=record_s, noise=args.noise,
                                      sample_period_s=args.sample_period, limits=lim)
        rr = rate_plan(ref, None, min_cycles=min_cycles, identifiability=rid)
        out["reference"] = {"kind": "softMC SineWave over the same range", "freqs_hz": ref.freqs_hz.tolist(),
                            "factor": factor, "base": freqs.tolist(), "condition_number": rid.condition_number,
                            "condition_number_scaled": rid.condition_number_scaled, "rating": rr.rating,
                            "confounded": [c.to_dict() for c in rid.confounded],
                            "peak_velocity": ref.peak_velocity.tolist(), "peak_acceleration": ref.peak_acceleration.tolist()}
        out["sine_condition_number"] = rid.condition_number
        out["condition_ratio"] = rid.condition_number / design.condition_number
        _compare_with_sine(out, model, rq, ref, design, args.fourier, periods, record_s)
    progress.close()
    files = {}
    with Staging() as staging:     # every output written, or none
        if design.limits_ok and args.out:
            tt, qq, vv, aa = design.trajectory.sample(record_s, args.dt)
            meta = {"source": f"dynid excite --fourier {args.fourier} (period {design.trajectory.period_s:g} s, seed {args.seed}, "
                              f"condition number {design.condition_number:.6g}); starts and ends at rest"}
            files["trajectory"] = str(write_trajectory_csv(args.out, tt, qq, vv, aa, kinds=kinds, units=args.out_units,
                                                           meta=meta, staging=staging))
        if design.limits_ok and args.plot:
            files["plot"] = str(plot_motion(args.plot, t, q, joint_names=[j.name for j in model.joints], kinds=kinds,
                                            units=args.units or "si", limits=lim,
                                            title=f"optimised {args.fourier}-harmonic Fourier excitation",
                                            staging=staging))
        staging.commit()
    out["files"] = files
    if args.json:
        print_json(jsonable(out))
    else:
        _print_fourier(out)
    if not design.limits_ok:
        sys.stderr.write("dynid: error: the optimised trajectory violates joint limits on the 1 ms check grid; "
                         "no trajectory written\n")
        for v in design.check.violations:
            sys.stderr.write(f"dynid:   {v}\n")
        return EXIT_FAILED
    return EXIT_OK


def _compare_with_sine(out: dict, model, rq, ref, design, harmonics: int, periods: int, record_s: float) -> None:
    """``beats_sine``, the sine's use of the mechanism's own limits (which bind the Fourier design) and a note
    saying why when the Fourier design does not beat it."""
    r = out["reference"]
    cfg = model.configuration_check(rq)
    notes = []
    if cfg is not None:   # a mechanism: the Fourier design keeps its limits; does the sine?
        use = np.max(cfg.values, axis=0) / cfg.limits
        r["configuration_usage"] = {k: (float(v) if np.isfinite(v) else None) for k, v in zip(cfg.names, use)}
        r["configuration_ok"] = bool(np.all(use <= 1.0))
        if not r["configuration_ok"]:
            k = int(np.argmax(use))
            notes.append(f"the sine program leaves the mechanism's limits ({cfg.names[k]} at {100 * use[k]:.0f} %), "
                         "which the Fourier design keeps")
    out["beats_sine"] = bool(design.condition_number < r["condition_number"])
    top = harmonics * periods / record_s
    if not out["beats_sine"] and top < float(np.max(ref.freqs_hz)):
        notes.append(f"the series' highest harmonic ({top:.3g} Hz) is below the sine's frequencies (up to "
                     f"{float(np.max(ref.freqs_hz)):.3g} Hz): use --periods auto or more harmonics")
    if not out["beats_sine"] and not notes:
        notes.append("try more --restarts, another --seed or --dopt-weight 0 (the pure condition number)")
    if notes:
        out["sine_note"] = ("the Fourier design does not beat the sine program: " if not out["beats_sine"] else "") + \
            "; ".join(notes)


def _periods(text: str, limits, record_s: float, harmonics: int) -> int:
    from ..excite import choose_periods

    if str(text).strip().lower() == "auto":
        return choose_periods(limits, record_s, harmonics)
    try:
        p = int(text)
    except ValueError:
        raise ConfigError(f"--periods must be a whole number >= 1 or 'auto', got {text!r}") from None
    if p < 1:
        raise ConfigError(f"--periods must be >= 1, got {p}")
    return p


def _confounding_text(c: dict) -> str:
    """One line for a confounded group of the JSON (``Confounding.to_dict``)."""
    names = c["parameters"]
    who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    if c["combination"] is None:
        text = f"{who} {'is' if len(names) == 1 else 'are'} not excited by this motion"
    else:
        text = f"{who} are confounded: this motion determines them only as {c['combination']}"
    return text + (f"; {c['remedy']}" if c["remedy"] else "")


def _print_fourier(out: dict) -> None:
    fmt = _common.fmt
    lines = [f"Fourier excitation: {out['harmonics']} harmonics, period {fmt(out['period_s'], 4)} s, seed {out['seed']} "
             f"({fmt(out['run_time_s'], 3)} s)",
             f"condition number (base parameters): {fmt(out['condition_number'], 5)} "
             f"(unit columns: {fmt(out['condition_number_scaled'], 5)})"]
    if out.get("stopped_early"):
        lines.append(f"note: the search stopped at the time budget ({fmt(out['time_budget_s'], 4)} s): this is the best "
                     "design it had found (--time-budget gives it more)")
    if "reference" in out:
        r = out["reference"]
        lines.append(f"reference sine program: {fmt(r['condition_number'], 5)} (unit columns: "
                     f"{fmt(r['condition_number_scaled'], 5)}), {fmt(out['condition_ratio'], 4)} x the Fourier's")
        for c in r.get("confounded") or []:
            lines.append(f"reference sine program: {_confounding_text(c)}")
        if out.get("sine_note"):
            lines.append(f"note: {out['sine_note']}")
    lines.append(f"limits ok on the {1000 * out['check_grid_s']:g} ms grid: {'yes' if out['limits_ok'] else 'NO'}")
    for c in out["identifiability"]["confounded"]:
        lines.append(f"NOT IDENTIFIABLE: {_confounding_text(c)}")
    if out.get("limits_note"):
        lines.append(f"note: {out['limits_note']}")
    use = out["limit_usage"]
    rows = [[j + 1] + [("-" if use[k][j] is None else f"{100 * use[k][j]:.0f} %") for k in ("velocity", "acceleration")]
            + [fmt(out["peak_torque"][j], 4) if out["peak_torque"] else "-"] for j in range(len(use["velocity"]))]
    lines.append(_common.table(rows, ["joint", "velocity use", "acceleration use", "peak torque"]))
    cfg = out.get("configuration_usage") or {}
    if cfg:   # the mechanism's own limits (a hexapod's U joints, distance from singularity): the largest use of each kind
        kinds: dict[str, float] = {}
        for name, use in cfg.items():
            kind = name.split(",")[0]
            kinds[kind] = max(kinds.get(kind, 0.0), float("inf") if use is None else use)
        lines.append("mechanism limits used: " + ", ".join(f"{k} {100 * v:.0f} %" for k, v in kinds.items()))
    for k, v in out.get("files", {}).items():
        lines.append(f"{k}: {v}")
    print("\n".join(lines))
