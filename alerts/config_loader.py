"""Configuration as code (CONTRACT section 5): teams, channels, ownership rules, metric overrides.

Applying a file is idempotent: teams and channels are matched by name and address and updated, never
duplicated. The file is the truth for what it lists: a listed team's channels not in the file are
removed, and the owner and metric tables are replaced as a whole, because their order carries
meaning (later rules win). Teams the file does not list are kept. Members are usernames; a missing
user is created without a usable password (they sign in once an admin sets one or through SSO).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import yaml
from django.contrib.auth import get_user_model
from django.db import transaction

from alerts.models import Channel, MetricOverride, OwnerRule, Team

TEAM_NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
GLOB_RE = re.compile(r"^[A-Za-z0-9._/:*?\[\]!-]{1,200}$")


class ConfigError(ValueError):
    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = errors
        super().__init__("\n".join(f"{path}: {msg}" for path, msg in errors))


@dataclass
class Summary:
    teams: int = 0
    channels: int = 0
    owners: int = 0
    overrides: int = 0
    users_created: list[str] = field(default_factory=list)


def _http_url(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    parsed = urlparse(value)
    return parsed.scheme in ("http", "https") and bool(parsed.netloc)


def _channel(path: str, raw: Any, errors: list[tuple[str, str]]) -> tuple[str, str, dict] | None:
    if not isinstance(raw, dict):
        errors.append((path, "must be a mapping with a 'type'"))
        return None
    kind = raw.get("type")
    if kind in ("webhook", "slack"):
        url = raw.get("url")
        if not _http_url(url):
            errors.append((f"{path}.url", "must be an http(s) URL"))
            return None
        config: dict[str, Any] = {"url": url}
        if kind == "webhook":
            secret = raw.get("secret", "")
            if not isinstance(secret, str):
                errors.append((f"{path}.secret", "must be a string"))
                return None
            config["secret"] = secret
        return kind, url, config
    if kind == "email":
        to = raw.get("to")
        if isinstance(to, str):
            to = [to]
        if not isinstance(to, list) or not to or not all(isinstance(a, str) and EMAIL_RE.match(a) for a in to):
            errors.append((f"{path}.to", "must be a non-empty list of email addresses"))
            return None
        return kind, ",".join(sorted(to)), {"to": list(to)}
    errors.append((f"{path}.type", "must be one of webhook, slack, email"))
    return None


def _glob(path: str, raw: dict, key: str, errors: list[tuple[str, str]], *, default: str | None = "*") -> str:
    value = raw.get(key, default)
    if not isinstance(value, str) or not GLOB_RE.match(value):
        errors.append((f"{path}.{key}", "must be a name or glob pattern (letters, digits, . _ / : - * ? [ ])"))
        return "*"
    return value


def _number(path: str, value: Any, errors: list[tuple[str, str]], *, minimum: float = 0.0) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value or value < minimum:
        errors.append((path, f"must be a number >= {minimum}"))
        return None
    return float(value)


def parse_config(text: str) -> dict[str, Any]:
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError([("", f"not valid YAML: {exc}")]) from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise ConfigError([("", "the top level must be a mapping with teams, owners and metrics")])
    unknown = set(doc) - {"teams", "owners", "metrics"}
    errors: list[tuple[str, str]] = [(k, "unknown section") for k in sorted(map(str, unknown))]
    for section in ("teams", "owners", "metrics"):
        if section in doc and not isinstance(doc[section], list):
            errors.append((section, "must be a list"))
    if errors:
        raise ConfigError(errors)
    return doc


def apply_config(text: str) -> Summary:
    doc = parse_config(text)
    errors: list[tuple[str, str]] = []
    teams: list[tuple[str, list[str], list[tuple[str, str, dict]]]] = []
    seen: set[str] = set()
    for i, raw in enumerate(doc.get("teams") or []):
        path = f"teams[{i}]"
        if not isinstance(raw, dict):
            errors.append((path, "must be a mapping"))
            continue
        name = raw.get("name")
        if not isinstance(name, str) or not TEAM_NAME_RE.match(name):
            errors.append((f"{path}.name", "must match [A-Za-z0-9._-]{1,100}"))
            continue
        if name in seen:
            errors.append((f"{path}.name", f"team {name!r} is listed twice"))
        seen.add(name)
        members = raw.get("members") or []
        if not isinstance(members, list) or not all(isinstance(m, str) and 0 < len(m) <= 150 for m in members):
            errors.append((f"{path}.members", "must be a list of usernames"))
            members = []
        channels = []
        for j, ch in enumerate(raw.get("channels") or []):
            parsed = _channel(f"{path}.channels[{j}]", ch, errors)
            if parsed:
                channels.append(parsed)
        teams.append((name, members, channels))

    known_teams = seen | set(Team.objects.values_list("name", flat=True))
    owners: list[tuple[str, str, str, str]] = []
    for i, raw in enumerate(doc.get("owners") or []):
        path = f"owners[{i}]"
        if not isinstance(raw, dict):
            errors.append((path, "must be a mapping"))
            continue
        team = raw.get("team")
        if team not in known_teams:
            errors.append((f"{path}.team", f"unknown team {team!r}; list it under teams"))
        owners.append((_glob(path, raw, "app", errors), _glob(path, raw, "platform", errors),
                       _glob(path, raw, "metric", errors), str(team)))

    overrides: list[dict[str, Any]] = []
    for i, raw in enumerate(doc.get("metrics") or []):
        path = f"metrics[{i}]"
        if not isinstance(raw, dict):
            errors.append((path, "must be a mapping"))
            continue
        entry = {
            "app": _glob(path, raw, "app", errors),
            "platform": _glob(path, raw, "platform", errors),
            "metric": _glob(path, raw, "metric", errors, default=None),
            "min_change": _number(f"{path}.min_change", raw.get("min_change"), errors),
            "abs_threshold": _number(f"{path}.abs_threshold", raw.get("abs_threshold"), errors),
            "sensitivity": _number(f"{path}.sensitivity", raw.get("sensitivity"), errors, minimum=0.01),
        }
        overrides.append(entry)
    if errors:
        raise ConfigError(errors)
    return _store(doc, teams, owners, overrides)


@transaction.atomic
def _store(doc, teams, owners, overrides) -> Summary:
    summary = Summary()
    User = get_user_model()
    for name, members, channels in teams:
        team, _ = Team.objects.get_or_create(name=name)
        users = []
        for username in members:
            user = User.objects.filter(username=username).first()
            if user is None:
                user = User(username=username)
                user.set_unusable_password()
                user.save()
                summary.users_created.append(username)
            users.append(user)
        team.members.set(users)
        keep = []
        for kind, key, config in channels:
            channel, _ = Channel.objects.update_or_create(team=team, kind=kind, key=key, defaults={"config": config})
            keep.append(channel.pk)
        team.channels.exclude(pk__in=keep).delete()
        summary.teams += 1
        summary.channels += len(keep)
    if "owners" in doc:
        OwnerRule.objects.all().delete()
        by_name = {t.name: t for t in Team.objects.all()}
        OwnerRule.objects.bulk_create(
            OwnerRule(position=i, app=a, platform=p, metric=m, team=by_name[t]) for i, (a, p, m, t) in enumerate(owners)
        )
        summary.owners = len(owners)
    if "metrics" in doc:
        MetricOverride.objects.all().delete()
        MetricOverride.objects.bulk_create(MetricOverride(position=i, **o) for i, o in enumerate(overrides))
        summary.overrides = len(overrides)
    return summary
