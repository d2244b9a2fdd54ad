from __future__ import annotations

from django.urls import path
from django.views.generic.base import RedirectView

from . import views

app_name = "raid"
urlpatterns = [
    path("hosts/new/", views.host_edit, name="host_add"),
    path("hosts/<int:pk>/", views.host_detail, name="host_detail"),
    path("hosts/<int:pk>/edit/", views.host_edit, name="host_edit"),
    path("hosts/<int:pk>/token", views.host_token, name="host_token"),
    path("hosts/<int:pk>/agent/<str:filename>", views.host_agent, name="host_agent"),
    # The add page's address before the names were made one (docs/architecture.md): bookmarks
    # are followed; a form posted to it is refused (405), never sent on.
    path(
        "new-host/",
        RedirectView.as_view(
            pattern_name="raid:host_add",
            permanent=True,
            query_string=True,
            http_method_names=["get", "head"],
        ),
    ),
]
