"""``dynid models``: list every model with joints, parameters, units and configuration keys."""

from __future__ import annotations

import argparse

from ..models import model_class, model_names
from ._common import EXIT_OK, print_json, table


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
    if args.name:
        d = descs[0]
        print(f"{d['name']}: {d['title']}  [{d['status']}]  softMC DynamicModel = {d['softmc_dynamic_model']}, "
              f"element {d['element']}")
        print("joints: " + ", ".join(f"{j['name']} ({j['type']})" for j in d["joints"]))
        print(table([(p["index"], p["name"], p["unit"], p["role"], p["description"]) for p in d["parameters"]],
                    ["#", "parameter", "unit", "role", "meaning"]))
        if d["model_config_keys"]:
            print("model keys: " + "; ".join(f"{k}: {d['config_keys'][k]}" for k in d["model_config_keys"]))
        if d["notes"]:
            print("notes: " + d["notes"])
        print("common keys: gravity, payload {mass, inertia}, friction, joint_names, parameters, position_limits, "
              "velocity_limits, torque_limits (see 'dynid models --json')")
        return EXIT_OK
    rows = [(d["name"], ", ".join(j["type"] for j in d["joints"]), len(d["parameters"]),
             " ".join(p["name"] for p in d["parameters"]), d["status"]) for d in descs]
    print(table(rows, ["model", "joints", "#", "parameters", "status"]))
    print("\n'dynid models NAME' shows one model's parameters, units and configuration keys.")
    return EXIT_OK
