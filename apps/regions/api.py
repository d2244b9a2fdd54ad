"""Accounts and regions through the API."""

from __future__ import annotations

from rest_framework import mixins, serializers, viewsets

from apps.api.conditional import ConditionalGet
from apps.api.lists import FilterSet, IdFilter

from .models import Account, Region


class AccountSerializer(serializers.ModelSerializer):
    external_id = serializers.CharField(
        write_only=True, required=False, allow_blank=True, help_text="Never returned."
    )

    class Meta:
        model = Account
        fields = [
            "id",
            "name",
            "role_arn",
            "external_id",
            "home_region",
            "enabled",
            "is_demo",
            "created",
            "discovered",
            "last_error",
            "last_error_at",
        ]
        read_only_fields = ["is_demo", "created", "discovered", "last_error", "last_error_at"]


class AccountViewSet(ConditionalGet, viewsets.ModelViewSet):
    """AWS accounts. Credentials are never stored here: the default chain, or a role to assume."""

    queryset = Account.objects.all()
    serializer_class = AccountSerializer
    filterset_fields = ["name", "enabled", "is_demo"]
    ordering_fields = ["id", "name", "created", "discovered"]
    ordering = ["name", "pk"]


class RegionSerializer(serializers.ModelSerializer):
    account = serializers.PrimaryKeyRelatedField(read_only=True, allow_null=True)
    opt_in_status = serializers.ChoiceField(
        Region.OptIn.choices, read_only=True, allow_blank=True, help_text="Empty for a site."
    )

    class Meta:
        model = Region
        fields = ["id", "account", "kind", "code", "name", "opt_in_status", "enabled", "created"]
        read_only_fields = ["account", "kind", "code", "name", "opt_in_status", "created"]


class RegionFilter(FilterSet):
    account = IdFilter(help_text="Account id")

    class Meta:
        model = Region
        fields = ["account", "kind", "code", "opt_in_status", "enabled"]


class RegionViewSet(
    ConditionalGet,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Regions found per account (and sites). PATCH ``enabled`` to show or hide one."""

    queryset = Region.objects.select_related("account")
    serializer_class = RegionSerializer
    filterset_class = RegionFilter
    ordering_fields = ["id", "code", "kind", "name", "created"]
    ordering = ["kind", "code", "pk"]
