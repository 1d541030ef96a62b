"""The team page's channel list: archived channels hidden, no secret or credential-bearing URL shown."""

from __future__ import annotations

from django.utils import timezone

from alerts.models import Channel
from tests.web.conftest import login

SLACK = "https://hooks.slack.com/services/T000/B000/slack-credential-part"


def test_it_shows_active_channels_without_secrets_or_url_paths(client, world):
    team = world.teams["startup-perf"]
    Channel.objects.create(team=team, kind="webhook", key="https://hooks.example/perf/tok-123",
                           config={"url": "https://hooks.example/perf/tok-123", "secret": "webhook-signing-key"})
    Channel.objects.create(team=team, kind="slack", key=SLACK, config={"url": SLACK})
    Channel.objects.create(team=team, kind="email", key="old@example.com", config={"to": ["old@example.com"]},
                           archived=timezone.now())
    login(client, world.member)
    html = client.get("/teams/startup-perf/").content.decode()
    assert "hooks.example (address hidden)" in html and "hooks.slack.com (address hidden)" in html
    for leaked in ("webhook-signing-key", "tok-123", "slack-credential-part", "old@example.com"):
        assert leaked not in html
