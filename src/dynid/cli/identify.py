"""``dynid identify``: condition a recording, fit a model, write IDNT<group>.PRG/.REC and result.json.

A thin layer over :class:`dynid.Identifier`: the flags are its keyword arguments.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..identification.consistent import DEFAULT_PRIOR_WEIGHT
from ..identification.identifier import Identifier
from ..identification.options import ESTIMATORS
from ..identification.solve import WEIGHTINGS
from . import _summary
from .registry import RunRegistration, add_registry_options
from ._common import EXIT_FAILED, EXIT_OK, HelpFormatter, Progress, add_units_option, parse_floats, print_json


def add_common_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, metavar="NAME", help="model name (see 'dynid models')")
    p.add_argument("--config", metavar="FILE", help="model configuration (JSON, YAML or TOML)")
    p.add_argument("--urdf", metavar="FILE", help="URDF of the robot (model 'serial')")
    p.add_argument("--friction", metavar="TERMS", help="friction model, e.g. viscous+coulomb+offset (overrides the "
                   "config; default: the config's, else 'auto': chosen by held-out error)")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "identify", help="identify a model from a recording",
        description="Identify the dynamic parameters of a model from a recording (CSV/NPZ/Parquet with t, q1.., "
                    "tau1.., optional dq.., ddq..). Writes IDNT<group>.PRG (softMC parameter program), "
                    "IDNT<group>.REC (record of the identification data) and result.json into --out. "
                    "Exit status 1 when the fit fails softMC's 50 % rule.",
        formatter_class=HelpFormatter)
    p.add_argument("recording", metavar="REC", help="recording file (CSV, NPZ, Parquet, ROS 2 .mcap bag of "
                   "sensor_msgs/JointState, UR RTDE log)")
    add_common_model_args(p)
    p.add_argument("--cutoff", type=_cutoff, default="auto", metavar="HZ|auto|default",
                   help="low-pass cutoff; 'auto' (default): the candidate (0.5, 1, 2, 4 x the motion-based cutoff) "
                        "with the lowest held-out torque error (two folds: fit 70 %% of the recording, validate on "
                        "the rest), chosen together with an 'auto' friction model and prior regularisation; "
                        "'default': 20 x the motion bandwidth, within 0.5 Hz .. min(125 Hz, 0.4 fs); a number "
                        "must obey softMC's rule: below 125 Hz (and the Nyquist frequency) and above the excitation "
                        "frequency of the motion (else exit 2)")
    p.add_argument("--regularize", type=_regularize, default="auto", metavar="R|auto",
                   help="identify the deviation from the a-priori model (URDF/config inertias): ridge of strength "
                        "R (relative to the largest singular value) toward it; 0 = off; 'auto' (default): 0, 0.01 "
                        "or 0.1 by held-out error where the model has a-priori inertias")
    p.add_argument("--topic", metavar="TOPIC", help="ROS 2 bag: the JointState topic to read when the bag has several "
                   "(joints are matched by the config's joint_names, else taken in the first message's order)")
    add_units_option(p, "the file")
    p.add_argument("--element", metavar="NAME", help="softMC element name in the PRG (default: robot type, or the axis name)")
    p.add_argument("--group", type=int, default=1, metavar="N", help="group number: output files IDNT<N>.PRG/.REC")
    p.add_argument("--out", default="dynid-out", metavar="DIR", help="output folder: this run's outputs replace an "
                   "earlier run's there (its report too, with --no-report); other files are kept; a failed or "
                   "interrupted run leaves it as it was")
    p.add_argument("--threshold", metavar="V[,V..]", help="velocity gating threshold per joint [rad/s or m/s] "
                   "(default: max(1 %% of peak velocity, 2 x velocity noise))")
    p.add_argument("--estimator", choices=ESTIMATORS, default="auto",
                   help="auto: wls, or consistent where a least-squares link of a URDF/DH robot is no rigid body; "
                        "wls: per-joint weighted least squares; ols: ordinary; irls: robust to outliers (raw torque); "
                        "consistent: physically consistent link inertias (model serial), pulled toward the URDF values "
                        "where the data are silent")
    p.add_argument("--prior-weight", type=float, default=DEFAULT_PRIOR_WEIGHT, metavar="W",
                   help="--estimator consistent: weight of the pull toward the model's prior (URDF) inertias; "
                        "1/sqrt(W) is the prior's relative standard deviation")
    p.add_argument("--decimate", type=int, metavar="K", help="fit on every K-th sample (default: fs / (10 x cutoff))")
    p.add_argument("--upper-threshold", metavar="V[,V..]",
                   help="also drop samples faster than this per joint (softMC's second threshold, semi-static models)")
    p.add_argument("--upper-fraction", type=float, metavar="F",
                   help="upper threshold as a fraction of each joint's peak velocity (default: none; 0.5 for "
                        "puma-gravity)")
    p.add_argument("--weighting", choices=WEIGHTINGS, default="residual_std", help="per-joint weighting of the fit")
    p.add_argument("--allowed", type=float, default=50.0, metavar="PCT", help="success threshold on the max relative error [%%]")
    p.add_argument("--trim", type=int, metavar="N", help="samples dropped at each end (default: 2 cutoff periods)")
    p.add_argument("--torque-delay", type=float, default=0.0, metavar="SEC",
                   help="the torque lags the positions by SEC seconds; shift it back before fitting")
    p.add_argument("--align", action="store_true", help="estimate the torque/position delay and align before fitting")
    p.add_argument("--payload-of", metavar="RESULT.json|PRG",
                   help="payload run (softMC IdentPayload): keep the robot identified in RESULT.json (or its folder, or "
                        "an IDNT<g>.PRG — dynid's or the controller's, read with this --model/--config/--urdf) fixed "
                        "and identify the payload mass/inertia, or, with a known payload mass in --config, the model's "
                        "payload coefficients (L^2, g*L, g*cos(alpha), ...)")
    p.add_argument("--threads", type=int, metavar="N", help="threads for the numerics (default: DYNID_NUM_THREADS, "
                   "else every core)")
    p.add_argument("--streaming", choices=("auto", "always", "never"), default="auto",
                   help="identify block by block in bounded memory: auto (recordings of 500 000 samples x joints and "
                        "more), always, or never (the whole recording in memory)")
    p.add_argument("--no-report", action="store_true", help="do not write report.html")
    add_registry_options(p)
    p.add_argument("--json", action="store_true", help="print result.json to stdout instead of the summary")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=run, outputs_of=lambda args: run_outputs(args.out, args.group))


def run_outputs(out: str, group: int) -> list[tuple[str, str, Path]]:
    """The files an identification into folder ``out`` writes, replaces or removes there (``--out``), for
    :func:`~dynid.cli._common.check_inputs_kept`."""
    from ..io.outputs import earlier_outputs

    return [("--out", out, p) for p in earlier_outputs(out, group)]


def _regularize(text: str):
    if text.strip().lower() == "auto":
        return "auto"
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0 or 'auto', got {text!r}")
    return value


def _cutoff(text: str):
    if text.strip().lower() == "auto":
        return "auto"
    if text.strip().lower() == "default":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a frequency in Hz or 'auto', got {text!r}") from None


def estimator(args) -> Identifier:
    """The :class:`Identifier` of the command line's options."""
    thr = parse_floats(args.threshold, "--threshold") if args.threshold else None
    upper = parse_floats(args.upper_threshold, "--upper-threshold") if args.upper_threshold else None
    one = lambda v: v[0] if v is not None and len(v) == 1 else v  # noqa: E731 - a single value for every joint
    return Identifier(args.model, config=args.config, urdf=args.urdf, friction=args.friction, cutoff=args.cutoff,
                      estimator=args.estimator, units=args.units, threshold=one(thr), upper_threshold=one(upper),
                      upper_fraction=args.upper_fraction, weighting=args.weighting, allowed=args.allowed,
                      trim=args.trim, torque_delay=args.torque_delay, align=args.align, decimate=args.decimate,
                      prior_weight=args.prior_weight, regularize=args.regularize, payload_of=args.payload_of,
                      element=args.element,
                      group=args.group, threads=args.threads,
                      topic=getattr(args, "topic", None),  # batch has no --topic
                      streaming=getattr(args, "streaming", "auto"))


