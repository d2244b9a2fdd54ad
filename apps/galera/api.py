"""Galera clusters and nodes (read-write), their poll snapshots (read-only), and the push.

A node's password is never stored, and the API never returns where it comes from either:
``password_env`` / ``password_file`` are write-only, ``password_source`` says only which
kind is set.

``POST /api/galera/nodes/<id>/report`` takes a pushing node's ``SHOW GLOBAL STATUS LIKE
'wsrep_%'`` text (``text/plain``, or JSON ``{"status": ..., "provider_options": ...}``),
authenticated by the node's own token (``Authorization: Bearer vgn_…``) or a read-write API key
of someone who may change Galera nodes (an admin). The body is read with ``apps.lib.bodies``
(at most ``VIGIL_PUSH_MAX_BYTES``, 413 beyond); an unreadable text is answered 400 naming the
line and nothing is stored. The cluster is judged on its next tick, like a poll, with this
report in place of a connection.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import re_path
from django.utils import timezone
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from apps.api.conditional import AppendOnlyList, ConditionalGet
from apps.api.lists import FilterSet, IdFilter, RegionFilter, SinceUntilFilterSet
from apps.api.push import CanPush, push_endpoint, token_scheme
from apps.api.validation import ModelClean
from apps.lib.bodies import BodyRefused, read_payload
from apps.lib.pushtoken import PushTokenAuthentication
from apps.regions.api import SubjectThresholds
from apps.regions.models import Region

from .advice import cluster_advice
from .collect import stopped_words
from .models import CLUSTER_FIELDS, POLLED_FIELDS, SUMMARY_FIELDS, Cluster, Node, Snapshot
from .parse_grastate import HEADER as GRASTATE_HEADER
from .parse_grastate import looks_like_grastate, parse_grastate
from .parse_push import read_report
from .parse_wsrep import ParseError
from .verdict import NodeResult, classify, storable
from .views import headroom_words

# --- push ------------------------------------------------------------------------------------


class NodeTokenAuthentication(PushTokenAuthentication):
    """``Authorization: Bearer vgn_…``: a token that may only push one node's status."""

    model = Node
    refused = "Invalid or replaced node token"


NodeTokenScheme = token_scheme(
    NodeTokenAuthentication,
    "nodeToken",
    "A Galera node's own push token (vgn_…), shown once on its cluster page.",
)


class CanPushNodeReport(CanPush):
    """A node's own token, or a read-write API key (or session) holding ``galera.change_node``."""

    subject = Node
    noun = "node"
    perms = ("galera.change_node",)


def _report_fields(data: object) -> tuple[str, str]:
    """The texts of a report; ValueError saying what is wrong with its shape. A stopped node's
    report (``grastate``, or a text that begins as grastate.dat does) comes back as the status
    text, told apart by ``looks_like_grastate``."""
    if not isinstance(data, dict):
        raise ValueError("Send a JSON object with 'status' and optional 'provider_options'")
    grastate = data.get("grastate")
    if grastate is not None:
        if not isinstance(grastate, str) or not looks_like_grastate(grastate):
            raise ValueError(f"'grastate' must be the text of grastate.dat ({GRASTATE_HEADER})")
        return grastate, ""
    status = data.get("status")
    if not isinstance(status, str) or not status.strip():
        raise ValueError("'status' must be the text of SHOW GLOBAL STATUS LIKE 'wsrep_%'")
    options = data.get("provider_options") or ""
    if not isinstance(options, str):
        raise ValueError("'provider_options' must be the text of wsrep_provider_options")
    return status, options


