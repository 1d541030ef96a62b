"""Synthetic but realistic demo history: 3 apps x 2 platforms x 175 metrics x 200 builds.

Noise follows what device labs produce (the same model as ../shared/eval): a per-build runner effect
correlated between builds and shared by the repeated runs, occasional flaky builds, tiny size creep,
over-dispersed crash counts. A few sustained shifts are planted per app and platform and returned so
that the demo, and tests, can show that the pipeline finds them.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

APPS = ("com.example.shop", "com.example.news", "com.example.maps")
PLATFORMS = ("android", "ios")
BRANCH = "main"
DEVICES = {"android": "pixel-6", "ios": "iphone-13"}
SCREENS = [
    "home", "search", "product", "cart", "checkout", "profile", "settings", "orders", "wishlist", "feed",
    "article", "video", "comments", "share", "map", "route", "place", "reviews", "photos", "camera",
    "login", "signup", "onboarding", "notifications", "inbox", "chat", "payments", "help", "about", "offers",
]
JOURNEYS = ["home.scroll", "feed.scroll", "search.results", "product.gallery", "map.pan", "article.read",
            "video.list", "comments.scroll", "orders.list", "chat.scroll"]
MODULES = [f"feature_{name}" for name in SCREENS[:25]]


@dataclass(frozen=True)
class MetricSpec:
    name: str
    kind: str
    unit: str
    base: float
    lower_is_better: bool = True
    runs: int = 0  # repeated runs per build (time, memory)
    cv: float = 0.0  # within-build coefficient of variation


@dataclass
class DemoSeries:
    spec: MetricSpec
    points: list[dict] = field(default_factory=list)  # per build: value | samples | count/total


@dataclass(frozen=True)
class Planted:
    app: str
    platform: str
    metric: str
    index: int
    direction: str
    rel_change: float


def catalog(platform: str) -> list[MetricSpec]:
    """159 metrics of every kind (``size_breakdown`` adds 16 size sub-parts); iOS and Android differ in package
    names."""
    specs: list[MetricSpec] = []
    for temp, base in (("cold", 620.0), ("warm", 310.0), ("hot", 140.0)):
        specs.append(MetricSpec(f"startup.{temp}.ttid", "time", "ms", base, runs=15, cv=0.05))
        specs.append(MetricSpec(f"startup.{temp}.ttfd", "time", "ms", base * 1.6, runs=15, cv=0.06))
    for i, screen in enumerate(SCREENS):
        specs.append(MetricSpec(f"nav.{screen}.ttid", "time", "ms", 90.0 + 7 * i, runs=10, cv=0.06))
        specs.append(MetricSpec(f"nav.{screen}.ttfd", "time", "ms", 160.0 + 11 * i, runs=10, cv=0.07))
    for journey in JOURNEYS:
        for pct, base in (("p50", 7.5), ("p90", 12.0), ("p99", 24.0)):
            specs.append(MetricSpec(f"frames.{journey}.{pct}", "time", "ms", base, runs=10, cv=0.04))
        specs.append(MetricSpec(f"frames.{journey}.janky", "count", "frames", 12.0))
    specs += [
        MetricSpec("memory.java_heap.peak" if platform == "android" else "memory.heap.peak", "memory", "MB", 96.0, runs=5, cv=0.01),
        MetricSpec("memory.native.peak", "memory", "MB", 148.0, runs=5, cv=0.01),
        MetricSpec("memory.pss.steady", "memory", "MB", 210.0, runs=5, cv=0.008),
    ]
    for screen in SCREENS[:10]:
        specs.append(MetricSpec(f"memory.{screen}.pss", "memory", "MB", 180.0, runs=5, cv=0.01))
    pkg = "apk" if platform == "android" else "ipa"
    specs += [
        MetricSpec(f"size.{pkg}.download", "size", "bytes", 31_457_280.0),
        MetricSpec(f"size.{pkg}.install", "size", "bytes", 78_643_200.0),
        MetricSpec("size.dex.methods" if platform == "android" else "size.binary.symbols", "size", "count", 61_000.0),
        MetricSpec("size.res.images", "size", "bytes", 5_242_880.0),
        MetricSpec("size.native_libs", "size", "bytes", 9_437_184.0),
    ]
    for i, module in enumerate(MODULES):
        specs.append(MetricSpec(f"size.module.{module}", "size", "bytes", 250_000.0 + 40_000 * i))
    for name, base in (("crash.rate", 2e-3), ("anr.rate", 8e-4), ("oom.rate", 3e-4)):
        specs.append(MetricSpec(name, "rate", "ratio", base))
    for feature in ("checkout", "feed", "map", "video", "chat", "payments"):
        specs.append(MetricSpec(f"crash.rate.{feature}", "rate", "ratio", 5e-4))
    specs.append(MetricSpec("perf.score", "score", "points", 82.0, lower_is_better=False))
    return specs


def _ar1(rng: np.random.Generator, n: int, sd: float, phi: float) -> np.ndarray:
    innov = rng.normal(0, sd * math.sqrt(1 - phi * phi), n)
    out = np.empty(n)
    x = 0.0
    for i in range(n):
        x = phi * x + innov[i]
        out[i] = x
    return out


def _plan(rng: np.random.Generator, app: str, platform: str, specs: list[MetricSpec], n_builds: int) -> list[Planted]:
    """Six sustained shifts per app/platform, in different metrics, well inside the history."""
    picks = rng.choice(len(specs), size=6, replace=False)
    planted = []
    for k, idx in enumerate(sorted(picks)):
        spec = specs[idx]
        index = int(rng.integers(60, n_builds - 15))
        worse = k % 3 != 2
        rel = {"time": 0.12, "memory": 0.06, "size": 0.03, "rate": 1.5, "count": 0.5, "score": 0.1}[spec.kind]
        rel *= float(rng.uniform(0.8, 1.5))
        planted.append(Planted(app, platform, spec.name, index, "regression" if worse else "improvement", round(rel, 4)))
    return planted


def generate(app: str, platform: str, *, n_builds: int = 200, seed: int = 0) -> tuple[list[DemoSeries], list[Planted]]:
    key = int(hashlib.sha1(f"{app}/{platform}/{seed}".encode()).hexdigest()[:8], 16)
    rng = np.random.default_rng(key)
    specs = catalog(platform)
    planted = _plan(rng, app, platform, specs, n_builds)
    by_metric = {p.metric: p for p in planted}
    out = []
    for spec in specs:
        level = np.full(n_builds, spec.base)
        p = by_metric.get(spec.name)
        if p is not None:
            up = (p.direction == "regression") == spec.lower_is_better
            level[p.index:] *= (1 + p.rel_change) if up else 1 / (1 + p.rel_change)
        series = DemoSeries(spec)
        if spec.kind in ("time", "memory"):
            runner = _ar1(rng, n_builds, 0.006 if spec.kind == "time" else 0.002, 0.4)
            flaky = np.where(rng.random(n_builds) < 0.01, rng.uniform(0.1, 0.3, n_builds), 0.0)
            sigma = math.sqrt(math.log(1 + spec.cv**2))
            center = level * np.exp(runner) * (1 + flaky)
            runs = center[:, None] * np.exp(rng.normal(-sigma * sigma / 2, sigma, (n_builds, spec.runs)))
            for row in np.round(runs, 2):
                series.points.append({"samples": [float(v) for v in row]})
        elif spec.kind == "size":
            creep = np.where(rng.random(n_builds) < 0.3, rng.normal(0, 0.0001, n_builds), 0.0)
            values = np.round(level * np.exp(np.cumsum(creep)))
            series.points = [{"value": float(v)} for v in values]
        elif spec.kind == "rate":
            totals = np.maximum(1000, (200_000 * rng.lognormal(0, 0.3, n_builds))).astype(int)
            rates = level * rng.gamma(80, 1 / 80, n_builds)
            counts = rng.poisson(rates * totals)
            series.points = [{"count": int(c), "total": int(t)} for c, t in zip(counts, totals, strict=True)]
        else:
            noise = rng.normal(0, 0.04, n_builds)
            values = np.round(level * (1 + noise), 2 if spec.kind == "score" else 0)
            series.points = [{"value": float(v)} for v in values]
        out.append(series)
    return out, planted


def build_identity(app: str, platform: str, index: int, *, n_builds: int, end: datetime) -> dict:
    """Build id, commit, parent commit and time of the index-th demo build (every 2 hours up to `end`)."""

    def commit(i: int) -> str:
        return hashlib.sha1(f"{app}:{i}".encode()).hexdigest()[:10]

    number = 10_000 + index
    return {
        "id": f"{platform[:1]}{number}",
        "commit": commit(index),
        "parent_commit": commit(index - 1) if index else "",
        "timestamp": end - timedelta(hours=2 * (n_builds - 1 - index)),
        "version": f"7.{index // 50}.{index % 50}",
    }


# The size hierarchy of the demo (issue 13): a few modules broken down by part, one part further by
# kind of asset, so the treemap nests four levels deep; parts sum exactly to their module's total.
# Checkout's assets grow by SIZE_STEP bytes near the end of the history, which crosses the demo's
# checkout budget (perfplatform seed_demo's DEMO_BUDGETS) while the maps module stays just under its own.
BREAKDOWN = {
    "feature_map": {"code": 0.42, "resources": 0.18, "assets.tiles": 0.25, "assets.fonts": 0.09, "assets.styles": 0.06},
    "feature_checkout": {"code": 0.55, "resources": 0.25, "assets.images": 0.2},
    "feature_feed": {"code": 0.5, "resources": 0.3, "assets": 0.2},
    "feature_search": {"code": 0.7, "resources": 0.3},
    "feature_video": {"code": 0.35, "native": 0.45, "resources": 0.2},
}
SIZE_STEP = ("feature_checkout", "assets.images", 60_000.0)
SIZE_STEP_BUILDS_BEFORE_END = 25


def size_breakdown(series: list[DemoSeries], n_builds: int) -> list[DemoSeries]:
    """Sub-part series of the modules in BREAKDOWN, derived from their module's values (which gain the
    planted step too); the module series in `series` are updated in place."""
    by_name = {s.spec.name: s for s in series}
    step_module, step_part, step_bytes = SIZE_STEP
    step_at = max(1, n_builds - SIZE_STEP_BUILDS_BEFORE_END)
    out = []
    for module, parts in BREAKDOWN.items():
        parent = by_name.get(f"size.module.{module}")
        if parent is None:
            continue
        totals = [p["value"] for p in parent.points]
        columns: dict[str, list[float]] = {}
        names = list(parts)
        for i, total in enumerate(totals):
            shares = [round(total * parts[n]) for n in names[:-1]]
            shares.append(total - sum(shares))
            for n, v in zip(names, shares, strict=True):
                if module == step_module and n == step_part and i >= step_at:
                    v += step_bytes
                columns.setdefault(n, []).append(float(v))
        if module == step_module:
            parent.points = [{"value": t + (step_bytes if i >= step_at else 0.0)} for i, t in enumerate(totals)]
        for n in names:
            spec = MetricSpec(f"size.module.{module}.{n}", "size", "bytes", columns[n][0])
            out.append(DemoSeries(spec, [{"value": v} for v in columns[n]]))
    return out
