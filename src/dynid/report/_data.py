"""What a report shows, read back from the output files only (``result.json`` + ``IDNT<group>.REC``).

Reading nothing else is what lets ``dynid report RESULT_DIR`` re-render any run, on any machine,
from the three files ``dynid identify`` wrote.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..errors import FileFormatError
from ..fitted import read_result_json
from ..io.rec import read_rec

__all__ = ["ReportData", "Validation", "UsedSamples", "load_report_data"]

REQUIRED_KEYS = ("model", "joints", "parameters", "conditioning", "metrics")


@dataclass(frozen=True)
class Validation:
    """A validation run: the identified model's torque against a recording it was not fitted on.

    t : (N,) [s] ; predicted : (N, n_joints) model torque [N m or N] ;
    measured : (N, n_joints) measured torque, or None when the recording has no torque columns ;
    source : what the recording was (file name)
    """

    t: np.ndarray
    predicted: np.ndarray
    measured: np.ndarray | None
    source: str = ""

    def __post_init__(self) -> None:
        t = np.asarray(self.t, dtype=float)
        pred = np.asarray(self.predicted, dtype=float)
        if pred.ndim == 1:
            pred = pred[:, None]
        if t.ndim != 1 or pred.shape[0] != t.size:
            raise ValueError(f"Validation: t has shape {t.shape} but predicted has {pred.shape}; "
                             "pass t (N,) and predicted (N, n_joints)")
        meas = None
        if self.measured is not None:
            meas = np.asarray(self.measured, dtype=float)
            if meas.ndim == 1:
                meas = meas[:, None]
            if meas.shape != pred.shape:
                raise ValueError(f"Validation: measured has shape {meas.shape} but predicted has {pred.shape}")
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "predicted", pred)
        object.__setattr__(self, "measured", meas)

    @classmethod
    def from_prediction(cls, prediction: Any, source: str = "") -> "Validation":
        """From a :class:`dynid.fitted.Prediction` (``t``, ``tau``, ``measured``)."""
        return cls(prediction.t, prediction.tau, prediction.measured, source)

    def errors(self) -> dict[str, np.ndarray] | None:
        """Per joint: ``rmse`` [N m or N], ``nrmse_rms``, ``nrmse_range``, ``max_relative``, ``mean_relative``
        (fractions; the relative ones use softMC's reference, the max measured torque), or None."""
        if self.measured is None:
            return None
        e = self.predicted - self.measured
        rms = np.sqrt(np.mean(self.measured**2, axis=0))
        rng = np.ptp(self.measured, axis=0)
        ref = np.abs(self.measured).max(axis=0)
        rmse = np.sqrt(np.mean(e**2, axis=0))
        with np.errstate(divide="ignore", invalid="ignore"):
            return {"rmse": rmse, "nrmse_rms": rmse / rms, "nrmse_range": rmse / rng,
                    "max_relative": np.abs(e).max(axis=0) / ref, "mean_relative": np.abs(e).mean(axis=0) / ref}


@dataclass(frozen=True)
class ReportData:
    """The content of one result folder.

    result : the ``result.json`` dictionary ; result_path : its path ;
    rec_path : the ``IDNT<group>.REC`` read, or None when absent ;
    t : (N,) [s] or None ; signals : REC signal name -> (N, n_joints), SI, empty without REC ;
    notes : what could not be read (shown in the report) ;
    shown_dir : the folder the report names for these files, where they were read from elsewhere (a run's
    outputs staged before they are committed); None: where they were read
    """

    result: Mapping[str, Any]
    result_path: Path
    rec_path: Path | None = None
    t: np.ndarray | None = None
    signals: Mapping[str, np.ndarray] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    shown_dir: Path | None = None

    @property
    def shown_result_path(self) -> Path:
        """``result_path`` as the report names it."""
        return self.result_path if self.shown_dir is None else self.shown_dir / self.result_path.name

    @property
    def shown_rec_path(self) -> Path | None:
        """``rec_path`` as the report names it."""
        if self.rec_path is None or self.shown_dir is None:
            return self.rec_path
        return self.shown_dir / self.rec_path.name

    @property
    def joint_names(self) -> list[str]:
        return [j["name"] for j in self.result["joints"]]

    @property
    def joint_kinds(self) -> list[str]:
        return [j.get("type", "rotary") for j in self.result["joints"]]

    @property
    def n_joints(self) -> int:
        return len(self.result["joints"])

    @property
    def has_signals(self) -> bool:
        return self.t is not None and bool(self.signals)

    def vector(self, section: str, key: str, default: float = np.nan) -> np.ndarray:
        """``result[section][key]`` as a float array of one value per joint (None -> ``default``)."""
        v = self.result.get(section, {}).get(key)
        if v is None:
            return np.full(self.n_joints, default)
        arr = np.array([default if x is None else x for x in np.atleast_1d(v).tolist()], dtype=float)
        return arr if arr.size == self.n_joints else np.resize(arr, self.n_joints)

    def moving(self) -> np.ndarray:
        """Velocity-gated samples ``(N, n_joints)``: ``threshold < |vfb| (< upper threshold)``.

        The fit also leaves out the windows around stick-slip reversals: :meth:`used` is what it used.
        """
        v = np.abs(self.signals["vfb"])
        out = v > self.vector("conditioning", "velocity_threshold", 0.0)
        if self.result["conditioning"].get("upper_velocity_threshold") is not None:
            out &= v < self.vector("conditioning", "upper_velocity_threshold", np.inf)
        return out

    def used(self) -> np.ndarray:
        """Samples ``(N, n_joints)`` the fit and softMC's errors used (see :attr:`samples`)."""
        return self.samples.used

    @cached_property
    def samples(self) -> "UsedSamples":
        """Which REC samples the fit used and why the others were left out (needs the REC)."""
        return UsedSamples.of(self)

    @property
    def diagnostics_detail(self) -> list[Mapping[str, Any]]:
        """``metrics.diagnostics_detail`` as written (empty when absent)."""
        return list(self.result.get("metrics", {}).get("diagnostics_detail") or [])


@dataclass(frozen=True)
class UsedSamples:
    """Which samples of the REC the fit used, per joint, and why the others were left out.

    The REC holds the trimmed record, and result.json the rules of the gating, so the exclusions are
    recovered as conditioning made them (:mod:`dynid.signal.conditioning`, steps 4-6):

    slow : (N, n_joints) bool
        ``|vfb|`` below the velocity threshold (or above the upper threshold).
    stick : (N, n_joints) bool
        Within one filter length (``ceil(1 / (cutoff · Ts))`` samples) of a reversal where the joint
        stuck; the stuck intervals are the ``stick_slip`` diagnostic's ``t_start``/``t_end``.
    used : (N, n_joints) bool
        Neither: the samples of the fit and of softMC's errors.
    exact : (n_joints,) bool
        ``used`` counts result.json's ``conditioning.moving_samples`` (False: some excluded window is
        not recorded in the output files, e.g. beyond the 50 stick intervals the evidence lists).
    trimmed : (int, int)
        Samples dropped before the first and after the last REC sample (the filter's edge transient).
    """

    slow: np.ndarray
    stick: np.ndarray
    used: np.ndarray
    exact: np.ndarray
    trimmed: tuple[int, int] = (0, 0)

    @classmethod
    def of(cls, data: "ReportData") -> "UsedSamples":
        """The used samples of a result folder with its REC."""
        slow = ~data.moving()
        stick = _stick_windows(data)
        used = ~slow & ~stick
        expected = data.vector("conditioning", "moving_samples")
        exact = ~np.isfinite(expected) | (used.sum(axis=0) == expected)
        c = data.result["conditioning"]
        start = int(c.get("trim_samples") or 0)
        raw, kept = c.get("raw_length"), c.get("data_length")
        end = max(0, int(raw) - int(kept) - start) if raw is not None and kept is not None else 0
        return cls(slow, stick, used, exact, (start, end))


def _stick_windows(data: ReportData) -> np.ndarray:
    """The samples conditioning left out around stuck reversals, ``(N, n_joints)``, from the ``stick_slip``
    diagnostics' intervals widened by one filter length, as :func:`dynid.signal.conditioning._stick` does."""
    t = data.t
    out = np.zeros((t.size, data.n_joints), dtype=bool)
    c = data.result["conditioning"]
    cutoff, dt = c.get("cutoff_hz"), c.get("sample_period_s")
    if not cutoff or not dt or t.size == 0:
        return out
    reach = int(math.ceil(1.0 / (cutoff * dt)))   # the same floats as conditioning, so the same count
    for d in data.diagnostics_detail:
        j = d.get("joint")
        ev = d.get("evidence") or {}
        if d.get("code") != "stick_slip" or not isinstance(j, int) or not 1 <= j <= data.n_joints:
            continue
        starts = np.searchsorted(t, np.asarray(ev.get("t_start") or [], dtype=float) - 0.5 * dt)
        ends = np.searchsorted(t, np.asarray(ev.get("t_end") or [], dtype=float) + 0.5 * dt)
        for a, b in zip(starts.tolist(), ends.tolist()):
            out[max(0, a - reach):b + reach, j - 1] = True
    return out


def load_report_data(path: str | Path, *, shown_dir: str | Path | None = None) -> ReportData:
    """Read a result folder (or its ``result.json``) and the REC beside it.

    Parameters
    ----------
    path : str or Path
        The folder ``dynid identify --out`` wrote, or the ``result.json`` in it.
    shown_dir : str or Path, optional
        The folder the report names for them (``path`` being where a run's outputs are staged).

    Returns
    -------
    ReportData
        Without the REC (moved, deleted) the data has no signals and a note saying so; the report
        then shows the tables only.

    Raises
    ------
    FileFormatError
        No readable ``result.json``, one missing a required section, or a REC whose joints do not
        match it.
    """
    rpath, result = read_result_json(path)
    shown = None if shown_dir is None else Path(shown_dir)
    missing = [k for k in REQUIRED_KEYS if k not in result]
    if missing:
        raise FileFormatError(f"{rpath}: result.json has no {', '.join(repr(k) for k in missing)}",
                              hint="use a result.json written by 'dynid identify'")
    group = result.get("group", 1)
    rec = rpath.parent / f"IDNT{group}.REC"
    if not rec.is_file():
        found = sorted(rpath.parent.glob("IDNT*.REC"))
        rec = found[0] if len(found) == 1 else None
    if rec is None:
        note = (f"IDNT{group}.REC was not found beside {rpath.name}: the plots of the recorded signals and the "
                "evidence plots are left out")
        return ReportData(result, rpath, notes=(note,), shown_dir=shown)
    try:
        _, t, channels = read_rec(rec)
    except FileFormatError:
        raise
    except (ValueError, IndexError) as err:  # a header or column that read_rec cannot place
        raise FileFormatError(f"{rec}: not a REC written by 'dynid identify' ({err})") from err
    n = len(result["joints"])
    if channels["tfb"].shape[1] != n:
        raise FileFormatError(f"{rec}: {channels['tfb'].shape[1]} joints recorded but {rpath.name} has {n}",
                              hint="keep the REC and result.json of one run together")
    return ReportData(result, rpath, rec, t, channels, shown_dir=shown)
