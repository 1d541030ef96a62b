import pytest

from alerts.models import Delivery
from alerts.notify.payload import group_payload
from alerts.notify.service import attempt_delivery
from alerts.notify.transports.slack import MAX_METRIC_SECTIONS, slack_message
from tests.notify.fixtures import BASE_URL, Reply, add_channel, delivery_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def channel(scene, http_server):
    return add_channel(scene.team, "slack", url=http_server.url)


def _texts(blocks):
    for block in blocks:
        text = block.get("text")
        if isinstance(text, dict):
            yield text["text"]
        for element in block.get("elements", []):
            if isinstance(element.get("text"), dict):
                yield element["text"]["text"]
            elif isinstance(element.get("text"), str):
                yield element["text"]


def test_it_posts_a_block_kit_message(scene, channel, http_server):
    delivery = delivery_for(channel)
    assert attempt_delivery(delivery.pk, final=False).done
    assert len(http_server.requests) == 1
    request = http_server.requests[0]
    assert request.headers["Content-Type"].startswith("application/json")
    message = request.json()
    group_url = f"/{scene.group.pk}/"

    assert "1 regression, 1 improvement in com.example.shop android main build 4711" in message["text"]
    blocks = message["blocks"]
    assert blocks[0]["type"] == "header"
    assert blocks[0]["text"]["text"].endswith("build 4711")
    buttons = [e for b in blocks if b["type"] == "actions" for e in b["elements"] if e["type"] == "button"]
    assert len(buttons) == 1 and buttons[0]["url"].startswith(BASE_URL) and buttons[0]["url"].endswith(group_url)

    text = "\n".join(_texts(blocks))
    assert "a1b2c3d..e4f5a6b" in text
    assert "startup.cold.ttid" in text and "400 ms → 480 ms (*+20.0%*)" in text
    assert "size.apk.download" in text and "31,457,280 bytes → 30,408,704 bytes (*-3.3%*)" in text
    assert "crash.rate" not in text
    assert sum(1 for b in blocks if b["type"] == "section" and "→" in b["text"]["text"]) == 2

    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.SENT


def test_it_fails_when_slack_says_the_hook_is_gone(channel, http_server):
    http_server.reply(Reply(404, b"no_service"))
    delivery = delivery_for(channel)
    outcome = attempt_delivery(delivery.pk, final=False)
    assert not outcome.retry
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.FAILED and "no_service" in delivery.error


def test_it_keeps_within_slack_block_limits(scene):
    payload = group_payload(scene.group, base_url=BASE_URL)
    payload["alerts"] = [dict(payload["alerts"][0], metric=f"m{i}") for i in range(120)]
    message = slack_message(payload)
    assert len(message["blocks"]) <= 50
    assert "…and " + str(120 - MAX_METRIC_SECTIONS) + " more" in "\n".join(_texts(message["blocks"]))
    assert all(len(t) <= 3000 for t in _texts(message["blocks"]))


def test_it_escapes_slack_control_characters(scene):
    payload = group_payload(scene.group, base_url=BASE_URL)
    payload["alerts"][0]["metric"] = "a<b>&c"
    payload["alerts"][0]["series_url"] = None
    text = "\n".join(_texts(slack_message(payload)["blocks"]))
    assert "a&lt;b&gt;&amp;c" in text


def test_it_shows_the_culprit_and_the_crossed_budgets(scene):
    from tests.notify.test_payload import _with_culprit_and_budget

    _with_culprit_and_budget(scene)
    texts = list(_texts(slack_message(group_payload(scene.group, base_url=BASE_URL))["blocks"]))
    metric = next(t for t in texts if "startup.cold.ttid" in t and "→" in t)
    assert metric.endswith("\nculprit d00dfee (found by bisection)")
    budget = next(t for t in texts if "Size budgets crossed" in t)
    assert "size.apk.* over its 30,000,000 bytes budget: 30,408,704 bytes (+408,704 bytes)" in budget
