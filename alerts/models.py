"""Teams, who owns which metrics, how to reach them, and per-metric detection overrides."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.db import models


class Team(models.Model):
    name = models.CharField(max_length=100, unique=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="perf_teams", blank=True)
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class ChannelQuerySet(models.QuerySet):
    def active(self) -> ChannelQuerySet:
        """Channels that get deliveries and are shown: not archived by a config that dropped them."""
        return self.filter(archived__isnull=True)


class Channel(models.Model):
    """Where a team's notifications go. `config` holds the kind's settings (url, secret, to).

    A channel the config file no longer lists is archived, not deleted, so its delivery history stays.
    """

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
    archived = models.DateTimeField(null=True, blank=True, help_text="When the config stopped listing it.")

    objects = ChannelQuerySet.as_manager()

    @property
    def display(self) -> str:
        """What pages may show: the host of a URL (a Slack or webhook path is often a credential), or
        the email recipients. Never the secret."""
        if self.kind == self.Kind.EMAIL:
            return ", ".join(self.config.get("to") or [])
        host = urlsplit(self.config.get("url") or self.key).hostname or "?"
        return f"{host} (address hidden)"

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team", "kind", "key"], name="channel_unique_per_team")]


class GlobRule(models.Model):
    """Row N of an ordered config table (`owners`, `metrics`, `budgets`): globs on app and platform; rules are
    evaluated in `position` order and later ones win, like CODEOWNERS."""

    position = models.PositiveIntegerField(unique=True)
    app = models.CharField(max_length=200, default="*")
    platform = models.CharField(max_length=200, default="*")

    class Meta:
        abstract = True
        ordering = ["position"]


class OwnerRule(GlobRule):
    """One line of the ownership table."""

    metric = models.CharField(max_length=200, default="*")
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="rules")


class MetricOverride(GlobRule):
    """Per-metric detection settings from config; later rules win field by field."""

    metric = models.CharField(max_length=200)
    min_change = models.FloatField(null=True, blank=True)
    abs_threshold = models.FloatField(null=True, blank=True)
    sensitivity = models.FloatField(null=True, blank=True)
    # An absolute change at or above this (metric unit) is reported even below the relative min_change.
    abs_floor = models.FloatField(null=True, blank=True)


class SizeBudget(GlobRule):
    """A cap on the sum of the matching size metrics of a build, owned by one team."""

    metric = models.CharField(max_length=200)
    max_bytes = models.BigIntegerField()
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="budgets")


class AppIntegration(models.Model):
    """Per-app CI endpoint (bisection and confirmation requests) and code host (pre-merge checks).

    An empty `ci_url` means no CI endpoint; an empty `code_host_type` means no code host. `ci_secret`
    signs the requests and must never be shown or logged.
    """

    app = models.OneToOneField("metrics.App", on_delete=models.CASCADE, related_name="integration")
    ci_url = models.URLField(max_length=500, blank=True)
    ci_secret = models.CharField(max_length=500, blank=True)
    ci_max_requests_per_day = models.PositiveIntegerField(default=40)
    code_host_type = models.CharField(max_length=20, blank=True)
    code_host_repo = models.CharField(max_length=200, blank=True)
    code_host_token_env = models.CharField(max_length=100, default="PERF_GITHUB_TOKEN")
    code_host_api_url = models.URLField(max_length=500, default="https://api.github.com")

    @property
    def has_ci(self) -> bool:
        return bool(self.ci_url)

    @property
    def has_code_host(self) -> bool:
        return bool(self.code_host_type)

    def __repr__(self) -> str:  # never the secret
        return f"<AppIntegration app={self.app_id} ci={self.ci_url!r} code_host={self.code_host_repo!r}>"


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
    # PROTECT: deleting a team must not silently take its alerts and their history with it.
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="alert_groups")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.UNTRIAGED)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)
    notified = models.DateTimeField(null=True, blank=True, help_text="When the team's channels were sent it.")
    not_sent = models.CharField(max_length=200, blank=True,
                                help_text="Why the group, though due, was not sent (set with notified).")

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

    class Confirmation(models.TextChoices):
        NONE = "none"  # nothing asked of CI (no CI endpoint, or nothing to narrow)
        REQUESTED = "requested"  # runs requested, waiting for CI
        BISECTED = "bisected"  # culprit_commit named by bisection (the shift reproduced)
        CONFIRMED = "confirmed"  # one-commit range: the re-run reproduced the shift
        NOT_REPRODUCED = "not_reproduced"  # re-runs did not show it: withdrawn, never notified

    FINAL = {"invalid", "wontfix", "fixed", "backedout", "reassigned"}

    series = models.ForeignKey("metrics.Series", on_delete=models.CASCADE, related_name="alerts")
    build = models.ForeignKey("metrics.Build", on_delete=models.CASCADE, related_name="alerts")
    previous_build = models.ForeignKey("metrics.Build", on_delete=models.SET_NULL, null=True, related_name="+")
    first_build = models.ForeignKey("metrics.Build", on_delete=models.SET_NULL, null=True, related_name="+")
    last_build = models.ForeignKey("metrics.Build", on_delete=models.SET_NULL, null=True, related_name="+")
    detected_build = models.ForeignKey("metrics.Build", on_delete=models.SET_NULL, null=True, related_name="+")
    # The build whose analysis made the detector's latest decision on this alert (raised, refined, confirmed,
    # withdrawn, merged); None for alerts a replay withdrew without raising them again, and those stored before it
    # was recorded. A build that arrives late is replayed from the detection build of every alert raised before it
    # and decided at or after it, so the replay resumes from each alert as it stood then (alerts.analysis
    # .replay_start).
    decided_build = models.ForeignKey("metrics.Build", on_delete=models.SET_NULL, null=True, blank=True,
                                      related_name="+")
    group = models.ForeignKey(AlertGroup, on_delete=models.CASCADE, related_name="alerts")
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="alerts")
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
    # "shift": a step at the culprit; "drift": a gradual change over window_builds builds at slope_per_build
    # (metric unit per build), before/after being the levels at the window's two ends. The worker raises a
    # drift at its latest step (first_build is where it started) and merges the alerts it continues into it.
    shape = models.CharField(max_length=8, choices=[("shift", "shift"), ("drift", "drift")], default="shift")
    slope_per_build = models.FloatField(null=True, blank=True)
    window_builds = models.IntegerField(null=True, blank=True)
    merged_into = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="merged",
                                    help_text="The drift this (withdrawn) alert became part of.")
    sent_change = models.FloatField(null=True, blank=True,
                                    help_text="|rel_change| when a group holding this alert was last sent.")
    sensitivity = models.FloatField(null=True, help_text="Smallest relative shift detectable within 10 builds.")
    detection = models.CharField(max_length=10, choices=Detection.choices, default=Detection.OPEN)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.UNTRIAGED)
    recovered = models.BooleanField(default=False, help_text="The series went back to its old level.")
    note = models.TextField(blank=True)
    reassigned_to = models.ForeignKey(AlertGroup, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    # Bisection and confirmation (docs/API.md section 7), kept by alerts.bisection.
    culprit_commit = models.CharField(max_length=100, blank=True)
    range_commits = models.PositiveIntegerField(null=True, blank=True)
    confirmation = models.CharField(max_length=16, choices=Confirmation.choices, default=Confirmation.NONE)
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
    # PROTECT: a channel with deliveries is archived, never deleted, so the history stays.
    channel = models.ForeignKey(Channel, on_delete=models.PROTECT, related_name="deliveries")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    last_attempt = models.DateTimeField(null=True, blank=True)
    sent = models.DateTimeField(null=True, blank=True)
    # Set while a sender has the delivery in flight (no lock is held across the network call).
    claimed_until = models.DateTimeField(null=True, blank=True)
    # When the retry after a transient failure is due (backoff or the receiver's Retry-After): the sweep
    # re-publishes a retry the broker lost, and an attempt before it sends nothing.
    next_attempt = models.DateTimeField(null=True, blank=True)

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
    """The pre-merge check of one pull-request build against its merge-base (docs/API.md section 6).

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
    # When the next attempt is due: at planning (a lost first hand-off is found by the sweep), then after a
    # transient failure its backoff or the code host's Retry-After; None once sent or failed.
    next_attempt = models.DateTimeField(null=True, blank=True)
    # Set while a sender is posting it (no lock or transaction is held across the code host's API).
    claimed_until = models.DateTimeField(null=True, blank=True)
    # The `want_state` whose commit status is posted: a retry after only the comment failed skips the status.
    status_posted = models.CharField(max_length=80, blank=True)


