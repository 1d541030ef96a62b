from django.urls import path

from metrics import views

urlpatterns = [
    path("", views.home, name="home"),
    path("builds/<str:app>/<str:platform>/<str:build>/", views.build_page, name="build-page"),
    path("series/<int:series_id>/", views.series_page, name="series-page"),
]
