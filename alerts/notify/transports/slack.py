"""Slack incoming webhook: a Block Kit message with a header, one section per metric and a link button."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from alerts.notify.payload import (
    budget_line,
    commit_range,
    culprit_line,
    format_change,
    format_value,
    headline,
    metric_line,
)
from alerts.notify.transports.base import PermanentError, Transport, post

if TYPE_CHECKING:
    from alerts.models import Channel

MAX_METRIC_SECTIONS = 40  # Slack allows 50 blocks a message
HEADER_LIMIT = 150
SECTION_LIMIT = 3000


def _esc(text: Any) -> str:
    """Escape for Slack mrkdwn (only &, < and > are control characters)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _link(url: str | None, text: str) -> str:
    return f"<{url}|{_esc(text)}>" if url else _esc(text)


def metric_block(alert: dict[str, Any]) -> dict[str, Any]:
    icon = ":red_circle:" if alert["direction"] == "regression" else ":large_green_circle:"
    device = f" ({_esc(alert['device'])})" if alert.get("device") else ""
    unit = alert.get("unit") or ""
    text = (
        f"{icon} *{_link(alert.get('series_url'), alert['metric'])}*{device}\n"
        f"{_esc(format_value(alert['before'], unit))} → {_esc(format_value(alert['after'], unit))} "
        f"(*{format_change(alert['rel_change'])}*) · {alert['direction']}"
    )
    if culprit := culprit_line(alert):
        text += f"\n{_esc(culprit)}"
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:SECTION_LIMIT]}}


def slack_message(payload: dict[str, Any]) -> dict[str, Any]:
    title = headline(payload)
    url = payload["url"]
    build = _link(payload.get("build_url"), f"build {payload['build']}")
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": title[:HEADER_LIMIT], "emoji": True}},
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": (
                    f"*{_esc(payload['app'])}* · {_esc(payload['platform'])} · {_esc(payload['branch'])} · {build}\n"
                    f"Commits: `{_esc(commit_range(payload))}`"
                )[:SECTION_LIMIT],
            },
        },
    ]
    alerts = payload["alerts"]
    blocks += [metric_block(a) for a in alerts[:MAX_METRIC_SECTIONS]]
    if len(alerts) > MAX_METRIC_SECTIONS:
        rest = "\n".join(_esc(metric_line(a)) for a in alerts[MAX_METRIC_SECTIONS:])
        more = f"…and {len(alerts) - MAX_METRIC_SECTIONS} more:\n{rest}"
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": more[:SECTION_LIMIT]}})
    if payload.get("budgets"):
        text = ":package: *Size budgets crossed*\n" + "\n".join(f"• {_esc(budget_line(b))}" for b in payload["budgets"])
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text[:SECTION_LIMIT]}})
    blocks.append(
        {
            "type": "actions",
            "elements": [
                {
                    "type": "button",
                    "text": {"type": "plain_text", "text": "Open alert group"},
                    "url": url,
                    "action_id": "open_alert_group",
                }
            ],
        }
    )
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f"<{url}|{_esc(url)}>"}]})
    return {"text": f"{title}: {url}", "blocks": blocks, "unfurl_links": False}


class SlackTransport(Transport):
    kind = "slack"

    def send(self, channel: Channel, payload: dict[str, Any], body: bytes, *, delivery_id: int | None = None) -> None:
        url = (channel.config or {}).get("url")
        if not url:
            raise PermanentError("slack channel has no url")
        message = json.dumps(slack_message(payload), ensure_ascii=False).encode("utf-8")
        post(url, message, {"Content-Type": "application/json; charset=utf-8"})
