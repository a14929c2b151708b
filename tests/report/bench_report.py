"""Time the report of a 50 000-sample, 6-joint run and print its size.

    PYTHONPATH=src python -m tests.report.bench_report [--samples N] [--joints N] [--repeat K]

Stages: read the output files (result.json + the 30 MB REC), build the figures, draw the page;
medians over repeats. Also the PNG export (matplotlib) once, when it is installed.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from dynid.report import load_report_data
from dynid.report._html import build_figures, render_html

from ._synthetic import write_synthetic_result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=50_000)
    ap.add_argument("--joints", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = write_synthetic_result(Path(tmp) / "r", args.samples, args.joints)
        rec_mb = (d / "IDNT1.REC").stat().st_size / 1e6
        times = {"read": [], "figures": [], "html": [], "total": []}
        page = ""
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            data = load_report_data(d)
            t1 = time.perf_counter()
            figs = build_figures(data)
            t2 = time.perf_counter()
            page = render_html(data, figs)
            t3 = time.perf_counter()
            for k, v in zip(times, (t1 - t0, t2 - t1, t3 - t2, t3 - t0)):
                times[k].append(v)
        print(f"{args.samples} samples x {args.joints} joints (REC {rec_mb:.1f} MB), {len(figs.all())} figures")
        for k, v in times.items():
            print(f"  {k:8s} {1000 * np.median(v):7.0f} ms")
        print(f"  page     {len(page.encode()) / 1e6:7.2f} MB")
        try:
            from dynid.report._png import write_pngs

            t0 = time.perf_counter()
            write_pngs(figs.all(), Path(tmp) / "png")
            print(f"  png      {1000 * (time.perf_counter() - t0):7.0f} ms ({len(figs.all())} PNG, matplotlib)")
        except ImportError:
            print("  png      (matplotlib not installed)")


if __name__ == "__main__":
    main()
