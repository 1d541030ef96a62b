"""Strict readers for settings that come from environment variables.

A typo in a deployment's environment should stop the process at start-up with a message naming the
variable, not silently fall back to a default.
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    return default if raw is None else parse_bool(name, raw)


def parse_bool(name: str, raw: str) -> bool:
    """One boolean spelling as env_bool reads it (also for flags inside a URL's query); `name` is for the error."""
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be one of true/false/1/0/yes/no/on/off, not {raw!r}")


def env_url(name: str, default: str, *, schemes: tuple[str, ...], hostless: tuple[str, ...] = ()) -> str:
    """A URL whose scheme is one of `schemes`, with a host (but for the `hostless` schemes, e.g. unix sockets)
    and a numeric port if it gives one; empty when unset or empty and the default is empty."""
    raw = os.environ.get(name, default).strip()
    if not raw:
        return raw
    u = urlparse(raw)
    if u.scheme not in schemes:
        raise ImproperlyConfigured(f"{name} must be a URL starting {' or '.join(s + '://' for s in schemes)}, "
                                   f"not {raw!r}")
    if u.scheme not in hostless and not u.hostname:
        raise ImproperlyConfigured(f"{name} names no host: {raw!r}")
    try:
        u.port  # noqa: B018 - parsing the port is the check
    except ValueError:
        raise ImproperlyConfigured(f"{name} has a port that is not a number: {raw!r}") from None
    return raw


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {value}")
    return value


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, not {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {value}")
    return value


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default or [])
    return [item.strip() for item in raw.split(",") if item.strip()]
