"""A build's size metrics as a tree nested by dotted name, laid out as a squarified treemap.

`size.module.feature_map.dex` sits under `module` and `feature_map`. A metric that is also the prefix
of others (`size.module.feature_map` next to `size.module.feature_map.dex`) is read as the total of
its subtree: what its children do not account for shows as an "(other)" child, and when the children
sum to more than the total the children win. Layout: Bruls, Huizing and van Wijk's squarified
treemap, computed server-side on an abstract canvas and rendered in percentages. Pure Python.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

OTHER = "(other)"


@dataclass
class Node:
    name: str  # the full dotted name, e.g. "size.module.feature_map"
    label: str  # the last segment
    own: float | None = None  # the metric's value when this name is itself a metric
    base: float | None = None  # the value in the build compared against
    children: dict[str, Node] = field(default_factory=dict)
    value: float = 0.0  # bytes this node covers in the layout
    rect: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # x, y, w, h on the canvas
    depth: int = 0

    @property
    def is_metric(self) -> bool:
        return self.own is not None

    @property
    def change(self) -> float | None:
        """Relative change against the compared build (None when either side is missing or zero)."""
        if self.own is None or not self.base:
            return None
        return (self.own - self.base) / self.base

    def walk(self) -> Iterator[Node]:
        yield self
        for c in self.children.values():
            yield from c.walk()


def build_tree(values: dict[str, float], base: dict[str, float], root: str = "size") -> Node:
    """The tree of `values` (name -> bytes) under the dotted prefix `root`, metric nodes carrying their `base`."""
    prefix = root.split(".")
    top = Node(root, prefix[-1], depth=0)
    for name, v in values.items():
        parts = name.split(".")
        if parts[:len(prefix)] != prefix:
            continue
        node = top
        for i in range(len(prefix) + 1, len(parts) + 1):
            node = node.children.setdefault(parts[i - 1], Node(".".join(parts[:i]), parts[i - 1],
                                                                depth=i - len(prefix)))
        node.own = float(v)
        node.base = base.get(name)
    _sum(top)
    return top


def _sum(node: Node) -> float:
    kids = sum(_sum(c) for c in node.children.values())
    if node.own is not None and node.children and node.own > kids:
        rest = node.own - kids
        base_rest = None
        if node.base is not None:
            base_kids = sum(c.base or 0.0 for c in node.children.values())
            base_rest = max(0.0, node.base - base_kids)
        node.children[OTHER] = Node(f"{node.name}.{OTHER}", OTHER, own=rest, base=base_rest, value=rest,
                                    depth=node.depth + 1)
        kids = node.own
    node.value = max(kids, node.own or 0.0) if node.children else (node.own or 0.0)
    return node.value


def _worst(row: list[float], side: float) -> float:
    s = sum(row)
    return max(max(row) * side * side / (s * s), s * s / (side * side * min(row)))


def squarify(sizes: list[float], x: float, y: float, w: float, h: float) -> list[tuple[float, float, float, float]]:
    """Rectangles for `sizes` (sorted largest first, all > 0) filling the rectangle (x, y, w, h)."""
    total = sum(sizes)
    if total <= 0 or w <= 0 or h <= 0:
        return [(x, y, 0.0, 0.0) for _ in sizes]
    scaled = [s * w * h / total for s in sizes]
    out: list[tuple[float, float, float, float]] = []
    i = 0
    while i < len(scaled):
        side = min(w, h)
        row = [scaled[i]]
        j = i + 1
        while j < len(scaled) and _worst(row + [scaled[j]], side) <= _worst(row, side):
            row.append(scaled[j])
            j += 1
        s = sum(row)
        if w >= h:  # a column along the left edge
            cw = s / h
            yy = y
            for r in row:
                out.append((x, yy, cw, r / cw))
                yy += r / cw
            x, w = x + cw, w - cw
        else:  # a row along the top edge
            rh = s / w
            xx = x
            for r in row:
                out.append((xx, y, r / rh, rh))
                xx += r / rh
            y, h = y + rh, h - rh
        i = j
    return out


def layout(root: Node, width: float = 1000.0, height: float = 600.0, *, header: float = 18.0,
           pad: float = 2.0) -> list[Node]:
    """Place every node with a positive value; groups keep a `header` strip for their label."""
    root.rect = (0.0, 0.0, width, height)
    placed: list[Node] = []

    def place(node: Node) -> None:
        kids = sorted((c for c in node.children.values() if c.value > 0), key=lambda c: -c.value)
        if not kids:
            return
        x, y, w, h = node.rect
        if node is not root:
            top = header if h > 3 * header and w > 60 else 0.0
            x, y, w, h = x + pad, y + pad + top, max(0.0, w - 2 * pad), max(0.0, h - 2 * pad - top)
        for child, rect in zip(kids, squarify([c.value for c in kids], x, y, w, h), strict=True):
            child.rect = rect
            placed.append(child)
            place(child)

    place(root)
    return placed
