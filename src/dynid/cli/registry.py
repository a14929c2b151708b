"""``dynid registry``: the runs an identification registry holds — history, drift, robots — and ``add``.

Also the registry options of ``dynid identify`` (``--registry``, ``--robot``: :func:`add_registry_options`)
and what it does with them (:class:`RunRegistration`): the registry is opened and the robot id found
before the fit, so a wrong URL or a recording without a robot id fails before the long work; the run
is recorded after the outputs are written, and a registry that fails then ends the command with
status 2 and a message saying the outputs were written but the run was not registered (``dynid
registry add`` registers it later).
"""

from __future__ import annotations

import datetime as _dt
import math
import os
from pathlib import Path
from typing import Any, Mapping

from ..errors import ConfigError, DynidError
from ._common import EXIT_OK, HelpFormatter, fmt, note, print_json, table

URL_HELP = ("registry URL: sqlite:///PATH.db (a file, the default kind: a plain path is one too; an in-memory "
            "database such as sqlite:// is refused, its runs would be lost at exit) or "
            "postgresql://USER[:PASSWORD]@HOST[:PORT]/DB (needs the extra 'fleet': pip install 'dynid[fleet]')")


def add_registry_options(p) -> None:
    """``--registry URL`` and ``--robot ID`` of the commands that record runs (``identify``)."""
    p.add_argument("--registry", metavar="URL", help="record the run in this registry (time, model, parameters, std, "
                   "friction, metrics; a SQLite file is created when absent) and show the robot's history and drift "
                   "in the report; " + URL_HELP)
    p.add_argument("--robot", metavar="ID", help="robot id of the run (default: the recording's '# robot: ID' "
                   "metadata line)")


class RunRegistration:
    """The registry of one ``identify`` run.

    Parameters
    ----------
    url : str
        Registry URL (opened now: a bad URL or an unreachable server fails before the fit).
    robot : str or None
        ``--robot``; else the recording's ``# robot: ID`` metadata.
    recording : str
        The recording file (stored with its absolute path).
    """

    def __init__(self, url: str, robot: str | None, recording: str) -> None:
        from ..fleet.registry import Registry, robot_of

        self.robot = (robot or "").strip() or robot_of(recording)
        if not self.robot:
            raise ConfigError(f"{recording}: no robot id to record the run under: the recording has no "
                              "'# robot: ID' metadata line", hint="name the robot with --robot ID")
        self.recording = str(Path(recording).resolve())
        self.registry = Registry(url)
        self.time: str | None = None

    def _now(self) -> str:
        if self.time is None:
            self.time = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")
        return self.time

    def view(self, fitted) -> dict[str, Any]:
        """The robot's history with this run last (for the report), at the time the run is recorded with."""
        return self.registry.history_view(fitted, robot=self.robot, recording=self.recording, time=self._now())

    def record(self, fitted, out_dir: str, result: Mapping[str, Any]) -> tuple[int, bool]:
        """Record the run (``result``: its result.json as written); returns ``(run id, stored)`` — ``stored``
        False when the robot has this result already. A failure says that the outputs in ``out_dir`` were
        written."""
        from ..fleet.registry import RegistryError

        try:
            return self.registry.add(fitted, robot=self.robot, recording=self.recording, time=self._now(),
                                     result=result)
        except DynidError as err:
            raise RegistryError(
                f"the outputs in {out_dir} were written, but the run was not registered: {err.message}",
                hint=f"once the registry works: dynid registry add {out_dir} --robot {self.robot} "
                     f"--registry {self.registry.display_url}") from err
        finally:
            self.registry.close()


# ---------------------------------------------------------------------------------------------- dynid registry

