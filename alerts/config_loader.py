"""Configuration as code (docs/API.md section 5): apply a validated config file to the database.

The schema (`alerts.config_schema`) refuses unknown keys and reports every problem with its path;
nothing is written unless the whole file is valid, and then everything is written in one transaction.

What the file means for what is stored:
- A section left out leaves its table as it is. A listed section is the truth for what it covers.
- `teams`: matched by name and updated, never duplicated; teams the file does not list are kept.
  A key left out of a listed team leaves it unchanged (`members`, `channels`); `members: []` empties.
  A listed `channels` list is the truth for that team: a stored channel not in it is archived (no new
  deliveries, hidden from pages, history kept), one listed again is un-archived. Channels are matched
  by kind and address (webhook/slack URL, sorted email recipients), so a changed secret keeps the row.
  Deliveries still pending to an archived channel are marked failed, not sent.
- `owners`, `metrics`, `budgets`: ordered tables (later rules win), replaced row by row by position,
  so applying the same file twice leaves the same rows.
- `apps`: matched by name; a missing app is created. `default_branch`, `ci`, `code_host` left out are
  unchanged; `ci: null` / `code_host: null` remove them; given, each is replaced as a whole.
Members are usernames; a missing user is created without a usable password.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from django.contrib.auth import get_user_model
from django.db import models, transaction
from django.utils import timezone

from alerts.config_schema import (
    AppSpec,
    ConfigError,
    ConfigFile,
    TeamSpec,
    WebhookChannel,
    channel_identity,
    validate_document,
)
from alerts.models import AppIntegration, Channel, Delivery, MetricOverride, OwnerRule, SizeBudget, Team
from metrics.models import App

__all__ = ["ConfigError", "Summary", "apply_config", "parse_config"]


@dataclass
class Summary:
    teams: int = 0
    channels: int = 0
    channels_archived: int = 0
    owners: int = 0
    overrides: int = 0
    apps: int = 0
    budgets: int = 0
    users_created: list[str] = field(default_factory=list)


def parse_config(text: str) -> ConfigFile:
    """Parse and validate a file, checking team references against the database too."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError([("", f"not valid YAML: {exc}")]) from None
    errors: list[tuple[str, str]] = []
    config: ConfigFile | None = None
    try:
        config = validate_document(doc)
    except ConfigError as exc:
        errors.extend(exc.errors)
    if isinstance(doc, dict):
        errors.extend(_unknown_team_references(doc))
    if errors or config is None:
        raise ConfigError(errors)
    return config


