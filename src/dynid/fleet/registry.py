"""The identification registry: every identified run of every robot in one database.

A SQLite file (embedded, the default) or a PostgreSQL server for a fleet, through SQLAlchemy 2 Core
(and psycopg 3 for PostgreSQL; extra ``fleet``). One schema, created and upgraded by the migration
steps of :data:`MIGRATIONS` (:mod:`dynid.fleet._schema`); the ``dynid_schema`` table records which
were applied. Tables:

``dynid_robots``
    ``id, name, created`` — one row per robot id (``# robot: ID`` of its recordings).
``dynid_runs``
    ``id, robot_id, time`` (UTC, ISO 8601), ``model, friction, success, recording, dynid_version,
    metrics`` (result.json's metrics without the diagnostics' evidence, JSON), ``result`` (the whole
    result.json, so :meth:`Registry.model` rebuilds the :class:`~dynid.fitted.FittedModel`),
    ``result_hash`` (:func:`~dynid.fleet.runs.result_hash`) and ``config_fingerprint``
    (:func:`~dynid.fleet.runs.config_fingerprint`; schema version 2, filled in for older runs from their
    stored result.json).
``dynid_parameters``
    ``run_id, position, name, value, std, unit, status`` — model then friction parameters, SI.

A result is recorded once per robot: recording the same result.json again (same content apart from its
creation time) returns the run that holds it (:meth:`Registry.add` says whether it stored a new one).

A registry lives in a file or on a server: a SQLite database that vanishes when the process ends
(``sqlite://``, ``sqlite:///:memory:``, ``file::memory:``, ``mode=memory``...) is refused.

Writers lose nothing when many processes record at once (a batch's workers): each run is one
transaction; SQLite runs in write-ahead-log mode, takes the write lock when a write transaction
begins (``BEGIN IMMEDIATE``) and waits up to :data:`BUSY_TIMEOUT_S` for it; PostgreSQL serialises
the schema creation with an advisory lock and a new robot's row with ``ON CONFLICT DO NOTHING``.

Drift (:meth:`Registry.drift`, :func:`drift_rows`): each parameter of the robot's latest run
against its first run of the same model and configuration (:meth:`Registry.comparison` says which runs
it compared and which it skipped, and why); the change is significant when it exceeds :data:`DRIFT_SIGMAS` (3) combined
standard deviations ``sqrt(std_first² + std_latest²)``. Growing friction is the classic sign of wear.

>>> import tempfile, numpy as np
>>> from dynid.fitted import FittedModel
>>> from dynid.models import Plant, make_model
>>> plant = Plant(make_model("rotary3", {"friction": "viscous+coulomb"}))
>>> std = [0.001, np.nan, 0.01, np.nan, 0.002, 0.005]
>>> new = FittedModel(plant, [0.5, 0.0, 20.0, 0.0, 0.80, 1.5], std)
>>> worn = FittedModel(plant, [0.5, 0.0, 20.0, 0.0, 1.12, 1.5], std)
>>> with Registry(tempfile.mkdtemp() + "/fleet.db") as reg:
...     first, latest = reg.record(new, robot="cell-7"), reg.record(worn, robot="cell-7")
...     [row["name"] for row in reg.drift("cell-7") if row["significant"]]
['A1.viscous']
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from .. import __version__
from .._json import jsonable
from ..errors import ConfigError, DynidError, MissingExtraError
from ._schema import MIGRATIONS, ROBOT_MAX, SCHEMA_VERSION, tables as _tables
from .runs import Comparison, comparison, config_fingerprint, result_hash

__all__ = ["Registry", "open_registry", "RegistryError", "registry_url", "robot_of", "run_entry", "drift_rows",
           "DRIFT_SIGMAS", "BUSY_TIMEOUT_S", "VIEW_RUNS", "MIGRATIONS", "SCHEMA_VERSION"]

DRIFT_SIGMAS = 3.0
"""A parameter drifted when its change exceeds this many combined standard deviations."""

VIEW_RUNS = 100
"""Runs a report's history shows at most (the robot's first and the latest)."""

BUSY_TIMEOUT_S = 60.0
"""How long a SQLite writer waits for another process's write transaction to end [s]."""

