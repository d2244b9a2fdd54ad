from __future__ import annotations

from django.urls import path

from . import configure, views

app_name = "probes"
urlpatterns = [
    path("targets/<int:pk>/", views.target_detail, name="target"),
    path("targets/<int:pk>/enabled/", views.target_enable, name="target-enable"),
    path("targets/new/", configure.edit_target, name="add"),
    path("targets/<int:pk>/edit/", configure.edit_target, name="edit"),
    path("presets/", views.presets, name="presets"),
]
