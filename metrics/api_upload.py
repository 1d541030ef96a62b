"""`POST /api/v1/uploads`: CI output in, stored measurements out (docs/API.md section 2)."""

from __future__ import annotations

import json
import re
from typing import Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from ninja import Router, Status

from metrics import auth, ratelimit, request_body
from metrics.formats import FORMATS, FieldError, UploadInvalid, detect_format, parse
from metrics.formats import complete as complete_rules
from metrics.formats.base import UploadConflict
from metrics.formats.complete import complete
from metrics.ingest import store_upload, upload_digest
from metrics.models import Build
from metrics.schemas import ErrorsOut, UploadOut

router = Router(tags=["uploads"])

QUERY_FIELDS = ("app", "platform", "branch", "build", "commit", "parent_commit", "timestamp", "device", "version",
                "base_commit", "base_branch", "requested", "commits")

_NATIVE_EXAMPLE: dict[str, Any] = {
    "app": "com.example.shop",
    "platform": "android",
    "branch": "main",
    "device": "pixel-6",
    "build": {"id": "4711", "commit": "9f2c1e0", "timestamp": "2026-12-01T10:00:00Z", "version": "7.3.0",
              "parent_commit": "77ab310"},
    "metrics": [
        {"name": "startup.cold.ttid", "kind": "time", "unit": "ms", "samples": [412.1, 398.0, 405.3]},
        {"name": "size.apk.download", "kind": "size", "unit": "bytes", "value": 31457280},
        {"name": "crash.rate", "kind": "rate", "unit": "ratio", "count": 12, "total": 100000},
    ],
}
def _pattern(regex: re.Pattern[str]) -> dict[str, str]:
    # An empty parameter means "not given" (CI scripts pass `--device "$DEVICE"` with DEVICE unset).
    return {"type": "string", "pattern": f"^({regex.pattern})?$"}


# The same rules `complete()` applies, so the OpenAPI document tells clients (and fuzzers) the truth.
_QUERY_SCHEMAS: dict[str, dict] = {
    "app": _pattern(complete_rules.APP_RE),
    "platform": _pattern(complete_rules.PLATFORM_RE),
    "branch": _pattern(complete_rules.BRANCH_RE),
    "build": _pattern(complete_rules.BUILD_ID_RE),
    "commit": _pattern(complete_rules.COMMIT_RE),
    "parent_commit": _pattern(complete_rules.COMMIT_RE),
    "timestamp": _pattern(complete_rules.TIMESTAMP_RE),
    "device": _pattern(complete_rules.DEVICE_RE),
    "version": {"type": "string", "maxLength": complete_rules.MAX_VERSION},
    "base_commit": _pattern(complete_rules.COMMIT_RE),
    "base_branch": _pattern(complete_rules.BRANCH_RE),
    "requested": _pattern(complete_rules.REQUEST_ID_RE),
    # Comma-separated commits, oldest first, ending with the build's own commit.
    "commits": {"type": "string", "pattern": f"^(({complete_rules.COMMIT_RE.pattern})(,({complete_rules.COMMIT_RE.pattern}))*)?$"},
}
assert set(_QUERY_SCHEMAS) == set(QUERY_FIELDS)

_UPLOAD_BODY_DOC = {
    "requestBody": {
        "required": True,
        "description": "The native body below, or Jetpack Macrobenchmark, PERFHERDER_DATA, Google Benchmark "
        "or Bencher Metric Format JSON (choose with ?format= or let the server detect it).",
        "content": {
            "application/json": {
                "schema": {"type": "object", "additionalProperties": True},
                "example": _NATIVE_EXAMPLE,
            }
        },
    },
    "parameters": [
        {"in": "query", "name": "format", "required": False,
         "schema": {"type": "string", "enum": sorted(FORMATS)}},
        *[
            {"in": "query", "name": name, "required": False, "schema": schema}
            for name, schema in _QUERY_SCHEMAS.items()
        ],
    ],
    "security": [{"BearerToken": []}],
}


def errors(status: int, *items: FieldError, headers: dict[str, str] | None = None) -> JsonResponse:
    response = JsonResponse({"errors": [e.as_dict() for e in items]}, status=status)
    for key, value in (headers or {}).items():
        response[key] = value
    return response


