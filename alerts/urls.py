from django.urls import path

from alerts import views

urlpatterns = [
    path("alerts/<int:group_id>/", views.alert_group_page, name="alert-group-page"),
]
