"""History-read benchmark (issue 2): the last 200 points of all 150 series of one app/platform/branch.

Creates its own PostgreSQL database, runs `manage.py migrate`, then bulk-loads 3 apps x 2 platforms
x 1,000 builds x 150 metrics (900 series, 6,000 builds, 900,000 measurements with 20 float64 samples
each) with Django bulk_create (apps, metrics, series, builds) and binary COPY (measurements), in
build order as CI would have uploaded them, then VACUUM ANALYZE. It then times
`metrics.history.recent_points(ids, limit=200)` with and without samples, checks with
CaptureQueriesContext that each call is one or two queries, and breaks the time into the SQL
(execute + fetch of the same statement) and the Python side. EXPLAIN (ANALYZE, BUFFERS) of the
statement is saved with the results.

    .venv/bin/python bench/bench_history.py                  # about 1-2 minutes
    .venv/bin/python bench/bench_history.py --reps 100

Prints a table and writes bench/out/history-<time>.json (and history-latest.json).
Target (issue 2): under 50 ms, one or two queries.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _pg  # noqa: E402

APPS = ["com.example.shop", "com.example.news", "com.example.maps"]
PLATFORMS = [("android", "pixel-6"), ("ios", "iphone-15")]
N_METRICS = 150
N_BUILDS = 1000
N_SAMPLES = 20
LIMIT = 200
START = datetime(2026, 6, 1, tzinfo=UTC)


def load(db: _pg.BenchDB) -> dict:
    import numpy as np
    import psycopg
    from django.db import connection

    from metrics.models import App, Build, Metric, Series, pack_samples

    t0 = time.perf_counter()
    rng = np.random.default_rng(11)
    apps = App.objects.bulk_create([App(name=n) for n in APPS])
    names = [f"scenario{j // 6:02d}.{fam}" for j, fam in
             ((j, ("frame.p50", "frame.p90", "frame.p99", "cpu.main", "memory.pss", "memory.heap")[j % 6])
              for j in range(N_METRICS))]
    metrics = Metric.objects.bulk_create(
        [Metric(app=a, name=n, kind="memory" if "memory" in n else "time", unit="bytes" if "memory" in n else "ms")
         for a in apps for n in names]
    )
    metric_of = {(m.app_id, m.name): m for m in metrics}
    series, builds = {}, {}
    for a in apps:
        for plat, device in PLATFORMS:
            rows = Series.objects.bulk_create([
                Series(signature=Series.signature_of(a.name, plat, "main", device, n), app=a, platform=plat,
                       branch="main", device=device, metric=metric_of[(a.id, n)],
                       last_build_time=START + timedelta(minutes=30 * (N_BUILDS - 1)))
                for n in names
            ])
            series[(a.id, plat)] = [s.id for s in rows]
            blist = Build.objects.bulk_create([
                Build(app=a, platform=plat, branch="main", ext_id=f"{i:06d}", commit=f"{i:012x}",
                      timestamp=START + timedelta(minutes=30 * i), analysis=Build.Analysis.DONE)
                for i in range(N_BUILDS)
            ], batch_size=1000)
            builds[(a.id, plat)] = [(b.id, b.timestamp) for b in blist]
    t_meta = time.perf_counter() - t0

    base = rng.uniform(5, 1000, size=N_METRICS)
    check = pack_samples([1.5, 2.5])
    assert np.array([1.5, 2.5], dtype="<f8").tobytes() == check  # same bytes as pack_samples
    connection.close()
    t1 = time.perf_counter()
    rows_written = 0
    with psycopg.connect(db.url) as conn, conn.cursor() as cur:
        with cur.copy("COPY metrics_measurement (series_id, build_id, build_time, value, samples, n_samples, count, total)"
                      " FROM STDIN (FORMAT BINARY)") as cp:
            cp.set_types(["int8", "int8", "timestamptz", "float8", "bytea", "int4", "int8", "int8"])
            # Build by build, interleaving the six app/platform branches, as uploads would arrive.
            for i in range(N_BUILDS):
                for key, sids in series.items():
                    bid, ts = builds[key][i]
                    samples = (base[:, None] * (1 + 0.04 * rng.standard_normal((N_METRICS, N_SAMPLES)))).astype("<f8")
                    medians = np.median(samples, axis=1)
                    for j, sid in enumerate(sids):
                        cp.write_row((sid, bid, ts, float(medians[j]), samples[j].tobytes(), N_SAMPLES, None, None))
                    rows_written += N_METRICS
        conn.commit()
    t_copy = time.perf_counter() - t1
    t2 = time.perf_counter()
    with psycopg.connect(db.url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        size = conn.execute("SELECT pg_size_pretty(pg_database_size(current_database())),"
                            " pg_size_pretty(pg_total_relation_size('metrics_measurement'))").fetchone()
        shared_buffers = conn.execute("SHOW shared_buffers").fetchone()[0]
    return {
        "series": sum(len(v) for v in series.values()), "builds": sum(len(v) for v in builds.values()),
        "measurements": rows_written, "metadata_s": round(t_meta, 1), "copy_s": round(t_copy, 1),
        "copy_rows_per_s": round(rows_written / t_copy), "vacuum_analyze_s": round(time.perf_counter() - t2, 1),
        "database_size": size[0], "measurement_table_size": size[1], "shared_buffers": shared_buffers,
    }


def stats(ms: list[float]) -> dict:
    return {"n": len(ms), "p50": round(_pg.percentile(ms, 50), 2), "p95": round(_pg.percentile(ms, 95), 2),
            "mean": round(statistics.fmean(ms), 2), "min": round(min(ms), 2), "max": round(max(ms), 2)}


def psql_timing(db_url: str, sqls: list[str], runs: int) -> dict:
    """`psql -c '\\timing on'` of the statements, output discarded: median of `runs` per statement."""
    import subprocess

    out = {}
    for n, q in enumerate(sqls):
        times = []
        for _ in range(runs):
            res = subprocess.run(["psql", "-X", "-q", db_url, "-o", "/dev/null", "-c", "\\timing on", "-c", q],
                                 capture_output=True, text=True, timeout=60)
            for line in res.stdout.splitlines():
                if line.startswith("Time:"):
                    times.append(float(line.split()[1]))
        out["measurements" if n == 0 else f"builds_{n}"] = round(statistics.median(times), 1) if times else None
    return out


def measure(reps: int, db_url: str) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from metrics.history import recent_points
    from metrics.models import App, Series

    groups = []
    for a in App.objects.order_by("id"):
        for plat, _ in PLATFORMS:
            ids = list(Series.objects.filter(app=a, platform=plat, branch="main").order_by("id")
                       .values_list("id", flat=True))
            assert len(ids) == N_METRICS
            groups.append((f"{a.name}/{plat}/main", ids))

    from metrics.history import recent_values

    readers = {
        "with_samples": lambda g: recent_points(g, limit=LIMIT, with_samples=True),
        "without_samples": lambda g: recent_points(g, limit=LIMIT, with_samples=False),
        # The columnar read for values-only consumers (team health, heat grids): numpy arrays per series.
        "columns": lambda g: recent_values(g, limit=LIMIT),
    }
    out: dict = {}
    for label, read in readers.items():
        name, ids = groups[0]
        # Cold-ish first call (right after the load; OS cache warm, this backend's caches not).
        connection.close()
        t = time.perf_counter()
        first = read(ids)
        first_ms = (time.perf_counter() - t) * 1000
        with CaptureQueriesContext(connection) as ctx:
            pts = read(ids)
        n_queries = len(ctx.captured_queries)
        sqls = [q["sql"] for q in ctx.captured_queries]  # as executed (parameters inlined)
        sql = sqls[0]  # the measurement read; sqls[1:] the builds
        lengths = [len(v.values) if label == "columns" else len(v) for v in pts.values()]
        n_points = sum(lengths)
        assert len(pts) == N_METRICS and all(n == LIMIT for n in lengths), "wrong shape"
        assert first.keys() == pts.keys()
        if label != "columns":
            p0 = pts[ids[0]]
            assert p0[0].build_time < p0[-1].build_time, "not oldest first"
            if label == "with_samples":
                assert len(p0[-1].samples) == N_SAMPLES

        same = []
        for _ in range(reps):
            t = time.perf_counter()
            read(ids)
            same.append((time.perf_counter() - t) * 1000)
        rotating = []
        for r in range(reps):
            _, gids = groups[r % len(groups)]
            t = time.perf_counter()
            read(gids)
            rotating.append((time.perf_counter() - t) * 1000)
        # The same statements without the Python side (HistoryPoint building, unpacking samples): executed
        # and fetched through Django's cursor, then with psql (server + libpq + psql's text output).
        sql_only = []
        with connection.cursor() as cur:
            for _ in range(reps):
                t = time.perf_counter()
                for q in sqls:
                    cur.execute(q)
                    cur.fetchall()
                sql_only.append((time.perf_counter() - t) * 1000)
            cur.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
            plan = "\n".join(r[0] for r in cur.fetchall())
        server_ms = float(plan.rsplit("Execution Time:", 1)[1].split()[0]) if "Execution Time:" in plan else None
        psql_ms = psql_timing(db_url, sqls, runs=7)
        out[label] = {
            "group": name, "queries": n_queries, "points": n_points, "first_call_ms": round(first_ms, 2),
            "same_group": stats(same), "rotating_6_groups": stats(rotating), "sql_execute_fetch": stats(sql_only),
            "server_execution_ms_explain": server_ms, "psql_timing_ms": psql_ms,
            "python_side_ms_p50": round(stats(same)["p50"] - stats(sql_only)["p50"], 2),
            "sql": sqls, "explain_analyze": plan,
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=60, help="timed calls per variant (default 60)")
    ap.add_argument("--keep", action="store_true", help="print the database URL and wait for Enter before dropping it")
    args = ap.parse_args()
    started = time.perf_counter()
    with _pg.BenchDB() as db:
        db.migrate()
        _pg.setup_django(db)
        print(f"loading {len(APPS)} apps x {len(PLATFORMS)} platforms x {N_BUILDS} builds x {N_METRICS} metrics "
              f"into {db.name} ...", flush=True)
        loaded = load(db)
        print(f"loaded {loaded['measurements']} measurements ({loaded['measurement_table_size']}) "
              f"in {loaded['metadata_s'] + loaded['copy_s'] + loaded['vacuum_analyze_s']:.1f} s", flush=True)
        load_before = _pg.loadavg()
        res = measure(args.reps, db.url)
        load_after = _pg.loadavg()
        from django.db import connection

        connection.close()
        if args.keep:
            input(f"database {db.url} kept; press Enter to drop it ")

    print()
    print(f"recent_points(150 series, limit={LIMIT}) -> {res['with_samples']['points']} points; "
          f"{args.reps} calls a row")
    print(f"{'variant':<17}{'queries':>8}{'first ms':>10}{'p50 ms':>9}{'p95 ms':>9}{'rot p50':>9}{'rot p95':>9}"
          f"{'SQL p50':>9}{'SQL p95':>9}")
    for label, r in res.items():
        print(f"{label:<17}{r['queries']:>8}{r['first_call_ms']:>10.1f}{r['same_group']['p50']:>9.1f}"
              f"{r['same_group']['p95']:>9.1f}{r['rotating_6_groups']['p50']:>9.1f}{r['rotating_6_groups']['p95']:>9.1f}"
              f"{r['sql_execute_fetch']['p50']:>9.1f}{r['sql_execute_fetch']['p95']:>9.1f}")
    for label, r in res.items():
        print(f"{label}: server execution (EXPLAIN ANALYZE) {r['server_execution_ms_explain']} ms; psql \\timing "
              f"{r['psql_timing_ms']}; Django cursor execute+fetch p50 {r['sql_execute_fetch']['p50']} ms; "
              f"Python side (HistoryPoints, samples) ~{r['python_side_ms_p50']} ms")
    print(f"loadavg before {load_before}; after {load_after}")
    targets = {
        label: {"one_or_two_queries": r["queries"] in (1, 2),
                "p95_lt_50ms": r["same_group"]["p95"] < 50 and r["rotating_6_groups"]["p95"] < 50}
        for label, r in res.items()
    }
    for label, t in targets.items():
        print(f"targets {label}: " + ", ".join(f"{k}={'met' if v else 'MISSED'}" for k, v in t.items()))
    out = {"benchmark": "history", "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": _pg.machine(),
           "argv": sys.argv, "load": loaded, "loadavg_before": load_before, "loadavg_after": load_after, "results": res, "targets": targets,
           "wall_s": round(time.perf_counter() - started, 1)}
    path = _pg.write_json("history", out)
    print(f"wrote {path.relative_to(_pg.ROOT)} (wall {out['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
