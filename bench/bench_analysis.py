"""Analysis benchmark (issue 4): per-build analysis cost in-process, then analysis throughput behind the API.

Creates its own PostgreSQL database and runs `manage.py migrate`, then, in this process:
  1. Loads builds 0..149 (`--history`, default 150) of `demo_data.generate("com.example.shop", "android")`
     (159 series: time and memory with 5-15 samples, size, count, rate as count/total, score; planted
     shifts), analyses that history as `seed_demo` does (`alerts.backfill.analyse_history`) and runs
     ANALYZE (the planner statistics a long-lived database's autovacuum keeps).
  2. For the next 50 builds (150..199), one at a time: writes the build and its measurements (untimed), then times
     `alerts.analysis.analyse_build(pk)` (one transaction: locks, `recent_points(limit=window+32)`,
     detector, alert writes, on-commit hooks). `recent_points` is wrapped to time its share; the 5
     builds after them, analysed the same way under cProfile, list the top functions.
Then the throughput test on the same database (205 builds of history already analysed):
  3. gunicorn (4 sync workers) + Celery workers on Redis db 14 (`--workers 2 --concurrency 1`: two
     worker processes, default; `--workers 1 --concurrency 2` for one), paced native uploads of the
     next builds (159 metrics) at `--rate` per second for `--duration` seconds, `LLEN analysis` and
     /proc/loadavg sampled every second; after the last upload it waits up to `--drain` seconds for
     the queue to empty. Lags come from the database: Build.analysis_finished - Build.created, and for
     the planted shifts inside the uploaded range Alert.created - Build.created of the shifted build.
Everything is stopped, Redis db 14 is flushed and the database dropped at the end.

    .venv/bin/python bench/bench_analysis.py                      # about 4-5 minutes
    .venv/bin/python bench/bench_analysis.py --duration 20 --drain 30   # a short run while developing
    .venv/bin/python bench/bench_analysis.py --history 1500 --skip-throughput   # a long history, in-process only

Prints the figures and writes bench/out/analysis-<time>.json (and analysis-latest.json).
Target (issue 4): analyse_build p50 < 250 ms.
"""

from __future__ import annotations

import argparse
import cProfile
import http.client
import io
import pstats
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _demo  # noqa: E402
import _pg  # noqa: E402

REDIS_URL = "redis://127.0.0.1:6379/14"
HISTORY = 150  # builds written and analysed before the timed ones (--history)
TIMED = 50
PROFILED = 5


def stats(ms: list[float]) -> dict:
    if not ms:
        return {"n": 0}
    return {"n": len(ms), "p50": round(_pg.percentile(ms, 50), 1), "p95": round(_pg.percentile(ms, 95), 1),
            "mean": round(statistics.fmean(ms), 1), "min": round(min(ms), 1), "max": round(max(ms), 1)}


