"""Where a Mozilla label's own recorded step is in the data: labels displaced from the push that changed.

A Perfherder alert records the level before and after it (``test_prev_value``, ``test_new_value``) from
the data known when it was raised. When the pushes just before the alerted one were measured only later
(Sherlock's backfills), the recorded step can sit 10-35 pushes before the labelled push: the data at the
label shows no step, while a few dozen pushes earlier it shows exactly the recorded one (e.g.
autoland1/5052520: recorded 3.32 -> 0.86, the values are already 0.86 for the 13 pushes before the label).
With a matching margin of 5 pushes, a detector that finds the real culprit is then scored as one miss and
one unmatched alert.

The audit uses only the label and the series, never a detector's output. With ``b(i)``, ``a(i)`` the
medians of the ``w`` values before and from push ``i``, the fit of the recorded step at ``i`` is

    e(i) = |log(b(i) / prev)| + |log(a(i) / new)|,

and the step's size is ``s = |log(new / prev)|``. A label moves to ``argmin e(i)`` over
``[index - back, index + ahead]`` only when the step is not visible at the label (``e(index) > s / 2``)
and is plainly visible there (``e(best) <= s / 4``); otherwise it stays. Medians of a few values do not move
until the step is inside half the window, so among the pushes within ``s / 4`` the one where the same fit
on means is smallest is taken. Series with non-positive values
are left alone (the fit is on the log scale).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

WINDOW = 8
BACK = 40
AHEAD = 15


def step_fit(values: np.ndarray, i: int, prev: float, new: float, w: int = WINDOW,
             centre=np.median) -> float:
    """``e(i)``: how far the medians (or ``centre``) around push ``i`` are from the recorded levels (log scale)."""
    before, after = values[max(0, i - w):i], values[i:i + w]
    if before.size == 0 or after.size == 0:
        return math.inf
    b, a = float(centre(before)), float(centre(after))
    if b <= 0 or a <= 0:
        return math.inf
    return abs(math.log(b / prev)) + abs(math.log(a / new))


def relocate(values: Sequence[float], index: int, prev: float | None, new: float | None,
             back: int = BACK, ahead: int = AHEAD, w: int = WINDOW) -> int:
    """The push where the label's recorded step ``prev -> new`` is in the data (``index`` if unsure)."""
    v = np.asarray(values, float)
    if prev is None or new is None or prev <= 0 or new <= 0 or prev == new or np.any(v <= 0):
        return index
    size = abs(math.log(new / prev))
    if step_fit(v, index, prev, new, w) <= size / 2:
        return index
    lo, hi = max(1, index - back), min(v.size - 1, index + ahead)
    close = [i for i in range(lo, hi + 1) if step_fit(v, i, prev, new, w) <= size / 4]
    if not close:
        return index
    return min(close, key=lambda i: (step_fit(v, i, prev, new, w, np.mean), abs(i - index)))


def _num(s: str | None) -> float | None:
    return float(s) if s not in ("", None) else None


def raw_series_meta(corpus_dir: Path) -> Iterator[tuple[str, dict]]:
    """(series id, the series constants of line 1) of every raw file of a Mozilla corpus directory, without its
    rows (ids as ``raw_series`` gives them)."""
    for path in sorted(corpus_dir.glob("raw/*/*.csv")):
        with path.open(newline="") as fh:
            meta = json.loads(fh.readline())
        yield _series_id(meta, path), meta


def _series_id(meta: dict, path: Path) -> str:
    return f"{meta.get('folder') or path.parent.name}/{meta.get('signature_id') or path.stem}"


def raw_series(corpus_dir: Path) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """(series id, rows in push order) of every raw file of a Mozilla corpus directory
    (``raw/<folder>/<signature>.csv``, the layout ``convert_mozilla.py`` reads; ids as it writes them)."""
    for path in sorted(corpus_dir.glob("raw/*/*.csv")):
        with path.open(newline="") as fh:
            meta = json.loads(fh.readline())
            rows = list(csv.DictReader(io.StringIO(fh.read())))
        yield _series_id(meta, path), rows


def raw_relocations(corpus_dir: Path, back: int = BACK) -> dict[str, dict[int, int]]:
    """Per series id of a Mozilla corpus directory: labelled row index -> audited index, for the labels
    that move (at most ``back`` pushes earlier)."""
    out: dict[str, dict[int, int]] = {}
    for sid, rows in raw_series(corpus_dir):
        values = [float(r["value"]) for r in rows]
        moves = {}
        for i, r in enumerate(rows):
            if (r.get("alert_status_general") or "").strip() in ("TP", "FP", "FN"):
                j = relocate(values, i, _num(r.get("test_prev_value")), _num(r.get("test_new_value")), back=back)
                if j != i:
                    moves[i] = j
        if moves:
            out[sid] = moves
    return out


def audited(truth: dict, moves: dict[int, int]) -> dict:
    """A copy of a truth record with its labels at their audited pushes."""
    def move(entries: list[dict]) -> list[dict]:
        return [{**e, "index": moves.get(e["index"], e["index"])} for e in entries]
    return {**truth, "change_points": move(truth["change_points"]),
            "false_alerts": move(truth.get("false_alerts", []))}
