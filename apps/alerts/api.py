"""Incidents, transitions, silences, channels and rules through the API."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import django_filters
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from apps.api.conditional import AppendOnlyList, ConditionalGet, CreateListRetrieveDestroyViewSet
from apps.api.lists import FilterBackend, FilterSet, IdFilter, KeysetPagination, SinceUntilFilterSet
from apps.api.validation import ModelClean
from apps.regions import concerns

from .models import (
    NOTE_MAX,
    RULE_FIELDS,
    Cause,
    Channel,
    Dependency,
    EscalationLevel,
    EscalationPolicy,
    Incident,
    MaintenanceWindow,
    Rule,
    Silence,
    Transition,
)
from .scopes import subject_of
from .timeline import timeline
from .views import end_silence, resend

MAX_SILENCE_HOURS = 10 * 366 * 24  # ten years; give `ends` for longer


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
    acknowledged_by = serializers.StringRelatedField(allow_null=True)

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
            "cause",
            "escalation_policy",
            "escalation_level",
            "next_escalation",
        ]


class CauseMemberSerializer(serializers.ModelSerializer):
    """A subject of an incident by cause, and whether its own alert was held back."""

    inhibited = serializers.SerializerMethodField()

    class Meta:
        model = Incident
        fields = ["id", "subject_label", "content_type", "object_id", "status", "reason",
                  "opened", "closed", "inhibited"]  # fmt: skip

    def get_inhibited(self, incident: Incident) -> bool:
        return incident.last_transition.notifications.filter(state="inhibited").exists()


class CauseSerializer(serializers.ModelSerializer):
    region = serializers.SlugRelatedField(slug_field="code", read_only=True)
    subjects = serializers.SerializerMethodField()

    class Meta:
        model = Cause
        fields = ["id", "key", "label", "region", "concern", "status", "opened", "closed",
                  "subjects"]  # fmt: skip

    @extend_schema_field(CauseMemberSerializer(many=True))
    def get_subjects(self, cause: Cause) -> list[dict]:
        return CauseMemberSerializer(cause.members(), many=True).data


class SilenceSerializer(ModelClean, serializers.ModelSerializer):
    author = serializers.StringRelatedField()
    hours = serializers.FloatField(
        write_only=True,
        required=False,
        min_value=0.1,
        max_value=MAX_SILENCE_HOURS,
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
        return super().validate(data)


class ChannelSerializer(ModelClean, serializers.ModelSerializer):
    """The kind's checks are ``Channel.clean``'s (addresses, URLs through the outbound guard,
    the secret), as the page and the admin make them: a 400 naming the field and the rule."""

    secret = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        max_length=500,
        help_text="Webhook signing secret, PagerDuty routing key or Slack webhook URL. Never "
        "returned; omit it on an update to keep the saved one.",
    )
    has_secret = serializers.SerializerMethodField()

    class Meta:
        model = Channel
        fields = [
            "id",
            "name",
            "kind",
            "target",
            "secret",
            "has_secret",
            "disabled",
            "created",
            "last_error",
            "last_error_at",
            "last_success",
            "config_error",
            "config_error_at",
        ]
        read_only_fields = [
            "created",
            "last_error",
            "last_error_at",
            "last_success",
            "config_error",
            "config_error_at",
        ]

    def get_has_secret(self, channel: Channel) -> bool:
        return bool(channel.secret)

    def to_representation(self, channel: Channel) -> dict[str, Any]:
        data = super().to_representation(channel)
        data["target"] = channel.shown_target  # a URL's scheme and host, never its path
        return data

    def validate_target(self, value: str) -> str:
        """The saved URL when the shown one comes back (a GET's body sent in a PUT)."""
        return self.instance.kept_target(value) if self.instance else value


class RuleSerializer(ModelClean, serializers.ModelSerializer):
    class Meta:
        model = Rule
        fields = ["id", *RULE_FIELDS, "is_default"]
        read_only_fields = ["is_default"]


def concern_filter() -> django_filters.ChoiceFilter:
    """``?concern=`` by a registered concern's key: another value is a 400, not an empty list."""
    return django_filters.ChoiceFilter(choices=concerns.choices, help_text="A concern's key")


class TransitionFilter(SinceUntilFilterSet):
    concern = concern_filter()

    class Meta:
        model = Transition
        fields = ["region", "old_status", "new_status", "concern", "content_type", "object_id"]


class TransitionViewSet(AppendOnlyList, viewsets.ReadOnlyModelViewSet):
    """Every status change, newest first. Filter with ?region=eu-west-1&concern=efs."""

    serializer_class = TransitionSerializer
    queryset = Transition.objects.select_related("region")
    filterset_class = TransitionFilter
    ordering = ["-created", "-pk"]


class CauseFilter(SinceUntilFilterSet):
    time_field = "opened"
    concern = concern_filter()
    open = django_filters.BooleanFilter(
        field_name="closed", lookup_expr="isnull", help_text="true: open; false: closed"
    )

    class Meta:
        model = Cause
        fields = ["region", "status", "concern"]


class CauseViewSet(ConditionalGet, viewsets.ReadOnlyModelViewSet):
    """Incidents by cause (a storage server, an agent that stopped, ...), newest first, each
    with the subjects failing for it; ?open=true for the current ones."""

    serializer_class = CauseSerializer
    queryset = Cause.objects.select_related("region")
    filterset_class = CauseFilter
    pagination_class = KeysetPagination
    filter_backends = [FilterBackend]
    ordering = ["-opened", "-pk"]
    required_perms = None  # the model's, but for the actions that declare theirs

    @extend_schema(request=None, responses=CauseSerializer)
    @action(detail=True, methods=["post"], required_perms=["alerts.acknowledge_incident"])
    def acknowledge(self, request: Request, pk: str | None = None, **kwargs: object) -> Response:
        """Acknowledge every open incident of the cause's subjects: reminders and escalations
        stop for all of them."""
        cause = self.get_object()
        cause.acknowledge(request.user)
        return Response(CauseSerializer(cause).data)


class StepSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    kind = serializers.CharField(help_text="change, escalated, acknowledged or note")
    text = serializers.CharField()
    by = serializers.CharField(help_text="Who (acknowledgements, notes); empty for Vigil")
    status = serializers.CharField(help_text="A change's new status")


class NoteSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=NOTE_MAX, trim_whitespace=True)


