from __future__ import annotations

from django.urls import path

from . import configure, views

app_name = "raid"
urlpatterns = [
    path("new-host/", configure.edit_host, name="add"),
    path("hosts/<int:pk>/", views.host_detail, name="host"),
    path("hosts/<int:pk>/edit/", configure.edit_host, name="edit"),
    path("hosts/<int:pk>/token", views.issue_token, name="issue-token"),
    path("hosts/<int:pk>/agent/<str:filename>", views.agent_file, name="agent"),
]
