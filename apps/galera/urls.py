from __future__ import annotations

from django.urls import path

from . import configure, views

app_name = "galera"
urlpatterns = [
    path("clusters/new/", configure.edit_cluster, name="add"),
    path("clusters/<int:pk>/", views.cluster_detail, name="cluster"),
    path("nodes/<int:pk>/token", views.issue_node_token, name="issue-node-token"),
    path("nodes/<int:pk>/agent/<str:filename>", views.agent_file, name="agent"),
    path("clusters/<int:pk>/edit/", configure.edit_cluster, name="edit"),
    path("clusters/<int:pk>/nodes/new/", configure.edit_node, name="add-node"),
    path("clusters/<int:pk>/nodes/<int:node>/", configure.edit_node, name="edit-node"),
]
