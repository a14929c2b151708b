"""Registry fixtures: a SQLite file always, and a real PostgreSQL server (started here, no mocks).

The server comes from :mod:`._postgres` (the machine's ``postgresql`` binaries, run as the ``postgres``
user when the tests run as root; or ``DYNID_TEST_POSTGRESQL_URL``); the PostgreSQL cases skip, saying
why, when none can be started. Each test gets a database of its own.
"""

from __future__ import annotations

import pytest

from ._postgres import Unavailable, start_server


@pytest.fixture(scope="session")
def postgresql_server():
    """A PostgreSQL server for the whole session (one per xdist worker)."""
    try:
        server = start_server()
    except Unavailable as err:
        pytest.skip(f"PostgreSQL registry tests skipped: {err}")
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def registry_url(request, tmp_path):
    """The URL of an empty registry: a SQLite file, then a new PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fleet.db'}"
        return
    server = request.getfixturevalue("postgresql_server")
    url = server.create_database()
    yield url
    server.drop_database(url)
