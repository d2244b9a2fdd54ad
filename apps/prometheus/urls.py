from __future__ import annotations

from django.urls import path

from . import views

app_name = "prometheus"
urlpatterns = [path("", views.metrics, name="metrics")]
