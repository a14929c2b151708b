"""A throw-away PostgreSQL server for the registry tests and benchmark (no mocks).

:func:`start_server` runs the server binaries of the machine (Debian's ``postgresql`` package puts them
in ``/usr/lib/postgresql/<major>/bin``; else ``pg_ctl`` on the PATH): ``initdb`` into a temporary folder,
``pg_ctl start`` on a free port of 127.0.0.1, trust authentication. PostgreSQL refuses to run as
root, so as root the commands run as the ``postgres`` system user (``runuser``). Each step that is
impossible raises :class:`Unavailable` with the reason, which the tests turn into a skip.

``DYNID_TEST_POSTGRESQL_URL`` (``postgresql://USER@HOST:PORT/``, a server where USER may create
databases) is used instead when set.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

ENV_URL = "DYNID_TEST_POSTGRESQL_URL"


class Unavailable(RuntimeError):
    """No PostgreSQL server can be started here (the message says why)."""


@dataclass
class Server:
    """A running server: ``url`` ends with ``/`` (append a database name); ``stop()`` ends it (if ours)."""

    url: str
    folder: Path | None = None
    pg_ctl: str | None = None
    as_user: tuple[str, ...] = ()

    def stop(self) -> None:
        if self.folder is None:
            return
        subprocess.run([*self.as_user, self.pg_ctl, "-D", str(self.folder / "data"), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(self.folder, ignore_errors=True)

    def create_database(self) -> str:
        """A new empty database; returns its URL."""
        name = "dynid_" + uuid.uuid4().hex[:12]
        _admin(self.url, f'CREATE DATABASE "{name}"')
        return self.url + name

    def drop_database(self, url: str) -> None:
        _admin(self.url, f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)')


def _admin(base_url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(base_url + "postgres", autocommit=True) as conn:
        conn.execute(sql)


def _binaries() -> Path:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).parent
    majors = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    if majors:
        return Path(majors[-1]).parent
    raise Unavailable("PostgreSQL server binaries not found (pg_ctl neither on PATH nor in /usr/lib/postgresql/*/bin);"
                      " install Debian's 'postgresql' package or set " + ENV_URL)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(*, durable: bool = False) -> Server:
    """Start a server (or use ``DYNID_TEST_POSTGRESQL_URL``).

    ``durable=False`` turns fsync off (tests); the benchmark uses ``durable=True``, the defaults.
    """
    if os.environ.get(ENV_URL):
        url = os.environ[ENV_URL]
        return Server(url if url.endswith("/") else url + "/")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise Unavailable("psycopg 3 is not installed (pip install 'dynid[fleet]')") from None
    bindir = _binaries()
    as_user: tuple[str, ...] = ()
    folder = Path(tempfile.mkdtemp(prefix="dynid-pg-"))
    if os.geteuid() == 0:
        runuser = shutil.which("runuser")
        try:
            import pwd

            pw = pwd.getpwnam("postgres")
        except KeyError:
            pw = None
        if runuser is None or pw is None:
            shutil.rmtree(folder, ignore_errors=True)
            raise Unavailable("running as root, and PostgreSQL refuses root: needs the 'postgres' system user and "
                              "runuser to start a server as that user")
        os.chown(folder, pw.pw_uid, pw.pw_gid)
        as_user = (runuser, "-u", "postgres", "--")
    try:
        init = subprocess.run([*as_user, str(bindir / "initdb"), "-D", str(folder / "data"), "-A", "trust",
                               "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"],
                              capture_output=True, text=True, timeout=120)
        if init.returncode != 0:
            raise Unavailable(f"initdb failed: {(init.stderr or init.stdout).strip()[-300:]}")
        options = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off" if not durable else ""
        for _attempt in range(3):  # the free port may be taken between looking and binding
            port = _free_port()
            start = subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(folder / "data"), "-l",
                                    str(folder / "log"), "-w", "-t", "60", "-o",
                                    f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 {options}", "start"],
                                   capture_output=True, text=True, timeout=120)
            if start.returncode == 0:
                return Server(f"postgresql://postgres@127.0.0.1:{port}/", folder, str(bindir / "pg_ctl"), as_user)
        log = (folder / "log").read_text(errors="replace")[-300:] if (folder / "log").exists() else ""
        raise Unavailable(f"pg_ctl start failed: {(start.stderr or start.stdout).strip()[-300:]} {log}")
    except (OSError, subprocess.TimeoutExpired) as err:
        shutil.rmtree(folder, ignore_errors=True)
        raise Unavailable(f"cannot start PostgreSQL: {err}") from err
    except Unavailable:
        shutil.rmtree(folder, ignore_errors=True)
        raise
