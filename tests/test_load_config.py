"""manage.py load_config FILE (CONTRACT section 5)."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from alerts.models import Channel, MetricOverride, OwnerRule, Team

pytestmark = pytest.mark.django_db

CONFIG = """
teams:
  - name: startup-perf
    members: [alice]
    channels:
      - {type: webhook, url: "https://hooks.example/perf", secret: "s3cret"}
      - {type: slack, url: "https://hooks.slack.com/services/T/B/X"}
      - {type: email, to: ["startup-perf@example.com"]}
  - name: central-perf
owners:                # later rules win, like CODEOWNERS
  - {app: "*", platform: "*", metric: "*", team: central-perf}
  - {app: "com.example.*", platform: "android", metric: "startup.*", team: startup-perf}
metrics:
  - {metric: "size.*", min_change: 0.005}
"""


def load(tmp_path, text: str) -> str:
    path = tmp_path / "perf.yaml"
    path.write_text(text)
    out = StringIO()
    call_command("load_config", str(path), stdout=out)
    return out.getvalue()


def test_it_creates_teams_channels_owners_and_overrides(tmp_path, django_user_model):
    out = load(tmp_path, CONFIG)
    assert "2 teams, 3 channels, 2 owner rules, 1 metric overrides" in out
    team = Team.objects.get(name="startup-perf")
    assert [u.username for u in team.members.all()] == ["alice"]
    assert not django_user_model.objects.get(username="alice").has_usable_password()
    kinds = {c.kind: c.config for c in team.channels.all()}
    assert kinds["webhook"] == {"url": "https://hooks.example/perf", "secret": "s3cret"}
    assert kinds["email"] == {"to": ["startup-perf@example.com"]}
    rules = list(OwnerRule.objects.values_list("app", "platform", "metric", "team__name"))
    assert rules == [("*", "*", "*", "central-perf"), ("com.example.*", "android", "startup.*", "startup-perf")]
    assert MetricOverride.objects.get().min_change == 0.005


def test_it_updates_instead_of_duplicating_when_applied_twice(tmp_path):
    load(tmp_path, CONFIG)
    load(tmp_path, CONFIG.replace("s3cret", "n3w"))
    assert Team.objects.count() == 2
    assert Channel.objects.count() == 3
    assert OwnerRule.objects.count() == 2
    assert Channel.objects.get(kind="webhook").config["secret"] == "n3w"


def test_it_removes_channels_dropped_from_a_listed_team(tmp_path):
    load(tmp_path, CONFIG)
    load(tmp_path, "teams:\n  - name: startup-perf\n    channels:\n      - {type: slack, url: 'https://hooks.slack.com/x'}\n")
    assert list(Channel.objects.values_list("kind", flat=True)) == ["slack"]
    assert OwnerRule.objects.count() == 2  # owners not in the file: table kept


@pytest.mark.parametrize(("text", "path"), [
    ("owners:\n  - {team: nobody}\n", "owners[0].team"),
    ("teams:\n  - name: t\n    channels:\n      - {type: webhook, url: 'ftp://x'}\n", "teams[0].channels[0].url"),
    ("teams:\n  - name: t\n    channels:\n      - {type: email, to: ['not-an-address']}\n", "teams[0].channels[0].to"),
    ("teams:\n  - name: t\n    channels:\n      - {type: pager}\n", "teams[0].channels[0].type"),
    ("metrics:\n  - {metric: 'x', min_change: -1}\n", "metrics[0].min_change"),
    ("teams: {}\n", "teams"),
    ("bogus: 1\n", "bogus"),
    ("teams: [\n", ""),
])
def test_it_rejects_a_bad_file_with_the_path_and_changes_nothing(tmp_path, text, path):
    load(tmp_path, CONFIG)
    before = (Team.objects.count(), Channel.objects.count(), OwnerRule.objects.count())
    with pytest.raises(CommandError) as exc:
        load(tmp_path, text)
    assert (path + ":") in str(exc.value) if path else "YAML" in str(exc.value)
    assert (Team.objects.count(), Channel.objects.count(), OwnerRule.objects.count()) == before


def test_it_reports_a_missing_file(tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        call_command("load_config", str(tmp_path / "missing.yaml"))