def add_parser(sub) -> None:
    p = sub.add_parser(
        "registry", help="history and drift of the runs in an identification registry",
        description="Read the identification registry that 'dynid identify --registry URL' and 'dynid batch "
                    "--registry URL' write: every run of every robot (time, model, success, parameters with their "
                    "standard deviations, friction, metrics). 'drift' compares a robot's latest run with its first "
                    "run of the same model and configuration: a parameter drifted when its change exceeds 3 combined standard deviations "
                    "sqrt(std_first^2 + std_latest^2) (growing friction is the classic sign of wear).",
        formatter_class=HelpFormatter)
    cmds = p.add_subparsers(dest="registry_command", metavar="<what>", required=True)

    h = cmds.add_parser("history", help="the runs, oldest first", formatter_class=HelpFormatter,
                        description="List the runs of the registry (of one robot with --robot), oldest first. "
                                    "--json prints a list of {robot, time, model, success, parameters: {name: "
                                    "value}} (SI units), with id, friction, recording, std, units, status and "
                                    "metrics besides.")
    _common(h)
    h.add_argument("--robot", metavar="ID", help="only this robot's runs")
    h.set_defaults(run=run_history)

    d = cmds.add_parser("drift", help="a robot's latest run against its first, per parameter",
                        formatter_class=HelpFormatter,
                        description="Compare each parameter of the robot's latest run with its first run of the same "
                                    "model and configuration (geometry, payload, gravity, known parameters, joint "
                                    "names, transmission; the friction model and the limits may differ): runs of "
                                    "another model or configuration are skipped, and the output says which runs were "
                                    "compared and which were skipped and why (with --json on stderr). A run recorded "
                                    "by a dynid that kept no configuration is compared by model alone, and the "
                                    "output says so. change = latest - first, sigma = sqrt(std_first^2 + std_latest^2), significant when "
                                    "|change| > 3 sigma (parameters without a standard deviation, e.g. held ones, "
                                    "are never significant). --json prints a list of {name, first, latest, change, "
                                    "sigma, significant} (with unit, first_std, latest_std, z = change/sigma and the "
                                    "run ids first_run, latest_run).")
    _common(d)
    d.add_argument("--robot", metavar="ID", required=True, help="the robot")
    d.set_defaults(run=run_drift)

    r = cmds.add_parser("robots", help="the robots that have runs", formatter_class=HelpFormatter,
                        description="List the robot ids that have runs in the registry, with their number of runs.")
    _common(r)
    r.set_defaults(run=run_robots)

    a = cmds.add_parser("add", help="record an identification that is already written (its result.json)",
                        formatter_class=HelpFormatter,
                        description="Record the run of a folder written by 'dynid identify' (or its result.json) in "
                                    "the registry, e.g. after a registry failure. Its time is the result's creation "
                                    "time; the robot id comes from --robot, else from result.json's source, else "
                                    "from the recording's '# robot: ID' line. A result the robot has already (the "
                                    "same result.json content apart from its creation time) is not recorded again: "
                                    "the command says which run holds it and ends with status 0.")
    a.add_argument("result", metavar="RESULT", help="result folder (or its result.json)")
    _common(a, json_flag=False)
    a.add_argument("--robot", metavar="ID", help="robot id (default: result.json's source.robot, else the "
                   "recording's '# robot: ID' metadata line)")
    a.set_defaults(run=run_add)


def _common(p, json_flag: bool = True) -> None:
    p.add_argument("--registry", metavar="URL", required=True, help=URL_HELP)
    if json_flag:
        p.add_argument("--json", action="store_true", help="print JSON to stdout")
    p.add_argument("--debug", action="store_true", help="show tracebacks")


def _open(url: str):
    from ..fleet.registry import Registry

    return Registry(url, create=False)


def _when(iso: str | None) -> str:
    """``2025-03-01 14:05:00`` (UTC) of a stored ISO time."""
    return "-" if not iso else iso[:19].replace("T", " ")


def _max_error(run: Mapping[str, Any]) -> float | None:
    errs = [e for e in (run.get("metrics") or {}).get("max_relative_error") or [] if e is not None]
    return max(errs) if errs else None


def _success(v: bool | None) -> str:
    return "-" if v is None else "yes" if v else "NO"


