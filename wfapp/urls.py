"""URLs: admin, login and logout, the JSON API (``wfapp.api.urls``), and the dashboard's pages (``wfapp.web.urls``) when present."""

from __future__ import annotations

from importlib.util import find_spec

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import URLPattern, URLResolver, include, path

from wfapp.worker.health import healthz

urlpatterns: list[URLPattern | URLResolver] = [
    path("admin/", admin.site.urls),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", include("wfapp.api.urls")),
    path("healthz", healthz, name="healthz"),
]


def _has_module(name: str) -> bool:
    try:
        return find_spec(name) is not None
    except ModuleNotFoundError:
        return False


if _has_module("wfapp.web.urls"):
    urlpatterns.append(path("", include("wfapp.web.urls")))
