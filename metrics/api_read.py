"""Read API for builds and series (docs/API.md section 4)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Path, Query, Router, Schema
from ninja.decorators import decorate_view
from ninja.errors import HttpError

from metrics.conditional import conditional_get, set_last_modified
from metrics.history import recent_points
from metrics.models import Build, Measurement, Scope, Series, unpack_samples
from metrics.pagination import paginate
from metrics.schemas import (
    BuildOut,
    DateTimeText,
    DbId,
    ErrorsOut,
    PageLimit,
    PageOffset,
    PointsLimit,
    PointsOut,
    QueryText,
    SeriesPage,
    parse_rfc3339,
)

router = Router(tags=["builds and series"])


def _check_app(request: HttpRequest, app_name: str) -> None:
    caller = request.auth
    if not caller.can_read_app(app_name):
        raise HttpError(403, f"this token belongs to {caller.app.name!r}")


def measurement_payload(m: Measurement) -> dict:
    """A measurement exactly as uploaded: samples or count/total only when they were sent."""
    out = {"value": m.value}
    if m.samples is not None:
        out["samples"] = unpack_samples(m.samples)
    if m.total is not None:
        out["count"] = m.count
        out["total"] = m.total
    return out


@router.get("/builds/{app}/{platform}/{build}", response={200: BuildOut, 400: ErrorsOut, 403: ErrorsOut, 404: ErrorsOut},
            url_name="build-detail", summary="One build with all its measurements", exclude_none=True)
@decorate_view(conditional_get)
def build_detail(request: HttpRequest, app: Path[QueryText], platform: Path[QueryText], build: Path[QueryText]):
    _check_app(request, app)
    b = get_object_or_404(Build.objects.select_related("app"), app__name=app, platform=platform, ext_id=build)
    set_last_modified(request, b.updated)
    rows = (
        Measurement.objects.filter(build=b)
        .select_related("series__metric")
        .order_by("series__metric__name", "series__device")
    )
    measurements = []
    for m in rows:
        metric = m.series.metric
        measurements.append(
            {
                "metric": metric.name, "kind": metric.kind, "unit": metric.unit,
                "lower_is_better": metric.lower_is_better, "device": m.series.device,
                "branch": m.series.branch, "series": m.series_id, **measurement_payload(m),
            }
        )
    return {
        "id": b.ext_id, "app": b.app.name, "platform": b.platform, "branch": b.branch, "commit": b.commit,
        "parent_commit": b.parent_commit, "version": b.version, "timestamp": b.timestamp,
        "role": b.role, "base_commit": b.base_commit, "base_branch": b.base_branch, "requested": b.requested,
        "commits": list(b.commits or []),
        "url": request.build_absolute_uri(b.get_absolute_url()), "analysis": b.analysis,
        "measurements": measurements,
    }


def series_payload(request: HttpRequest, s: Series) -> dict:
    return {
        "id": s.pk, "app": s.app.name, "platform": s.platform, "branch": s.branch, "device": s.device,
        "metric": s.metric.name, "kind": s.metric.kind, "unit": s.metric.unit,
        "lower_is_better": s.metric.lower_is_better, "last_build_time": s.last_build_time,
        "points_url": request.build_absolute_uri(f"/api/v1/series/{s.pk}/points"),
        "url": request.build_absolute_uri(s.get_absolute_url()),
    }


class SeriesFilter(Schema):
    app: QueryText | None = None
    platform: QueryText | None = None
    branch: QueryText | None = None
    device: QueryText | None = None
    metric: QueryText | None = None
    limit: PageLimit = 100
    offset: PageOffset = 0


@router.get("/series", response={200: SeriesPage, 400: ErrorsOut, 403: ErrorsOut}, url_name="series-list",
            summary="Series, filtered; `metric` ending in * matches a prefix")
@decorate_view(conditional_get)
def series_list(request: HttpRequest, filters: Query[SeriesFilter]):
    qs = Series.objects.filter(scope=Scope.BRANCH).select_related("app", "metric").order_by("app__name", "platform", "branch", "metric__name", "device", "pk")
    caller = request.auth
    if caller.token is not None:
        if filters.app and filters.app != caller.app.name:
            raise HttpError(403, f"this token belongs to {caller.app.name!r}")
        qs = qs.filter(app=caller.app)
    for field in ("platform", "branch", "device"):
        value = getattr(filters, field)
        if value is not None:
            qs = qs.filter(**{field: value})
    if filters.app:
        qs = qs.filter(app__name=filters.app)
    if filters.metric:
        if filters.metric.endswith("*"):
            qs = qs.filter(metric__name__startswith=filters.metric[:-1])
        else:
            qs = qs.filter(metric__name=filters.metric)
    page, next_url = paginate(request, qs, limit=filters.limit, offset=filters.offset)
    return {"results": [series_payload(request, s) for s in page], "next": next_url}


class PointsFilter(Schema):
    limit: PointsLimit = 200
    before: DateTimeText | None = None
    # With `before`, the build (its id in `next` links) the page ends before: builds may share a time.
    before_build: DbId | None = None


@router.get("/series/{series_id}/points", response={200: PointsOut, 400: ErrorsOut, 403: ErrorsOut, 404: ErrorsOut},
            url_name="series-points", summary="The latest points of one series, oldest first")
@decorate_view(conditional_get)
def series_points(request: HttpRequest, series_id: Path[DbId], filters: Query[PointsFilter]):
    before = parse_rfc3339(filters.before) if filters.before else None
    s = get_object_or_404(Series.objects.select_related("app", "metric"), pk=series_id)
    _check_app(request, s.app.name)
    set_last_modified(request, s.last_build_time)
    # One point more than asked tells whether an older page exists (as `paginate` does for the lists).
    found = recent_points([s.pk], limit=filters.limit + 1, before=before, with_samples=True,
                          before_build=filters.before_build if before is not None else None).get(s.pk, [])
    page = found[-filters.limit:]
    points = [
        {"build": p.build_ext_id, "commit": p.commit, "timestamp": p.build_time, "value": p.value,
         **({"samples": p.samples} if p.samples is not None else {}),
         **({"count": p.count, "total": p.total} if p.total is not None else {})}
        for p in page
    ]
    # `next`: the page before this one's oldest point, by (build time, build), so builds sharing a time are
    # neither skipped nor repeated.
    next_url = None
    if len(found) > len(page):
        params = request.GET.copy()
        params["before"] = page[0].build_time.isoformat()
        params["before_build"] = str(page[0].build_id)
        params["limit"] = str(filters.limit)
        next_url = request.build_absolute_uri(request.path) + "?" + urlencode(sorted(params.items()))
    return {"series": series_payload(request, s), "points": points, "next": next_url}
