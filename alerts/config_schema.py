"""The config file's schema (docs/API.md section 5): every key typed, unknown keys refused.

Pure validation, no database: `validate_document` turns a parsed YAML document into a `ConfigFile`
or raises `ConfigError` listing every problem with its path (`teams[0].channels[1].secret`).

Omitted means unchanged: an optional key left out of the file is `None` here (or absent from
`model_fields_set`), and the loader leaves the stored value as it is. See README "Configuration as code".
"""

from __future__ import annotations

import difflib
import re
import typing
from typing import Annotated, Any, Literal
from urllib.parse import urlparse

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)

TEAM_NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
APP_NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
BRANCH_RE = re.compile(r"^[A-Za-z0-9._/+-]{1,200}$")
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
GLOB_RE = re.compile(r"^[A-Za-z0-9._/:*?\[\]!-]{1,200}$")
REPO_RE = re.compile(r"^[A-Za-z0-9_.-]{1,99}/[A-Za-z0-9_.-]{1,100}$")
ENV_NAME_RE = re.compile(r"^[A-Z_][A-Z0-9_]{0,99}$")
USERNAME_MAX = 150
URL_MAX = 300  # Channel.key holds a channel's URL


class ConfigError(ValueError):
    """A config file that cannot be applied; `errors` lists (path, message), every problem at once."""

    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = errors
        super().__init__("\n".join(f"{path}: {msg}" for path, msg in errors))


def _matching(pattern: re.Pattern[str], message: str):
    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(message)
        return value

    return AfterValidator(check)


def _http_url(value: str) -> str:
    parsed = urlparse(value)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError("must be an http(s) URL")
    if len(value) > URL_MAX:
        raise ValueError(f"must be at most {URL_MAX} characters")
    return value


def _secret(value: SecretStr) -> SecretStr:
    if not value.get_secret_value().strip():
        raise ValueError("must not be empty: an empty key would let anyone forge the signature")
    return value


