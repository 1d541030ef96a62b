"""Small builders of upload bodies for tests."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

BASE_TIME = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)


def native_body(build: int | str = 4711, *, app: str = "com.example.shop", platform: str = "android",
                branch: str = "main", device: str | None = "pixel-6", minutes: int | None = None,
                metrics: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A native upload; the build time is BASE_TIME plus `minutes` (default: the build number)."""
    if minutes is None:
        minutes = int(build) if str(build).isdigit() else 0
    ts = BASE_TIME + timedelta(minutes=minutes)
    body: dict[str, Any] = {
        "app": app,
        "platform": platform,
        "branch": branch,
        "build": {"id": str(build), "commit": f"c{build}", "parent_commit": f"p{build}",
                  "timestamp": ts.isoformat().replace("+00:00", "Z"), "version": "7.3.0"},
        "metrics": copy.deepcopy(metrics) if metrics is not None else [
            {"name": "startup.cold.ttid", "kind": "time", "unit": "ms", "samples": [412.1, 398.0, 405.3]},
            {"name": "size.apk.download", "kind": "size", "unit": "bytes", "value": 31457280},
            {"name": "crash.rate", "kind": "rate", "unit": "ratio", "count": 12, "total": 100000},
        ],
    }
    if device is not None:
        body["device"] = device
    return body


def history_bodies(n: int, *, shifts: dict[str, tuple[int, float]] | None = None, seed: int = 0,
                   app: str = "com.example.shop", platform: str = "android", branch: str = "main",
                   device: str | None = "pixel-6") -> list[dict[str, Any]]:
    """`n` native uploads of a small realistic history: a startup time (15 runs), an APK size, a crash
    rate and a frame time. `shifts` plants sustained relative shifts: {metric: (build index, rel)}."""
    import numpy as np

    rng = np.random.default_rng(seed)
    shifts = shifts or {}

    def level(metric: str, i: int, base: float) -> float:
        at, rel = shifts.get(metric, (n + 1, 0.0))
        return base * (1 + rel) if i >= at else base

    bodies = []
    for i in range(n):
        runner = rng.normal(0, 0.005)
        ttid = level("startup.cold.ttid", i, 400.0) * np.exp(runner + rng.normal(0, 0.03, 15))
        frame = level("frames.feed.p90", i, 12.0) * np.exp(runner + rng.normal(0, 0.02, 10))
        size = round(level("size.apk.download", i, 31_457_280.0) * (1 + rng.normal(0, 0.00005)))
        total = int(200_000 * rng.lognormal(0, 0.2))
        count = int(rng.poisson(level("crash.rate", i, 0.002) * total))
        metrics = [
            {"name": "startup.cold.ttid", "kind": "time", "unit": "ms", "samples": [round(float(v), 2) for v in ttid]},
            {"name": "frames.feed.p90", "kind": "time", "unit": "ms", "samples": [round(float(v), 3) for v in frame]},
            {"name": "size.apk.download", "kind": "size", "unit": "bytes", "value": size},
            {"name": "crash.rate", "kind": "rate", "unit": "ratio", "count": count, "total": total},
        ]
        bodies.append(native_body(i, app=app, platform=platform, branch=branch, device=device, metrics=metrics))
    return bodies


def sig9(x: float) -> float:
    """``x`` to nine significant digits: a stored float compared with the detector's across the database."""
    return float(f"{x:.9g}")
