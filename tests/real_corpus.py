"""Synthetic entries in bench/eval_real.py's corpus format, and the eval kit's scoring, for the tests of its report."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from tests.detection.helpers import match


def _pct(values: list[float], q: float) -> float | None:
    return sorted(values)[int(q * (len(values) - 1) + 0.5)] if values else None


# the eval kit's scoring (``../shared/eval/score.py``, which a clone of the repository alone does not have)
score = SimpleNamespace(match=match, pct=_pct)


def entry(seed: int, steps: dict[int, float], labelled: list[int] | None = None, *, noise: float = 0.02,
          length: int = 160) -> tuple[str, dict, dict]:
    """(source, series, truth) of a timing with relative ``steps`` in log-normal ``noise``; the steps at
    ``labelled`` (all by default) are its labels, as given, audited and by alert alike."""
    rng = np.random.default_rng(seed)
    y = 200 * np.exp(rng.normal(0, noise, length))
    for at, rel in steps.items():
        y[at:] *= 1 + rel
    rec = {"id": f"s{seed}", "kind": "time", "direction": "lower_is_better",
           "points": [{"build": str(i), "value": float(v)} for i, v in enumerate(y)]}
    labels = [{"index": at, "direction": "regression" if steps[at] > 0 else "improvement"}
              for at in (steps if labelled is None else labelled)]
    truth = {"id": rec["id"], "change_points": labels, "false_alerts": []}
    truth.update(audited=truth, alert_level=truth)
    return "synthetic", rec, truth
