"""Alerts read and triage API (docs/API.md section 4)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Path, Query, Router, Schema
from ninja.decorators import decorate_view
from ninja.errors import HttpError
from pydantic import Field

from alerts import display
from alerts.models import Alert
from alerts.triage import TriageError, triage
from metrics.conditional import conditional_get, set_last_modified
from metrics.errors import ApiError
from metrics.pagination import paginate
from metrics.schemas import DbId, ErrorsOut, PageLimit, PageOffset, QueryText

router = Router(tags=["alerts"])


class AlertOut(Schema):
    id: int
    app: str
    platform: str
    branch: str
    device: str
    metric: str
    kind: str
    unit: str
    series: int
    build: str
    previous_build: str | None
    culprit_range: list[str | None]
    commit: str
    previous_commit: str | None
    direction: str
    rel_change: float
    abs_change: float
    before: float
    after: float
    before_ci: list[float | None]
    after_ci: list[float | None]
    p_value: float | None
    test: str
    sensitivity: float | None
    detection: str
    status: str
    recovered: bool
    note: str
    team: str
    group: int
    culprit_commit: str | None
    range_commits: int | None
    confirmation: str
    shape: str
    slope_per_build: float | None
    window_builds: int | None
    merged_into: int | None
    created: datetime
    url: str


class AlertPage(Schema):
    results: list[AlertOut]
    next: str | None


class AlertFilter(Schema):
    app: QueryText | None = None
    platform: QueryText | None = None
    branch: QueryText | None = None
    team: QueryText | None = None
    # An unknown status or detection is a 400 naming the parameter, not an empty page ("" means no filter).
    status: Literal["", "untriaged", "acknowledged", "invalid", "wontfix", "fixed", "backedout", "reassigned"] | None = None
    metric: QueryText | None = None
    detection: Literal["", "open", "confirmed", "withdrawn"] | None = None
    group: DbId | None = None
    series: DbId | None = None
    limit: PageLimit = 100
    offset: PageOffset = 0


class TriageIn(Schema):
    status: Literal["untriaged", "acknowledged", "invalid", "wontfix", "fixed", "backedout", "reassigned"]
    note: Annotated[str, Field(max_length=5000)] | None = None
    reassigned_to: DbId | None = None


def alert_queryset():
    return Alert.objects.select_related(
        "series__app", "series__metric", "build", "previous_build", "first_build", "last_build", "team", "group"
    )


def alert_payload(request: HttpRequest | None, a: Alert, *, base_url: str | None = None) -> dict:
    s = a.series
    path = a.group.get_absolute_url()
    url = request.build_absolute_uri(path) if request is not None else (base_url or "") + path
    return {
        "id": a.pk, "app": s.app.name, "platform": s.platform, "branch": s.branch, "device": s.device,
        "metric": s.metric.name, "kind": s.metric.kind, "unit": s.metric.unit, "series": s.pk,
        "build": a.build.ext_id, "previous_build": a.previous_build.ext_id if a.previous_build else None,
        "culprit_range": [a.first_build.ext_id if a.first_build else None, a.last_build.ext_id if a.last_build else None],
        "commit": a.build.commit, "previous_commit": a.previous_build.commit if a.previous_build else None,
        "direction": a.direction, "rel_change": a.rel_change, "abs_change": display.level(a.abs_change),
        "before": display.level(a.before), "after": display.level(a.after), "before_ci": [a.before_ci_low, a.before_ci_high],
        "after_ci": [a.after_ci_low, a.after_ci_high], "p_value": a.p_value, "test": a.test,
        "sensitivity": a.sensitivity, "detection": a.detection, "status": a.status, "recovered": a.recovered,
        "note": a.note, "team": a.team.name, "group": a.group_id, "created": a.created, "url": url,
        "culprit_commit": a.culprit_commit or None, "range_commits": a.range_commits, "confirmation": a.confirmation,
        "shape": a.shape, "slope_per_build": a.slope_per_build, "window_builds": a.window_builds,
        "merged_into": a.merged_into_id,
    }


@router.get("/alerts", response={200: AlertPage, 400: ErrorsOut, 403: ErrorsOut}, url_name="alert-list",
            summary="Alerts, newest first; `metric` ending in * matches a prefix")
@decorate_view(conditional_get)
def alert_list(request: HttpRequest, filters: Query[AlertFilter]):
    qs = alert_queryset().order_by("-created", "-pk")
    caller = request.auth
    if caller.token is not None:
        if filters.app and filters.app != caller.app.name:
            raise HttpError(403, f"this token belongs to {caller.app.name!r}")
        qs = qs.filter(series__app=caller.app)
    plain = {"app": "series__app__name", "platform": "series__platform", "branch": "series__branch",
             "team": "team__name", "status": "status", "detection": "detection", "group": "group_id",
             "series": "series_id"}
    for field, lookup in plain.items():
        value = getattr(filters, field)
        if value is not None and value != "":
            qs = qs.filter(**{lookup: value})
    if filters.metric:
        if filters.metric.endswith("*"):
            qs = qs.filter(series__metric__name__startswith=filters.metric[:-1])
        else:
            qs = qs.filter(series__metric__name=filters.metric)
    page, next_url = paginate(request, qs, limit=filters.limit, offset=filters.offset)
    return {"results": [alert_payload(request, a) for a in page], "next": next_url}


@router.get("/alerts/{alert_id}", response={200: AlertOut, 400: ErrorsOut, 403: ErrorsOut, 404: ErrorsOut},
            url_name="alert-detail")
@decorate_view(conditional_get)
def alert_detail(request: HttpRequest, alert_id: Path[DbId]):
    a = get_object_or_404(alert_queryset(), pk=alert_id)
    if not request.auth.can_read_app(a.series.app.name):
        raise HttpError(403, "this token belongs to another app")
    set_last_modified(request, a.updated)
    return alert_payload(request, a)


@router.patch("/alerts/{alert_id}", response={200: AlertOut, 400: ErrorsOut, 403: ErrorsOut, 404: ErrorsOut},
              url_name="alert-triage", summary="Triage an alert (owning team or staff)")
def alert_triage(request: HttpRequest, alert_id: Path[DbId], body: TriageIn):
    caller = request.auth
    if not Alert.objects.filter(pk=alert_id).exists():
        raise HttpError(404, "no such alert")
    try:
        triage(
            [alert_id], status=body.status, note=body.note, user_id=caller.user_id, is_staff=caller.is_staff,
            reassigned_to=body.reassigned_to,
        )
    except TriageError as exc:
        if exc.status == 403:
            raise HttpError(403, exc.message) from None
        raise ApiError(exc.status, exc.path, exc.message) from None
    a = alert_queryset().get(pk=alert_id)
    return alert_payload(request, a)
