"""Sign-in throttling: a brute-force guard for the password form.

Failures are counted in the cache per username and per client address over a window of
PERF_LOGIN_COOLDOWN_SECONDS. Once either count reaches PERF_LOGIN_MAX_FAILURES, every further attempt
for that username or from that address answers 429 with Retry-After, whether its password is right or
not, until the window has passed since the last failure. A successful sign-in clears the username's
count (not the address's: one address may be guessing many accounts). With Redis the counts are shared
by every web process; on the embedded default (`make demo`) they live in the process's memory. If the
cache is down, sign-in works unthrottled rather than locking everyone out.
"""

from __future__ import annotations

import hashlib
import logging

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse

log = logging.getLogger(__name__)


def _keys(request: HttpRequest) -> list[str]:
    keys = [f"login-fail:addr:{request.META.get('REMOTE_ADDR', '')}"]
    username = (request.POST.get("username") or "").strip().lower()
    if username:
        keys.append("login-fail:user:" + hashlib.sha256(username.encode()).hexdigest())
    return keys


def _blocked(keys: list[str]) -> bool:
    try:
        counts = cache.get_many(keys)
    except Exception:
        log.warning("cache unavailable; sign-in is not throttled")
        return False
    return any(int(v) >= settings.PERF_LOGIN_MAX_FAILURES for v in counts.values())


def _count_failure(keys: list[str]) -> None:
    ttl = settings.PERF_LOGIN_COOLDOWN_SECONDS
    try:
        for key in keys:
            if cache.add(key, 1, ttl):
                continue
            try:
                cache.incr(key)
                cache.touch(key, ttl)
            except ValueError:  # expired between add and incr
                cache.add(key, 1, ttl)
    except Exception:
        log.warning("cache unavailable; failed sign-in not counted")


def _clear_user(keys: list[str]) -> None:
    try:
        cache.delete_many([k for k in keys if k.startswith("login-fail:user:")])
    except Exception:
        log.warning("cache unavailable; could not clear the sign-in failure count")


class ThrottledLoginView(auth_views.LoginView):
    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        keys = _keys(request)
        if _blocked(keys):
            response = HttpResponse(
                "Too many failed sign-ins. Try again later.", status=429, content_type="text/plain; charset=utf-8"
            )
            response["Retry-After"] = str(settings.PERF_LOGIN_COOLDOWN_SECONDS)
            return response
        response = super().post(request, *args, **kwargs)
        if request.user.is_authenticated:
            _clear_user(keys)
        else:
            _count_failure(keys)
        return response
