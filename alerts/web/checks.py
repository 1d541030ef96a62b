"""The pre-merge check page: the verdict of a pull-request build against its merge-base, metric by metric."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from alerts import premerge
from alerts.web.format import num, pct
from metrics.models import Build, Scope

ORDER = {"regression": 0, "inconclusive": 1, "improvement": 2, "no_baseline": 3, "same": 4}


@login_required
def check_page(request: HttpRequest, app: str, platform: str, build: str) -> HttpResponse:
    b = get_object_or_404(Build.objects.select_related("app"), app__name=app, platform=platform, ext_id=build)
    if b.role != Scope.PR:
        raise Http404(f"build {b.ext_id} is a {b.role} build, not a pull-request build: it has no check")
    check = premerge.current_check(b)
    payload = premerge.check_payload(check, b)
    rows = []
    for r in sorted(payload["metrics"], key=lambda r: (ORDER.get(r["verdict"], 9), r["metric"])):
        ci = r.get("ci") or [None, None]
        rows.append({**r, "before_s": num(r.get("before"), r.get("unit")), "after_s": num(r.get("after"), r.get("unit")),
                     "pct": pct(r["rel_change"]) if r.get("rel_change") is not None else "–",
                     "ci_s": f"{pct(ci[0])} … {pct(ci[1])}" if ci[0] is not None else "",
                     "p": f"{r['p_value']:.2g}" if r.get("p_value") is not None else "–"})
    return render(request, "alerts/check.html", {"build": b, "check": check, "c": payload, "rows": rows})
