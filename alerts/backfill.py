"""Analysing a whole stored history at once (seed_demo, imports): the online detector, streamed.

Each series is fed to `OnlineDetector.step` build by build, exactly as uploads would feed it, so the
alerts (with their `detected_build`) are those the live pipeline would have raised. Historical groups
are marked notified without sending anything: nobody wants last year's alerts in their inbox.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from alerts import budget_alerts, lifecycle
from alerts.analysis import base_config, replay_series
from alerts.models import Alert, AlertGroup, MetricOverride
from alerts.ownership import Owners, metric_overrides
from metrics.history import recent_points
from metrics.models import App, Build, Series

MAX_HISTORY = 100_000


@transaction.atomic
def analyse_history(app: App, platform: str, branch: str) -> int:
    """Run detection over every series of one app/platform/branch; returns the number of alerts."""
    series = list(
        Series.objects.select_for_update(no_key=True, of=("self",)).filter(app=app, platform=platform, branch=branch)
        .select_related("metric").order_by("pk")
    )
    config = base_config()
    owners = Owners()
    overrides = list(MetricOverride.objects.order_by("position"))
    groups: set[int] = set()
    for start in range(0, len(series), 50):
        chunk = series[start:start + 50]
        history = recent_points([s.pk for s in chunk], limit=MAX_HISTORY, with_samples=True)
        for s in chunk:
            pts = history.get(s.pk, [])
            if not pts:
                continue
            cfg = config.with_overrides(**metric_overrides(app.name, platform, s.metric.name, overrides))
            ctx = lifecycle.SeriesContext(s, pts, owners.team_id(app.name, platform, s.metric.name))
            groups |= replay_series(ctx, [], 0, s.metric.kind, s.metric.lower_is_better, cfg)
    lifecycle.mark_recoveries([s.pk for s in series])
    groups |= budget_alerts.raise_for_builds(list(Build.objects.filter(app=app, platform=platform, branch=branch,
                                                                       role="branch").select_related("app")))
    lifecycle.refresh_groups(sorted(groups))
    AlertGroup.objects.filter(pk__in=groups, notified__isnull=True).update(notified=timezone.now())
    Build.objects.filter(app=app, platform=platform, branch=branch).update(
        analysis=Build.Analysis.DONE, analysis_finished=timezone.now(), analysis_error=""
    )
    return Alert.objects.filter(group_id__in=groups).count()
