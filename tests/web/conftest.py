"""A small world for the page tests, built directly with the ORM (fast): one app on one platform,
four series of different kinds over 40 builds, two teams with ownership rules, and alert groups."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.core.cache import cache

START = datetime(2026, 10, 1, tzinfo=UTC)
N_BUILDS = 40
SHIFT_AT = 30


@dataclass
class World:
    app: object
    builds: list
    series: dict
    teams: dict
    groups: dict
    alerts: dict
    member: object
    outsider: object
    staff: object


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def world(db, django_user_model) -> World:
    from alerts.models import Alert, AlertGroup, OwnerRule, Team
    from metrics.models import App, Build, Measurement, Metric, Series, pack_samples

    rng = np.random.default_rng(5)
    app = App.objects.create(name="com.example.shop")
    specs = [("startup.cold.ttid", "time", "ms"), ("memory.pss.steady", "memory", "MB"),
             ("size.apk.download", "size", "bytes"), ("crash.rate", "rate", "ratio"),
             ("frames.feed.janky", "count", "frames")]
    series = {}
    for name, kind, unit in specs:
        m = Metric.objects.create(app=app, name=name, kind=kind, unit=unit)
        series[name] = Series.objects.create(
            signature=Series.signature_of(app.name, "android", "main", "pixel-6", name), app=app, platform="android",
            branch="main", device="pixel-6", metric=m, last_build_time=START + timedelta(hours=N_BUILDS - 1))
    builds = Build.objects.bulk_create([
        Build(app=app, platform="android", branch="main", ext_id=f"b{i}", commit=f"{i:040x}", parent_commit=f"{i - 1:040x}",
              timestamp=START + timedelta(hours=i), analysis=Build.Analysis.DONE) for i in range(N_BUILDS)])
    rows = []
    for i, b in enumerate(builds):
        shift = 1.2 if i >= SHIFT_AT else 1.0
        ttid = (400 * shift * np.exp(rng.normal(0, 0.03, 15))).round(2).tolist()
        pss = (210 * np.exp(rng.normal(0, 0.01, 5))).round(3).tolist()
        total = 100_000
        count = int(rng.poisson(0.002 * total * (2 if i >= SHIFT_AT else 1)))
        rows += [
            Measurement(series=series["startup.cold.ttid"], build=b, build_time=b.timestamp, value=float(np.median(ttid)),
                        samples=pack_samples(ttid), n_samples=15),
            Measurement(series=series["memory.pss.steady"], build=b, build_time=b.timestamp, value=float(np.median(pss)),
                        samples=pack_samples(pss), n_samples=5),
            Measurement(series=series["size.apk.download"], build=b, build_time=b.timestamp,
                        value=31_457_280.0 + (1000 if i >= SHIFT_AT else 0)),
            Measurement(series=series["crash.rate"], build=b, build_time=b.timestamp, value=count / total,
                        count=count, total=total),
            Measurement(series=series["frames.feed.janky"], build=b, build_time=b.timestamp, value=float(10 + (i % 3))),
        ]
    Measurement.objects.bulk_create(rows)
    teams = {n: Team.objects.create(name=n) for n in ("central-perf", "startup-perf", "app-size")}
    OwnerRule.objects.create(position=1, metric="*", team=teams["central-perf"])
    OwnerRule.objects.create(position=2, metric="startup.*", team=teams["startup-perf"])
    OwnerRule.objects.create(position=3, metric="size.*", team=teams["app-size"])
    culprit, prev = builds[SHIFT_AT], builds[SHIFT_AT - 1]
    groups = {
        "startup": AlertGroup.objects.create(build=culprit, team=teams["startup-perf"]),
        "size": AlertGroup.objects.create(build=culprit, team=teams["app-size"]),
        "older": AlertGroup.objects.create(build=builds[20], team=teams["startup-perf"]),
    }

    def alert(name, group, build, prev_build, before, after, **kw):
        return Alert.objects.create(
            series=series[name], build=build, previous_build=prev_build, first_build=build, last_build=build,
            detected_build=builds[-1], group=group, team=group.team, direction=kw.pop("direction", "regression"),
            rel_change=(after - before) / before, abs_change=after - before, before=before, after=after,
            p_value=1e-6, test="robust two-segment z-test", sensitivity=kw.pop("sensitivity", 0.04),
            detection=kw.pop("detection", "confirmed"), **kw)

    alerts = {
        "startup": alert("startup.cold.ttid", groups["startup"], culprit, prev, 400.0, 480.0),
        "size": alert("size.apk.download", groups["size"], culprit, prev, 31_457_280.0, 31_458_280.0, sensitivity=0.005),
        "older": alert("startup.cold.ttid", groups["older"], builds[20], builds[19], 400.0, 380.0,
                       direction="improvement", detection="withdrawn"),
    }
    from alerts import lifecycle

    lifecycle.refresh_groups([g.pk for g in groups.values()])
    member = django_user_model.objects.create_user("alice", password="pw")
    teams["startup-perf"].members.add(member)
    outsider = django_user_model.objects.create_user("mallory", password="pw")
    staff = django_user_model.objects.create_user("root", password="pw", is_staff=True)
    return World(app, builds, series, teams, groups, alerts, member, outsider, staff)


def login(client, user):
    client.force_login(user)
    return client
