"""Load benchmark (issue 6): concurrent uploaders and dashboard readers against one server on 127.0.0.1.

Creates its own PostgreSQL database and runs `manage.py migrate`; in this process it loads and
analyses 200 builds x 155 series of `demo_data.generate("com.example.shop", "android")` on branch
main (so series, points and alerts exist), the seed_demo teams/owners, and a user demo/demo. Then:

- gunicorn `perfplatform.wsgi` (`--workers 4`, sync by default; `--worker-class gthread --threads T`
  to try threads) and one Celery worker (`--concurrency 1`) on Redis db 14 (flushed at the end);
- the server runs with PERF_UPLOAD_RATE_PER_MINUTE=0 (the per-token limit off): all uploaders share
  one upload token of the app, which also serves the readers' token-auth API calls;
- `--uploaders` (20) closed-loop clients, each on its own branch `load-NN`, POST native uploads of
  155 metrics (new build ids, no pause between uploads);
- `--readers` (50) closed-loop dashboard readers, each request chosen at random: `GET /api/v1/series`
  (branch main, or `metric=startup.*`), `/api/v1/series/{id}/points?limit=200`, `/api/v1/alerts`,
  `/api/v1/builds/{app}/{platform}/{build}` with the token, and, when they exist (checked first),
  the pages `/overview/` and `/teams/startup-perf/` with a logged-in session; `--reader-think`
  seconds (default 0.5) between a reader's requests;
- `--duration` seconds (default 120), then every client stops; `LLEN analysis` sampled each second.

Afterwards: every 201 upload must have stored exactly 155 measurement rows, no (build, series) pair
twice, no build stored that was not answered 201 (or that was, and is missing).

    .venv/bin/python bench/bench_load.py                 # about 3.5 minutes
    .venv/bin/python bench/bench_load.py --duration 20   # a short run

Prints the figures and writes bench/out/load-<time>.json (and load-latest.json). Target: 0 errors.
"""

from __future__ import annotations

import argparse
import http.client
import random
import re
import statistics
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _demo  # noqa: E402
import _pg  # noqa: E402

REDIS_URL = "redis://127.0.0.1:6379/14"
HISTORY = 200
POOL = 100  # distinct value sets the uploaders cycle through


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lat: dict[str, list[float]] = {}
        self.status: dict[str, dict[int, int]] = {}
        self.errors: dict[str, list[str]] = {}

    def add(self, kind: str, status: int, seconds: float, detail: str = "") -> None:
        with self.lock:
            self.lat.setdefault(kind, []).append(seconds)
            st = self.status.setdefault(kind, {})
            st[status] = st.get(status, 0) + 1
            if not 200 <= status < 300 and status != 304:
                errs = self.errors.setdefault(kind, [])
                if len(errs) < 10:
                    errs.append(f"{status}: {detail[:300]}")

    def summary(self, wall: float) -> dict:
        out = {}
        for kind in sorted(self.lat):
            lat = [x * 1000 for x in self.lat[kind]]
            st = self.status[kind]
            bad = sum(v for k, v in st.items() if not (200 <= k < 300 or k == 304))
            out[kind] = {
                "requests": len(lat), "per_s": round(len(lat) / wall, 2), "errors": bad,
                "statuses": {str(k): v for k, v in sorted(st.items())},
                "p50_ms": round(_pg.percentile(lat, 50), 1), "p95_ms": round(_pg.percentile(lat, 95), 1),
                "p99_ms": round(_pg.percentile(lat, 99), 1), "max_ms": round(max(lat), 1),
                "mean_ms": round(statistics.fmean(lat), 1), "error_samples": self.errors.get(kind, []),
            }
        return out


def request(conn: http.client.HTTPConnection, method: str, path: str, headers: dict, body: bytes | None = None):
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    return resp, data


