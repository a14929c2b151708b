"""``dynid identify``: condition a recording, fit a model, write IDNT<group>.PRG/.REC and result.json."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from ..signal.conditioning import ConditioningOptions
from ..identification.consistent import DEFAULT_PRIOR_WEIGHT, ConsistentOptions
from ..models.config import load_config_file
from ..errors import ConfigError
from ..identification.solve import WEIGHTINGS
from ..identification.pipeline import ESTIMATORS, IdentifyOptions, identify
from ..io.readers import read_recording
from ..models import Plant, make_model
from ..io.outputs import result_dict, write_outputs
from . import _summary
from ._common import EXIT_FAILED, EXIT_OK, Progress, parse_floats, print_json


def add_common_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, metavar="NAME", help="model name (see 'dynid models')")
    p.add_argument("--config", metavar="FILE", help="model configuration (JSON, YAML or TOML)")
    p.add_argument("--urdf", metavar="FILE", help="URDF of the robot (model 'serial')")
    p.add_argument("--friction", metavar="TERMS", help="friction model, e.g. viscous+coulomb+offset (overrides the config)")


def build_model(args):
    config = load_config_file(args.config) if args.config else {}
    if args.friction:
        config["friction"] = args.friction
    kwargs = {}
    if getattr(args, "urdf", None):
        kwargs["urdf"] = args.urdf
    try:
        return make_model(args.model, config, **kwargs)
    except TypeError as err:
        if "urdf" in kwargs:
            raise ConfigError(f"model {args.model!r} does not take --urdf", hint="use --model serial for URDF robots") from err
        raise


def add_parser(sub) -> None:
    p = sub.add_parser(
        "identify", help="identify a model from a recording",
        description="Identify the dynamic parameters of a model from a recording (CSV/NPZ/Parquet with t, q1.., "
                    "tau1.., optional dq.., ddq..). Writes IDNT<group>.PRG (softMC parameter program), "
                    "IDNT<group>.REC (record of the identification data) and result.json into --out. "
                    "Exit status 1 when the fit fails softMC's 50 %% rule.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("recording", metavar="REC", help="recording file")
    add_common_model_args(p)
    p.add_argument("--cutoff", type=_cutoff, metavar="HZ|auto", help="low-pass cutoff (default: 20 x the motion "
                   "bandwidth, within 0.5 Hz .. min(125 Hz, 0.4 fs)); 'auto': the candidate (0.5, 1, 2, 4 x that) "
                   "with the lowest held-out torque error, fitting 70 %% of the recording and validating on the rest")
    p.add_argument("--units", choices=("si", "softmc"), default="si",
                   help="position units of the file: si (rad, m) or softmc (deg, mm)")
    p.add_argument("--element", metavar="NAME", help="softMC element name in the PRG (default: robot type, or the axis name)")
    p.add_argument("--group", type=int, default=1, metavar="N", help="group number: output files IDNT<N>.PRG/.REC")
    p.add_argument("--out", default="dynid-out", metavar="DIR", help="output folder")
    p.add_argument("--threshold", metavar="V[,V..]", help="velocity gating threshold per joint [rad/s or m/s] "
                   "(default: max(1 %% of peak velocity, 2 x velocity noise))")
    p.add_argument("--estimator", choices=ESTIMATORS, default="wls",
                   help="wls: per-joint weighted least squares; ols: ordinary; irls: robust to outliers (raw torque); "
                        "consistent: physically consistent link inertias (model serial), pulled toward the URDF values "
                        "where the data are silent")
    p.add_argument("--prior-weight", type=float, default=DEFAULT_PRIOR_WEIGHT, metavar="W",
                   help="--estimator consistent: weight of the pull toward the model's prior (URDF) inertias; "
                        "1/sqrt(W) is the prior's relative standard deviation")
    p.add_argument("--decimate", type=int, metavar="K", help="fit on every K-th sample (default: fs / (10 x cutoff))")
    p.add_argument("--upper-threshold", metavar="V[,V..]",
                   help="also drop samples faster than this per joint (softMC's second threshold, semi-static models)")
    p.add_argument("--upper-fraction", type=float, metavar="F",
                   help="upper threshold as a fraction of each joint's peak velocity (puma-gravity default 0.5)")
    p.add_argument("--weighting", choices=WEIGHTINGS, default="residual_std", help="per-joint weighting of the fit")
    p.add_argument("--allowed", type=float, default=50.0, metavar="PCT", help="success threshold on the max relative error [%%]")
    p.add_argument("--trim", type=int, metavar="N", help="samples dropped at each end (default: 2 cutoff periods)")
    p.add_argument("--torque-delay", type=float, default=0.0, metavar="SEC",
                   help="the torque lags the positions by SEC seconds; shift it back before fitting")
    p.add_argument("--align", action="store_true", help="estimate the torque/position delay and align before fitting")
    p.add_argument("--payload-of", metavar="RESULT.json",
                   help="payload run (softMC IdentPayload): keep the robot identified in RESULT.json fixed and identify "
                        "the payload mass/inertia, or, with a known payload mass in --config, the model's payload "
                        "coefficients (L^2, g*L, g*cos(alpha), ...)")
    p.add_argument("--no-report", action="store_true", help="do not write report.html")
    p.add_argument("--json", action="store_true", help="print result.json to stdout instead of the summary")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=run)


def _cutoff(text: str):
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a frequency in Hz or 'auto', got {text!r}") from None


def identify_options(args) -> IdentifyOptions:
    thr = parse_floats(args.threshold, "--threshold") if args.threshold else None
    if thr is not None and len(thr) == 1:
        thr = thr[0]
    upper = parse_floats(args.upper_threshold, "--upper-threshold") if args.upper_threshold else None
    if upper is not None and len(upper) == 1:
        upper = upper[0]
    copt = ConditioningOptions(cutoff_hz=None if args.cutoff == "auto" else args.cutoff, velocity_threshold=thr, trim=args.trim,
                               torque_delay_s=args.torque_delay, upper_velocity_threshold=upper,
                               upper_velocity_fraction=args.upper_fraction)
    return IdentifyOptions(conditioning=copt, estimator=args.estimator, weighting=args.weighting, allowed_error=args.allowed / 100.0,
                           consistent=ConsistentOptions(prior_weight=args.prior_weight),
                           align_torque=args.align, decimate=args.decimate, select_cutoff=args.cutoff == "auto")


def run(args) -> int:
    if args.payload_of:
        return run_payload(args)
    model = build_model(args)
    plant = Plant(model)
    options = identify_options(args)
    if args.group < 0:
        raise ConfigError(f"--group must be >= 0, got {args.group}")
    rec = read_recording(args.recording, n_joints=model.n_joints, joint_kinds=model.joint_kinds, units=args.units,
                         transmission=model.config.transmission)
    progress = Progress("identify", quiet=args.quiet or args.json)
    ident = identify(rec, plant, options, progress=progress)
    progress.close()
    element = args.element or ident.model.element
    source = {"recording": str(Path(args.recording).resolve()), "units": args.units}
    written = write_outputs(ident, args.out, element=element, group=args.group, source=source)
    if not args.no_report:  # rendered from the files just written, as 'dynid report' would
        from ..report import write_report

        written["report.html"] = write_report(args.out)
    if args.json:
        print_json(result_dict(ident, element=element, group=args.group, source=source))
    else:
        print(_summary.identification(ident, element, args.recording))
        print("outputs: " + ", ".join(str(p) for p in written.values()))
    return EXIT_OK if ident.success else EXIT_FAILED


def run_payload(args) -> int:
    from ..fitted import load
    from ..identification.payload import identify_payload

    idm = load(args.payload_of)
    model = idm.plant.model
    if args.model != model.name:
        raise ConfigError(f"--model {args.model} does not match the model {model.name!r} of {args.payload_of}",
                          hint="a payload run keeps the robot identified without payload: use the same model")
    user = load_config_file(args.config) if args.config else {}
    options = identify_options(args)
    rec = read_recording(args.recording, n_joints=model.n_joints, joint_kinds=model.joint_kinds, units=args.units,
                         transmission=model.config.transmission)
    progress = Progress("payload", quiet=args.quiet or args.json)
    est = identify_payload(rec, idm, config=user, options=options, progress=progress)
    progress.close()
    ident = est.identification
    element = args.element or idm.element
    source = {"recording": str(Path(args.recording).resolve()), "units": args.units,
              "payload_of": str(Path(args.payload_of).resolve())}
    extra = {"payload": est.to_dict()}
    write_outputs(ident, args.out, element=element, group=args.group, source=source,
                  properties=est.prg_properties(), extra=extra)
    if not args.no_report:
        from ..report import write_report

        write_report(args.out)
    if args.json:
        print_json(result_dict(ident, element=element, group=args.group, source=source, extra=extra))
    else:
        print(_summary.identification(ident, element, args.recording))
        what = "payload" if est.mode == "properties" else "payload coefficients"
        print(f"\n{what} identified with the robot of {args.payload_of} held fixed:")
        for k, v in est.values.items():
            print(f"  {k} = {v:.6g} (std {est.std[k]:.2g})")
    return EXIT_OK if ident.success else EXIT_FAILED
