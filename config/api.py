"""One DRF router for every app's ``api.py``, plus the OpenAPI schema and its docs.

The concerns' routes and push endpoints come from the concern registry (each concern's
``api.ROUTES`` and ``api.URLS``, ``apps/regions/concerns.py``); this file names only the apps
that are not concerns.
"""

from __future__ import annotations

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from apps.alerts.api import (
    CauseViewSet,
    ChannelViewSet,
    DependencyViewSet,
    EscalationPolicyViewSet,
    IncidentViewSet,
    MaintenanceWindowViewSet,
    RuleViewSet,
    SilenceViewSet,
    TransitionViewSet,
)
from apps.api.keys import ApiKeyViewSet, AuditViewSet
from apps.regions import concerns
from apps.regions.api import AccountViewSet, RegionViewSet

router = DefaultRouter()
router.register("accounts", AccountViewSet, basename="account")
router.register("regions", RegionViewSet, basename="region")
router.register("keys", ApiKeyViewSet, basename="apikey")
router.register("audit", AuditViewSet, basename="audit")
router.register("alerts/incidents", IncidentViewSet, basename="incident")
router.register("alerts/causes", CauseViewSet, basename="cause")
router.register(
    "alerts/maintenance-windows", MaintenanceWindowViewSet, basename="maintenance-window"
)
router.register("alerts/dependencies", DependencyViewSet, basename="dependency")
router.register("alerts/escalation-policies", EscalationPolicyViewSet, basename="escalation-policy")
router.register("alerts/transitions", TransitionViewSet, basename="transition")
router.register("alerts/silences", SilenceViewSet, basename="silence")
router.register("alerts/channels", ChannelViewSet, basename="channel")
router.register("alerts/rules", RuleViewSet, basename="rule")
for prefix, viewset, basename in concerns.api_routes():
    router.register(prefix, viewset, basename=basename)

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    *concerns.api_urls(),
    path("", include(router.urls)),
]
