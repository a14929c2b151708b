"""``dynid demo``: the main job on the built-in simulated robot, no hardware or data needed."""

from __future__ import annotations

from ._common import EXIT_FAILED, EXIT_OK, Progress, fmt, print_json, table


def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="simulate a robot, identify it and write all outputs",
                       description="With no hardware and no data: simulate a 4-axis SCARA running the source's softMC "
                                   "identification program (Move {-160,-160,0,-350}, SineWave {160,160,150,350}, "
                                   "SineWaveFreq 0.3*{1,1.27,1.43,1.13}, 20 s), identify it, validate the model on a "
                                   "second motion, and write IDNT1.PRG, IDNT1.REC, result.json, report.html and the "
                                   "simulated recordings into --out.")
    p.add_argument("--out", default="dynid-demo", metavar="DIR", help="output folder (default: ./dynid-demo)")
    p.add_argument("--json", action="store_true", help="print result.json (plus validation) as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=run)


def run(args) -> int:
    import numpy as np

    from ..demo import run_demo
    from .._json import jsonable
    from ..io.outputs import result_dict
    from . import _summary

    with Progress("demo", quiet=args.quiet or args.json) as progress:
        res = run_demo(args.out, progress=progress)
    ident, val = res.identification, res.validation
    nrmse = val.nrmse("rms")
    element = ident.plant.model.element
    if args.json:
        d = result_dict(ident, element=element, group=1)
        d["validation"] = jsonable({"nrmse": nrmse, "relative_error": val.relative_error(),
                                    "model_error_vs_true": res.validation_model_error})
        d["true_values"] = res.true_values
        print_json(d)
    else:
        print("dynid demo: a simulated 4-axis SCARA runs the source's softMC identification program\n"
              "(Move {-160,-160,0,-350}, SineWave {160,160,150,350}, SineWaveFreq 0.3*{1,1.27,1.43,1.13} Hz, 20 s at "
              "1 kHz,\n0.5 % torque noise, 20-bit encoders).\n")
        print(_summary.identification(ident, element, "the simulated recording"))
        print()
        rows = []
        for i, name in enumerate(ident.plant.param_names):
            true = res.true_values[name]
            v = ident.theta[i]
            rows.append((name, fmt(true, 6), fmt(v, 6), f"{100 * (v - true) / true:+.2f} %" if true else "-"))
        print("identified vs the simulator's true values:")
        print(table(rows, ["parameter", "true", "identified", "error"]))
        print("\nvalidation on a different SineWave program, torque NRMSE per axis:")
        print("  identified model vs the simulated robot's true model: "
              + ", ".join(f"{100 * x:.2f} %" for x in res.validation_model_error))
        print("  prediction vs the measured torque (includes noise, servo ripple, sticking): "
              + ", ".join(f"{100 * x:.2f} %" for x in np.atleast_1d(nrmse)))
        print("outputs in " + str(args.out) + ": " + ", ".join(sorted(res.files)))
    return EXIT_OK if ident.success else EXIT_FAILED
