"""`/builds/{app}/{platform}/{build}/size/`: a build's size metrics as a treemap with owners and changes.

Area is bytes, colour the relative change against another build: `?against=<build id>`, by default
the previous build of the branch, or for a pull-request build the base branch's build of its
`base_commit`. Each node names its owning team (alerts.ownership); a table lists the biggest
changes. Size metrics in other units (method counts) are listed, not drawn.
"""

from __future__ import annotations

import math
import re
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.html import escape
from django.utils.safestring import mark_safe

from alerts.models import Team
from alerts.ownership import Owners
from alerts.web import budget_view
from alerts.web.format import human_bytes
from metrics.models import Build, Measurement
from metrics.treemap import Node, build_tree, layout
from metrics.web.builds import previous_build
from metrics.web.compare import pct

WIDTH, HEIGHT = 1000.0, 600.0
BYTE_UNITS = {"bytes", "byte", "b", "B"}
TABLE_ROWS = 25
ROOT = re.compile(r"size(\.[A-Za-z0-9_/:-]+){0,20}")
def colour(rel: float | None, new: bool) -> str:
    """A light background (dark text keeps AA contrast): red tints grow, green tints shrink."""
    if new:
        return "hsl(275 60% 86%)"
    if rel is None:
        return "hsl(210 16% 94%)"
    t = min(1.0, math.log10(1 + abs(rel) * 1000) / math.log10(51)) if rel else 0.0
    hue = 4 if rel > 0 else 140
    return f"hsl({hue} {20 + 50 * t:.0f}% {96 - 24 * t:.0f}%)"


def sizes_of(build: Build) -> tuple[dict[str, float], dict[str, tuple[float, str]]]:
    """Bytes per `size.*` metric of a build, and the size metrics in other units (value, unit)."""
    sizes: dict[str, float] = {}
    other: dict[str, tuple[float, str]] = {}
    for name, unit, value in (Measurement.objects.filter(build=build, series__metric__name__startswith="size.")
                              .order_by("series__device", "series__metric__name")
                              .values_list("series__metric__name", "series__metric__unit", "value")):
        if unit in BYTE_UNITS:
            sizes.setdefault(name, value)
        else:
            other.setdefault(name, (value, unit))
    return sizes, other


def default_against(b: Build) -> Build | None:
    if b.role == "pr" and b.base_commit:
        branch = b.base_branch or b.app.default_branch
        base = (Build.objects.select_related("app").filter(app_id=b.app_id, platform=b.platform, branch=branch,
                                                           commit=b.base_commit, role="branch")
                .order_by("-timestamp").first())
        if base is not None:
            return base
    prev = previous_build(b)
    return Build.objects.select_related("app").get(pk=prev.pk) if prev else None


def owner_names(build: Build, names) -> dict[str, str]:
    owners = Owners()
    teams = dict(Team.objects.values_list("pk", "name"))
    return {n: teams.get(owners.team_id(build.app.name, build.platform, n), "?") for n in names}


def node_owner(node: Node, leaf_owner: dict[str, str]) -> str:
    found = {leaf_owner[n.name] for n in node.walk() if n.name in leaf_owner}
    return found.pop() if len(found) == 1 else "several teams" if found else "?"


def render_nodes(placed: list[Node], base_values: dict[str, float] | None, leaf_owner: dict[str, str],
                 series_urls: dict[str, str], zoom_query: dict[str, str]) -> list[dict]:
    """Template rows for the placed nodes; `base_values` are the compared build's node values (None: none)."""
    out = []
    for n in placed:
        x, y, w, h = n.rect
        if w <= 0 or h <= 0:
            continue
        group = bool(n.children)
        then = base_values.get(n.name) if base_values is not None else None
        new = base_values is not None and then is None
        rel = (n.value - then) / then if then else None
        out.append({
            "name": n.name, "label": n.label, "depth": n.depth, "group": group, "owner": node_owner(n, leaf_owner),
            "bytes": human_bytes(n.value), "change": pct(rel) if rel is not None else ("new" if new else ""),
            "url": ("?" + urlencode({**zoom_query, "root": n.name})) if group else series_urls.get(n.name, ""),
            "style": mark_safe(f"left:{x / WIDTH * 100:.3f}%;top:{y / HEIGHT * 100:.3f}%;"
                               f"width:{w / WIDTH * 100:.3f}%;height:{h / HEIGHT * 100:.3f}%;"
                               + ("" if group else f"background:{colour(rel, new)};")),
            "show_label": w > 60 and h > 22, "show_owner": w > 90 and h > 44 and not group,
        })
    return out


