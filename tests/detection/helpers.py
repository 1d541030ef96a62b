"""Small generators and the scorer's matching rule (copied from the evaluation kit's score.py)."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import numpy as np

from alerts.detection import Point

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "detection"


def time_series(rng: np.random.Generator, n: int, *, base: float = 500.0, runs: int = 10, cv: float = 0.05,
                build_sd: float = 0.005, shifts: dict[int, float] | None = None,
                flaky: dict[int, float] | None = None) -> list[Point]:
    """Repeated runs sharing a per-build runner effect (AR(1)), like the evaluation kit."""
    level = np.full(n, base)
    for idx, rel in (shifts or {}).items():
        level[idx:] *= 1 + rel
    fx = np.zeros(n)
    x = 0.0
    for i in range(n):
        x = 0.5 * x + rng.normal(0, build_sd * math.sqrt(1 - 0.25))
        fx[i] = x
    pts = []
    sigma = math.sqrt(math.log(1 + cv * cv))
    for i in range(n):
        center = level[i] * math.exp(fx[i]) * (1 + (flaky or {}).get(i, 0.0))
        s = center * np.exp(rng.normal(-sigma * sigma / 2, sigma, runs))
        pts.append(Point(float(np.median(s)), tuple(float(v) for v in s)))
    return pts


def size_series(rng: np.random.Generator, n: int, *, base: float = 5e7, shifts: dict[int, float] | None = None,
                creep: float = 1e-4) -> list[Point]:
    level = np.full(n, base)
    for idx, rel in (shifts or {}).items():
        level[idx:] *= 1 + rel
    steps = np.where(rng.random(n) < 0.3, rng.normal(0, creep, n), 0.0)
    level = level * np.exp(np.cumsum(steps))
    return [Point(float(round(v))) for v in level]


def rate_series(rng: np.random.Generator, n: int, *, rate: float = 1e-3, crashes: float = 100.0,
                dispersion: float = 50.0, shifts: dict[int, float] | None = None) -> list[Point]:
    level = np.full(n, rate)
    for idx, rel in (shifts or {}).items():
        level[idx:] *= 1 + rel
    pts = []
    for i in range(n):
        total = int(max(200, crashes / rate * rng.lognormal(0, 0.3)))
        count = int(rng.poisson(level[i] * rng.gamma(dispersion, 1 / dispersion) * total))
        pts.append(Point(count / total, count=count, total=total))
    return pts


def pdfpaint_quiet() -> list[float]:
    """120 quiet pushes of a real Mozilla pdfpaint timing series (one value a push, no labelled change; the
    fixture names its source)."""
    return json.loads((FIXTURES / "pdfpaint_quiet_120.json").read_text())["values"]


def load_fixture(name: str) -> tuple[list[dict], dict[str, dict]]:
    with gzip.open(FIXTURES / f"{name}.jsonl.gz", "rt") as f:
        series = [json.loads(line) for line in f if line.strip()]
    truth = {}
    with open(FIXTURES / f"{name}-truth.jsonl") as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                truth[rec["id"]] = rec
    return series, truth


def match(truth_cps: list[dict], det_cps: list[dict], margin: int = 3) -> list[tuple[dict, dict]]:
    """Same-direction detection within ``margin`` builds, each planted change matched once, nearest first."""
    pairs = sorted(
        (abs(t["index"] - d["index"]), ti, di)
        for ti, t in enumerate(truth_cps)
        for di, d in enumerate(det_cps)
        if abs(t["index"] - d["index"]) <= margin and t["direction"] == d.get("direction")
    )
    used_t, used_d, matched = set(), set(), []
    for _, ti, di in pairs:
        if ti not in used_t and di not in used_d:
            used_t.add(ti)
            used_d.add(di)
            matched.append((truth_cps[ti], det_cps[di]))
    return matched


def score(truth: dict[str, dict], detected: dict[str, dict]) -> dict:
    tp = fp = fn = builds = 0
    delays = []
    for sid, t in truth.items():
        det = detected.get(sid, {}).get("change_points", [])
        m = match(t["change_points"], det)
        tp += len(m)
        fp += len(det) - len(m)
        fn += len(t["change_points"]) - len(m)
        builds += t["length"]
        delays += [d["detected_at"] - tr["index"] for tr, d in m if "detected_at" in d]
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    delays.sort()
    return {"tp": tp, "fp": fp, "fn": fn, "precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "fa_per_1000": 1000 * fp / max(1, builds),
            "median_delay": delays[min(len(delays) - 1, int(0.5 * (len(delays) - 1) + 0.5))] if delays else None}
