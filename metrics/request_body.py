"""Reading an upload's body within its size limit, as clients send it: with a Content-Length, or chunked.

Django reads ``Content-Length`` bytes and nothing without one, so a chunked body (``Transfer-Encoding: chunked``,
what clients that stream send) would read as empty; servers that de-chunk the input and end it (gunicorn says so
with ``wsgi.input_terminated``) let it be read to its end here. A body declared too large is drained, up to a cap,
before the 413 is sent: a server that answers without reading closes on a client still sending, which sees a
broken pipe instead of the 413 (the CLI would retry and report the server unreachable).
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest

CHUNK = 64 * 1024
#: Bodies declared larger than this many times the limit are not drained (the connection is closed on them).
DRAIN_FACTOR = 8


def declared_length(request: HttpRequest) -> int:
    try:
        return int(request.headers.get("Content-Length") or 0)
    except ValueError:
        return 0


def is_chunked(request: HttpRequest) -> bool:
    return ("chunked" in (request.headers.get("Transfer-Encoding") or "").lower()
            and not request.headers.get("Content-Length") and bool(request.META.get("wsgi.input_terminated")))


def read_body(request: HttpRequest, limit: int) -> bytes:
    """The body; at most ``limit + 1`` bytes of a chunked one (enough to tell it is over the limit)."""
    if not is_chunked(request):
        return request.body
    stream = request.META["wsgi.input"]
    parts, size = [], 0
    while size <= limit:
        part = stream.read(min(CHUNK, limit + 1 - size))
        if not part:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)


def drain_chunked(request: HttpRequest, limit: int) -> None:
    """Read and discard the rest of a chunked body found over ``limit``, up to ``DRAIN_FACTOR`` times it."""
    _discard(request.META["wsgi.input"].read, limit * DRAIN_FACTOR)


def drain(request: HttpRequest, limit: int) -> None:
    """Read and discard a body declared over ``limit``, unless it is over ``DRAIN_FACTOR`` times it."""
    declared = declared_length(request)
    if declared <= limit * DRAIN_FACTOR:
        _discard(request.read, declared)


def _discard(read: Callable[[int], bytes], amount: int) -> None:
    """Read up to ``amount`` bytes with ``read`` and drop them; stop early at the end of the input."""
    while amount > 0:
        part = read(min(CHUNK, amount))
        if not part:
            return
        amount -= len(part)
