"""Checks and helpers shared by the format parsers (standard library only).

* :func:`finite_number` - a JSON number that is a real, finite value (``bool`` is not a number here).
* :func:`sanitise` / :func:`join_name` - turn free-form names from other tools into metric names that
  match ``[A-Za-z0-9._/:-]{1,200}``: every other character becomes ``_``; a name longer than 200
  characters is cut to 191 characters plus ``-`` and 8 hex digits of the SHA-256 of the full name, so
  it stays unique and is the same on every upload.
* :func:`guess_kind` - (kind, unit) from a unit string and/or a metric name.
* :class:`MetricCollector` - collects metrics with the JSON path they came from, settles names that
  collide only because of sanitising, and reports real duplicates as errors.
* :func:`key_path` / :func:`index_path` - JSON paths like ``benchmarks[2].metrics.startupMs``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field, replace

from metrics.formats.base import (
    MAX_SAMPLES,
    METRIC_NAME_RE,
    FieldError,
    ParsedMetric,
    UploadInvalid,
)

MAX_METRICS = 5_000
MAX_NAME = 200
MAX_INT = 2**63 - 1
_NAME_BAD_CHARS = re.compile(r"[^A-Za-z0-9._/:-]")
_DEVICE_BAD_CHARS = re.compile(r"[^A-Za-z0-9._ :+()-]")
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_]+$")


# --- numbers -----------------------------------------------------------------------------------


def is_number(x: object) -> bool:
    """True for JSON numbers (int or float), never for bool."""
    return isinstance(x, int | float) and not isinstance(x, bool)


def finite_number(x: object) -> float | None:
    """``x`` as a finite float, or None if it is not a finite JSON number (NaN, inf, bool, str, huge int)."""
    if not is_number(x):
        return None
    try:
        f = float(x)  # type: ignore[arg-type]
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def strict_int(x: object) -> int | None:
    """``x`` if it is a JSON integer (not bool, not float) within 64 bits, else None."""
    if isinstance(x, int) and not isinstance(x, bool) and -MAX_INT <= x <= MAX_INT:
        return x
    return None


# --- paths -------------------------------------------------------------------------------------


def key_path(parent: str, key: object) -> str:
    """``parent.key``, or ``parent["odd key"]`` when the key has characters other than [A-Za-z0-9_]."""
    k = str(key)
    if _PLAIN_KEY.match(k):
        return f"{parent}.{k}" if parent else k
    return f"{parent}[{json.dumps(k)}]"


def index_path(parent: str, index: int) -> str:
    return f"{parent}[{index}]"


# --- names -------------------------------------------------------------------------------------


def sanitise(part: str) -> str:
    """Replace every character outside ``[A-Za-z0-9._/:-]`` with ``_`` (empty stays empty)."""
    return _NAME_BAD_CHARS.sub("_", part)


def shorten(name: str) -> str:
    """Keep a sanitised name within 200 characters, deterministically and without losing uniqueness."""
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}-{digest}"


def join_name(*parts: str) -> str:
    """Sanitise each non-empty part, join with ``.`` and shorten; ``_`` if nothing is left."""
    joined = ".".join(sanitise(p) for p in parts if p)
    return shorten(joined) if joined else "_"


def sanitise_device(device: object) -> str | None:
    """A device label from another tool, with characters the platform does not allow replaced by ``_``."""
    if not isinstance(device, str) or not device.strip():
        return None
    return _DEVICE_BAD_CHARS.sub("_", device.strip())[:100]


# --- kinds -------------------------------------------------------------------------------------

_TIME_UNITS = {
    "ns": "ns", "nanoseconds": "ns",
    "us": "us", "µs": "us", "μs": "us", "microseconds": "us",
    "ms": "ms", "milliseconds": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "min": "min", "minutes": "min",
}  # fmt: skip
_BYTE_UNITS = {
    "b": "bytes", "byte": "bytes", "bytes": "bytes",
    "kb": "KB", "kib": "KiB", "mb": "MB", "mib": "MiB", "gb": "GB", "gib": "GiB",
}  # fmt: skip
_SIZE_WORDS = ("size", "installer", "apk", "aab", "ipa", "download", "binary")


def guess_kind(unit: str = "", name: str = "", *, from_name: bool = True) -> tuple[str, str]:
    """(kind, unit) from a unit and a metric name.

    The unit decides first: time units give ``time``; byte units give ``size`` when the name mentions
    size/installer/apk/... and ``memory`` otherwise; ``%``/percent and ``.../s`` give ``rate``.
    Without a telling unit the name's suffix decides (``...Ms``/``...Ns``/``...Us`` -> time,
    ``...Count`` -> count, ``...Kb``/``memory...`` -> memory KB, ``...Bytes`` -> memory bytes).
    ``from_name=False`` skips that (formats whose names follow no suffix convention).
    Anything else is ``other`` with the unit as given (cut to 50 characters).
    """
    u = unit.strip()
    lu = u.lower()
    lname = name.lower()
    if lu in _TIME_UNITS:
        return "time", _TIME_UNITS[lu]
    if lu in _BYTE_UNITS:
        kind = "size" if any(w in lname for w in _SIZE_WORDS) else "memory"
        return kind, _BYTE_UNITS[lu]
    if lu in ("%", "percent", "percentage"):
        return "rate", "%"
    if lu.endswith("/s") or lu.endswith("/sec") or lu.endswith("per second"):
        return "rate", u
    if lu in ("score", "points"):
        return "score", u
    if lu in ("count", "counts"):
        return "count", ""
    if not u and from_name:
        last = re.split(r"[._/:\s-]", name)[-1] if name else ""
        if last.endswith("Ms"):
            return "time", "ms"
        if last.endswith("Ns"):
            return "time", "ns"
        if last.endswith("Us") and not last.endswith("Uws"):
            return "time", "us"
        if last.endswith("Count") or last.lower() == "count":
            return "count", ""
        if last.endswith("Kb") or last.endswith("KB"):
            return "memory", "KB"
        if last.lower().startswith("memory"):
            return "memory", ""
        if last.endswith("Bytes") or last.lower() == "bytes":
            kind = "size" if any(w in lname for w in _SIZE_WORDS) else "memory"
            return kind, "bytes"
    return "other", u[:50]


# --- samples -----------------------------------------------------------------------------------


def read_samples(raw: object, path: str, errors: list[FieldError]) -> tuple[float, ...] | None:
    """A list of 1..10,000 finite numbers as a tuple; errors (one per bad item) appended otherwise."""
    if not isinstance(raw, list):
        errors.append(FieldError(path, "must be a list of numbers"))
        return None
    if not raw:
        errors.append(FieldError(path, "must hold at least one number"))
        return None
    if len(raw) > MAX_SAMPLES:
        errors.append(FieldError(path, f"at most {MAX_SAMPLES} samples per metric (got {len(raw)})"))
        return None
    out: list[float] = []
    ok = True
    for i, item in enumerate(raw):
        f = finite_number(item)
        if f is None:
            errors.append(FieldError(index_path(path, i), "must be a finite number"))
            ok = False
        else:
            out.append(f)
    return tuple(out) if ok else None


# --- collecting metrics ------------------------------------------------------------------------


@dataclass
class _Entry:
    path: str
    identity: str
    metric: ParsedMetric


@dataclass
class MetricCollector:
    """Collects metrics from a foreign format and settles their names.

    ``identity`` is a string that is equal exactly when the source tool means the same measurement
    (e.g. the JSON of its raw, unsanitised name parts). When several entries end up with one name,
    each whose identity differs from that name gets ``-`` plus 8 hex digits of SHA-256(identity)
    appended, so the result does not depend on upload order. Entries with equal identities are a real
    duplicate: an error at the later entry's path.
    """

    empty_message: str = "no measurements found"
    errors: list[FieldError] = field(default_factory=list)
    _entries: list[_Entry] = field(default_factory=list)

    def add(self, path: str, identity: str, metric: ParsedMetric) -> None:
        self._entries.append(_Entry(path, identity, metric))

    def finish(self, root_path: str = "") -> tuple[ParsedMetric, ...]:
        """Return the metrics or raise :class:`UploadInvalid` with every error collected so far."""
        errors = list(self.errors)
        by_name: dict[str, list[_Entry]] = {}
        for e in self._entries:
            by_name.setdefault(e.metric.name, []).append(e)
        renamed: dict[int, str] = {}
        for name, group in by_name.items():
            if len(group) < 2:
                continue
            for e in group:
                if e.identity != name:
                    digest = hashlib.sha256(e.identity.encode("utf-8", "surrogatepass")).hexdigest()[:8]
                    renamed[id(e)] = shorten(f"{name[: MAX_NAME - 9]}-{digest}")
        final: list[ParsedMetric] = []
        seen: dict[str, str] = {}
        for e in self._entries:
            name = renamed.get(id(e), e.metric.name)
            if name in seen:
                errors.append(
                    FieldError(e.path, f"duplicate metric {name!r} (first at {seen[name] or 'top level'})")
                )
                continue
            seen[name] = e.path
            if name != e.metric.name:
                e.metric = replace_name(e.metric, name)
            final.append(e.metric)
        if not final and not errors:
            errors.append(FieldError(root_path, self.empty_message))
        if len(final) > MAX_METRICS:
            errors.append(
                FieldError(root_path, f"at most {MAX_METRICS} metrics per upload (got {len(final)})")
            )
        if errors:
            raise UploadInvalid(errors)
        return tuple(final)


def replace_name(metric: ParsedMetric, name: str) -> ParsedMetric:
    return replace(metric, name=name)


def check_metric_name(name: object) -> bool:
    """True if ``name`` is a str matching ``[A-Za-z0-9._/:-]{1,200}`` (no trailing newline either)."""
    return isinstance(name, str) and METRIC_NAME_RE.fullmatch(name) is not None


def require_object(body: object, what: str) -> dict:
    """``body`` if it is a JSON object, else UploadInvalid at the top level."""
    if not isinstance(body, dict):
        raise UploadInvalid([FieldError("", f"{what} body must be a JSON object")])
    return body
