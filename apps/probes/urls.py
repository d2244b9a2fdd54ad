from __future__ import annotations

from django.urls import path

from . import views

app_name = "probes"
urlpatterns = [
    path("targets/new/", views.target_edit, name="target_add"),
    path("targets/<int:pk>/", views.target_detail, name="target_detail"),
    path("targets/<int:pk>/edit/", views.target_edit, name="target_edit"),
    path("targets/<int:pk>/enabled/", views.target_enable, name="target_enable"),
    path("presets/", views.presets, name="presets"),
]
