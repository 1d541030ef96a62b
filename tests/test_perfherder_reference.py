"""bench/baselines/perfherder_reference.py and bench/eval_real.py --perfherder-repo: Perfherder's own detector, read
from a treeherder clone, run beside the t-test baseline.

The clone here is a git repository of our own in treeherder's layout whose ``perfalert`` module is a stand-in with
Perfherder's interface (``RevisionDatum``, ``detect_changes`` marking builds): what is tested is how the module is
read and how its marks become change points, not Perfherder's statistics (``tests/test_perfherder_baseline.py``
and the corpus run compare those).
"""

import subprocess
import sys

import pytest

from bench.baselines.perfherder_reference import PERFALERT_PATH, detect_changes_reference, load_perfalert
from tests.bench_scripts import load_bench_script
from tests.live import ROOT
from tests.real_corpus import entry, score

STAND_IN = '''
MARKED = {marked!r}


class RevisionDatum:
    def __init__(self, push_timestamp, push_id, values):
        self.push_timestamp, self.push_id, self.values = push_timestamp, push_id, list(values)
        self.t, self.change_detected = 0, False

    def __lt__(self, other):
        return self.push_timestamp < other.push_timestamp


def _mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def detect_changes(data, min_back_window=12, max_back_window=24, fore_window=12, t_threshold=7):
    data = sorted(data)
    for i, d in enumerate(data):
        d.historical_stats = {{"avg": _mean([v for x in data[max(0, i - 12):i] for v in x.values])}}
        d.forward_stats = {{"avg": _mean([v for x in data[i:i + 12] for v in x.values])}}
        d.change_detected = i in MARKED
        d.t = 100.0 if d.change_detected else 0.0
    return data
'''


def _commit(repo, marked: set[int], message: str) -> str:
    path = repo / PERFALERT_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(STAND_IN.format(marked=sorted(marked)))
    run = {"cwd": repo, "check": True, "capture_output": True, "text": True}
    subprocess.run(["git", "add", "."], **run)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message], **run)
    return subprocess.run(["git", "rev-parse", "HEAD"], **run).stdout.strip()


@pytest.fixture
def treeherder(tmp_path):
    """A treeherder-like clone with two commits: the stand-in marks build 40, then builds 40 and 70."""
    repo = tmp_path / "treeherder"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    first = _commit(repo, {40}, "one mark")
    second = _commit(repo, {40, 70}, "two marks")
    return repo, first, second


def _step_values(n: int = 100) -> list[float]:
    # +10% at 40, +1% at 70 (under Perfherder's 2% alert threshold), flat otherwise
    return [100.0] * 40 + [110.0] * 30 + [111.1] * (n - 70)


def test_it_reads_perfalert_from_the_clone_at_the_revision_asked(treeherder):
    repo, first, second = treeherder
    head, older = load_perfalert(repo), load_perfalert(repo, "HEAD~1")
    assert (head.source_commit, older.source_commit) == (second, first)
    assert head.MARKED == [40, 70] and older.MARKED == [40]
    with pytest.raises(subprocess.CalledProcessError):
        load_perfalert(repo.parent)  # not a git repository


def test_it_reports_the_marked_builds_in_the_baselines_format_with_its_alert_threshold(treeherder):
    repo, _, _ = treeherder
    perfalert = load_perfalert(repo)
    values = _step_values()
    (change,) = detect_changes_reference(perfalert, values)  # 70's +1% is under the 2% threshold
    assert change["index"] == 40 and change["direction"] == "regression" and change["t"] == 100.0
    assert change["rel_change"] == pytest.approx(0.10)
    assert change["detected_at"] == 40 + 12 - 1
    assert [c["index"] for c in detect_changes_reference(perfalert, values, min_rel_change=0)] == [40, 70]
    (better,) = detect_changes_reference(perfalert, values, lower_is_better=False)
    assert better["direction"] == "improvement"
    # a mark near the end is detected on the last build
    assert detect_changes_reference(perfalert, values[:45])[0]["detected_at"] == 44


def test_eval_real_runs_it_beside_the_baseline_and_counts_the_series_they_agree_on(treeherder):
    repo, _, _ = treeherder
    ev = load_bench_script("eval_real")
    # +10% steps at 40 and at 70: the t-test baseline finds both; the stand-in marks build 40 only, where the
    # second series has no change (under the alert threshold: nothing), so the two agree on the first series alone
    corpus = [entry(1, {40: 0.10}, noise=0.005, length=100), entry(2, {70: 0.10}, noise=0.005, length=100)]
    report = ev.evaluate(corpus, 5, score, load_perfalert(repo, "HEAD~1"))["report"]["all"]
    assert report["ttest"]["matched"] == 2 and report["ttest"]["alerts"] == 2
    assert report["perfherder"]["matched"] == 1 and report["perfherder"]["alerts"] == 1
    assert report["perfherder"]["same_as_ttest"] == 1
    assert "same_as_ttest" not in report["ttest"]
    assert "| all | perfherder |" in ev.markdown({"all": report})
    line = ev.cpu_summary(report, "abc")
    assert "on 1 of 2 series" in line and "CPU online:" in line


def test_the_command_says_what_is_wrong_with_a_clone_it_cannot_read(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "eval_real.py"), "--perfherder-repo", str(tmp_path)],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2
    assert f"--perfherder-repo {tmp_path}" in run.stderr and PERFALERT_PATH in run.stderr
    assert "Traceback" not in run.stderr
