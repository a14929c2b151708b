"""``dynid units``: TorqueFactor, TorqueThreshold and DS402 per-mille from the drive's motor data."""

from __future__ import annotations

import sys
import warnings

import numpy as np

from ..errors import ConfigError
from .._json import jsonable
from ._common import EXIT_OK, parse_floats, print_json, table, warn

KINDS = ("rotary", "screw", "pulley", "linear-motor")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "units", help="TorqueFactor, TorqueThreshold and per-mille torque offset from motor data",
        description="Compute softMC's TorqueFactor (TFac: Tfb = I / TFac, I = current actual value 0x6078 in "
                    "0.001*MICONT), the TorqueThreshold matching MICONT (1000/TFac) and MIPEAK "
                    "(1000*MIPEAK/(TFac*MICONT)), and the DS402 torque offset 0x60B2 of additive torques "
                    "(per mille of the rated torque = Taddcmd*TFac). KIND: rotary (MKT, gear ratio), screw or "
                    "pulley (rotary motor driving a linear axis: first-principles F = I*MKT*GR*2pi/lead; "
                    "--softmc also gives the seed's 1e6*SL/(MKT*MICONT*GR), with a unit warning), linear-motor "
                    "(MKF). Without KIND it is inferred from the options given.")
    p.add_argument("kind", nargs="?", choices=KINDS, help="axis kind (default: inferred)")
    p.add_argument("--mkt", type=float, help="torque constant MKT (0x2039) [N m/A]")
    p.add_argument("--mkf", type=float, help="force constant MKF (0x2038) of a linear motor [N/A]")
    cur = p.add_mutually_exclusive_group()
    cur.add_argument("--micont", type=float, help="continuous current MICONT as read from 0x6075 [mA]")
    cur.add_argument("--micont-a", type=float, help="continuous current MICONT [A] (the drive's parameter)")
    pk = p.add_mutually_exclusive_group()
    pk.add_argument("--mipeak", type=float, help="peak current MIPEAK as read from 0x2036 [mA]")
    pk.add_argument("--mipeak-a", type=float, help="peak current MIPEAK [A]")
    p.add_argument("--gear-ratio", type=float, default=1.0, help="motor turns per joint (or screw) turn (default 1)")
    p.add_argument("--lead-mm", type=float, help="screw lead: travel per screw revolution [mm/rev]")
    p.add_argument("--pulley-radius-mm", type=float, help="pulley radius [mm] (lead = 2*pi*r)")
    p.add_argument("--softmc", action="store_true", help="screw/pulley: also the seed's softMC-compatible factor "
                   "(warns: inconsistent units)")
    p.add_argument("--torque", metavar="T1,T2,..", help="additive torques [N m or N] to convert to per mille "
                   "(DS402 0x60B2)")
    p.add_argument("--rated-torque-mnm", type=float, help="motor rated torque 0x6076 [mN m]: per mille of it "
                   "(with --gear-ratio) instead of via TorqueFactor")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=run)


def _kind(args) -> str:
    if args.kind:
        return args.kind
    if args.mkf is not None:
        return "linear-motor"
    if args.pulley_radius_mm is not None:
        return "pulley"
    if args.lead_mm is not None:
        return "screw"
    return "rotary"


def _need(value, flag: str, kind: str):
    if value is None:
        raise ConfigError(f"dynid units {kind} needs {flag}", hint="see 'dynid units --help'")
    return value


