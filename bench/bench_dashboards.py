"""Dashboard benchmark (issue 5): team dashboard and series page server time, and single-flight recomputation.

Creates its own PostgreSQL database (bench/_pg.py), migrates it and bulk-loads 3 apps x 2 platforms x
1,000 builds x 150 metrics (900 series, 6,000 builds, 900,000 measurements; time metrics carry 20
runs as samples, memory 5, sizes a value, rates count/total) with bulk_create and binary COPY, three
teams with ownership rules and a few hundred alerts in alert groups. It then starts gunicorn (gthread)
with REDIS_URL pointing at redis://127.0.0.1:6379/13 (the cache is Redis, as in production) and
measures over HTTP on loopback, signed in with a session cookie:

- team dashboard `/teams/startup-perf/`: warm (aggregates cached; the open-groups query still runs)
  and cold (the cache generation is bumped before every request, so each one recomputes);
- series page `/series/{id}/` (1,000 points with the p10-p90 band), rotating over all 900 series;
- overview `/overview/` warm;
- the triage views of issue 13: the team dashboard filtered by app and platform and its second page,
  alert group pages (each alert's series around the culprit) and build size pages (treemap);
- 50 concurrent clients released by a barrier onto a fresh entry (control), an expired entry (stale value present) and onto a
  missing entry: the number of recomputations of each cached aggregate (the team's rendered metrics
  table and the health computation under it; the overview and the all-series health) is read from
  `dashcache:computes:<key>` in Redis.

    .venv/bin/python bench/bench_dashboards.py              # about 2-3 minutes
    .venv/bin/python bench/bench_dashboards.py --reps 300

Prints the figures and writes bench/out/dashboards-<time>.json (and dashboards-latest.json). Drops the
database and flushes Redis db 13 at the end. Target: p95 under 150 ms; one recomputation under load.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _pg  # noqa: E402

REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
APPS = ["com.example.shop", "com.example.news", "com.example.maps"]
PLATFORMS = [("android", "pixel-6"), ("ios", "iphone-15")]
N_BUILDS = 1000
START = datetime(2026, 6, 1, tzinfo=UTC)


def metric_names() -> list[tuple[str, str, str, int]]:
    """150 metrics: (name, kind, unit, runs)."""
    out = []
    for s in range(10):
        out += [(f"startup.s{s}.ttid", "time", "ms", 20), (f"startup.s{s}.ttfd", "time", "ms", 20)]
    for s in range(20):
        out += [(f"nav.screen{s:02d}.ttid", "time", "ms", 20), (f"frames.journey{s:02d}.p90", "time", "ms", 20)]
    for s in range(30):
        out.append((f"memory.screen{s:02d}.pss", "memory", "MB", 5))
    for s in range(40):
        out.append((f"size.module{s:02d}", "size", "bytes", 0))
    for s in range(20):
        out.append((f"crash.rate.f{s:02d}", "rate", "ratio", 0))
    assert len(out) == 150
    return out


def load(db: _pg.BenchDB) -> dict:
    import numpy as np
    import psycopg
    from django.db import connection

    from alerts.models import Alert, AlertGroup, OwnerRule, Team
    from metrics.models import App, Build, Metric, Series

    t0 = time.perf_counter()
    rng = np.random.default_rng(7)
    specs = metric_names()
    apps = App.objects.bulk_create([App(name=n) for n in APPS])
    metrics = Metric.objects.bulk_create([Metric(app=a, name=n, kind=k, unit=u) for a in apps for n, k, u, _ in specs])
    metric_of = {(m.app_id, m.name): m for m in metrics}
    series: dict[tuple[int, str], list[Series]] = {}
    builds: dict[tuple[int, str], list[Build]] = {}
    for a in apps:
        for plat, device in PLATFORMS:
            series[(a.id, plat)] = Series.objects.bulk_create([
                Series(signature=Series.signature_of(a.name, plat, "main", device, n), app=a, platform=plat,
                       branch="main", device=device, metric=metric_of[(a.id, n)],
                       last_build_time=START + timedelta(minutes=30 * (N_BUILDS - 1)))
                for n, *_ in specs])
            builds[(a.id, plat)] = Build.objects.bulk_create([
                Build(app=a, platform=plat, branch="main", ext_id=f"{plat[0]}{i:06d}", commit=f"{i:040x}",
                      parent_commit=f"{i - 1:040x}", timestamp=START + timedelta(minutes=30 * i),
                      analysis=Build.Analysis.DONE) for i in range(N_BUILDS)], batch_size=1000)
    teams = {n: Team.objects.create(name=n) for n in ("central-perf", "startup-perf", "app-size")}
    OwnerRule.objects.bulk_create([OwnerRule(position=1, metric="*", team=teams["central-perf"]),
                                   OwnerRule(position=2, metric="startup.*", team=teams["startup-perf"]),
                                   OwnerRule(position=3, metric="nav.*", team=teams["startup-perf"]),
                                   OwnerRule(position=4, metric="size.*", team=teams["app-size"])])
    t_meta = time.perf_counter() - t0

    base = rng.uniform(5, 1000, size=len(specs))
    connection.close()
    t1 = time.perf_counter()
    rows = 0
    with psycopg.connect(db.url) as conn, conn.cursor() as cur:
        with cur.copy("COPY metrics_measurement (series_id, build_id, build_time, value, samples, n_samples, count, total)"
                      " FROM STDIN (FORMAT BINARY)") as cp:
            cp.set_types(["int8", "int8", "timestamptz", "float8", "bytea", "int4", "int8", "int8"])
            for i in range(N_BUILDS):
                for key, srows in series.items():
                    b = builds[key][i]
                    for j, (s, (_, kind, _, runs)) in enumerate(zip(srows, specs, strict=True)):
                        if runs:
                            smp = (base[j] * (1 + 0.04 * rng.standard_normal(runs))).astype("<f8")
                            cp.write_row((s.id, b.id, b.timestamp, float(np.median(smp)), smp.tobytes(), runs, None, None))
                        elif kind == "rate":
                            total = 100_000
                            count = int(rng.poisson(200))
                            cp.write_row((s.id, b.id, b.timestamp, count / total, None, 0, count, total))
                        else:
                            cp.write_row((s.id, b.id, b.timestamp, float(round(base[j] * 1e4)), None, 0, None, None))
                        rows += 1
        conn.commit()
    t_copy = time.perf_counter() - t1

    # Alerts: every 50th build of each branch carries a regression on two metrics per team.
    groups, alerts = 0, []
    for (app_id, plat), blist in builds.items():
        srows = series[(app_id, plat)]
        by_team = {"startup-perf": [s for s in srows if s.metric.name.startswith(("startup.", "nav."))],
                   "app-size": [s for s in srows if s.metric.name.startswith("size.")],
                   "central-perf": [s for s in srows if s.metric.name.startswith(("frames.", "memory.", "crash."))]}
        for k, i in enumerate(range(50, N_BUILDS, 50)):
            for tname, candidates in by_team.items():
                g = AlertGroup.objects.create(build=blist[i], team=teams[tname],
                                              status="untriaged" if i > 700 else "resolved")
                groups += 1
                for s in (candidates[(2 * k) % len(candidates)], candidates[(2 * k + 1) % len(candidates)]):
                    alerts.append(Alert(series=s, build=blist[i], previous_build=blist[i - 1], first_build=blist[i],
                                        last_build=blist[i], detected_build=blist[i + 5], group=g, team=teams[tname],
                                        direction="regression", rel_change=0.1, abs_change=1.0, before=10.0, after=11.0,
                                        p_value=1e-6, test="bench", sensitivity=0.05, detection="confirmed",
                                        status="untriaged" if i > 700 else "fixed"))
    Alert.objects.bulk_create(alerts, batch_size=1000)
    with psycopg.connect(db.url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        size = conn.execute("SELECT pg_size_pretty(pg_database_size(current_database()))").fetchone()[0]
    return {"series": sum(len(v) for v in series.values()), "builds": sum(len(v) for v in builds.values()),
            "measurements": rows, "alert_groups": groups, "alerts": len(alerts), "metadata_s": round(t_meta, 1),
            "copy_s": round(t_copy, 1), "database_size": size}


def session_cookie() -> str:
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore

    from alerts.models import Team

    user = get_user_model().objects.create_user("bench", password="bench-only")
    Team.objects.get(name="startup-perf").members.add(user)
    s = SessionStore()
    s[SESSION_KEY] = str(user.pk)
    s[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    s[HASH_SESSION_KEY] = user.get_session_auth_hash()
    s.create()
    return f"sessionid={s.session_key}"


class Http:
    """One keep-alive connection per client."""

    def __init__(self, base: str, cookie: str):
        host, port = base.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=120)
        self.cookie = cookie

    def get(self, path: str) -> tuple[int, float, int]:
        t = time.perf_counter()
        self.conn.request("GET", path, headers={"Cookie": self.cookie})
        resp = self.conn.getresponse()
        body = resp.read()
        return resp.status, (time.perf_counter() - t) * 1000, len(body)


def timed(client: Http, paths: list[str], before=None) -> dict:
    ms, sizes = [], []
    for p in paths:
        if before:
            before()
        status, elapsed, size = client.get(p)
        assert status == 200, (p, status)
        ms.append(elapsed)
        sizes.append(size)
    return {"n": len(ms), "p50_ms": round(_pg.percentile(ms, 50), 1), "p95_ms": round(_pg.percentile(ms, 95), 1),
            "max_ms": round(max(ms), 1), "mean_body_kb": round(sum(sizes) / len(sizes) / 1024, 1)}


def stampede(base: str, cookie: str, path: str, keys: list[str], n_clients: int, prepare) -> dict:
    from metrics import dashcache

    clients = [Http(base, cookie) for _ in range(n_clients)]
    for c in clients:  # open the connections (and warm the worker threads) first
        assert c.get("/healthz")[0] == 200
    prepare()
    before = {k: dashcache.compute_count(k) for k in keys}
    barrier = threading.Barrier(n_clients)
    results: list[tuple[int, float]] = []
    lock = threading.Lock()

    def run(c: Http) -> None:
        barrier.wait()
        status, ms, _ = c.get(path)
        with lock:
            results.append((status, ms))

    threads = [threading.Thread(target=run, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ms = [m for _, m in results]
    return {"clients": n_clients, "ok": sum(1 for s, _ in results if s == 200),
            "recomputations": {k: dashcache.compute_count(k) - before[k] for k in keys},
            "p50_ms": round(_pg.percentile(ms, 50), 1), "max_ms": round(max(ms), 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=32)
    args = ap.parse_args()
    import redis

    result: dict = {"machine": _pg.machine(), "git": _pg.git_state(), "reps": args.reps,
                    "gunicorn": f"{args.workers} workers x {args.threads} threads (gthread)", "redis": REDIS_URL}
    rds = redis.Redis.from_url(REDIS_URL)
    rds.flushdb()
    with _pg.BenchDB(redis_url=REDIS_URL) as db:
        try:
            db.migrate()
            _pg.setup_django(db, keep_redis=True)
            print("loading ...", flush=True)
            result["data"] = load(db)
            print(result["data"], flush=True)
            cookie = session_cookie()
            from alerts.models import Team
            from metrics import dashcache
            from metrics.models import Series

            team_id = Team.objects.get(name="startup-perf").pk
            base = db.start_gunicorn(args.workers, "gthread", args.threads)
            c = Http(base, cookie)
            dash = "/teams/startup-perf/"
            t = time.perf_counter()
            assert c.get(dash)[0] == 200
            result["team_dashboard_first_request_ms"] = round((time.perf_counter() - t) * 1000, 1)
            for _ in range(10):  # warm-up: every worker thread, the connection pool, the cache
                c.get(dash)
            result["team_dashboard_warm"] = timed(c, [dash] * args.reps)
            result["team_dashboard_cold"] = timed(c, [dash] * max(20, args.reps // 10), before=dashcache.bump)
            ids = list(Series.objects.values_list("id", flat=True))
            random.Random(1).shuffle(ids)
            series_paths = [f"/series/{i}/" for i in ids[:args.reps]]
            for p in series_paths[:10]:
                c.get(p)
            result["series_page"] = timed(c, series_paths)
            # Issue 13: the triage views. A filtered and a second page of the team dashboard (sparklines of
            # every alert shown come from one query), alert group pages (graphs around the culprit) and
            # size pages (treemap of the build's 40 size metrics against the previous build).
            filtered = f"{dash}?app={APPS[0]}&platform=android&status=all"
            for p in (filtered, dash + "?status=all&page=2"):
                c.get(p)
            result["team_dashboard_filtered"] = timed(c, [filtered] * max(20, args.reps // 2))
            result["team_dashboard_page2"] = timed(c, [dash + "?status=all&page=2"] * max(20, args.reps // 2))
            from alerts.models import AlertGroup
            from metrics.models import Build

            gids = list(AlertGroup.objects.order_by("pk").values_list("pk", flat=True))
            group_paths = [f"/alerts/{gids[i % len(gids)]}/" for i in range(max(20, args.reps // 2))]
            c.get(group_paths[0])
            result["alert_group_page"] = timed(c, group_paths)
            blds = list(Build.objects.select_related("app").order_by("?")[:max(20, args.reps // 2)])
            size_paths = [f"/builds/{b.app.name}/{b.platform}/{b.ext_id}/size/" for b in blds]
            c.get(size_paths[0])
            result["size_page"] = timed(c, size_paths)
            c.get("/overview/")
            result["overview_warm"] = timed(c, ["/overview/"] * max(20, args.reps // 4))
            keys = [f"team-families:{team_id}", f"health:team:{team_id}"]

            def drop() -> None:
                for k in keys:
                    rds.delete(*rds.keys(f"*dashcache:v:{k}"))

            # Control: the same 50 clients on a fresh entry (nothing to recompute): what the page itself costs.
            result["stampede_fresh_entry"] = stampede(base, cookie, dash, keys, 50, lambda: None)
            result["stampede_expired_entry"] = stampede(base, cookie, dash, keys, 50, dashcache.bump)
            result["stampede_missing_entry"] = stampede(base, cookie, dash, keys, 50, drop)
            result["stampede_overview_expired"] = stampede(base, cookie, "/overview/", ["overview", "health:all"], 50,
                                                           dashcache.bump)
        except Exception:
            print(db.gunicorn_log_tail(), file=sys.stderr)
            raise
    rds.flushdb()
    path = _pg.write_json("dashboards", result)
    print()
    for k in ("team_dashboard_warm", "team_dashboard_cold", "team_dashboard_filtered", "team_dashboard_page2",
              "alert_group_page", "size_page", "series_page", "overview_warm"):
        r = result[k]
        print(f"{k:24s} n={r['n']:4d}  p50 {r['p50_ms']:7.1f} ms  p95 {r['p95_ms']:7.1f} ms  max {r['max_ms']:7.1f} ms"
              f"  body {r['mean_body_kb']} KiB")
    for k in ("stampede_fresh_entry", "stampede_expired_entry", "stampede_missing_entry", "stampede_overview_expired"):
        r = result[k]
        print(f"{k:26s} {r['clients']} clients, {r['ok']} ok, recomputations {r['recomputations']},"
              f" p50 {r['p50_ms']} ms, max {r['max_ms']} ms")
    print(f"\nwritten to {path}")


if __name__ == "__main__":
    main()
