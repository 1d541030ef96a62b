"""Where notification HTTP requests may go.

A webhook URL is user input: without a check it can make the server call its own admin ports or a
cloud metadata service (SSRF). Destinations that resolve to loopback, private, link-local, reserved,
multicast or unspecified addresses are refused unless the deployment allows them:
PERF_WEBHOOK_ALLOW_PRIVATE=true allows them all (local set-ups, tests, `make demo`), and
PERF_WEBHOOK_ALLOWED_HOSTS lists host names allowed whatever they resolve to (an internal chat server).
"""

from __future__ import annotations

import ipaddress
import socket

from django.conf import settings

from alerts.notify.transports.base import PermanentError, TransientError


def _forbidden(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_reserved or ip.is_multicast
            or ip.is_unspecified)


def resolve_checked(host: str, port: int) -> list[str]:
    """Resolve `host` once and return the addresses a request may connect to (alerts/outbound.py pins
    the connection to them). Raises PermanentError when any of them is internal and not allowed,
    TransientError when the name does not resolve."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise TransientError(f"cannot resolve {host}: {exc}") from None
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    if not addresses:
        raise TransientError(f"cannot resolve {host}: no address")
    if getattr(settings, "PERF_WEBHOOK_ALLOW_PRIVATE", False):
        return addresses
    allowed = {h.lower() for h in getattr(settings, "PERF_WEBHOOK_ALLOWED_HOSTS", [])}
    if host.lower() in allowed:
        return addresses
    for address in addresses:
        if _forbidden(address):
            raise PermanentError(
                f"{host} resolves to {address}, an internal address; set PERF_WEBHOOK_ALLOW_PRIVATE=true "
                f"or add the host to PERF_WEBHOOK_ALLOWED_HOSTS to allow it"
            )
    return addresses


def check_destination(host: str, port: int) -> None:
    """Raise PermanentError when `host` resolves to an address notifications must not reach."""
    resolve_checked(host, port)