def run(args) -> int:
    from ..runtime import drive_units as U

    kind = _kind(args)
    notes: list[str] = []
    if args.micont is None and args.micont_a is None:
        raise ConfigError("MICONT is required: --micont [mA] or --micont-a [A]")
    micont_ma = args.micont if args.micont is not None else 1000.0 * args.micont_a
    if args.micont is not None and args.micont < 50:
        notes.append(f"--micont {args.micont:g} mA is a very small continuous current: if it is in A, use --micont-a")
    mipeak_ma = args.mipeak if args.mipeak is not None else (None if args.mipeak_a is None else 1000.0 * args.mipeak_a)
    gr = args.gear_ratio
    res: dict = {"kind": kind, "micont_ma": micont_ma, "mipeak_ma": mipeak_ma, "gear_ratio": gr}
    if kind == "rotary":
        mkt = _need(args.mkt, "--mkt", kind)
        tfac = U.torque_factor_rotary(mkt, micont_ma, gr)
        res.update(mkt=mkt, torque_unit="N m", formula="TFac = 1e6 / (MKT * MICONT[mA] * GR)")
    elif kind == "linear-motor":
        mkf = _need(args.mkf, "--mkf", kind)
        tfac = U.torque_factor_linear_motor(mkf, micont_ma)
        res.update(mkf=mkf, torque_unit="N", formula="TFac = 1e6 / (MKF * MICONT[mA])")
    else:
        mkt = _need(args.mkt, "--mkt", kind)
        if kind == "pulley":
            radius_mm = _need(args.pulley_radius_mm, "--pulley-radius-mm", kind)
            lead_m = U.pulley_lead(radius_mm * 1e-3)
        else:
            lead_m = _need(args.lead_mm, "--lead-mm", kind) * 1e-3
        tfac = U.torque_factor_screw(mkt, micont_ma, lead_m, gr)
        res.update(mkt=mkt, lead_m=lead_m, lead_mm_per_rev=lead_m * 1e3, torque_unit="N",
                   formula="TFac = 1e6 * lead[m] / (2*pi * MKT * MICONT[mA] * GR)  (F = I*MKT*GR*2*pi/lead)")
        if args.softmc:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                res["torque_factor_softmc"] = U.torque_factor_screw_softmc(mkt, micont_ma, lead_m * 1e3, gr)
            res["softmc_formula"] = "TFac = 1e6 * SL[mm/rev] / (MKT * MICONT[mA] * GR)"
            res["softmc_to_physical_ratio"] = res["torque_factor_softmc"] / tfac
            notes += [f"{w.message}: dynid units screw without --softmc" for w in caught]
    res["torque_factor"] = tfac
    res["torque_threshold_continuous"] = U.torque_threshold_continuous(tfac)
    res["rated_torque"] = res["torque_threshold_continuous"]
    if mipeak_ma is not None:
        res["torque_threshold_peak"] = U.torque_threshold_peak(tfac, mipeak_ma, micont_ma)
        res["peak_torque"] = res["torque_threshold_peak"]
    res["softmc"] = {"TorqueFactor": tfac, "TorqueThreshold_MICONT": res["torque_threshold_continuous"],
                     "TorqueThreshold_MIPEAK": res.get("torque_threshold_peak")}
    if args.torque:
        tq = np.asarray(parse_floats(args.torque, "--torque"))
        if args.rated_torque_mnm is not None:
            pm, sat = U.permille_from_rated_torque(tq, args.rated_torque_mnm, gr)
            res["permille_basis"] = "rated torque 0x6076 [mN m] / gear ratio"
        else:
            pm, sat = U.permille_from_torque_factor(tq, tfac)
            res["permille_basis"] = "Taddcmd * TorqueFactor (per mille of 1000/TFac)"
        res["torque"] = tq
        res["permille"] = pm.astype(int)
        res["permille_saturated"] = sat
    res["warnings"] = notes
    if args.json:
        print_json(jsonable(res))
        return EXIT_OK
    for msg in notes:
        warn(msg)
    unit = res["torque_unit"]
    rows = [("TorqueFactor", f"{tfac:.9g}", f"raw current units per {unit}", res["formula"]),
            ("TorqueThreshold (MICONT)", f"{res['torque_threshold_continuous']:.9g}", unit, "1000 / TFac")]
    if "torque_threshold_peak" in res:
        rows.append(("TorqueThreshold (MIPEAK)", f"{res['torque_threshold_peak']:.9g}", unit,
                     "1000 * MIPEAK / (TFac * MICONT)"))
    if "torque_factor_softmc" in res:
        rows.append(("TorqueFactor (softMC formula)", f"{res['torque_factor_softmc']:.9g}", "see warning",
                     res["softmc_formula"]))
    if "permille" in res:
        for t_, p_ in zip(res["torque"], res["permille"]):
            rows.append((f"0x60B2 for {t_:g} {unit}", str(int(p_)), "per mille", res["permille_basis"]))
    sys.stdout.write(table(rows, ["quantity", "value", "unit", "formula"]) + "\n")
    return EXIT_OK
