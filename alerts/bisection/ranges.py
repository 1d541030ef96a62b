"""An alert's culprit range as commits: after the previous good build, up to the culprit build."""

from __future__ import annotations

from alerts.models import Alert
from metrics.models import Build, Scope


def _covered(build: Build) -> list[str]:
    if build.commits:
        return [str(c) for c in build.commits]
    return [build.commit] if build.commit else []


def culprit_range(alert: Alert) -> list[str] | None:
    """``[c_0, c_1, ..., c_R]``: c_0 the previous good build's commit, c_1..c_R the commits in range.

    The range is every commit the branch builds after the previous good build cover, up to and
    including the culprit build (normally just the culprit build's ``commits``). ``None`` when it is
    unknown: no previous build, or builds that name no commits.
    """
    build, prev = alert.build, alert.previous_build
    if prev is None or not prev.commit or not build.commit:
        return None
    between = (
        Build.objects.filter(app_id=build.app_id, platform=build.platform, branch=build.branch, role=Scope.BRANCH,
                             timestamp__gt=prev.timestamp, timestamp__lte=build.timestamp)
        .exclude(pk=prev.pk).order_by("timestamp", "pk")
    )
    commits: list[str] = []
    for b in between:
        for c in _covered(b):
            if c not in commits:
                commits.append(c)
    if prev.commit in commits:  # a list that overlaps the previous build: keep what follows it
        commits = commits[commits.index(prev.commit) + 1:]
    if not commits or commits[-1] != build.commit:
        return None
    return [prev.commit, *commits]
