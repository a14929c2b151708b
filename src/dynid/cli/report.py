"""``dynid report``: (re-)render the HTML report of a result folder, optionally with PNG figures."""

from __future__ import annotations

import argparse

from ._common import EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser(
        "report", help="write the HTML report of an identification (and PNG figures)",
        description="Render report.html for a folder written by 'dynid identify' (result.json and IDNT<group>.REC; "
                    "nothing else is read): pass/fail banner, diagnostics with their evidence plots, parameters, "
                    "per-axis torque, velocity, friction and position plots, conditioning facts. The page is one "
                    "self-contained file (figures embedded, nothing loaded at view time) and prints on A4.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("result", metavar="RESULT_DIR", help="folder written by 'dynid identify' (or its result.json)")
    p.add_argument("--out", metavar="FILE", help="report file (default: RESULT_DIR/report.html)")
    p.add_argument("--figures", metavar="DIR", help="also write every figure as PNG into DIR (needs the extra "
                   "'report': pip install 'dynid[report]')")
    p.add_argument("--quiet", action="store_true", help="do not print the path of the report")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..report import write_report

    path = write_report(args.result, args.figures, out=args.out)
    if not args.quiet:
        print(path)
    return EXIT_OK
