from __future__ import annotations

from django.urls import path

from . import configure, views

app_name = "raid"
urlpatterns = [
    path("new-host/", configure.edit_host, name="add"),
    path("hosts/<str:name>/", views.host_detail, name="host"),
    path("hosts/<str:name>/edit/", configure.edit_host, name="edit"),
    path("hosts/<str:name>/token", views.issue_token, name="issue-token"),
    path("hosts/<str:name>/agent/<str:filename>", views.agent_file, name="agent"),
]
