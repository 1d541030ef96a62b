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
