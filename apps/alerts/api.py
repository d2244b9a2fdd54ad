"""Incidents, transitions, silences, channels and rules through the API."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from .models import Channel, Incident, Rule, Silence, Transition


class TransitionSerializer(serializers.ModelSerializer):
    region = serializers.SlugRelatedField(slug_field="code", read_only=True)

    class Meta:
        model = Transition
        fields = [
            "id",
            "region",
            "concern",
            "subject_label",
            "content_type",
            "object_id",
            "old_status",
            "new_status",
            "reason",
            "figures",
            "created",
        ]


class IncidentSerializer(serializers.ModelSerializer):
    region = serializers.SlugRelatedField(slug_field="code", read_only=True)
    acknowledged_by = serializers.StringRelatedField()

    class Meta:
        model = Incident
        fields = [
            "id",
            "region",
            "concern",
            "subject_label",
            "content_type",
            "object_id",
            "status",
            "reason",
            "opened",
            "closed",
            "acknowledged",
            "acknowledged_by",
            "reminders_sent",
        ]


class SilenceSerializer(serializers.ModelSerializer):
    author = serializers.StringRelatedField()
    hours = serializers.FloatField(
        write_only=True,
        required=False,
        min_value=0.1,
        help_text="Duration from now; or give `ends`.",
    )

    class Meta:
        model = Silence
        fields = [
            "id",
            "region",
            "concern",
            "content_type",
            "object_id",
            "starts",
            "ends",
            "hours",
            "author",
            "comment",
            "created",
        ]
        read_only_fields = ["starts", "author", "created"]
        extra_kwargs = {"ends": {"required": False}}

    def validate(self, data: dict) -> dict:
        hours = data.pop("hours", None)
        if hours is not None:
            data["ends"] = timezone.now() + timedelta(hours=hours)
        if "ends" not in data:
            raise serializers.ValidationError({"ends": "Give `ends` or `hours`."})
        if data["ends"] <= timezone.now():
            raise serializers.ValidationError({"ends": "The end must be in the future."})
        return data


class ChannelSerializer(serializers.ModelSerializer):
    class Meta:
        model = Channel
        fields = [
            "id",
            "name",
            "kind",
            "target",
            "disabled",
            "created",
            "last_error",
            "last_error_at",
            "last_success",
        ]
        read_only_fields = ["created", "last_error", "last_error_at", "last_success"]


class RuleSerializer(serializers.ModelSerializer):
    class Meta:
        model = Rule
        fields = [
            "id",
            "name",
            "region",
            "concern",
            "content_type",
            "object_id",
            "min_severity",
            "channels",
            "enabled",
            "is_default",
        ]
        read_only_fields = ["is_default"]


class TransitionViewSet(viewsets.ReadOnlyModelViewSet):
    """Every status change, newest first. Filter with ?region=eu-west-1&concern=efs."""

    serializer_class = TransitionSerializer

    def get_queryset(self):
        qs = Transition.objects.select_related("region")
        params = self.request.query_params
        if params.get("region"):
            qs = qs.filter(region__code=params["region"])
        if params.get("concern"):
            qs = qs.filter(concern=params["concern"])
        return qs


class IncidentViewSet(viewsets.ReadOnlyModelViewSet):
    """Incidents; ?open=true for the current ones."""

    serializer_class = IncidentSerializer

    def get_queryset(self):
        qs = Incident.objects.select_related("region", "acknowledged_by")
        if self.request.query_params.get("open") in {"true", "1"}:
            qs = qs.filter(closed=None)
        return qs

    @extend_schema(request=None, responses=IncidentSerializer)
    @action(detail=True, methods=["post"])
    def acknowledge(self, request: Request, pk: str | None = None) -> Response:
        """Acknowledge an open incident: reminders stop until it gets worse."""
        incident = self.get_object()
        Incident.objects.filter(pk=incident.pk, closed=None, acknowledged=None).update(
            acknowledged=timezone.now(), acknowledged_by=request.user
        )
        incident.refresh_from_db()
        return Response(IncidentSerializer(incident).data)


class SilenceViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Maintenance silences. DELETE expires one now (it stays listed)."""

    serializer_class = SilenceSerializer
    queryset = Silence.objects.select_related("author")

    def perform_create(self, serializer: SilenceSerializer) -> None:
        serializer.save(author=self.request.user)

    def perform_destroy(self, instance: Silence) -> None:
        if instance.ends > timezone.now():
            instance.ends = timezone.now()
            instance.save(update_fields=["ends"])


class ChannelViewSet(viewsets.ModelViewSet):
    """Where alerts go, with each channel's last success and last error."""

    serializer_class = ChannelSerializer
    queryset = Channel.objects.all()


class RuleViewSet(viewsets.ModelViewSet):
    """Routing rules; the default rule can be edited but not deleted."""

    serializer_class = RuleSerializer
    queryset = Rule.objects.prefetch_related("channels")

    def perform_destroy(self, instance: Rule) -> None:
        if instance.is_default:
            raise serializers.ValidationError({"is_default": "The default rule cannot be deleted."})
        instance.delete()
