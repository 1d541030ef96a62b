"""Latest builds and the build page: every metric of one build with its analysis state."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Max
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from metrics.models import Build, Measurement, Scope, Series
from metrics.web.annotations import annotate_build
from metrics.web.compare import pct, significance


def fmt(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:,.0f}" if abs(value) >= 10000 else f"{value:.4g}"


@login_required
def builds_home(request: HttpRequest) -> HttpResponse:
    groups = (Series.objects.filter(scope=Scope.BRANCH).values("app__name", "platform", "branch")
              .annotate(series=Count("id"), last=Max("last_build_time")).order_by("app__name", "platform", "branch"))
    builds = Build.objects.filter(role=Scope.BRANCH).select_related("app").order_by("-timestamp")[:30]
    return render(request, "metrics/home.html", {"groups": groups, "builds": builds})


def _neighbours(b: Build):
    """The builds `b` sits between: a pull-request build among its pull request's builds, any other among its
    branch's history (requested builds, CI's re-runs for a bisection, are never anyone's neighbour)."""
    role = Scope.PR if b.role == Scope.PR else Scope.BRANCH
    return Build.objects.filter(app_id=b.app_id, platform=b.platform, branch=b.branch, role=role)


def previous_build(b: Build) -> Build | None:
    return _neighbours(b).filter(timestamp__lt=b.timestamp).order_by("-timestamp", "-pk").first()


@login_required
def build_page(request: HttpRequest, app: str, platform: str, build: str) -> HttpResponse:
    b = get_object_or_404(Build.objects.select_related("app"), app__name=app, platform=platform, ext_id=build)
    prev = previous_build(b)
    following = _neighbours(b).filter(timestamp__gt=b.timestamp).order_by("timestamp", "pk").first()
    before = {m.series_id: m for m in Measurement.objects.filter(build=prev)} if prev else {}
    notes = annotate_build(b)
    rows = []
    for m in (Measurement.objects.filter(build=b).select_related("series__metric")
              .order_by("series__metric__name", "series__device")):
        old = before.get(m.series_id)
        rel = (m.value - old.value) / abs(old.value) if old is not None and old.value else None
        sig = significance(m.series.metric.kind, old, m) if old is not None else None
        worse = None
        if rel and sig is not None and sig.significant:
            worse = (rel > 0) == m.series.metric.lower_is_better
        rows.append({"m": m, "value": fmt(m.value), "previous": fmt(old.value if old else None), "change": pct(rel),
                     "worse": worse, "p": "" if sig is None or sig.p is None else f"{sig.p:.2g}",
                     "notes": notes.get(m.series_id, []),
                     "runs": (str(m.n_samples) if m.n_samples else f"{m.count}/{m.total}" if m.total is not None else "")})
    return render(request, "metrics/build.html", {
        "build": b, "rows": rows, "prev": prev, "next": following,
        "n_alerts": sum(1 for r in rows if r["notes"]),
        "has_size": any(r["m"].series.metric.name.startswith("size.") for r in rows), "n_changed": sum(1 for r in rows if r["worse"] is not None)})
