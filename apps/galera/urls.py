from __future__ import annotations

from django.urls import path

from . import views

app_name = "galera"
urlpatterns = [
    path("clusters/<int:pk>/", views.cluster_detail, name="cluster"),
]
