"""``dynid derive``: the closed-form model of a robot (Lagrange or Newton–Euler), for people and programs."""

from __future__ import annotations

import sys
from pathlib import Path

from .._atomic import commit_files
from ._common import EXIT_OK, Progress, RawDescriptionHelpFormatter, print_json

FILES = ("derivation.md", "derivation.json")
"""What --out DIR gets."""

DESCRIPTION = """\
Derive the closed-form dynamic model of a robot from its geometry: torques, mass matrix D_ij,
the velocity-product coefficients D_ijk (tau_i = sum_j D_ij ddq_j + sum_jk D_ijk dq_j dq_k + D_i),
gravity D_i, the regressor and the base-parameter combinations, as expressions in q1..qn, dq1..dqn,
ddq1..ddqn, g and the model's parameters p1..pP (the order of 'parameters'). Models: serial (--urdf,
or a DH table in --config) and the catalogue models with a physical chain (rotary1-3, linear1-3,
traverse, scara3/4, written in their catalogue parameters). --numeric substitutes the URDF's
inertias (or the configuration's 'parameters'). Needs the extra 'symbolic' (SymPy).
"""

EPILOG = """\
examples:
  dynid derive --urdf arm.urdf --numeric --json          closed form with the URDF's values
  dynid derive --model scara4 --config scara.json --out derivation/   Markdown + LaTeX
  dynid derive --urdf arm.urdf --method lagrange --json    the trace form (slower, O(n^4))
"""


def add_parser(sub) -> None:
    p = sub.add_parser("derive", help="closed-form model by Lagrange or Newton-Euler (SymPy)", description=DESCRIPTION,
                       epilog=EPILOG, formatter_class=RawDescriptionHelpFormatter)
    p.add_argument("--model", metavar="NAME", help="model name (default: serial when --urdf is given)")
    p.add_argument("--config", metavar="FILE", help="model configuration (JSON, YAML or TOML)")
    p.add_argument("--urdf", metavar="FILE", help="URDF of the robot (model 'serial')")
    p.add_argument("--method", choices=("newton-euler", "lagrange"), default="newton-euler",
                   help="derivation: recursive Newton-Euler (default, O(n)) or the Lagrange trace form (O(n^4))")
    p.add_argument("--numeric", action="store_true", help="substitute the parameter values (URDF inertias, or "
                   "'parameters' in --config), leaving q, dq, ddq and g")
    p.add_argument("--json", action="store_true", help="print the expressions as JSON (strings SymPy parses)")
    p.add_argument("--out", metavar="DIR", help="write derivation.md (Markdown with LaTeX) and derivation.json into DIR")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=run, outputs_of=lambda args: [("--out", args.out, Path(args.out) / name) for name in FILES]
                   if args.out else [])


def _build(args):
    from ..identification.identifier import Identifier
    from ..models import model_class

    name = args.model or ("serial" if args.urdf else None)
    if name is None:
        from ..errors import ConfigError

        raise ConfigError("give --model NAME (or --urdf FILE for a serial robot)")
    config = args.config if args.config else (None if args.urdf or name == "serial" else dict(model_class(name).example_config))
    return Identifier(name, config=config, urdf=args.urdf).build_model()


def run(args) -> int:
    import json

    from ..symbolic import derive

    progress = Progress("derive", quiet=args.json)
    progress("building the model", 0.0)
    model = _build(args)
    d = derive(model, method=args.method, numeric=args.numeric, progress=progress.part(0.02, 0.12))
    data = d.to_json(progress=progress.part(0.12, 0.6 if args.out else 0.99))   # printing: most of the time
    if args.out:
        progress("writing derivation.md", 0.6)
        out = Path(args.out)
        commit_files({out / FILES[0]: d.to_markdown(progress=progress.part(0.6, 0.99)).encode(),
                      out / FILES[1]: (json.dumps(data, indent=1) + "\n").encode()})
    progress.close()
    if args.json:
        print_json(data)
        return EXIT_OK
    lines = [f"{model.name}: closed form by {d.method} in {d.time_s:.2f} s ({d.n_joints} joints, {len(d.parameters)} "
             f"parameters{', values substituted' if d.numeric else ''})"]
    if d.geometry:
        lines.append(f"geometry: {d.geometry}")
    for i, e in enumerate(d.mass_matrix):
        text = ", ".join(str(x) for x in e)
        lines.append(f"D_{i + 1}j = [{text if len(text) < 300 else text[:300] + ' ...'}]")
    for i, e in enumerate(d.gravity):
        text = str(e)
        lines.append(f"D_{i + 1} = {text if len(text) < 300 else text[:300] + ' ...'}")
    lines.append("base parameters: " + "; ".join(str(b) for b in d.base_parameters))
    if args.out:
        lines.append("written: " + ", ".join(str(Path(args.out) / name) for name in FILES))
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK
