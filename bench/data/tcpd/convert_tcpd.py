#!/usr/bin/env python3
"""Convert TCPD (github.com/alan-turing-institute/TCPD) to the eval kit's series/truth formats.

Reads a bare git mirror of TCPD with ``git show <rev>:<path>`` (no work tree needed):
``annotations.json`` and ``datasets/<name>/<name>.json`` of every dataset in ``INCLUDED``, the
univariate datasets whose README/LICENSE allow redistribution (see SOURCES.md; ``EXCLUDED`` says why
the others are left out). Every univariate dataset JSON in the tree must be in one of the two lists,
so a new dataset in a later commit is not taken before its terms are read.

Writes, one line per dataset, sorted by name:

* ``series.jsonl``: ``{"id": "tcpd/<name>", "metric": "<name>", "kind": "other", "unit": "value",
  "direction": "lower_is_better", "points": [{"build": "<i>", "value": <float>}, ...]}``; a missing
  value (null) takes the previous value (leading nulls the first non-null one), so point ``i`` is
  TCPD index ``i``, the index the annotations use;
* ``truth.jsonl``: ``{"id": "tcpd/<name>", "length": N, "annotations": {"<annotator>": [idx, ...]}}``.

Usage: convert_tcpd.py [--repo GIT_DIR] [--rev REV] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

MIRROR = "/work/.mirror/alan-turing-institute+TCPD/repo"

INCLUDED: tuple[str, ...] = (
    "bank", "brent_spot", "businv", "children_per_woman", "co2_canada", "construction", "debt_ireland",
    "gdp_argentina", "gdp_croatia", "gdp_iran", "gdp_japan", "homeruns", "jfk_passengers", "lga_passengers",
    "ozone", "rail_lines", "shanghai_license", "uk_coal_employ", "us_population", "usd_isk", "well_log",
)

EXCLUDED: dict[str, str] = {
    "run_log": "multivariate (n_dim 2)",
    "centralia": "README names Wikipedia as the source and states no licence or terms",
    "global_co2": "README only guesses the terms ('It seems ... CC BY 3.0, judging from the publication')",
    "nile": "GPLv2 (R datasets): copies must carry the GPL text and stay GPL; not met by this Apache-2.0 folder",
    "seatbelts": "GPLv2 (R datasets): copies must carry the GPL text and stay GPL; not met by this Apache-2.0 folder",
    "quality_control_1": "README states neither source nor licence (repository README: only the code is MIT)",
    "quality_control_2": "README states neither source nor licence (repository README: only the code is MIT)",
    "quality_control_3": "README states neither source nor licence (repository README: only the code is MIT)",
    "quality_control_4": "README states neither source nor licence (repository README: only the code is MIT)",
    "quality_control_5": "README states neither source nor licence (repository README: only the code is MIT)",
    "unemployment_nl": "README names no licence; says only it 'can be redistributed as part of this repository'",
}


def git_show(repo: str, rev: str, path: str) -> str:
    return subprocess.run(["git", "-C", repo, "show", f"{rev}:{path}"], check=True, capture_output=True,
                          text=True).stdout


def dataset_names(repo: str, rev: str) -> list[str]:
    """Names of the datasets whose ``datasets/<name>/<name>.json`` is in the tree."""
    out = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", rev, "datasets"], check=True,
                         capture_output=True, text=True).stdout.split()
    names = []
    for p in out:
        parts = p.split("/")
        if len(parts) == 3 and parts[2] == f"{parts[1]}.json":
            names.append(parts[1])
    return sorted(names)


def fill_missing(raw: list[float | None]) -> list[float]:
    """Carry the previous value forward over nulls; leading nulls take the first non-null value."""
    first = next((v for v in raw if v is not None), None)
    if first is None:
        raise ValueError("series has no value")
    out: list[float] = []
    prev = float(first)
    for v in raw:
        if v is not None:
            prev = float(v)
        out.append(prev)
    return out


def dataset(repo: str, rev: str, name: str, annotations: dict) -> tuple[dict, dict] | None:
    """(series, truth) of one univariate dataset in the kit's formats; None for a multivariate one."""
    data = json.loads(git_show(repo, rev, f"datasets/{name}/{name}.json"))
    if data["n_dim"] != 1:
        return None
    values = fill_missing(data["series"][0]["raw"])
    n = len(values)
    if n != data["n_obs"]:
        raise SystemExit(f"{name}: {n} values, n_obs {data['n_obs']}")
    ann = {uid: sorted(int(i) for i in cps) for uid, cps in annotations[name].items()}
    bad = [i for cps in ann.values() for i in cps if not 0 <= i < n]
    if bad:
        raise SystemExit(f"{name}: annotation outside 0..{n - 1}: {bad}")
    sid = f"tcpd/{name}"
    return ({"id": sid, "metric": name, "kind": "other", "unit": "value", "direction": "lower_is_better",
             "points": [{"build": str(i), "value": v} for i, v in enumerate(values)]},
            {"id": sid, "length": n, "annotations": ann})


def convert(repo: str, rev: str) -> tuple[list[dict], list[dict]]:
    annotations = json.loads(git_show(repo, rev, "annotations.json"))
    series, truth = [], []
    for name in dataset_names(repo, rev):
        if name in EXCLUDED:
            continue
        pair = dataset(repo, rev, name, annotations)
        if pair is None:
            continue
        if name not in INCLUDED:
            raise SystemExit(f"{name}: univariate dataset not reviewed; add it to INCLUDED or EXCLUDED")
        series.append(pair[0])
        truth.append(pair[1])
    missing = sorted(set(INCLUDED) - {s["metric"] for s in series})
    if missing:
        raise SystemExit(f"not in the tree: {missing}")
    return series, truth


def unstored(repo: str, rev: str = "HEAD") -> list[tuple[dict, dict]]:
    """(series, truth) of the univariate datasets in ``EXCLUDED``, read from ``repo`` for a run and never written
    here (their terms do not let this folder keep a copy); ``bench/eval_tcpd.py --tcpd-repo`` scores them."""
    annotations = json.loads(git_show(repo, rev, "annotations.json"))
    out = []
    for name in dataset_names(repo, rev):
        if name in EXCLUDED:
            pair = dataset(repo, rev, name, annotations)
            if pair is not None:
                out.append(pair)
    return out


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", default=MIRROR, help="TCPD git directory (bare mirror)")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent))
    args = ap.parse_args()
    commit = subprocess.run(["git", "-C", args.repo, "rev-parse", args.rev], check=True, capture_output=True,
                            text=True).stdout.strip()
    series, truth = convert(args.repo, args.rev)
    out = Path(args.out)
    write_jsonl(out / "series.jsonl", series)
    write_jsonl(out / "truth.jsonl", truth)
    print(f"TCPD {commit}: {len(series)} datasets -> {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