# --- 1 + 2: in-process ----------------------------------------------------------------------------------
def in_process(hist: _demo.History, history: int) -> dict:
    from django.db import connection

    from alerts import analysis
    from alerts.models import Alert
    from metrics.models import Build

    loaded = hist.load_and_analyse(history)
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    print(f"history: {loaded}", flush=True)

    rp_ms: list[float] = []
    real_rp = analysis.recent_points

    def timed_rp(*a, **kw):
        t = time.perf_counter()
        try:
            return real_rp(*a, **kw)
        finally:
            rp_ms.append((time.perf_counter() - t) * 1000)

    analysis.recent_points = timed_rp
    totals, rps, queries, pks = [], [], [], []
    load_before = _pg.loadavg()
    try:
        for i in range(history, history + TIMED):
            (pk,) = hist.insert_builds(range(i, i + 1))
            pks.append(pk)
            rp_ms.clear()
            n_q = [0]

            def count(execute, sql, params, many, context, n_q=n_q):
                n_q[0] += 1
                return execute(sql, params, many, context)

            with connection.execute_wrapper(count):
                t = time.perf_counter()
                state = analysis.analyse_build(pk)
                totals.append((time.perf_counter() - t) * 1000)
            queries.append(n_q[0])
            rps.append(sum(rp_ms))
            assert state == Build.Analysis.DONE, state
    finally:
        analysis.recent_points = real_rp
    load_after = _pg.loadavg()
    # Without the query counter: the last 20 builds analysed again (a re-analysis, nothing new to raise).
    plain = []
    for pk in pks[-20:]:
        t = time.perf_counter()
        analysis.analyse_build(pk)
        plain.append((time.perf_counter() - t) * 1000)

    # Profiled: PROFILED more new builds, analysed as the timed ones were (a re-analysis replays every later build).
    new = [hist.insert_builds(range(i, i + 1))[0] for i in range(history + TIMED, history + TIMED + PROFILED)]
    prof = cProfile.Profile()
    prof.enable()
    for pk in new:
        analysis.analyse_build(pk)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(25)
    top = [ln for ln in buf.getvalue().splitlines() if ln.strip()][:45]
    rest = [t - r for t, r in zip(totals, rps, strict=True)]
    return {
        "history": loaded,
        "series_per_build": len(hist.series),
        "analyse_build_ms": stats(totals),
        "reanalyse_last_20_ms": stats(plain),
        "recent_points_ms": stats(rps),
        "rest_ms": stats(rest),
        "queries_per_build": stats([float(q) for q in queries]),
        "alerts_after": Alert.objects.count(),
        "loadavg_before": load_before, "loadavg_after": load_after,
        "cprofile_top_cumulative_5_new_builds": top,
    }


