"""API keys through the API (list, issue: the key is in the response once, revoke), and the
audit trail (read, admins): the API's own resources, kept with the plumbing that checks those
keys (``apps.accounts`` sits below it: docs/architecture.md, "Imports point down")."""

from __future__ import annotations

import django_filters
from auditlog.models import LogEntry
from django.db.models import QuerySet
from rest_framework import exceptions, serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.audit import changes
from apps.accounts.models import ApiKey, KeyRefused

from .conditional import ConditionalGet, CreateListRetrieveDestroyViewSet
from .lists import FilterSet, SinceUntilFilterSet


class ApiKeySerializer(serializers.ModelSerializer):
    prefix = serializers.CharField(source="display_prefix", read_only=True)
    key = serializers.SerializerMethodField(help_text="The key itself: returned once, on creation.")

    class Meta:
        model = ApiKey
        fields = ["id", "name", "read_only", "prefix", "created", "last_used", "revoked", "key"]
        read_only_fields = ["created", "last_used", "revoked"]

    def get_key(self, obj: ApiKey) -> str | None:
        return self.context.get("raw_key")


class ApiKeyFilter(FilterSet):
    revoked = django_filters.BooleanFilter(
        field_name="revoked", lookup_expr="isnull", exclude=True, help_text="Revoked keys only"
    )

    class Meta:
        model = ApiKey
        fields = ["read_only", "revoked"]


class ApiKeyViewSet(CreateListRetrieveDestroyViewSet):
    """Your API keys. DELETE revokes a key (it stays listed, with its revocation time).

    Anyone logged in manages their own keys; a viewer's are read-only, and a key acts with
    its owner's role as it is when the key is used.
    """

    serializer_class = ApiKeySerializer
    queryset = ApiKey.objects.none()  # for the schema; get_queryset scopes to the user
    filterset_class = ApiKeyFilter
    ordering_fields = ["id", "name", "created", "last_used"]
    ordering = ["-created", "-pk"]
    required_perms = ()  # one's own keys: any logged-in user (KeyRefused sets the limits)

    def get_queryset(self) -> QuerySet[ApiKey]:
        return ApiKey.objects.filter(user=self.request.user)

    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            key, raw = ApiKey.issue(
                request.user,
                serializer.validated_data["name"],
                read_only=serializer.validated_data.get("read_only", True),
            )
        except KeyRefused as refused:
            raise exceptions.PermissionDenied(str(refused)) from None
        out = ApiKeySerializer(key, context={"raw_key": raw})
        return Response(out.data, status=201)

    def perform_destroy(self, instance: ApiKey) -> None:
        instance.revoke()


class AuditEntrySerializer(serializers.ModelSerializer):
    actor = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,
        help_text="Who; null for Vigil's own workers.",
    )
    action = serializers.CharField(source="get_action_display", help_text="create, update, delete")
    model = serializers.SerializerMethodField(help_text="app_label.model, e.g. galera.node")
    changes = serializers.SerializerMethodField(
        help_text="Each changed field: [before, after]; secrets as (hidden)."
    )
    via = serializers.SerializerMethodField(help_text="The API key used, if any.")

    class Meta:
        model = LogEntry
        fields = [
            "id",
            "timestamp",
            "actor",
            "remote_addr",
            "via",
            "action",
            "model",
            "object_pk",
            "object_repr",
            "changes",
        ]

    def get_model(self, entry: LogEntry) -> str:
        return f"{entry.content_type.app_label}.{entry.content_type.model}"

    def get_changes(self, entry: LogEntry) -> dict[str, list[str]]:
        return {field: [before, after] for field, before, after in changes(entry)}

    def get_via(self, entry: LogEntry) -> str | None:
        return (entry.additional_data or {}).get("via")


class AuditFilter(SinceUntilFilterSet):
    time_field = "timestamp"
    actor = django_filters.CharFilter(field_name="actor__username", help_text="Username")
    model = django_filters.CharFilter(method="filter_model", help_text="app_label.model")
    object_pk = django_filters.CharFilter(help_text="The object's id")

    class Meta:
        model = LogEntry
        fields: list[str] = []

    def filter_model(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        app_label, _, model = value.partition(".")
        return queryset.filter(content_type__app_label=app_label, content_type__model=model)


class AuditViewSet(ConditionalGet, viewsets.ReadOnlyModelViewSet):
    """The audit trail, newest first (admins): every change of configuration, with who,
    when, from which address, and each field before and after."""

    serializer_class = AuditEntrySerializer
    queryset = LogEntry.objects.select_related("actor", "content_type")
    filterset_class = AuditFilter
    ordering_fields = ["id", "timestamp"]
    ordering = ["-timestamp", "-pk"]
    read_perms = ("auditlog.view_logentry",)
