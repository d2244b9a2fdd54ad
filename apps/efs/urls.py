from __future__ import annotations

from django.urls import path

from . import views

app_name = "efs"
urlpatterns = [
    path("filesystems/<int:pk>/", views.filesystem_detail, name="filesystem_detail"),
    path("filesystems/<int:pk>/clients/", views.filesystem_clients, name="filesystem_clients"),
]