def breakable(name: str) -> str:
    """The dotted name with a line-break opportunity after each dot (long metric names in a narrow column)."""
    return mark_safe(".<wbr>".join(escape(p) for p in name.split(".")))


def change_rows(sizes: dict[str, float], base: dict[str, float], leaf_owner: dict[str, str]) -> list[dict]:
    rows = []
    for name in set(sizes) | set(base):
        now, then = sizes.get(name), base.get(name)
        delta = (now or 0.0) - (then or 0.0)
        if delta == 0:
            continue
        rows.append({"name": name, "name_html": breakable(name), "now": human_bytes(now), "then": human_bytes(then), "delta": delta,
                     "delta_text": ("+" if delta > 0 else "−") + human_bytes(abs(delta)),
                     "pct": pct(delta / then) if then else ("new" if then is None else ""),
                     "removed": now is None, "owner": leaf_owner.get(name, "")})
    rows.sort(key=lambda r: (-abs(r["delta"]), r["name"]))
    return rows[:TABLE_ROWS]


def crumbs(zoom: str, query: dict[str, str]) -> list[dict]:
    parts = zoom.split(".")
    return [{"label": p, "url": "?" + urlencode({**query, "root": ".".join(parts[:i + 1])})}
            for i, p in enumerate(parts)]


@login_required
def size_page(request: HttpRequest, app: str, platform: str, build: str) -> HttpResponse:
    b = get_object_or_404(Build.objects.select_related("app"), app__name=app, platform=platform, ext_id=build)
    against_id = request.GET.get("against", "").strip()
    error = ""
    if against_id:
        against = Build.objects.select_related("app").filter(app_id=b.app_id, platform=platform, ext_id=against_id).first()
        if against is None:
            error = f"no build {against_id!r} of {app} on {platform}; compared with the default instead"
            against = default_against(b)
    else:
        against = default_against(b)
    zoom = request.GET.get("root", "size").strip()
    if not ROOT.fullmatch(zoom):
        zoom = "size"
    sizes, other = sizes_of(b)
    base, _ = sizes_of(against) if against is not None else ({}, {})
    leaf_owner = owner_names(b, set(sizes) | set(base))
    root = build_tree(sizes, base, root=zoom)
    placed = layout(root, WIDTH, HEIGHT)
    base_root = build_tree(base, {}, root=zoom) if against is not None else None
    base_values = {n.name: n.value for n in base_root.walk()} if base_root is not None else None
    zoom_query = {"against": against.ext_id} if against_id and against is not None else {}
    series_urls = dict(Measurement.objects.filter(build=b, series__metric__name__in=list(sizes))
                       .values_list("series__metric__name", "series_id"))
    series_urls = {k: f"/series/{v}/" for k, v in series_urls.items()}
    recent = (Build.objects.filter(app_id=b.app_id, platform=platform, branch=b.branch).exclude(pk=b.pk)
              .order_by("-timestamp").values_list("ext_id", flat=True)[:30])
    return render(request, "alerts/size.html", {
        "build": b, "against": against, "error": error, "zoom": zoom, "crumbs": crumbs(zoom, zoom_query),
        "nodes": render_nodes(placed, base_values, leaf_owner, series_urls, zoom_query),
        "total": human_bytes(root.value), "base_total": human_bytes(base_root.value) if base_root is not None else "–",
        "n_metrics": len(sizes), "changes": change_rows(sizes, base, leaf_owner), "recent": list(recent),
        "other": sorted(other.items()), "sections": [mark_safe(h) for h in (budget_view.size_section(b, sizes),) if h],
    })