def run(args) -> int:
    est = estimator(args)
    source = {"recording": str(Path(args.recording).resolve()), "units": args.units}
    if args.payload_of:
        source["payload_of"] = str(Path(args.payload_of).resolve())
    # the registry is opened (and the robot id found) before the long work; the run is recorded after the
    # outputs are written: a registry failing then ends with status 2, saying the outputs were written
    reg = RunRegistration(args.registry, args.robot, args.recording) if args.registry else None
    if reg is not None or (args.robot or "").strip():
        source["robot"] = reg.robot if reg is not None else args.robot.strip()
    run_id = None
    with Progress("payload" if args.payload_of else "identify", quiet=args.quiet or args.json) as progress:
        progress(f"reading {Path(args.recording).name}", 0.0)  # drawn before the (long) read of the recording
        try:
            est.fit(args.recording, progress=progress.part(0.05, 0.85), out_dir=args.out)
            source["units"] = est.units_                # given, or the file's '# units:' line
            progress("writing outputs" if args.no_report else "writing outputs and report", 0.85)
            history = reg.view(est.model_.with_info(source=source)) if reg is not None and not args.no_report else None
            written = est.write(args.out, source=source, report=not args.no_report, history=history)
            if reg is not None:
                run_id, stored = reg.record(est.model_, args.out, json.loads(written["result.json"].read_bytes()))
        finally:
            if reg is not None:
                reg.registry.close()
    if args.json:  # what was written, to the byte
        print_json(json.loads(written["result.json"].read_text(encoding="utf-8")))
    else:
        print(_summary.identification(est.result_, est.model_.element, args.recording))
        if est.payload_ is None:
            print("outputs: " + ", ".join(str(p) for p in written.values()))
        else:
            what = "payload" if est.payload_.mode == "properties" else "payload coefficients"
            print(f"\n{what} identified with the robot of {args.payload_of} held fixed:")
            for k, v in est.payload_.values.items():
                print(f"  {k} = {v:.6g} (std {est.payload_.std[k]:.2g})")
        if run_id is not None:
            print(f"{'recorded' if stored else 'already recorded (the same result)'} as run {run_id} of robot "
                  f"{reg.robot} in {reg.registry.display_url}")
    return EXIT_OK if est.success_ else EXIT_FAILED
