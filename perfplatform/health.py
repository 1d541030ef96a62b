"""`/healthz`: the process is up and the database answers (for compose health checks and tests)."""

from django.db import connection
from django.http import HttpRequest, JsonResponse


def healthz(request: HttpRequest) -> JsonResponse:
    with connection.cursor() as cur:
        cur.execute("SELECT 1")
    return JsonResponse({"status": "ok", "database": connection.vendor})
