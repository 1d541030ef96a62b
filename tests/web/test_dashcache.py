"""Single-flight caching of dashboard aggregates (threads share the local-memory cache)."""

from __future__ import annotations

import threading
import time

from metrics import dashcache


def run_threads(n, target):
    barrier = threading.Barrier(n)
    results, errors = [], []

    def work():
        try:
            barrier.wait()
            results.append(target())
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors
    return results


def test_it_computes_a_missing_entry_once_while_the_others_wait():
    calls = []

    def compute():
        calls.append(1)
        time.sleep(0.3)
        return {"answer": 42}

    results = run_threads(30, lambda: dashcache.cached("t:missing", compute, ttl=60, stale_ttl=60))
    assert len(calls) == 1
    assert results == [{"answer": 42}] * 30
    assert dashcache.compute_count("t:missing") == 1


def test_it_serves_the_stale_value_while_one_caller_recomputes():
    dashcache.cached("t:stale", lambda: "old", ttl=60, stale_ttl=600)
    dashcache.bump()  # the entry is now stale
    calls = []

    def compute():
        calls.append(1)
        time.sleep(0.3)
        return "new"

    results = run_threads(30, lambda: dashcache.cached("t:stale", compute, ttl=60, stale_ttl=600))
    assert len(calls) == 1
    assert results.count("new") == 1 and results.count("old") == 29
    assert dashcache.cached("t:stale", compute, ttl=60, stale_ttl=600) == "new"
    assert len(calls) == 1


def test_it_recomputes_after_the_ttl():
    values = iter(["first", "second"])
    assert dashcache.cached("t:ttl", lambda: next(values), ttl=0, stale_ttl=60) == "first"
    time.sleep(0.01)
    assert dashcache.cached("t:ttl", lambda: next(values), ttl=0, stale_ttl=60) == "second"


def test_it_only_invalidates_the_bumped_scope():
    assert dashcache.cached("t:scope", lambda: 1, ttl=60, stale_ttl=60, scopes=("a",)) == 1
    dashcache.bump("b")
    assert dashcache.cached("t:scope", lambda: 2, ttl=60, stale_ttl=60, scopes=("a",)) == 1
    dashcache.bump("a")
    assert dashcache.cached("t:scope", lambda: 3, ttl=60, stale_ttl=60, scopes=("a",)) == 3


def test_it_does_not_cache_a_failed_computation():
    def boom():
        raise RuntimeError("db down")

    try:
        dashcache.cached("t:fail", boom, ttl=60, stale_ttl=60)
    except RuntimeError:
        pass
    assert dashcache.cached("t:fail", lambda: "ok", ttl=60, stale_ttl=60) == "ok"


def test_it_is_invalidated_when_a_build_is_analysed(world):
    from alerts import analysis

    gen = dashcache.generations(["dashboards"])["dashboards"]
    analysis._after_commit(world.builds[-1].pk)
    assert dashcache.generations(["dashboards"])["dashboards"] == gen + 1


def test_it_serves_the_stale_value_when_recomputing_fails():
    dashcache.cached("t:stale-fail", lambda: "old", ttl=60, stale_ttl=600)
    dashcache.bump()

    def boom():
        raise RuntimeError("db down")

    assert dashcache.cached("t:stale-fail", boom, ttl=60, stale_ttl=600) == "old"
    assert dashcache.cached("t:stale-fail", lambda: "new", ttl=60, stale_ttl=600) == "new"


def test_it_does_not_recompute_a_value_stored_while_it_took_the_lock(monkeypatch):
    """The lock holder finished between our read of the entry and our lock: use its value."""
    from django.core.cache import cache

    real_add = cache.add
    calls = []

    def add(key, value, timeout=None):
        if key.startswith("dashcache:lock:") and not calls:
            calls.append(key)  # someone else stores the value just before we get the lock
            dashcache.cached("t:race", lambda: "theirs", ttl=60, stale_ttl=60)
        return real_add(key, value, timeout)

    monkeypatch.setattr(cache, "add", add)
    assert dashcache.cached("t:race", lambda: "ours", ttl=60, stale_ttl=60) == "theirs"
    assert dashcache.compute_count("t:race") == 1
