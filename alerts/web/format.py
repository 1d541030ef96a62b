"""Small formatting helpers shared by the alert pages (kept out of templates for readability)."""

from __future__ import annotations

import json


def pct(rel: float | None) -> str:
    if rel is None:
        return ""
    return f"{rel * 100:+.1f}%" if abs(rel) < 10 else f"{rel * 100:+.0f}%"


def num(value: float | None, unit: str = "") -> str:
    if value is None:
        return "–"
    if unit == "ratio":
        text = f"{value:.3g}"
    elif abs(value) >= 10000:
        text = f"{value:,.0f}"
    else:
        text = f"{value:.4g}"
    return f"{text} {unit}".strip() if unit and unit != "ratio" else text


def short(commit: str | None) -> str:
    return (commit or "")[:10]


def spark_json(values: list[float | None], mark: int = -1) -> str:
    """The compact JSON a `data-sparkline` element carries: values oldest first, `c` the marked index."""
    return json.dumps({"v": values, "c": mark}, separators=(",", ":"))


def human_bytes(v: float | None) -> str:
    if v is None:
        return "–"
    a = abs(v)
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if a >= div:
            return f"{v / div:.2f} {unit}" if a < 10 * div else f"{v / div:.1f} {unit}"
    return f"{v:.0f} B"
