"""Answer 503 with Retry-After while the database is unreachable, instead of a bare 500."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

log = logging.getLogger(__name__)


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, OperationalError | InterfaceError):
            log.warning("database unavailable: %s", exception)
            response = JsonResponse(
                {"errors": [{"path": "", "message": "the database is unavailable; retry shortly"}]}, status=503
            )
            response["Retry-After"] = "5"
            return response
        return None


class RejectNulMiddleware:
    """Answer 400 to a path, query parameter or page form field holding a NUL character, before any view reads it.

    PostgreSQL text cannot hold NUL: a lookup with one raises a DataError (a 500) on every page that filters
    on a path segment or parameter, where SQLite simply finds nothing. The API's validation refuses such
    parameters and body fields itself (with their paths); this covers the pages and every API path segment.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        where = _nul_in(request)
        if where is None:
            return self.get_response(request)
        message = f"{where} holds a NUL character"
        if request.path.startswith("/api/"):
            return JsonResponse({"errors": [{"path": where, "message": message}]}, status=400)
        return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")


def _nul_in(request: HttpRequest) -> str | None:
    if "\x00" in request.path:
        return "path"
    if request.path.startswith("/api/"):  # the API validates its parameters and bodies itself, with field paths
        return None
    params = [("query parameter", request.GET)] + ([("form field", request.POST)] if request.method == "POST" else [])
    for what, data in params:
        for key, values in data.lists():
            if "\x00" in key or any("\x00" in v for v in values):
                return f"{what} {key!r}".replace("\x00", "\\x00")
    return None