class CodeHostAttempt(models.Model):
    """Every request of every posting attempt, with its outcome."""

    post = models.ForeignKey(CodeHostPost, on_delete=models.CASCADE, related_name="attempt_log")
    at = models.DateTimeField(auto_now_add=True)
    action = models.CharField(max_length=40)
    ok = models.BooleanField()
    status_code = models.PositiveIntegerField(null=True)
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(default=0)


class BudgetAlert(models.Model):
    """A size budget crossed at a branch build: the sum of its metrics went above `max_bytes`.

    It joins the alert group of (that build, the budget's team), so it is notified with the group
    through the team's channels and triaged like the group's alerts (docs/SIZE.md). The budget's
    glob and cap are copied, so the alert still says what was crossed after the config changes.
    """

    budget = models.ForeignKey(SizeBudget, on_delete=models.SET_NULL, null=True, blank=True, related_name="alerts")
    metric = models.CharField(max_length=200, help_text="The budget's metric glob when it was crossed.")
    max_bytes = models.BigIntegerField()
    build = models.ForeignKey("metrics.Build", on_delete=models.CASCADE, related_name="budget_alerts")
    previous_build = models.ForeignKey("metrics.Build", on_delete=models.SET_NULL, null=True, related_name="+")
    group = models.ForeignKey(AlertGroup, on_delete=models.CASCADE, related_name="budget_alerts")
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="budget_alerts")
    total = models.FloatField(help_text="Bytes of the matching metrics at the build.")
    previous_total = models.FloatField(null=True)
    status = models.CharField(max_length=12, choices=Alert.Status.choices, default=Alert.Status.UNTRIAGED)
    note = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["build", "team", "metric"], name="budget_alert_unique_per_build")]

    @property
    def over_by(self) -> float:
        return self.total - self.max_bytes
