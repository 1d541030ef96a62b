from django.urls import path

from alerts.web import bulk, checks, dashboard, group, size, team

urlpatterns = [
    path("", dashboard.root, name="home"),
    path("overview/", dashboard.overview_page, name="overview-page"),
    path("teams/<str:team>/", team.team_page, name="team-page"),
    path("teams/<str:team>/triage/", bulk.bulk_triage, name="team-bulk-triage"),
    path("builds/<str:app>/<str:platform>/<str:build>/size/", size.size_page, name="size-page"),
    path("alerts/<int:group_id>/", group.alert_group_page, name="alert-group-page"),
    path("checks/<str:app>/<str:platform>/<str:build>/", checks.check_page, name="check-page"),
]
