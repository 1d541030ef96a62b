"""Cached dashboard aggregates with single-flight recomputation and generation-based invalidation.

`cached(key, compute, ttl=, stale_ttl=, scopes=)` keeps `(value, fresh_until, generations)` in Django's
cache (Redis in production, so all web processes share it):

- fresh entry: returned as is;
- stale entry (older than `ttl`, or one of its `scopes` was bumped since it was computed): ONE caller
  takes a short lock (`cache.add`, atomic in Redis and locmem) and recomputes; every other caller
  gets the stale value at once;
- no entry at all: one caller computes, the others wait for it (polling, up to `wait` seconds) and
  only compute themselves if it never appears (the lock holder died).

`bump(scope)` increments a generation counter; entries computed under an older generation count as
stale. Analysis of a build bumps "dashboards" (alerts/analysis.py), triage bumps it too.

Every recomputation increments `dashcache:computes:<key>`, which the benchmark reads to show that 50
concurrent clients on an expired entry recompute it once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

from django.core.cache import cache

log = logging.getLogger(__name__)

T = TypeVar("T")
PREFIX = "dashcache:"
DASHBOARDS = "dashboards"
_MISSING = object()


def _gen_key(scope: str) -> str:
    return f"{PREFIX}gen:{scope}"


def generations(scopes: Iterable[str]) -> dict[str, int]:
    scopes = list(scopes)
    if not scopes:
        return {}
    try:
        found = cache.get_many([_gen_key(s) for s in scopes])
    except Exception:  # noqa: BLE001 - a cache outage must not take the pages down
        log.warning("cache unavailable reading generations", exc_info=True)
        return {s: 0 for s in scopes}
    return {s: int(found.get(_gen_key(s), 0)) for s in scopes}


def bump(scope: str = DASHBOARDS) -> None:
    """Invalidate every entry computed under `scope` (they are served stale while one recomputes)."""
    key = _gen_key(scope)
    try:
        if not cache.add(key, 1, timeout=None):
            try:
                cache.incr(key)
            except ValueError:  # expired between add and incr
                cache.set(key, 1, timeout=None)
    except Exception:  # noqa: BLE001 - invalidation is best effort; the ttl bounds staleness
        log.warning("could not bump cache generation %s", scope, exc_info=True)


def compute_count(key: str) -> int:
    """How many times `key` was recomputed (for benchmarks and tests)."""
    return int(cache.get(f"{PREFIX}computes:{key}", 0) or 0)


def _count(key: str) -> None:
    ck = f"{PREFIX}computes:{key}"
    try:
        if not cache.add(ck, 1, timeout=7 * 86400):
            cache.incr(ck)
    except Exception:  # noqa: BLE001
        pass


def cached(key: str, compute: Callable[[], T], *, ttl: int, stale_ttl: int, scopes: Iterable[str] = (DASHBOARDS,),
           lock_timeout: int = 30, wait: float = 10.0, poll: float = 0.02) -> T:
    """The value of `compute()` cached under `key`; see the module docstring."""
    scopes = tuple(scopes)
    data_key, lock_key = f"{PREFIX}v:{key}", f"{PREFIX}lock:{key}"
    try:  # one round trip: the scopes' generations and the entry
        found = cache.get_many([*(_gen_key(s) for s in scopes), data_key])
    except Exception:  # noqa: BLE001
        log.warning("cache unavailable; computing %s directly", key, exc_info=True)
        return compute()
    gens = {s: int(found.get(_gen_key(s), 0)) for s in scopes}
    entry = found.get(data_key, _MISSING)

    def fresh(e) -> bool:
        return e is not _MISSING and e[1] > time.time() and e[2] == gens

    if fresh(entry):
        return entry[0]

    def recompute() -> T:
        try:
            # Double-checked: whoever held the lock before us may have stored a fresh value meanwhile.
            latest = cache.get(data_key, _MISSING)
            if fresh(latest):
                return latest[0]
            value = compute()
            _count(key)
            cache.set(data_key, (value, time.time() + ttl, gens), timeout=ttl + stale_ttl)
            return value
        finally:
            cache.delete(lock_key)

    if cache.add(lock_key, 1, timeout=lock_timeout):
        if entry is _MISSING:
            return recompute()
        try:
            return recompute()
        except Exception:
            log.exception("recomputing %s failed; serving the stale value", key)
            return entry[0]
    if entry is not _MISSING:
        return entry[0]  # someone else is recomputing: the stale value will do
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        time.sleep(poll)
        entry = cache.get(data_key, _MISSING)
        if entry is not _MISSING:
            return entry[0]
        if cache.add(lock_key, 1, timeout=lock_timeout):  # the holder gave up or died
            return recompute()
    log.warning("waited %.1fs for %s; computing it here", wait, key)
    return compute()
