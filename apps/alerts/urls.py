from __future__ import annotations

from django.urls import path

from . import oncall, views

app_name = "alerts"
urlpatterns = [
    path("", views.incidents, name="incidents"),
    path("incidents/<int:pk>/", views.incident, name="incident"),
    path("incidents/<int:pk>/notes/", views.add_note, name="add-note"),
    path("incidents/<int:pk>/acknowledge/", views.acknowledge, name="acknowledge"),
    path("causes/<int:pk>/", views.cause, name="cause"),
    path("causes/<int:pk>/acknowledge/", views.acknowledge_cause, name="acknowledge-cause"),
    path("history/<int:content_type>/<int:object_id>/", views.history, name="history"),
    path("channels/", views.channels, name="channels"),
    path("channels/<int:pk>/", views.channel, name="channel"),
    path("channels/<int:pk>/test/", views.test_channel, name="test-channel"),
    path(
        "channels/<int:pk>/resend/<int:notification>/",
        views.resend_notification,
        name="resend",
    ),
    path("rules/new/", views.edit_rule, name="new-rule"),
    path("rules/<int:pk>/", views.edit_rule, name="edit-rule"),
    path("subjects/", views.subjects, name="subjects"),
    path("sent/", views.sent_messages, name="sent"),
    path("sent/<int:pk>/html/", views.sent_message_html, name="sent-html"),
    path("silences/new/", views.new_silence, name="new-silence"),
    path("silences/<int:pk>/", views.silence, name="silence"),
    path("silences/<int:pk>/expire/", views.expire_silence, name="expire-silence"),
    path("escalations/", oncall.escalations, name="escalations"),
    path("escalations/new/", oncall.escalation, name="new-escalation"),
    path("escalations/<int:pk>/", oncall.escalation, name="escalation"),
    path("escalations/<int:pk>/delete/", oncall.delete_escalation, name="delete-escalation"),
    path("windows/", oncall.windows, name="windows"),
    path("windows/new/", oncall.window, name="new-window"),
    path("windows/<int:pk>/", oncall.window, name="window"),
    path("windows/<int:pk>/delete/", oncall.delete_window, name="delete-window"),
    path("dependencies/", oncall.dependencies, name="dependencies"),
    path("dependencies/new/", oncall.dependency, name="new-dependency"),
    path("dependencies/<int:pk>/", oncall.dependency, name="dependency"),
    path("dependencies/<int:pk>/delete/", oncall.delete_dependency, name="delete-dependency"),
]
