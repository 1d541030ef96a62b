from django.urls import path

from alerts.web import dashboard, group

urlpatterns = [
    path("", dashboard.root, name="home"),
    path("overview/", dashboard.overview_page, name="overview-page"),
    path("teams/<str:team>/", dashboard.team_page, name="team-page"),
    path("alerts/<int:group_id>/", group.alert_group_page, name="alert-group-page"),
]
