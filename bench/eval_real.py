#!/usr/bin/env python3
"""Accuracy of the detector on real labelled series, next to the Perfherder-style t-test, in one run.

    .venv/bin/python bench/eval_real.py [--dirs DIR,...] [--margin 5] [--audit-back 40] [--json]
        [--details | --curve] [--perfherder-repo GIT_DIR [--perfherder-rev REV]]

Reads every ``series.jsonl``/``truth.jsonl`` pair under ``../shared/eval/real/*/`` and ``bench/data/real/*/``
(the source of a series is its directory's name: mozilla, treeherder, otava, mongodb). For each source and
overall, and for each detector (``online``: the upload worker's code path, withdrawn alerts included;
``hindsight``; ``ttest``: ``bench/baselines/perfherder_ttest.py``):

* recall of the confirmed changes (truth ``change_points``: sheriff TP + FN), margin 5 pushes, same
  direction, each truth matched at most once (the eval kit's ``score.match``);
* alerts raised (online: withdrawn ones included; ``kept``: not withdrawn), beside the sum of ``perfherder_alerts`` of the series that give it (``ratio`` compares only
  those series);
* known false alerts (``false_alerts``, sheriff-invalid) with a detection of the same direction within the
  margin;
* median and p90 delay ``detected_at - index`` of the matched detections;
* ``recall_audited``: the same recall with Mozilla labels moved to where their own recorded step
  (``test_prev_value -> test_new_value``) is in the data, when it is plainly not at the labelled push
  (``bench/label_audit.py``: it moves 29 of the 110 confirmed Mozilla labels, 26 of them 3-35 pushes back, where
  backfills measured the change after it was alerted; it looks at most ``--audit-back`` pushes back, 40 by
  default), and ``f1_audited`` / ``f1_zero_audited`` against the same labels;
* ``perfherder_alerts_all`` / ``ratio_all``: Perfherder's own count with the alerts whose summary is still
  processing (SP) too, every alert it raised on the series (``bench/perfherder_verdicts.py``), and
  ``recall_alert_level`` / ``false_hit_alert_level`` / ``f1_alert_level`` (and the zero detector's): recall,
  known false alerts hit and F1 against the labels by each alert's own status instead of its summary's
  (other sources: their labels as given);
* TCPDBench-style F1 (start of series counted as a change point in both sets, margin 5, no direction; mean over
  series) and the same F1 of the zero detector that predicts no change;
* ``unmatched_kept``: alerts kept (not withdrawn) that no label as given matched, and ``unmatched_kept_5pct``
  those of them whose relative change is 5% or more (what the ratio counts that the labels do not explain, and
  how much of it is a large change);
* CPU seconds (``time.process_time``) spent detecting.

Besides each source and ``all``, the Mozilla series are also counted by device (``device:android`` and
``device:desktop``, from the ``machine_platform`` their raw file records, ``raw_platforms``; a series whose platform
names neither, such as mozilla-release/2780728's ``gecko-decision``, is in neither row): the platform is for mobile
apps, and the Android series are where that shows (outside checks hold out Mozilla's Android folder).

``--curve`` reports instead each detector along its own threshold (``operating_curve``: the detector's false-alarm
target, the t-test's t): alerts raised and the recall of each label set, for a comparison at matched alert counts.

``--perfherder-repo`` (a clone of github.com/mozilla/treeherder; nothing of it is stored here) adds ``perfherder``:
Perfherder's own ``perfalert.detect_changes`` read from that clone (``bench/baselines/perfherder_reference.py``),
its change points filtered and reported as the t-test baseline's are. Its row gives Perfherder's own CPU on the
corpus, its ``same_as_ttest`` the series where it finds exactly the baseline's change points, and a last line each
detector's CPU against both.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from alerts.detection import DEFAULT  # noqa: E402
from bench.baselines.perfherder_reference import PERFALERT_PATH, detect_record_reference, load_perfalert  # noqa: E402
from bench.baselines.perfherder_ttest import detect_record  # noqa: E402
from bench.eval_detect import _load_module  # noqa: E402
from bench.eval_tcpd import f_measure  # noqa: E402
from bench.label_audit import BACK as AUDIT_BACK  # noqa: E402
from bench.label_audit import audited, raw_relocations, raw_series_meta  # noqa: E402
from bench.perfherder_verdicts import raw_verdicts, with_verdicts  # noqa: E402
from perfplatform.detect_cmd import detect_series  # noqa: E402

DETECTORS = ("online", "hindsight", "ttest")


def shared_eval() -> Path:
    """``../shared/eval`` of the checkout (a worktree under ``/work/wt/`` finds it one level further up)."""
    for base in (ROOT.parent, ROOT.parent.parent):
        if (base / "shared" / "eval").is_dir():
            return base / "shared" / "eval"
    return ROOT.parent / "shared" / "eval"


def default_dirs() -> list[Path]:
    roots = [shared_eval() / "real", ROOT / "bench" / "data" / "real"]
    return sorted(d for r in roots if r.is_dir() for d in r.iterdir()
                  if (d / "series.jsonl").is_file() and (d / "truth.jsonl").is_file())


def device_of(platform: str | None) -> str | None:
    """``android`` or ``desktop`` for a Perfherder ``machine_platform`` (``android-hw-a51-11-0-aarch64...``,
    ``windows10-64...``, ``linux1804-64...``, ``macosx1015-64...``); None when unknown."""
    p = (platform or "").lower()
    if "android" in p:
        return "android"
    if p.startswith(("linux", "windows", "macosx", "osx")):
        return "desktop"
    return None


def raw_platforms(corpus_dir: Path) -> dict[str, str]:
    """Series id -> ``machine_platform`` of every raw file of a Mozilla corpus directory that records one."""
    return {sid: meta["machine_platform"] for sid, meta in raw_series_meta(corpus_dir) if meta.get("machine_platform")}


def load_corpus(dirs: list[Path], audit_back: int = AUDIT_BACK) -> list[tuple[str, dict, dict]]:
    """(source, series record, truth record) of every series; a truth record carries its audited labels
    (``bench/label_audit.py``) under ``"audited"``, ``perfherder_alerts_all`` and the per-alert labels
    ``alert_level`` (``bench/perfherder_verdicts.py``), and the series' ``device`` (``device_of``; None when its
    raw file records no platform). ``audit_back``: how far back the audit may move a label (pushes)."""
    out = []
    for d in dirs:
        moves, found, platforms = raw_relocations(d, audit_back), raw_verdicts(d), raw_platforms(d)
        truth = {}
        for line in (d / "truth.jsonl").read_text().splitlines():
            if line.strip():
                t = json.loads(line)
                t["audited"] = audited(t, moves.get(t["id"], {}))
                t.update(with_verdicts(t, found.get(t["id"])))
                t["device"] = device_of(platforms.get(t["id"]))
                truth[t["id"]] = t
        for line in (d / "series.jsonl").read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                out.append((d.name, rec, truth[rec["id"]]))
    return out


def ttest_series(rec: dict, t_threshold: float = 7.0) -> dict:
    return {"id": rec["id"], "change_points": detect_record(rec, t_threshold)}


def run_detector(name: str, rec: dict, threshold: float | None = None, reference=None) -> dict:
    """Change points of ``name`` on one series; ``threshold``: the t-test's t, or the detector's
    ``target_false_alarms_per_1000_builds`` (None: the defaults, 7 and 0.1). ``perfherder``: Treeherder's own code,
    the module ``reference`` (``perfherder_reference.load_perfalert``)."""
    if name == "ttest":
        return ttest_series(rec, 7.0 if threshold is None else threshold)
    if name == "perfherder":
        return {"id": rec["id"], "change_points": detect_record_reference(reference, rec)}
    config = DEFAULT if threshold is None else DEFAULT.with_overrides(target_false_alarms_per_1000_builds=threshold)
    return detect_series(rec, online=name == "online", config=config)


#: The thresholds ``--curve`` moves each detector along: false alarms per 1000 builds, and Perfherder's t.
CURVE = {"online": (0.0001, 0.001, 0.01, 0.1, 1.0), "hindsight": (0.0001, 0.001, 0.01, 0.1, 1.0),
         "ttest": (3.0, 4.0, 5.0, 6.0, 7.0, 9.0)}


def operating_curve(corpus, margin: int, score, curve: dict[str, tuple[float, ...]] = CURVE) -> list[dict]:
    """Each detector moved along its own threshold: alerts raised (withdrawn ones included) and the recall of
    each label set, one row per (detector, threshold). Because sheriffs label what Perfherder raised, the labels
    favour whatever is as sensitive as its t > 7; recall at a matched alert count is the fair comparison."""
    rows = []
    for name, thresholds in curve.items():
        for th in thresholds:
            alerts, matched, confirmed = 0, dict.fromkeys(LABEL_SETS, 0), dict.fromkeys(LABEL_SETS, 0)
            for _, rec, truth in corpus:
                det = run_detector(name, rec, th)["change_points"]
                alerts += len(det)
                for s, labels in label_sets(truth).items():
                    confirmed[s] += len(labels["change_points"])
                    matched[s] += len(score.match(labels["change_points"], det, margin))
            row = {"detector": name, "threshold": th, "alerts": alerts}
            row.update({f"recall{s}": round(matched[s] / confirmed[s], 4) if confirmed[s] else None
                        for s in LABEL_SETS})
            rows.append(row)
    return rows


def tcpd_f1(truth_idx: list[int], det_idx: list[int], margin: int) -> float:
    """F1 of TCPDBench (van den Burg & Williams 2020) with one annotator: ``eval_tcpd.f_measure``."""
    return f_measure({"sheriffs": truth_idx}, det_idx, margin)[0]


#: The label sets every detector is scored against, by the suffix of their figures: as given, audited
#: (``bench/label_audit.py``) and by each alert's own status (``bench/perfherder_verdicts.py``).
LABEL_SETS = ("", "_audited", "_alert_level")
#: A kept alert no label explains is counted apart when it is a change this large (relative): most are.
BIG = 0.05


def label_sets(truth: dict) -> dict[str, dict]:
    return {"": truth, "_audited": truth["audited"], "_alert_level": truth["alert_level"]}


def _mean(xs: list[float]) -> float:
    return round(sum(xs) / len(xs), 4)


def evaluate(corpus, margin: int, score, reference=None) -> dict:
    """The report of every detector (``DETECTORS``, and ``perfherder`` when ``reference``, Treeherder's own
    ``perfalert`` module, is given: then its ``same_as_ttest`` counts the series where it finds exactly the t-test
    baseline's change points, build and direction)."""
    names = DETECTORS + (("perfherder",) if reference is not None else ())

    def counters() -> dict:
        c = {"series": 0, "builds": 0, "alerts": 0, "kept": 0, "alerts_on_ph_series": 0, "perfherder_alerts": 0,
             "alerts_on_ph_all_series": 0, "perfherder_alerts_all": 0, "false_alerts": 0, "false_hit": 0,
             "false_alerts_alert_level": 0, "false_hit_alert_level": 0, "delays": [], "cpu_s": 0.0,
             "unmatched_kept": 0, "unmatched_kept_5pct": 0, "same_as_ttest": 0}
        for s in LABEL_SETS:
            c.update({f"confirmed{s}": 0, f"matched{s}": 0, f"f1{s}": [], f"f1_zero{s}": []})
        return c

    acc: dict = defaultdict(lambda: defaultdict(counters))
    details = []
    for source, rec, truth in corpus:
        ph, ph_all = truth.get("perfherder_alerts"), truth.get("perfherder_alerts_all")
        level = truth["alert_level"]
        sets = label_sets(truth)
        found = {}
        for name in names:
            t0 = time.process_time()
            det = run_detector(name, rec, reference=reference)["change_points"]
            cpu = time.process_time() - t0
            found[name] = [(d["index"], d["direction"]) for d in det]
            det_idx = [d["index"] for d in det]
            matches = {s: score.match(labels["change_points"], det, margin) for s, labels in sets.items()}
            m = matches[""]
            fa = score.match(truth.get("false_alerts", []), det, margin)
            fa_level = score.match(level["false_alerts"], det, margin)
            f1s = {}
            for s, labels in sets.items():
                idx = [c["index"] for c in labels["change_points"]]
                f1s[s] = (tcpd_f1(idx, det_idx, margin), tcpd_f1(idx, [], margin))
            matched_t = {id(t) for t, _ in m}
            matched_d = {id(d) for _, d in m}
            unmatched_kept = [d for d in det if id(d) not in matched_d and not d.get("withdrawn")]
            big = sum(1 for d in unmatched_kept if d.get("rel_change") is not None and abs(d["rel_change"]) >= BIG)
            keys = (source, "all") if truth.get("device") is None else (source, "all", f"device:{truth['device']}")
            for key in keys:
                a = acc[key][name]
                a["series"] += 1
                a["builds"] += len(rec["points"])
                a["alerts"] += len(det)
                a["kept"] += sum(1 for d in det if not d.get("withdrawn"))
                if ph is not None:
                    a["alerts_on_ph_series"] += len(det)
                    a["perfherder_alerts"] += ph
                if ph_all is not None:
                    a["alerts_on_ph_all_series"] += len(det)
                    a["perfherder_alerts_all"] += ph_all
                for s, labels in sets.items():
                    a[f"confirmed{s}"] += len(labels["change_points"])
                    a[f"matched{s}"] += len(matches[s])
                    a[f"f1{s}"].append(f1s[s][0])
                    a[f"f1_zero{s}"].append(f1s[s][1])
                a["false_alerts_alert_level"] += len(level["false_alerts"])
                a["false_hit_alert_level"] += len(fa_level)
                a["false_alerts"] += len(truth.get("false_alerts", []))
                a["false_hit"] += len(fa)
                a["delays"] += [d["detected_at"] - t["index"] for t, d in m]
                a["cpu_s"] += cpu
                a["unmatched_kept"] += len(unmatched_kept)
                a["unmatched_kept_5pct"] += big
                if name == "perfherder":
                    a["same_as_ttest"] += found[name] == found["ttest"]
            details.append({"source": source, "id": rec["id"], "detector": name,
                            "missed": [t for t in truth["change_points"] if id(t) not in matched_t],
                            "unmatched": [{k: d.get(k) for k in ("index", "direction", "rel_change",
                                                                 "detected_at", "withdrawn")}
                                          for d in det if id(d) not in matched_d],
                            "delays": [d["detected_at"] - t["index"] for t, d in m]})
    report = {}
    for key, per in acc.items():
        report[key] = {}
        for name, a in per.items():
            r = {
                "series": a["series"], "builds": a["builds"], "confirmed": a["confirmed"], "matched": a["matched"],
                "alerts": a["alerts"], "kept": a["kept"], "perfherder_alerts": a["perfherder_alerts"],
                "ratio": round(a["alerts_on_ph_series"] / a["perfherder_alerts"], 3) if a["perfherder_alerts"]
                else None,
                "perfherder_alerts_all": a["perfherder_alerts_all"],
                "ratio_all": round(a["alerts_on_ph_all_series"] / a["perfherder_alerts_all"], 3)
                if a["perfherder_alerts_all"] else None,
                "confirmed_alert_level": a["confirmed_alert_level"],
                "false_hit_alert_level": a["false_hit_alert_level"],
                "false_alerts_alert_level": a["false_alerts_alert_level"],
                "false_alerts": a["false_alerts"], "false_hit": a["false_hit"],
                "median_delay": score.pct(a["delays"], 0.5), "p90_delay": score.pct(a["delays"], 0.9),
                "unmatched_kept": a["unmatched_kept"], "unmatched_kept_5pct": a["unmatched_kept_5pct"],
                "cpu_s": round(a["cpu_s"], 3),
            }
            if name == "perfherder":
                r["same_as_ttest"] = a["same_as_ttest"]
            for s in LABEL_SETS:
                n = a[f"confirmed{s}"]
                r[f"recall{s}"] = round(a[f"matched{s}"] / n, 4) if n else None
                r[f"f1{s}"], r[f"f1_zero{s}"] = _mean(a[f"f1{s}"]), _mean(a[f"f1_zero{s}"])
            report[key][name] = r
    return {"margin": margin, "report": report, "details": details}


COLS = ("series", "confirmed", "matched", "recall", "recall_audited", "alerts", "kept", "perfherder_alerts", "ratio",
        "perfherder_alerts_all", "ratio_all", "confirmed_alert_level", "recall_alert_level", "false_hit", "false_alerts",
        "false_hit_alert_level", "false_alerts_alert_level", "median_delay", "p90_delay", "f1", "f1_zero", "f1_audited",
        "f1_zero_audited", "f1_alert_level", "f1_zero_alert_level", "unmatched_kept", "unmatched_kept_5pct", "cpu_s")


def markdown(report: dict) -> str:
    lines = ["| source | detector | " + " | ".join(COLS) + " |", "|---|---|" + "---|" * len(COLS)]
    for key in sorted(report, key=lambda k: (k == "all", k.startswith("device:"), k)):
        for name in report[key]:
            r = report[key][name]
            lines.append(f"| {key} | {name} | " + " | ".join("-" if r[c] is None else str(r[c]) for c in COLS)
                         + " |")
    return "\n".join(lines)


def cpu_summary(per: dict, commit: str) -> str:
    """One line per detector: its CPU next to the t-test baseline's and Perfherder's own code's (``perfherder``),
    and how many series Perfherder's code and the baseline agree on."""
    ref, base = per["perfherder"], per["ttest"]
    lines = [f"perfherder = Treeherder's perfalert at {commit}: the same change points as the t-test baseline on "
             f"{ref['same_as_ttest']} of {ref['series']} series"]
    for name, r in per.items():
        lines.append(f"CPU {name}: {r['cpu_s']:.3f} s, {r['cpu_s'] / base['cpu_s']:.2f}x the t-test baseline, "
                     f"{r['cpu_s'] / ref['cpu_s']:.2f}x Perfherder's own code")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--eval-dir", default=str(shared_eval()))
    ap.add_argument("--dirs", default=None, help="comma-separated corpus directories (default: both roots)")
    ap.add_argument("--margin", type=int, default=5)
    ap.add_argument("--audit-back", type=int, default=AUDIT_BACK,
                    help="how many pushes back the audit may move a displaced label (default %(default)s)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--details", action="store_true", help="print misses and unmatched alerts per series")
    ap.add_argument("--curve", action="store_true",
                    help="instead: each detector's alerts and recall along its own threshold (operating curve)")
    ap.add_argument("--perfherder-repo", default=None, metavar="GIT_DIR",
                    help="a clone of mozilla/treeherder: also run Perfherder's own detector from it (perfherder)")
    ap.add_argument("--perfherder-rev", default="HEAD", help="the treeherder revision to read (default HEAD)")
    args = ap.parse_args()
    reference = None
    if args.perfherder_repo:
        try:
            reference = load_perfalert(args.perfherder_repo, args.perfherder_rev)
        except subprocess.CalledProcessError as exc:
            print(f"eval_real.py: --perfherder-repo {args.perfherder_repo}: cannot read {PERFALERT_PATH} at "
                  f"{args.perfherder_rev} ({exc.stderr.strip() or exc})", file=sys.stderr)
            return 2
    score = _load_module(Path(args.eval_dir) / "score.py", "eval_score")
    dirs = [Path(d) for d in args.dirs.split(",")] if args.dirs else default_dirs()
    corpus = load_corpus(dirs, args.audit_back)
    if args.curve:
        rows = operating_curve(corpus, args.margin, score)
        if args.json:
            json.dump(rows, sys.stdout, indent=1)
            print()
            return 0
        cols = ("detector", "threshold", "alerts") + tuple(f"recall{s}" for s in LABEL_SETS)
        print(f"{len(corpus)} series; margin {args.margin}; threshold: false alarms per 1000 builds (detector), "
              "t (ttest)\n")
        print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
        for r in sorted(rows, key=lambda r: -r["alerts"]):
            print("| " + " | ".join(str(r[c]) for c in cols) + " |")
        return 0
    res = evaluate(corpus, args.margin, score, reference)
    if reference is not None:
        res["perfherder_commit"] = reference.source_commit
    if args.json:
        out = {k: v for k, v in res.items() if args.details or k != "details"}
        json.dump(out, sys.stdout, indent=1)
        print()
        return 0
    print(f"{len(corpus)} series from {', '.join(str(d) for d in dirs)}; margin {args.margin}\n")
    print(markdown(res["report"]))
    if reference is not None:
        print("\n" + cpu_summary(res["report"]["all"], reference.source_commit))
    if args.details:
        for d in res["details"]:
            if d["missed"] or d["unmatched"]:
                print(f"{d['detector']:9s} {d['id']}: missed={[(t['index'], t['direction']) for t in d['missed']]}"
                      f" unmatched={[(u['index'], u['direction'], u['detected_at']) for u in d['unmatched']]}"
                      f" delays={d['delays']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
