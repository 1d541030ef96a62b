"""Builds, series and measurements.

Scale this is shaped for: 150+ metrics per app and platform, thousands of builds per branch. The two
hot reads are "the last N points of these series before build X" (detection, graphs), served by the
(series, build_time) index on Measurement, and "all measurements of one build" (build page, compare),
served by the (build, series) unique index. Raw samples are stored packed as little-endian float64.
"""

from __future__ import annotations

import hashlib
import secrets
from array import array

import numpy as np
from django.db import models
from django.urls import reverse


class App(models.Model):
    name = models.CharField(max_length=100, unique=True)
    created = models.DateTimeField(auto_now_add=True)
    # The base branch of pull-request builds that name no `base_branch` (docs/API.md section 6).
    default_branch = models.CharField(max_length=200, default="main")

    def __str__(self) -> str:
        return self.name


class UploadToken(models.Model):
    """A CI credential scoped to one app. Only the SHA-256 of the token is stored."""

    PREFIX = "pp_"

    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="tokens")
    digest = models.CharField(max_length=64, unique=True)
    hint = models.CharField(max_length=12, help_text="First characters, to tell tokens apart.")
    label = models.CharField(max_length=100, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True)
    revoked = models.BooleanField(default=False)

    @staticmethod
    def digest_of(raw: str) -> str:
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()

    @classmethod
    def issue(cls, app: App, label: str = "") -> tuple[UploadToken, str]:
        raw = cls.PREFIX + secrets.token_urlsafe(32)
        token = cls.objects.create(app=app, digest=cls.digest_of(raw), hint=raw[:10], label=label)
        return token, raw


class Metric(models.Model):
    """What a name means within one app: kind, unit and which direction is better."""

    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="metrics")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=10)
    unit = models.CharField(max_length=50, blank=True)
    lower_is_better = models.BooleanField(default=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["app", "name"], name="metric_unique_per_app")]

    def __str__(self) -> str:
        return self.name


class Scope(models.TextChoices):
    """What a build is for, and so which series its measurements go to.

    Only `branch` builds make up a branch's history (detection, graphs, position counters).
    Pull-request builds are compared with their merge-base; requested builds (runs the platform asked CI
    for, to bisect or confirm an alert) narrow or confirm alerts. Both keep their measurements in series
    of their own scope, so they can never shift a branch's history or its series positions.
    """

    BRANCH = "branch"
    PR = "pr"
    REQUESTED = "requested"


class Series(models.Model):
    """One metric's history on one (app, platform, branch, device), in one scope.

    `signature` is the SHA-1 of those explicit fields (as Perfherder hashes its signatures), so the
    identity survives renames of display fields and can be looked up in one indexed probe.
    """

    signature = models.CharField(max_length=40, unique=True)
    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="series")
    platform = models.CharField(max_length=100)
    branch = models.CharField(max_length=200)
    device = models.CharField(max_length=100, blank=True)
    metric = models.ForeignKey(Metric, on_delete=models.CASCADE, related_name="series")
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.BRANCH)
    created = models.DateTimeField(auto_now_add=True)
    last_build_time = models.DateTimeField(null=True, blank=True)
    # Maintained by the analysis (which holds this row's lock): how many points the series had up to
    # and including build `last_point_build`, so the detector's series positions need no COUNT(*).
    n_points = models.PositiveIntegerField(default=0)
    last_point_build = models.BigIntegerField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["app", "platform", "branch"], name="series_app_platform_branch")]

    @staticmethod
    def signature_of(app: str, platform: str, branch: str, device: str, metric: str, scope: str = "branch") -> str:
        # Branch series keep the signatures they had before scopes existed.
        parts = (app, platform, branch, device, metric) + (() if scope == Scope.BRANCH else (scope,))
        key = "\x1f".join(parts)
        return hashlib.sha1(key.encode("utf-8")).hexdigest()

    def __str__(self) -> str:
        device = f"/{self.device}" if self.device else ""
        return f"{self.app_id}:{self.platform}/{self.branch}{device} {self.metric_id}"

    def get_absolute_url(self) -> str:
        return reverse("series-page", args=[self.pk])