class IncidentFilter(SinceUntilFilterSet):
    time_field = "opened"
    concern = concern_filter()
    open = django_filters.BooleanFilter(
        field_name="closed", lookup_expr="isnull", help_text="true: open; false: closed"
    )
    acknowledged = django_filters.BooleanFilter(
        field_name="acknowledged", lookup_expr="isnull", exclude=True
    )

    class Meta:
        model = Incident
        fields = ["region", "status", "concern", "content_type", "object_id"]


class IncidentViewSet(ConditionalGet, viewsets.ReadOnlyModelViewSet):
    """Incidents, newest first; ?open=true for the current ones. since/until select by opening."""

    serializer_class = IncidentSerializer
    queryset = Incident.objects.select_related("region", "acknowledged_by")
    filterset_class = IncidentFilter
    # Keyset pages, newest opened first (see AppendOnlyList); the ETag is the body's.
    pagination_class = KeysetPagination
    filter_backends = [FilterBackend]
    ordering = ["-opened", "-pk"]
    required_perms = None  # the model's, but for the actions that declare theirs

    @extend_schema(request=NoteSerializer, responses={201: StepSerializer})
    @action(detail=True, methods=["post"], required_perms=["alerts.annotate_incident"])
    def notes(self, request: Request, pk: str | None = None, **kwargs: object) -> Response:
        """Add a note (operators and admins): in the incident's timeline and the audit trail."""
        incident = self.get_object()
        given = NoteSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        event = incident.add_note(request.user, given.validated_data["text"])
        step = {"at": event.created, "kind": "note", "text": event.text, "by": str(request.user),
                "status": ""}  # fmt: skip
        return Response(StepSerializer(step).data, status=201)

    @extend_schema(responses=StepSerializer(many=True), filters=False)
    @action(detail=True, methods=["get"], pagination_class=None, filter_backends=[])
    def timeline(self, request: Request, pk: str | None = None, **kwargs: object) -> Response:
        """The incident's timeline, oldest first: status changes, escalations,
        acknowledgements and notes."""
        steps = timeline(self.get_object())
        return Response(StepSerializer([s.__dict__ for s in steps], many=True).data)

    @extend_schema(request=None, responses=IncidentSerializer)
    @action(detail=True, methods=["post"], required_perms=["alerts.acknowledge_incident"])
    def acknowledge(self, request: Request, pk: str | None = None, **kwargs: object) -> Response:
        """Acknowledge an open incident: reminders stop until it gets worse."""
        incident = self.get_object()
        incident.acknowledge(request.user)
        incident.refresh_from_db()
        return Response(IncidentSerializer(incident).data)


