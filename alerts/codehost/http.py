"""The one function every code-host request goes through: JSON in and out over `alerts.outbound.send`
(the SSRF guard with pinned resolution, no redirects). Non-2xx answers raise Permanent/TransientError."""

from __future__ import annotations

import json
from dataclasses import dataclass

from alerts import outbound
from alerts.notify.transports.base import error_for_status

USER_AGENT = "perfplatform-checks/1"


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes

    def json(self):
        return json.loads(self.body or b"null")


def send(method: str, url: str, *, body: dict | None = None, headers: dict[str, str] | None = None,
         timeout: float = 10.0) -> Response:
    data = json.dumps(body).encode() if body is not None else None
    hdrs = {"User-Agent": USER_AGENT, "Accept": "application/vnd.github+json", **(headers or {})}
    if data is not None:
        hdrs["Content-Type"] = "application/json"
    r = outbound.send(method, url, body=data, headers=hdrs, timeout=timeout)
    if not 200 <= r.status < 300:
        raise error_for_status(r.status, r.body[:200].decode("utf-8", "replace"), r.headers)
    return Response(r.status, r.body)
