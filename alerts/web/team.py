"""The team dashboard for triage: filtered, paginated alert groups with a sparkline per series.

The filters live in the URL (app, platform, device, metric, direction, status, since, sort, page) so a view
can be shared.
The page's query count does not grow with the number of groups shown: groups (1), their live alerts
(1 prefetch), the previous builds (1), every sparkline window (1, metrics.sparkline.around), plus
a constant number of small reads (count, filter choices, channels, budgets).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Exists, F, OuterRef, Prefetch, Subquery
from django.db.models.functions import Abs
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.utils.safestring import mark_safe

from alerts.models import Alert, AlertGroup, BudgetAlert, Delivery, Team
from alerts.triage import can_triage
from alerts.web import budget_view, check_links, families
from alerts.web import health as health_mod
from alerts.web.format import num, pct, short, spark_json
from metrics import dashcache, sparkline
from metrics.models import Build, Series

PAGE_SIZE = 20
SPARKS_PER_GROUP = 8  # more alerts than this are listed without a picture (the group page has them all)
STATUSES = {
    "open": (AlertGroup.Status.UNTRIAGED, AlertGroup.Status.INVESTIGATING),
    "untriaged": (AlertGroup.Status.UNTRIAGED,),
    "investigating": (AlertGroup.Status.INVESTIGATING,),
    "resolved": (AlertGroup.Status.RESOLVED,),
    "all": (AlertGroup.Status.UNTRIAGED, AlertGroup.Status.INVESTIGATING, AlertGroup.Status.RESOLVED),
}
SINCE = {"1d": 1, "7d": 7, "30d": 30, "90d": 90}
DIRECTIONS = {"regressions": Alert.Direction.REGRESSION, "improvements": Alert.Direction.IMPROVEMENT}
SORTS = {"": "newest culprit first", "largest": "largest change first"}
BULK = [("acknowledged", "Acknowledge"), ("invalid", "Invalid"), ("wontfix", "Won't fix")]


@dataclass(frozen=True)
class Filters:
    app: str = ""
    platform: str = ""
    device: str = ""
    metric: str = ""  # part of a metric name, or a pattern with * (startup.*)
    direction: str = ""  # "", regressions or improvements: groups with at least one such live alert
    status: str = "open"
    since: str = ""
    sort: str = ""
    page: int = 1

    @classmethod
    def parse(cls, q: QueryDict) -> Filters:
        status = q.get("status", "open")
        since = q.get("since", "")
        try:
            page = max(1, int(q.get("page", "1")))
        except ValueError:
            page = 1
        direction, sort = q.get("direction", ""), q.get("sort", "")
        return cls(app=q.get("app", "").strip()[:100], platform=q.get("platform", "").strip()[:100],
                   device=q.get("device", "").strip()[:100], metric=q.get("metric", "").strip()[:100],
                   direction=direction if direction in DIRECTIONS else "",
                   status=status if status in STATUSES else "open",
                   since=since if since in SINCE else "", sort=sort if sort in SORTS else "", page=page)

    def query(self, **change) -> str:
        """The URL query of these filters with `change` applied (defaults left out)."""
        values = {**self.__dict__, **change}
        q = QueryDict(mutable=True)
        for key, default in (("app", ""), ("platform", ""), ("device", ""), ("metric", ""), ("direction", ""),
                             ("status", "open"), ("since", ""), ("sort", ""), ("page", 1)):
            if values[key] != default:
                q[key] = str(values[key])
        return q.urlencode()


def filtered_groups(team: Team, f: Filters):
    qs = AlertGroup.objects.filter(team=team, status__in=STATUSES[f.status])
    if f.app:
        qs = qs.filter(build__app__name=f.app)
    if f.platform:
        qs = qs.filter(build__platform=f.platform)
    live = Alert.objects.filter(group=OuterRef("pk")).exclude(detection=Alert.Detection.WITHDRAWN)
    if f.device:
        qs = qs.filter(Exists(live.filter(series__device=f.device)))
    if f.since:
        qs = qs.filter(build__timestamp__gte=timezone.now() - timedelta(days=SINCE[f.since]))
    if f.metric:
        qs = qs.filter(Exists(live.filter(**_metric_lookup(f.metric))))
    if f.direction:
        qs = qs.filter(Exists(live.filter(direction=DIRECTIONS[f.direction])))
    if f.sort == "largest":
        size = live.annotate(size=Abs("rel_change")).order_by(F("size").desc(nulls_last=True)).values("size")[:1]
        return qs.annotate(largest=Subquery(size)).order_by(F("largest").desc(nulls_last=True),
                                                            "-build__timestamp", "-pk")
    return qs.order_by("-build__timestamp", "-pk")


def _metric_lookup(text: str) -> dict:
    """`startup.*` matches names starting `startup.` (a `*` anywhere is a wildcard); other text is a part of
    the name, case-insensitive."""
    if "*" not in text:
        return {"series__metric__name__icontains": text}
    pattern = "^" + ".*".join(re.escape(part) for part in text.split("*")) + "$"
    return {"series__metric__name__iregex": pattern}


def _live_alerts():
    return (Alert.objects.exclude(detection=Alert.Detection.WITHDRAWN)
            .select_related("series__metric").order_by("-direction", "series__metric__name", "pk"))


def interval(lo: float | None, hi: float | None, unit: str) -> str:
    if lo is None or hi is None:
        return ""
    return f"{num(lo)} – {num(hi, unit)}"


def group_rows(groups) -> list[dict]:
    """What a triager needs of each group, with one sparkline window per alert read in one query."""
    groups = list(groups)
    prev = Build.objects.select_related("app").in_bulk({a.previous_build_id for g in groups for a in g.live if a.previous_build_id})
    anchors = [(a.series_id, g.build.timestamp) for g in groups for a in g.live[:SPARKS_PER_GROUP]]
    sparks = sparkline.around(anchors)
    rows = []
    for g in groups:
        previous = [prev[a.previous_build_id] for a in g.live if a.previous_build_id in prev]
        first = min(previous, key=lambda b: (b.timestamp, b.pk)) if previous else None
        alerts = []
        for i, a in enumerate(g.live):
            unit = a.series.metric.unit
            spark = sparks.get((a.series_id, g.build.timestamp)) if i < SPARKS_PER_GROUP else None
            alerts.append({
                "alert": a, "metric": a.series.metric.name, "device": a.series.device, "unit": unit,
                "kind": a.series.metric.kind,
                "before": num(a.before, unit), "after": num(a.after, unit), "pct": pct(a.rel_change),
                "before_ci": interval(a.before_ci_low, a.before_ci_high, unit),
                "after_ci": interval(a.after_ci_low, a.after_ci_high, unit),
                "series_url": a.series.get_absolute_url(),
                "spark": spark_json(spark.values, spark.mark) if spark else "",
                "bisection": a.confirmation, "bisection_label": a.confirmation.replace("_", " "), "culprit_commit": short(a.culprit_commit),
                "range_commits": a.range_commits,
                "size_link": a.series.metric.kind == "size",
            })
        commits = len(g.build.commits or [])
        rows.append({
            "group": g, "build": g.build, "previous": first, "commits": commits,
            "commit_from": short(first.commit) if first else "", "commit_to": short(g.build.commit),
            "alerts": alerts, "budgets": [budget_view.budget_alert_row(b) for b in g.budgets],
            "regressions": sum(1 for a in g.live if a.direction == Alert.Direction.REGRESSION),
        })
    return rows


def channel_rows(team: Team) -> list[dict]:
    """Each notification channel with its last delivery, so a failing endpoint shows on the page."""
    # Two queries whatever the number of channels: each channel's newest delivery id, then those rows.
    newest = Delivery.objects.filter(channel=OuterRef("pk")).order_by(F("last_attempt").desc(nulls_last=True), "-pk")
    channels = list(team.channels.active().annotate(last_id=Subquery(newest.values("pk")[:1])).order_by("kind", "key"))
    last = Delivery.objects.in_bulk([c.last_id for c in channels if c.last_id])
    return [{"channel": c, "last": last.get(c.last_id)} for c in channels]


def filter_choices(team: Team) -> dict:
    """Apps, platforms and devices the team owns series in (cached with the dashboards)."""
    def compute() -> dict:
        ids = [h.series for h in health_mod.team_health(team.pk)]
        rows = Series.objects.filter(pk__in=ids).values_list("app__name", "platform", "device").distinct()
        apps, platforms, devices = set(), set(), set()
        for a, p, d in rows:
            apps.add(a)
            platforms.add(p)
            if d:
                devices.add(d)
        return {"apps": sorted(apps), "platforms": sorted(platforms), "devices": sorted(devices)}

    return dashcache.cached(f"team-choices:{team.pk}", compute, ttl=health_mod.TTL, stale_ttl=health_mod.STALE_TTL)


def extra_sections(team: Team) -> list[str]:
    """HTML of the sections between the alert groups and the metric list: size budgets (cached)."""
    return [mark_safe(html) for html in (budget_view.team_section(team), check_links.section(team)) if html]


@login_required
def team_page(request: HttpRequest, team: str) -> HttpResponse:
    t = get_object_or_404(Team, name=team)
    f = Filters.parse(request.GET)
    qs = filtered_groups(t, f).select_related("build__app").prefetch_related(
        Prefetch("alerts", queryset=_live_alerts(), to_attr="live"),
        Prefetch("budget_alerts", queryset=BudgetAlert.objects.order_by("pk"), to_attr="budgets"))
    pages = Paginator(qs, PAGE_SIZE)
    page = pages.get_page(f.page)
    rows = group_rows(page.object_list)
    block = dashcache.cached(f"team-families:{t.pk}", lambda: families.families_block(t),
                             ttl=health_mod.TTL, stale_ttl=health_mod.STALE_TTL)
    return render(request, "alerts/team.html", {
        "team": t, "rows": rows, "f": f, "page": page, "total": pages.count,
        "prev_query": f.query(page=page.previous_page_number()) if page.has_previous() else None,
        "next_query": f.query(page=page.next_page_number()) if page.has_next() else None,
        "choices": filter_choices(t), "statuses": list(STATUSES), "since_choices": list(SINCE),
        "directions": list(DIRECTIONS), "sorts": SORTS,
        "health_counts": block["counts"], "metrics_html": mark_safe(block["html"]),
        "can_triage": can_triage(request.user.pk, request.user.is_staff, t.pk),
        "bulk": BULK, "teams": Team.objects.order_by("name"), "channels": channel_rows(t),
        "sections": extra_sections(t),
    })