class SilenceFilter(FilterSet):
    active = django_filters.BooleanFilter(method="filter_active", help_text="true: not ended yet")

    class Meta:
        model = Silence
        fields = ["region", "concern", "content_type", "object_id"]

    def filter_active(self, queryset: QuerySet, name: str, value: bool) -> QuerySet:
        now = timezone.now()
        return queryset.filter(ends__gt=now) if value else queryset.filter(ends__lte=now)


class SilenceViewSet(CreateListRetrieveDestroyViewSet):
    """Maintenance silences. DELETE expires one now (it stays listed)."""

    serializer_class = SilenceSerializer
    queryset = Silence.objects.select_related("author")
    filterset_class = SilenceFilter
    ordering_fields = ["id", "starts", "ends", "created"]
    ordering = ["-ends", "-pk"]

    def perform_create(self, serializer: SilenceSerializer) -> None:
        serializer.save(author=self.request.user)

    def perform_destroy(self, instance: Silence) -> None:
        if instance.ends > timezone.now():
            end_silence(instance)  # and send what it held that is still open


class ResendSerializer(serializers.Serializer):
    resent = serializers.IntegerField(help_text="Notifications put back in the outbox")


class ChannelViewSet(ConditionalGet, viewsets.ModelViewSet):
    """Where alerts go, with each channel's last success and last error. Secrets are write-only."""

    serializer_class = ChannelSerializer
    queryset = Channel.objects.all()
    filterset_fields = ["kind", "disabled", "name"]
    ordering_fields = ["id", "name", "created", "last_success", "last_error_at"]
    ordering = ["name", "pk"]
    required_perms = None  # the model's, but for the actions that declare theirs

    @extend_schema(request=None, responses=ResendSerializer)
    @action(detail=True, methods=["post"], required_perms=["alerts.resend_notification"])
    def resend(self, request: Request, pk: str | None = None, **kwargs: object) -> Response:
        """Send again every notification this channel did not deliver (failed or refused)."""
        channel = self.get_object()
        return Response({"resent": resend(channel.failed_notifications())})


class EscalationLevelSerializer(serializers.ModelSerializer):
    channels = serializers.PrimaryKeyRelatedField(many=True, queryset=Channel.objects.all())

    class Meta:
        model = EscalationLevel
        fields = ["delay_minutes", "channels"]

    def validate_delay_minutes(self, value: float) -> float:
        if value < 0 or value > 7 * 24 * 60:
            raise serializers.ValidationError("Between 0 and 10080 minutes (a week).")
        return value


class EscalationPolicySerializer(serializers.ModelSerializer):
    """A policy with its levels, first first; writing ``levels`` replaces them all."""

    levels = EscalationLevelSerializer(many=True)

    class Meta:
        model = EscalationPolicy
        fields = ["id", "name", "levels"]

    def to_representation(self, instance: EscalationPolicy) -> dict:
        data = super().to_representation(instance)
        data["levels"] = EscalationLevelSerializer(
            instance.levels.order_by("delay_minutes", "pk"), many=True
        ).data
        return data

    def validate_levels(self, value: list[dict]) -> list[dict]:
        if not value:
            raise serializers.ValidationError("Give at least one level.")
        if len(value) > 10:
            raise serializers.ValidationError("At most 10 levels.")
        if any(not level["channels"] for level in value):
            raise serializers.ValidationError("Each level needs at least one channel.")
        return value

    def _save_levels(self, policy: EscalationPolicy, levels: list[dict]) -> None:
        policy.levels.all().delete()
        for data in levels:
            level = EscalationLevel.objects.create(
                policy=policy, delay_minutes=data["delay_minutes"]
            )
            level.channels.set(data["channels"])

    def create(self, validated_data: dict) -> EscalationPolicy:
        levels = validated_data.pop("levels")
        with transaction.atomic():
            policy = EscalationPolicy.objects.create(**validated_data)
            self._save_levels(policy, levels)
        return policy

    def update(self, instance: EscalationPolicy, validated_data: dict) -> EscalationPolicy:
        levels = validated_data.pop("levels", None)
        with transaction.atomic():
            instance = super().update(instance, validated_data)
            if levels is not None:
                self._save_levels(instance, levels)
        return instance


