"""Pre-merge check API (docs/API.md section 6): GET /api/v1/checks/{app}/{platform}/{build}."""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Path, Router, Schema
from ninja.errors import HttpError

from alerts import premerge
from metrics.errors import ApiError
from metrics.models import Build, Scope
from metrics.schemas import ErrorsOut, QueryText

router = Router(tags=["pre-merge checks"])


class CheckBase(Schema):
    branch: str
    build: str | None
    commit: str


class CheckRuns(Schema):
    head: int
    base: int


class CheckMetric(Schema):
    metric: str
    device: str
    kind: str
    unit: str
    verdict: str
    before: float | None
    after: float | None
    rel_change: float | None
    ci: list[float | None] | None
    p_value: float | None
    runs: CheckRuns
    test: str
    more_runs: int | None = None
    note: str | None = None


class CheckSummary(Schema):
    regression: int
    improvement: int
    same: int
    inconclusive: int
    no_baseline: int


class CheckOut(Schema):
    status: str
    build: str
    branch: str
    commit: str
    base: CheckBase
    summary: CheckSummary
    metrics: list[CheckMetric]
    markdown: str
    url: str
    computed: datetime | None


@router.get("/checks/{app}/{platform}/{build}", response={200: CheckOut, 400: ErrorsOut, 403: ErrorsOut, 404: ErrorsOut},
            url_name="check-detail", summary="The pre-merge check of a pull-request build against its merge-base")
def check_detail(request: HttpRequest, app: Path[QueryText], platform: Path[QueryText], build: Path[QueryText]):
    if not request.auth.can_read_app(app):
        raise HttpError(403, f"this token belongs to {request.auth.app.name!r}")
    b = get_object_or_404(Build.objects.select_related("app"), app__name=app, platform=platform, ext_id=build)
    if b.role != Scope.PR or not b.base_commit:
        raise ApiError(400, "build", f"build {build} names no base_commit: it is not a pull-request build")
    check = premerge.current_check(b)
    return premerge.check_payload(check, b)
