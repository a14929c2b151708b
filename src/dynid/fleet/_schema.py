"""The registry's database schema and its migrations (SQLAlchemy Core; see :mod:`dynid.fleet.registry`).

:data:`MIGRATIONS` are the steps from an empty database to :data:`SCHEMA_VERSION`; the ``dynid_schema``
table records which were applied. A step never changes: a later version adds a step that alters what the
earlier ones made (and fills in what it adds for the runs stored before).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping

from .runs import config_fingerprint, result_hash

__all__ = ["tables", "MIGRATIONS", "SCHEMA_VERSION", "ROBOT_MAX"]

ROBOT_MAX = 200
"""Longest robot id [characters]."""


def tables(sa, version: int | None = None) -> dict[str, Any]:
    """The tables of a schema version (SQLAlchemy Core; default the current one)."""
    version = SCHEMA_VERSION if version is None else version
    md = sa.MetaData()
    schema = sa.Table("dynid_schema", md,
                      sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
                      sa.Column("applied", sa.String(40), nullable=False),
                      sa.Column("description", sa.Text, nullable=False))
    robots = sa.Table("dynid_robots", md,
                      sa.Column("id", sa.Integer, primary_key=True),
                      sa.Column("name", sa.String(ROBOT_MAX), nullable=False, unique=True),
                      sa.Column("created", sa.String(40), nullable=False))
    runs = sa.Table("dynid_runs", md,
                    sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("robot_id", sa.Integer, sa.ForeignKey("dynid_robots.id"), nullable=False),
                    sa.Column("time", sa.String(40), nullable=False),
                    sa.Column("model", sa.String(100), nullable=False),
                    sa.Column("friction", sa.String(200)),
                    sa.Column("success", sa.Boolean),
                    sa.Column("recording", sa.Text),
                    sa.Column("dynid_version", sa.String(40)),
                    sa.Column("metrics", sa.Text),
                    sa.Column("result", sa.Text),
                    *(_v2_columns(sa) if version >= 2 else ()),
                    sa.Index("ix_dynid_runs_robot_time", "robot_id", "time"))
    params = sa.Table("dynid_parameters", md,
                      sa.Column("run_id", sa.Integer, sa.ForeignKey("dynid_runs.id"), primary_key=True),
                      sa.Column("position", sa.Integer, primary_key=True, autoincrement=False),
                      sa.Column("name", sa.String(200), nullable=False),
                      sa.Column("value", sa.Double),
                      sa.Column("std", sa.Double),
                      sa.Column("unit", sa.String(40)),
                      sa.Column("status", sa.String(40)))
    return {"metadata": md, "schema": schema, "robots": robots, "runs": runs, "parameters": params}


def _v2_columns(sa) -> tuple[Any, ...]:
    """What version 2 adds to ``dynid_runs``: the result's identity and the configuration's fingerprint."""
    return (sa.Column("result_hash", sa.String(64)), sa.Column("config_fingerprint", sa.String(64)),
            sa.Index("ix_dynid_runs_robot_result", "robot_id", "result_hash"))


def _create_v1(conn, t: Mapping[str, Any]) -> None:
    # the version-1 tables (later steps alter them)
    import sqlalchemy as sa

    v1 = tables(sa, 1)
    v1["metadata"].create_all(conn, tables=[v1["robots"], v1["runs"], v1["parameters"]])


def _upgrade_v2(conn, t: Mapping[str, Any]) -> None:
    import sqlalchemy as sa

    runs = t["runs"]
    for name in ("result_hash", "config_fingerprint"):
        conn.execute(sa.text(f"ALTER TABLE dynid_runs ADD COLUMN {name} VARCHAR(64)"))
    next(ix for ix in runs.indexes if ix.name == "ix_dynid_runs_robot_result").create(conn)
    ids = [r[0] for r in conn.execute(sa.select(runs.c.id).where(runs.c.result.is_not(None)))]
    for k in range(0, len(ids), 500):     # the earlier runs' identities, from their stored result.json
        rows = conn.execute(sa.select(runs.c.id, runs.c.result).where(runs.c.id.in_(ids[k:k + 500]))).all()
        updates = []
        for run_id, text in rows:
            try:
                result = json.loads(text)
            except ValueError:
                continue
            if isinstance(result, dict):
                updates.append({"rid": run_id, "h": result_hash(result), "f": config_fingerprint(result)})
        if updates:
            conn.execute(sa.update(runs).where(runs.c.id == sa.bindparam("rid"))
                         .values(result_hash=sa.bindparam("h"), config_fingerprint=sa.bindparam("f")), updates)


MIGRATIONS: tuple[tuple[int, str, Callable[[Any, Mapping[str, Any]], None]], ...] = (
    (1, "robots, runs (time, model, success, metrics, result.json) and parameters (value, std, unit, status)",
     _create_v1),
    (2, "runs: result_hash (one run per result and robot) and config_fingerprint (drift compares runs of the same "
        "model and configuration), filled in from the stored result.json", _upgrade_v2),
)
"""``(version, description, step(connection, tables))`` in order; a registry at version k runs the steps after k."""

SCHEMA_VERSION = MIGRATIONS[-1][0]
