"""Redis and PostgreSQL for the tests, started from the system's binaries on loopback.

`DEEP_RESEARCH_TEST_REDIS_URL` / `DEEP_RESEARCH_TEST_POSTGRES_URL` name servers that are
already running (`.ci/run` starts them); without them a throwaway server is started from
`redis-server` / PostgreSQL's `initdb` and `pg_ctl` when those are installed. When neither is
possible the test skips with the reason, except under CI (`CI` set), where it fails.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _missing(reason: str) -> None:
    """Skip (plain pytest) or fail (CI) a test whose server cannot be had."""
    if os.environ.get("CI"):
        pytest.fail(f"CI must provide this: {reason}")
    pytest.skip(reason)


def _wait_for_port(port: int, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.02)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


class RedisServer:
    """A throwaway redis-server on loopback, which a test may stop and start again."""

    def __init__(self) -> None:
        self.port = free_port()
        self.folder = tempfile.mkdtemp(prefix="deep-research-redis-")
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        command = [
            shutil.which("redis-server") or "redis-server",
            "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", self.folder,
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        _wait_for_port(self.port)
        return self

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def flush(self) -> None:
        import redis

        redis.Redis.from_url(self.url).flushall()


@pytest.fixture(scope="session")
def redis_service() -> Iterator[str]:
    """The URL of a Redis for this test session."""
    given = os.environ.get("DEEP_RESEARCH_TEST_REDIS_URL")
    if given:
        yield given
        return
    if not shutil.which("redis-server"):
        _missing("no redis-server: install Redis or set DEEP_RESEARCH_TEST_REDIS_URL")
    server = RedisServer().start()
    yield server.url
    server.stop()
    shutil.rmtree(server.folder, ignore_errors=True)


REDIS_DATABASES = 16  # redis-server's default number of logical databases
SPARE_DATABASE = REDIS_DATABASES - 1  # no test process gets it: a test may empty it freely


def worker_database(server_url: str, worker_id: str) -> str:
    """The URL of this test process's own logical database on the server: xdist's `gw0` gets
    database 1, `gw1` database 2, a run without xdist database 0. Tests in two processes at once
    never see, or flush, each other's keys."""
    number = int(worker_id[2:]) + 1 if worker_id.startswith("gw") else 0
    if number >= SPARE_DATABASE:
        raise RuntimeError(f"Redis has {REDIS_DATABASES} databases: run at most 14 test processes")
    return database_url(server_url, number)


def database_url(server_url: str, number: int) -> str:
    """The server's URL naming logical database `number` (whatever database it named)."""
    from urllib.parse import urlsplit, urlunsplit

    return urlunsplit(urlsplit(server_url)._replace(path=f"/{number}"))


@pytest.fixture
def redis_url(redis_service: str, worker_id: str) -> str:
    """A Redis database with nothing in it (each test starts from empty limits), used by this
    test process alone: flushing it leaves another process's test running undisturbed."""
    import redis

    url = worker_database(redis_service, worker_id)
    redis.Redis.from_url(url).flushdb()
    return url


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    return Path(found[-1]) if found and (Path(found[-1]) / "pg_ctl").exists() else None


class PostgresServer:
    """A throwaway PostgreSQL server on loopback (as `postgres` when we are root)."""

    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.folder = tempfile.mkdtemp(prefix="deep-research-pg-")
        os.chmod(self.folder, 0o777)
        self.data, self.port = os.path.join(self.folder, "data"), free_port()

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> PostgresServer:
        subprocess.run(
            [*self.as_user, str(self.binaries / "initdb"), "-D", self.data, "-A", "trust",
             "-U", "postgres"],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1"
        subprocess.run(
            [*self.as_user, str(self.binaries / "pg_ctl"), "-D", self.data, "-l",
             os.path.join(self.folder, "log"), "-w", "-o", f"{options} -c max_connections=200",
             "start"],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        return self

    def stop(self) -> None:
        subprocess.run(
            [*self.as_user, str(self.binaries / "pg_ctl"), "-D", self.data, "-m", "immediate",
             "stop"],
            check=False, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        shutil.rmtree(self.folder, ignore_errors=True)


def pg_binaries() -> Path | None:
    """PostgreSQL's server binaries, newest version first, if installed."""
    return _pg_bin()


@pytest.fixture(scope="session")
def postgres_service() -> Iterator[str]:
    """The URL of a PostgreSQL server for this test session (the `postgres` database)."""
    given = os.environ.get("DEEP_RESEARCH_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    binaries = _pg_bin()
    if binaries is None:
        _missing("no PostgreSQL: install it or set DEEP_RESEARCH_TEST_POSTGRES_URL")
    if os.geteuid() == 0 and not shutil.which("runuser"):
        _missing("PostgreSQL cannot run as root and runuser is missing")
    server = PostgresServer(binaries).start()
    yield server.url
    server.stop()


def new_database(server_url: str) -> str:
    """A new, empty database on the server; its URL."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    return server_url.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture
def empty_postgres(postgres_service: str) -> str:
    """A new, empty database on the session's PostgreSQL (no tables of anyone's)."""
    return new_database(postgres_service)
