"""What the alerts app adds to the metric pages: the alerts raised at a build, per series."""

from __future__ import annotations

from alerts.models import Alert
from alerts.web.format import pct
from metrics.models import Build
from metrics.web.annotations import register_build_annotator


@register_build_annotator
def alerts_at_build(build: Build) -> dict[int, dict]:
    out = {}
    for a in Alert.objects.filter(build=build).exclude(detection=Alert.Detection.WITHDRAWN).select_related("group"):
        out[a.series_id] = {"text": f"{a.direction} {pct(a.rel_change)} · {a.detection} · {a.status}",
                            "url": a.group.get_absolute_url(), "cls": a.direction}
    return out
