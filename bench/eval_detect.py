#!/usr/bin/env python3
"""Accuracy of the detector on generated sets: several seeds and profiles, online and hindsight.

    .venv/bin/python bench/eval_detect.py [--eval-dir ../shared/eval] [--sets default:400:1,hard:300:7]
        [--modes online,hindsight] [--jobs 2] [--details] [--profiles PROFILES.json]

Generates each set with the evaluation kit's ``gen_series.py`` (into a temporary directory), runs
``perfplatform.detect_cmd.detect_series`` on every series and scores with the kit's ``score.py``.
``--profiles`` adds profiles of one's own to the kit's (a JSON object of profile name -> the parameters of a
``PROFILES`` entry of ``gen_series.py``, every key of its ``default`` profile), so that sets can be drawn
from noise the detector was not tuned on: ``bench/lab_profiles.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from perfplatform.detect_cmd import detect_series  # noqa: E402

DEFAULT_SETS = "default:400:1,hard:300:7,default:400:2,default:400:3,default:400:11,default:400:21," \
               "hard:300:2,hard:300:3,hard:300:11,hard:300:21"


def _load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _work(args):
    line, online = args
    return detect_series(json.loads(line), online=online)


def null_calibration(series: int = 300, length: int = 300, seed: int = 42) -> list[dict]:
    """False alarms per 1000 builds on shift-free noise (Gaussian on the log scale, iid and AR(1) 0.5),
    at two targets, with ``min_change=0`` so that only the statistical threshold acts."""
    import numpy as np

    from alerts.detection import DEFAULT, Point, detect_online

    rng = np.random.default_rng(seed)
    rows = []
    for target in (0.1, 1.0):
        cfg = DEFAULT.with_overrides(target_false_alarms_per_1000_builds=target, min_change=0.0)
        for phi in (0.0, 0.5):
            alarms = 0
            for _ in range(series):
                e = np.empty(length)
                x = 0.0
                for i in range(length):
                    x = phi * x + rng.normal() * (1 - phi * phi) ** 0.5
                    e[i] = x
                pts = [Point(float(v)) for v in 100 * np.exp(0.02 * e)]
                alarms += len(detect_online(pts, kind="other", config=cfg))
            rows.append({"target": target, "ar1": phi, "false_alarms_per_1000_builds":
                         round(1000 * alarms / (series * length), 3)})
    return rows


#: Runs the kit's generator with extra profiles: argv[1] the generator, argv[2] the profiles (JSON), the rest its
#: own arguments. The generator is the kit's own file, unchanged; only its ``PROFILES`` table gains entries.
_GENERATE_WITH_PROFILES = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("gen_series", sys.argv[1])
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)
gen.PROFILES.update(json.loads(sys.argv[2]))
sys.argv = [sys.argv[1]] + sys.argv[3:]
gen.main()
"""


def generate(eval_dir: Path, profile: str, n: int, seed: int, tmp: Path,
             profiles: dict[str, dict] | None = None) -> tuple[Path, Path]:
    series = tmp / f"{profile}-{n}-{seed}.jsonl"
    truth = tmp / f"{profile}-{n}-{seed}-truth.jsonl"
    if not series.exists():
        args = ["--n", str(n), "--seed", str(seed), "--profile", profile, "--out", str(series), "--truth", str(truth)]
        gen = str(eval_dir / "gen_series.py")
        if profiles and profile in profiles:
            cmd = [sys.executable, "-c", _GENERATE_WITH_PROFILES, gen, json.dumps({profile: profiles[profile]}), *args]
        else:
            cmd = [sys.executable, gen, *args]
        subprocess.run(cmd, check=True)
    return series, truth


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--eval-dir", default=str(ROOT.parent / "shared" / "eval"))
    ap.add_argument("--sets", default=DEFAULT_SETS)
    ap.add_argument("--modes", default="online,hindsight")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--data-dir", default=None, help="reuse generated sets here (default: a temp dir)")
    ap.add_argument("--details", action="store_true", help="print unmatched detections and misses")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--calibration", action="store_true", help="only run the shift-free calibration check")
    ap.add_argument("--profiles", default=None, help="JSON file of extra generator profiles (name -> parameters)")
    args = ap.parse_args()
    profiles = json.loads(Path(args.profiles).read_text()) if args.profiles else None
    if args.calibration:
        for row in null_calibration():
            print(json.dumps(row))
        return 0
    eval_dir = Path(args.eval_dir)
    score = _load_module(eval_dir / "score.py", "eval_score")
    tmp = Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="detect-eval-"))
    tmp.mkdir(parents=True, exist_ok=True)
    rows = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for spec in args.sets.split(","):
            profile, n, seed = spec.split(":")
            series, truth_path = generate(eval_dir, profile, int(n), int(seed), tmp, profiles)
            lines = [ln for ln in series.read_text().splitlines() if ln.strip()]
            truth = score.load(str(truth_path))
            for mode in args.modes.split(","):
                online = mode == "online"
                results = list(pool.map(_work, [(ln, online) for ln in lines], chunksize=8))
                detected = {r["id"]: r for r in results}
                rep = score.score(truth, detected, 3)
                a = rep["all"]
                row = {"profile": profile, "n": int(n), "seed": int(seed), "mode": mode, **a,
                       "per_kind": {k: {m: v[m] for m in ("f1", "fp", "fn", "false_alarms_per_1000_builds",
                                                          "median_delay", "p90_delay")}
                                    for k, v in rep.items() if k != "all"}}
                rows.append(row)
                if not args.json:
                    print(f"{profile:8s} n={n:>4s} seed={seed:>3s} {mode:9s} F1={a['f1']:.4f} "
                          f"P={a['precision']:.4f} R={a['recall']:.4f} FA/1000={a['false_alarms_per_1000_builds']:.3f} "
                          f"delay med={a['median_delay']} p90={a['p90_delay']}  "
                          + " ".join(f"{k}:F1={v['f1']:.3f},fp={v['fp']},fn={v['fn']}"
                                     for k, v in sorted(row["per_kind"].items())), flush=True)
                if args.details:
                    for sid, t in truth.items():
                        det = detected.get(sid, {}).get("change_points", [])
                        m = score.match(t["change_points"], det, 3)
                        mt = {id(x) for x, _ in m}
                        md = {id(y) for _, y in m}
                        for d in det:
                            if id(d) not in md:
                                print(f"  FP {sid} {t['kind']} {d}")
                        for x in t["change_points"]:
                            if id(x) not in mt:
                                print(f"  FN {sid} {t['kind']} {x}")
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