# --- 3: throughput ------------------------------------------------------------------------------------------
def throughput(db: _pg.BenchDB, hist: _demo.History, args) -> dict:
    import redis

    from alerts.models import Alert
    from metrics.models import Build, Series

    n_up = int(args.duration * args.rate)
    first = args.history + TIMED + PROFILED
    bodies = [hist.body(i) for i in range(first, first + n_up)]
    token = db.token(hist.app)
    url = db.start_gunicorn(4)
    for k in range(args.workers):
        db.start_celery(f"bench{k}", args.concurrency)
    host, port = url.removeprefix("http://").split(":")
    r = redis.Redis.from_url(REDIS_URL, socket_timeout=5)
    samples: list[dict] = []
    stop = threading.Event()

    def sampler() -> None:
        t0 = time.monotonic()
        while not stop.is_set():
            samples.append({"t": round(time.monotonic() - t0, 1), "llen": r.llen("analysis"), "load": _pg.loadavg()})
            stop.wait(1.0)

    sent: list[tuple[int, float, int, float]] = []  # (index, send wall time, status, latency)
    lock = threading.Lock()
    next_i = iter(range(n_up))
    start = time.monotonic() + 0.5
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def uploader() -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        while True:
            with lock:
                k = next(next_i, None)
            if k is None:
                break
            due = start + k / args.rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            t = time.perf_counter()
            try:
                conn.request("POST", "/api/v1/uploads", body=bodies[k], headers=headers)
                resp = conn.getresponse()
                resp.read()
                status = resp.status
            except (OSError, http.client.HTTPException):
                conn.close()
                status = 0
            with lock:
                sent.append((k, time.time(), status, time.perf_counter() - t))
        conn.close()

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    t_begin = time.monotonic()
    ups = [threading.Thread(target=uploader, daemon=True) for _ in range(8)]
    for u in ups:
        u.start()
    for u in ups:
        u.join()
    upload_wall = time.monotonic() - t_begin
    # Drain: until no build is pending (or the cap).
    app_builds = Build.objects.filter(app__name=hist.app, ext_id__in=[hist.ident(i)["id"] for i in range(first, first + n_up)])
    drain_deadline = time.monotonic() + args.drain
    while time.monotonic() < drain_deadline and app_builds.exclude(analysis=Build.Analysis.DONE).exists():
        time.sleep(1.0)
    drained_after = time.monotonic() - t_begin - upload_wall
    stop.set()
    th.join()
    logs = {f"celery-bench{k}.log": db.log_tail(f"celery-bench{k}.log", 15) for k in range(args.workers)}
    db.stop_processes()
    left = r.llen("analysis")

    statuses: dict[int, int] = {}
    for _, _, s, _ in sent:
        statuses[s] = statuses.get(s, 0) + 1
    rows = list(app_builds.values("ext_id", "created", "analysis", "analysis_finished", "pk"))
    done = [b for b in rows if b["analysis"] == Build.Analysis.DONE and b["analysis_finished"]]
    lag = [(b["analysis_finished"] - b["created"]).total_seconds() * 1000 for b in done]
    # Lag over time: first, middle and last thirds of the uploads.
    by_id = {b["ext_id"]: b for b in done}
    thirds = {}
    for name, rng in (("first_third", range(0, n_up // 3)), ("middle_third", range(n_up // 3, 2 * n_up // 3)),
                      ("last_third", range(2 * n_up // 3, n_up))):
        vals = [(by_id[e]["analysis_finished"] - by_id[e]["created"]).total_seconds() * 1000
                for e in (hist.ident(first + k)["id"] for k in rng) if e in by_id]
        thirds[name] = stats(vals)
    # Planted shifts inside the uploaded range: the first alert at (or within 3 builds of) the shift.
    planted = []
    for p in hist.planted:
        if not first <= p.index < first + n_up:
            continue
        s = Series.objects.get(app__name=hist.app, platform=hist.platform, branch=_demo.BRANCH, metric__name=p.metric)
        shifted = Build.objects.get(app__name=hist.app, platform=hist.platform, ext_id=hist.ident(p.index)["id"])
        near = [hist.ident(j)["id"] for j in range(p.index - 3, p.index + 4)]
        a = (Alert.objects.filter(series=s, build__ext_id__in=near).select_related("build", "detected_build")
             .order_by("created").first())
        item = {"metric": p.metric, "index": p.index, "direction": p.direction, "rel_change": p.rel_change,
                "uploaded_at_s": round((p.index - first) / args.rate, 1)}
        if a is None:
            item["alert"] = None
        else:
            item.update(
                alert_build=a.build.ext_id, detected_build=a.detected_build.ext_id if a.detected_build else None,
                builds_to_detect=(int(a.detected_build.ext_id[1:]) - p.index) if a.detected_build else None,
                lag_from_shift_upload_ms=round((a.created - shifted.created).total_seconds() * 1000),
                lag_from_detecting_upload_ms=round((a.created - a.detected_build.created).total_seconds() * 1000)
                if a.detected_build else None,
                detection=a.detection,
            )
        planted.append(item)
    llens = [s["llen"] for s in samples]
    loads = [float(s["load"].split()[0]) for s in samples if s["load"] != "?"]
    return {
        "workers": args.workers, "concurrency_per_worker": args.concurrency, "gunicorn": "sync, 4 workers",
        "rate_target": args.rate, "duration_s": args.duration, "uploads_planned": n_up,
        "upload_wall_s": round(upload_wall, 1), "achieved_rate": round(len(sent) / upload_wall, 2),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "upload_latency_ms": stats([x[3] * 1000 for x in sent]),
        "drained_after_last_upload_s": round(drained_after, 1),
        "builds_done": len(done), "builds_not_done": len(rows) - len(done),
        "queue_len_max": max(llens) if llens else None, "queue_len_final_sample": llens[-1] if llens else None,
        "queue_len_after_stop": left,
        "lag_upload_to_analysis_done_ms": stats(lag), "lag_by_thirds_ms": thirds,
        "planted_in_uploads": planted,
        "loadavg_1min_during": {"min": min(loads), "max": max(loads), "mean": round(statistics.fmean(loads), 2)}
        if loads else None,
        "queue_samples": samples,
        "celery_log_tails": logs,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=120.0, help="seconds of paced uploads (default 120)")
    ap.add_argument("--rate", type=float, default=10.0, help="uploads per second (default 10)")
    ap.add_argument("--drain", type=float, default=60.0, help="max seconds to wait for the queue after the uploads")
    ap.add_argument("--workers", type=int, default=2, help="Celery worker processes (default 2)")
    ap.add_argument("--concurrency", type=int, default=1, help="--concurrency of each worker (default 1)")
    ap.add_argument("--source", type=Path, default=None,
                    help="project tree to run (default: this checkout), e.g. a copy with a patch applied")
    ap.add_argument("--skip-throughput", action="store_true", help="only the in-process timing")
    ap.add_argument("--history", type=int, default=HISTORY,
                    help=f"builds of history before the timed ones (default {HISTORY}; e.g. 1500 for a long history)")
    args = ap.parse_args()
    started = time.perf_counter()
    n_up = int(args.duration * args.rate)
    out: dict = {"benchmark": "analysis", "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": _pg.machine(),
                 "argv": sys.argv, "git": _pg.git_state(), "source": str(args.source or _pg.ROOT), "loadavg_start": _pg.loadavg()}
    redis_info = None
    try:
        with _pg.BenchDB(redis_url=REDIS_URL, source=args.source) as db:
            db.migrate()
            _pg.setup_django(db)
            hist = _demo.History(args.history + TIMED + PROFILED + n_up)
            print(f"database {db.name}; {len(hist.series)} series; history {args.history} builds, {TIMED} timed, "
                  f"{n_up} to upload", flush=True)
            out["in_process"] = ip = in_process(hist, args.history)
            a = ip["analyse_build_ms"]
            print(f"analyse_build over {a['n']} builds: p50 {a['p50']} ms, p95 {a['p95']} ms (recent_points p50 "
                  f"{ip['recent_points_ms']['p50']} ms, queries p50 {ip['queries_per_build']['p50']}); load "
                  f"{ip['loadavg_before']} -> {ip['loadavg_after']}", flush=True)
            if not args.skip_throughput:
                from django.db import connection

                print(f"throughput: {args.rate}/s for {args.duration} s, {args.workers} Celery worker(s) x "
                      f"concurrency {args.concurrency} ...", flush=True)
                out["throughput"] = throughput(db, hist, args)
                connection.close()
            else:
                from django.db import connection

                connection.close()
    finally:
        redis_info = _demo.redis_flush(REDIS_URL)
    out["redis_flush"] = redis_info
    out["wall_s"] = round(time.perf_counter() - started, 1)
    out["targets"] = {"analyse_build_p50_lt_250ms": out["in_process"]["analyse_build_ms"]["p50"] < 250}
    if "throughput" in out:
        t = out["throughput"]
        print(f"uploads: {t['statuses']} in {t['upload_wall_s']} s ({t['achieved_rate']}/s), latency "
              f"{t['upload_latency_ms']}")
        print(f"queue (LLEN analysis): max {t['queue_len_max']}, last sample {t['queue_len_final_sample']}, "
              f"after stop {t['queue_len_after_stop']}; drained {t['drained_after_last_upload_s']} s after the "
              f"last upload; builds done {t['builds_done']}, not done {t['builds_not_done']}")
        print(f"upload -> analysis done: {t['lag_upload_to_analysis_done_ms']}")
        print(f"  by thirds: {t['lag_by_thirds_ms']}")
        for p in t["planted_in_uploads"]:
            print(f"planted {p}")
        print(f"loadavg during: {t['loadavg_1min_during']}")
    print(f"redis db 14 flushed: {redis_info}")
    return _pg.finish("analysis", out, out["wall_s"])


if __name__ == "__main__":
    sys.exit(main())