def _is_json_content_type(request: HttpRequest) -> bool:
    ctype = request.content_type or ""
    return ctype in ("", "application/json", "text/json") or ctype.endswith("+json")


@router.post(
    "/uploads",
    auth=None,
    response={200: UploadOut, 201: UploadOut, 400: ErrorsOut, 401: ErrorsOut, 403: ErrorsOut,
              409: ErrorsOut, 413: ErrorsOut, 415: ErrorsOut, 429: ErrorsOut},
    openapi_extra=_UPLOAD_BODY_DOC,
    url_name="upload",
    summary="Upload the metrics of one build",
)
def upload(request: HttpRequest):
    limit = settings.PERF_MAX_UPLOAD_BYTES
    declared = request_body.declared_length(request)
    if declared > limit:
        request_body.drain(request, limit)
        return errors(413, FieldError("", f"body is {declared} bytes; the limit is {limit} (PERF_MAX_UPLOAD_BYTES)"))

    token = auth.token_from_request(request)
    if token is None:
        return errors(401, FieldError("Authorization", "a valid 'Authorization: Bearer <token>' header is required"),
                      headers={"WWW-Authenticate": 'Bearer realm="perfplatform"'})

    wait = ratelimit.hit(f"upload:{token.pk}", limit=settings.PERF_UPLOAD_RATE_PER_MINUTE)
    if wait is not None:
        return errors(429, FieldError("", f"too many uploads for this token; retry in {wait:.0f}s"),
                      headers={"Retry-After": str(int(wait + 0.999))})

    raw = request_body.read_body(request, limit)
    if len(raw) > limit:
        size = f"{len(raw)} bytes"
        if request_body.is_chunked(request):
            request_body.drain_chunked(request, limit)
            size = f"over {limit} bytes"
        return errors(413, FieldError("", f"body is {size}; the limit is {limit} (PERF_MAX_UPLOAD_BYTES)"))
    # The body decides, not the Content-Type: curl and urllib send JSON as form data unless told otherwise.
    try:
        body = json.loads(raw)
    except RecursionError:
        return errors(400, FieldError("", "JSON is nested too deeply"))
    except (UnicodeDecodeError, ValueError) as exc:
        if not _is_json_content_type(request):
            return errors(415, FieldError("Content-Type", f"expected a JSON body (application/json), got "
                                                          f"{request.content_type!r} that is not JSON: {exc}"))
        return errors(415, FieldError("", f"body is not JSON: {exc}"))

    params = {k: v for k, v in request.GET.items() if k in QUERY_FIELDS or k == "format"}
    claimed_app = params.get("app") or (body.get("app") if isinstance(body, dict) else None)
    if isinstance(claimed_app, str) and claimed_app and claimed_app != token.app.name:
        return errors(403, FieldError("app", f"this token uploads for {token.app.name!r}, not {claimed_app!r}"))

    try:
        fmt = params.get("format") or detect_format(body)
        parsed = parse(body, fmt)
        upload_ = complete(parsed, {k: v for k, v in params.items() if k != "format"}, now=timezone.now())
    except UploadInvalid as exc:
        return errors(400, *exc.errors)
    except RecursionError:
        return errors(400, FieldError("", "JSON is nested too deeply"))
    if upload_.app != token.app.name:
        return errors(403, FieldError("app", f"this token uploads for {token.app.name!r}, not {upload_.app!r}"))

    try:
        result = store_upload(token.app, upload_, fmt=fmt, digest=upload_digest(raw, fmt, params), token=token)
    except UploadConflict as exc:
        return errors(409, *exc.errors)
    except UploadInvalid as exc:
        return errors(400, *exc.errors)
    auth.touch(token)
    build = result.build
    state = "queued" if build.analysis == Build.Analysis.PENDING else build.analysis
    payload = {
        "build": {"id": build.ext_id, "url": request.build_absolute_uri(build.api_url())},
        "measurements": result.measurements,
        "analysis": state,
    }
    return Status(201 if result.stored_anything else 200, payload)
