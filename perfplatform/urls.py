from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from perfplatform.api import api
from perfplatform.health import healthz
from perfplatform.login_throttle import ThrottledLoginView

urlpatterns = [
    path("api/v1/", api.urls),
    path("healthz", healthz, name="healthz"),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("", include("alerts.urls")),
    path("", include("metrics.urls")),
]
