from __future__ import annotations

from django.urls import path

from . import views

app_name = "ebs"
urlpatterns = [
    path("volumes/<int:pk>/", views.volume_detail, name="volume_detail"),
]
