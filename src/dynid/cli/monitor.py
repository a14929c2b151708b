"""``dynid monitor``: replay a recorded log through the torque-error collision detector."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from ..errors import ConfigError, FileFormatError
from .._json import jsonable
from ._common import EXIT_OK, Progress, add_units_option, parse_floats, print_json, table
from ._source import ON_THRESHOLD_HELP, add_model_source, load_model


def add_parser(sub) -> None:
    p = sub.add_parser(
        "monitor", help="replay a recording through the collision detector",
        description="Replay REC through softMC's torque-error detector (TE = Taddcmd - Tfb, filtered with "
                    "TorqueErrorFilter, |TE| > TorqueErrorMax with velocity gating) and report every detection "
                    "with time, joint and error. Taddcmd comes from REC's taddcmd1.. columns (the controller's "
                    "log), else from the feed-forward of its pcmd/vcmd/acmd columns (--delay), else from the model "
                    "on the recorded motion; the model is RESULT.json or a softMC IDNT<g>.PRG (--model/--config). "
                    "Taddcmd is checked against TorqueThreshold (--threshold, else the model's: the PRG's "
                    "<axis>.TorqueThreshold or the configuration's torque_limits): exceeding it is an error, as "
                    "on softMC, unless --on-threshold clamp. Thresholds: --thresholds FILE (thresholds.json or "
                    "scenario.json of 'dynid simulate'), --temax, or derived from the identification residuals in "
                    "the IDNT<group>.REC next to RESULT.json (a better model gives tighter thresholds).")
    add_model_source(p)
    p.add_argument("recording", metavar="REC", help="log: t, q1.., tau1.. [, dq1.., taddcmd1.., pcmd1.., vcmd1.., "
                   "acmd1..] (CSV/.npz)")
    p.add_argument("--thresholds", metavar="FILE", help="thresholds JSON (as written by 'dynid simulate --out')")
    p.add_argument("--temax", metavar="T1,T2,..", help="TorqueErrorMax per joint [N m or N] (overrides derivation)")
    p.add_argument("--temax-lowvel", metavar="T1,T2,..", help="threshold below the velocity gate (default: --temax)")
    p.add_argument("--v-gate", metavar="V1,V2,..", help="velocity gate per joint [rad/s or m/s] with --temax "
                   "(default 0: no gating)")
    p.add_argument("--tef", type=float, default=0.25, help="TorqueErrorFilter in (0, 1] (default 0.25)")
    p.add_argument("--k-sigma", type=float, default=5.0, help="derivation: band width in RMS units (default 5)")
    p.add_argument("--margin", type=float, default=1.25, help="derivation: factor over the band (default 1.25)")
    p.add_argument("--gate-factor", type=float, default=3.0,
                   help="derivation: velocity gate = this x identification velocity threshold (default 3)")
    p.add_argument("--low-velocity", choices=("derive", "ignore"), default="derive",
                   help="derivation: threshold below the gate, or ignore those samples")
    p.add_argument("--delay", type=int, default=3, metavar="N", help="AdditiveTorqueDelay [cycles] of the log "
                   "(aligns vcmd with taddcmd; default 3)")
    p.add_argument("--threshold", metavar="T1,T2,..", help="TorqueThreshold per joint [N m or N] (default: the "
                   "model's, from the PRG's <axis>.TorqueThreshold or the configuration's torque_limits; else none)")
    p.add_argument("--on-threshold", choices=("error", "clamp"), default="error", help=ON_THRESHOLD_HELP)
    add_units_option(p, "REC")
    p.add_argument("--json", action="store_true", help="print the detections as JSON")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=run)


def _monitor(args, ident, n: int):
    from ..io.rec import read_rec
    from ..runtime.collision import CollisionMonitor, DerivedThresholds, ThresholdOptions, thresholds_from_fit

    if args.temax:
        temax = parse_floats(args.temax, "--temax")
        low = parse_floats(args.temax_lowvel, "--temax-lowvel") if args.temax_lowvel else temax
        gate = parse_floats(args.v_gate, "--v-gate") if args.v_gate else [0.0]
        b = lambda x: np.broadcast_to(np.asarray(x, dtype=float), (n,))  # noqa: E731
        return CollisionMonitor(b(temax), args.tef, b(gate), b(low)), {"source": "--temax"}
    if args.thresholds:
        path = Path(args.thresholds)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise FileFormatError(f"{path}: not a readable thresholds JSON ({err})") from err
        data = data.get("thresholds", data)
        try:
            mon = DerivedThresholds.monitor_from_dict(data)
        except (KeyError, TypeError, ValueError) as err:
            raise FileFormatError(f"{path}: no thresholds in it ({type(err).__name__}: {err})",
                                  hint="pass thresholds.json or scenario.json written by 'dynid simulate --out'") from err
        if mon.n_joints != n:
            raise ConfigError(f"{path}: thresholds for {mon.n_joints} joints, the model has {n}")
        return mon, {"source": str(path), **data}
    folder = Path(args.result)
    folder = folder if folder.is_dir() else folder.parent
    rec_path = folder / f"IDNT{ident.group}.REC"
    if not rec_path.exists():
        raise FileFormatError(f"no thresholds: {rec_path} (the identification record) is missing",
                              hint="pass --thresholds FILE or --temax T1,T2,.., or keep IDNT<group>.REC next to "
                                   "result.json (dynid identify writes it)")
    header, _, ch = read_rec(rec_path)
    opts = ThresholdOptions(tef=args.tef, k_sigma=args.k_sigma, margin=args.margin, gate_factor=args.gate_factor,
                            low_velocity=args.low_velocity)
    thr = thresholds_from_fit(ident.plant, ident.theta, ch["pfb"], ch["vfb"], ch["afb"], ch["tfbRaw"],
                              float(header["sample_period_s"]), header["velocity_threshold"], opts)
    return thr.monitor, {"source": str(rec_path), **thr.to_dict()}


def run(args) -> int:
    from ..io.controller_log import read_controller_log
    from ..runtime.collision import replay
    from ..runtime.feedforward import FeedForward, check_torque_threshold, feedforward_batch

    progress = Progress("monitor", quiet=args.json)
    progress("thresholds", 0.0)
    ident = load_model(args)
    model = ident.model
    n = model.n_joints
    torque_threshold = (parse_floats(args.threshold, "--threshold") if args.threshold is not None
                        else model.config.torque_limits)
    if torque_threshold is not None and len(torque_threshold) == 1:     # one value for every joint
        torque_threshold = list(torque_threshold) * n
    monitor, info = _monitor(args, ident, n)
    progress(f"reading {Path(args.recording).name}", 0.2)
    log = read_controller_log(args.recording, n_joints=n, joint_kinds=model.joint_kinds, units=args.units,
                              joint_names=model.config.joint_names, torque_constants=model.config.torque_constants)
    rec = log.recording
    d = args.delay
    vcmd = log.get("vcmd")
    if log.get("taddcmd") is not None:
        tadd, how = log.get("taddcmd"), "taddcmd columns of the log"
    elif log.get("pcmd") is not None and vcmd is not None and log.get("acmd") is not None:
        ff = FeedForward.from_result(ident, delay_cycles=d, on_threshold="report")   # checked below, as every Taddcmd
        z = np.zeros(n)
        tadd = feedforward_batch(ff, log.get("pcmd"), vcmd, log.get("acmd"), prefill=ff.torque(log.get("pcmd")[0], z, z)).taddcmd
        how = f"feed-forward of the log's pcmd/vcmd/acmd (delay {d} cycles)"
    else:

        pred = ident.predict(rec)              # edge rows inside the filter transient are dropped
        rec = rec.slice(int(pred.rows[0]), int(pred.rows[-1]) + 1)
        vcmd = None if vcmd is None else vcmd[pred.rows]
        tadd, how = pred.tau, "model torque on the recorded motion (conditioned as the identification)"
    tadd, exceeded = check_torque_threshold(tadd, torque_threshold, args.on_threshold, t=rec.t,
                                            joint_names=[j.name for j in model.joints])
    v = rec.qd if rec.qd is not None else np.gradient(rec.q, rec.t, axis=0, edge_order=2)
    v_cmd = None
    if vcmd is not None:
        v_cmd = np.vstack([np.repeat(vcmd[:1], d, axis=0), vcmd[: vcmd.shape[0] - d]]) if d else vcmd
    progress("replaying the detector", 0.6)
    rep = replay(monitor, rec.t, tadd, rec.tau, v, v_cmd)
    progress.close()
    delay_est = None
    if all(log.get(k) is not None for k in ("pcmd", "vcmd", "acmd")) and rec.n_samples > 40:
        from ..runtime.feedforward import estimate_delay_cycles

        delay_est, _ = estimate_delay_cycles(FeedForward.from_result(ident), log.get("pcmd"), vcmd, log.get("acmd"),
                                             rec.tau, max_delay=min(10, rec.n_samples // 2 - 1))
    dets = [x.to_dict() for x in rep.detections]
    out = {
        "detections": dets,
        "n_detections": len(dets),
        "first_detection_s": dets[0]["t_s"] if dets else None,
        "joints": list(monitor.joint_names),
        "rows": int(rec.n_samples),
        "duration_s": float(rec.t[-1] - rec.t[0]),
        "taddcmd_source": how,
        "estimated_additive_torque_delay_cycles": delay_est,
        "max_abs_te": np.abs(rep.te).max(axis=0),
        "torque_threshold": None if torque_threshold is None else np.asarray(torque_threshold, dtype=float),
        "on_threshold": args.on_threshold,
        "threshold_exceeded_cycles": exceeded.sum(axis=0),
        "thresholds": {"torque_error_max": monitor.temax, "torque_error_max_low_velocity": monitor.temax_lowvel,
                       "torque_error_filter": monitor.tef, "velocity_gate": monitor.v_gate,
                       "hold_cycles": monitor.hold_cycles, "source": info.get("source"),
                       "expected_false_alarms_per_hour": info.get("expected_false_alarms_per_hour")},
    }
    if args.json:
        print_json(jsonable(out))
        return EXIT_OK
    sys.stdout.write(f"{len(dets)} detection(s) in {out['duration_s']:.4g} s of {args.recording} "
                     f"(Taddcmd from the {how})\n")
    if dets:
        rows = [(f"{x['t_s']:.4f}", x["joint_name"], f"{x['te']:.4g}", f"{x['limit']:.4g}", f"{x['peak_abs_te']:.4g}",
                 f"{1e3 * x['duration_s']:.4g}") for x in dets[:50]]
        sys.stdout.write(table(rows, ["t [s]", "joint", "TE", "limit", "peak |TE|", "duration [ms]"]) + "\n")
    return EXIT_OK
