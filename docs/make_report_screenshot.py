"""Regenerate docs/report-demo.png: the top of the demo's report, as headless Chromium shows it.

    PYTHONPATH=src python docs/make_report_screenshot.py [--out docs/report-demo.png]

Runs the demo (simulated 4-axis SCARA, identification + validation) into a temporary folder, writes
its report with the validation section, and captures the first 1100 x 1500 pixels. Needs
Debian's chromium (apt-get install -y --no-install-recommends chromium).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests/report/_chromium.py holds the DevTools-pipe client

from dynid.demo import run_demo  # noqa: E402
from dynid.report import Validation, write_report  # noqa: E402
from tests.report._chromium import inspect_page  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "report-demo.png"))
    ap.add_argument("--width", type=int, default=1100)
    ap.add_argument("--height", type=int, default=1500)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        res = run_demo(tmp)
        report = write_report(tmp, validation=Validation.from_prediction(res.validation, "validation_run.csv"))
        check = inspect_page(report, width=args.width, height=args.height, full_page=False)
    if check.broken_images or check.console_errors or check.requests:
        sys.stderr.write(f"the page did not load cleanly: {check}\n")
        return 1
    Path(args.out).write_bytes(check.screenshot)
    sys.stderr.write(f"wrote {args.out} ({len(check.screenshot) // 1024} kB)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
