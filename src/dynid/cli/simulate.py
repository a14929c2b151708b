"""``dynid simulate``: closed-loop scenarios with and without the additive-torque feed-forward."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .._atomic import commit_files
from ..io._fastcsv import format_rows
from .._json import jsonable
from ._common import EXIT_OK, Progress, print_json, table


def add_parser(sub) -> None:
    from ..sim.scenarios import SCENARIOS

    p = sub.add_parser(
        "simulate", help="closed-loop servo simulation: what the identified model buys",
        description="Run a built-in scenario: simulate the source's identification run on a representative robot, "
                    "identify it with dynid, then run the robot under a cascaded position/velocity servo with and "
                    "without the additive torque feed-forward (AdditiveTorqueDelay 3). Scenarios: scara-move "
                    "(600 mm at 900 mm/s, settling), delta-move (550 mm at 3000 mm/s, settling), puma-hold (axis 3 "
                    "oscillates, axis 2 holds 0: peak-to-peak error), scara-collision (detection delay of an "
                    "external torque step of 20 % of a joint's peak torque; false alarms over 60 s of motion, "
                    "thresholds derived from the identification residuals).")
    p.add_argument("--scenario", required=True, choices=list(SCENARIOS), help="built-in scenario")
    p.add_argument("--seed", type=int, default=0, help="seed of the simulated noise (default 0)")
    p.add_argument("--model-error", type=float, default=0.0, metavar="E",
                   help="move scenarios: scale the identified model parameters by seeded random factors in "
                        "[1-E, 1+E] before use (a deliberately worse model; default 0)")
    p.add_argument("--out", metavar="DIR", help="write the identification outputs (result.json, IDNT1.PRG, "
                   "IDNT1.REC), scenario.json and the controller logs (CSV: t, q, tau, dq, pcmd, vcmd, acmd, "
                   "taddcmd) into DIR")
    p.add_argument("--plot", metavar="FILE.png", help="PNG of position error and torque (needs matplotlib)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..io.outputs import write_outputs
    from ..sim._plot import plot_runs
    from ..sim.scenarios import run_scenario

    kwargs = {}
    if args.model_error:
        if args.scenario == "scara-collision":
            from ..errors import ConfigError

            raise ConfigError("--model-error applies to the move scenarios (scara-move, delta-move, puma-hold)")
        kwargs["model_error"] = args.model_error
    progress = Progress("simulate", quiet=args.json)
    progress(f"scenario {args.scenario}", 0.0)
    res = run_scenario(args.scenario, seed=args.seed, progress=progress.part(0.0, 0.9), **kwargs)
    progress("writing", 0.9)
    data = jsonable(res.to_dict())
    files: dict[Path, bytes] = {}
    if args.plot:
        first = next(iter(res.runs.values()))
        files[Path(args.plot)] = plot_runs(res.runs, f"dynid simulate --scenario {args.scenario}", t_end=first.t_end,
                                           joint_names=tuple(j.name for j in res.identification.plant.model.joints))
    if args.out:
        out = Path(args.out)
        logs = {}
        for label, r in res.runs.items():
            if label == "collision-free":
                continue   # 60 s of log: the statistics are in scenario.json
            names, arr = r.log_columns()
            logs[label] = out / f"{label.replace(' ', '-')}.csv"
            files[logs[label]] = (
                f"# scenario: {args.scenario}\n# run: {label}\n# sample_period_s: {float(r.t[1] - r.t[0])}\n"
                + ",".join(names) + "\n").encode() + format_rows(arr)
        data["files"] = {"result": str(out / "result.json"), "identification_record": str(out / "IDNT1.REC"),
                         "logs": {k: str(v) for k, v in logs.items()},
                         "thresholds": str(out / "thresholds.json") if res.thresholds is not None else None}
        if "collision" in logs:
            data["files"]["recorded_log"] = str(logs["collision"])
        files[out / "scenario.json"] = (json.dumps(data, indent=2) + "\n").encode()
        if res.thresholds is not None:
            files[out / "thresholds.json"] = (json.dumps(jsonable(res.thresholds.to_dict()), indent=2) + "\n").encode()
        write_outputs(res.identification, out, source={"scenario": args.scenario, "simulated": True},
                      extra_files={p.name: b for p, b in files.items() if p.parent == out},
                      also={p: b for p, b in files.items() if p.parent != out})   # (the plot: with them)
    elif files:
        commit_files(files)
    progress.close()
    if args.json:
        print_json(data)
    else:
        sys.stdout.write(_summary(args.scenario, data) + "\n")
    return EXIT_OK


def _fmt(x, unit: str = "", scale: float = 1.0) -> str:
    return "-" if x is None else f"{x * scale:.4g}{unit}"


def _summary(name: str, d: dict) -> str:
    src = d.get("source", {})
    if "settling_time_with_model_s" in d:
        rows = [("settling time without model", _fmt(d["settling_time_without_model_s"], " ms", 1e3),
                 _fmt(src.get("settling_time_without_model_s"), " ms", 1e3)),
                ("settling time with model", _fmt(d["settling_time_with_model_s"], " ms", 1e3),
                 _fmt(src.get("settling_time_with_model_s"), " ms", 1e3)),
                ("ratio", _fmt(d["settling_ratio"]), _fmt(src.get("ratio")))]
        head = f"{name}: PESETTLE {d['pesettle']} ({d['pesettle_units']}), TIMESETTLE {d['timesettle_s'] * 1e3:g} ms"
    elif "p2p_error_with_model" in d:
        rows = [("axis-2 p-p error without model [deg]", _fmt(d["p2p_error_without_model_deg"]),
                 _fmt(src.get("p2p_error_without_model"))),
                ("axis-2 p-p error with model [deg]", _fmt(d["p2p_error_with_model_deg"]),
                 _fmt(src.get("p2p_error_with_model"))),
                ("ratio", _fmt(d["p2p_ratio"]), _fmt(src.get("ratio")))]
        head = f"{name}: axis 3 SineWave, axis 2 commanded at 0"
    else:
        rows = [("detection delay", _fmt(d["detection_delay_s"], " ms", 1e3), "-"),
                ("false alarms", f"{d['false_alarms']} in {d['false_alarm_check_duration_s']:g} s", "-"),
                ("collision", f"{_fmt(d['collision_torque'])} on A{d['collision_joint']} at "
                              f"{d['collision_time_s']:.3f} s", "-")]
        head = f"{name}: thresholds from the identification residuals (TorqueErrorMax {d['torque_error_max']})"
    return head + "\n" + table(rows, ["", "dynid (simulated)", "source"])
