from __future__ import annotations

from django.urls import path

from . import views

app_name = "efs"
urlpatterns = [
    path("filesystems/<int:pk>/", views.detail, name="detail"),
    path("regions/<int:region_pk>/panel/", views.region_panel, name="region-panel"),
]
