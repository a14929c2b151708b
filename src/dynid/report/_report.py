"""The report's entry points: render a result folder to HTML, write it, export its figures as PNG.

A report with a validation section (``dynid predict --report FILE``, ``dynid demo``) keeps that
validation beside it, ``<FILE stem>.validation.npz``: re-rendering the same file (``dynid report DIR``
for ``DIR/report.html``) shows it again as long as ``result.json`` is the one it was computed with.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .._atomic import Staging
from ..fitted import RESULT_FILE
from ..io.outputs import REPORT_NAME, report_files
from ._data import ReportData, Validation, load_report_data
from ._history import history_bytes, history_path, stored_history
from ._html import build_figures, render_html

__all__ = ["render_report", "write_report", "write_figures", "write_validation_report", "validation_path",
           "report_files", "REPORT_NAME"]



def _data(result_dir: str | Path | ReportData) -> ReportData:
    return result_dir if isinstance(result_dir, ReportData) else load_report_data(result_dir)


def render_report(result_dir: str | Path | ReportData, *, validation: Validation | None = None,
                  history: Any = None) -> str:
    """The self-contained HTML report of an identification run.

    Parameters
    ----------
    result_dir : str, Path or ReportData
        The folder ``dynid identify`` wrote (``result.json`` and ``IDNT<group>.REC``), or its
        ``result.json``; only these files are read.
    validation : Validation, optional
        A validation run to add (``dynid predict --report``).
    history : mapping, optional
        The robot's runs in a registry (:meth:`dynid.fleet.registry.Registry.history_view`).

    Returns
    -------
    str
        One HTML page with every figure embedded as an SVG data URI; it loads nothing at view time.

    Raises
    ------
    FileFormatError
        No readable ``result.json`` in ``result_dir``.

    Examples
    --------
    >>> from dynid.cli.main import main
    >>> import tempfile, contextlib, io
    >>> out = tempfile.mkdtemp()
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     code = main(["demo", "--out", out, "--quiet"])
    >>> page = render_report(out)
    >>> page.startswith("<!DOCTYPE html>") and "PASSED" in page
    True
    """
    data = _data(result_dir)
    return render_html(data, build_figures(data, validation), validation, history)


def write_report(result_dir: str | Path, figures_dir: str | Path | None = None, *, out: str | Path | None = None,
                 validation: Validation | None = None, dpi: int = 150, history: Any = None,
                 staging: Staging | None = None, progress: Callable[[str, float], None] | None = None) -> Path:
    """Write ``report.html`` into the result folder (or to ``out``), and PNG figures into ``figures_dir``.

    Parameters
    ----------
    result_dir : str or Path
        Folder written by ``dynid identify`` (or its ``result.json``).
    figures_dir : str or Path, optional
        Also write every figure of the report as ``<name>.png`` there (needs matplotlib: extra ``report``).
    out : str or Path, optional
        Report file; default ``<result_dir>/report.html``.
    validation : Validation, optional
        A validation run to add.
    dpi : int
        Resolution of the PNG figures.
    history : mapping, optional
        The robot's runs in a registry (:meth:`dynid.fleet.registry.Registry.history_view`), shown in a
        "Robot history" section and kept beside the report (``report.history.json``) like a validation.
    staging : Staging, optional
        Stage the report (and its figures) there, for the caller to commit with the run it shows: a
        ``result.json`` (and REC) staged there and not yet committed is what the report reads. Default: written
        here.
    progress : callable(stage, fraction), optional
        Called as the report is made (reading the REC, the figures, the PNGs, the page).

    Returns
    -------
    Path
        The report (written atomically, with its companions: an error or interrupt leaves the earlier ones).

    Raises
    ------
    FileFormatError
        No readable ``result.json``.
    MissingExtraError
        ``figures_dir`` given but matplotlib is not installed.
    OutputError
        The report cannot be written (a full disk, a read-only folder).

    Notes
    -----
    With ``validation``, its data are also written to :func:`validation_path` of the report. Without,
    the validation stored there is shown again when it was computed from this ``result.json``
    (re-rendering keeps every section); one from another identification is removed with the report
    it belonged to.
    """
    if staging is None:
        with Staging() as own:
            path = write_report(result_dir, figures_dir, out=out, validation=validation, dpi=dpi, history=history,
                                staging=own, progress=progress)
            own.commit()
        return path
    step = progress or (lambda stage, fraction: None)
    step("reading the result and the REC", 0.0)
    data = _staged_data(result_dir, staging)
    step("the figures", 0.4)
    path = Path(out) if out is not None else data.shown_result_path.parent / REPORT_NAME
    stored = validation_path(path)
    if validation is not None:
        staging.write(stored, _validation_bytes(validation, data))
    else:
        validation, data, stale = _stored_validation(stored, data)
        if stale:
            staging.remove(stored)  # the validation of a report replaced by one without it
    kept = history_path(path)
    if history is not None:
        staging.write(kept, history_bytes(history, data.result_path))
    else:
        history, history_stale = stored_history(kept, data.result_path)
        if history_stale:
            staging.remove(kept)    # likewise the robot history
    figs = build_figures(data, validation)
    if figures_dir is not None:
        from ._png import write_pngs

        step("the PNG figures", 0.6)
        write_pngs(figs.all(), figures_dir, dpi=dpi, staging=staging)
    step("the page", 0.8)
    staging.write(path, render_html(data, figs, validation, history).encode("utf-8"))
    return path


def _staged_data(result_dir: str | Path, staging: Staging) -> ReportData:
    """The report data of ``result_dir`` — read from ``staging`` where its result.json is staged there."""
    rpath = Path(result_dir)
    rpath = rpath / RESULT_FILE if rpath.is_dir() else rpath
    if staging.holds(rpath):
        return load_report_data(staging.staged(rpath), shown_dir=rpath.parent)
    return load_report_data(result_dir)


def validation_path(report: str | Path) -> Path:
    """Where the validation shown in ``report`` is kept: ``report.validation.npz`` beside ``report.html``."""
    return report_files(report)[1]


def _fingerprint(data: ReportData) -> str:
    return hashlib.sha256(data.result_path.read_bytes()).hexdigest()


def _validation_bytes(validation: Validation, data: ReportData) -> bytes:
    """The arrays of ``validation`` and the ``result.json`` they belong to, as a compressed ``.npz``."""
    arrays = {"t": validation.t, "predicted": validation.predicted, "source": np.array(validation.source),
              "result_sha256": np.array(_fingerprint(data))}
    if validation.measured is not None:
        arrays["measured"] = validation.measured
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def _stored_validation(path: Path, data: ReportData) -> tuple[Validation | None, ReportData, bool]:
    """The validation kept at ``path`` if it belongs to ``data``'s result.json, else None; and whether
    ``path`` is stale (from another identification). An unreadable file is left in place and named in
    the report's notes."""
    if not path.is_file():
        return None, data, False
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["result_sha256"]) != _fingerprint(data):
                return None, data, True
            val = Validation(z["t"], z["predicted"], z["measured"] if "measured" in z.files else None,
                             str(z["source"]))
    except (OSError, ValueError, KeyError) as err:
        note = f"the validation data {path.name} could not be read ({err}): the validation section is left out"
        return None, dataclasses.replace(data, notes=data.notes + (note,)), False
    return val, data, False


