from django.urls import path

from alerts.web import checks, dashboard, group

urlpatterns = [
    path("", dashboard.root, name="home"),
    path("overview/", dashboard.overview_page, name="overview-page"),
    path("teams/<str:team>/", dashboard.team_page, name="team-page"),
    path("alerts/<int:group_id>/", group.alert_group_page, name="alert-group-page"),
    path("checks/<str:app>/<str:platform>/<str:build>/", checks.check_page, name="check-page"),
]
