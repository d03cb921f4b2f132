"""Shared fixtures: a service on an in-memory SQLite, and a real PostgreSQL when present.

Tests run rule code in-process (:class:`InProcessHost`: the sandbox's own Sandbox, budget
and plain-data checks, no worker processes) unless they are about the sandbox itself —
memory limits, killed workers — which ask for ``sandbox_service`` or build a
``SandboxHost``. ``make_service(url)`` builds more services on the shared in-process host.
"""

from __future__ import annotations

import compileall
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from scriba.rulecode.inprocess import InProcessHost
from scriba.service import Service, open_service

REPO = Path(__file__).resolve().parents[1]


def _one_tls_context_for_every_client() -> None:
    """Every test speaks plain HTTP to loopback, yet each httpx client (and each
    ``httpx.get``) loads the CA bundle into a TLS context of its own: 26 ms, about 1,700
    times a run. One default context, made once, is handed to them all (httpx takes an
    ``SSLContext`` as ``verify``); it verifies as the default would."""
    import inspect
    import ssl

    import certifi
    import httpx
    import httpx._api

    context = ssl.create_default_context(cafile=certifi.where())
    functions = [httpx.Client.__init__, httpx.AsyncClient.__init__,
                 *(f for f in vars(httpx._api).values() if inspect.isfunction(f))]
    for function in functions:
        if (function.__kwdefaults__ or {}).get("verify") is True:
            function.__kwdefaults__["verify"] = context


_one_tls_context_for_every_client()


def pytest_configure(config: pytest.Config) -> None:
    """Compile Scriba's modules once when this environment forbids writing bytecode.

    With PYTHONDONTWRITEBYTECODE every process the suite starts — each ``scriba serve``, CLI
    call, sandbox worker — compiled Scriba's ~150 modules from source again (0.3-0.5 s of
    CPU each, hundreds of times a run). The installed libraries keep their .pyc from pip; this
    gives ``src/scriba`` the same (in the ignored __pycache__ folders). Hash-checked .pyc
    files: a module edited during the run is compiled afresh, never run stale."""
    if not sys.dont_write_bytecode or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    compileall.compile_dir(REPO / "src" / "scriba", quiet=2,
                           invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)


@pytest.fixture(scope="session")
def rule_host() -> Iterator[InProcessHost | None]:
    """One in-process host for the whole run: its compile cache is shared, like a worker's.

    SCRIBA_TEST_HOST=sandbox gives every service its own sandbox workers instead, as
    before the in-process host (to compare, or to run everything in the sandbox)."""
    if os.environ.get("SCRIBA_TEST_HOST") == "sandbox":
        yield None
        return
    host = InProcessHost()
    # Steps, not seconds, decide in tests: on a loaded machine (both xdist workers busy, a
    # CI box) a rule's 2 s must not turn a step-budget abort into a wall-clock one. The
    # call's own 2 s stay; tests about the clock build a SandboxHost.
    host.command_seconds = 1000.0
    yield host


@pytest.fixture(scope="session")
def make_service(rule_host: InProcessHost | None) -> Callable[..., Service]:
    """``make_service(url, **options)``: a Service on ``url`` running rule code in-process."""
    def make(url: str = "sqlite://", **options: Any) -> Service:
        return open_service(url, host=rule_host, **options)
    return make


@pytest.fixture
def services(tmp_path: Path, make_service: Callable[..., Service]) -> Iterator[
        Callable[[], Service]]:
    """New services on one SQLite file (``tmp_path/scriba.db``), as separate processes
    would have (each its own cache, connections and locks), closed at the end."""
    made: list[Service] = []
    url = f"sqlite:///{tmp_path / 'scriba.db'}"

    def new() -> Service:
        made.append(make_service(url))
        return made[-1]
    yield new
    for made_service in made:
        made_service.close()


@pytest.fixture
def service(make_service: Callable[..., Service]) -> Iterator[Service]:
    svc = make_service("sqlite://")
    yield svc
    svc.close()


@pytest.fixture
def sandbox_service() -> Iterator[Service]:
    """A service with real sandbox workers: for tests about memory limits and killed workers."""
    svc = open_service("sqlite://")
    yield svc
    svc.close()


def _pg_bin() -> Path | None:
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "initdb").exists():
            return candidate
    return None


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a Unix socket, or $SCRIBA_TEST_POSTGRES."""
    if os.environ.get("SCRIBA_TEST_POSTGRES"):
        yield os.environ["SCRIBA_TEST_POSTGRES"]
        return
    bindir = _pg_bin()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql; .ci/run does)")
    root = Path(tempfile.mkdtemp(prefix="scriba-pg-"))
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    run_as: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root: use the postgres system user
        shutil.chown(root, "postgres")
        shutil.chown(sock, "postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
    subprocess.run([*run_as, str(bindir / "initdb"), "-D", str(data), "-A", "trust",
                    "-U", "scriba"], check=True, capture_output=True)
    subprocess.run([*run_as, str(bindir / "pg_ctl"), "-D", str(data), "-w", "-l",
                    str(root / "log"), "-o", f"-k {sock} -c listen_addresses=''", "start"],
                   check=True, capture_output=True)
    try:
        subprocess.run([*run_as, str(bindir / "createdb"), "-h", str(sock), "-U", "scriba",
                        "scriba"], check=True, capture_output=True)
        yield f"postgresql+psycopg://scriba@/scriba?host={sock}"
    finally:
        subprocess.run([*run_as, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                        "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def fresh_postgres_url(postgres_url: str, request) -> Iterator[str]:
    """A database of its own in the test cluster, for a test that needs it empty (the
    session's shared database holds whatever the tests before it made)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = "scriba_" + "".join(c if c.isalnum() else "_" for c in request.node.name).lower()[:50]
    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        yield make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()
