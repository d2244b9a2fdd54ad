from __future__ import annotations

from django.urls import path

from . import views

app_name = "regions"
urlpatterns = [
    path("", views.home, name="home"),
    path("regions/<int:pk>/", views.region_detail, name="detail"),
    path("regions/<int:pk>/panels/<slug:concern>/", views.region_panel, name="panel"),
]
