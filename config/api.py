"""One DRF router for every app's ``api.py``, plus the OpenAPI schema and its docs."""

from __future__ import annotations

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from apps.accounts.api import ApiKeyViewSet
from apps.alerts.api import (
    ChannelViewSet,
    IncidentViewSet,
    RuleViewSet,
    SilenceViewSet,
    TransitionViewSet,
)
from apps.regions.api import AccountViewSet, RegionViewSet

router = DefaultRouter()
router.register("accounts", AccountViewSet, basename="account")
router.register("regions", RegionViewSet, basename="region")
router.register("keys", ApiKeyViewSet, basename="apikey")
router.register("alerts/incidents", IncidentViewSet, basename="incident")
router.register("alerts/transitions", TransitionViewSet, basename="transition")
router.register("alerts/silences", SilenceViewSet, basename="silence")
router.register("alerts/channels", ChannelViewSet, basename="channel")
router.register("alerts/rules", RuleViewSet, basename="rule")

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("", include(router.urls)),
]
