"""Size budgets: the sum of a build's matching size metrics against a team's cap (config `budgets:`).

`evaluate_budgets` is pure: the sizes of one build (metric name -> bytes) and the budgets that apply
to its app and platform in, one status per budget out. The team page, the size page, the budget
alert raised on a branch and a pull-request check all read it.

What "sum" means: every metric matching the budget's glob counts once. A matching metric that is
also the dotted prefix of other matching metrics (`size.module.map` next to `size.module.map.dex`)
is their total, as in the size treemap, so nothing is counted twice. When the same glob is budgeted
twice for an app and platform, the later rule (higher position) wins, like the other rule tables.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from metrics.treemap import build_tree

NEAR = 0.9  # at or above this share of the cap a budget is "near" its limit


class BudgetRule(Protocol):
    position: int
    app: str
    platform: str
    metric: str
    max_bytes: int
    team_id: int


@dataclass(frozen=True)
class BudgetStatus:
    budget_id: int | None
    position: int
    metric: str  # the glob
    team_id: int
    max_bytes: int
    total: float
    matched: tuple[str, ...]

    @property
    def headroom(self) -> float:
        """Bytes left before the cap (negative when over it)."""
        return self.max_bytes - self.total

    @property
    def used(self) -> float:
        return self.total / self.max_bytes if self.max_bytes > 0 else float("inf")

    @property
    def state(self) -> str:
        """"over" the cap, "near" it (>= 90%), "ok", or "empty" when no metric matches."""
        if not self.matched:
            return "empty"
        if self.total > self.max_bytes:
            return "over"
        return "near" if self.used >= NEAR else "ok"

    @property
    def over(self) -> bool:
        return self.state == "over"


def applies(rule: BudgetRule, app: str, platform: str) -> bool:
    return fnmatch.fnmatchcase(app, rule.app or "*") and fnmatch.fnmatchcase(platform, rule.platform or "*")


def subtree_total(sizes: dict[str, float]) -> float:
    """The bytes of a set of metrics with prefixes read as totals of their subtrees."""
    total = 0.0
    for first in {name.split(".", 1)[0] for name in sizes}:
        total += build_tree(sizes, {}, root=first).value
    return total


def evaluate_budgets(sizes: dict[str, float], budgets: Iterable[BudgetRule], *, app: str | None = None,
                     platform: str | None = None) -> list[BudgetStatus]:
    """One status per budget, in position order; with `app`/`platform`, budgets not for them are left out."""
    chosen: dict[str, BudgetRule] = {}
    for rule in sorted(budgets, key=lambda r: r.position):
        if app is not None and platform is not None and not applies(rule, app, platform):
            continue
        chosen.pop(rule.metric, None)
        chosen[rule.metric] = rule  # the later rule for the same glob wins
    out = []
    for rule in sorted(chosen.values(), key=lambda r: r.position):
        matched = {n: v for n, v in sizes.items() if fnmatch.fnmatchcase(n, rule.metric)}
        out.append(BudgetStatus(
            budget_id=getattr(rule, "pk", None), position=rule.position, metric=rule.metric, team_id=rule.team_id,
            max_bytes=int(rule.max_bytes), total=subtree_total(matched), matched=tuple(sorted(matched)),
        ))
    return out