class Build(models.Model):
    """One CI build of an app on a platform; uploads for several devices or jobs merge into it."""

    class Analysis(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        FAILED = "failed"

    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="builds")
    platform = models.CharField(max_length=100)
    branch = models.CharField(max_length=200)
    ext_id = models.CharField("build id", max_length=100)
    commit = models.CharField(max_length=100, blank=True)
    parent_commit = models.CharField(max_length=100, blank=True)
    version = models.CharField(max_length=100, blank=True)
    timestamp = models.DateTimeField()
    role = models.CharField(max_length=10, choices=Scope.choices, default=Scope.BRANCH)
    base_commit = models.CharField(max_length=100, blank=True, help_text="A pull-request build's merge-base.")
    base_branch = models.CharField(max_length=200, blank=True)
    requested = models.CharField(max_length=100, blank=True, help_text="The run request this build answers.")
    commits = models.JSONField(default=list, blank=True, help_text="Commits covered since the previous build, oldest first.")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)
    # The outbox: a committed build with analysis PENDING is analysed eventually, whether or not the
    # broker took the task when the upload came (the sweep re-queues it).
    analysis = models.CharField(max_length=10, choices=Analysis.choices, default=Analysis.PENDING)
    analysis_requested = models.DateTimeField(null=True, blank=True)
    analysis_queued = models.DateTimeField(null=True, blank=True)
    analysis_finished = models.DateTimeField(null=True, blank=True)
    analysis_attempts = models.PositiveIntegerField(default=0)
    analysis_error = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["app", "platform", "ext_id"], name="build_unique_per_app_platform")
        ]
        indexes = [
            models.Index(fields=["app", "platform", "branch", "timestamp"], name="build_branch_time"),
            models.Index(fields=["analysis", "analysis_requested"], name="build_analysis_outbox"),
        ]

    def __str__(self) -> str:
        return f"{self.app_id}/{self.platform}#{self.ext_id}"

    def api_url(self) -> str:
        return reverse("api:build-detail", args=[self.app.name, self.platform, self.ext_id])

    def get_absolute_url(self) -> str:
        return reverse("build-page", args=[self.app.name, self.platform, self.ext_id])


def pack_samples(samples: list[float] | tuple[float, ...]) -> bytes:
    """float64 little-endian, 8 bytes a sample: exact round trip, a fifth of the JSON size."""
    packed = array("d", samples)
    if array("d", [1.0]).tobytes()[0] != 0:  # big-endian host
        packed.byteswap()
    return packed.tobytes()


def samples_array(blob: bytes | memoryview | None) -> np.ndarray | None:
    """The stored runs (``pack_samples``) as a read-only float64 array over the bytes, without a copy."""
    if blob is None:
        return None
    return np.frombuffer(blob, dtype="<f8")


def unpack_samples(blob: bytes | memoryview | None) -> list[float] | None:
    values = samples_array(blob)
    return None if values is None else values.tolist()


class Measurement(models.Model):
    """One series' measurement on one build.

    `value` is the summary the graphs and the size detector use: the value itself, the median of the
    samples, or count/total. `build_time` copies the build's timestamp so that history reads walk one
    index without a join.
    """

    series = models.ForeignKey(Series, on_delete=models.CASCADE, related_name="measurements")
    build = models.ForeignKey(Build, on_delete=models.CASCADE, related_name="measurements")
    build_time = models.DateTimeField()
    value = models.FloatField()
    samples = models.BinaryField(null=True)
    n_samples = models.PositiveIntegerField(default=0)
    count = models.BigIntegerField(null=True)
    total = models.BigIntegerField(null=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["build", "series"], name="measurement_unique_per_build")]
        # Matches ORDER BY build_time DESC, build_id DESC LIMIT n: an index scan per series, no sort.
        indexes = [models.Index(fields=["series", "-build_time", "-build"], name="measurement_series_recent")]

    def sample_list(self) -> list[float] | None:
        return unpack_samples(self.samples)


class UploadRecord(models.Model):
    """What each accepted upload changed: an audit trail for CI retries and re-uploads."""

    build = models.ForeignKey(Build, on_delete=models.CASCADE, related_name="uploads")
    token = models.ForeignKey(UploadToken, on_delete=models.SET_NULL, null=True, blank=True)
    format = models.CharField(max_length=20)
    digest = models.CharField(max_length=64)
    measurements = models.PositiveIntegerField()
    changed = models.PositiveIntegerField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["build", "created"], name="upload_build_created")]


