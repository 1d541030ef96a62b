"""Bisection and confirmation of an alert from runs the platform asks CI for: pure decisions.

An alert says "the level moved from ``before`` to ``after`` between build P and build C"; build C covers the
commits ``c_1..c_R`` (oldest first) and ``c_0`` is build P's commit. Which commit moved it? The platform
asks CI to run chosen commits and decides from their runs, with the series' own noise model:

* **Reference** (:class:`Reference`): both levels on the analysis scale (log for time/memory/size, log rate
  for rates) and ``sigma``, the series' between-build noise of one build value (``statistics.Noise``). One
  *run* is one execution of the benchmark as a branch build does it (same repetitions, a fresh runner), so a
  commit measured by ``r`` runs has level variance ``sigma^2 / r`` (rates: ``1/(C+.5) + phi/r`` from the
  pooled counts). When the uploaded samples spread more than that, their own spread is used.
* **Classification** (:func:`classify`): the log-likelihood ratio of "after" against "before" for the
  commit's level ``m``: ``LLR = (after - before)(m - mid) / se^2`` (Gaussian, equal variances).
  ``LLR >= ln 19`` is "after", ``<= -ln 19`` "before" (posterior 95% at even prior odds), else "unclear" and
  the commit is run again; its second answer is decided by the sign. Deterministic kinds (``size``) are
  decided by the nearer level from one build.
* **Runs** (:func:`runs_needed`): enough that the midpoint rule errs with probability ``STEP_ERROR`` (0.5%)
  per step: ``r = ceil((2 z sigma / |delta|)^2)`` with ``z = Phi^-1(1 - STEP_ERROR)``. For a shift of
  ``3 sigma`` that is 3 runs in one requested build, so one request per step is enough and a range of ``R``
  commits takes ``ceil(log2 R)`` requests (:func:`request_bound` allows one more).
* **Bisection** (:func:`decide`): ``lo = 0`` (known before), ``hi = R`` (known after); request the commit
  halving ``lo..hi`` until ``hi = lo + 1``; the culprit is ``c_hi``. Every decision is a pure function of
  the observations so far, so the stored requests alone replay it.
* **Endpoint check**: a culprit at an end of the range (``c_1`` or ``c_R``) rests on a level nobody re-ran
  (``c_0`` or ``c_R``); that one commit is run too (the "+1" of the bound; a one-commit range re-runs its
  commit). If the re-run of ``c_R`` looks like "before" (or of ``c_0`` like "after"), the shift did not
  reproduce: ``not_reproduced``. Deterministic kinds with one commit need no request.
* **Thin evidence** (:func:`is_thin`): an alert whose p-value is above ``THIN_P`` = 1e-6 is confirmed
  before it is notified. The detector raises at p <= 1e-4 (its per-build false-alarm level, already
  corrected for the scan), so thin means "within a factor 100 of the critical level": about z < 1.25 z_crit.
  The culprit and the commit before it must then be measured precisely enough that the midpoint rule on
  their contrast has 90% power against both "no shift" and the alert's shift (:func:`confirm_runs` runs
  each; runs the bisection already made count), and :func:`confirm` says whether the shift reproduces: at
  least half the alert's change, in its direction. Deterministic kinds are never thin: a rebuild gives the
  same size.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .evaluate import Z95, build_series, point_fields, series_noise
from .model import Point
from .statistics import RATE_OFFSET, mad_sigma, normal_quantile, robust_location

#: Per-step probability that the midpoint rule puts a commit on the wrong side (design of the run count).
STEP_ERROR = 0.005
#: |LLR| needed for a clear verdict (ln 19: posterior 95% at even odds).
LLR_CLEAR = math.log(19.0)
#: Answers per commit: the second is decided by the sign of the LLR.
MAX_TRIES = 2
#: p-value above which an alert's evidence is thin and it is confirmed before anyone is told.
THIN_P = 1e-6
#: Power of the confirmation test at each hypothesis (no shift / the alert's shift).
CONFIRM_POWER = 0.90
#: Share of the alert's change a re-run must show for the shift to count as reproduced.
CONFIRM_FRACTION = 0.5
DEFAULT_MAX_RUNS = 20

Side = Literal["before", "after", "unclear"]
Reason = Literal["bisect", "confirm"]
Outcome = Literal["none", "bisected", "confirmed", "not_reproduced"]


@dataclass(frozen=True, slots=True)
class Reference:
    """What the alert says, on the analysis scale (see the module docstring).

    mode: "level" (time, memory, score, ...), "step" (size: deterministic) or "rate" (count/total)
    log: whether values are analysed as logs (rates always are)
    sigma: between-build noise of one build value (one run); rate: of log(count/total)
    phi: extra-Poisson dispersion of log rates (rate only)
    se_before, se_after: standard errors of the two levels (from the alert's confidence intervals)
    """

    mode: str
    log: bool
    before: float
    after: float
    sigma: float
    phi: float = 0.0
    se_before: float = 0.0
    se_after: float = 0.0

    @property
    def delta(self) -> float:
        return self.after - self.before

    @property
    def deterministic(self) -> bool:
        return self.mode == "step"

    def scale(self, value: float) -> float:
        """A value in the metric's unit on the analysis scale."""
        if self.log:
            return math.log(value) if value > 0 else -math.inf
        return value


def reference_for(kind: str, before: float, after: float, before_ci: tuple[float | None, float | None],
                  after_ci: tuple[float | None, float | None], history: Sequence[Point]) -> Reference:
    """The reference of an alert (levels and CIs in the metric's unit) with the noise model of its series'
    branch history (``history``: the builds up to the alert, oldest first), as the detector estimates it."""
    vals, cnts, tots, wvs = [], [], [], []
    for p in history:
        v, c, t, w = point_fields(p, kind)
        vals.append(v)
        cnts.append(c)
        tots.append(t)
        wvs.append(w)
    s = build_series(vals, cnts, tots, 0, kind, wvs)
    noise = series_noise(s)
    log = s.log or s.mode == "rate"
    if kind in ("time", "memory", "size", "rate") and before > 0 and after > 0:
        log = True

    def sc(x: float) -> float:
        return math.log(x) if log else x

    def se(level: float, ci: tuple[float | None, float | None]) -> float:
        lo, hi = ci
        if lo is None or hi is None or (log and (lo <= 0 or hi <= 0)):
            return 0.0
        return max(0.0, (sc(hi) - sc(lo)) / (2 * Z95))

    mode = s.mode if s.mode != "level" or kind != "rate" else "rate"
    sigma = noise.sigma
    if mode == "rate" and s.counts is not None:
        # per-build variance of a log rate: the Poisson part at the typical exposure plus the dispersion
        pois = float(np.median(1.0 / (s.counts + RATE_OFFSET))) if s.counts.size else 0.0
        sigma = math.sqrt(max(sigma * sigma, pois + noise.phi))
    return Reference(mode=mode, log=log, before=sc(before), after=sc(after), sigma=sigma, phi=noise.phi,
                     se_before=se(before, before_ci), se_after=se(after, after_ci))


@dataclass(frozen=True, slots=True)
class Observation:
    """One requested build's measurement of the alert's metric at one commit.

    ``values``: the uploaded samples (or the single value), in the metric's unit; ``runs``: how many runs
    were asked for; rates: ``count``/``total`` pooled over the runs. ``reason``: why it was requested.
    """

    values: tuple[float, ...] = ()
    runs: int = 1
    count: int | None = None
    total: int | None = None
    reason: Reason = "bisect"


@dataclass(frozen=True, slots=True)
class Level:
    value: float  # analysis scale
    var: float
    runs: int


def pooled_level(obs: Sequence[Observation], ref: Reference) -> Level | None:
    """The level of one commit from all its answers, and its variance under the noise model."""
    if not obs:
        return None
    runs = sum(max(1, o.runs) for o in obs)
    if ref.mode == "rate":
        c = sum(o.count or 0 for o in obs)
        t = sum(o.total or 0 for o in obs)
        if t <= 0:
            return None
        value = math.log((c + RATE_OFFSET) / t)
        return Level(value, 1.0 / (c + RATE_OFFSET) + ref.phi / runs, runs)
    raw = np.asarray([v for o in obs for v in o.values], dtype=float)
    if raw.size == 0:
        return None
    if ref.log:
        if float(raw.min()) <= 0:
            raw = raw[raw > 0]
            if raw.size == 0:
                return Level(-math.inf, 0.0, runs)
        y = np.log(raw)
    else:
        y = raw
    m, f = robust_location(y)
    if ref.deterministic:
        return Level(m, 0.0, runs)
    var = ref.sigma * ref.sigma / runs
    if y.size >= 5:
        s = mad_sigma(y)
        var = max(var, s * s * f / y.size)
    return Level(m, var, runs)


@dataclass(frozen=True, slots=True)
class Verdict:
    side: Side
    llr: float
    level: float
    se: float


def classify(obs: Sequence[Observation], ref: Reference, *, force: bool = False) -> Verdict:
    """Is this commit at the "before" or the "after" level? ``force``: no "unclear" (decide by the sign)."""
    lv = pooled_level(obs, ref)
    if lv is None:
        return Verdict("unclear", 0.0, math.nan, math.inf)
    mid = 0.5 * (ref.before + ref.after)
    d = ref.delta
    if ref.deterministic:
        if not math.isfinite(lv.value):
            side: Side = "after" if d < 0 else "before"
        else:
            side = "after" if (lv.value - mid) * d > 0 else "before"
        return Verdict(side, math.copysign(math.inf, 1 if side == "after" else -1), lv.value, 0.0)
    se2 = lv.var + 0.25 * (ref.se_before ** 2 + ref.se_after ** 2)
    se = math.sqrt(se2) if se2 > 0 else 0.0
    if se == 0.0:
        llr = math.copysign(math.inf, (lv.value - mid) * d) if (lv.value - mid) * d != 0 else 0.0
    else:
        llr = d * (lv.value - mid) / se2
    if llr >= LLR_CLEAR or (force and llr > 0):
        return Verdict("after", llr, lv.value, se)
    if llr <= -LLR_CLEAR or (force and llr <= 0):
        return Verdict("before", llr, lv.value, se)
    return Verdict("unclear", llr, lv.value, se)


def _per_run_sd(ref: Reference) -> float:
    if ref.mode == "rate":
        return math.sqrt(max(ref.sigma * ref.sigma, ref.phi))
    return ref.sigma


def runs_needed(ref: Reference, *, max_runs: int = DEFAULT_MAX_RUNS, error: float = STEP_ERROR) -> int:
    """Runs of one requested build so the midpoint rule errs with probability ``error`` at most."""
    if ref.deterministic:
        return 1
    d = abs(ref.delta)
    sd = _per_run_sd(ref)
    if d <= 0 or not math.isfinite(d):
        return max_runs
    z = normal_quantile(1.0 - error)
    return int(min(max_runs, max(1, math.ceil((2.0 * z * sd / d) ** 2))))


def confirm_runs(ref: Reference, *, max_runs: int = DEFAULT_MAX_RUNS) -> int:
    """Runs of each of the two confirmation builds: contrast se <= |delta| / (2 z_power)."""
    if ref.deterministic:
        return 1
    d = abs(ref.delta)
    if d <= 0 or not math.isfinite(d):
        return max_runs
    z = normal_quantile(CONFIRM_POWER)
    sd = _per_run_sd(ref)
    return int(min(max_runs, max(1, math.ceil(2.0 * (2.0 * z * sd / d) ** 2))))


@dataclass(frozen=True, slots=True)
class Confirmation:
    reproduced: bool
    shift: float  # level(culprit) - level(previous), analysis scale
    se: float
    z: float


def confirm(culprit: Sequence[Observation], previous: Sequence[Observation], ref: Reference) -> Confirmation:
    """Does the re-run contrast show at least ``CONFIRM_FRACTION`` of the alert's change, in its direction?"""
    a, b = pooled_level(culprit, ref), pooled_level(previous, ref)
    if a is None or b is None or not (math.isfinite(a.value) and math.isfinite(b.value)):
        return Confirmation(False, math.nan, math.inf, 0.0)
    shift = a.value - b.value
    se = math.sqrt(a.var + b.var)
    d = ref.delta
    z = shift / se if se > 0 else math.copysign(math.inf, shift) if shift else 0.0
    return Confirmation(shift * math.copysign(1.0, d) >= CONFIRM_FRACTION * abs(d), shift, se, z)


def is_thin(p_value: float | None, mode: str) -> bool:
    """Thin evidence: a noisy kind whose alert p-value lies above ``THIN_P``."""
    return mode != "step" and p_value is not None and p_value > THIN_P


def request_bound(n_commits: int) -> int:
    """At most this many requests bisect a clear shift over ``n_commits`` commits: ``ceil(log2 R) + 1``."""
    return math.ceil(math.log2(n_commits)) + 1 if n_commits > 1 else 1


def midpoint(lo: int, hi: int) -> int:
    """The commit index halving ``lo..hi`` (exclusive of both)."""
    return (lo + hi) // 2


# --- the whole procedure as a pure function of what was observed -------------------------------------------------

@dataclass(frozen=True, slots=True)
class Ask:
    """Run commit index ``index`` (0 = the previous good build's commit, 1..R the range) ``runs`` times."""

    index: int
    runs: int
    reason: Reason


@dataclass(frozen=True, slots=True)
class Decision:
    """Either more requests (``asks``) or the outcome; ``lo..hi`` is the culprit range narrowed so far
    (the culprit is one of ``c_{lo+1}..c_hi``)."""

    asks: tuple[Ask, ...]
    outcome: Outcome | None
    lo: int
    hi: int
    steps: list[tuple[int, Side]] = field(default_factory=list)

    @property
    def culprit(self) -> int | None:
        return self.hi if self.outcome in ("bisected", "confirmed", "none") and self.hi - self.lo == 1 else None


def decide(n_commits: int, observations: Mapping[int, Sequence[Observation]], ref: Reference, *, thin: bool,
           max_runs: int = DEFAULT_MAX_RUNS) -> Decision:
    """The next requests, or the outcome, after ``observations`` (answers by commit index).

    ``n_commits`` is R, the commits in the range (indices 1..R); index 0 is the previous good build's commit.
    """
    r = n_commits
    lo, hi = 0, r
    steps: list[tuple[int, Side]] = []
    bisect_runs = runs_needed(ref, max_runs=max_runs)
    while hi - lo > 1:
        mid = midpoint(lo, hi)
        obs = observations.get(mid, ())
        if not obs:
            return Decision((Ask(mid, bisect_runs, "bisect"),), None, lo, hi, steps)
        v = classify(obs, ref, force=len(obs) >= MAX_TRIES)
        if v.side == "unclear":
            return Decision((Ask(mid, bisect_runs, "bisect"),), None, lo, hi, steps)
        steps.append((mid, v.side))
        if v.side == "after":
            hi = mid
        else:
            lo = mid
    if thin:
        # The contrast culprit - previous needs se <= |delta| / (2 z_power); runs the bisection already
        # made count, so only commits short of half that variance are (re-)run.
        target = (abs(ref.delta) / (2.0 * normal_quantile(CONFIRM_POWER))) ** 2 / 2.0
        total = confirm_runs(ref, max_runs=max_runs)
        asks = []
        for i in (lo, hi):
            obs = observations.get(i, ())
            lv = pooled_level(obs, ref)
            confirm_asked = sum(1 for o in obs if o.reason == "confirm")
            if (lv is None or lv.var > target) and confirm_asked < MAX_TRIES:
                have = lv.runs if lv is not None else 0
                asks.append(Ask(i, int(min(max_runs, max(1, total - have))), "confirm"))
        if asks:
            return Decision(tuple(asks), None, lo, hi, steps)
        c = confirm(observations[hi], observations[lo], ref)
        if not c.reproduced:
            return Decision((), "not_reproduced", lo, hi, steps)
        return Decision((), "bisected" if r > 1 else "confirmed", lo, hi, steps)
    if r == 1 and ref.deterministic:
        return Decision((), "none", lo, hi, steps)
    # Endpoint check: the culprit's side that no requested run has seen (one commit: re-run it).
    for i, expected in ((hi, "after"), (lo, "before")):
        if i not in (0, r) or (r == 1 and i == 0):
            continue
        obs = observations.get(i, ())
        if not obs:
            return Decision((Ask(i, bisect_runs, "confirm"),), None, lo, hi, steps)
        v = classify(obs, ref, force=len(obs) >= MAX_TRIES)
        if v.side == "unclear":
            return Decision((Ask(i, bisect_runs, "confirm"),), None, lo, hi, steps)
        if v.side != expected:
            return Decision((), "not_reproduced", lo, hi, steps)
    return Decision((), "bisected" if r > 1 else "confirmed", lo, hi, steps)
