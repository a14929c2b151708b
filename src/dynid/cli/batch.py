"""``dynid batch``: identify every recording of a folder or glob, serially or on a Dask cluster.

A thin layer over :func:`dynid.fleet.batch.run_batch`: the identification flags are those of ``dynid
identify``; each recording goes to ``OUTDIR/<stem>/`` and ``OUTDIR/summary.csv`` gets a row per recording.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..fleet.batch import SUMMARY_NAME, BatchInterrupted, BatchResult, find_recordings, run_batch
from ..identification.consistent import DEFAULT_PRIOR_WEIGHT
from ..identification.options import ESTIMATORS
from ..identification.solve import WEIGHTINGS
from . import _common
from ._common import EXIT_FAILED, EXIT_OK, Progress, add_units_option, print_json, table, warn, wrap
from .identify import _cutoff, _regularize, add_common_model_args, estimator, run_outputs

EXIT_INTERRUPTED = 130

DESCRIPTION = """\
Identify every recording into OUTDIR/<recording stem>/ (the files 'dynid identify' writes) and write
OUTDIR/summary.csv: a row per recording with robot, status, success, max relative error per axis,
paths and message. Folders give their .csv/.npz/.parquet/.mcap files; globs are expanded by dynid
(quote them). A recording that cannot be identified fails alone. The robot id of a recording is its
'# robot: ID' line, else --robot, else the file stem.
"""

EPILOG = """\
schedulers:
  serial           one run after another in this process (the default)
  local            a Dask cluster on this machine: a single-threaded worker process per core
                   (--workers N)
  tcp://HOST:8786  a running Dask scheduler, e.g. started with
                     dask scheduler                              (prints its address)
                     dask worker tcp://HOST:8786 --nthreads 1    (on each machine)
                   the workers need the same dynid ('pip install dynid[fleet]') and must see the
                   recordings and OUTDIR at the same paths (a shared file system)
Every run uses --threads threads (default 1) on every scheduler: the parameters are identical.

Exit status: 0 every recording identified and passed; 1 some failed (the summary says why);
2 usage errors (no recordings, bad options, no scheduler at ADDRESS); 130 interrupted (Ctrl-C): the
runs that completed keep their folders (each whole), summary.csv lists the others as 'interrupted',
no half-written folder is left.
"""


def add_parser(sub) -> None:
    p = sub.add_parser(
        "batch", help="identify many recordings (serially or on a Dask cluster)",
        description=DESCRIPTION,
        epilog=EPILOG, formatter_class=_common.RawDescriptionHelpFormatter)
    p.add_argument("recordings", nargs="+", metavar="DIR|GLOB", help="folders, recording files or glob patterns")
    add_common_model_args(p)
    p.add_argument("--out", required=True, metavar="OUTDIR", help="output folder (a subfolder per recording)")
    p.add_argument("--scheduler", default="serial", metavar="serial|local|ADDRESS",
                   help="where the runs go: serial, local (a Dask cluster on this machine) or the address of a "
                        "running Dask scheduler (tcp://host:8786)")
    p.add_argument("--workers", type=int, metavar="N", help="--scheduler local: worker processes (default: one per core)")
    p.add_argument("--timeout", type=float, default=5.0, metavar="SEC",
                   help="--scheduler ADDRESS: how long to wait for the scheduler and its first worker")
    p.add_argument("--registry", metavar="URL", help="record every run in this registry (sqlite:///runs.db, "
                   "postgresql://...)")
    p.add_argument("--robot", metavar="ID", help="robot id of recordings without a '# robot: ID' line "
                   "(default: the file stem)")
    p.add_argument("--threads", type=int, default=1, metavar="N", help="threads of each run's numerics")
    p.add_argument("--cutoff", type=_cutoff, default="auto", metavar="HZ|auto|default",
                   help="low-pass cutoff, as for 'dynid identify' (default: auto)")
    p.add_argument("--regularize", type=_regularize, default="auto", metavar="R|auto",
                   help="ridge toward the a-priori model, as for 'dynid identify' (default: auto)")
    add_units_option(p, "the files")
    p.add_argument("--topic", metavar="TOPIC", help="ROS 2 bags: the JointState topic to read when a bag has several")
    p.add_argument("--element", metavar="NAME", help="softMC element name in the PRGs")
    p.add_argument("--group", type=int, default=1, metavar="N", help="group number: files IDNT<N>.PRG/.REC")
    p.add_argument("--threshold", metavar="V[,V..]", help="velocity gating threshold per joint [rad/s or m/s]")
    p.add_argument("--estimator", choices=ESTIMATORS, default="auto", help="as for 'dynid identify'")
    p.add_argument("--prior-weight", type=float, default=DEFAULT_PRIOR_WEIGHT, metavar="W",
                   help="--estimator consistent: weight of the pull toward the prior inertias")
    p.add_argument("--decimate", type=int, metavar="K", help="fit on every K-th sample")
    p.add_argument("--weighting", choices=WEIGHTINGS, default="residual_std", help="per-joint weighting of the fit")
    p.add_argument("--allowed", type=float, default=50.0, metavar="PCT",
                   help="success threshold on the max relative error [%%]")
    p.add_argument("--trim", type=int, metavar="N", help="samples dropped at each end")
    p.add_argument("--torque-delay", type=float, default=0.0, metavar="SEC", help="the torque lags the positions by SEC")
    p.add_argument("--align", action="store_true", help="estimate the torque/position delay and align before fitting")
    p.add_argument("--no-report", action="store_true", help="do not write report.html into the folders")
    p.add_argument("--json", action="store_true", help="print the summary as JSON (a row per recording)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no line per run on stderr")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=run, upper_threshold=None, upper_fraction=None, payload_of=None, inputs_of=_inputs_of,
                   outputs_of=_outputs_of)


def _inputs_of(args) -> list:
    """The recordings (for :func:`~dynid.cli._common.check_inputs_kept`)."""
    return [("DIR|GLOB", str(p), p) for p in find_recordings(args.recordings, exclude=args.out)]


def _outputs_of(args) -> list:
    """summary.csv and each recording's run folder (for :func:`~dynid.cli._common.check_inputs_kept`)."""
    found = [("--out", args.out, Path(args.out) / SUMMARY_NAME)]
    for p in find_recordings(args.recordings, exclude=args.out):
        found += [("--out", args.out, f) for _, _, f in run_outputs(os.path.join(args.out, p.stem), args.group)]
    return found


