#!/usr/bin/env python3
"""Pre-merge check statistics on real series: A/A checks and confirmed changes from the real corpus.

    .venv/bin/python bench/eval_checks_real.py [--checks 300] [--seed 0] [--json]

The real corpus of ``bench/eval_real.py`` (Perfherder, Talos, Otava and MongoDB series with sheriffs'
labels; one value per push, no runs) has no pull requests, so checks are made from it. Every series but the
size ones (those are compared exactly) is one metric of a check; a check takes, for each series, one build as
the head and the (up to 40) builds before it as the base history, and goes through
``alerts.detection.checks.run_check`` as ``alerts.premerge`` passes it.

* **A/A**: each series' head is a build at a quiet position: no labelled change point, no known false alert
  and no change the hindsight detector finds from 8 builds before the head to 1 after it. A check of
  unchanged code; any ``regression`` fails it. Reported: checks failed (nominal <= 5%), regression verdicts,
  inconclusive verdicts.
* **Confirmed changes**: for each confirmed change (truth ``change_points``, sheriff TP + FN) with 20+ builds
  before it, the head of that series is the build after the first changed one and its base history ends just
  before the change; the other series are quiet as above. Reported: changes called in the labelled direction
  (``regression`` or ``improvement``), ``inconclusive`` ones, and regression verdicts on the other series.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from eval_real import default_dirs, load_corpus  # noqa: E402

from alerts.detection.checks import HISTORY_BUILDS, MetricInput, check_status, run_check  # noqa: E402
from perfplatform.detect_cmd import detect_series, series_points  # noqa: E402

#: Builds before / after a head within which a change makes the head's position not quiet.
QUIET_BEFORE, QUIET_AFTER = 8, 1
MIN_HISTORY = 20


def quiet_positions(rec: dict, truth: dict, n: int) -> list[int]:
    changes = [c["index"] for c in truth.get("change_points", [])]
    changes += [c["index"] for c in truth.get("false_alerts", [])]
    changes += [c["index"] for c in detect_series(rec, online=False)["change_points"]]
    bad: set[int] = set()
    for c in changes:
        bad.update(range(c - QUIET_AFTER, c + QUIET_BEFORE + 1))
    return [k for k in range(MIN_HISTORY, n) if k not in bad]


def metric_input(rec: dict, pts: list, head: int, end: int) -> MetricInput:
    lower = rec.get("direction", "lower_is_better") != "higher_is_better"
    return MetricInput(rec["id"], rec.get("kind", "other"), pts[head], pts[max(0, end - HISTORY_BUILDS):end],
                       lower_is_better=lower)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checks", type=int, default=300, help="A/A checks to draw")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    series, labelled = [], []
    for _source, rec, truth in load_corpus(default_dirs()):
        if rec.get("kind") == "size":
            continue
        pts = series_points(rec)
        ok = quiet_positions(rec, truth, len(pts))
        if ok:
            series.append((rec, pts, ok))
            labelled += [(rec["id"], c["index"], c["direction"]) for c in truth.get("change_points", [])
                         if c["index"] >= MIN_HISTORY and c["index"] + 1 < len(pts)]
    rng = np.random.default_rng(a.seed)

    def quiet_inputs(skip: str | None = None) -> list[MetricInput]:
        out = []
        for rec, pts, ok in series:
            if rec["id"] != skip:
                k = int(rng.choice(ok))
                out.append(metric_input(rec, pts, k, k))
        return out

    aa = {"checks": a.checks, "failed": 0, "regressions": 0, "inconclusive": 0}
    for _ in range(a.checks):
        rows = run_check(quiet_inputs())
        aa["failed"] += check_status(rows) == "fail"
        aa["regressions"] += sum(r.verdict == "regression" for r in rows)
        aa["inconclusive"] += sum(r.verdict == "inconclusive" for r in rows)
    found = {"changes": len(labelled), "called": 0, "inconclusive": 0, "other_regressions": 0}
    by_id = {rec["id"]: (rec, pts) for rec, pts, _ in series}
    for sid, c, direction in labelled:
        rec, pts = by_id[sid]
        rows = run_check([metric_input(rec, pts, c + 1, c), *quiet_inputs(skip=sid)])
        r = rows[0]
        found["called"] += r.verdict == ("regression" if direction == "regression" else "improvement")
        found["inconclusive"] += r.verdict == "inconclusive"
        found["other_regressions"] += sum(x.verdict == "regression" for x in rows[1:])
    out = {"series": len(series), "aa": aa, "confirmed": found}
    if a.json:
        print(json.dumps(out, indent=1))
    else:
        print(f"{len(series)} real series (size series left out)")
        print(f"A/A: {aa['failed']}/{aa['checks']} checks failed ({aa['failed'] / aa['checks']:.1%}), "
              f"{aa['regressions']} regression verdicts, {aa['inconclusive']} inconclusive")
        print(f"confirmed changes: {found['called']}/{found['changes']} called in the labelled direction, "
              f"{found['inconclusive']} inconclusive; {found['other_regressions']} regression verdicts on the "
              f"other series of those checks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