_LOCK_KEY = 0x64796E6964  # "dynid": the PostgreSQL advisory lock held while the schema is created or upgraded
_OMIT_METRICS = ("diagnostics_detail",)  # bulky evidence arrays: kept in the stored result.json only


class RegistryError(DynidError):
    """The registry database cannot be opened, read or written (or is not a dynid registry)."""


# ---------------------------------------------------------------------------------------------- helpers

def registry_url(url: str | os.PathLike) -> str:
    """The SQLAlchemy URL of a registry.

    ``sqlite:///PATH.db`` (``sqlite:////abs/path.db``) and a plain path (no ``scheme://``) are SQLite
    files; ``postgresql://USER@HOST[:PORT]/DB`` (or ``postgres://``) uses the psycopg 3 driver
    (``postgresql+psycopg://``) unless the URL names another one.

    Examples
    --------
    >>> registry_url("fleet.db"), registry_url("postgresql://dynid@db.local/fleet")
    ('sqlite:///fleet.db', 'postgresql+psycopg://dynid@db.local/fleet')

    Raises
    ------
    ConfigError
        An empty URL or another database than SQLite and PostgreSQL.
    """
    text = os.fspath(url).strip()
    if not text:
        raise ConfigError("the registry URL is empty", hint="give sqlite:///PATH.db or postgresql://USER@HOST/DB",
                          options=("registry",))
    scheme, sep, rest = text.partition("://")
    if not sep:
        return "sqlite:///" + text
    base, _, driver = scheme.lower().partition("+")
    if base == "sqlite":
        return text
    if base in ("postgresql", "postgres"):
        return f"postgresql+{driver or 'psycopg'}://{rest}"
    raise ConfigError(f"registry URL {text!r}: database {base!r} is not supported",
                      hint="use sqlite:///PATH.db (a file) or postgresql://USER@HOST/DB", options=("registry",))


def _vanishes(url) -> bool:
    """True for a SQLite URL (SQLAlchemy's) whose database lives only as long as its connections: in memory
    (``sqlite://``, ``:memory:``, ``file::memory:``, ``mode=memory``, the ``memdb`` VFS) or a temporary file
    (an empty name)."""
    db = url.database or ""
    name = db[5:] if db.startswith("file:") else db
    query = {str(k).lower(): str(v[-1] if isinstance(v, tuple) else v).lower() for k, v in url.query.items()}
    return (name in ("", ":memory:") or name.startswith(":memory:") or "mode=memory" in name.lower()
            or query.get("mode") == "memory" or query.get("vfs") == "memdb")


def _utc_iso(time: _dt.datetime | str | None) -> str:
    """``time`` (None: now; a naive datetime is local time) as UTC ISO 8601 with microseconds."""
    if time is None:
        t = _dt.datetime.now(_dt.timezone.utc)
    elif isinstance(time, _dt.datetime):
        t = time
    elif isinstance(time, str):
        try:
            t = _dt.datetime.fromisoformat(time.strip())
        except ValueError:
            raise ConfigError(f"run time {time!r} is not an ISO 8601 date and time",
                              hint="give e.g. 2025-03-01T14:05:00+00:00") from None
    else:
        raise ConfigError(f"run time must be a datetime or an ISO 8601 string, got {type(time).__name__}")
    if t.tzinfo is None:
        t = t.astimezone()
    return t.astimezone(_dt.timezone.utc).isoformat(timespec="microseconds")


def _check_robot(robot: Any) -> str:
    name = str(robot).strip() if robot is not None else ""
    if not name:
        raise ConfigError("the robot id is empty", hint="give the robot's id (e.g. its serial number)",
                          options=("robot",))
    if len(name) > ROBOT_MAX or any(ord(c) < 32 for c in name):
        raise ConfigError(f"robot id {name[:40]!r}: at most {ROBOT_MAX} printable characters", options=("robot",))
    return name


