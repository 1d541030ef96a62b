"""Bulk triage from the team dashboard: several alert groups, one status, one note.

CSRF-protected POST (Django's middleware). Without JavaScript the form posts and is redirected to
`next` (only a same-site path is followed); with `Accept: application/json` it answers JSON with the
groups' new statuses. Applying it goes through the shared triage service (alerts/triage.py).
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from alerts.models import AlertGroup, Team
from alerts.triage import TriageError, can_triage, triage
from alerts.web.group import safe_next

BULK_STATUSES = ("acknowledged", "invalid", "wontfix", "fixed")
MAX_GROUPS = 200


def _answer(request: HttpRequest, code: int, message: str, **extra) -> HttpResponse:
    if request.headers.get("Accept", "").startswith("application/json"):
        return JsonResponse({"message": message, **extra} if code < 400 else {"error": message}, status=code)
    return HttpResponse(message, status=code, content_type="text/plain")


@login_required
@require_POST
def bulk_triage(request: HttpRequest, team: str) -> HttpResponse:
    t = get_object_or_404(Team, name=team)
    if not can_triage(request.user.pk, request.user.is_staff, t.pk):
        return _answer(request, 403, f"only members of {t.name} or staff can triage")
    status = request.POST.get("status", "")
    if status not in BULK_STATUSES:
        return _answer(request, 400, f"status must be one of {', '.join(BULK_STATUSES)}")
    raw = request.POST.getlist("group")
    if not raw:
        return _answer(request, 400, "select at least one alert group")
    if len(raw) > MAX_GROUPS or not all(x.isdigit() for x in raw):
        return _answer(request, 400, f"group must be up to {MAX_GROUPS} alert group ids")
    ids = {int(x) for x in raw}
    groups = set(AlertGroup.objects.filter(pk__in=ids, team=t).values_list("pk", flat=True))
    if groups != ids:
        return _answer(request, 404, f"not alert groups of {t.name}: {', '.join(map(str, sorted(ids - groups)))}")
    try:
        n = triage(status=status, note=request.POST.get("note", "").strip() or None, user_id=request.user.pk,
                   is_staff=request.user.is_staff, whole_groups=groups).count
    except TriageError as exc:
        return _answer(request, exc.status, exc.message)
    statuses = dict(AlertGroup.objects.filter(pk__in=groups).values_list("pk", "status"))
    message = f"{n} alert(s) in {len(groups)} group(s) marked {status}"
    if request.headers.get("Accept", "").startswith("application/json"):
        return JsonResponse({"message": message, "groups": {str(k): v for k, v in statuses.items()}})
    return redirect(safe_next(request, f"/teams/{t.name}/"))
