"""bench/eval_detect.py --profiles: sets drawn with generator profiles of our own, through the kit's generator."""

import json
import textwrap

from tests.bench_scripts import load_bench_script
from tests.live import ROOT

ev = load_bench_script("eval_detect")

#: A stand-in for the kit's gen_series.py (the tests do not read ../shared): its PROFILES table and a main() that
#: writes the profile it was asked for, so the test sees which parameters reached the generator.
FAKE_GENERATOR = textwrap.dedent('''
    import argparse, json
    PROFILES = {"default": {"time_lo": 0.03}}
    def main():
        ap = argparse.ArgumentParser()
        for a in ("--n", "--seed", "--out", "--truth"):
            ap.add_argument(a)
        ap.add_argument("--profile", choices=sorted(PROFILES))
        args = ap.parse_args()
        with open(args.out, "w") as f:
            f.write(json.dumps({"profile": args.profile, "params": PROFILES[args.profile], "seed": args.seed}) + "\\n")
        open(args.truth, "w").close()
    if __name__ == "__main__":
        main()
''')


def test_it_generates_a_set_of_an_extra_profile_with_the_kits_generator_unchanged(tmp_path):
    kit = tmp_path / "kit"
    kit.mkdir()
    (kit / "gen_series.py").write_text(FAKE_GENERATOR)
    out = tmp_path / "sets"
    out.mkdir()
    lab = {"time_lo": 0.01, "build_sd": [0.01, 0.03]}
    series, truth = ev.generate(kit, "lab", 5, 7, out, {"lab": lab, "other": {"time_lo": 0.5}})
    assert json.loads(series.read_text()) == {"profile": "lab", "params": lab, "seed": "7"}
    assert truth.exists()
    series, _ = ev.generate(kit, "default", 5, 7, out, {"lab": lab})  # a kit profile: the generator as is
    assert json.loads(series.read_text())["params"] == {"time_lo": 0.03}
    assert (kit / "gen_series.py").read_text() == FAKE_GENERATOR


def test_the_lab_profiles_set_every_parameter_of_a_kit_profile():
    profiles = json.loads((ROOT / "bench" / "lab_profiles.json").read_text())
    keys = {"time_lo", "memory_lo", "time_cv", "build_sd", "flaky_p", "size_creep", "rate_dispersion"}
    named = {k: v for k, v in profiles.items() if not k.startswith("_")}
    assert named and all(set(p) == keys for p in named.values())
