"""Server-rendered pages for builds and series (the dashboards build on these)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Max
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from metrics.history import recent_points
from metrics.models import Build, Measurement, Series


@login_required
def home(request: HttpRequest) -> HttpResponse:
    groups = (
        Series.objects.values("app__name", "platform", "branch")
        .annotate(series=Count("id"), last=Max("last_build_time"))
        .order_by("app__name", "platform", "branch")
    )
    builds = Build.objects.select_related("app").order_by("-timestamp")[:20]
    return render(request, "metrics/home.html", {"groups": groups, "builds": builds})


@login_required
def build_page(request: HttpRequest, app: str, platform: str, build: str) -> HttpResponse:
    b = get_object_or_404(Build.objects.select_related("app"), app__name=app, platform=platform, ext_id=build)
    rows = (
        Measurement.objects.filter(build=b)
        .select_related("series__metric")
        .order_by("series__metric__name", "series__device")
    )
    return render(request, "metrics/build.html", {"build": b, "rows": rows})


@login_required
def series_page(request: HttpRequest, series_id: int) -> HttpResponse:
    s = get_object_or_404(Series.objects.select_related("app", "metric"), pk=series_id)
    points = recent_points([s.pk], limit=1000, with_samples=False).get(s.pk, [])
    return render(request, "metrics/series.html", {"series": s, "points": points[::-1]})
