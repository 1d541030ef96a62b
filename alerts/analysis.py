"""Per-build analysis: load the history of every series the build touched, detect, save.

Until the detection pipeline lands (issue 4) the build stays visibly pending: nothing here pretends
to have analysed it.
"""

from __future__ import annotations

from metrics.models import Build


def analyse_build(build_pk: int) -> str:
    build = Build.objects.filter(pk=build_pk).only("analysis").first()
    if build is None:
        return "missing"
    return build.analysis
