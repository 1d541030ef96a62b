"""Pre-merge check benchmark (issue 11): server time of one 150-metric check, computing and reading it.

Creates its own PostgreSQL database (bench/_pg.py), loads 60 base builds of `demo_data.generate` (155
series: time and memory with 5-15 runs, size, count, rate, score) into the branch history, then for 30
pull-request builds (each based on one of the last 30 base builds, values of a later build) times, in
this process: `alerts.premerge.compute_check` (find the base, read the history up to it, the statistics,
write the verdicts: what the worker does per check) and the API read `GET /api/v1/checks/...` through
Django's test client (what CI polls). Target: compute p95 < 200 ms.

    .venv/bin/python bench/bench_checks.py [--prs 30]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _demo  # noqa: E402
import _pg  # noqa: E402

BASE = 60


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prs", type=int, default=30)
    a = ap.parse_args()
    wall = time.perf_counter()
    with _pg.BenchDB() as db:
        db.migrate()
        _pg.setup_django(db)
        from django.test import Client
        from django.utils import timezone

        from alerts import premerge
        from alerts.models import Check
        from metrics.models import App, Build, Measurement, UploadToken

        hist = _demo.History(max(BASE + a.prs + 1, 100))
        pks = hist.insert_builds(range(BASE))
        Build.objects.filter(pk__in=pks).update(analysis=Build.Analysis.DONE)
        app = App.objects.get(name=hist.app)
        _, token = UploadToken.issue(app)
        # PR builds: a copy of build BASE+i's values, based on base build BASE-1-i (role pr, pr-scope series).
        compute_ms, read_ms, n_metrics = [], [], 0
        # As a worker process does after start-up (perfplatform.celery): keep the loaded heap out of
        # the collector's way, so what is timed is the check's own work.
        from perfplatform.heap import freeze_startup_heap

        freeze_startup_heap()
        client = Client()
        for i in range(a.prs):
            pr_pk = hist.insert_builds(range(BASE + i, BASE + i + 1), branch=f"pr/{i}")[0]
            base_ident = hist.ident(BASE - 1 - (i % 30))
            Build.objects.filter(pk=pr_pk).update(role="pr", base_commit=base_ident["commit"], base_branch="main",
                                                  ext_id=f"pr-{i}", analysis=Build.Analysis.DONE)
            Check.objects.create(build_id=pr_pk, app=app, platform=hist.platform, base_branch="main",
                                 base_commit=base_ident["commit"], requested=timezone.now())
            n_metrics = Measurement.objects.filter(build_id=pr_pk).count()
            t = time.perf_counter()
            premerge.compute_check(pr_pk)
            compute_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            r = client.get(f"/api/v1/checks/{hist.app}/{hist.platform}/pr-{i}", HTTP_AUTHORIZATION=f"Bearer {token}")
            read_ms.append((time.perf_counter() - t) * 1000)
            assert r.status_code == 200 and r.json()["status"] != "pending", r.content[:300]
        import cProfile
        import io
        import pstats

        prof = cProfile.Profile()
        prof.runcall(premerge.compute_check, pr_pk)
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(18)
        print(buf.getvalue())
        statuses = list(Check.objects.values_list("status", flat=True))

        def st(ms):
            return {"n": len(ms), "p50": round(_pg.percentile(ms, 50), 1), "p95": round(_pg.percentile(ms, 95), 1),
                    "max": round(max(ms), 1)}

        out = {"machine": _pg.machine(), "git": _pg.git_state(), "loadavg": _pg.loadavg(),
               "metrics_per_check": n_metrics, "base_builds": BASE, "compute_check_ms": st(compute_ms[1:]),
               "api_read_ms": st(read_ms[1:]), "statuses": {s: statuses.count(s) for s in set(statuses)}}
        out["targets"] = {"compute_p95_lt_200ms": out["compute_check_ms"]["p95"] < 200}
        print(json.dumps(out, indent=1, default=str))
    return _pg.finish("checks", out, round(time.perf_counter() - wall, 1))


if __name__ == "__main__":
    sys.exit(main())