def _one_or_many(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _email(value: str) -> str:
    if not EMAIL_RE.match(value):
        raise ValueError("must be an email address")
    return value


Glob = Annotated[str, _matching(GLOB_RE, "must be a name or glob pattern (letters, digits, . _ / : - * ? [ ] !)")]
HttpUrl = Annotated[str, AfterValidator(_http_url)]
Secret = Annotated[SecretStr, AfterValidator(_secret)]
TeamName = Annotated[str, _matching(TEAM_NAME_RE, "must match [A-Za-z0-9._-]{1,100}")]
Username = Annotated[str, Field(min_length=1, max_length=USERNAME_MAX)]
NonNegative = Annotated[float, Field(ge=0)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)


class WebhookChannel(Strict):
    type: Literal["webhook"]
    url: HttpUrl
    secret: Secret


class SlackChannel(Strict):
    type: Literal["slack"]
    url: HttpUrl


def _fits_key(addresses: list[str]) -> list[str]:
    if len(",".join(sorted(addresses))) > URL_MAX:
        raise ValueError(f"too many recipients: together at most {URL_MAX} characters; use a mailing list")
    return addresses


class EmailChannel(Strict):
    type: Literal["email"]
    to: Annotated[
        list[Annotated[str, AfterValidator(_email)]],
        BeforeValidator(_one_or_many), Field(min_length=1), AfterValidator(_fits_key),
    ]


ChannelSpec = Annotated[WebhookChannel | SlackChannel | EmailChannel, Field(discriminator="type")]
CHANNEL_TYPES = ("webhook", "slack", "email")


def _not_null(value: Any) -> Any:
    # Only an explicit null reaches this (defaults are not validated): refuse it, so that leaving a key
    # out (keep what is stored) and emptying it (`[]`) are the only two spellings.
    if value is None:
        raise ValueError("must be a list: write [] to empty it, or leave the key out to keep what is stored")
    return value


NotNull = AfterValidator(_not_null)


class TeamSpec(Strict):
    name: TeamName
    members: Annotated[list[Username] | None, NotNull] = None  # None: omitted, keep the stored members
    channels: Annotated[list[ChannelSpec] | None, NotNull] = None  # None: omitted, keep the stored channels

    @field_validator("channels")
    @classmethod
    def _unique_channels(cls, channels: list[ChannelSpec] | None) -> list[ChannelSpec] | None:
        _refuse_twins([" ".join(channel_identity(c)) for c in channels or []], "channel")
        return channels


class OwnerSpec(Strict):
    app: Glob = "*"
    platform: Glob = "*"
    metric: Glob = "*"
    team: TeamName


class MetricSpec(Strict):
    app: Glob = "*"
    platform: Glob = "*"
    metric: Glob
    min_change: Annotated[float, Field(ge=0, lt=10)] | None = None  # relative: 0.02 is 2% (DetectorConfig's bound)
    abs_threshold: NonNegative | None = None
    sensitivity: Annotated[float, Field(ge=0.01)] | None = None
    abs_floor: NonNegative | None = None


class CiSpec(Strict):
    url: HttpUrl
    secret: Secret
    max_requests_per_day: Annotated[int, Field(ge=0, le=100_000)] = 40


class CodeHostSpec(Strict):
    type: Literal["github"]
    repo: Annotated[str, _matching(REPO_RE, "must be owner/name")]
    token_env: Annotated[str, _matching(ENV_NAME_RE, "must be an environment variable name")] = "PERF_GITHUB_TOKEN"
    api_url: HttpUrl = "https://api.github.com"


class AppSpec(Strict):
    """`ci`/`code_host` omitted: unchanged; given as null: removed; given: replaced as a whole."""

    name: Annotated[str, _matching(APP_NAME_RE, "must match [A-Za-z0-9._-]{1,100}")]
    default_branch: Annotated[str, _matching(BRANCH_RE, "must be a branch name")] | None = None
    ci: CiSpec | None = None
    code_host: CodeHostSpec | None = None


class BudgetSpec(Strict):
    app: Glob = "*"
    platform: Glob = "*"
    metric: Glob
    max_bytes: Annotated[int, Field(gt=0, le=2**62)]
    team: TeamName


class ConfigFile(Strict):
    """The whole file. A section left out is `None`: its table is left as it is."""

    teams: Annotated[list[TeamSpec] | None, NotNull] = None
    owners: Annotated[list[OwnerSpec] | None, NotNull] = None
    metrics: Annotated[list[MetricSpec] | None, NotNull] = None
    apps: Annotated[list[AppSpec] | None, NotNull] = None
    budgets: Annotated[list[BudgetSpec] | None, NotNull] = None

    @field_validator("teams")
    @classmethod
    def _unique_teams(cls, teams: list[TeamSpec] | None) -> list[TeamSpec] | None:
        _refuse_twins([t.name for t in teams or []], "team")
        return teams

    @field_validator("apps")
    @classmethod
    def _unique_apps(cls, apps: list[AppSpec] | None) -> list[AppSpec] | None:
        _refuse_twins([a.name for a in apps or []], "app")
        return apps


def _refuse_twins(names: list[str], what: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"{what} {name!r} is listed twice")
        seen.add(name)


def channel_identity(spec: WebhookChannel | SlackChannel | EmailChannel) -> tuple[str, str]:
    """(kind, key): how a listed channel is matched to a stored one; settings may change under it."""
    if isinstance(spec, EmailChannel):
        return spec.type, ",".join(sorted(spec.to))
    return spec.type, spec.url


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models a field annotation can hold (through Optional, list, Annotated and unions)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _keys_at(loc: tuple[int | str, ...]) -> list[str]:
    """The keys allowed in the mapping at `loc` (a pydantic location, channel tags included)."""
    models: list[type[BaseModel]] = [ConfigFile]
    for part in loc:
        if isinstance(part, int):
            continue
        if len(models) > 1:  # a discriminated union: the location names the tag next
            models = [m for m in models if part in typing.get_args(m.model_fields["type"].annotation)]
            continue
        fields = models[0].model_fields if models else {}
        models = _models_in(fields[part].annotation) if part in fields else []
    return list(models[0].model_fields) if len(models) == 1 else []


def _unknown_key_message(loc: tuple[int | str, ...]) -> str:
    allowed = _keys_at(loc[:-1])
    close = difflib.get_close_matches(str(loc[-1]), allowed, n=1, cutoff=0.6)
    if close:
        return f"unknown key; did you mean {close[0]!r}?"
    return "unknown key" + (f"; allowed: {', '.join(allowed)}" if allowed else "")


def _problem(err: dict[str, Any]) -> tuple[str, str]:
    raw_loc = tuple(err["loc"])
    loc = list(raw_loc)
    # The discriminated union puts the channel's type into the path: teams[0].channels[1].webhook.secret.
    for i in range(1, len(loc)):
        if loc[i] in CHANNEL_TYPES and isinstance(loc[i - 1], int):
            del loc[i]
            break
    kind, msg = err["type"], err["msg"]
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        loc.append("type")
        msg = "must be one of " + ", ".join(CHANNEL_TYPES)
    elif kind == "extra_forbidden":
        msg = _unknown_key_message(raw_loc)
    elif kind == "missing":
        msg = "is required"
    elif kind in ("model_type", "model_attributes_type", "dict_type"):
        msg = "must be a mapping"
    elif kind == "list_type":
        msg = "must be a list"
    elif kind == "value_error":
        msg = msg.removeprefix("Value error, ")
    # Never echo the offending value: it may be a secret.
    return _path(tuple(loc)), msg


def validate_document(doc: Any) -> ConfigFile:
    """The parsed YAML as a `ConfigFile`, or `ConfigError` with every problem and its path."""
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise ConfigError([("", "the top level must be a mapping of sections (teams, owners, metrics, apps, budgets)")])
    try:
        return ConfigFile.model_validate(doc)
    except ValidationError as exc:
        problems = [_problem(e) for e in exc.errors(include_input=False, include_url=False)]
        raise ConfigError(list(dict.fromkeys(problems))) from None
