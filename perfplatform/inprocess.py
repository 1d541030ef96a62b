"""The periodic sweep where no broker runs (REDIS_URL unset: tasks in-process, no celery beat).

`make demo` and an embedded SQLite set-up run tasks inside the web process and have no beat, so nothing
would expire unanswered run requests, release alert groups held for a bisection, settle pull-request checks
whose base never came, or retry a failed delivery after its backoff. `start()` (called by `perfplatform.wsgi`,
so by gunicorn and by runserver) runs `alerts.sweeps.run(in_process=True)` every
`PERF_SWEEP_INTERVAL_SECONDS` on a daemon thread of that process. Under Celery it does nothing: beat runs the
sweep there, and the broker holds the retries.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from pathlib import Path

from django.conf import settings
from django.db import close_old_connections

log = logging.getLogger(__name__)

_started: threading.Thread | None = None
_lock = threading.Lock()


def enabled() -> bool:
    return bool(settings.CELERY_TASK_ALWAYS_EAGER) and settings.PERF_SWEEP_INTERVAL_SECONDS > 0


@contextlib.contextmanager
def _one_sweeper():
    """True for the one process of the host that may sweep now: each gunicorn worker runs a timer, and two
    sweeps at once could both find a failed delivery due and send it twice. A lock file under VAR_DIR (the
    embedded set-up is one host); where file locks are unavailable every process sweeps."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield True
        return
    path = Path(settings.VAR_DIR) / "inprocess-sweep.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def sweep_once() -> int:
    """One sweep, as the timer runs it: with its own database connection, never raising; none while another
    process of the host sweeps."""
    from alerts import sweeps

    with _one_sweeper() as mine:
        if not mine:
            return 0
        close_old_connections()
        try:
            return sweeps.run(in_process=True)
        except Exception:
            log.exception("in-process sweep failed; the next one runs in %ss", settings.PERF_SWEEP_INTERVAL_SECONDS)
            return 0
        finally:
            close_old_connections()


def start() -> threading.Thread | None:
    """Start the timer once per process when tasks run in-process; returns its thread (None under Celery)."""
    global _started
    if not enabled():
        return None
    with _lock:
        if _started is None or not _started.is_alive():
            stop = threading.Event()
            interval = float(settings.PERF_SWEEP_INTERVAL_SECONDS)

            def loop() -> None:
                while not stop.wait(interval):
                    sweep_once()

            _started = threading.Thread(target=loop, name="perfplatform-sweep", daemon=True)
            _started.start()
    return _started
