"""A fixed-window request limit per key, kept in the cache (Redis in production).

It fails open: when the cache is unreachable uploads are accepted, because losing CI data is worse
than letting one noisy job through for a minute.
"""

from __future__ import annotations

import logging
import time

from django.core.cache import cache

log = logging.getLogger(__name__)


def hit(key: str, *, limit: int, window: int = 60) -> float | None:
    """Count one request; return None when allowed, else the seconds until the window resets."""
    if limit <= 0:
        return None
    now = time.time()
    slot = int(now // window)
    cache_key = f"rl:{key}:{slot}"
    try:
        if cache.add(cache_key, 1, timeout=window + 5):
            count = 1
        else:
            count = cache.incr(cache_key)
    except Exception as exc:  # noqa: BLE001 - any cache failure means "no limit" (fail open)
        log.warning("rate limit cache unavailable, allowing request: %s", exc)
        return None
    if count <= limit:
        return None
    return max(1.0, (slot + 1) * window - now)
