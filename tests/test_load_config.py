"""manage.py load_config FILE (docs/API.md section 5)."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db.models import ProtectedError

from alerts.config_loader import ConfigError, apply_config
from alerts.models import (
    Alert,
    AlertGroup,
    AppIntegration,
    Channel,
    Delivery,
    DeliveryAttempt,
    MetricOverride,
    OwnerRule,
    SizeBudget,
    Team,
)
from metrics.models import App
from tests.notify.fixtures import make_scene

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


def test_it_archives_channels_dropped_from_a_listed_team(tmp_path):
    load(tmp_path, CONFIG)
    out = load(tmp_path, "teams:\n  - name: startup-perf\n    channels:\n      - {type: slack, url: 'https://hooks.slack.com/x'}\n")
    assert "archived 3 channels" in out
    assert list(Channel.objects.active().values_list("kind", flat=True)) == ["slack"]
    assert Channel.objects.filter(archived__isnull=False).count() == 3
    assert OwnerRule.objects.count() == 2  # owners not in the file: table kept


@pytest.mark.parametrize(("text", "path"), [
    ("owners:\n  - {team: nobody}\n", "owners[0].team"),
    ("teams:\n  - name: t\n    channels:\n      - {type: webhook, url: 'ftp://x'}\n", "teams[0].channels[0].url"),
    ("teams:\n  - name: t\n    channels:\n      - {type: email, to: ['not-an-address']}\n", "teams[0].channels[0].to[0]"),
    ("teams:\n  - name: t\n    channels:\n      - {type: pager}\n", "teams[0].channels[0].type"),
    ("metrics:\n  - {metric: 'x', min_change: -1}\n", "metrics[0].min_change"),
    ("teams: {}\n", "teams"),
    ("bogus: 1\n", "bogus"),
    ("teams: [\n", ""),
    ("teams:\n  - name: t\n    channels:\n      - {type: webhook, url: 'https://h.example/x', secert: 'x'}\n",
     "teams[0].channels[0].secert"),
    ("teams:\n  - name: t\n    channels:\n      - {type: webhook, url: 'https://h.example/x', secret: ''}\n",
     "teams[0].channels[0].secret"),
    ("teams:\n  - name: t\n    channels:\n      - {type: webhook, url: 'https://h.example/x'}\n",
     "teams[0].channels[0].secret"),
    ("teams:\n  - name: t\n    memebers: [alice]\n", "teams[0].memebers"),
    ("teams:\n  - name: t\n  - name: t\n", "teams"),
    ("apps:\n  - {name: a, ci: {url: 'https://ci.example/r', secret: ''}}\n", "apps[0].ci.secret"),
    ("apps:\n  - {name: a, ci: {url: 'https://ci.example/r', secret: 's', max_request_per_day: 3}}\n",
     "apps[0].ci.max_request_per_day"),
    ("apps:\n  - {name: a, code_host: {type: gitlab, repo: 'o/n'}}\n", "apps[0].code_host.type"),
    ("apps:\n  - {name: a, code_host: {type: github, repo: 'no-slash'}}\n", "apps[0].code_host.repo"),
    ("budgets:\n  - {metric: 'size.*', max_bytes: 10, team: nobody}\n", "budgets[0].team"),
    ("budgets:\n  - {metric: 'size.*', max_bytes: 0, team: central-perf}\n", "budgets[0].max_bytes"),
    ("budgets:\n  - {metric: 'size.*', max_bytes: '5MB', team: central-perf}\n", "budgets[0].max_bytes"),
    ("metrics:\n  - {metric: 'size.*', abs_floor: -5}\n", "metrics[0].abs_floor"),
    ("metrics:\n  - {min_change: 0.1}\n", "metrics[0].metric"),
])
def test_it_rejects_a_bad_file_with_the_path_and_changes_nothing(tmp_path, text, path):
    load(tmp_path, CONFIG)
    before = snapshot()
    with pytest.raises(CommandError) as exc:
        load(tmp_path, text)
    assert (path + ":") in str(exc.value) if path else "YAML" in str(exc.value)
    assert snapshot() == before


def snapshot() -> list:
    """Every row the loader may touch, to show that a refused file changed nothing."""
    return [
        list(Team.objects.order_by("pk").values()),
        list(Team.members.through.objects.order_by("pk").values()),
        list(Channel.objects.order_by("pk").values()),
        list(OwnerRule.objects.order_by("pk").values()),
        list(MetricOverride.objects.order_by("pk").values()),
        list(SizeBudget.objects.order_by("pk").values()),
        list(App.objects.order_by("pk").values()),
        list(AppIntegration.objects.order_by("pk").values()),
    ]


def test_it_reports_a_missing_file(tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        call_command("load_config", str(tmp_path / "missing.yaml"))


def test_it_refuses_an_unknown_key_with_its_path_and_changes_nothing(tmp_path):
    load(tmp_path, CONFIG)
    before = snapshot()
    with pytest.raises(CommandError) as exc:
        load(tmp_path, CONFIG.replace("secret:", "secert:").replace("members: [alice]", "members: [bob]"))
    assert "teams[0].channels[0].secert: unknown key; did you mean 'secret'?" in str(exc.value)
    assert "teams[0].channels[0].secret: is required" in str(exc.value)
    assert snapshot() == before
    assert not Team.objects.filter(members__username="bob").exists()


def test_it_reports_every_problem_at_once(tmp_path):
    text = """
