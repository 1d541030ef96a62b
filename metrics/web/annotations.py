"""Extension point for the metric pages: other apps (alerts) annotate a build's series.

metrics must not import alerts, so alerts registers a function here when its web package loads
(alerts/web/__init__.py, imported by the URLconf before any page is served).
"""

from __future__ import annotations

from collections.abc import Callable

from metrics.models import Build

# A build annotator returns {series id: {"text": str, "url": str, "cls": str}} for one build.
BuildAnnotator = Callable[[Build], dict[int, dict]]
_build_annotators: list[BuildAnnotator] = []


def register_build_annotator(fn: BuildAnnotator) -> BuildAnnotator:
    if fn not in _build_annotators:
        _build_annotators.append(fn)
    return fn


def annotate_build(build: Build) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for fn in _build_annotators:
        for series_id, note in fn(build).items():
            out.setdefault(series_id, []).append(note)
    return out
