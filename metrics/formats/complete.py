"""Merge query parameters into a parsed upload and check what every stored upload needs.

Query parameters (``?app=&platform=&branch=&build=&commit=&timestamp=&device=``, also
``?version=``, ``?parent_commit=``, ``?base_commit=``, ``?base_branch=``, ``?requested=`` and
``?commits=`` (comma-separated)) fill the build fields the CI formats lack. **A non-empty query
parameter overrides the body's value**, for every format including native: the CI job's command line
is the more specific source (e.g. ``--device`` when the benchmark JSON names a model). Empty
parameters are ignored.

Then:

* ``app``, ``platform``: required, ``^[A-Za-z0-9._-]{1,100}$``
* ``branch``: required, ``^[A-Za-z0-9._/+-]{1,200}$``
* ``build.id``: required, ``^[A-Za-z0-9._:+-]{1,100}$`` (it is a URL segment of
  ``/api/v1/builds/{app}/{platform}/{build}``)
* ``device``: optional (``""`` when absent), ``^[A-Za-z0-9._ :+()-]{1,100}$``
* ``build.commit``, ``build.parent_commit``: optional, ``^[A-Za-z0-9._/-]{1,100}$``
* ``build.version``: optional, at most 100 characters
* ``build.base_commit`` (a pull-request build's merge-base), ``build.base_branch`` (only with a
  base commit; ``None`` means the app's default branch), ``build.requested`` (the id of the platform's
  run request this build answers; it needs ``build.commit``): optional; a build is at most one of a
  pull-request build and a requested build
* ``build.commits``: optional, the commits the build covers, oldest first, each like a commit; when
  ``build.commit`` is given the list must end with it, else its last entry becomes the commit
* ``build.timestamp``: optional; ISO 8601 (``2026-12-01T10:00:00Z``, offsets, or naive = UTC), not
  before 2000-01-01 and not more than a year (366 days) after ``now``; returned as an aware UTC datetime.
  ``None`` when absent: the ingest layer keeps the stored build's time or uses the receive time.

All problems are reported together as :class:`UploadInvalid` with paths ``app``, ``platform``,
``branch``, ``device``, ``build.id``, ``build.commit``, ``build.parent_commit``, ``build.version``,
``build.timestamp``, ``build.base_commit``, ``build.base_branch``, ``build.requested``,
``build.commits``, ``metrics``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from metrics.formats.base import FieldError, ParsedMetric, ParsedUpload, UploadInvalid

APP_RE = re.compile(r"[A-Za-z0-9._-]{1,100}")
PLATFORM_RE = APP_RE
BRANCH_RE = re.compile(r"[A-Za-z0-9._/+-]{1,200}")
BUILD_ID_RE = re.compile(r"[A-Za-z0-9._:+-]{1,100}")
DEVICE_RE = re.compile(r"[A-Za-z0-9._ :+()-]{1,100}")
COMMIT_RE = re.compile(r"[A-Za-z0-9._/-]{1,100}")
MAX_VERSION = 100
REQUEST_ID_RE = BUILD_ID_RE
MAX_COMMITS = 1000
# ISO 8601 / RFC 3339 date-times as CI tools write them; no offset means UTC. Checked before
# datetime.fromisoformat, which also takes forms (week dates, basic format) the API does not promise.
TIMESTAMP_RE = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})?")
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
#: How far ahead of the server's clock a build's timestamp may be: a guard against garbage (a year 9999), not
#: clock skew. A day refused the synthetic histories CI tests and outside checks build on dates ahead of today.
MAX_AHEAD = timedelta(days=366)


@dataclass(frozen=True)
class CompleteUpload:
    """An upload with every field the store needs, checked."""

    app: str
    platform: str
    branch: str
    device: str  # "" when absent
    build_id: str
    commit: str | None
    parent_commit: str | None
    version: str | None
    timestamp: datetime | None  # aware, UTC
    metrics: tuple[ParsedMetric, ...]
    base_commit: str | None = None
    base_branch: str | None = None  # None: the app's default branch
    requested: str | None = None
    commits: tuple[str, ...] = ()

    @property
    def role(self) -> str:
        """"pr" for a pull-request build, "requested" for a build the platform asked CI for, else "branch"."""
        if self.requested:
            return "requested"
        if self.base_commit:
            return "pr"
        return "branch"


def parse_timestamp(raw: str, now: datetime) -> tuple[datetime | None, str | None]:
    """(aware UTC datetime, None) or (None, error message)."""
    text = raw.strip()
    if not TIMESTAMP_RE.fullmatch(text):
        return None, "must be an ISO 8601 date-time such as 2026-12-01T10:00:00Z"
    if "." in text:  # Python takes at most microseconds
        head, _, rest = text.partition(".")
        digits = "".join(c for c in rest if c.isdigit())
        text = f"{head}.{digits[:6]}{rest[len(digits):]}"
    if text.endswith(("z", "Z")):
        text = text[:-1] + "+00:00"
    try:
        ts = datetime.fromisoformat(text)
        ts = ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)
    except (ValueError, OverflowError):
        return None, "must be an ISO 8601 date-time such as 2026-12-01T10:00:00Z"
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    if ts < EARLIEST:
        return None, "must not be before 2000-01-01"
    if ts > now + MAX_AHEAD:
        return None, "must not be more than a year in the future"
    return ts, None


def _merged(body_value: str | None, params: Mapping[str, str], key: str) -> tuple[str | None, str]:
    """The value to use and where it came from ("?key=" or "the body")."""
    p = params.get(key)
    if isinstance(p, str) and p != "":
        return p, f"?{key}="
    return body_value, "the body"


def complete(parsed: ParsedUpload, params: Mapping[str, str], *, now: datetime) -> CompleteUpload:
    """``parsed`` with query parameters merged in (a non-empty parameter wins) and every field checked."""
    errors: list[FieldError] = []

    def field(path: str, body_value: str | None, key: str, pattern: re.Pattern[str] | None,
              required: bool, rule: str, max_len: int | None = None) -> str | None:  # fmt: skip
        value, source = _merged(body_value, params, key)
        if value is None or value == "":
            if required:
                errors.append(FieldError(path, f"is required: give it in the body or as ?{key}="))
            return None
        if not isinstance(value, str):
            errors.append(FieldError(path, "must be a string"))
            return None
        if pattern is not None and pattern.fullmatch(value) is None:
            errors.append(FieldError(path, f"{rule} (got {value[:120]!r} from {source})"))
            return None
        if max_len is not None and len(value) > max_len:
            errors.append(FieldError(path, f"{rule} (from {source})"))
            return None
        return value

    app = field("app", parsed.app, "app", APP_RE, True, "must be 1-100 characters from A-Z a-z 0-9 . _ -")
    platform = field(
        "platform",
        parsed.platform,
        "platform",
        PLATFORM_RE,
        True,
        "must be 1-100 characters from A-Z a-z 0-9 . _ -",
    )
    branch = field(
        "branch",
        parsed.branch,
        "branch",
        BRANCH_RE,
        True,
        "must be 1-200 characters from A-Z a-z 0-9 . _ / + -",
    )
    device = field(
        "device",
        parsed.device,
        "device",
        DEVICE_RE,
        False,
        "must be 1-100 characters from A-Z a-z 0-9 . _ space : + ( ) -",
    )
    b = parsed.build
    build_id = field(
        "build.id", b.id, "build", BUILD_ID_RE, True, "must be 1-100 characters from A-Z a-z 0-9 . _ : + -"
    )
    commit_rule = "must be 1-100 characters from A-Z a-z 0-9 . _ / -"
    commit = field("build.commit", b.commit, "commit", COMMIT_RE, False, commit_rule)
    parent_commit = field(
        "build.parent_commit", b.parent_commit, "parent_commit", COMMIT_RE, False, commit_rule
    )
    version = field(
        "build.version", b.version, "version", None, False, f"at most {MAX_VERSION} characters", MAX_VERSION
    )

    base_commit = field("build.base_commit", b.base_commit, "base_commit", COMMIT_RE, False, commit_rule)
    base_branch = field(
        "build.base_branch", b.base_branch, "base_branch", BRANCH_RE, False,
        "must be 1-200 characters from A-Z a-z 0-9 . _ / + -",
    )
    requested = field(
        "build.requested", b.requested, "requested", REQUEST_ID_RE, False,
        "must be 1-100 characters from A-Z a-z 0-9 . _ : + -",
    )
    if base_branch and not base_commit:
        errors.append(FieldError("build.base_branch", "is only meaningful with build.base_commit (a pull-request build)"))
    if requested and base_commit:
        errors.append(FieldError("build.requested", "a requested build cannot also be a pull-request build (base_commit)"))
    commits = _commit_list(b.commits, params, errors)
    if commits:
        if commit is None and not errors:
            commit = commits[-1]
        elif commit is not None and commits[-1] != commit:
            errors.append(FieldError("build.commits", f"must end with the build's own commit {commit!r}"))
    if requested and commit is None:
        errors.append(FieldError("build.commit", "is required for a requested build: the commit CI ran"))

    timestamp: datetime | None = None
    raw_ts, source = _merged(b.timestamp, params, "timestamp")
    if isinstance(raw_ts, str) and raw_ts != "":
        timestamp, problem = parse_timestamp(raw_ts, now)
        if problem:
            errors.append(FieldError("build.timestamp", f"{problem} (got {raw_ts[:60]!r} from {source})"))
    elif raw_ts is not None and not isinstance(raw_ts, str):
        errors.append(FieldError("build.timestamp", "must be a string"))

    if not parsed.metrics:
        errors.append(FieldError("metrics", "must hold at least one metric"))

    if errors:
        raise UploadInvalid(errors)
    assert app and platform and branch and build_id
    return CompleteUpload(
        app=app,
        platform=platform,
        branch=branch,
        device=device or "",
        build_id=build_id,
        commit=commit,
        parent_commit=parent_commit,
        version=version,
        timestamp=timestamp,
        metrics=tuple(parsed.metrics),
        base_commit=base_commit,
        base_branch=base_branch,
        requested=requested,
        commits=commits,
    )


def _commit_list(body: tuple[str, ...] | None, params: Mapping[str, str], errors: list[FieldError]) -> tuple[str, ...]:
    """`build.commits` from the body, or `?commits=a,b,c` (which wins, as every parameter does)."""
    raw = params.get("commits")
    items: tuple[str, ...] | None = tuple(c.strip() for c in raw.split(",")) if isinstance(raw, str) and raw else body
    if not items:
        return ()
    if len(items) > MAX_COMMITS:
        errors.append(FieldError("build.commits", f"at most {MAX_COMMITS} commits (got {len(items)})"))
        return ()
    bad = [i for i, c in enumerate(items) if COMMIT_RE.fullmatch(c) is None]
    for i in bad[:5]:
        errors.append(FieldError(f"build.commits[{i}]", "must be 1-100 characters from A-Z a-z 0-9 . _ / -"))
    return () if bad else items
