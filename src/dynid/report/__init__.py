"""The identification report: one self-contained HTML page (plus PNG figures) per result folder.

Reads only the output files of ``dynid identify`` (``result.json`` and ``IDNT<group>.REC``), so
``dynid report RESULT_DIR`` re-renders any run. The page draws its figures as SVG with no
dependency; ``--figures DIR`` exports the same figures as PNG with matplotlib (extra ``report``).

>>> from dynid.report import render_report, write_report        # doctest: +SKIP
>>> path = write_report("dynid-out", figures_dir="figures")      # doctest: +SKIP
"""

from ._data import ReportData, Validation, load_report_data
from ._report import REPORT_NAME, render_report, report_files, write_figures, write_report, write_validation_report

__all__ = ["render_report", "write_report", "write_figures", "write_validation_report", "load_report_data",
           "ReportData", "Validation", "REPORT_NAME", "report_files"]
