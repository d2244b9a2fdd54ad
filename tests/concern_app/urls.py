from __future__ import annotations

from django.urls import path

from . import views

app_name = "gadgets"
urlpatterns = [path("<int:pk>/", views.gadget_detail, name="gadget_detail")]
