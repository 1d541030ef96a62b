"""Who owns a metric: CODEOWNERS-style glob rules from the config file, later rules win.

Every alert belongs to exactly one team: when no rule matches, the fallback team
(`PERF_DEFAULT_TEAM`, created on first use) owns it, so nothing is ever unrouted.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from alerts.detection.model import DetectorConfig
from alerts.models import MetricOverride, OwnerRule, Team

# The override columns the detector takes (abs_floor once DetectorConfig has it).
OVERRIDE_FIELDS = tuple(
    f for f in ("min_change", "abs_threshold", "sensitivity", "abs_floor")
    if f in {field.name for field in dataclasses.fields(DetectorConfig)}
)


@dataclass(frozen=True)
class Rule:
    app: str
    platform: str
    metric: str
    team_id: int

    def matches(self, app: str, platform: str, metric: str) -> bool:
        return (
            fnmatch.fnmatchcase(app, self.app)
            and fnmatch.fnmatchcase(platform, self.platform)
            and fnmatch.fnmatchcase(metric, self.metric)
        )


def owner(rules: Sequence[Rule], app: str, platform: str, metric: str) -> int | None:
    """The team id of the last matching rule, or None."""
    for rule in reversed(rules):
        if rule.matches(app, platform, metric):
            return rule.team_id
    return None


class Owners:
    """The ownership table loaded once per analysis, with the fallback team resolved lazily."""

    def __init__(self) -> None:
        self.rules = [Rule(r.app, r.platform, r.metric, r.team_id) for r in OwnerRule.objects.order_by("position")]
        self._fallback: int | None = None

    def team_id(self, app: str, platform: str, metric: str) -> int:
        found = owner(self.rules, app, platform, metric)
        if found is not None:
            return found
        if self._fallback is None:
            name = getattr(settings, "PERF_DEFAULT_TEAM", "central-perf")
            self._fallback = Team.objects.get_or_create(name=name)[0].pk
        return self._fallback


def metric_overrides(app: str, platform: str, metric: str, rows: Sequence[MetricOverride]) -> dict[str, float]:
    """Detection overrides for one metric: fields of every matching row, later rows win."""
    out: dict[str, float] = {}
    for row in rows:
        if (
            fnmatch.fnmatchcase(app, row.app)
            and fnmatch.fnmatchcase(platform, row.platform)
            and fnmatch.fnmatchcase(metric, row.metric)
        ):
            for field in OVERRIDE_FIELDS:
                value = getattr(row, field)
                if value is not None:
                    out[field] = value
    return out
