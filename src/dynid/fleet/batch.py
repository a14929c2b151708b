"""Identify many recordings, each into its own folder, serially or on a Dask cluster (``dynid batch``).

Every recording is one task: a pure function of (recording, options) that builds a
:class:`dynid.Identifier`, fits it and writes the files ``dynid identify`` writes into ``OUTDIR/<recording
stem>/`` as it does (staged, then put in place together, replacing an earlier run's outputs there and keeping the
folder's other files). The task returns a
small :class:`BatchResult` (robot, status, per-axis max relative error, message, paths, parameters);
a recording that cannot be identified fails alone, with its one-line message in the result.
``OUTDIR/summary.csv`` gets a row per recording (:func:`write_summary`).

Schedulers: ``"serial"`` runs the tasks one after another in this process; ``"local"`` starts a Dask
``LocalCluster`` (one single-threaded worker process per core, or ``workers``); an address
(``tcp://host:8786``) uses a running Dask scheduler (``dask scheduler``, then ``dask worker ADDRESS`` on
each machine; the workers need the same dynid and must see the recordings and the output folder at the
same paths; give them ``MALLOC_TRIM_THRESHOLD_: null`` under ``distributed.nanny.pre-spawn-environ`` in
their Dask configuration, as ``local`` does, or each identification costs about a second more). Every task runs its numerics on ``threads`` threads (default 1, the BLAS pool included,
:func:`dynid.threads.limit_threads`) whichever scheduler runs it, and tasks share no state, so the
parameters are identical, bit for bit, on every scheduler.

Interrupting (Ctrl-C, ``KeyboardInterrupt``) cancels the runs not yet finished, closes a cluster this
function started and removes the staging folders: the folders of the runs that completed hold their new
outputs (whole), the others are as they were, and ``summary.csv`` is written with the unfinished runs as
``interrupted``; then :class:`BatchInterrupted` (a ``KeyboardInterrupt``) is raised with the results.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import glob
import io
import logging
import math
import os
import shutil
import signal
import threading
import time
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from .._atomic import STAGE_PREFIX, STAGE_SUFFIX, atomic_write_text
from ..errors import ConfigError, DynidError, MissingExtraError

__all__ = ["BatchResult", "BatchInterrupted", "find_recordings", "run_batch", "write_summary", "summary_rows",
           "RECORDING_SUFFIXES", "SUMMARY_NAME", "STATUSES"]

log = logging.getLogger(__name__)

RECORDING_SUFFIXES = (".csv", ".npz", ".parquet", ".pq", ".mcap")
"""The files a folder argument contributes (a glob or a file name takes any file)."""

SUMMARY_NAME = "summary.csv"

STATUSES = ("succeeded", "failed", "error", "interrupted")
"""``succeeded``: identified and within the allowed error; ``failed``: identified (folder written) but the
softMC rule failed; ``error``: not identified (unreadable file, unusable data ...), nothing written;
``interrupted``: the batch was stopped before this run finished."""

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class BatchResult:
    """The outcome of one recording of a batch (picklable, a few hundred bytes).

    Attributes
    ----------
    recording : str
        Absolute path of the recording.
    robot : str
        Robot id: the recording's ``# robot: ID`` line, else the batch's ``robot``, else the file stem.
    status : str
        One of :data:`STATUSES`.
    message : str
        One line: the identification's verdict, or what went wrong.
    max_relative_error : tuple of float
        Per axis, as a fraction (result.json ``metrics.max_relative_error``); empty when nothing was fitted.
    out_dir : str or None
        Absolute path of ``OUTDIR/<stem>/``; None when nothing was written.
    param_names, parameters : tuple
        The identified parameters (model then friction, SI), as in result.json; empty when nothing was fitted.
    elapsed_s : float
        Wall time of the task [s] (NaN for a run found complete after an interruption).
    warnings : tuple of str
        The warnings the task raised (each once, on one line), whichever process or thread ran it.
    """

    recording: str
    robot: str
    status: str
    message: str
    max_relative_error: tuple[float, ...] = ()
    out_dir: str | None = None
    param_names: tuple[str, ...] = ()
    parameters: tuple[float, ...] = ()
    elapsed_s: float = 0.0
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {self.status!r}")
        if len(self.param_names) != len(self.parameters):
            raise ValueError(f"{len(self.param_names)} parameter names but {len(self.parameters)} values")

    @property
    def stem(self) -> str:
        """The recording's file name without its extension (the name of its output folder)."""
        return Path(self.recording).stem

    @property
    def success(self) -> bool:
        return self.status == "succeeded"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``recording, robot, status, success, max_relative_error, out_dir, message, elapsed_s,
        parameters`` (``{name: value}``), ``warnings``."""
        return {"recording": self.recording, "robot": self.robot, "status": self.status, "success": self.success,
                "max_relative_error": [None if not math.isfinite(v) else v for v in self.max_relative_error],
                "out_dir": self.out_dir, "message": self.message,
                "elapsed_s": self.elapsed_s if math.isfinite(self.elapsed_s) else None,
                "parameters": dict(zip(self.param_names, self.parameters)), "warnings": list(self.warnings)}


class BatchInterrupted(KeyboardInterrupt):
    """The batch was interrupted; ``results`` holds every recording (unfinished ones ``interrupted``)
    and ``summary`` the summary.csv written for them."""

    def __init__(self, results: list[BatchResult], summary: Path | None) -> None:
        super().__init__("batch interrupted")
        self.results = results
        self.summary = summary


# ------------------------------------------------------------------------------------------ inputs

def find_recordings(patterns: Sequence[str | os.PathLike], *, exclude: str | os.PathLike | None = None) -> list[Path]:
    """The recording files that ``patterns`` name, in order, each once.

    Parameters
    ----------
    patterns : sequence of str or path
        Each a folder (its files ending in :data:`RECORDING_SUFFIXES`, not hidden, sorted), a file, or a
        glob pattern (``runs/*.csv``, ``logs/**/*.mcap``; expanded here, so it works quoted; sorted).
    exclude : path, optional
        A folder whose files are never taken (the batch's output folder).

    Returns
    -------
    list of Path
        Absolute paths.

    Raises
    ------
    ConfigError
        A pattern names nothing, or there is no recording at all.
    """
    if isinstance(patterns, (str, os.PathLike)):
        patterns = [patterns]
    skip = Path(exclude).resolve() if exclude is not None else None
    found: list[Path] = []
    seen: set[Path] = set()
    for pattern in patterns:
        text = os.fspath(pattern)
        p = Path(text).expanduser()
        if p.is_dir():
            files = sorted(f for f in p.iterdir()
                           if f.is_file() and f.suffix.lower() in RECORDING_SUFFIXES and not f.name.startswith("."))
            if not files:
                raise ConfigError(f"{text}: no recordings in this folder (files ending in "
                                  f"{', '.join(RECORDING_SUFFIXES)})", hint="give the folder of the recordings or a glob")
        elif p.is_file():
            files = [p]
        else:
            files = sorted(Path(f) for f in glob.glob(os.path.expanduser(text), recursive=True) if Path(f).is_file())
            if not files:
                what = "no file matches this pattern" if glob.has_magic(text) else "no such file or folder"
                raise ConfigError(f"{text}: {what}", hint="check the path of the recordings")
        for f in files:
            f = f.resolve()
            if f in seen or (skip is not None and skip in f.parents):
                continue
            seen.add(f)
            found.append(f)
    if not found:
        raise ConfigError("no recordings to identify", hint="give a folder, files or a glob of recordings")
    return found


def _check_stems(paths: Sequence[Path]) -> None:
    by_stem: dict[str, Path] = {}
    for p in paths:
        stem = p.stem
        if stem in by_stem:
            raise ConfigError(f"two recordings would share the output folder {stem!r}: {by_stem[stem]} and {p}",
                              hint="rename one of them, or identify them in separate batches")
        if stem == Path(SUMMARY_NAME).name or not stem or stem.startswith("."):
            raise ConfigError(f"{p}: its name {stem!r} cannot be an output folder", hint="rename the recording")
        by_stem[stem] = p


# ------------------------------------------------------------------------------------------ the task

@dataclass(frozen=True)
class _Job:
    """What every task gets besides its recording (picklable)."""

    params: Mapping[str, Any]          # Identifier keyword arguments (paths absolute, config a mapping)
    out_dir: str                       # absolute
    token: str                         # this batch's tag in temporary names
    robot: str | None = None
    report: bool = True


def _one_line(err: BaseException) -> str:
    if isinstance(err, DynidError):
        return str(err).replace("\n", " ")
    if isinstance(err, OSError) and err.filename is not None:
        return f"{err.filename}: {err.strerror or err}"
    return f"{type(err).__name__}: {err}".replace("\n", " ")


def identify_one(recording: str | os.PathLike, job: _Job) -> BatchResult:
    """Identify one recording into ``job.out_dir/<stem>/``; the task every scheduler runs.

    A pure function of its arguments: nothing is shared with other tasks. Errors of the recording end as
    a result with status ``error`` and the error's message; a ``KeyboardInterrupt`` propagates after the
    temporary folder is removed. Its warnings are returned in the result (a Dask worker's would otherwise
    go to the worker's log).
    """
    with warnings.catch_warnings(record=True) as caught:
        res = _identify_one(recording, job)
    said = tuple(dict.fromkeys(" ".join(str(w.message).split()) for w in caught))
    return dataclasses.replace(res, warnings=said) if said else res


def _identify_one(recording: str | os.PathLike, job: _Job) -> BatchResult:
    from ..identification.identifier import Identifier
    from .registry import robot_of

    t0 = time.perf_counter()
    path = Path(recording)
    robot = job.robot or path.stem
    try:
        est = Identifier(**job.params)
        rec = est.read(path)
        units = est.units_                  # given, or the file's '# units:' line
        robot = robot_of(rec) or robot
        est.fit(rec)
        final = _commit(est, path, robot, units, job)
    except Exception as err:  # the recording fails alone
        if robot == (job.robot or path.stem):  # not read: a CSV's '# robot:' line may still name it
            try:
                robot = robot_of(path) or robot
            except Exception:
                pass
        return BatchResult(str(path), robot, "error", _one_line(err), elapsed_s=time.perf_counter() - t0)
    return _result_of(est.model_, path, robot, final, time.perf_counter() - t0)


def _result_of(model, path: Path, robot: str, folder: Path, elapsed_s: float) -> BatchResult:
    """The :class:`BatchResult` of an identified run (``model``: its :class:`~dynid.fitted.FittedModel`)."""
    err_axes = tuple(float("nan") if v is None else float(v) for v in model.metrics.get("max_relative_error", ()))
    return BatchResult(str(path), robot, "succeeded" if model.success else "failed", model.message, err_axes,
                       str(folder), tuple(model.param_names), tuple(float(v) for v in model.theta), elapsed_s)


def _commit(est, path: Path, robot: str, units: str, job: _Job) -> Path:
    """Write the outputs into ``out_dir/<stem>`` as ``dynid identify`` does (staged, then put in place together:
    an earlier run's outputs there are replaced only once the new ones are complete, the folder's other files are
    kept). result.json's ``source`` holds the recording, the robot id and the batch's token, which also tags the
    staging folder (:func:`_remove_leftovers`)."""
    final = Path(job.out_dir) / path.stem
    source = {"recording": str(path), "units": units, "robot": robot, "batch": job.token}
    est.write(final, source=source, report=job.report, tag=job.token)
    return final


def _remove_leftovers(out_dir: Path, token: str) -> None:
    """Staging folders of this batch that a stopped task left behind (a worker ended mid-write), and the run
    folder made for one where nothing else is in it. One whose commit had begun (it holds the replaced files,
    ``old/``) is left: what it holds is not lost."""
    if not out_dir.is_dir():
        return
    for stage in out_dir.glob(f"*/{STAGE_PREFIX}{token}-*{STAGE_SUFFIX}"):
        if (stage / "old").exists():
            continue
        shutil.rmtree(stage, ignore_errors=True)
        try:
            stage.parent.rmdir()        # (only where empty: a folder the task made for its outputs)
        except OSError:
            pass


def _dynid_version() -> str:  # run on the workers: can they import dynid, which version?
    from .. import __version__

    return __version__


# ------------------------------------------------------------------------------------------ schedulers

def _connect(scheduler: str, workers: int | None, timeout_s: float):
    """``(client, cluster)`` for a Dask scheduler: a new LocalCluster (``local``) or an address."""
    try:
        import distributed
    except ImportError:
        raise MissingExtraError(f"dynid batch on the scheduler {scheduler!r} (Dask)", "fleet", "distributed") from None
    if scheduler == "local":
        n = workers or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
        single = {v: "1" for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
        import dask

        # Dask sets MALLOC_TRIM_THRESHOLD_=65536 in its workers, which turns off glibc's adaptive mmap
        # threshold: every large temporary array is then mapped and unmapped afresh (10x the page faults,
        # about 1 s of system time per 50k x 6 identification, 2x the wall time on a loaded machine).
        # The workers keep glibc's defaults, as the serial run has them.
        with _sigint_ignored(), dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
            cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                                               scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},  # any free port
                                               silence_logs=logging.ERROR, env=single)
        try:
            return distributed.Client(cluster, set_as_default=False), cluster
        except BaseException:
            cluster.close()
            raise
    try:
        client = distributed.Client(scheduler, timeout=timeout_s, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as err:
        raise ConfigError(f"no Dask scheduler answers at {scheduler} within {timeout_s:g} s ({_one_line(err)})",
                          hint="start one with 'dask scheduler' and workers with 'dask worker ADDRESS', or use the "
                               "scheduler 'local' or 'serial'", options=("scheduler",)) from err
    try:
        client.wait_for_workers(1, timeout=timeout_s)
    except (OSError, TimeoutError) as err:
        client.close()
        raise ConfigError(f"the Dask scheduler at {scheduler} has no workers (waited {timeout_s:g} s)",
                          hint=f"start workers with 'dask worker {scheduler}'", options=("scheduler",)) from err
    try:
        versions = set(client.run(_dynid_version).values())
    except Exception as err:
        client.close()
        raise ConfigError(f"the Dask workers of {scheduler} cannot run dynid ({_one_line(err)})",
                          hint="install the same dynid in the workers' environment", options=("scheduler",)) from err
    from .. import __version__
    if versions != {__version__}:
        client.close()
        raise ConfigError(f"the Dask workers of {scheduler} run dynid {', '.join(sorted(versions))}, this is "
                          f"{__version__}", hint="install the same dynid in the workers' environment",
                          options=("scheduler",))
    return client, None


_DASK_LOGGERS = ("tornado.application", "tornado.general", "asyncio", "distributed.utils", "distributed.client",
                 "distributed.core", "distributed.nanny", "distributed.worker", "distributed.scheduler")


@contextlib.contextmanager
def _quiet_after_interrupt() -> Iterator[None]:
    """Ctrl-C while Dask runs: from the moment the signal arrives, Dask's, tornado's and asyncio's log records
    are dropped. Interrupting the client's wait makes Dask's own callbacks fail on its event-loop thread
    (e.g. ``distributed.utils.sync``'s cancel: a NameError logged by tornado with its traceback), which says
    nothing to the user — the summary says what ran. The flag is set by this SIGINT handler *before* the
    KeyboardInterrupt is raised, so no such record slips through; before a Ctrl-C nothing is filtered."""
    interrupted = threading.Event()

    class _AfterInterrupt(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            return not interrupted.is_set()

    flt = _AfterInterrupt()
    loggers = [logging.getLogger(name) for name in _DASK_LOGGERS]
    for lg in loggers:
        lg.addFilter(flt)
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None

    def on_sigint(signum, frame):
        interrupted.set()
        if callable(previous):
            previous(signum, frame)             # Python's default handler: raises KeyboardInterrupt
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    if main and previous is not None and previous != signal.SIG_IGN:
        signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        if main and previous is not None and previous != signal.SIG_IGN:
            signal.signal(signal.SIGINT, previous)
        for lg in loggers:
            lg.removeFilter(flt)


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while worker processes start: an ignored signal stays ignored in a child process, so
    the workers do not see the Ctrl-C of the terminal's process group (this process closes them). A Ctrl-C
    during the start itself (about a second) is lost."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _check_scheduler(scheduler: str) -> str:
    s = str(scheduler).strip()
    if s in ("serial", "local"):
        return s
    if "://" in s or (":" in s and s.rsplit(":", 1)[1].isdigit()):
        return s
    raise ConfigError(f"scheduler must be 'serial', 'local' or a Dask scheduler address (tcp://host:8786), got "
                      f"{scheduler!r}", options=("scheduler",))


# ------------------------------------------------------------------------------------------ the batch

def _prepare(identifier: Any, threads: int | None) -> tuple[dict[str, Any], Any]:
    """Identifier keyword arguments a worker can use anywhere (absolute paths, configuration as a mapping),
    and the model (built here so that bad options fail before any work)."""
    from ..identification.identifier import Identifier
    from ..models.config import load_config_file

    params = dict(identifier.get_params() if isinstance(identifier, Identifier) else identifier)
    if "model" not in params:
        raise ConfigError("the batch needs a model", hint="give the model name", options=("model",))
    if isinstance(params.get("config"), (str, os.PathLike)):
        params["config"] = load_config_file(params["config"])
    for key in ("urdf", "payload_of"):
        if isinstance(params.get(key), (str, os.PathLike)):
            params[key] = str(Path(params[key]).resolve())
    if params.get("threads") is None:
        params["threads"] = 1 if threads is None else threads
    est = Identifier(**params)
    est.options()  # option values checked here, once
    return params, est.build_model()


def run_batch(recordings: Sequence[str | os.PathLike], out_dir: str | os.PathLike, identifier: Any, *,
              scheduler: str = "serial", workers: int | None = None, registry: str | None = None,
              robot: str | None = None, report: bool = True, threads: int | None = None,
              connect_timeout_s: float = 5.0, progress: Progress | None = None,
              on_result: Callable[[BatchResult, int, int], None] | None = None) -> list[BatchResult]:
    """Identify every recording into ``out_dir/<stem>/`` and write ``out_dir/summary.csv``.

    Parameters
    ----------
    recordings : sequence of path
        Recording files (:func:`find_recordings` expands folders and globs); their stems must differ.
    out_dir : path
        Output folder (created).
    identifier : Identifier or mapping
        The identification options: an unfitted :class:`dynid.Identifier` or its keyword arguments
        (``{"model": "scara4", "config": ..., "cutoff": ...}``).
    scheduler : {"serial", "local"} or str
        ``serial``: in this process; ``local``: a Dask LocalCluster started here (closed at the end);
        an address such as ``tcp://host:8786``: a running Dask scheduler.
    workers : int, optional
        Worker processes of the ``local`` cluster (default: one per core).
    registry : str, optional
        Registry URL (``sqlite:///runs.db``, ``postgresql://...``): every identified run is recorded there.
    robot : str, optional
        Robot id of recordings without a ``# robot: ID`` line (default: the file stem).
    report : bool
        Also write ``report.html`` into each folder.
    threads : int, optional
        Threads of each run's numerics when ``identifier`` does not set them (default 1: runs in parallel,
        each on one core; the same on every scheduler, so the results are identical).
    connect_timeout_s : float
        How long to wait for a scheduler address (and its first worker) [s].
    progress : callable, optional
        ``progress(stage, fraction)`` as runs complete.
    on_result : callable, optional
        ``on_result(result, n_done, n_total)`` as each run completes (in completion order).

    Returns
    -------
    list of BatchResult
        One per recording, in the order of ``recordings``.

    Raises
    ------
    ConfigError
        Bad options, a model that cannot be built, clashing stems, no scheduler at the address.
    MissingExtraError
        A Dask scheduler without the extra ``fleet`` installed.
    BatchInterrupted
        On ``KeyboardInterrupt``, after the cleanup described in the module docstring.
    """
    paths = [Path(p).resolve() for p in recordings]
    if not paths:
        raise ConfigError("no recordings to identify", hint="give a folder, files or a glob of recordings")
    _check_stems(paths)
    scheduler = _check_scheduler(scheduler)
    if workers is not None and int(workers) < 1:
        raise ConfigError(f"workers must be >= 1, got {workers}", options=("workers",))
    out = Path(out_dir).resolve()
    if out.exists() and not out.is_dir():
        raise ConfigError(f"cannot write to {out_dir}: it is a file, not a folder", options=("out",))
    params, model = _prepare(identifier, threads)
    reg = None
    if registry:
        from .registry import Registry

        reg = Registry(registry)
    token = uuid.uuid4().hex[:10]
    job = _Job(params=params, out_dir=str(out), token=token, robot=robot, report=report)
    results: list[BatchResult | None] = [None] * len(paths)
    n = len(paths)
    done = 0

    def finished(i: int, res: BatchResult) -> None:
        nonlocal done
        if reg is not None and res.out_dir is not None:
            res = _record(reg, res)
        results[i] = res
        done += 1
        if on_result is not None:
            on_result(res, done, n)
        if progress is not None:
            progress(f"{done}/{n} recordings", done / n)

    client = cluster = None
    quiet = contextlib.ExitStack()
    if scheduler != "serial":      # a Ctrl-C makes Dask's own callbacks log tracebacks: dropped from then on
        quiet.enter_context(_quiet_after_interrupt())
    try:
        if progress is not None:
            progress(f"0/{n} recordings" if scheduler == "serial" else f"connecting to {scheduler}", 0.0)
        if scheduler == "serial":
            for i, p in enumerate(paths):
                finished(i, identify_one(str(p), job))
        else:
            client, cluster = _connect(scheduler, workers, connect_timeout_s)
            if progress is not None:
                progress(f"0/{n} recordings", 0.0)
            _run_dask(client, paths, job, finished)
    except KeyboardInterrupt:
        _close(client, cluster)
        client = cluster = None
        _remove_leftovers(out, token)
        complete = _fill_interrupted(paths, results, job, finished)
        summary = None
        try:
            summary = write_summary(out / SUMMARY_NAME, complete, n_joints=model.n_joints)
        except OSError:
            pass
        raise BatchInterrupted(complete, summary) from None
    finally:
        _close(client, cluster)
        _remove_leftovers(out, token)
        if reg is not None and hasattr(reg, "close"):
            reg.close()
        quiet.close()
    final = [r for r in results if r is not None]
    write_summary(out / SUMMARY_NAME, final, n_joints=model.n_joints)
    return final


def _run_dask(client, paths: Sequence[Path], job: _Job, finished: Callable[[int, BatchResult], None]) -> None:
    from distributed import as_completed

    futures = {}
    for i, p in enumerate(paths):
        fut = client.submit(identify_one, str(p), job, key=f"dynid-batch-{job.token}-{i}", pure=False, retries=0)
        futures[fut] = i
    try:
        for fut in as_completed(list(futures), loop=client.loop):
            i = futures[fut]
            try:
                res = fut.result()
            except Exception as err:  # the worker died (memory, killed): this run failed, the others go on
                res = BatchResult(str(paths[i]), job.robot or paths[i].stem, "error",
                                  f"the Dask worker running it failed: {_one_line(err)}")
            finished(i, res)
    except BaseException:
        client.cancel(list(futures), force=True)
        raise


def _close(client, cluster) -> None:
    for thing in (client, cluster):
        if thing is not None:
            try:
                thing.close()
            except Exception:  # closing after Ctrl-C: nothing more to do about it
                log.debug("closing %r failed", thing, exc_info=True)


def _record(reg, res: BatchResult) -> BatchResult:
    """Record an identified run in the registry (from the result.json just written; a result the robot has
    already is not recorded twice)."""
    from ..fitted import FittedModel, read_result_json

    try:
        path, data = read_result_json(res.out_dir)
        model = FittedModel.from_dict(data, where=str(path))
        reg.record(model, robot=res.robot, recording=res.recording, time=model.info.get("created"), result=data)
    except Exception as err:
        return BatchResult(res.recording, res.robot, "error", f"identified, but not recorded in the registry: "
                           f"{_one_line(err)}", res.max_relative_error, res.out_dir, res.param_names, res.parameters,
                           res.elapsed_s)
    return res


def _fill_interrupted(paths: Sequence[Path], results: list[BatchResult | None], job: _Job,
                      finished: Callable[[int, BatchResult], None]) -> list[BatchResult]:
    """Every recording's result after an interruption: a run whose folder this batch completed while it
    was being stopped (a task already running) gets its result from that folder, the others are
    ``interrupted``."""
    for i, p in enumerate(paths):
        if results[i] is None:
            res = _completed_folder(p, job)
            if res is not None:
                finished(i, res)
    return [r if r is not None else
            BatchResult(str(p), job.robot or p.stem, "interrupted", "not identified: the batch was interrupted")
            for p, r in zip(paths, results)]


def _completed_folder(path: Path, job: _Job) -> BatchResult | None:
    from ..fitted import load

    folder = Path(job.out_dir) / path.stem
    try:
        model = load(folder)
    except Exception:  # no folder, or not one of this batch
        return None
    source = model.info.get("source") or {}
    if source.get("batch") != job.token:
        return None
    return _result_of(model, path, str(source.get("robot") or job.robot or path.stem), folder, float("nan"))


# ------------------------------------------------------------------------------------------ summary

def summary_rows(results: Iterable[BatchResult], n_joints: int) -> tuple[list[str], list[list[str]]]:
    """Header and rows of summary.csv: ``recording, robot, status, success, max_relative_error_1..n,
    out_dir, message, elapsed_s`` (errors as fractions, empty when nothing was fitted)."""
    header = (["recording", "robot", "status", "success"] + [f"max_relative_error_{j + 1}" for j in range(n_joints)]
              + ["out_dir", "message", "elapsed_s"])
    rows = []
    for r in results:
        errs = [repr(v) if math.isfinite(v) else "" for v in r.max_relative_error]
        errs = (errs + [""] * n_joints)[:n_joints]
        rows.append([r.recording, r.robot, r.status, "true" if r.success else "false", *errs, r.out_dir or "",
                     r.message, f"{r.elapsed_s:.3f}" if math.isfinite(r.elapsed_s) else ""])
    return header, rows


def write_summary(path: str | os.PathLike, results: Iterable[BatchResult], *, n_joints: int) -> Path:
    """Write summary.csv (atomically; see :func:`summary_rows`); returns its path."""
    header, rows = summary_rows(results, n_joints)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    atomic_write_text(path, buf.getvalue())
    return Path(path)
