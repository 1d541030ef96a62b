"""Every HTTP request the platform makes to a user-configured URL (webhooks, Slack, CI endpoints, code hosts).

The destination is user input, so it is checked against internal addresses (alerts/notify/destinations.py).
Checking a name and then letting a library resolve it again to connect leaves a gap: a DNS server that
answers a public address to the check and 127.0.0.1 to the connection (DNS rebinding) walks past the
guard. So the host is resolved exactly once, every address it resolves to is checked, and the connection
is made to one of those checked addresses. The request still names the original host (Host header), and
for https the TLS handshake uses it for SNI and certificate host-name verification, so pinning the address
changes nothing a server or certificate can see. Redirects are never followed.

`send` returns any HTTP answer, or raises TransientError (cannot connect, timed out) or PermanentError
(bad URL, forbidden destination).
"""

from __future__ import annotations

import http.client
import socket
import ssl
import time
import urllib.parse
from dataclasses import dataclass

from alerts.notify.destinations import resolve_checked
from alerts.notify.transports.base import PermanentError, TransientError

MAX_BODY = 1024 * 1024


@dataclass(frozen=True)
class OutboundResponse:
    status: int
    headers: http.client.HTTPMessage
    body: bytes


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        # server_hostname = the URL's host: SNI and certificate verification stay those of the name.
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def _split(url: str) -> tuple[str, str, int, str]:
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise PermanentError(f"not an http(s) URL: {url!r}")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise PermanentError(f"bad URL: {exc}") from None
    if not parts.hostname:
        raise PermanentError(f"URL has no host: {url!r}")
    if any(ord(c) < 33 for c in url):
        raise PermanentError("bad URL: control characters or spaces")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return parts.scheme, parts.hostname, port, path


def send(method: str, url: str, *, body: bytes | None, headers: dict[str, str], timeout: float) -> OutboundResponse:
    """Make one request to `url` through a checked, pinned address; see the module docstring."""
    scheme, host, port, path = _split(url)
    addresses = resolve_checked(host, port)
    conn_cls = _PinnedHTTPSConnection if scheme == "https" else _PinnedHTTPConnection
    started = time.monotonic()
    last: Exception | None = None
    for address in addresses:
        conn = conn_cls(host, port, address, timeout)
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            data = response.read(MAX_BODY)
            return OutboundResponse(response.status, response.headers, data)
        except ssl.SSLCertVerificationError as exc:
            raise PermanentError(f"TLS certificate of {host} not accepted: {exc.verify_message}") from None
        except TimeoutError:
            raise TransientError(f"timed out after {time.monotonic() - started:.1f}s talking to {host}") from None
        except (ConnectionRefusedError, ConnectionResetError, socket.gaierror) as exc:
            last = exc  # try the next checked address
        except (http.client.HTTPException, OSError) as exc:
            raise TransientError(f"connection error: {exc.__class__.__name__}: {exc}") from None
        finally:
            conn.close()
    raise TransientError(f"cannot connect to {host}: {last}")