class EscalationPolicyViewSet(ConditionalGet, viewsets.ModelViewSet):
    """Escalation policies (admins write them): levels of channels, each told when an
    incident stays unacknowledged for its delay. Attach one to a rule (``escalation``)."""

    serializer_class = EscalationPolicySerializer
    queryset = EscalationPolicy.objects.prefetch_related("levels__channels")
    ordering = ["name", "pk"]

    def perform_destroy(self, instance: EscalationPolicy) -> None:
        if instance.rules.exists():
            raise serializers.ValidationError(
                {"error": "Rules use this policy: attach another to them first."}
            )
        instance.delete()


class MaintenanceWindowSerializer(ModelClean, serializers.ModelSerializer):
    next_opens = serializers.SerializerMethodField()
    open_now = serializers.SerializerMethodField()

    class Meta:
        model = MaintenanceWindow
        fields = ["id", "name", "region", "concern", "content_type", "object_id", "cause_key",
                  "days", "start", "cron", "minutes", "time_zone", "enabled", "comment",
                  "open_now", "next_opens"]  # fmt: skip

    def validate_days(self, value: object) -> list[int]:
        if not isinstance(value, list):
            raise serializers.ValidationError("Give weekdays as a list, 0 (Monday) to 6 (Sunday).")
        return value  # empty with a cron rule; the model's clean says which is missing

    def validate_cron(self, value: str) -> str:
        """Saved as the model's clean leaves it (and the page saves it): fields one space apart."""
        return " ".join(value.split())

    def get_open_now(self, window: MaintenanceWindow) -> bool:
        return window.schedule.open_at(timezone.now()) is not None

    def get_next_opens(self, window: MaintenanceWindow) -> str | None:
        found = window.schedule.next_open(timezone.now())
        return found[0].isoformat() if found else None


class MaintenanceWindowViewSet(ConditionalGet, viewsets.ModelViewSet):
    """Recurring maintenance windows (admins write them): weekly days and hours, or a cron
    rule (``cron``), in a named time zone; held while open, still-failing subjects sent when an
    occurrence closes."""

    serializer_class = MaintenanceWindowSerializer
    queryset = MaintenanceWindow.objects.all()
    ordering = ["name", "pk"]

    def perform_create(self, serializer: MaintenanceWindowSerializer) -> None:
        serializer.save(author=self.request.user)


class DependencySerializer(ModelClean, serializers.ModelSerializer):
    subject = serializers.SerializerMethodField()
    upstream = serializers.SerializerMethodField()

    class Meta:
        model = Dependency
        fields = ["id", "content_type", "object_id", "subject", "upstream_type", "upstream_id",
                  "upstream", "comment", "created"]  # fmt: skip

    def get_subject(self, dependency: Dependency) -> str:
        return str(subject_of(dependency.content_type_id, dependency.object_id) or "")

    def get_upstream(self, dependency: Dependency) -> str:
        return str(subject_of(dependency.upstream_type_id, dependency.upstream_id) or "")


class DependencyViewSet(ConditionalGet, viewsets.ModelViewSet):
    """Declared dependencies (admins write them): while ``upstream`` has an open incident, the
    subject's failure joins it as an incident by cause and is held back from the channels told
    of the upstream; the upstream's recovery sends what of the subject still fails."""

    serializer_class = DependencySerializer
    queryset = Dependency.objects.all()
    ordering = ["pk"]

    def perform_create(self, serializer: DependencySerializer) -> None:
        serializer.save(author=self.request.user)


class RuleFilter(FilterSet):
    channel = IdFilter(field_name="channels", help_text="Channel id")

    class Meta:
        model = Rule
        fields = ["region", "concern", "min_severity", "enabled", "is_default"]


class RuleViewSet(ConditionalGet, viewsets.ModelViewSet):
    """Routing rules; the default rule can be edited but not deleted."""

    serializer_class = RuleSerializer
    queryset = Rule.objects.prefetch_related("channels")
    filterset_class = RuleFilter
    ordering_fields = ["id", "name"]
    ordering = ["-is_default", "name", "pk"]

    def perform_destroy(self, instance: Rule) -> None:
        if instance.is_default:
            raise serializers.ValidationError({"is_default": "The default rule cannot be deleted."})
        instance.delete()
