from __future__ import annotations

from django.urls import path

from . import views

app_name = "raid"
urlpatterns = [
    path("hosts/<str:name>/", views.host_detail, name="host"),
    path("hosts/<str:name>/token", views.issue_token, name="issue-token"),
]
