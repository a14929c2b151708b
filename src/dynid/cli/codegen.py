"""``dynid codegen``: an identified model as C99, IEC 61131-3 Structured Text or Python source."""

from __future__ import annotations

import sys
from pathlib import Path

from ._common import EXIT_OK, Progress, RawDescriptionHelpFormatter, print_json
from ._source import add_model_source, load_model

SUFFIXES = {"c": (".c", ".h"), "st": (".st",), "python": (".py",)}
"""The files --out DIR gets per --lang: --name + these."""

DESCRIPTION = """\
Generate the torque of an identified model (RESULT.json, or a softMC IDNT<g>.PRG with --model and
--config: identified parameters, payload, friction and actuator terms, coupled motors; joint side, SI)
as source code for a controller, with common sub-expressions (SymPy's cse and printers):
  c       <name>.c + <name>.h: void dynid_torque(const double *q, const double *dq,
          const double *ddq, double *tau) and dynid_rigid_body_torque (without friction); C99,
          no allocation, no state
  st      IEC 61131-3 FUNCTION_BLOCK DYNID_TORQUE (q, dq, ddq : ARRAY[1..n] OF LREAL -> tau)
  python  a numpy module with torque(q, dq, ddq) for (n,) or (N, n) arrays
Models: serial (URDF/DH) and the catalogue models dynid derives (see 'dynid derive --help').
A model with a NaN or infinite parameter is refused (exit 2 naming the parameters): the code
would return it as torque. Needs the extra 'symbolic' (SymPy).
"""


def add_parser(sub) -> None:
    p = sub.add_parser("codegen", help="generate C / Structured Text / Python of an identified model",
                       description=DESCRIPTION, formatter_class=RawDescriptionHelpFormatter,
                       epilog="examples:\n  dynid codegen result/result.json --lang c --out controller/\n"
                              "  dynid codegen IDNT1.PRG --model scara4 --config scara.yaml --lang st --out plc/")
    add_model_source(p)
    p.add_argument("--lang", choices=("c", "st", "python"), required=True, help="output language")
    p.add_argument("--out", metavar="DIR", required=True, help="folder for the generated files")
    p.add_argument("--name", default="dynid_model", metavar="NAME",
                   help="file name stem, C include guard (NAME_H) and Python module name (default dynid_model): an "
                        "identifier in C, IEC 61131-3 ST and Python - a letter first, then letters, digits and single "
                        "underscores, at most 63 characters, no keyword - else refused (exit 2)")
    p.add_argument("--json", action="store_true", help="print a summary as JSON")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=run, outputs_of=lambda args: [("--out", args.out, Path(args.out) / (args.name + suffix))
                                                     for suffix in SUFFIXES[args.lang]])


def run(args) -> int:
    from ..symbolic import generate_code

    progress = Progress("codegen", quiet=args.json)
    progress("reading the model", 0.0)
    fitted = load_model(args)
    code = generate_code(fitted, args.lang, name=args.name, progress=progress.part(0.05, 0.9))
    progress("writing", 0.9)
    paths = code.write(args.out)
    progress.close()
    summary = {"lang": code.lang, "files": [str(p) for p in paths], "joints": code.n_joints,
               "operations": code.operations, "common_subexpressions": code.intermediates, "time_s": code.time_s}
    if args.json:
        print_json(summary)
    else:
        sys.stdout.write(f"{code.lang}: {code.n_joints} joints, {code.operations} operations after "
                         f"{code.intermediates} common sub-expressions ({code.time_s:.1f} s)\n")
        for p in paths:
            sys.stdout.write(f"  {p}\n")
    return EXIT_OK
