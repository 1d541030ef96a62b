"""Teams, who owns which metrics, how to reach them, and per-metric detection overrides."""

from __future__ import annotations

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


class AlertGroup(models.Model):
    """The alerts one culprit build caused, for one owning team (Perfherder's alert summary).

    Its status is derived from its alerts' triage states (`derive_status`), never set by hand.
    """

    class Status(models.TextChoices):
        UNTRIAGED = "untriaged"
        INVESTIGATING = "investigating"  # some alerts triaged, some not
        RESOLVED = "resolved"  # every alert triaged to a final state
        WITHDRAWN = "withdrawn"  # every alert was withdrawn by the detector

    build = models.ForeignKey("metrics.Build", on_delete=models.CASCADE, related_name="alert_groups")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="alert_groups")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.UNTRIAGED)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)
    notified = models.DateTimeField(null=True, blank=True, help_text="When the team's channels were sent it.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["build", "team"], name="alert_group_unique_per_team")]
        indexes = [models.Index(fields=["team", "status", "created"], name="alert_group_team_status")]

    def get_absolute_url(self) -> str:
        from django.urls import reverse

        return reverse("alert-group-page", args=[self.pk])


class Alert(models.Model):
    """One sustained change of one series, with its culprit build and everything needed to triage it."""

    class Direction(models.TextChoices):
        REGRESSION = "regression"
        IMPROVEMENT = "improvement"

    class Detection(models.TextChoices):
        OPEN = "open"  # raised, waiting for more builds to confirm it
        CONFIRMED = "confirmed"
        WITHDRAWN = "withdrawn"  # the data no longer supports it (someone may have been notified)

    class Status(models.TextChoices):
        UNTRIAGED = "untriaged"
        ACKNOWLEDGED = "acknowledged"
        INVALID = "invalid"
        WONTFIX = "wontfix"
        FIXED = "fixed"
        BACKED_OUT = "backedout"
        REASSIGNED = "reassigned"

    FINAL = {"invalid", "wontfix", "fixed", "backedout", "reassigned"}

    series = models.ForeignKey("metrics.Series", on_delete=models.CASCADE, related_name="alerts")
    build = models.ForeignKey("metrics.Build", on_delete=models.CASCADE, related_name="alerts")
    previous_build = models.ForeignKey("metrics.Build", on_delete=models.SET_NULL, null=True, related_name="+")
    first_build = models.ForeignKey("metrics.Build", on_delete=models.SET_NULL, null=True, related_name="+")
    last_build = models.ForeignKey("metrics.Build", on_delete=models.SET_NULL, null=True, related_name="+")
    detected_build = models.ForeignKey("metrics.Build", on_delete=models.SET_NULL, null=True, related_name="+")
    group = models.ForeignKey(AlertGroup, on_delete=models.CASCADE, related_name="alerts")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="alerts")
    direction = models.CharField(max_length=12, choices=Direction.choices)
    rel_change = models.FloatField()
    abs_change = models.FloatField()
    before = models.FloatField()
    after = models.FloatField()
    before_ci_low = models.FloatField(null=True)
    before_ci_high = models.FloatField(null=True)
    after_ci_low = models.FloatField(null=True)
    after_ci_high = models.FloatField(null=True)
    p_value = models.FloatField(null=True)
    test = models.CharField(max_length=100)
    sensitivity = models.FloatField(null=True, help_text="Smallest relative shift detectable within 10 builds.")
    detection = models.CharField(max_length=10, choices=Detection.choices, default=Detection.OPEN)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.UNTRIAGED)
    recovered = models.BooleanField(default=False, help_text="The series went back to its old level.")
    note = models.TextField(blank=True)
    reassigned_to = models.ForeignKey(AlertGroup, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["series", "build"], name="alert_unique_per_series_build")]
        indexes = [
            models.Index(fields=["team", "status", "created"], name="alert_team_status"),
            models.Index(fields=["series", "detection"], name="alert_series_detection"),
        ]


class Delivery(models.Model):
    """One notification of one alert group to one channel, with every attempt's outcome."""

    class Status(models.TextChoices):
        PENDING = "pending"
        SENT = "sent"
        FAILED = "failed"  # permanent error, or retries exhausted

    group = models.ForeignKey(AlertGroup, on_delete=models.CASCADE, related_name="deliveries")
    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    last_attempt = models.DateTimeField(null=True, blank=True)
    sent = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["group", "channel"], name="delivery_unique_per_channel")]


class DeliveryAttempt(models.Model):
    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_log")
    at = models.DateTimeField(auto_now_add=True)
    ok = models.BooleanField()
    status_code = models.PositiveIntegerField(null=True)
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(default=0)


class Check(models.Model):
    """The pre-merge check of one pull-request build against its merge-base (CONTRACT section 6).

    The row is its own outbox: a check left ``pending`` is computed again by the sweep (a lost task, a
    base build that arrived later, or its wait for one running out). ``metrics`` holds one verdict row per
    metric (``alerts.detection.checks.MetricVerdict.to_dict``).
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        PASS = "pass"
        FAIL = "fail"
        INCONCLUSIVE = "inconclusive"
        NO_BASELINE = "no_baseline"

    build = models.OneToOneField("metrics.Build", on_delete=models.CASCADE, related_name="premerge_check")
    app = models.ForeignKey("metrics.App", on_delete=models.CASCADE, related_name="checks")
    platform = models.CharField(max_length=100)
    base_branch = models.CharField(max_length=200)
    base_commit = models.CharField(max_length=100)
    base_build = models.ForeignKey("metrics.Build", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    status = models.CharField(max_length=14, choices=Status.choices, default=Status.PENDING)
    summary = models.JSONField(default=dict, blank=True)
    metrics = models.JSONField(default=list, blank=True)
    markdown = models.TextField(blank=True)
    requested = models.DateTimeField(help_text="When the build (or its last upload) asked for the check.")
    queued = models.DateTimeField(null=True, blank=True)
    computed = models.DateTimeField(null=True, blank=True)
    compute_ms = models.PositiveIntegerField(default=0)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["status", "requested"], name="check_outbox"),
            models.Index(fields=["app", "platform", "base_branch", "base_commit"], name="check_waiting_for_base"),
        ]


class CodeHostPost(models.Model):
    """Posting one check to the app's code host: a commit status and a sticky pull-request comment."""

    class Status(models.TextChoices):
        PENDING = "pending"
        SENT = "sent"
        FAILED = "failed"

    premerge_check = models.OneToOneField(Check, on_delete=models.CASCADE, related_name="post")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    # What was posted last (check status + digest of the Markdown), so a re-computed check is re-posted
    # only when it changed.
    posted_state = models.CharField(max_length=80, blank=True)
    want_state = models.CharField(max_length=80, blank=True)
    comment_id = models.BigIntegerField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    updated = models.DateTimeField(auto_now=True)


class CodeHostAttempt(models.Model):
    """Every request of every posting attempt, with its outcome."""

    post = models.ForeignKey(CodeHostPost, on_delete=models.CASCADE, related_name="attempt_log")
    at = models.DateTimeField(auto_now_add=True)
    action = models.CharField(max_length=40)
    ok = models.BooleanField()
    status_code = models.PositiveIntegerField(null=True)
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
