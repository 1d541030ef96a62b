"""Shared plumbing for the benchmarks: a private PostgreSQL database, the project's commands, gunicorn.

Each benchmark creates its own database `perf_bench_<random>` on the server named by
`BENCH_PG_ADMIN` (default `postgres://postgres@127.0.0.1:5432/postgres`) and drops it at the end,
whatever happens. No other database is touched.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
VENV_BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))
from tests.live import free_port, wait_http  # noqa: E402 - the same helpers the integration tests use

__all__ = ["free_port", "wait_http"]

ADMIN_URL = os.environ.get("BENCH_PG_ADMIN", "postgres://postgres@127.0.0.1:5432/postgres")


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, int(round(q / 100.0 * len(ordered) + 0.5)) - 1))
    return ordered[k]


def machine() -> dict[str, str]:
    def run(*cmd: str) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
        except Exception:  # noqa: BLE001
            return "?"

    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "nproc": run("nproc"),
        "cpu": cpu,
        "mem_total": run("free", "-h").splitlines()[1].split()[1] if run("free", "-h") != "?" else "?",
        "python": platform.python_version(),
        "psql": run("psql", "--version"),
    }


def loadavg() -> str:
    """`/proc/loadavg` as it reads now (1, 5, 15 minute load averages, runnable/total, last pid)."""
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "?"


def git_state() -> dict[str, str]:
    def run(*cmd: str) -> str:
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()

    return {"head": run("git", "rev-parse", "HEAD"), "dirty_files": str(len(run("git", "status", "--porcelain").splitlines()))}


class BenchDB:
    """A fresh database, the project's environment pointing at it, and the processes started on it."""

    def __init__(self, *, redis_url: str | None = None, source: Path | None = None):
        import psycopg

        self.source = Path(source) if source else ROOT  # the project tree whose code the processes run

        self.name = f"perf_bench_{uuid.uuid4().hex[:10]}"
        self.url = ADMIN_URL.rsplit("/", 1)[0] + "/" + self.name
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.name}"')
        self.tmp = Path(tempfile.mkdtemp(prefix="perf_bench_"))
        self.env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
        self.env.update(
            DATABASE_URL=self.url, PERF_VAR_DIR=str(self.tmp / "var"), PYTHONPATH=str(self.source), LOG_LEVEL="WARNING"
        )
        # The benchmarks upload far faster than one CI token would: the per-token limit (600/min) is off.
        self.env.setdefault("PERF_UPLOAD_RATE_PER_MINUTE", "0")
        if redis_url:
            self.env["REDIS_URL"] = redis_url
        self.procs: list[subprocess.Popen] = []

    def manage(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, str(self.source / "manage.py"), *args], env=self.env, cwd=self.source,
            capture_output=True, text=True, check=True, timeout=300,
        )

    def migrate(self) -> None:
        self.manage("migrate", "--noinput", "-v0")

    def token(self, app: str) -> str:
        return self.manage("create_upload_token", app).stdout.strip().splitlines()[-1]

    def start_gunicorn(self, workers: int, worker_class: str = "sync", threads: int = 1) -> str:
        port = free_port()
        argv = [str(VENV_BIN / "gunicorn"), "perfplatform.wsgi", "--bind", f"127.0.0.1:{port}",
                "--workers", str(workers), "--worker-class", worker_class, "--timeout", "60",
                "--keep-alive", "5"]
        if worker_class == "gthread":
            argv += ["--threads", str(threads)]
        log = open(self.tmp / "gunicorn.log", "ab")  # noqa: SIM115 - lives as long as the process
        proc = subprocess.Popen(argv, env=self.env, cwd=self.source, stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        url = f"http://127.0.0.1:{port}"
        wait_http(url + "/healthz")
        return url

    def start_celery(self, name: str, concurrency: int = 1, timeout: float = 60.0) -> subprocess.Popen:
        """`celery -A perfplatform worker --concurrency N` (prefork, all queues); waits for "ready"."""
        logpath = self.tmp / f"celery-{name}.log"
        log = open(logpath, "ab")  # noqa: SIM115 - lives as long as the process
        argv = [str(VENV_BIN / "celery"), "-A", "perfplatform", "worker", "--concurrency", str(concurrency),
                "-n", f"{name}@%h", "--loglevel", "INFO", "--without-gossip", "--without-mingle"]
        proc = subprocess.Popen(argv, env=self.env, cwd=self.source, stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"celery {name} exited: {logpath.read_text(errors='replace')[-2000:]}")
            if " ready." in logpath.read_text(errors="replace"):
                return proc
            time.sleep(0.3)
        raise TimeoutError(f"celery {name} not ready: {logpath.read_text(errors='replace')[-2000:]}")

    def log_tail(self, name: str, n: int = 30) -> str:
        path = self.tmp / name
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:]) if path.exists() else ""

    def stop_processes(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs.clear()

    def gunicorn_log_tail(self, n: int = 30) -> str:
        path = self.tmp / "gunicorn.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:]) if path.exists() else ""

    def close(self) -> None:
        import psycopg

        try:
            self.stop_processes()
        finally:
            with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
            shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> BenchDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_json(name: str, data: dict) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    path = OUT / f"{name}-{stamp}.json"
    path.write_text(json.dumps(data, indent=2, default=str))
    (OUT / f"{name}-latest.json").write_text(json.dumps(data, indent=2, default=str))
    return path


def setup_django(db: BenchDB, *, keep_redis: bool = False) -> None:
    """Configure Django in this process against the benchmark database. Without `keep_redis` the
    process has no broker (tasks run in-process) and uses a local cache."""
    keys = ("DATABASE_URL", "PERF_VAR_DIR", "LOG_LEVEL") + (("REDIS_URL",) if keep_redis else ())
    os.environ.update({k: v for k, v in db.env.items() if k in keys})
    if not keep_redis:
        os.environ.pop("REDIS_URL", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "perfplatform.settings"
    sys.path.insert(0, str(db.source))
    import django

    django.setup()


def finish(name: str, out: dict, wall_s: float) -> int:
    """Print the targets line, write the JSON result and say where."""
    print("targets: " + ", ".join(f"{k}={'met' if v else 'MISSED'}" for k, v in out["targets"].items()))
    path = write_json(name, out)
    print(f"wrote {path.relative_to(ROOT)} (wall {wall_s} s)")
    return 0
