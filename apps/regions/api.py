"""Accounts and regions through the API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from apps.api.conditional import ConditionalGet
from apps.api.lists import FilterSet, IdFilter

from . import thresholds
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


class ThresholdsSerializer(serializers.Serializer):
    own = serializers.DictField(
        child=serializers.FloatField(), help_text="Set for this subject (what PUT replaces)"
    )
    region = serializers.DictField(
        child=serializers.FloatField(), help_text="Set for all the concern's subjects there"
    )
    defaults = serializers.DictField(child=serializers.FloatField(), help_text="Global")
    applied = serializers.DictField(
        child=serializers.DictField(), help_text='{"value": 70, "level": "subject"}'
    )
    units = serializers.DictField(child=serializers.CharField())


def _replaced(concern: str, region: Region, subject_id: int | None, data: Any) -> None:
    if not isinstance(data, Mapping):  # JSON null too: only {} sets none
        raise ValidationError({"thresholds": "Give an object of threshold -> number ({} for none)"})
    try:
        thresholds.replace(concern, region, subject_id, data)
    except ValueError as exc:
        raise ValidationError({"thresholds": str(exc)}) from None


class SubjectThresholds:
    """``GET/PUT <subject>/<id>/thresholds/`` for a concern's subject viewset: its own
    thresholds (PUT ``{name: number}`` replaces them; admins) beside its region's and the
    global defaults, and which applies (``apps.regions.thresholds``)."""

    required_perms: tuple[str, ...] | None = None  # DRF sets the action's on the view

    @extend_schema(request=OpenApiTypes.OBJECT, responses=ThresholdsSerializer)
    @action(detail=True, methods=["get", "put"], required_perms=[thresholds.PERMISSION])
    def thresholds(self, request: Request, pk: str | None = None, **kwargs: object) -> Response:
        """This subject's own thresholds (PUT replaces them; admins) beside its region's and
        the global defaults: a threshold set here changes this subject's status only, from its
        next collection."""
        subject = self.get_object()  # type: ignore[attr-defined]
        if request.method == "PUT":
            _replaced(subject.concern, subject.region, subject.pk, request.data)
        rows = thresholds.table(subject.concern, subject.region, subject.pk)
        return Response(thresholds.as_json(rows))


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
    required_perms: tuple[str, ...] | None = None  # DRF sets the action's on the view

    @extend_schema(request=OpenApiTypes.OBJECT, responses=ThresholdsSerializer)
    @action(
        detail=True,
        methods=["get", "put"],
        url_path="thresholds/(?P<concern>[a-z0-9_]+)",
        required_perms=[thresholds.PERMISSION],
    )
    def thresholds(
        self, request: Request, pk: str | None = None, concern: str = "", **kwargs: object
    ) -> Response:
        """The thresholds set for all of a concern's subjects in this region (PUT ``{name:
        number}`` replaces them; admins; a subject's own still win), beside the global
        defaults (``own`` is empty here: see each subject's)."""
        region = self.get_object()
        try:
            thresholds.declared(concern)
        except LookupError as exc:
            raise NotFound(str(exc)) from None
        if request.method == "PUT":
            _replaced(concern, region, None, request.data)
        return Response(thresholds.as_json(thresholds.table(concern, region)))