def login(host: str, port: int) -> str | None:
    """Session cookie for demo/demo through the login form, or None if the login page is missing."""
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        resp, data = request(conn, "GET", "/accounts/login/", {})
        if resp.status != 200:
            return None
        csrf_cookie = re.search(r"csrftoken=([^;]+)", resp.getheader("Set-Cookie") or "")
        csrf_field = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', data)
        if not csrf_cookie or not csrf_field:
            return None
        form = f"username=demo&password=demo&csrfmiddlewaretoken={csrf_field.group(1).decode()}&next=/overview/"
        resp, _ = request(conn, "POST", "/accounts/login/", {
            "Cookie": f"csrftoken={csrf_cookie.group(1)}", "Content-Type": "application/x-www-form-urlencoded",
            "Referer": f"http://{host}:{port}/accounts/login/"}, form.encode())
        session = re.search(r"sessionid=([^;]+)", resp.getheader("Set-Cookie") or "")
        return session.group(1) if resp.status == 302 and session else None
    finally:
        conn.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=120.0, help="seconds of load (default 120)")
    ap.add_argument("--uploaders", type=int, default=20)
    ap.add_argument("--readers", type=int, default=50)
    ap.add_argument("--reader-think", type=float, default=0.5, help="seconds between a reader's requests")
    ap.add_argument("--workers", type=int, default=4, help="gunicorn workers (default 4)")
    ap.add_argument("--worker-class", default="sync", choices=["sync", "gthread"])
    ap.add_argument("--threads", type=int, default=1, help="threads per gthread worker")
    args = ap.parse_args()
    started = time.perf_counter()
    out: dict = {"benchmark": "load", "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": _pg.machine(),
                 "argv": sys.argv, "git": _pg.git_state(), "loadavg_start": _pg.loadavg(),
                 "config": vars(args)}
    redis_info = None
    try:
        with _pg.BenchDB(redis_url=REDIS_URL) as db:
            db.migrate()
            _pg.setup_django(db)
            from django.contrib.auth import get_user_model
            from django.db import connection

            from alerts.config_loader import apply_config
            from metrics.models import Series
            from perfplatform.management.commands.seed_demo import DEMO_CONFIG

            user = get_user_model().objects.create_user("demo", "demo@example.com", "demo")
            apply_config(DEMO_CONFIG)
            hist = _demo.History(HISTORY + POOL)
            out["history"] = hist.load_and_analyse(HISTORY)
            print(f"database {db.name}; history {out['history']}", flush=True)
            series_ids = list(Series.objects.filter(branch=_demo.BRANCH).values_list("id", flat=True))
            build_ids = [hist.ident(i)["id"] for i in range(HISTORY)]
            pool = [hist.metrics_json(HISTORY + k) for k in range(POOL)]
            n_metrics = len(hist.series)
            connection.close()
            del user

            token = db.token(hist.app)
            url = db.start_gunicorn(args.workers, args.worker_class, args.threads)
            db.start_celery("load", 1)
            host, port_s = url.removeprefix("http://").split(":")
            port = int(port_s)
            session = login(host, port)
            pages = []
            if session:
                for page in ("/overview/", "/teams/startup-perf/"):
                    c = http.client.HTTPConnection(host, port, timeout=60)
                    resp, _ = request(c, "GET", page, {"Cookie": f"sessionid={session}"})
                    c.close()
                    if resp.status == 200:
                        pages.append(page)
            out["pages"] = {"login": bool(session), "available": pages}
            print(f"server {url}; login {'ok' if session else 'unavailable'}; pages {pages}", flush=True)

            rec = Recorder()
            sent: dict[str, int] = {}  # build id -> status of its (only) upload
            sent_lock = threading.Lock()
            stop = threading.Event()
            api_h = {"Authorization": f"Bearer {token}"}
            up_h = {**api_h, "Content-Type": "application/json"}
            t_base = hist.t0

            def uploader(k: int) -> None:
                conn = http.client.HTTPConnection(host, port, timeout=60)
                n = 0
                branch = f"load-{k:02d}"
                while not stop.is_set():
                    bid = f"L{k:02d}-{n:06d}"
                    ts = (t_base + timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%SZ")
                    body = (f'{{"app":"{hist.app}","platform":"{hist.platform}","branch":"{branch}",'
                            f'"device":"{_demo.DEVICE}","build":{{"id":"{bid}","commit":"{k:02x}{n:010x}",'
                            f'"timestamp":"{ts}","version":"9.{n}"}},"metrics":{pool[(n + 7 * k) % POOL]}}}').encode()
                    t = time.perf_counter()
                    try:
                        resp, data = request(conn, "POST", "/api/v1/uploads", up_h, body)
                        status, detail = resp.status, data.decode(errors="replace")
                    except (OSError, http.client.HTTPException) as exc:
                        conn.close()
                        status, detail = 0, f"{type(exc).__name__}: {exc}"
                    rec.add("upload", status, time.perf_counter() - t, detail)
                    with sent_lock:
                        sent[bid] = status
                    n += 1
                conn.close()

            def reader(k: int) -> None:
                rng = random.Random(k)
                conn = http.client.HTTPConnection(host, port, timeout=60)
                kinds = ["series", "series_prefix", "points", "alerts", "build"] + [f"page{p}" for p in pages]
                while not stop.is_set():
                    kind = rng.choice(kinds)
                    headers = api_h
                    if kind == "series":
                        path = f"/api/v1/series?app={hist.app}&platform={hist.platform}&branch=main&limit=100"
                    elif kind == "series_prefix":
                        path = f"/api/v1/series?app={hist.app}&metric=startup.*"
                    elif kind == "points":
                        path = f"/api/v1/series/{rng.choice(series_ids)}/points?limit=200"
                    elif kind == "alerts":
                        path = f"/api/v1/alerts?app={hist.app}&limit=100"
                    elif kind == "build":
                        path = f"/api/v1/builds/{hist.app}/{hist.platform}/{rng.choice(build_ids)}"
                    else:
                        path = kind.removeprefix("page")
                        headers = {"Cookie": f"sessionid={session}"}
                    t = time.perf_counter()
                    try:
                        resp, data = request(conn, "GET", path, headers)
                        status, detail = resp.status, data[:300].decode(errors="replace")
                    except (OSError, http.client.HTTPException) as exc:
                        conn.close()
                        status, detail = 0, f"{type(exc).__name__}: {exc}"
                    rec.add(kind, status, time.perf_counter() - t, f"{path} {detail}")
                    if args.reader_think:
                        stop.wait(args.reader_think * rng.uniform(0.5, 1.5))
                conn.close()

            import redis

            r = redis.Redis.from_url(REDIS_URL, socket_timeout=5)
            qs: list[dict] = []

            def sampler() -> None:
                t0 = time.monotonic()
                while not stop.is_set():
                    qs.append({"t": round(time.monotonic() - t0, 1), "llen": r.llen("analysis"), "load": _pg.loadavg()})
                    stop.wait(1.0)

            threads = [threading.Thread(target=uploader, args=(k,), daemon=True) for k in range(args.uploaders)]
            threads += [threading.Thread(target=reader, args=(k,), daemon=True) for k in range(args.readers)]
            threads.append(threading.Thread(target=sampler, daemon=True))
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            time.sleep(args.duration)
            stop.set()
            for t in threads:
                t.join(timeout=90)
            wall = time.perf_counter() - t0
            out["wall_s_load"] = round(wall, 1)
            out["requests"] = rec.summary(wall)
            total = sum(v["requests"] for v in out["requests"].values())
            out["total_requests_per_s"] = round(total / wall, 1)
            out["gunicorn_log_tail"] = db.gunicorn_log_tail(15)
            db.stop_processes()
            out["analysis_queue"] = {"max": max(s["llen"] for s in qs), "final": qs[-1]["llen"]} if qs else None
            loads = [float(s["load"].split()[0]) for s in qs if s["load"] != "?"]
            out["loadavg_1min_during"] = ({"min": min(loads), "max": max(loads), "mean": round(statistics.fmean(loads), 2)}
                                          if loads else None)
            out["queue_samples"] = qs

            # Count check, straight from the database.
            import psycopg

            ok_ids = {b for b, s in sent.items() if s == 201}
            with psycopg.connect(db.url) as conn:
                stored_builds = dict(conn.execute(
                    "SELECT b.ext_id, count(m.id) FROM metrics_build b LEFT JOIN metrics_measurement m ON m.build_id = b.id"
                    " WHERE b.branch LIKE 'load-%' GROUP BY b.ext_id").fetchall())
                dup = conn.execute(
                    "SELECT count(*) FROM (SELECT build_id, series_id FROM metrics_measurement GROUP BY 1, 2"
                    " HAVING count(*) > 1) d").fetchone()[0]
                rows = conn.execute("SELECT count(*) FROM metrics_measurement m JOIN metrics_build b ON b.id = m.build_id"
                                    " WHERE b.branch LIKE 'load-%'").fetchone()[0]
                analysed = conn.execute("SELECT analysis, count(*) FROM metrics_build WHERE branch LIKE 'load-%'"
                                        " GROUP BY 1").fetchall()
            wrong = {b: c for b, c in stored_builds.items() if c != n_metrics}
            out["count_check"] = {
                "uploads_sent": len(sent), "uploads_201": len(ok_ids),
                "measurements_sent_in_201_uploads": len(ok_ids) * n_metrics,
                "measurement_rows_stored": rows, "builds_stored": len(stored_builds),
                "builds_201_missing": sorted(ok_ids - set(stored_builds))[:20],
                "builds_stored_without_201": sorted(set(stored_builds) - ok_ids)[:20],
                "builds_with_wrong_row_count": dict(list(wrong.items())[:20]),
                "duplicate_build_series_pairs": dup,
                "analysis_states_at_stop": dict(analysed),
            }
            c = out["count_check"]
            c["exact"] = (rows == c["measurements_sent_in_201_uploads"] and not c["builds_201_missing"]
                          and not c["builds_stored_without_201"] and not wrong and dup == 0)
    finally:
        redis_info = _demo.redis_flush(REDIS_URL)
    out["redis_flush"] = redis_info
    out["wall_s"] = round(time.perf_counter() - started, 1)
    errors = sum(v["errors"] for v in out["requests"].values())
    out["targets"] = {"zero_errors": errors == 0, "stored_exactly_once": out["count_check"]["exact"]}

    print(f"\n{args.uploaders} uploaders + {args.readers} readers (think {args.reader_think} s), "
          f"{args.workers} {args.worker_class} workers, {out['wall_s_load']} s; {out['total_requests_per_s']} req/s")
    print(f"{'kind':<24}{'requests':>9}{'per s':>8}{'errors':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for kind, s in out["requests"].items():
        print(f"{kind:<24}{s['requests']:>9}{s['per_s']:>8.1f}{s['errors']:>7}{s['p50_ms']:>9.1f}{s['p95_ms']:>9.1f}"
              f"{s['p99_ms']:>9.1f}{s['max_ms']:>9.1f}")
        for e in s["error_samples"][:3]:
            print(f"    {e}")
    print(f"count check: {out['count_check']}")
    print(f"analysis queue: {out['analysis_queue']}; loadavg during {out['loadavg_1min_during']}")
    print(f"redis db 14 flushed: {redis_info}")
    return _pg.finish("load", out, out["wall_s"])


if __name__ == "__main__":
    sys.exit(main())
