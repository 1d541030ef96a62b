"""Treeherder's own Perfherder detector, run from a local git clone of mozilla/treeherder and never stored here.

``perfherder_ttest.py`` is this repository's Perfherder-style t-test, written from Perfherder's published
description. This module runs the code it describes, ``treeherder/perfalert/perfalert/__init__.py`` read with
``git show <rev>:<path>`` from a clone the caller names (``bench/eval_real.py --perfherder-repo``), on the same
series, so that two claims can be measured rather than assumed: that the baseline finds the changes Perfherder
itself finds (the same builds, series by series), and what Perfherder's own code costs next to it.

The input is what Perfherder's alert generation hands ``detect_changes``: one ``RevisionDatum`` per build, in
push order, holding that build's values (here its one value). Perfherder's code marks the builds it takes for
changes; the alert threshold, the direction and the detection build are applied to them here exactly as
``perfherder_ttest.detect_changes`` applies them (the relative change of the fore window's plain mean from the
back window's, which Perfherder's code keeps as ``forward_stats`` and ``historical_stats``), so the two outputs
can be compared whole.
"""

from __future__ import annotations

import subprocess
import types
from pathlib import Path

from .perfherder_ttest import alert, record_values

#: Where Perfherder's detector lives in a treeherder checkout.
PERFALERT_PATH = "treeherder/perfalert/perfalert/__init__.py"
FORE_WINDOW = 12  # Perfherder's default, which detect_changes_reference does not change


def load_perfalert(git_dir: str | Path, rev: str = "HEAD") -> types.ModuleType:
    """Perfherder's ``perfalert`` module from the treeherder clone at ``git_dir`` (a work tree or a bare
    mirror) at ``rev``, compiled in memory; ``module.source_commit`` is the commit it was read at.
    ``subprocess.CalledProcessError`` if the clone or the file is not there."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(git_dir), *args], check=True, capture_output=True,
                              text=True).stdout

    commit = git("rev-parse", f"{rev}^{{commit}}").strip()
    source = git("show", f"{commit}:{PERFALERT_PATH}")
    module = types.ModuleType("treeherder_perfalert")
    module.__file__ = f"{git_dir}:{commit}:{PERFALERT_PATH}"
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 - the caller's own clone
    module.source_commit = commit
    return module


def detect_changes_reference(perfalert: types.ModuleType, values: list[float], t_threshold: float = 7.0,
                             min_rel_change: float = 0.02, lower_is_better: bool = True) -> list[dict]:
    """Change points ``{"index", "direction", "rel_change", "t", "detected_at"}`` of one series by Perfherder's own
    ``detect_changes`` (default windows: 12 back, up to 24, 12 fore), in ``perfherder_ttest.detect_changes``'s
    format: the builds it marks whose relative change is at least ``min_rel_change``."""
    data = [perfalert.RevisionDatum(i, i, [v]) for i, v in enumerate(values)]
    n = len(data)
    changes = (alert(d.push_id, n, d.historical_stats["avg"], d.forward_stats["avg"], d.t,
                     min_rel_change=min_rel_change, lower_is_better=lower_is_better, fore_window=FORE_WINDOW)
               for d in perfalert.detect_changes(data, t_threshold=t_threshold) if d.change_detected)
    return [c for c in changes if c is not None]


def detect_record_reference(perfalert: types.ModuleType, rec: dict, t_threshold: float = 7.0) -> list[dict]:
    """``detect_changes_reference`` of a series record of the eval kit's format (``record_values``)."""
    values, lower = record_values(rec)
    return detect_changes_reference(perfalert, values, t_threshold, lower_is_better=lower)
