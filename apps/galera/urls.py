from __future__ import annotations

from django.urls import path

from . import views

app_name = "galera"
urlpatterns = [
    path("clusters/new/", views.cluster_edit, name="cluster_add"),
    path("clusters/<int:pk>/", views.cluster_detail, name="cluster_detail"),
    path("clusters/<int:pk>/edit/", views.cluster_edit, name="cluster_edit"),
    path("clusters/<int:pk>/nodes/new/", views.node_edit, name="node_add"),
    path("clusters/<int:pk>/nodes/<int:node>/", views.node_edit, name="node_edit"),
    path("nodes/<int:pk>/token", views.node_token, name="node_token"),
    path("nodes/<int:pk>/agent/<str:filename>", views.node_agent, name="node_agent"),
]
