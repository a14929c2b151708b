"""``dynid models``: list every model with joints, parameters, units and configuration keys."""

from __future__ import annotations

import argparse

from ..models import model_class, model_names
from ._common import EXIT_OK, WIDTH, print_json, table, wrap


def add_parser(sub) -> None:
    p = sub.add_parser("models", help="list the models, their parameters and configuration keys",
                       description="List every model: name, joints (rotary/linear), parameter names, units and "
                                   "softMC numbering, configuration keys and status (verified/experimental).")
    p.add_argument("name", nargs="?", help="show one model in detail")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(run=run)


def _describe(name: str) -> dict:
    d = model_class(name).example().describe()
    d["example_config"] = dict(model_class(name).example_config)
    return d


def run(args) -> int:
    names = [args.name] if args.name else model_names()
    descs = [_describe(n) for n in names]
    if args.json:
        print_json(descs if not args.name else descs[0])
        return EXIT_OK
    print(_detail(descs[0]) if args.name else _listing(descs))
    return EXIT_OK


def _joint_kinds(joints: list[dict]) -> str:
    """``rotary, rotary, linear, rotary`` as ``2 rotary, linear, rotary``."""
    runs: list[list] = []
    for j in joints:
        if runs and runs[-1][0] == j["type"]:
            runs[-1][1] += 1
        else:
            runs.append([j["type"], 1])
    return ", ".join(kind if n == 1 else f"{n} {kind}" for kind, n in runs)


def _parameter_names(names: list[str]) -> str:
    """The names, space separated; ``body.name`` for every body and the same names as
    ``{link1 link2}.{m mx}`` (shell brace expansion order: body by body)."""
    bodies: dict[str, list[str]] = {}
    for n in names:
        body, dot, name = n.partition(".")
        if not dot:
            return " ".join(names)
        bodies.setdefault(body, []).append(name)
    each = next(iter(bodies.values()), [])
    if len(bodies) < 2 or names != [f"{b}.{n}" for b in bodies for n in each]:
        return " ".join(names)
    return "{" + " ".join(bodies) + "}.{" + " ".join(each) + "}"


def _listing(descs: list[dict]) -> str:
    """Every model, one row each; the parameter names wrap under their column (100 columns)."""
    rows = [(d["name"], _joint_kinds(d["joints"]), len(d["parameters"]), d["status"],
             _parameter_names([p["name"] for p in d["parameters"]])) for d in descs]
    return (table(rows, ["model", "joints", "#", "status", "parameters"], width=WIDTH)
            + "\n\n'dynid models NAME' shows one model's parameters, units and configuration keys.")


def _detail(d: dict) -> str:
    """One model: header, joints, parameter table, its own and the common configuration keys, notes."""
    lines = [wrap(f"{d['name']}: {d['title']}  [{d['status']}]  softMC DynamicModel = {d['softmc_dynamic_model']}, "
                  f"element {d['element']}"),
             wrap("joints: " + ", ".join(f"{j['name']} ({j['type']})" for j in d["joints"])),
             table([(p["index"], p["name"], p["unit"], p["role"], p["description"]) for p in d["parameters"]],
                   ["#", "parameter", "unit", "role", "meaning"], width=WIDTH)]
    if d["model_config_keys"]:
        lines.append("model keys:")
        lines += [wrap(f"  {k}: {d['config_keys'][k]}", indent="      ") for k in d["model_config_keys"]]
    if d["notes"]:
        lines.append("notes:")
        lines.append(wrap("  " + d["notes"], indent="  "))
    lines.append(wrap("common keys: gravity, payload {mass, inertia}, friction, joint_names, parameters, "
                      "position_limits, velocity_limits, torque_limits (see 'dynid models --json')"))
    return "\n".join(lines)