teams:
  - name: t
    channels:
      - {type: webhook, url: "ftp://x", secret: ""}
      - {type: pager}
      - {type: email, to: ["not-an-address"]}
owners:
  - {team: nobody, metric: "bad name!"}
metrics:
  - {metric: "size.*", min_change: -1, sensitivty: 2}
apps:
  - {name: a, ci: {url: "https://ci.example/r", secret: " "}}
budgets:
  - {metric: "size.*", max_bytes: 10, team: ghost}
extra: 1
"""
    with pytest.raises(ConfigError) as exc:
        apply_config(text)
    paths = [path for path, _ in exc.value.errors]
    assert paths == [
        "teams[0].channels[0].url",
        "teams[0].channels[0].secret",
        "teams[0].channels[1].type",
        "teams[0].channels[2].to[0]",
        "owners[0].metric",
        "metrics[0].min_change",
        "metrics[0].sensitivty",
        "apps[0].ci.secret",
        "extra",
        "owners[0].team",
        "budgets[0].team",
    ]
    assert dict(exc.value.errors)["apps[0].ci.secret"].startswith("must not be empty")  # whitespace is empty
    assert Team.objects.count() == 0


def test_it_keeps_members_and_channels_a_listed_team_omits(tmp_path):
    load(tmp_path, CONFIG)
    channels = list(Channel.objects.order_by("pk").values())
    load(tmp_path, "teams:\n  - name: startup-perf\n")
    team = Team.objects.get(name="startup-perf")
    assert [u.username for u in team.members.all()] == ["alice"]
    assert list(Channel.objects.order_by("pk").values()) == channels
    load(tmp_path, "teams:\n  - name: startup-perf\n    members: []\n")
    assert team.members.count() == 0
    assert Channel.objects.active().filter(team=team).count() == 3


def test_it_leaves_an_omitted_section_as_it_is(tmp_path):
    load(tmp_path, CONFIG + BUDGETS_AND_APPS)
    before = snapshot()
    load(tmp_path, "teams:\n  - name: central-perf\n")
    assert snapshot() == before


def test_it_archives_a_removed_channel_and_keeps_its_delivery_history(tmp_path):
    scene = make_scene(team_name="startup-perf")
    load(tmp_path, CONFIG)
    webhook = Channel.objects.get(kind="webhook")
    delivery = Delivery.objects.create(group=scene.group, channel=webhook, status="sent", attempts=1)
    DeliveryAttempt.objects.create(delivery=delivery, ok=True, status_code=200)

    load(tmp_path, CONFIG.replace("s3cret", "rotated"))  # editing settings keeps the row and history
    webhook.refresh_from_db()
    assert webhook.config["secret"] == "rotated" and webhook.archived is None
    assert Delivery.objects.filter(channel=webhook).count() == 1

    group = AlertGroup.objects.create(build=scene.previous_build, team=scene.team)
    queued = Delivery.objects.create(group=group, channel=webhook)
    load(tmp_path, CONFIG.replace('      - {type: webhook, url: "https://hooks.example/perf", secret: "s3cret"}\n', ""))
    webhook.refresh_from_db()
    assert webhook.archived is not None
    assert DeliveryAttempt.objects.filter(delivery__channel=webhook).count() == 1
    delivery.refresh_from_db()
    queued.refresh_from_db()
    assert (delivery.status, queued.status) == ("sent", "failed")  # history kept; the queued one never sent
    assert "removed from the config" in queued.error
    assert webhook not in Channel.objects.active()

    from alerts.notify.service import plan_deliveries

    Alert.objects.filter(pk=scene.regression.pk).update(group=group)
    plan_deliveries(group.pk)
    assert list(Delivery.objects.filter(group=group, channel=webhook)) == [queued]  # archived: none new
    assert Delivery.objects.filter(group=group).count() == 3
    assert Delivery.objects.get(pk=queued.pk).status == "failed"

    load(tmp_path, CONFIG)  # listed again: back in service, same row
    webhook.refresh_from_db()
    assert webhook.archived is None
    assert Channel.objects.filter(kind="webhook").count() == 1


def test_it_refuses_to_delete_a_team_or_channel_with_alerts_or_history():
    scene = make_scene()
    with pytest.raises(ProtectedError):
        scene.team.delete()
    channel = Channel.objects.create(team=scene.team, kind="slack", key="https://hooks.slack.com/x", config={})
    Delivery.objects.create(group=scene.group, channel=channel)
    with pytest.raises(ProtectedError):
        channel.delete()
    assert Alert.objects.filter(team=scene.team).count() == 3
    assert Delivery.objects.filter(channel=channel).count() == 1


BUDGETS_AND_APPS = """
apps:
  - name: com.example.shop
    default_branch: trunk
    ci: {url: "https://ci.example/perf-runs", secret: "ci-s3cret", max_requests_per_day: 12}
    code_host: {type: github, repo: "owner/shop", token_env: "SHOP_TOKEN", api_url: "http://127.0.0.1:9/api"}
  - name: com.example.maps
