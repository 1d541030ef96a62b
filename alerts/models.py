"""Teams, who owns which metrics, how to reach them, and per-metric detection overrides."""

from __future__ import annotations

import fnmatch

from django.conf import settings
from django.db import models


class Team(models.Model):
    name = models.CharField(max_length=100, unique=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="perf_teams", blank=True)
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class Channel(models.Model):
    """Where a team's notifications go. `config` holds the kind's settings (url, secret, to)."""

    class Kind(models.TextChoices):
        WEBHOOK = "webhook"
        SLACK = "slack"
        EMAIL = "email"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="channels")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    config = models.JSONField(default=dict)
    # Identity inside a team, so load_config updates a channel instead of adding a twin.
    key = models.CharField(max_length=300)
    created = models.DateTimeField(auto_now_add=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    flagged = models.BooleanField(default=False, help_text="Set after repeated delivery failures.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team", "kind", "key"], name="channel_unique_per_team")]


class OwnerRule(models.Model):
    """One line of the ownership table; rules are evaluated in `position` order and later ones win."""

    position = models.PositiveIntegerField(unique=True)
    app = models.CharField(max_length=200, default="*")
    platform = models.CharField(max_length=200, default="*")
    metric = models.CharField(max_length=200, default="*")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="rules")

    class Meta:
        ordering = ["position"]

    def matches(self, app: str, platform: str, metric: str) -> bool:
        return (
            fnmatch.fnmatchcase(app, self.app)
            and fnmatch.fnmatchcase(platform, self.platform)
            and fnmatch.fnmatchcase(metric, self.metric)
        )


class MetricOverride(models.Model):
    """Per-metric detection settings from config; later rules win, as with owners."""

    position = models.PositiveIntegerField(unique=True)
    app = models.CharField(max_length=200, default="*")
    platform = models.CharField(max_length=200, default="*")
    metric = models.CharField(max_length=200)
    min_change = models.FloatField(null=True, blank=True)
    abs_threshold = models.FloatField(null=True, blank=True)
    sensitivity = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["position"]
