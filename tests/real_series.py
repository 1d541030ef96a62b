"""The real labelled series kept in the repository (``bench/data/real/<source>/series.jsonl``), for tests."""

from __future__ import annotations

import json

from tests.live import ROOT

REAL = ROOT / "bench" / "data" / "real"
SOURCES = sorted(p.name for p in REAL.iterdir() if (p / "series.jsonl").exists())


def series_of(source: str) -> list[dict]:
    """Every series record of one source directory, in file order."""
    return [json.loads(line) for line in (REAL / source / "series.jsonl").read_text().splitlines() if line.strip()]


def real_series(source: str, sid: str) -> dict:
    """The record of series ``sid`` in ``source``."""
    return next(r for r in series_of(source) if r["id"] == sid)