@push_endpoint(
    authentication=NodeTokenAuthentication,
    permission=CanPushNodeReport,
    request=inline_serializer(
        "GaleraReport",
        {
            "status": serializers.CharField(
                help_text="SHOW GLOBAL STATUS LIKE 'wsrep_%' (mariadb -B -N, table or \\G)"
            ),
            "provider_options": serializers.CharField(
                required=False, help_text="wsrep_provider_options, unless a row of 'status'"
            ),
            "grastate": serializers.CharField(
                required=False,
                help_text="A stopped node: grastate.dat, then vigil_recovered_by and "
                "vigil_recovered lines when its seqno is -1 (instead of 'status'; as "
                "text/plain, a body that begins '# GALERA saved state')",
            ),
        },
    ),
    accepted=inline_serializer(
        "GaleraReportAccepted",
        {
            "node": serializers.IntegerField(),
            "cluster": serializers.IntegerField(),
            "state": serializers.CharField(),
            "detail": serializers.CharField(),
        },
    ),
    conflict="The node is polled, or disabled",
    description="Push a Galera node's wsrep status (what agents/vigil-galera-push sends). "
    "Authenticate with the node's token (Bearer vgn_…) or a read-write API key of an admin "
    "(galera.change_node). The node must be in push mode. An unreadable text is answered 400 "
    "naming the line; nothing is stored then. The cluster is judged on its next tick. "
    "A stopped node sends its grastate.dat (and the position galera_recovery or "
    "mysqld --wsrep-recover found when its seqno is -1) for the recovery advice.",
)
def report(request: Request, pk: int) -> Response:
    node = Node.objects.select_related("cluster").filter(pk=pk).first()
    if node is None:
        return Response({"error": f"No Galera node {pk}"}, status=404)
    if node.mode != Node.Mode.PUSH:
        return Response({"error": f"Node {node.label} is polled; set its mode to push"}, 409)
    if not node.cluster.enabled:
        return Response({"error": f"Cluster {node.cluster} is disabled"}, status=409)
    try:
        payload = read_payload(request, settings.VIGIL_PUSH_MAX_BYTES, text_field="status")
        status_text, options_text = _report_fields(payload)
    except BodyRefused as exc:
        return Response({"error": str(exc)}, status=exc.status)
    except ValueError as exc:
        return Response({"error": str(exc)}, status=400)
    if looks_like_grastate(status_text):
        return _stopped_report(node, status_text)
    try:
        status, options = read_report(status_text, options_text)
    except ParseError as exc:
        return Response({"error": f"unreadable wsrep status: {storable(str(exc), 500)}"}, 400)
    seen = classify(NodeResult(node.label, status=status, options=options))
    Node.objects.filter(pk=node.pk).update(
        reported_at=timezone.now(),
        report_status=status_text,
        report_options=options_text,
        grastate={},
        state=str(seen.state),
        detail=storable(seen.detail),
    )
    body: dict[str, Any] = {
        "node": node.pk,
        "cluster": node.cluster_id,
        "state": str(seen.state),
        "detail": seen.detail,
    }
    return Response(body)


def _stopped_report(node: Node, text: str) -> Response:
    """A stopped node's grastate.dat (and recovered position), kept for the recovery advice."""
    try:
        grastate = parse_grastate(text)
    except ParseError as exc:
        return Response({"error": f"unreadable grastate.dat: {storable(str(exc), 500)}"}, 400)
    detail = stopped_words(grastate.as_dict())
    Node.objects.filter(pk=node.pk).update(
        reported_at=timezone.now(),
        report_status="",
        report_options="",
        grastate=grastate.as_dict(),
        state="stopped",
        detail=storable(detail),
    )
    return Response(
        {"node": node.pk, "cluster": node.cluster_id, "state": "stopped", "detail": detail}
    )


# --- read and configure ----------------------------------------------------------------------


class ClusterSerializer(serializers.ModelSerializer):
    region = serializers.PrimaryKeyRelatedField(queryset=Region.objects.all())
    headroom = serializers.SerializerMethodField(
        help_text='In words, e.g. "can lose 2 more nodes one at a time, 1 at once".'
    )

    class Meta:
        model = Cluster
        fields = [
            "id",
            *CLUSTER_FIELDS,
            "is_demo",
            "next_due",
            "status",
            "reason",
            "status_changed",
            *POLLED_FIELDS,
            "headroom",
            "created",
        ]
        read_only_fields = [
            "is_demo",
            "status",
            "reason",
            "status_changed",
            *POLLED_FIELDS,
            "created",
        ]

    def get_headroom(self, cluster: Cluster) -> str | None:
        return headroom_words(cluster)


class NodeSerializer(ModelClean, serializers.ModelSerializer):
    password_source = serializers.SerializerMethodField(help_text='"env", "file" or "none".')
    token = serializers.CharField(
        source="token_hint",
        read_only=True,
        help_text="Push mode: the start of the node's token (vgn_…), never the token.",
    )

    class Meta:
        model = Node
        fields = [
            "id",
            "cluster",
            "name",
            "host",
            "port",
            "user",
            "password_env",
            "password_file",
            "password_source",
            "tls",
            "tls_ca",
            "tls_verify",
            "mode",
            "token",
            "reported_at",
            "state",
            "detail",
        ]
        read_only_fields = ["state", "detail", "reported_at"]
        # The model's fields, with its validators; written, never returned.
        extra_kwargs = {
            "password_env": {
                "write_only": True,
                "help_text": "Name of the environment variable holding the password. Never "
                "returned. Changing host or port forgets it unless the same request gives it "
                "again.",
            },
            "password_file": {
                "write_only": True,
                "help_text": "A file in VIGIL_GALERA_SECRETS_DIR holding the password. Never "
                "returned.",
            },
        }

    def get_password_source(self, node: Node) -> str:
        if node.password_env:
            return "env"
        return "file" if node.password_file else "none"

    def validate(self, attrs: dict) -> dict:
        given = "password_env" in attrs or "password_file" in attrs
        moved = self.instance is not None and (
            attrs.get("host", self.instance.host) != self.instance.host
            or attrs.get("port", self.instance.port) != self.instance.port
        )
        if moved and given:  # the reference not given again goes (Node.save clears it too)
            attrs.setdefault("password_env", "")
            attrs.setdefault("password_file", "")
        return super().validate(attrs)  # Node.clean(): not both

    def update(self, instance: Node, validated_data: dict) -> Node:
        # A host or port change forgets the password reference unless this request gives one.
        instance.password_given = "password_env" in validated_data or (
            "password_file" in validated_data
        )
        return super().update(instance, validated_data)


