"""A real server process for end-to-end tests: its own database, gunicorn on a free port.

With DATABASE_URL pointing at PostgreSQL, a fresh database is created beside it (and dropped
afterwards); otherwise a temporary SQLite file is used. The process reads only the environment,
exactly as README tells a user to start it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent


def upload_json(url: str, token: str, body: dict) -> tuple[int, dict[str, str]]:
    """POST one native upload to a live server: (status, headers), errors included."""
    import json
    import urllib.error

    req = urllib.request.Request(f"{url}/api/v1/uploads", data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers)


def get_json(url: str, token: str) -> dict:
    import json

    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def wait_for(predicate, timeout: float, what: str):
    """Poll `predicate` until it returns something truthy (returned) or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except Exception as exc:  # noqa: BLE001 - any failure means "not up yet"
            last = exc
        time.sleep(0.2)
    raise TimeoutError(f"{url} did not come up: {last}")


class LiveEnv:
    """An isolated database (and optional Redis URL) plus helpers to run the project's commands."""

    def __init__(self, tmp: Path, *, redis_url: str | None = None):
        self.tmp = tmp
        self.env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
        self.env["PERF_VAR_DIR"] = str(tmp / "var")
        self.env["PYTHONPATH"] = str(ROOT)
        self._pg_admin: str | None = None
        self._pg_name: str | None = None
        base = os.environ.get("DATABASE_URL", "")
        if base.startswith(("postgres://", "postgresql://")):
            import psycopg

            self._pg_name = f"perf_live_{uuid.uuid4().hex[:10]}"
            self._pg_admin = base.rsplit("/", 1)[0] + "/postgres"
            with psycopg.connect(self._pg_admin, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{self._pg_name}"')
            self.env["DATABASE_URL"] = base.rsplit("/", 1)[0] + "/" + self._pg_name
        else:
            self.env["DATABASE_URL"] = f"sqlite:///{tmp / 'live.sqlite3'}"
        if redis_url:
            self.env["REDIS_URL"] = redis_url
        self.procs: list[subprocess.Popen] = []
        self._stopping = False
        self.manage("migrate", "-v0")

    def manage(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args], env=self.env, cwd=ROOT,
            capture_output=True, text=True, check=check, timeout=300,
        )

    def token(self, app: str) -> str:
        return self.manage("create_upload_token", app).stdout.strip().splitlines()[-1]

    def start(self, *argv: str, log: str) -> subprocess.Popen:
        out = open(self.tmp / log, "wb")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(argv, env=self.env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def start_supervised(self, *argv: str, log: str) -> list[subprocess.Popen]:
        """Start a process and start it again whenever it exits, as docker-compose's
        `restart: unless-stopped` does in production; returns the list of its incarnations."""
        import threading

        runs = [self.start(*argv, log=log)]
        self._stopping = False

        def watch() -> None:
            while not self._stopping:
                if runs[-1].poll() is not None and not self._stopping:
                    runs.append(self.start(*argv, log=f"{log}.{len(runs)}"))
                time.sleep(0.5)

        threading.Thread(target=watch, daemon=True).start()
        return runs

    def start_web(self) -> str:
        port = free_port()
        self.start(str(VENV_BIN / "gunicorn"), "perfplatform.wsgi", "--bind", f"127.0.0.1:{port}",
                   "--workers", "2", "--timeout", "60", log="gunicorn.log")
        url = f"http://127.0.0.1:{port}"
        wait_http(url + "/healthz")
        return url

    def close(self) -> None:
        self._stopping = True
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._pg_name:
            import psycopg

            with psycopg.connect(self._pg_admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self._pg_name}" WITH (FORCE)')


class PrivateRedis:
    """A redis-server of the test's own on a free port, so fault tests never stop the shared one."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.tmp)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.1)
        raise TimeoutError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


class PrivatePostgres:
    """A PostgreSQL cluster of the test's own (initdb + pg_ctl on a free port), run as the postgres
    user because PostgreSQL refuses to run as root; stopped and removed by the test."""

    def __init__(self, tmp: Path):
        import shutil

        self.dir = Path(tempfile_dir()) / f"pg-{uuid.uuid4().hex[:8]}"
        self.port = free_port()
        self._as_postgres = [] if os.geteuid() != 0 else ["runuser", "-u", "postgres", "--"]
        self.dir.mkdir(parents=True)
        if self._as_postgres:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run("initdb", "-D", str(self.dir / "data"), "-A", "trust", "-U", "postgres", "--no-sync")

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *argv: str) -> None:
        subprocess.run([*self._as_postgres, *argv], check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.dir / "data"), "-l", str(self.dir / "log"), "-w", "-t", "60",
                  "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off", "start")

    def stop(self) -> None:
        subprocess.run([*self._as_postgres, "pg_ctl", "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop"],
                       capture_output=True, timeout=120)

    def remove(self) -> None:
        import shutil

        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def tempfile_dir() -> str:
    """A directory the postgres user can enter (pytest's tmp_path may sit under a 0700 root dir)."""
    import tempfile

    return tempfile.gettempdir()
