"""Ingest benchmark (issue 2): `POST /api/v1/uploads` through gunicorn on PostgreSQL, beside COPY.

For each server configuration (gunicorn worker class and count, with or without Redis) it creates
its own database, runs `manage.py migrate` and `manage.py create_upload_token`, starts gunicorn as
README says (`gunicorn perfplatform.wsgi`, environment only), and uploads native-JSON builds of 150
metrics x 20 samples with 1 and then 8 concurrent keep-alive clients. In the same database it times
COPY of the same rows (150 measurement rows a build, samples packed as float64 like
metrics.models.pack_samples) into a table shaped like metrics_measurement, one transaction a build.

    .venv/bin/python bench/bench_ingest.py                 # the default matrix, about 3 minutes
    .venv/bin/python bench/bench_ingest.py --config sync:4 --uploads 300

Prints a table and writes bench/out/ingest-<time>.json (and ingest-latest.json).
Targets (issue 2): API uploads/s at 8 clients >= 25% of COPY builds/s, p95 < 150 ms at 8 clients.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import sys
import threading
import time
from array import array
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _pg  # noqa: E402

APP = "com.example.bench"
METRICS_PER_BUILD = 150
SAMPLES_PER_METRIC = 20
START = datetime(2026, 6, 1, tzinfo=UTC)
REDIS_URL = "redis://127.0.0.1:6379/14"

# (family, kind, unit, typical value, relative run-to-run noise); 6 families x 25 scenarios = 150.
FAMILIES = [
    ("frame.p50", "time", "ms", 8.4, 0.04),
    ("frame.p90", "time", "ms", 14.5, 0.06),
    ("frame.p99", "time", "ms", 31.0, 0.12),
    ("cpu.main_thread", "time", "ms", 850.0, 0.05),
    ("memory.pss", "memory", "bytes", 182_000_000, 0.02),
    ("memory.java_heap", "memory", "bytes", 46_000_000, 0.03),
]
SCENARIOS = [
    "startup.cold", "startup.warm", "startup.hot", "home.scroll", "home.fling", "search.type", "search.results",
    "product.open", "product.gallery", "cart.open", "cart.update", "checkout.open", "checkout.pay", "profile.open",
    "settings.open", "feed.scroll", "feed.video", "map.pan", "map.zoom", "chat.open", "chat.send", "orders.list",
    "orders.detail", "login.flow", "onboarding.flow",
]


def metric_catalog() -> list[tuple[str, str, str, float, float]]:
    rng = random.Random(7)
    out = []
    for scenario in SCENARIOS:
        for family, kind, unit, base, noise in FAMILIES:
            out.append((f"{scenario}.{family}", kind, unit, base * rng.uniform(0.6, 1.6), noise))
    assert len(out) == METRICS_PER_BUILD
    return out


def make_build(i: int, catalog, rng: random.Random) -> dict:
    """Build i: native body with every metric carrying 20 realistic samples."""
    metrics = []
    for name, kind, unit, base, noise in catalog:
        if unit == "bytes":
            samples = [float(int(rng.gauss(base, base * noise))) for _ in range(SAMPLES_PER_METRIC)]
        else:
            samples = [round(abs(rng.gauss(base, base * noise)), 2) for _ in range(SAMPLES_PER_METRIC)]
        metrics.append({"name": name, "kind": kind, "unit": unit, "samples": samples})
    ts = START + timedelta(minutes=30 * i)
    return {
        "app": APP, "platform": "android", "branch": "main", "device": "pixel-6",
        "build": {"id": f"b{i:06d}", "commit": f"{i:07x}{rng.getrandbits(40):010x}"[:12],
                  "timestamp": ts.strftime("%Y-%m-%dT%H:%M:%SZ"), "version": f"7.{i // 100}.{i % 100}"},
        "metrics": metrics,
    }


def pack(samples: list[float]) -> bytes:
    """Same bytes as metrics.models.pack_samples on a little-endian host (checked in main)."""
    return array("d", samples).tobytes()


# --- HTTP clients ------------------------------------------------------------------------------------------
@dataclass
class Phase:
    clients: int
    latencies: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    wall: float = 0.0

    def summary(self) -> dict:
        ok = self.statuses.get(201, 0)
        lat = sorted(self.latencies)
        return {
            "clients": self.clients,
            "uploads_ok": ok,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "errors": self.errors[:5],
            "wall_s": round(self.wall, 3),
            "uploads_per_s": round(ok / self.wall, 2) if self.wall else 0.0,
            "measurements_per_s": round(ok * METRICS_PER_BUILD / self.wall, 0) if self.wall else 0.0,
            "latency_ms": {
                "mean": round(statistics.fmean(lat) * 1000, 1) if lat else None,
                "p50": round(_pg.percentile(lat, 50) * 1000, 1) if lat else None,
                "p95": round(_pg.percentile(lat, 95) * 1000, 1) if lat else None,
                "p99": round(_pg.percentile(lat, 99) * 1000, 1) if lat else None,
                "max": round(lat[-1] * 1000, 1) if lat else None,
            },
        }


def run_clients(url: str, token: str, bodies: list[bytes], clients: int, max_seconds: float) -> Phase:
    host, port = url.removeprefix("http://").split(":")
    phase = Phase(clients)
    lock = threading.Lock()
    indices = iter(range(len(bodies)))
    deadline = time.monotonic() + max_seconds
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def client() -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        try:
            while time.monotonic() < deadline:
                with lock:
                    i = next(indices, None)
                if i is None:
                    return
                t0 = time.perf_counter()
                try:
                    conn.request("POST", "/api/v1/uploads", body=bodies[i], headers=headers)
                    resp = conn.getresponse()
                    payload = resp.read()
                    status = resp.status
                except (OSError, http.client.HTTPException) as exc:
                    conn.close()  # reconnect on the next request
                    with lock:
                        phase.errors.append(f"{type(exc).__name__}: {exc}")
                        phase.statuses[0] = phase.statuses.get(0, 0) + 1
                    continue
                elapsed = time.perf_counter() - t0
                with lock:
                    phase.latencies.append(elapsed)
                    phase.statuses[status] = phase.statuses.get(status, 0) + 1
                    if status != 201 and len(phase.errors) < 20:
                        phase.errors.append(f"{status}: {payload[:300]!r}")
        finally:
            conn.close()

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    phase.wall = time.perf_counter() - t0
    return phase


# --- COPY reference -------------------------------------------------------------------------------------
COPY_COLUMNS = "series_id, build_id, build_time, value, samples, n_samples, count, total"
COPY_TYPES = ["int8", "int8", "timestamptz", "float8", "bytea", "int4", "int8", "int8"]


def copy_rows(build: dict, build_pk: int, series_ids: dict[str, int]) -> list[tuple]:
    ts = datetime.strptime(build["build"]["timestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return [
        (series_ids[m["name"]], build_pk, ts, float(statistics.median(m["samples"])), pack(m["samples"]),
         len(m["samples"]), None, None)
        for m in build["metrics"]
    ]


def run_copy(db_url: str, builds: list[dict], first_pk: int) -> dict:
    """Per-build transactions (COPY 150 rows + COMMIT, as the API commits each upload) and one bulk COPY."""
    import psycopg

    half = len(builds) // 2
    with psycopg.connect(db_url) as conn:
        with conn.cursor() as cur:
            # Same columns, defaults, identity, NOT NULL/CHECK constraints and indexes as the real table
            # (unique (build, series) and (series, build_time)); no foreign keys.
            cur.execute("CREATE TABLE bench_copy (LIKE metrics_measurement INCLUDING ALL)")
            cur.execute("SELECT s.id, m.name FROM metrics_series s JOIN metrics_metric m ON m.id = s.metric_id")
            series_ids = {name: sid for sid, name in cur.fetchall()}
        conn.commit()
        rows = [copy_rows(b, first_pk + i, series_ids) for i, b in enumerate(builds)]  # prepared untimed

        t0 = time.perf_counter()
        for build_rows in rows[:half]:
            with conn.cursor() as cur:
                with cur.copy(f"COPY bench_copy ({COPY_COLUMNS}) FROM STDIN (FORMAT BINARY)") as cp:
                    cp.set_types(COPY_TYPES)
                    for r in build_rows:
                        cp.write_row(r)
            conn.commit()
        per_build = time.perf_counter() - t0

        t0 = time.perf_counter()
        with conn.cursor() as cur:
            with cur.copy(f"COPY bench_copy ({COPY_COLUMNS}) FROM STDIN (FORMAT BINARY)") as cp:
                cp.set_types(COPY_TYPES)
                for build_rows in rows[half:]:
                    for r in build_rows:
                        cp.write_row(r)
        conn.commit()
        bulk = time.perf_counter() - t0
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM bench_copy")
            stored = cur.fetchone()[0]
            cur.execute("DROP TABLE bench_copy")
        conn.commit()
    assert stored == len(builds) * METRICS_PER_BUILD, stored
    n_bulk = len(builds) - half
    return {
        "builds_per_build_txn": half,
        "per_build_txn_builds_per_s": round(half / per_build, 1),
        "per_build_txn_rows_per_s": round(half * METRICS_PER_BUILD / per_build, 0),
        "builds_bulk": n_bulk,
        "bulk_builds_per_s": round(n_bulk / bulk, 1),
        "bulk_rows_per_s": round(n_bulk * METRICS_PER_BUILD / bulk, 0),
    }


# --- one configuration -----------------------------------------------------------------------------------
def parse_config(spec: str) -> dict:
    """`sync:4`, `gthread:2:4` (2 workers x 4 threads); `+redis` queues analysis on Redis db 14."""
    redis = spec.endswith("+redis")
    parts = spec.removesuffix("+redis").split(":")
    cls = parts[0]
    workers = int(parts[1])
    threads = int(parts[2]) if len(parts) > 2 else (4 if cls == "gthread" else 1)
    return {"spec": spec, "worker_class": cls, "workers": workers, "threads": threads, "redis": redis}


def run_config(cfg: dict, args, bodies_json: list[dict], bodies: list[bytes]) -> dict:
    n = args.uploads
    warm = 16
    # Upload slices: warm-up, 1 client, 8 clients, then COPY builds (never uploaded).
    s_one, s_many = slice(warm, warm + n), slice(warm + n, warm + 2 * n)
    copy_builds = bodies_json[warm + 2 * n: warm + 2 * n + 2 * args.copy_builds]
    result: dict = {"config": cfg}
    with _pg.BenchDB(redis_url=REDIS_URL if cfg["redis"] else None, source=args.source) as db:
        t0 = time.perf_counter()
        db.migrate()
        token = db.token(APP)
        url = db.start_gunicorn(cfg["workers"], cfg["worker_class"], cfg["threads"])
        result["setup_s"] = round(time.perf_counter() - t0, 1)
        try:
            # The first upload creates the app's 150 metrics and series; then every worker connects.
            w = run_clients(url, token, bodies[:1], 1, 120)
            w2 = run_clients(url, token, bodies[1:warm], 4, 120)
            if w.statuses.get(201, 0) != 1 or w2.statuses.get(201, 0) == 0:
                raise RuntimeError(f"warm-up failed: {w.summary()} {w2.summary()}\n{db.gunicorn_log_tail()}")
            result["warmup"] = w2.summary()
            w.statuses[201] = 1 + w2.statuses.get(201, 0)
            result["loadavg_before"] = _pg.loadavg()
            one = run_clients(url, token, bodies[s_one], 1, args.max_seconds)
            result["loadavg_after_1"] = _pg.loadavg()
            many = run_clients(url, token, bodies[s_many], args.clients, args.max_seconds)
            result["loadavg_after_many"] = _pg.loadavg()
        finally:
            log_tail = db.gunicorn_log_tail(10)
            db.stop_processes()
        result["api_1"] = one.summary()
        result[f"api_{args.clients}"] = many.summary()
        result["gunicorn_log_tail"] = log_tail

        import psycopg

        with psycopg.connect(db.url) as conn:
            stored = conn.execute("SELECT count(*) FROM metrics_measurement").fetchone()[0]
            builds = conn.execute("SELECT count(*), count(*) FILTER (WHERE analysis = 'pending') FROM metrics_build").fetchone()
            queued = conn.execute("SELECT count(*) FROM metrics_build WHERE analysis_queued IS NOT NULL").fetchone()[0]
        ok = w.statuses.get(201, 0) + one.statuses.get(201, 0) + many.statuses.get(201, 0)
        result["stored"] = {"builds": builds[0], "pending": builds[1], "analysis_queued_set": queued,
                            "measurements": stored, "expected_measurements": ok * METRICS_PER_BUILD}
        if stored != ok * METRICS_PER_BUILD:
            raise RuntimeError(f"stored {stored} measurements, expected {ok * METRICS_PER_BUILD}")
        result["copy"] = run_copy(db.url, copy_builds, first_pk=10_000_000)
        result["loadavg_after_copy"] = _pg.loadavg()
    copy_rate = result["copy"]["per_build_txn_builds_per_s"]
    bulk_rate = result["copy"]["bulk_builds_per_s"]
    for key in ("api_1", f"api_{args.clients}"):
        api = result[key]["uploads_per_s"]
        result[key]["ratio_to_copy_per_build_txn"] = round(api / copy_rate, 3)
        result[key]["ratio_to_copy_bulk"] = round(api / bulk_rate, 3)
    many_s = result[f"api_{args.clients}"]
    result["targets"] = {
        "api_ge_25pct_copy": many_s["ratio_to_copy_per_build_txn"] >= 0.25,
        "api_ge_25pct_copy_bulk": many_s["ratio_to_copy_bulk"] >= 0.25,
        "p95_lt_150ms_at_8": many_s["latency_ms"]["p95"] is not None and many_s["latency_ms"]["p95"] < 150,
    }
    return result


def redis_flush() -> dict:
    import redis

    r = redis.Redis.from_url(REDIS_URL, socket_timeout=5)
    keys = r.dbsize()
    queue_len = r.llen("analysis") if r.exists("analysis") else 0
    r.flushdb()
    return {"keys_before_flush": keys, "analysis_queue_len": queue_len}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", action="append", help="sync:4 | gthread:2:4 | sync:4+redis (repeatable)")
    ap.add_argument("--uploads", type=int, default=300, help="uploads per client phase (default 300)")
    ap.add_argument("--clients", type=int, default=8, help="concurrent clients of the second phase (default 8)")
    ap.add_argument("--max-seconds", type=float, default=60.0, help="cap on each client phase (default 60)")
    ap.add_argument("--copy-builds", type=int, default=300, help="builds per COPY variant (default 300)")
    ap.add_argument("--source", type=Path, default=None,
                    help="project tree the server runs (default: this checkout); e.g. an export of a commit: "
                         "git archive HEAD | tar -x -C /tmp/src")
    args = ap.parse_args()
    configs = [parse_config(s) for s in (args.config or ["sync:4", "gthread:2:4", "sync:4+redis"])]

    assert array("d", [1.0]).tobytes()[0] == 0, "pack() assumes a little-endian host"
    started = time.perf_counter()
    catalog = metric_catalog()
    rng = random.Random(42)
    total = 16 + 2 * args.uploads + 2 * args.copy_builds
    bodies_json = [make_build(i, catalog, rng) for i in range(total)]
    bodies = [json.dumps(b, separators=(",", ":")).encode() for b in bodies_json]
    print(f"{total} builds prepared, {len(bodies[0]) / 1024:.1f} KiB a body; configs: "
          f"{', '.join(c['spec'] for c in configs)}", flush=True)

    results = []
    redis_info = None
    try:
        for cfg in configs:
            print(f"-- {cfg['spec']} ...", flush=True)
            results.append(run_config(cfg, args, bodies_json, bodies))
    finally:
        if any(c["redis"] for c in configs):
            redis_info = redis_flush()

    k = f"api_{args.clients}"
    print()
    print(f"{'config':<16}{'clients':>8}{'uploads/s':>11}{'meas/s':>9}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}"
          f"{'COPY b/s':>10}{'API/COPY':>10}{'API/bulk':>10}")
    for r in results:
        for key in ("api_1", k):
            s = r[key]
            lat = s["latency_ms"]
            print(f"{r['config']['spec']:<16}{s['clients']:>8}{s['uploads_per_s']:>11.1f}{s['measurements_per_s']:>9.0f}"
                  f"{lat['p50']:>9.1f}{lat['p95']:>9.1f}{lat['p99']:>9.1f}"
                  f"{r['copy']['per_build_txn_builds_per_s']:>10.1f}{s['ratio_to_copy_per_build_txn']:>10.2f}"
                  f"{s['ratio_to_copy_bulk']:>10.2f}")
    print("\nCOPY reference (builds/s): " + "; ".join(
        f"{r['config']['spec']}: per-build txn {r['copy']['per_build_txn_builds_per_s']}, bulk {r['copy']['bulk_builds_per_s']}"
        for r in results))
    for r in results:
        print(f"loadavg {r['config']['spec']}: before {r['loadavg_before']}; after 1 client {r['loadavg_after_1']}; "
              f"after {args.clients} clients {r['loadavg_after_many']}; after COPY {r['loadavg_after_copy']}")
    for r in results:
        print(f"targets {r['config']['spec']}: " + ", ".join(f"{t}={'met' if v else 'MISSED'}" for t, v in r["targets"].items()))
    if redis_info is not None:
        print(f"redis db 14 flushed: {redis_info}")
    out = {
        "benchmark": "ingest", "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": _pg.machine(),
        "argv": sys.argv, "source": str(args.source or _pg.ROOT), "git": _pg.git_state(),
        "metrics_per_build": METRICS_PER_BUILD, "samples_per_metric": SAMPLES_PER_METRIC,
        "body_bytes": len(bodies[0]), "results": results, "redis": redis_info,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    path = _pg.write_json("ingest", out)
    print(f"wrote {path.relative_to(_pg.ROOT)} (wall {out['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
