"""``dynid feedforward``: the additive torque (softMC TADDCOMMAND) of a commanded trajectory."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ..errors import ConfigError
from .._atomic import atomic_write_bytes
from ..io._fastcsv import format_rows
from .._json import jsonable
from ._common import EXIT_OK, Progress, add_units_option, parse_floats, print_json, warn
from ._source import ON_THRESHOLD_HELP, add_model_source, load_model


def add_parser(sub) -> None:
    p = sub.add_parser(
        "feedforward", help="additive torque of a commanded trajectory (batch feed-forward)",
        description="Compute, for every controller cycle of TRAJ, the additive torque the model identified in "
                    "RESULT.json (or a softMC IDNT<g>.PRG with --model/--config) gives (rigid body + payload + "
                    "friction, from the command: pcmd = q, vcmd = dq, acmd = ddq; without dq/ddq columns they are "
                    "differentiated), checked against TorqueThreshold (--threshold, else the model's: the PRG's "
                    "<axis>.TorqueThreshold or the configuration's torque_limits) and delayed by "
                    "AdditiveTorqueDelay cycles, exactly as the per-cycle runtime object does. Exceeding "
                    "TorqueThreshold is an error, as on softMC (--on-threshold clamp: clamp and flag instead). "
                    "Writes CSV: t, taddcmd1..n (the value sent at that cycle), exceeded1..n (1 where the value "
                    "computed at that cycle exceeded the threshold) and, with --torque-factor, permille1..n for "
                    "DS402 0x60B2.")
    add_model_source(p)
    p.add_argument("trajectory", metavar="TRAJ", help="commanded trajectory: t, q1.. [, dq1.., ddq1..] (CSV/.npz)")
    p.add_argument("--delay", type=int, default=3, metavar="N", help="AdditiveTorqueDelay [cycles] (default 3)")
    p.add_argument("--threshold", metavar="T1,T2,..", help="TorqueThreshold per joint [N m or N] (default: the "
                   "model's, from the PRG's <axis>.TorqueThreshold or the configuration's torque_limits; else none)")
    p.add_argument("--on-threshold", choices=("error", "clamp"), help=ON_THRESHOLD_HELP)
    p.add_argument("--no-clamp", action="store_true", help="only flag exceedances (exceeded columns): no error, no "
                   "clamping")
    p.add_argument("--payload-mass", type=float, metavar="KG", help="payload mass [kg] (default: the identified "
                   "configuration's)")
    p.add_argument("--payload-inertia", type=float, metavar="KGM2", help="payload inertia [kg m^2]")
    p.add_argument("--torque-factor", metavar="F1,F2,..", help="TorqueFactor per joint: adds per-mille columns "
                   "(Taddcmd * TorqueFactor, INTEGER16) for the drive's torque offset 0x60B2")
    add_units_option(p, "TRAJ")
    p.add_argument("--out", metavar="FILE", help="output CSV (default: standard output)")
    p.add_argument("--json", action="store_true", help="print a summary as JSON")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..io.controller_log import read_controller_log
    from ..runtime.feedforward import FeedForward, feedforward_batch
    from ..runtime.drive_units import permille_from_torque_factor

    progress = Progress("feedforward", quiet=args.json)
    progress(f"reading {Path(args.trajectory).name}", 0.0)
    if args.no_clamp and args.on_threshold:
        raise ConfigError("--no-clamp (flag only) and --on-threshold exclude each other", hint="give one of them")
    on_threshold = "report" if args.no_clamp else (args.on_threshold or "error")
    ident = load_model(args)
    model = ident.model
    n = model.n_joints
    log = read_controller_log(args.trajectory, n_joints=n, joint_kinds=model.joint_kinds, units=args.units,
                              require_tau=False, joint_names=model.config.joint_names,
                              torque_constants=model.config.torque_constants)
    rec = log.recording
    q = log.get("pcmd") if log.get("pcmd") is not None else rec.q
    dt = rec.sample_period
    qd = log.get("vcmd") if log.get("vcmd") is not None else (rec.qd if rec.qd is not None else
                                                              np.gradient(q, rec.t, axis=0, edge_order=2))
    qdd = log.get("acmd") if log.get("acmd") is not None else (rec.qdd if rec.qdd is not None else
                                                               np.gradient(qd, rec.t, axis=0, edge_order=2))
    thr = None if args.threshold is None else parse_floats(args.threshold, "--threshold")
    if args.delay < 0:
        raise ConfigError(f"--delay must be >= 0 cycles, got {args.delay}")
    ff = FeedForward.from_result(ident, delay_cycles=args.delay, torque_threshold=thr, on_threshold=on_threshold,
                                 payload_mass=args.payload_mass, payload_inertia=args.payload_inertia)
    progress("additive torque", 0.4)
    z = np.zeros(n)
    batch = feedforward_batch(ff, q, qd, qdd, prefill=ff.torque(q[0], z, z), t=rec.t)
    names = ["t"] + [f"taddcmd{j + 1}" for j in range(n)] + [f"exceeded{j + 1}" for j in range(n)]
    cols = [rec.t[:, None], batch.taddcmd, batch.exceeded.astype(float)]
    saturated = None
    if args.torque_factor:
        tf = parse_floats(args.torque_factor, "--torque-factor")
        if len(tf) not in (1, n):
            raise ConfigError(f"--torque-factor needs 1 or {n} values, got {len(tf)}")
        tf = np.broadcast_to(np.asarray(tf, dtype=float), (n,))
        pm = np.empty_like(batch.taddcmd)
        saturated = np.zeros(n, dtype=int)
        for j in range(n):
            p, s = permille_from_torque_factor(batch.taddcmd[:, j], tf[j])
            pm[:, j] = p
            saturated[j] = int(s.sum())
        names += [f"permille{j + 1}" for j in range(n)]
        cols.append(pm)
    progress("writing", 0.8)
    text = (",".join(names) + "\n").encode() + format_rows(np.hstack(cols))
    if args.out:
        atomic_write_bytes(args.out, text)
    progress.close()
    if not args.out and not args.json:
        sys.stdout.write(text.decode())
    summary = {"joints": [j.name for j in model.joints], "rows": int(rec.n_samples), "sample_period_s": dt,
               "delay_cycles": ff.delay_cycles, "torque_threshold": ff.torque_threshold,
               "on_threshold": ff.on_threshold,
               "exceeded_cycles": batch.n_exceeded, "peak_abs_taddcmd": np.abs(batch.computed).max(axis=0),
               "evaluation": ff.dynamics.kind, "out": args.out}
    if saturated is not None:
        summary["permille_saturated_cycles"] = saturated
    if args.json:
        print_json(jsonable(summary))
    elif np.any(batch.n_exceeded):
        warn("TorqueThreshold exceeded on " + ", ".join(f"{model.joints[j].name} ({int(c)} cycles)"
                                                         for j, c in enumerate(batch.n_exceeded) if c))
    return EXIT_OK
