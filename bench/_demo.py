"""Shared data for bench_analysis.py and bench_load.py: a demo_data history, loaded in-process, and upload bodies.

The values come from `perfplatform.demo_data.generate` (155 metric series of every kind: time and
memory with 5-15 samples a build, size, count, rate as count/total, score; six planted sustained
shifts per app/platform). Builds are one minute apart, ending in the past, so uploads of the later
indices are accepted (timestamps more than a year ahead are refused).
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

APP = "com.example.shop"
PLATFORM = "android"
BRANCH = "main"
DEVICE = "pixel-6"


class History:
    """generate(APP, PLATFORM, n_builds=n) plus the identity of build i (id, commit, time)."""

    def __init__(self, n_builds: int, *, app: str = APP, platform: str = PLATFORM, seed: int = 0):
        from perfplatform import demo_data

        self.app, self.platform, self.n = app, platform, n_builds
        self.series, self.planted = demo_data.generate(app, platform, n_builds=n_builds, seed=seed)
        # Builds one minute apart; the last one an hour ago.
        now = datetime.now(UTC).replace(second=0, microsecond=0)
        self.t0 = now - timedelta(minutes=n_builds + 60)

    def ident(self, i: int) -> dict:
        return {"id": f"b{i:06d}", "commit": f"{i:07x}cafe"[:12], "timestamp": self.t0 + timedelta(minutes=i),
                "version": f"7.{i // 100}.{i % 100}"}

    def metric_json(self, s, point: dict) -> dict:
        spec = s.spec
        m = {"name": spec.name, "kind": spec.kind, "unit": spec.unit, "lower_is_better": spec.lower_is_better}
        m.update(point)
        return m

    def body(self, i: int, *, build_id: str | None = None, branch: str = BRANCH, point_index: int | None = None) -> bytes:
        """Native JSON upload of build i (values of build `point_index`, default i)."""
        ident = self.ident(i)
        k = i if point_index is None else point_index
        body = {
            "app": self.app, "platform": self.platform, "branch": branch, "device": DEVICE,
            "build": {"id": build_id or ident["id"], "commit": ident["commit"],
                      "timestamp": ident["timestamp"].strftime("%Y-%m-%dT%H:%M:%SZ"), "version": ident["version"]},
            "metrics": [self.metric_json(s, s.points[k]) for s in self.series],
        }
        return json.dumps(body, separators=(",", ":")).encode()

    def metrics_json(self, k: int) -> str:
        """Only the `metrics` array of point k, serialised (bench_load splices it into many bodies)."""
        return json.dumps([self.metric_json(s, s.points[k]) for s in self.series], separators=(",", ":"))

    # --- in-process loading (Django must be set up) -----------------------------------------------------
    def ensure_series(self, branch: str = BRANCH) -> dict[str, object]:
        from metrics.models import App, Metric, Series

        app, _ = App.objects.get_or_create(name=self.app)
        Metric.objects.bulk_create(
            [Metric(app=app, name=s.spec.name, kind=s.spec.kind, unit=s.spec.unit,
                    lower_is_better=s.spec.lower_is_better) for s in self.series],
            ignore_conflicts=True,
        )
        metrics = {m.name: m for m in Metric.objects.filter(app=app)}
        Series.objects.bulk_create(
            [Series(signature=Series.signature_of(self.app, self.platform, branch, DEVICE, s.spec.name), app=app,
                    platform=self.platform, branch=branch, device=DEVICE, metric=metrics[s.spec.name])
             for s in self.series],
            ignore_conflicts=True,
        )
        return {x.metric.name: x for x in Series.objects.filter(app=app, platform=self.platform, branch=branch)
                .select_related("metric")}

    def insert_builds(self, indices: range, branch: str = BRANCH) -> list[int]:
        """Builds and measurements written directly (analysis pending, nothing queued); returns build pks."""
        from django.db import transaction

        from metrics.models import App, Build, Measurement, Series, pack_samples

        series = self.ensure_series(branch)
        app = App.objects.get(name=self.app)
        with transaction.atomic():
            builds = Build.objects.bulk_create([
                Build(app=app, platform=self.platform, branch=branch, ext_id=self.ident(i)["id"],
                      commit=self.ident(i)["commit"], version=self.ident(i)["version"],
                      timestamp=self.ident(i)["timestamp"], analysis=Build.Analysis.PENDING,
                      analysis_requested=self.ident(i)["timestamp"])
                for i in indices
            ])
            rows = []
            for b, i in zip(builds, indices, strict=True):
                for s in self.series:
                    p = s.points[i]
                    srow = series[s.spec.name]
                    if "samples" in p:
                        sm = sorted(p["samples"])
                        mid = len(sm) // 2
                        value = sm[mid] if len(sm) % 2 else (sm[mid - 1] + sm[mid]) / 2
                        rows.append(Measurement(series=srow, build=b, build_time=b.timestamp, value=value,
                                                samples=pack_samples(p["samples"]), n_samples=len(p["samples"])))
                    elif "count" in p:
                        rows.append(Measurement(series=srow, build=b, build_time=b.timestamp,
                                                value=p["count"] / p["total"], count=p["count"], total=p["total"]))
                    else:
                        rows.append(Measurement(series=srow, build=b, build_time=b.timestamp, value=p["value"]))
            Measurement.objects.bulk_create(rows, batch_size=5000)
            Series.objects.filter(pk__in=[x.pk for x in series.values()]).update(
                last_build_time=self.ident(indices[-1])["timestamp"])
        return [b.pk for b in builds]

    def load_and_analyse(self, n: int, branch: str = BRANCH) -> dict:
        """The first n builds, then the whole-history analysis seed_demo runs (alerts as the live pipeline)."""
        from alerts.backfill import analyse_history
        from metrics.models import App

        t0 = time.perf_counter()
        self.insert_builds(range(n), branch)
        t1 = time.perf_counter()
        alerts = analyse_history(App.objects.get(name=self.app), self.platform, branch)
        t2 = time.perf_counter()
        return {"builds": n, "series": len(self.series), "insert_s": round(t1 - t0, 1),
                "analyse_history_s": round(t2 - t1, 1), "alerts": alerts}


def redis_flush(url: str) -> dict:
    import redis

    r = redis.Redis.from_url(url, socket_timeout=5)
    info = {"keys_before_flush": r.dbsize(), "analysis_queue_len": r.llen("analysis")}
    r.flushdb()
    return info
