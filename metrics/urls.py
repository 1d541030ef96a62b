from django.urls import path

from metrics.web import builds, compare, series

urlpatterns = [
    path("builds/", builds.builds_home, name="builds-home"),
    path("builds/<str:app>/<str:platform>/<str:build>/", builds.build_page, name="build-page"),
    path("series/<int:series_id>/", series.series_page, name="series-page"),
    path("series/<int:series_id>/distribution/", series.distribution_page, name="distribution-page"),
    path("compare/", compare.compare_page, name="compare-page"),
]