def _num(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def robot_of(recording: Any) -> str | None:
    """The robot id a recording names in its metadata (``# robot: ID`` in a CSV), or None.

    Parameters
    ----------
    recording : Recording or path
        A :class:`~dynid.recording.Recording` (its ``meta``) or a recording file: of a CSV only the
        ``#`` lines before the header are read; other formats are read whole.

    Raises
    ------
    FileFormatError
        The file cannot be read.
    """
    from ..recording import Recording

    if isinstance(recording, Recording):
        meta: Mapping[str, str] = recording.meta
    else:
        path = Path(recording)
        if path.suffix.lower() in (".npz", ".parquet", ".pq", ".mcap"):
            from ..io.readers import read_recording

            meta = read_recording(path).meta
        else:
            from ..io.readers import read_preamble

            meta = read_preamble(path)[0]          # the '#' lines before the header row only
    found = {str(k).strip().lower(): v for k, v in meta.items()}.get("robot")
    if found is None:
        return None
    return str(found).strip() or None


def run_entry(fitted: Any, *, robot: str, recording: str | os.PathLike | None = None,
              time: _dt.datetime | str | None = None, result: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The :meth:`Registry.history` entry a run would have, without storing it (``id`` None).

    Parameters
    ----------
    fitted : FittedModel
        The identified model (``Identifier.model_``, or :func:`dynid.load` of a result.json).
    robot : str
        Robot id.
    recording : str or path, optional
        The recording it was identified from.
    time : datetime or ISO 8601 str, optional
        When the run was made (default now; a naive datetime is local time).
    result : mapping, optional
        Its result.json content (default ``fitted.to_dict()``), for the configuration's fingerprint.

    Returns
    -------
    dict
        ``id, robot, time, model, friction, success, recording, dynid_version, parameters, std, units,
        status, metrics, config_fingerprint``; ``parameters``/``std``/``units``/``status`` map parameter
        names (model then friction) to values (SI; ``std`` None where not estimated);
        ``config_fingerprint``: :func:`~dynid.fleet.runs.config_fingerprint`.
    """
    robot = _check_robot(robot)
    result = fitted.to_dict() if result is None else result
    plant = fitted.plant
    units = [p.unit for p in plant.model.parameters] + list(plant.friction.param_units)
    names = list(fitted.param_names)
    metrics = {k: v for k, v in fitted.metrics.items() if k not in _OMIT_METRICS}
    return {
        "id": None,
        "robot": robot,
        "time": _utc_iso(time),
        "model": fitted.model.name,
        "friction": fitted.friction.spec,
        "success": fitted.success,
        "recording": None if recording is None else os.fspath(recording),
        "dynid_version": str(fitted.info.get("dynid_version") or __version__),
        "parameters": dict(zip(names, (_num(v) for v in fitted.theta.tolist()))),
        "std": dict(zip(names, (_num(v) for v in fitted.std.tolist()))),
        "units": dict(zip(names, units)),
        "status": dict(zip(names, fitted.status)),
        "metrics": jsonable(metrics),
        "config_fingerprint": config_fingerprint(result),
    }


def drift_rows(first: Mapping[str, Any], latest: Mapping[str, Any], *, sigmas: float = DRIFT_SIGMAS
               ) -> list[dict[str, Any]]:
    """Each parameter of ``latest`` against ``first`` (two :meth:`Registry.history` entries).

    Returns
    -------
    list of dict
        Per parameter (``latest``'s order, then those only ``first`` has): ``name, first, latest,
        change`` (latest − first), ``sigma`` (``sqrt(std_first² + std_latest²)``, None where either
        run has no std), ``significant`` (``|change| > sigmas · sigma``; False without sigma), and
        ``unit, first_std, latest_std, z`` (change / sigma, None without one).
    """
    pa, pb = first["parameters"], latest["parameters"]
    sa_, sb = first.get("std") or {}, latest.get("std") or {}
    units = {**(first.get("units") or {}), **(latest.get("units") or {})}
    rows = []
    for name in list(pb) + [n for n in pa if n not in pb]:
        a, b = pa.get(name), pb.get(name)
        da, db = sa_.get(name), sb.get(name)
        change = None if a is None or b is None else b - a
        sigma = None if da is None or db is None else math.hypot(da, db)
        significant = change is not None and sigma is not None and abs(change) > sigmas * sigma
        z = change / sigma if change is not None and sigma else None
        rows.append({"name": name, "first": a, "latest": b, "change": change, "sigma": sigma,
                     "significant": bool(significant), "unit": units.get(name), "first_std": da, "latest_std": db,
                     "z": z})
    return rows


def _sqlalchemy():
    try:
        import sqlalchemy
    except ImportError as err:
        raise MissingExtraError("the registry", "fleet", "sqlalchemy") from err
    return sqlalchemy


# ---------------------------------------------------------------------------------------------- registry

class Registry:
    """A registry of identification runs (SQLite file or PostgreSQL database).

    Parameters
    ----------
    url : str or path
        ``sqlite:///PATH.db``, a plain file path (SQLite), or ``postgresql://USER[:PASSWORD]@HOST[:PORT]/DB``
        (see :func:`registry_url`).
    create : bool
        Create the SQLite file (and the schema in an empty database) when absent. With False, a missing
        SQLite file is an error (reading commands: a mistyped path must not create an empty registry).

    Raises
    ------
    ConfigError
        An unsupported URL.
    MissingExtraError
        SQLAlchemy (or psycopg for PostgreSQL) is not installed: extra ``fleet``.
    RegistryError
        The database cannot be reached or is not a dynid registry, or was written by a newer dynid.

    Notes
    -----
    Opening connects and brings the schema up to :data:`SCHEMA_VERSION`. A registry may be shared by
    processes and threads; a forked child opens its own connections, and a pickled registry is its URL.
    """

    def __init__(self, url: str | os.PathLike, *, create: bool = True) -> None:
        self.url = registry_url(url)
        self.create = bool(create)
        sa = _sqlalchemy()
        try:
            self._url = sa.engine.make_url(self.url)
        except sa.exc.ArgumentError as err:
            raise ConfigError(f"registry URL {os.fspath(url)!r} cannot be parsed ({err})",
                              hint="give sqlite:///PATH.db or postgresql://USER@HOST/DB", options=("registry",)) from None
        self.display_url = self._url.render_as_string(hide_password=True)
        self.dialect = self._url.get_backend_name()
        if self.dialect == "sqlite" and _vanishes(self._url):
            raise ConfigError(f"registry {os.fspath(url)!r} is an in-memory database: the runs recorded in it would "
                              "be lost when the command ends", hint="give a file: sqlite:///path/to/runs.db",
                              options=("registry",))
        self._t = _tables(sa)
        self._engine = self._make_engine(sa)
        self._pid = os.getpid()
        try:
            self._migrate()
        except BaseException:
            self._engine.dispose()
            raise

    # -------------------------------------------------------------------------------- connections
    def _make_engine(self, sa):
        if self.dialect == "sqlite":
            db = self._url.database or ""
            if db and db != ":memory:" and not db.startswith("file:"):
                path = Path(db)
                if path.is_dir():
                    raise RegistryError(f"registry {db} is a folder", hint="give a file name, e.g. fleet.db",
                                        options=("registry",))
                if not path.exists() and not self.create:
                    raise RegistryError(f"no registry at {db}: the file does not exist",
                                        hint="check the path (a run recorded with a registry creates it)",
                                        options=("registry",))
                if not path.parent.is_dir():
                    raise RegistryError(f"cannot create the registry {db}: folder {path.parent} does not exist",
                                        hint="create the folder or choose another path", options=("registry",))
            engine = sa.create_engine(self._url, connect_args={"timeout": BUSY_TIMEOUT_S})

            @sa.event.listens_for(engine, "connect")
            def _connect(dbapi_connection, _record):  # SQLAlchemy, not sqlite3, begins the transactions
                dbapi_connection.isolation_level = None
                cur = dbapi_connection.cursor()
                try:
                    cur.execute("PRAGMA journal_mode=WAL")  # readers never block the writer, nor it them
                    cur.execute("PRAGMA foreign_keys=ON")
                finally:
                    cur.close()

            @sa.event.listens_for(engine, "begin")
            def _begin(conn):  # a write takes the lock at BEGIN, so it never fails upgrading a read lock
                mode = "IMMEDIATE" if conn.get_execution_options().get("dynid_write") else "DEFERRED"
                conn.exec_driver_sql(f"BEGIN {mode}")

            return engine
        if self._url.get_driver_name() == "psycopg":
            try:
                import psycopg  # noqa: F401
            except ImportError as err:
                raise MissingExtraError("a PostgreSQL registry", "fleet", "psycopg") from err
        try:
            return sa.create_engine(self._url, pool_pre_ping=True)
        except (ImportError, sa.exc.ArgumentError) as err:
            raise RegistryError(f"registry {self.display_url}: cannot use this database ({err})",
                                options=("registry",)) from err

    @property
    def engine(self):
        """The SQLAlchemy engine (re-created in a forked child, whose parent's connections are not its own)."""
        if os.getpid() != self._pid:
            self._engine.dispose(close=False)
            self._pid = os.getpid()
        return self._engine

    @contextmanager
    def _transaction(self, write: bool, action: str) -> Iterator[Any]:
        sa = _sqlalchemy()
        try:
            with self.engine.connect() as conn:
                if write:
                    conn = conn.execution_options(dynid_write=True)
                with conn.begin():
                    yield conn
        except sa.exc.SQLAlchemyError as err:
            orig = getattr(err, "orig", None) or err
            text = " ".join(str(orig).split())
            hint = None
            if self.dialect == "sqlite" and "not a database" in text:
                hint = "the file is not a SQLite database: give another path"
            elif isinstance(err, sa.exc.OperationalError) and self.dialect != "sqlite":
                hint = "check that the PostgreSQL server is running and the URL (user, host, port, database)"
            raise RegistryError(f"registry {self.display_url}: cannot {action} ({text})", hint=hint,
                                options=("registry",)) from err

    def close(self) -> None:
        """Close the connections (the registry can still be used: it reconnects)."""
        self._engine.dispose()

    def __enter__(self) -> "Registry":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __reduce__(self):
        return (_reopen, (self.url, self.create))

    def __repr__(self) -> str:
        return f"Registry({self.display_url!r})"

    # -------------------------------------------------------------------------------- schema
    def _version(self, conn) -> int:
        sa = _sqlalchemy()
        names = set(sa.inspect(conn).get_table_names())
        if "dynid_schema" not in names:
            ours = {"dynid_robots", "dynid_runs", "dynid_parameters"} & names
            if ours:
                raise RegistryError(f"registry {self.display_url}: tables {sorted(ours)} exist without dynid's "
                                    "schema table: not a registry dynid can use", options=("registry",))
            return 0
        v = conn.execute(sa.select(sa.func.max(self._t["schema"].c.version))).scalar()
        return int(v or 0)

    def _migrate(self) -> None:
        with self._transaction(False, "read the schema version") as conn:
            version = self._version(conn)
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise RegistryError(f"registry {self.display_url} has schema version {version}, this dynid "
                                f"{__version__} knows up to {SCHEMA_VERSION}", hint="upgrade dynid to use it")
        sa = _sqlalchemy()
        with self._transaction(True, "create or upgrade the schema") as conn:
            if self.dialect == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
            self._t["metadata"].create_all(conn, tables=[self._t["schema"]])
            version = self._version(conn)  # another process may have done it meanwhile
            for number, description, step in MIGRATIONS:
                if number > version:
                    step(conn, self._t)
                    conn.execute(sa.insert(self._t["schema"]).values(version=number, applied=_utc_iso(None),
                                                                     description=description))

    @property
    def schema_version(self) -> int:
        """The schema version of the database."""
        with self._transaction(False, "read the schema version") as conn:
            return self._version(conn)

    # -------------------------------------------------------------------------------- writing
    def record(self, fitted: Any, *, robot: str, recording: str | os.PathLike | None = None,
               time: _dt.datetime | str | None = None, result: Mapping[str, Any] | None = None) -> int:
        """Store one identified run (one transaction) unless the robot has it already; returns its run id.

        Parameters
        ----------
        fitted : FittedModel
            The identified model: parameters, std, friction, metrics; its result.json is stored too.
        robot : str
            Robot id (the recording's ``# robot: ID``).
        recording : str or path, optional
            The recording it was identified from (stored as given).
        time : datetime or ISO 8601 str, optional
            When the run was made (default now; a naive datetime is local time); runs are ordered by it.
        result : mapping, optional
            ``fitted``'s result.json as written (default ``fitted.to_dict()``): stored, and its
            :func:`~dynid.fleet.runs.result_hash` identifies the run.

        Raises
        ------
        ConfigError
            An empty robot id or an unreadable time.
        RegistryError
            The database refused the write (nothing of the run is stored then).
        """
        return self.add(fitted, robot=robot, recording=recording, time=time, result=result)[0]

    def add(self, fitted: Any, *, robot: str, recording: str | os.PathLike | None = None,
            time: _dt.datetime | str | None = None, result: Mapping[str, Any] | None = None) -> tuple[int, bool]:
        """:meth:`record`, returning ``(run id, stored)``: ``stored`` is False when the robot already had
        this result (same :func:`~dynid.fleet.runs.result_hash`), whose run id is returned then."""
        result = fitted.to_dict() if result is None else result
        entry = run_entry(fitted, robot=robot, recording=recording, time=time, result=result)
        digest = result_hash(result)
        t = self._t
        sa = _sqlalchemy()
        with self._transaction(True, f"record a run of robot {entry['robot']!r}") as conn:
            if self.dialect == "postgresql":   # (SQLite's writers are serialised by BEGIN IMMEDIATE)
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": int(digest[:15], 16)})
            robot_id = self._robot_id(conn, entry["robot"], entry["time"])
            found = self._run_of(conn, robot_id, digest)
            if found is not None:
                return found, False
            run_id = conn.execute(sa.insert(t["runs"]).values(
                robot_id=robot_id, time=entry["time"], model=entry["model"], friction=entry["friction"],
                success=entry["success"], recording=entry["recording"], dynid_version=entry["dynid_version"],
                metrics=json.dumps(entry["metrics"], separators=(",", ":")),
                result=json.dumps(jsonable(result), separators=(",", ":")), result_hash=digest,
                config_fingerprint=entry["config_fingerprint"])).inserted_primary_key[0]
            conn.execute(sa.insert(t["parameters"]), [
                {"run_id": run_id, "position": k, "name": name, "value": entry["parameters"][name],
                 "std": entry["std"][name], "unit": entry["units"][name], "status": entry["status"][name]}
                for k, name in enumerate(entry["parameters"])])
        return int(run_id), True

    def find(self, result: Mapping[str, Any], robot: str) -> int | None:
        """The run id of ``robot`` that holds ``result`` (a result.json's content; see
        :func:`~dynid.fleet.runs.result_hash`), or None."""
        sa = _sqlalchemy()
        robots = self._t["robots"]
        with self._transaction(False, "look the result up") as conn:
            rid = conn.execute(sa.select(robots.c.id).where(robots.c.name == _check_robot(robot))).scalar()
            return None if rid is None else self._run_of(conn, rid, result_hash(result))

    def _run_of(self, conn, robot_id: int, digest: str) -> int | None:
        sa = _sqlalchemy()
        runs = self._t["runs"]
        found = conn.execute(sa.select(runs.c.id).where(runs.c.robot_id == robot_id, runs.c.result_hash == digest)
                             .order_by(runs.c.id).limit(1)).scalar()
        return None if found is None else int(found)

    def _robot_id(self, conn, name: str, time: str) -> int:
        sa = _sqlalchemy()
        robots = self._t["robots"]
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        conn.execute(insert(robots).values(name=name, created=time).on_conflict_do_nothing(index_elements=["name"]))
        return int(conn.execute(sa.select(robots.c.id).where(robots.c.name == name)).scalar_one())

    # -------------------------------------------------------------------------------- reading
    def robots(self) -> list[str]:
        """The robot ids that have runs, sorted."""
        sa = _sqlalchemy()
        t = self._t
        with self._transaction(False, "list the robots") as conn:
            q = sa.select(t["robots"].c.name).where(
                sa.exists().where(t["runs"].c.robot_id == t["robots"].c.id)).order_by(t["robots"].c.name)
            return [r[0] for r in conn.execute(q)]

    def run_counts(self) -> dict[str, int]:
        """``{robot: number of runs}`` of the robots that have runs, sorted by robot id."""
        sa = _sqlalchemy()
        robots, runs = self._t["robots"], self._t["runs"]
        with self._transaction(False, "count the runs") as conn:
            q = (sa.select(robots.c.name, sa.func.count(runs.c.id)).join(runs, runs.c.robot_id == robots.c.id)
                 .group_by(robots.c.name).order_by(robots.c.name))
            return {name: int(n) for name, n in conn.execute(q)}

    def history(self, robot: str | None = None) -> list[dict[str, Any]]:
        """The runs, oldest first (by time, then by id), of one robot or of all.

        Returns
        -------
        list of dict
            Per run: ``id, robot, time`` (UTC ISO 8601), ``model, friction, success, recording,
            dynid_version, parameters`` (``{name: value}``, SI), ``std, units, status`` (by name),
            ``metrics`` (result.json's, without the diagnostics' evidence) and ``config_fingerprint``
            (None for a run whose stored result holds no configuration). An unknown robot has none.
        """
        sa = _sqlalchemy()
        runs, robots = self._t["runs"], self._t["robots"]
        if robot is None:
            return self._entries(sa.true())
        rid = sa.select(robots.c.id).where(robots.c.name == str(robot).strip()).scalar_subquery()
        return self._entries(runs.c.robot_id == rid)

    def _entries(self, where) -> list[dict[str, Any]]:
        """The history entries of the runs ``where`` selects, oldest first."""
        sa = _sqlalchemy()
        t = self._t
        runs, robots, params = t["runs"], t["robots"], t["parameters"]
        cols = [runs.c.id, robots.c.name, runs.c.time, runs.c.model, runs.c.friction, runs.c.success,
                runs.c.recording, runs.c.dynid_version, runs.c.metrics, runs.c.config_fingerprint]
        q = (sa.select(*cols).join(robots, runs.c.robot_id == robots.c.id).where(where)
             .order_by(runs.c.time, runs.c.id))
        pq = (sa.select(params.c.run_id, params.c.name, params.c.value, params.c.std, params.c.unit, params.c.status)
              .join(runs, params.c.run_id == runs.c.id).where(where).order_by(params.c.run_id, params.c.position))
        with self._transaction(False, "read the history") as conn:
            rows = conn.execute(q).all()
            prows = conn.execute(pq).all()
        out: dict[int, dict[str, Any]] = {}
        for r in rows:
            out[r.id] = {"id": int(r.id), "robot": r.name, "time": r.time, "model": r.model, "friction": r.friction,
                         "success": None if r.success is None else bool(r.success), "recording": r.recording,
                         "dynid_version": r.dynid_version, "parameters": {}, "std": {}, "units": {}, "status": {},
                         "metrics": json.loads(r.metrics) if r.metrics else {},
                         "config_fingerprint": r.config_fingerprint}
        for p in prows:
            e = out.get(p.run_id)
            if e is None:  # a run committed between the two reads
                continue
            e["parameters"][p.name] = _num(p.value)
            e["std"][p.name] = _num(p.std)
            e["units"][p.name] = p.unit
            e["status"][p.name] = p.status
        return list(out.values())

    def drift(self, robot: str) -> list[dict[str, Any]]:
        """Each parameter of the robot's latest run against its first run of the same model and configuration
        (see :meth:`comparison` and :func:`drift_rows`).

        Raises
        ------
        ConfigError
            The registry has no run of ``robot``.
        """
        c = self.comparison(robot)
        return drift_rows(c.first, c.latest)

    def comparison(self, robot: str) -> Comparison:
        """Which runs :meth:`drift` compares: the robot's latest run and its first run of the same model and
        configuration (the latest itself when there is none), and the runs skipped, with the reason
        (:func:`~dynid.fleet.runs.comparison`). ``first`` and ``latest`` are :meth:`history` entries.

        Raises
        ------
        ConfigError
            The registry has no run of ``robot`` (the message lists the robots it has).
        """
        sa = _sqlalchemy()
        runs = self._t["runs"]
        robot, rid = self._robot_key(robot)
        q = (sa.select(runs.c.id, runs.c.time, runs.c.model, runs.c.config_fingerprint)
             .where(runs.c.robot_id == rid).order_by(runs.c.time, runs.c.id))
        with self._transaction(False, "read the history") as conn:
            meta = [dict(r._mapping) for r in conn.execute(q)]
        if not meta:
            self._no_robot(robot)
        plan = comparison(meta)
        found = {e["id"]: e for e in self._entries(runs.c.id.in_([plan.first["id"], plan.latest["id"]]))}
        return replace(plan, first=found[plan.first["id"]], latest=found[plan.latest["id"]])

    def first_and_latest(self, robot: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The robot's first and latest runs (:meth:`history` entries; the same one when it has one run),
        read without the runs between, whatever their models (:meth:`comparison` picks comparable runs).
        :class:`ConfigError` when the registry has no run of ``robot``."""
        sa = _sqlalchemy()
        runs = self._t["runs"]
        robot, rid = self._robot_key(robot)
        ends = [sa.select(runs.c.id).where(runs.c.robot_id == rid).order_by(*order).limit(1).scalar_subquery()
                for order in ((runs.c.time, runs.c.id), (runs.c.time.desc(), runs.c.id.desc()))]
        found = self._entries(runs.c.id.in_([ends[0], ends[1]]))
        if not found:
            self._no_robot(robot)
        return found[0], found[-1]

    def _robot_key(self, robot: str) -> tuple[str, Any]:
        """The checked robot id and a subquery of its row id."""
        robots = self._t["robots"]
        robot = _check_robot(robot)
        return robot, _sqlalchemy().select(robots.c.id).where(robots.c.name == robot).scalar_subquery()

    def runs_of(self, robot: str) -> list[dict[str, Any]]:
        """:meth:`history` of one robot that must have runs (:class:`ConfigError` naming the robots there if not)."""
        robot = _check_robot(robot)
        runs = self.history(robot)
        if not runs:
            self._no_robot(robot)
        return runs

    def _no_robot(self, robot: str) -> None:
        known = self.robots()
        listed = ", ".join(known[:10]) + (" ..." if len(known) > 10 else "") if known else "none"
        raise ConfigError(f"registry {self.display_url} has no run of robot {robot!r} (robots: {listed})",
                          hint="check the robot id", options=("robot",))

    def model(self, run_id: int) -> Any:
        """The :class:`~dynid.fitted.FittedModel` of a stored run (from its result.json)."""
        from ..fitted import FittedModel

        sa = _sqlalchemy()
        runs = self._t["runs"]
        with self._transaction(False, f"read run {run_id}") as conn:
            text = conn.execute(sa.select(runs.c.result).where(runs.c.id == int(run_id))).scalar()
        if text is None:
            raise ConfigError(f"registry {self.display_url} has no run {run_id}")
        return FittedModel.from_dict(json.loads(text), where=f"{self.display_url}, run {run_id}")

    def history_view(self, fitted: Any, *, robot: str, recording: str | os.PathLike | None = None,
                     time: _dt.datetime | str | None = None, result: Mapping[str, Any] | None = None
                     ) -> dict[str, Any]:
        """What a run's report shows of its robot: the stored runs plus this one (not stored by this call;
        a result the robot has already is shown as that run).

        Returns
        -------
        dict
            ``robot``, ``registry`` (URL without password), ``runs`` (:meth:`history` entries with their
            ``number`` in the robot's history, 1 = first; this run with ``"current": True``, last unless
            stored before; of more than :data:`VIEW_RUNS` runs the first and the latest), ``n_runs`` (all
            of them), ``drift`` (:func:`drift_rows` of this run against the robot's first run of the same
            model and configuration; empty when there is none), ``compared_with`` (that run's ``number``,
            or None), ``comparison`` (the comparison in sentences, runs named by number) and ``sigmas``
            (:data:`DRIFT_SIGMAS`).
        """
        result = fitted.to_dict() if result is None else result
        this = dict(run_entry(fitted, robot=robot, recording=recording, time=time, result=result), current=True)
        runs = self.history(this["robot"])
        stored = self.find(result, this["robot"]) if runs else None
        at = next((k for k, run in enumerate(runs) if run["id"] == stored), None)
        if at is None:
            runs.append(this)
            at = len(runs) - 1
        else:
            runs[at]["current"] = True
        for k, run in enumerate(runs):
            run["number"] = k + 1
        plan = comparison(runs[:at + 1])
        compared = plan.compared
        shown = runs if len(runs) <= VIEW_RUNS else runs[:1] + runs[len(runs) - VIEW_RUNS + 1:]
        return {"robot": this["robot"], "registry": self.display_url, "runs": shown, "n_runs": len(runs),
                "drift": drift_rows(plan.first, plan.latest) if compared else [],
                "compared_with": plan.first["number"] if compared else None,
                "comparison": plan.describe(lambda run: f"run {run['number']}"), "sigmas": DRIFT_SIGMAS}


def _reopen(url: str, create: bool) -> Registry:
    return Registry(url, create=create)


def open_registry(url: str | os.PathLike, *, create: bool = True) -> Registry:
    """``Registry(url, create=create)``."""
    return Registry(url, create=create)