class RecoveryStepSerializer(serializers.Serializer):
    node = serializers.CharField()
    command = serializers.CharField(help_text="What to run on that node (Vigil never runs it)")
    why = serializers.CharField()


class RecoveryNodeSerializer(serializers.Serializer):
    node = serializers.CharField()
    running = serializers.BooleanField(allow_null=True, help_text="null: no word from it")
    position = serializers.IntegerField(allow_null=True, help_text="Last seqno it holds")
    source = serializers.CharField(
        allow_null=True,
        help_text="wsrep_last_committed, grastate.dat, galera_recovery or mysqld --wsrep-recover",
    )
    safe_to_bootstrap = serializers.BooleanField(allow_null=True)
    uuid = serializers.CharField(allow_null=True)
    mode = serializers.CharField()


class RecoverySerializer(serializers.Serializer):
    cluster = serializers.IntegerField()
    situation = serializers.ChoiceField(["primary", "all_stopped", "partition", "waiting"])
    summary = serializers.CharField()
    chosen = serializers.CharField(allow_null=True, help_text="The node to start from")
    steps = RecoveryStepSerializer(many=True)
    waiting_for = serializers.ListField(child=serializers.CharField())
    left_out = serializers.ListField(
        child=serializers.CharField(), help_text="Nodes of another cluster state uuid"
    )
    warnings = serializers.ListField(
        child=serializers.CharField(), help_text="Ties and contradictions"
    )
    loses = serializers.CharField(help_text="Partition: what the other side loses")
    reasons = serializers.ListField(child=serializers.CharField())
    polled_at = serializers.DateTimeField(allow_null=True)
    nodes = RecoveryNodeSerializer(many=True)


class ClusterViewSet(SubjectThresholds, ConditionalGet, viewsets.ModelViewSet):
    """Galera clusters; ``status``, ``reason`` and the size figures come from the last poll."""

    serializer_class = ClusterSerializer
    queryset = Cluster.objects.all()
    filterset_fields = ["name", "region", "status", "enabled", "primary"]
    ordering_fields = ["id", "name", "status", "status_changed", "polled_at", "created"]
    ordering = ["pk"]

    @extend_schema(responses=RecoverySerializer)
    @action(detail=True)
    def recovery(self, request: Request, pk: str | None = None, **kwargs: object) -> Response:
        """What to do when the cluster lost its Primary component, with the reason: every
        node stopped (galera_new_cluster on the most advanced), a partition (pc.bootstrap=YES
        on the most advanced of the heaviest component), or waiting for a node's position.
        Read-only: Vigil never runs any of it."""
        cluster = self.get_object()
        advice, basis = cluster_advice(cluster)
        return Response({"cluster": cluster.pk, **advice.as_dict(), **basis})


class NodeFilter(FilterSet):
    cluster = IdFilter(help_text="Cluster id")
    region = RegionFilter(field_name="cluster__region")

    class Meta:
        model = Node
        fields = ["host", "port", "state", "mode"]


class NodeViewSet(ConditionalGet, viewsets.ModelViewSet):
    """Data nodes polled over MySQL; garbd arbitrators are counted, not configured."""

    serializer_class = NodeSerializer
    queryset = Node.objects.all()
    filterset_class = NodeFilter
    ordering_fields = ["id", "name", "host", "port", "state"]
    ordering = ["pk"]


class SnapshotSerializer(serializers.ModelSerializer):
    class Meta:
        model = Snapshot
        fields = [
            "id",
            "cluster",
            "created",
            "status",
            "reason",
            *SUMMARY_FIELDS,
            "split_brain",
            "nodes",
        ]


class SnapshotFilter(SinceUntilFilterSet):
    cluster = IdFilter(help_text="Cluster id")
    region = RegionFilter(field_name="cluster__region")

    class Meta:
        model = Snapshot
        fields = ["status", "primary", "split_brain"]


class SnapshotViewSet(AppendOnlyList, viewsets.ReadOnlyModelViewSet):
    """One row per poll, newest first: the size history, with each node's state and queues."""

    serializer_class = SnapshotSerializer
    queryset = Snapshot.objects.all()
    filterset_class = SnapshotFilter
    ordering = ["-created", "-pk"]


#: Read by config/api.py through the concern registry: ``(prefix, viewset, basename)``, and
#: the push endpoint.
ROUTES = [
    ("galera/clusters", ClusterViewSet, "galera-cluster"),
    ("galera/nodes", NodeViewSet, "galera-node"),
    ("galera/snapshots", SnapshotViewSet, "galera-snapshot"),
]
URLS = [re_path(r"^galera/nodes/(?P<pk>[0-9]+)/report/?$", report, name="galera-report")]
