"""Alert group page: what the notification said, with triage."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from alerts import lifecycle
from alerts.api import can_triage
from alerts.models import Alert, AlertGroup


@login_required
def alert_group_page(request: HttpRequest, group_id: int) -> HttpResponse:
    group = get_object_or_404(AlertGroup.objects.select_related("build__app", "team"), pk=group_id)
    allowed = can_triage(request.user.pk, request.user.is_staff, group.team_id)
    if request.method == "POST":
        if not allowed:
            return HttpResponse("only the owning team or staff can triage", status=403)
        alert = get_object_or_404(Alert, pk=request.POST.get("alert"), group=group)
        status = request.POST.get("status", "")
        if status in Alert.Status.values and status != Alert.Status.REASSIGNED:
            alert.status = status
            alert.note = request.POST.get("note", alert.note)[:5000]
            alert.save(update_fields=["status", "note", "updated"])
            lifecycle.refresh_groups([group.pk])
        return redirect(group.get_absolute_url())
    alerts = (
        group.alerts.select_related("series__metric", "previous_build", "build")
        .order_by("detection", "series__metric__name")
    )
    previous = next((a.previous_build for a in alerts if a.previous_build), None)
    return render(request, "alerts/group.html", {
        "group": group, "alerts": alerts, "previous": previous, "allowed": allowed,
        "statuses": [s for s in Alert.Status.values if s != Alert.Status.REASSIGNED],
    })