budgets:
  - {metric: "size.module.feature_map.*", max_bytes: 5000000, team: startup-perf, app: "*", platform: "android"}
  - {metric: "size.apk.*", max_bytes: 30000000, team: central-perf}
"""


def test_it_stores_apps_and_budgets_idempotently(tmp_path):
    load(tmp_path, CONFIG + BUDGETS_AND_APPS)
    first = snapshot()
    out = load(tmp_path, CONFIG + BUDGETS_AND_APPS)
    assert "2 apps, 2 budgets" in out
    assert snapshot() == first

    shop = App.objects.get(name="com.example.shop")
    assert shop.default_branch == "trunk"
    assert App.objects.get(name="com.example.maps").default_branch == "main"
    i = shop.integration
    assert (i.ci_url, i.ci_secret, i.ci_max_requests_per_day) == ("https://ci.example/perf-runs", "ci-s3cret", 12)
    assert (i.code_host_type, i.code_host_repo, i.code_host_token_env, i.code_host_api_url) == (
        "github", "owner/shop", "SHOP_TOKEN", "http://127.0.0.1:9/api")
    assert "ci-s3cret" not in repr(i)
    assert not AppIntegration.objects.filter(app__name="com.example.maps").exists()
    budgets = list(SizeBudget.objects.values_list("position", "app", "platform", "metric", "max_bytes", "team__name"))
    assert budgets == [
        (0, "*", "android", "size.module.feature_map.*", 5000000, "startup-perf"),
        (1, "*", "*", "size.apk.*", 30000000, "central-perf"),
    ]


def test_it_updates_budgets_in_place_and_drops_the_rest(tmp_path):
    load(tmp_path, CONFIG + BUDGETS_AND_APPS)
    pk = SizeBudget.objects.get(position=0).pk
    load(tmp_path, "budgets:\n  - {metric: 'size.*', max_bytes: 7, team: central-perf}\n")
    assert list(SizeBudget.objects.values_list("pk", "metric", "max_bytes")) == [(pk, "size.*", 7)]


def test_it_keeps_ci_settings_an_app_omits_and_removes_them_on_null(tmp_path):
    load(tmp_path, CONFIG + BUDGETS_AND_APPS)
    load(tmp_path, "apps:\n  - {name: com.example.shop}\n")
    i = AppIntegration.objects.get(app__name="com.example.shop")
    assert (i.ci_secret, i.code_host_repo) == ("ci-s3cret", "owner/shop")
    assert App.objects.get(name="com.example.shop").default_branch == "trunk"
    load(tmp_path, "apps:\n  - {name: com.example.shop, ci: null}\n")
    i.refresh_from_db()
    assert (i.ci_url, i.ci_secret, i.has_ci) == ("", "", False)
    assert i.has_code_host and i.code_host_repo == "owner/shop"  # code_host omitted: unchanged
    load(tmp_path, "apps:\n  - {name: com.example.shop, code_host: null}\n")
    i.refresh_from_db()
    assert not i.has_code_host


def test_it_fills_ci_and_code_host_defaults(tmp_path):
    load(tmp_path, "apps:\n  - {name: a, ci: {url: 'https://ci.example/r', secret: 's'}, code_host: {type: github, repo: 'o/n'}}\n")
    i = AppIntegration.objects.get(app__name="a")
    assert (i.ci_max_requests_per_day, i.code_host_token_env, i.code_host_api_url) == (
        40, "PERF_GITHUB_TOKEN", "https://api.github.com")


def test_it_stores_abs_floor_overrides(tmp_path):
    load(tmp_path, "metrics:\n  - {metric: 'size.*', min_change: 0.005, abs_floor: 100000}\n")
    row = MetricOverride.objects.get()
    assert (row.min_change, row.abs_floor, row.abs_threshold) == (0.005, 100000.0, None)


def test_it_never_prints_a_secret_in_errors(tmp_path):
    with pytest.raises(CommandError) as exc:
        load(tmp_path, "apps:\n  - {name: 'bad name', ci: {url: 'nope', secret: 'very-secret-value', extra: 1}}\n")
    assert "very-secret-value" not in str(exc.value)
    assert "apps[0].ci.url" in str(exc.value) and "apps[0].name" in str(exc.value)


def test_it_applies_the_readme_example(tmp_path):
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme[readme.index("## Configuration as code"):]
    example = section[section.index("```yaml") + len("```yaml"):section.index("```", section.index("```yaml") + 7)]
    out = load(tmp_path, example)
    assert "3 teams, 3 channels, 2 owner rules, 2 metric overrides, 1 apps, 1 budgets" in out
    assert MetricOverride.objects.get(position=0).abs_floor == 100000
    assert App.objects.get(name="com.example.shop").integration.code_host_repo == "owner/name"


def test_it_only_validates_with_check(tmp_path):
    path = tmp_path / "perf.yaml"
    path.write_text(CONFIG)
    out = StringIO()
    call_command("load_config", str(path), "--check", stdout=out)
    assert "is valid (nothing applied)" in out.getvalue()
    assert Team.objects.count() == 0
    path.write_text("owner: []\n")
    with pytest.raises(CommandError, match=r"owner: unknown key; did you mean 'owners'\?"):
        call_command("load_config", str(path), "--check")


def test_it_exits_non_zero_and_prints_every_path_from_the_shell(tmp_path):
    """The real command line, as an operator runs it (no database is needed to refuse this file)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    bad = tmp_path / "bad.yaml"
    bad.write_text("teams:\n  - name: t\n    channels:\n      - {type: webhook, url: 'https://h.example', secert: 'shell-secret-value'}\n"
                   "metricz: []\n")
    run = subprocess.run([sys.executable, "manage.py", "load_config", str(bad)], cwd=root,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    for line in ("teams[0].channels[0].secret: is required",
                 "teams[0].channels[0].secert: unknown key; did you mean 'secret'?",
                 "metricz: unknown key; did you mean 'metrics'?"):
        assert line in run.stderr
    assert "shell-secret-value" not in run.stderr + run.stdout
