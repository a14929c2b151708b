"""``dynid predict``: torques of an identified model for the motion of a recording."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .._atomic import Staging
from ..io._fastcsv import format_rows
from ..io.outputs import report_files
from ..io.readers import read_recording
from ..io.sources import long_source
from .._json import jsonable
from ..errors import ConfigError
from ._common import EXIT_OK, Progress, add_units_option, print_json, table
from ._source import add_model_source, is_prg_source, load_model


def add_parser(sub) -> None:
    p = sub.add_parser(
        "predict", help="torques the identified model gives for a motion",
        description="Compute the torque (rigid body + payload + friction, SI units) that the model identified in "
                    "RESULT.json (or a softMC IDNT<g>.PRG with --model/--config) gives for the motion in REC, "
                    "conditioned as in the identification (same cutoff). "
                    "Writes CSV with columns t, tau1..taun (joint side; a motor-side REC is converted by the transmission "
                    "recorded in RESULT.json); edge rows inside the filter transient are dropped. "
                    "If REC has torque columns, the per-joint errors are reported.")
    add_model_source(p)
    p.add_argument("recording", metavar="REC", help="recording with t, q1.. (tau1.. optional), a ROS 2 .mcap bag or a "
                   "UR RTDE log")
    p.add_argument("--topic", metavar="TOPIC", help="ROS 2 bag: the JointState topic to read when the bag has several")
    p.add_argument("--out", metavar="FILE", help="output CSV (default: standard output)")
    add_units_option(p, "REC")
    p.add_argument("--json", action="store_true", help="print the validation errors as JSON")
    p.add_argument("--report", metavar="FILE", help="also write an HTML validation report (errors per axis, "
                   "measured vs predicted torque, and the identification report of RESULT.json); its data are "
                   "kept beside it (FILE's stem + .validation.npz), so 'dynid report' re-renders it whole")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=run, outputs_of=lambda args: [("--report", args.report, f)
                                                     for f in report_files(args.report)[1:]] if args.report else [])


def run(args) -> int:
    if args.report and is_prg_source(args):
        raise ConfigError("--report shows the identification report of a result.json; a PRG holds no record of "
                          "the identification", hint="pass the result.json, or drop --report")
    with Progress("predict", quiet=args.quiet or args.json) as progress, Staging() as staging:
        progress(f"reading {Path(args.recording).name}", 0.0)
        fitted = load_model(args)
        model = fitted.model
        source = long_source(args.recording, model, units=args.units, topic=args.topic)
        if source is not None:                  # a long recording: block by block, the torques written as they come
            if args.report:
                raise ConfigError(f"{args.recording}: --report shows the whole prediction, and this recording is read "
                                  f"block by block ({source.n_samples_hint} samples or so)",
                                  hint="drop --report, or predict a cut of the recording for the report")
            report = _predict_blocks(args, fitted, source, progress.part(0.05, 0.95), staging)
            staging.commit()
        else:
            rec = read_recording(args.recording, n_joints=model.n_joints, joint_kinds=model.joint_kinds,
                                 units=args.units, require_tau=False, transmission=model.config.transmission,
                                 joint_names=model.config.joint_names, topic=args.topic,
                                 torque_constants=model.config.torque_constants)
            progress("model torque", 0.4)
            pred = fitted.predict(rec)
            if args.report:
                from ..report import write_validation_report

                progress("validation report", 0.7)
                write_validation_report(args.result, pred, args.report, source=args.recording, staging=staging)
            progress("writing the torques", 0.85)
            text = _header(model.n_joints) + format_rows(np.column_stack([pred.t, pred.tau]))
            if args.out:
                staging.write(args.out, text)
            staging.commit()                # the torques and the report together
            if not args.out and not args.json:
                sys.stdout.write(text.decode())
            report = _Errors(model.n_joints).add(pred).report() if pred.measured is not None else None
    if args.json:
        print_json(jsonable({"joints": [j.name for j in model.joints], "validation": report, "out": args.out}))
    elif report is not None:
        stream = sys.stdout if args.out else sys.stderr
        rows = [(j.name, f"{report['rmse'][k]:.4g}", f"{100 * report['nrmse_rms'][k]:.2f} %",
                 f"{100 * report['nrmse_range'][k]:.2f} %") for k, j in enumerate(model.joints)]
        stream.write(table(rows, ["axis", "RMSE", "RMSE/RMS(tau)", "RMSE/range(tau)"]) + "\n")
        stream.write(f"relative error ||tau - pred|| / ||tau|| = {100 * report['relative_error']:.2f} % over "
                     f"{report['rows']} rows\n")
    return EXIT_OK


def _header(n: int) -> bytes:
    return (",".join(["t"] + [f"tau{j + 1}" for j in range(n)]) + "\n").encode()


def _predict_blocks(args, fitted, source, progress, staging) -> dict | None:
    """The prediction of a long recording block by block: each block's rows written (``--out``, else stdout) as
    they come, the errors summed."""
    out = staging.open(args.out) if args.out else None
    write = out.write if out is not None else (lambda b: None if args.json else sys.stdout.write(b.decode()))
    errors = _Errors(fitted.model.n_joints)
    try:
        write(_header(fitted.model.n_joints))
        for pred in fitted.predict_blocks(source, progress=progress):
            write(bytes(format_rows(np.column_stack([pred.t, pred.tau]), threads=1)))
            if pred.measured is not None:
                errors.add(pred)
    finally:
        if out is not None:
            out.close()
    return errors.report() if errors.rows else None


class _Errors:
    """The prediction's errors against the measured torque, summed over its rows (whole or block by block)."""

    def __init__(self, n: int) -> None:
        self.rows, self.err2, self.meas2 = 0, np.zeros(n), np.zeros(n)
        self.lo, self.hi = np.full(n, np.inf), np.full(n, -np.inf)

    def add(self, pred) -> "_Errors":
        e = pred.tau - pred.measured
        self.rows += pred.t.size
        self.err2 += np.einsum("ij,ij->j", e, e)
        self.meas2 += np.einsum("ij,ij->j", pred.measured, pred.measured)
        self.lo = np.minimum(self.lo, pred.measured.min(axis=0))
        self.hi = np.maximum(self.hi, pred.measured.max(axis=0))
        return self

    def report(self) -> dict:
        rmse = np.sqrt(self.err2 / max(self.rows, 1))
        rms = np.sqrt(self.meas2 / max(self.rows, 1))
        span = self.hi - self.lo
        with np.errstate(divide="ignore", invalid="ignore"):
            return {"nrmse_rms": rmse / np.where(rms > 0, rms, np.nan),
                    "nrmse_range": rmse / np.where(span > 0, span, np.nan), "rmse": rmse,
                    "relative_error": float(np.sqrt(self.err2.sum() / self.meas2.sum())), "rows": int(self.rows)}
