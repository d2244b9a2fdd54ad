from __future__ import annotations

from django.urls import path

from . import firstrun, views

app_name = "regions"
urlpatterns = [
    path("", views.home, name="home"),
    path("regions/<int:pk>/", views.region_detail, name="detail"),
    path("regions/first-account/", firstrun.first_account, name="first-account"),
    path("regions/<int:pk>/timeline/", views.region_timeline, name="timeline"),
    path("regions/<int:pk>/panels/<slug:concern>/", views.region_panel, name="panel"),
    path(
        "regions/<int:pk>/thresholds/<slug:concern>/",
        views.edit_thresholds,
        name="thresholds",
    ),
]