class Bisection(models.Model):
    """The bisection/confirmation of one alert: its culprit range and where the procedure stands.

    `commits` is ``[c_0, c_1, ..., c_R]``: c_0 the previous good build's commit, c_1..c_R the culprit
    range. What to ask next is a pure function of the answered requests (alerts.detection.bisect.decide),
    so this row holds only what that needs (the range, the alert's reference levels and noise) and the
    outcome.
    """

    class Phase(models.TextChoices):
        RUNNING = "running"
        DONE = "done"

    alert = models.OneToOneField(Alert, on_delete=models.CASCADE, related_name="bisection")
    build = models.ForeignKey("metrics.Build", on_delete=models.CASCADE, related_name="+",
                              help_text="The culprit build the range was taken from.")
    commits = models.JSONField(default=list)
    reference = models.JSONField(default=dict)
    thin = models.BooleanField(default=False)
    phase = models.CharField(max_length=10, choices=Phase.choices, default=Phase.RUNNING)
    lo = models.PositiveIntegerField(default=0)
    hi = models.PositiveIntegerField(default=0)
    outcome = models.CharField(max_length=20, blank=True)
    detail = models.TextField(blank=True)
    started = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["phase", "started"], name="bisection_phase_started")]


class RunRequest(models.Model):
    """One `runs.requested` call to an app's CI, and its answer: the outbox of bisection.

    A row in state `requested` with `sent` unset is still to be POSTed (the sweep re-publishes it);
    every attempt is appended to `attempt_log`. The answer is the requested build CI uploads with
    `build.requested` = `public_id`.
    """

    class Reason(models.TextChoices):
        BISECT = "bisect"
        CONFIRM = "confirm"

    class State(models.TextChoices):
        REQUESTED = "requested"
        ANSWERED = "answered"
        EXPIRED = "expired"  # CI never answered within PERF_REQUEST_TIMEOUT_SECONDS
        FAILED = "failed"  # CI refused it, or the answer was unusable

    public_id = models.CharField(max_length=40, unique=True)
    app = models.ForeignKey("metrics.App", on_delete=models.CASCADE, related_name="run_requests")
    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="run_requests")
    bisection = models.ForeignKey(Bisection, on_delete=models.CASCADE, related_name="requests")
    reason = models.CharField(max_length=10, choices=Reason.choices)
    index = models.PositiveIntegerField(help_text="Position of the commit in the bisection's commits.")
    commit = models.CharField(max_length=100)
    build_ext_id = models.CharField(max_length=100, help_text="The build id CI uploads the runs as.")
    runs = models.PositiveIntegerField()
    metrics = models.JSONField(default=list)
    state = models.CharField(max_length=10, choices=State.choices, default=State.REQUESTED)
    created = models.DateTimeField(auto_now_add=True)
    sent = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    attempt_log = models.JSONField(default=list)
    claimed_until = models.DateTimeField(null=True, blank=True,
                                         help_text="A sender is POSTing it until then (claim, send, record).")
    error = models.TextField(blank=True)
    answered = models.DateTimeField(null=True, blank=True)
    answer = models.ForeignKey("metrics.Build", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    outcome = models.CharField(max_length=20, blank=True, help_text="before, after, unclear, or why it failed")
    observation = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["state", "sent"], name="run_request_outbox"),
            models.Index(fields=["app", "created"], name="run_request_app_created"),
        ]
