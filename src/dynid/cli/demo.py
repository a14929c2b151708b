"""``dynid demo``: the main job on the built-in simulated robot, no hardware or data needed."""

from __future__ import annotations

import numpy as np

from ..demo import run_demo
from ..io.result_json import jsonable
from ..outputs import result_dict
from . import _summary
from ._common import EXIT_FAILED, EXIT_OK, Progress, fmt, print_json, table


def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="simulate a robot, identify it and write all outputs",
                       description="With no hardware and no data: simulate a vertical crank-arm axis (softMC rotary "
                                   "model 3) running the softMC identification motion, identify it, validate the model "
                                   "on a second motion, and write IDNT1.PRG, IDNT1.REC, result.json and the simulated "
                                   "recordings into --out.")
    p.add_argument("--out", default="dynid-demo", metavar="DIR", help="output folder (default: ./dynid-demo)")
    p.add_argument("--json", action="store_true", help="print result.json (plus validation) as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=run)


def run(args) -> int:
    progress = Progress("demo", quiet=args.quiet or args.json)
    res = run_demo(args.out, progress=progress)
    from ..report import Validation, write_report

    res.files["report.html"] = write_report(args.out, validation=Validation.from_prediction(res.validation,
                                                                                            "validation_run.csv"))
    progress.close()
    ident, val = res.identification, res.validation
    nrmse = val.nrmse("rms")
    if args.json:
        d = result_dict(ident, element="A1", group=1)
        d["validation"] = jsonable({"nrmse": nrmse, "relative_error": val.relative_error()})
        d["true_values"] = res.true_values
        print_json(d)
    else:
        print("dynid demo: a simulated vertical crank arm (rotary3) runs the softMC identification motion\n"
              "(SineWave -120 -> 120 deg at 0.5 Hz, 20 s, 1 kHz, 0.5 % torque noise, 20-bit encoder).\n")
        print(_summary.identification(ident, "A1", "the simulated recording"))
        print()
        rows = []
        for i, name in enumerate(ident.plant.param_names):
            true = res.true_values[name]
            v = ident.theta[i]
            rows.append((name, fmt(true, 6), fmt(v, 6), f"{100 * (v - true) / true:+.2f} %" if true else "-"))
        print("identified vs the simulator's true values:")
        print(table(rows, ["parameter", "true", "identified", "error"]))
        print(f"\nvalidation on a different motion (-60 -> 110 deg at 0.8 Hz): torque NRMSE "
              + ", ".join(f"{100 * x:.2f} %" for x in np.atleast_1d(nrmse)))
        print("outputs in " + str(args.out) + ": " + ", ".join(sorted(res.files)))
    return EXIT_OK if ident.success else EXIT_FAILED
