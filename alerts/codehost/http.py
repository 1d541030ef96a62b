"""The one function every code-host request goes through.

Destinations are checked by the notification SSRF guard (`alerts.notify.destinations`) and sent with
urllib, redirects not followed. When `alerts.outbound.send` (pinned resolution) exists it is used instead.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

from alerts.notify.transports.base import PermanentError, TransientError, error_for_status

USER_AGENT = "perfplatform-checks/1"


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    headers: dict[str, str]

    def json(self):
        return json.loads(self.body or b"null")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102 - urllib hook
        return None


def send(method: str, url: str, *, body: dict | None = None, headers: dict[str, str] | None = None,
         timeout: float = 10.0) -> Response:
    """Send one JSON request; 2xx returns the response, anything else raises Permanent/TransientError."""
    try:
        from alerts import outbound  # type: ignore[attr-defined]
    except ImportError:
        outbound = None
    data = json.dumps(body).encode() if body is not None else None
    hdrs = {"User-Agent": USER_AGENT, "Accept": "application/vnd.github+json", **(headers or {})}
    if data is not None:
        hdrs["Content-Type"] = "application/json"
    if outbound is not None and hasattr(outbound, "send"):
        r = outbound.send(method, url, body=data, headers=hdrs, timeout=timeout)
        status = getattr(r, "status", None) or getattr(r, "status_code", 0)
        resp = Response(int(status), getattr(r, "body", b"") or b"", dict(getattr(r, "headers", {}) or {}))
        if not 200 <= resp.status < 300:
            raise error_for_status(resp.status, resp.body[:200].decode("utf-8", "replace"), resp.headers)
        return resp
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PermanentError(f"not an http(s) URL: {url!r}")
    from alerts.notify.destinations import check_destination

    check_destination(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.build_opener(_NoRedirect).open(req, timeout=timeout) as r:
            return Response(r.status, r.read(1024 * 1024), dict(r.headers))
    except urllib.error.HTTPError as exc:
        detail = exc.read(500).decode("utf-8", "replace")
        raise error_for_status(exc.code, detail, exc.headers) from None
    except urllib.error.URLError as exc:
        raise TransientError(f"cannot connect to {parts.hostname}: {exc.reason}") from None
    except (TimeoutError, OSError) as exc:
        raise TransientError(f"connection error: {exc.__class__.__name__}: {exc}") from None
