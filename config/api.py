"""One DRF router for every app's ``api.py``, plus the OpenAPI schema and its docs."""

from __future__ import annotations

from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from apps.accounts.api import ApiKeyViewSet, AuditViewSet
from apps.alerts.api import (
    ChannelViewSet,
    IncidentViewSet,
    RuleViewSet,
    SilenceViewSet,
    TransitionViewSet,
)
from apps.efs.api import FileSystemViewSet
from apps.galera import api as galera_api
from apps.probes.api import ResultViewSet, TargetViewSet
from apps.raid import api as raid_api
from apps.regions.api import AccountViewSet, RegionViewSet

router = DefaultRouter()
router.register("accounts", AccountViewSet, basename="account")
router.register("regions", RegionViewSet, basename="region")
router.register("keys", ApiKeyViewSet, basename="apikey")
router.register("audit", AuditViewSet, basename="audit")
router.register("efs/filesystems", FileSystemViewSet, basename="efs-filesystem")
router.register("probes/targets", TargetViewSet, basename="probe-target")
router.register("probes/results", ResultViewSet, basename="probe-result")
router.register("alerts/incidents", IncidentViewSet, basename="incident")
router.register("alerts/transitions", TransitionViewSet, basename="transition")
router.register("alerts/silences", SilenceViewSet, basename="silence")
router.register("alerts/channels", ChannelViewSet, basename="channel")
router.register("alerts/rules", RuleViewSet, basename="rule")
router.register("raid/hosts", raid_api.HostViewSet, basename="raid-host")
router.register("raid/arrays", raid_api.ArrayViewSet, basename="raid-array")
router.register("raid/members", raid_api.MemberViewSet, basename="raid-member")
router.register("raid/history", raid_api.HistoryViewSet, basename="raid-history")
router.register("galera/clusters", galera_api.ClusterViewSet, basename="galera-cluster")
router.register("galera/nodes", galera_api.NodeViewSet, basename="galera-node")
router.register("galera/snapshots", galera_api.SnapshotViewSet, basename="galera-snapshot")

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    re_path(r"^raid/hosts/(?P<pk>[0-9]+)/report/?$", raid_api.report, name="raid-report"),
    re_path(r"^galera/nodes/(?P<pk>[0-9]+)/report/?$", galera_api.report, name="galera-report"),
    path("", include(router.urls)),
]