def run_history(args) -> int:
    with _open(args.registry) as reg:
        runs = reg.runs_of(args.robot) if args.robot else reg.history()
    if args.json:
        print_json(runs)
        return EXIT_OK
    if not runs:
        print(f"registry {reg.display_url} holds no runs")
        return EXIT_OK
    rows = []
    for r in runs:
        err = _max_error(r)
        rows.append((r["id"], _when(r["time"]), r["robot"], r["model"], _success(r["success"]),
                     "-" if err is None else f"{100 * err:.2f} %", Path(r["recording"]).name if r["recording"] else "-"))
    print(table(rows, ["run", "time (UTC)", "robot", "model", "success", "max rel. error", "recording"]))
    return EXIT_OK


def run_drift(args) -> int:
    from ..fleet.registry import DRIFT_SIGMAS, drift_rows

    with _open(args.registry) as reg:
        plan = reg.comparison(args.robot)
    first, latest = plan.first, plan.latest
    rows = [dict(d, first_run=first["id"], latest_run=latest["id"]) for d in drift_rows(first, latest)]
    label = lambda run: f"run {run['id']} ({_when(run['time'])} UTC, {run['model']})"  # noqa: E731
    said = plan.describe(label) if plan.compared or plan.skipped else ["only one run: nothing to compare yet"]
    if args.json:
        print_json(rows)
        for line in said:          # which runs the rows compare: on stderr, stdout stays the JSON list
            note(line)
        return EXIT_OK
    print(f"robot {latest['robot']}: " + said[0])
    for line in said[1:]:
        print(line)
    if not plan.compared:
        return EXIT_OK
    out = []
    for d in rows:
        z = d["z"]
        out.append((d["name"], d["unit"] or "", fmt(d["first"]), fmt(d["latest"]),
                    "-" if d["change"] is None else f"{d['change']:+.4g}", fmt(d["sigma"], 3),
                    "-" if z is None else f"{z:+.1f}", "DRIFT" if d["significant"] else ""))
    print(table(out, ["parameter", "unit", "first", "latest", "change", "sigma", "change/sigma", "drift"]))
    flagged = [d for d in rows if d["significant"]]
    if flagged:
        parts = []
        for d in flagged:
            rel = d["change"] / abs(d["first"]) if d["first"] else math.nan
            parts.append(d["name"] + (f" ({100 * rel:+.1f} %)" if math.isfinite(rel) else ""))
        print(f"significant drift (|change| > {DRIFT_SIGMAS:g} sigma): " + ", ".join(parts))
    else:
        print(f"no parameter changed by more than {DRIFT_SIGMAS:g} sigma")
    return EXIT_OK


def run_robots(args) -> int:
    with _open(args.registry) as reg:
        counts = reg.run_counts()
    names = list(counts)
    if args.json:
        print_json(names)
    elif not names:
        print(f"registry {reg.display_url} holds no runs")
    else:
        print(table([(n, counts[n]) for n in names], ["robot", "runs"]))
    return EXIT_OK


def run_add(args) -> int:
    from ..fitted import FittedModel, read_result_json
    from ..fleet.registry import Registry, robot_of

    path, data = read_result_json(args.result)
    fitted = FittedModel.from_dict(data, where=str(path))
    source = data.get("source") if isinstance(data.get("source"), Mapping) else {}
    recording = source.get("recording")
    robot = (args.robot or "").strip() or str(source.get("robot") or "").strip()
    if not robot and recording and os.path.isfile(recording):
        robot = robot_of(recording) or ""
    if not robot:
        raise ConfigError(f"{path}: no robot id (neither in result.json's source nor in the recording's metadata)",
                          hint="name the robot with --robot ID")
    with Registry(args.registry) as reg:
        run_id, stored = reg.add(fitted, robot=robot, recording=recording, time=data.get("created"), result=data)
        print(f"{'recorded' if stored else 'already recorded:'} {path} as run {run_id} of robot {robot} in "
              f"{reg.display_url}" + ("" if stored else " (nothing added)"))
    return EXIT_OK
