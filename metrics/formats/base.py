"""The format-independent upload model every parser produces."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

KINDS: tuple[str, ...] = ("time", "memory", "size", "rate", "count", "score", "other")
METRIC_NAME_RE = re.compile(r"^[A-Za-z0-9._/:-]{1,200}$")
MAX_SAMPLES = 10_000


@dataclass(frozen=True)
class FieldError:
    """One problem with the input, at a JSON path such as ``metrics[3].samples[2]``."""

    path: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


class UploadInvalid(ValueError):
    """The body cannot be stored; ``errors`` says where and why."""

    def __init__(self, errors: list[FieldError]):
        self.errors = list(errors)
        super().__init__("; ".join(f"{e.path}: {e.message}" for e in self.errors[:5]))


class UploadConflict(UploadInvalid):
    """The body is well-formed but contradicts what is stored (HTTP 409), e.g. a metric's kind or unit."""


@dataclass(frozen=True)
class BuildInfo:
    """Build fields a format may or may not carry; missing ones come from query parameters."""

    id: str | None = None
    commit: str | None = None
    parent_commit: str | None = None
    timestamp: str | None = None  # ISO 8601 as given; parsed and checked by the ingest layer
    version: str | None = None
    # Pull-request builds name their merge-base (docs/API.md section 6).
    base_commit: str | None = None
    base_branch: str | None = None
    # A build CI ran because the platform asked (docs/API.md section 7): the request's id.
    requested: str | None = None
    # The commits the build covers since the previous build of its branch, oldest first.
    commits: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ParsedMetric:
    """One measurement of one metric for one build.

    Exactly one of ``value``, ``samples`` or (``count``, ``total``) is set. ``direction_given``: whether the
    upload stated ``lower_is_better`` (a native metric may leave it out: true for a new metric, the stored
    direction for a known one).
    """

    name: str
    kind: str
    unit: str
    lower_is_better: bool = True
    value: float | None = None
    samples: tuple[float, ...] | None = None
    count: int | None = None
    total: int | None = None
    direction_given: bool = True


@dataclass(frozen=True)
class ParsedUpload:
    app: str | None = None
    platform: str | None = None
    branch: str | None = None
    device: str | None = None
    build: BuildInfo = field(default_factory=BuildInfo)
    metrics: tuple[ParsedMetric, ...] = ()
