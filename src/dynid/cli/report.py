"""``dynid report``: (re-)render the HTML report of a result folder, optionally with PNG figures."""

from __future__ import annotations

from pathlib import Path

from ..io.outputs import REPORT_NAME, report_files
from ._common import EXIT_OK, HelpFormatter, Progress, check_output


def add_parser(sub) -> None:
    p = sub.add_parser(
        "report", help="write the HTML report of an identification (and PNG figures)",
        description="Render report.html for a folder written by 'dynid identify' (result.json and IDNT<group>.REC; "
                    "nothing else but a stored validation is read): pass/fail banner, diagnostics with their "
                    "evidence plots, parameters, per-axis torque, velocity, friction and position plots, "
                    "conditioning facts. The page is one self-contained file (figures embedded, nothing loaded at "
                    "view time) and prints on A4. A validation section that 'dynid predict --report' or "
                    "'dynid demo' put into the same file is kept (its data are stored beside it, "
                    "<report>.validation.npz).",
        formatter_class=HelpFormatter)
    p.add_argument("result", metavar="RESULT_DIR", help="folder written by 'dynid identify' (or its result.json)")
    p.add_argument("--out", metavar="FILE", help="report file (default: RESULT_DIR/report.html)")
    p.add_argument("--figures", metavar="DIR", help="also write every figure as PNG into DIR (needs the extra "
                   "'report': pip install 'dynid[report]')")
    p.add_argument("--quiet", action="store_true", help="no progress bar, and do not print the path of the report")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=run, outputs_of=lambda args: [("--out", str(page), f) for f in report_files(page)]
                   if (page := _page(args)) else [])


def _page(args) -> Path:
    """The report file: --out, else report.html in the result folder."""
    if args.out is not None:
        return Path(args.out)
    folder = Path(args.result) if Path(args.result).is_dir() else Path(args.result).parent
    return folder / REPORT_NAME


def run(args) -> int:
    from ..report import write_report

    if args.out is None:  # the default report file is written into the result folder: it must be writable
        check_output(_page(args), kind="file", option="--out")
    with Progress("report", quiet=args.quiet) as progress:
        path = write_report(args.result, args.figures, out=args.out, progress=progress)
    if not args.quiet:
        print(path)
    return EXIT_OK