def _unknown_team_references(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """Owners and budgets must name a team the file lists or the database has (checked on the raw
    document, so these problems are reported together with the schema's)."""
    listed = {t.get("name") for t in _entries(doc.get("teams"))}
    existing: set[str] | None = None
    errors = []
    for section in ("owners", "budgets"):
        entries = doc.get(section)
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            team = entry.get("team") if isinstance(entry, dict) else None
            if not isinstance(team, str) or team in listed:
                continue
            if existing is None:
                existing = set(Team.objects.values_list("name", flat=True))
            if team not in existing:
                errors.append((f"{section}[{i}].team", f"unknown team {team!r}; list it under teams"))
    return errors


def _entries(section: Any) -> list[dict]:
    return [e for e in section if isinstance(e, dict)] if isinstance(section, list) else []


def apply_config(text: str) -> Summary:
    return store(parse_config(text))


@transaction.atomic
def store(config: ConfigFile) -> Summary:
    summary = Summary()
    for spec in config.teams or []:
        _store_team(spec, summary)
    teams = {t.name: t for t in Team.objects.all()}
    if config.owners is not None:
        summary.owners = _replace_table(OwnerRule, [
            {"app": o.app, "platform": o.platform, "metric": o.metric, "team": teams[o.team]} for o in config.owners
        ])
    if config.metrics is not None:
        summary.overrides = _replace_table(MetricOverride, [
            m.model_dump(include={"app", "platform", "metric", "min_change", "abs_threshold", "sensitivity", "abs_floor"})
            for m in config.metrics
        ])
    if config.budgets is not None:
        summary.budgets = _replace_table(SizeBudget, [
            {"app": b.app, "platform": b.platform, "metric": b.metric, "max_bytes": b.max_bytes, "team": teams[b.team]}
            for b in config.budgets
        ])
    for spec in config.apps or []:
        _store_app(spec)
        summary.apps += 1
    return summary


def _store_team(spec: TeamSpec, summary: Summary) -> None:
    team, _ = Team.objects.get_or_create(name=spec.name)
    summary.teams += 1
    if spec.members is not None:
        team.members.set(_users(spec.members, summary))
    if spec.channels is None:
        return
    keep = []
    for ch in spec.channels:
        kind, key = channel_identity(ch)
        settings: dict[str, Any] = ch.model_dump(exclude={"type"})
        if isinstance(ch, WebhookChannel):
            settings["secret"] = ch.secret.get_secret_value()
        channel, _ = Channel.objects.update_or_create(
            team=team, kind=kind, key=key, defaults={"config": settings, "archived": None}
        )
        keep.append(channel.pk)
    summary.channels += len(keep)
    dropped = list(team.channels.active().exclude(pk__in=keep).values_list("pk", flat=True))
    if dropped:
        Channel.objects.filter(pk__in=dropped).update(archived=timezone.now())
        # A removed endpoint (perhaps removed because it leaked) must not receive what was queued for it.
        Delivery.objects.filter(channel_id__in=dropped, status=Delivery.Status.PENDING).update(
            status=Delivery.Status.FAILED, error="not sent: the channel was removed from the config"
        )
        summary.channels_archived += len(dropped)


def _users(usernames: Sequence[str], summary: Summary) -> list:
    User = get_user_model()
    found = {u.username: u for u in User.objects.filter(username__in=usernames)}
    users = []
    for username in dict.fromkeys(usernames):
        user = found.get(username)
        if user is None:
            user = User(username=username)
            user.set_unusable_password()
            user.save()
            summary.users_created.append(username)
        users.append(user)
    return users


def _replace_table(model: type[models.Model], rows: list[dict[str, Any]]) -> int:
    """Make an ordered rule table equal to `rows`, updating rows in place by position (stable ids)."""
    model.objects.filter(position__gte=len(rows)).delete()
    for position, values in enumerate(rows):
        model.objects.update_or_create(position=position, defaults=values)
    return len(rows)


def _store_app(spec: AppSpec) -> None:
    app, _ = App.objects.get_or_create(name=spec.name)
    if spec.default_branch is not None and app.default_branch != spec.default_branch:
        app.default_branch = spec.default_branch
        app.save(update_fields=["default_branch"])
    given = spec.model_fields_set & {"ci", "code_host"}
    if not given:
        return
    integration, _ = AppIntegration.objects.get_or_create(app=app)
    defaults = {f.name: f.get_default() for f in AppIntegration._meta.concrete_fields if f.name.startswith(("ci_", "code_host_"))}
    if "ci" in given:
        ci = spec.ci
        integration.ci_url = ci.url if ci else defaults["ci_url"]
        integration.ci_secret = ci.secret.get_secret_value() if ci else defaults["ci_secret"]
        integration.ci_max_requests_per_day = ci.max_requests_per_day if ci else defaults["ci_max_requests_per_day"]
    if "code_host" in given:
        host = spec.code_host
        integration.code_host_type = host.type if host else defaults["code_host_type"]
        integration.code_host_repo = host.repo if host else defaults["code_host_repo"]
        integration.code_host_token_env = host.token_env if host else defaults["code_host_token_env"]
        integration.code_host_api_url = host.api_url if host else defaults["code_host_api_url"]
    integration.save()
