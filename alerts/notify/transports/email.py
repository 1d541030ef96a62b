"""Email through Django's configured backend: a text body (the summary) and a simple HTML alternative."""

from __future__ import annotations

import smtplib
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe

from alerts.notify.payload import (
    budget_line,
    commit_range,
    culprit_line,
    format_change,
    format_value,
    headline,
    summary_lines,
)
from alerts.notify.transports.base import PermanentError, TransientError, Transport

if TYPE_CHECKING:
    from alerts.models import Channel


def subject(payload: dict[str, Any]) -> str:
    return f"[perf] {headline(payload)}"


def text_body(payload: dict[str, Any]) -> str:
    return "\n".join(summary_lines(payload)) + "\n"


def html_body(payload: dict[str, Any]) -> str:
    rows = []
    for alert in payload["alerts"]:
        unit = alert.get("unit") or ""
        metric = escape(alert["metric"])
        if alert.get("series_url"):
            metric = format_html('<a href="{}">{}</a>', alert["series_url"], alert["metric"])
        rows.append(
            format_html(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{} → {}</td><td><b>{}</b></td><td>{}</td></tr>",
                metric,
                alert.get("device") or "",
                alert["direction"],
                format_value(alert["before"], unit),
                format_value(alert["after"], unit),
                format_change(alert["rel_change"]),
                culprit_line(alert) or "",
            )
        )
    budgets = ""
    if payload.get("budgets"):
        items = mark_safe("".join(format_html("<li>{}</li>", budget_line(b)) for b in payload["budgets"]))
        budgets = format_html("<p>Size budgets crossed:</p><ul>{}</ul>", items)
    build = escape(payload["build"])
    if payload.get("build_url"):
        build = format_html('<a href="{}">{}</a>', payload["build_url"], payload["build"])
    return format_html(
        "<html><body><h2>{}</h2>"
        "<p>App: <b>{}</b> · platform {} · branch {} · build {}<br>Commits: <code>{}</code></p>"
        '<table border="1" cellpadding="4" cellspacing="0">'
        "<tr><th>Metric</th><th>Device</th><th>Direction</th><th>Before → after</th><th>Change</th><th>Culprit</th></tr>"
        "{}</table>{}"
        '<p><a href="{}">Open the alert group</a></p></body></html>',
        headline(payload),
        payload["app"],
        payload["platform"],
        payload["branch"],
        build,
        commit_range(payload),
        mark_safe("".join(rows)),  # each row went through format_html
        budgets,
        payload["url"],
    )


def _recipients(channel: Channel) -> list[str]:
    to = (channel.config or {}).get("to")
    if isinstance(to, str):
        to = [to]
    if not isinstance(to, list) or not to or not all(isinstance(a, str) and "@" in a for a in to):
        raise PermanentError("email channel has no valid 'to' addresses")
    return to


class EmailTransport(Transport):
    kind = "email"

    def send(self, channel: Channel, payload: dict[str, Any], body: bytes, *, delivery_id: int | None = None) -> None:
        to = _recipients(channel)
        headers = {"X-Perf-Event": payload.get("event", "")}
        if delivery_id is not None:
            headers["X-Perf-Delivery"] = str(delivery_id)
        try:
            connection = get_connection(fail_silently=False)
            message = EmailMultiAlternatives(
                subject(payload), text_body(payload), settings.DEFAULT_FROM_EMAIL, to,
                connection=connection, headers=headers,
            )
            message.attach_alternative(html_body(payload), "text/html")
            message.send(fail_silently=False)
        except smtplib.SMTPRecipientsRefused as exc:
            codes = sorted({code for code, _ in exc.recipients.values()})
            refused = ", ".join(f"{addr} ({code})" for addr, (code, _) in exc.recipients.items())
            if codes and all(400 <= c < 500 for c in codes):
                raise TransientError(f"recipients temporarily refused: {refused}", status_code=codes[0]) from None
            raise PermanentError(f"recipients refused: {refused}", status_code=codes[-1] if codes else None) from None
        except smtplib.SMTPResponseException as exc:  # sender refused, data error, auth, connect answers
            text = exc.smtp_error.decode("utf-8", "replace") if isinstance(exc.smtp_error, bytes) else str(exc.smtp_error)
            message_text = f"SMTP {exc.smtp_code}: {text}"
            code = exc.smtp_code if isinstance(exc.smtp_code, int) and exc.smtp_code > 0 else None
            if code is not None and 500 <= code < 600:
                raise PermanentError(message_text, status_code=code) from None
            raise TransientError(message_text, status_code=code) from None
        except smtplib.SMTPNotSupportedError as exc:  # e.g. STARTTLS or AUTH configured but not offered
            raise PermanentError(f"SMTP server does not support the configured feature: {exc}") from None
        except (smtplib.SMTPException, OSError) as exc:  # disconnected, refused, timeout, DNS
            raise TransientError(f"SMTP connection error: {exc.__class__.__name__}: {exc}") from None
