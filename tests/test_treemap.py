"""The size treemap: nesting by dotted name, totals with an "(other)" remainder, squarified layout."""

from __future__ import annotations

import math

from metrics.treemap import OTHER, build_tree, layout, squarify


def test_it_nests_metrics_by_dotted_name_and_sums_groups():
    root = build_tree({"size.module.map.dex": 300.0, "size.module.map.res": 100.0, "size.module.feed": 600.0,
                       "size.apk": 50.0, "startup.cold": 1.0}, {})
    assert set(root.children) == {"module", "apk"}
    module = root.children["module"]
    assert module.value == 1000.0 and module.children["map"].value == 400.0
    assert module.children["map"].name == "size.module.map" and not module.children["map"].is_metric
    assert root.value == 1050.0


def test_it_reads_a_metric_with_children_as_their_total_and_shows_the_rest_as_other():
    root = build_tree({"size.module.map": 500.0, "size.module.map.dex": 300.0}, {"size.module.map": 400.0,
                                                                                "size.module.map.dex": 300.0})
    m = root.children["module"].children["map"]
    assert m.value == 500.0
    assert m.children[OTHER].value == 200.0 and m.children[OTHER].base == 100.0
    assert math.isclose(m.change, 0.25)
    # Children summing to more than the stated total win: nothing is drawn twice or lost.
    root = build_tree({"size.a": 100.0, "size.a.x": 80.0, "size.a.y": 70.0}, {})
    assert root.children["a"].value == 150.0 and OTHER not in root.children["a"].children


def test_it_fills_the_rectangle_with_areas_proportional_to_bytes():
    sizes = [6.0, 6.0, 4.0, 3.0, 2.0, 2.0, 1.0]
    rects = squarify(sizes, 0, 0, 6, 4)
    total = sum(w * h for _, _, w, h in rects)
    assert math.isclose(total, 24.0)
    for s, (x, y, w, h) in zip(sizes, rects, strict=True):
        assert math.isclose(w * h, s)
        assert x >= -1e-9 and y >= -1e-9 and x + w <= 6 + 1e-9 and y + h <= 4 + 1e-9
    # Squarified: no sliver much worse than the classic example's (aspect ratios stay near 1).
    assert max(max(w / h, h / w) for _, _, w, h in rects) < 3


def test_it_lays_children_inside_their_parent():
    root = build_tree({f"size.module.m{i}.{part}": float(100 * (i + 1) + j)
                       for i in range(6) for j, part in enumerate(("dex", "res", "assets"))}, {})
    placed = layout(root, 1000, 600)
    assert len(placed) == 1 + 6 + 18
    by_name = {n.name: n for n in placed}
    for n in placed:
        if n.depth >= 2:
            parent = by_name[n.name.rsplit(".", 1)[0]]
            px, py, pw, ph = parent.rect
            x, y, w, h = n.rect
            assert px - 1e-6 <= x and x + w <= px + pw + 1e-6 and py - 1e-6 <= y and y + h <= py + ph + 1e-6


def test_it_zooms_into_a_dotted_prefix():
    root = build_tree({"size.module.map.dex": 300.0, "size.module.map.res": 100.0, "size.module.feed": 600.0,
                       "size.apk": 5000.0, "size.modules_other": 1.0}, {}, root="size.module")
    assert root.name == "size.module" and set(root.children) == {"map", "feed"}
    assert root.value == 1000.0 and root.children["map"].children["dex"].depth == 2