def write_figures(result_dir: str | Path, figures_dir: str | Path, *, validation: Validation | None = None,
                  dpi: int = 150) -> list[Path]:
    """Write the report's figures as PNG files (``axis1_torque.png`` ...) without the HTML page.

    Raises
    ------
    MissingExtraError
        matplotlib is not installed (``pip install 'dynid[report]'``).
    """
    from ._png import write_pngs

    data = load_report_data(result_dir)
    return write_pngs(build_figures(data, validation).all(), figures_dir, dpi=dpi)


def write_validation_report(result_json: str | Path, prediction: Any, out: str | Path, *, source: str = "",
                            figures_dir: str | Path | None = None, staging: Staging | None = None) -> Path:
    """The report of a validation run (``dynid predict RESULT.json REC --report FILE``).

    The identification report of ``result_json`` (its REC is used when it is beside it) with a
    validation section on top: errors per axis and measured vs predicted torque.

    Parameters
    ----------
    result_json : str or Path
        The identified model (``result.json`` or its folder).
    prediction : dynid.fitted.Prediction
        What ``predict`` returned for the validation recording (``t``, ``tau``, ``measured``).
    out : str or Path
        HTML file to write.
    source : str
        Name of the validation recording, shown in the report.
    figures_dir : str or Path, optional
        Also write the figures as PNG (extra ``report``).
    staging : Staging, optional
        Stage the report there, for the caller to commit with its other outputs.

    Returns
    -------
    Path
        ``out``; the validation's data are kept at :func:`validation_path` of it, so that
        ``dynid report`` re-renders the page with its validation section.
    """
    return write_report(result_json, figures_dir, out=out, validation=Validation.from_prediction(prediction, source),
                        staging=staging)
