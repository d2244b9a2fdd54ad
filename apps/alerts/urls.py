from __future__ import annotations

from django.urls import path

from . import views

app_name = "alerts"
urlpatterns = [
    path("", views.incidents, name="incidents"),
    path("incidents/<int:pk>/acknowledge/", views.acknowledge, name="acknowledge"),
    path("history/<int:content_type>/<int:object_id>/", views.history, name="history"),
    path("channels/", views.channels, name="channels"),
    path("channels/<int:pk>/", views.edit_channel, name="edit-channel"),
    path("rules/new/", views.edit_rule, name="new-rule"),
    path("rules/<int:pk>/", views.edit_rule, name="edit-rule"),
    path("silences/new/", views.new_silence, name="new-silence"),
    path("silences/<int:pk>/expire/", views.expire_silence, name="expire-silence"),
]
