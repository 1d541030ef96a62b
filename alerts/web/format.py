"""Small formatting helpers shared by the alert pages (kept out of templates for readability)."""

from __future__ import annotations


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