def _line(res: BatchResult, done: int, total: int) -> str:
    took = f", {res.elapsed_s:.1f} s" if res.elapsed_s == res.elapsed_s else ""
    head = f"[{done}/{total}] {res.stem} (robot {res.robot}): {res.status}"
    if res.success:
        worst = max((v for v in res.max_relative_error if v == v), default=float("nan"))
        return f"{head}, max rel. error {100 * worst:.2f} %{took}"
    return f"{head}{took}: {res.message}"


def run(args) -> int:
    identifier = estimator(args)   # the Identifier of the identify flags, shared by every run
    paths = find_recordings(args.recordings, exclude=args.out)
    quiet = args.quiet or args.json
    with Progress("batch", quiet=quiet) as progress:
        def on_result(res: BatchResult, done: int, total: int) -> None:
            if not quiet:
                progress.log(f"dynid: {_line(res, done, total)}")
            for said in res.warnings:
                warn(f"{res.stem}: {said}")

        try:
            results = run_batch(paths, args.out, identifier, scheduler=args.scheduler, workers=args.workers,
                                registry=args.registry, robot=args.robot, report=not args.no_report,
                                connect_timeout_s=args.timeout, progress=progress, on_result=on_result)
        except BatchInterrupted as stop:
            progress.close()
            ok = sum(r.status != "interrupted" for r in stop.results)
            where = f"; {stop.summary} lists them" if stop.summary is not None else ""
            sys.stderr.write(f"dynid: interrupted; {ok} of {len(stop.results)} runs completed (their folders are "
                             f"whole){where}; no half-written folder was left\n")
            return EXIT_INTERRUPTED
    summary = os.path.join(args.out, SUMMARY_NAME)
    if args.json:
        print_json({"summary": summary, "scheduler": args.scheduler, "recordings": len(results),
                    "succeeded": sum(r.success for r in results), "runs": [r.to_dict() for r in results]})
    else:
        rows = []
        for r in results:
            worst = max((v for v in r.max_relative_error if v == v), default=None)
            rows.append((r.stem, r.robot, r.status,
                         "-" if worst is None else f"{100 * worst:.2f} %", "" if r.success else r.message))
        print(table(rows, ["recording", "robot", "status", "max rel. err", "message"], width=_common.WIDTH))
        n_ok = sum(r.success for r in results)
        print(wrap(f"{n_ok} of {len(results)} recordings identified and passed; summary: {summary}"))
    return EXIT_OK if all(r.success for r in results) else EXIT_FAILED
