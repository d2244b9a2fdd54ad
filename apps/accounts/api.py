"""API keys through the API: list, issue (the key is in the response once), revoke."""

from __future__ import annotations

import django_filters
from django.db.models import QuerySet
from rest_framework import mixins, serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from .conditional import ConditionalGet
from .lists import FilterSet
from .models import ApiKey


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


class ApiKeyViewSet(
    ConditionalGet,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Your API keys. DELETE revokes a key (it stays listed, with its revocation time)."""

    serializer_class = ApiKeySerializer
    queryset = ApiKey.objects.none()  # for the schema; get_queryset scopes to the user
    filterset_class = ApiKeyFilter
    ordering_fields = ["id", "name", "created", "last_used"]
    ordering = ["-created", "-pk"]

    def get_queryset(self) -> QuerySet[ApiKey]:
        return ApiKey.objects.filter(user=self.request.user)

    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        key, raw = ApiKey.issue(
            request.user,
            serializer.validated_data["name"],
            read_only=serializer.validated_data.get("read_only", True),
        )
        out = ApiKeySerializer(key, context={"raw_key": raw})
        return Response(out.data, status=201)

    def perform_destroy(self, instance: ApiKey) -> None:
        instance.revoke()
