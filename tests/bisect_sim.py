"""A hidden truth for bisection scenarios: commit levels, runner noise, and the runs CI would produce.

Used by the pure harness (tests/detection/test_bisect.py, bench/eval_bisect.py) and by the simulated CI
(tests/integration/test_bisection.py), so both run commits the same way.

Noise model of a run (time/memory): ``log(sample) = level(commit) + runner + e``, with one runner effect
``N(0, tau)`` shared by the run's ``SAMPLES`` samples and ``e ~ N(0, w)``. A branch build is one run.
Rates: ``count ~ Poisson(total * rate * G)``, ``G ~ Gamma(1/phi, phi)`` per run. Size: deterministic,
the commit's size (a creep of a few bytes per commit plus the planted step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SAMPLES = 5
RATE_TOTAL = 20000


@dataclass(frozen=True)
class Truth:
    kind: str  # time | memory | size | rate
    base: float  # level before the change, in the metric's unit
    rel_change: float  # true relative change at the culprit (0: a false alert)
    culprit: int  # index 1..n of the first commit at the new level (ignored when rel_change == 0)
    n: int  # commits in the culprit build
    tau: float = 0.02  # runner effect (log scale)
    w: float = 0.02  # sample noise (log scale)
    phi: float = 0.02  # rate dispersion
    creep: float = 0.0  # size: relative creep per commit

    def level(self, index: int) -> float:
        """The true level of commit ``index`` (0 = the previous build's commit) in the metric's unit."""
        value = self.base * (1.0 + self.creep) ** index
        if self.rel_change and index >= self.culprit:
            value *= 1.0 + self.rel_change
        return value


def run_commit(truth: Truth, index: int, runs: int, rng: np.random.Generator) -> dict:
    """One requested build of commit ``index`` with ``runs`` runs: ``{"samples"}``, ``{"value"}`` or
    ``{"count", "total"}`` as the upload carries it."""
    return run_level(truth.kind, truth.level(index), runs, rng, tau=truth.tau, w=truth.w, phi=truth.phi)


def run_level(kind: str, level: float, runs: int, rng: np.random.Generator, *, tau: float = 0.02, w: float = 0.02,
              phi: float = 0.02) -> dict:
    """``runs`` runs of a commit whose true level is ``level`` (see the module docstring)."""
    if kind == "size":
        return {"value": float(round(level))}
    if kind == "rate":
        g = rng.gamma(1.0 / phi, phi, size=runs)
        counts = rng.poisson(RATE_TOTAL * level * g)
        return {"count": int(counts.sum()), "total": RATE_TOTAL * runs}
    runner = rng.normal(0.0, tau, size=(runs, 1))
    e = rng.normal(0.0, w, size=(runs, SAMPLES))
    samples = level * np.exp(runner + e)
    return {"samples": [round(float(x), 4) for x in samples.ravel()]}


def branch_history(truth: Truth, builds_before: int, builds_after: int, rng: np.random.Generator,
                   shift_index: int | None = None) -> list[dict]:
    """Branch builds around the alert: ``builds_before`` at commit 0's level, then ``builds_after`` at
    commit n's level (the build that covers the range), one run each."""
    out = [run_commit(truth, 0, 1, rng) for _ in range(builds_before)]
    out += [run_commit(truth, truth.n, 1, rng) for _ in range(builds_after)]
    return out


def per_build_sigma(truth: Truth) -> float:
    """The between-build noise of one build value on the analysis scale (what the noise model estimates)."""
    if truth.kind == "size":
        return max(abs(math.log1p(truth.creep)), 1e-9)
    if truth.kind == "rate":
        mu = RATE_TOTAL * truth.base
        return math.sqrt(1.0 / mu + truth.phi)
    return math.sqrt(truth.tau ** 2 + 1.2 * truth.w ** 2 / SAMPLES)


# --- the pure harness: the platform's decisions against the hidden truth ------------------------------------------

@dataclass
class Result:
    outcome: str
    culprit: int | None
    requests: list[tuple[int, int, str]]  # (commit index, runs, reason)
    thin: bool
    z: float


def as_point(m: dict):
    from alerts.detection import Point

    if "samples" in m:
        s = np.asarray(m["samples"], dtype=float)
        return Point(value=float(np.median(s)), samples=s)
    if "count" in m:
        return Point(value=m["count"] / m["total"], count=m["count"], total=m["total"])
    return Point(value=m["value"])


def as_observation(m: dict, runs: int, reason: str):
    from alerts.detection.bisect import Observation

    if "samples" in m:
        return Observation(values=tuple(m["samples"]), runs=runs, reason=reason)
    if "count" in m:
        return Observation(runs=runs, count=m["count"], total=m["total"], reason=reason)
    return Observation(values=(m["value"],), runs=runs, reason=reason)


def alert_from_branch(truth: Truth, rng: np.random.Generator, *, before: int = 80, after: int = 6,
                      false_offset: float = 0.0):
    """What the detector would report from the branch history: levels, CIs, p-value, and the history.

    ``false_offset``: a planted false alert: the branch builds after the culprit build are off by this
    relative amount (a flaky runner pool), which re-runs of the commits do not reproduce.
    """
    from alerts.detection.evaluate import Z95, build_series, point_fields, series_noise
    from alerts.detection.statistics import p_value, rate_shift_test, shift_test, step_test

    hist = branch_history(truth, before, after, rng)
    if false_offset:
        for m in hist[before:]:
            if "samples" in m:
                m["samples"] = [x * (1 + false_offset) for x in m["samples"]]
            elif "count" in m:
                m["count"] = int(round(m["count"] * (1 + false_offset)))
            else:
                m["value"] = round(m["value"] * (1 + false_offset))
    points = [as_point(m) for m in hist]
    fields = [point_fields(p, truth.kind) for p in points]
    s = build_series([f[0] for f in fields], [f[1] for f in fields], [f[2] for f in fields], 0, truth.kind,
                     [f[3] for f in fields])
    noise = series_noise(s)
    if s.mode == "rate":
        t = rate_shift_test(s.counts[:before], s.totals[:before], s.counts[before:], s.totals[before:], noise)
    elif s.mode == "step":
        t = step_test(float(s.y[before - 1]), float(np.median(s.y[before:])), noise)
    else:
        t = shift_test(s.y[:before], s.y[before:], noise)
    p = p_value(t.z, noise.df, before + after)
    b, a = math.exp(t.before), math.exp(t.after)
    bci = (math.exp(t.before - Z95 * t.se_before), math.exp(t.before + Z95 * t.se_before))
    aci = (math.exp(t.after - Z95 * t.se_after), math.exp(t.after + Z95 * t.se_after))
    return b, a, bci, aci, p, t.z, points[:before]


def simulate(truth: Truth, rng: np.random.Generator, *, false_offset: float = 0.0, max_runs: int = 20,
             max_requests: int = 40) -> Result:
    """Run the platform's bisection against ``truth`` with requested runs drawn from it."""
    from alerts.detection.bisect import decide, is_thin, reference_for

    b, a, bci, aci, p, z, history = alert_from_branch(truth, rng, false_offset=false_offset)
    ref = reference_for(truth.kind, b, a, bci, aci, history)
    thin = is_thin(p, ref.mode)
    obs: dict[int, list] = {}
    requests: list[tuple[int, int, str]] = []
    while len(requests) < max_requests:
        d = decide(truth.n, obs, ref, thin=thin, max_runs=max_runs)
        if not d.asks:
            return Result(d.outcome or "none", d.culprit, requests, thin, z)
        for ask in d.asks:
            requests.append((ask.index, ask.runs, ask.reason))
            obs.setdefault(ask.index, []).append(as_observation(run_commit(truth, ask.index, ask.runs, rng),
                                                                ask.runs, ask.reason))
    return Result("gave_up", None, requests, thin, z)
