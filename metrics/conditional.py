"""Conditional GET for the read API: ETag (a hash of the body) and Last-Modified, 304 when unchanged.

Applied to django-ninja operations with `@decorate_view(conditional_get)`, so it sees the finished
response. A view may report when its data last changed with `set_last_modified(request, dt)`.
"""

from __future__ import annotations

import functools
import hashlib
from datetime import datetime

from django.http import HttpRequest, HttpResponseBase
from django.utils.cache import get_conditional_response, patch_vary_headers
from django.utils.http import http_date

_ATTR = "_perf_last_modified"


def set_last_modified(request: HttpRequest, when: datetime | None) -> None:
    if when is not None:
        previous = getattr(request, _ATTR, None)
        setattr(request, _ATTR, max(previous, when) if previous else when)


def etag_of(body: bytes) -> str:
    return '"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"'


def conditional_get(view):
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponseBase:
        response = view(request, *args, **kwargs)
        if request.method not in ("GET", "HEAD") or response.status_code != 200 or response.streaming:
            return response
        etag = etag_of(response.content)
        last_modified = getattr(request, _ATTR, None)
        response["ETag"] = etag
        if last_modified is not None:
            response["Last-Modified"] = http_date(last_modified.timestamp())
        response["Cache-Control"] = "private, no-cache"
        patch_vary_headers(response, ("Authorization", "Cookie"))
        lm = int(last_modified.timestamp()) if last_modified is not None else None
        return get_conditional_response(request, etag=etag, last_modified=lm, response=response)

    return wrapper
