"""The demo's bisections (`seed_demo`): one alert bisected to its culprit commit, one not reproduced.

The demo has no CI, so this plays one: it gives two culprit builds five commits each, then runs the real
decisions (`alerts.detection.bisect.decide`) with runs drawn from a hidden truth at the alert's own levels
and noise, recording every request and answer as the live path does. Idempotent.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math

import numpy as np
from django.db import transaction
from django.utils import timezone

from alerts.bisection import engine
from alerts.detection.bisect import Reference, decide, is_thin
from alerts.models import Alert, Bisection, RunRequest

COMMITS_PER_BUILD = 5
CULPRIT = 3  # the bisected alert's change lands in the third of its build's five commits
SAMPLES = 5


def _commits(build) -> list[str]:
    made = [hashlib.sha1(f"{build.commit}:{k}".encode()).hexdigest() for k in range(1, COMMITS_PER_BUILD)]
    return [*made, build.commit]


def _runs(level: float, ref: Reference, runs: int, rng: np.random.Generator) -> list[float]:
    y = level + rng.normal(0.0, ref.sigma, size=(runs, 1)) * 0.8 + rng.normal(0.0, ref.sigma * 0.6, (runs, SAMPLES))
    return [round(float(math.exp(v) if ref.log else v), 4) for v in y.ravel()]


def _play(alert: Alert, shifted: bool, rng: np.random.Generator) -> str:
    with transaction.atomic():
        build = alert.build
        build.commits = _commits(build)
        build.save(update_fields=["commits", "updated"])
        commits = [alert.previous_build.commit, *build.commits]
        ref = engine._reference(alert)
        b = Bisection.objects.create(alert=alert, build=build, commits=commits, hi=COMMITS_PER_BUILD,
                                     reference=dataclasses.asdict(ref),
                                     thin=is_thin(alert.p_value, ref.mode))
        observations: dict = {}
        while True:
            d = decide(COMMITS_PER_BUILD, observations, ref, thin=b.thin)
            if not d.asks:
                break
            for ask in d.asks:
                after = shifted and ask.index >= CULPRIT
                values = _runs(ref.after if after else ref.before, ref, ask.runs, rng)
                now = timezone.now()
                pid = f"r{alert.pk}-demo{RunRequest.objects.filter(alert=alert).count() + 1}"
                rr = RunRequest.objects.create(
                    public_id=pid, app_id=alert.series.app_id, alert=alert, bisection=b, reason=ask.reason,
                    index=ask.index, commit=commits[ask.index], build_ext_id=f"bisect-{pid}", runs=ask.runs,
                    metrics=[alert.series.metric.name], state=RunRequest.State.ANSWERED, sent=now, attempts=1,
                    attempt_log=[{"at": now.isoformat(), "ok": True, "status": 202, "error": "", "ms": 12}],
                    answered=now, observation={"values": values, "runs": ask.runs})
                observations.setdefault(ask.index, []).append(engine._observation(rr))
        b.lo, b.hi = d.lo, d.hi
        engine._finish(b, alert, d.outcome or "none", "", culprit=d.culprit)
        return d.outcome or "none"


def seed_bisections(out=None) -> None:
    """Bisect one demo alert to its culprit commit and withdraw another as not reproduced (once)."""
    if Bisection.objects.exists():
        return
    candidates = list(
        Alert.objects.filter(detection__in=[Alert.Detection.OPEN, Alert.Detection.CONFIRMED], series__metric__kind="time",
                             direction=Alert.Direction.REGRESSION, previous_build__isnull=False)
        .select_related("series__app", "series__metric", "build", "previous_build").order_by("-rel_change")[:20]
    )
    picked, groups = [], set()
    for a in candidates:
        if a.group_id not in groups and a.build.commit and a.previous_build.commit:
            picked.append(a)
            groups.add(a.group_id)
        if len(picked) == 2:
            break
    rng = np.random.default_rng(12)
    for alert, shifted in zip(picked, (True, False), strict=False):
        outcome = _play(alert, shifted, rng)
        if out is not None:
            out.write(f"  demo bisection: alert {alert.pk} ({alert.series.metric.name}) {outcome}, "
                      f"see its alert group at /alerts/{alert.group_id}/")
