from __future__ import annotations

from django.urls import path

from . import preferences, views

app_name = "accounts"
urlpatterns = [
    path("keys/", views.api_keys, name="api-keys"),
    path("keys/<int:pk>/revoke/", views.revoke_api_key, name="revoke-api-key"),
    path("preferences/", preferences.preferences, name="preferences"),
    path("audit/", views.audit, name="audit"),
]
