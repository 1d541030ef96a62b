"""`/healthz`: the process is up and the database answers (for compose health checks and tests)."""

from collections.abc import Callable

from django.db import InterfaceError, OperationalError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse


def healthz(request: HttpRequest) -> JsonResponse:
    with connection.cursor() as cur:
        cur.execute("SELECT 1")
    return JsonResponse({"status": "ok", "database": connection.vendor})


class HealthzMiddleware:
    """Answer `/healthz` before any middleware reads the Host header: a probe from inside the container (or an
    orchestrator's, by the pod's address) uses an address that ALLOWED_HOSTS rightly does not list, and
    CommonMiddleware's host check would answer it 400, so the web service never became healthy."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path == "/healthz" and request.method in ("GET", "HEAD"):
            try:
                return healthz(request)
            except (OperationalError, InterfaceError):  # what DatabaseUnavailableMiddleware answers, no details
                response = JsonResponse({"status": "database unavailable"}, status=503)
                response["Retry-After"] = "5"
                return response
        return self.get_response(request)
