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
