"""The forms of routing rules, silences, channels, escalation policies, maintenance windows and
dependencies. A rule's or a silence's scope is chosen
from lists with the labels the pages use (``apps.alerts.scopes``): a region, a concern, one
subject found by a search; a scope that could never match is refused as it is typed."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from zoneinfo import available_timezones

from django import forms
from django.contrib.contenttypes.models import ContentType
from django.urls import reverse, reverse_lazy
from django.utils import timezone

from apps.regions import concerns
from apps.regions.models import Region, Subject

from . import scopes
from .models import (
    RULE_FIELDS,
    Cause,
    Channel,
    Dependency,
    EscalationLevel,
    EscalationPolicy,
    MaintenanceWindow,
    Rule,
    Silence,
)

ANY_REGION = "Any region"
ANY_CONCERN = "Any concern"
ANY_SUBJECT = "Any subject"


class SubjectField(forms.Field):
    """One monitored subject, or none: a ``<select>`` of ``scopes.find()``'s choices grouped
    by concern, with a search box (``liveforms/form.html`` renders one for a field with a
    ``search_url``) that refreshes the options, narrowed to the form's concern and region.
    Cleans to the subject itself."""

    widget = forms.Select
    search_url = reverse_lazy("alerts:subjects")
    follows = ("concern", "region")  # the search narrows to these fields of the form

    def to_python(self, value: object) -> Subject | None:
        if isinstance(value, Subject):
            return value
        pair = scopes.parse(str(value or ""))
        if pair is None:
            return None
        subject = scopes.subject_of(*pair)
        if subject is None:
            raise forms.ValidationError("No such monitored subject: choose one from the list.")
        return subject

    def prepare_value(self, value: object) -> str:
        return scopes.value_of(value) if isinstance(value, Subject) else str(value or "")


#: The empty choice of a form whose subject is required (a dependency's two ends).
CHOOSE_SUBJECT = "Choose a subject"


def subject_options(found: list[scopes.Choice], empty: str = ANY_SUBJECT) -> list[tuple[Any, Any]]:
    """``Select`` choices: ``empty`` ("Any subject"), then the subjects grouped by concern."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for c in found:
        groups.setdefault(c.concern, []).append((c.value, c.label))
    return [("", empty), *groups.items()]


class ScopeForm(forms.ModelForm):
    """What a rule and a silence share: region, concern and subject, from lists."""

    subject = SubjectField(
        required=False,
        help_text="Type part of a name, an EFS id, a URL or a RAID host to narrow the list.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        instance = self.instance
        if "region" in self.fields:
            shown = Region.objects.shown()
            if instance.region_id:
                shown = shown | Region.objects.filter(pk=instance.region_id)
            self.fields["region"].queryset = shown.distinct()
            self.fields["region"].empty_label = ANY_REGION
        if "concern" in self.fields:
            self.fields["concern"].choices = [("", ANY_CONCERN), *concerns.choices()]
        if instance.content_type_id and instance.object_id and "subject" not in self.initial:
            self.initial["subject"] = f"{instance.content_type_id}:{instance.object_id}"
        chosen = str(self["subject"].value() or "")
        self.fields["subject"].widget.choices = subject_options(
            scopes.find(concern=self._raw("concern"), region=self._raw("region"), keep=chosen)
        )

    def _raw(self, name: str) -> str:
        """A scope field's value as it stands (typed, or initial), for narrowing the list."""
        value = self[name].value() if name in self.fields else None
        if value in (None, "") or (name == "region" and not str(value).isdigit()):
            return ""
        return str(value)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        subject = data.get("subject")
        # The model's clean() (run next, by _post_clean) checks the scope can match.
        self.instance.content_type = (
            ContentType.objects.get_for_model(subject) if subject is not None else None
        )
        self.instance.object_id = subject.pk if subject is not None else None
        return data


class RuleForm(ScopeForm):
    """A routing rule; ``?content_type=&object_id=`` (a subject's history page) picks a subject."""

    field_order = ["name", "region", "concern", "subject", "min_severity", "channels", "enabled"]

    class Meta:
        model = Rule
        fields = [f for f in RULE_FIELDS if f not in ("content_type", "object_id")]
        widgets = {"channels": forms.CheckboxSelectMultiple}
        labels = {"min_severity": "Minimum severity"}
        help_texts = {
            "min_severity": "A change is sent when its old or new status is at least this.",
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("enabled") and not data.get("channels") and not self.instance.is_default:
            self.add_error(
                "channels",
                "Choose at least one channel: an enabled rule without one sends nothing.",
            )
        return data


class SilenceForm(ScopeForm):
    """A silence from now or a planned start, for a region, a concern or one subject. Made for
    one subject (``fixed``, from its incident or history page), it asks for nothing else."""

    starts = forms.DateTimeField(
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="Empty: now. Planned maintenance: when it begins.",
    )
    hours = forms.FloatField(min_value=0.1, max_value=24 * 14, initial=2, help_text="How long.")
    field_order = ["region", "concern", "subject", "starts", "hours", "comment"]

    class Meta:
        model = Silence
        fields = ["region", "concern", "comment"]
        widgets = {"comment": forms.Textarea(attrs={"rows": 2})}
        help_texts = {"comment": "Why: the maintenance, a ticket (shown with the silence)."}

    def __init__(self, *args: Any, fixed: Subject | None = None, **kwargs: Any) -> None:
        self.fixed = fixed
        if fixed is not None:
            kwargs.setdefault("initial", {})["subject"] = scopes.value_of(fixed)
        super().__init__(*args, **kwargs)
        zone = timezone.get_current_timezone_name()
        self.fields[
            "starts"
        ].help_text = (
            f"Empty: now. Planned maintenance: when it begins, in your time zone ({zone})."
        )
        if fixed is not None:
            # One subject: its region and concern go without saying, and it cannot change.
            del self.fields["region"], self.fields["concern"]
            self.fields["subject"].widget = forms.HiddenInput()
            self.fields["subject"].disabled = True

    def save(self, author: Any) -> Silence:  # type: ignore[override]
        silence = super().save(commit=False)
        silence.author = author
        silence.starts = self.cleaned_data["starts"] or timezone.now()
        silence.ends = silence.starts + timedelta(hours=self.cleaned_data["hours"])
        silence.save()
        return silence


class ChannelForm(forms.ModelForm):
    """A channel of any kind. The secret is never rendered back: left empty when editing, the
    saved one is kept; the model's ``clean`` checks target and secret for the kind."""

    secret = forms.CharField(
        required=False,
        strip=True,
        max_length=500,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text=Channel._meta.get_field("secret").help_text,
    )

    class Meta:
        model = Channel
        fields = ["name", "kind", "target", "secret", "disabled"]
        widgets = {"target": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk and self.instance.shown_target != self.instance.target:
            # the URL's path and query are its credential: shown as scheme and host, and kept
            # when sent back so; typing a whole new URL replaces it
            self.initial["target"] = self.instance.shown_target
            self.fields["target"].help_text = (
                "Saved; only its scheme and host are shown. Leave it to keep the URL; type a "
                "whole new one to replace it."
            )
        if self.instance.pk and self.instance.secret:
            self.fields[
                "secret"
            ].help_text = "A secret is saved (not shown). Leave empty to keep it; type a new one to replace it."

    def clean_target(self) -> str:
        return self.instance.kept_target(self.cleaned_data.get("target", ""))

    def clean_secret(self) -> str:
        value = self.cleaned_data.get("secret", "")
        if not value and self.instance.pk:
            return self.instance.secret  # kept: the form never shows it
        return value


WEEKDAYS = [
    (0, "Monday"),
    (1, "Tuesday"),
    (2, "Wednesday"),
    (3, "Thursday"),
    (4, "Friday"),
    (5, "Saturday"),
    (6, "Sunday"),
]
ANY_DOMAIN = "Any failure domain"


def time_zone_choices() -> list[tuple[str, str]]:
    """Every IANA zone name, UTC first: a window's zone is chosen, never typed."""
    return [("UTC", "UTC"), *((z, z) for z in sorted(available_timezones()) if z != "UTC")]


def failure_domain_choices(keep: str = "") -> list[tuple[str, str]]:
    """The causes Vigil has seen (their key, named by their label), and ``keep`` (a window's
    saved one) even if no cause has it now."""
    seen: dict[str, str] = {}
    for key, label in Cause.objects.order_by("key", "-opened").values_list("key", "label"):
        seen.setdefault(key, f"{label} ({key})")
    if keep and keep not in seen:
        seen[keep] = keep
    return [("", ANY_DOMAIN), *sorted(seen.items(), key=lambda kv: kv[1])]


class AuthoredForm(forms.ModelForm):
    """A form of a model that keeps who made it (``author``): set when the row is made,
    kept when it is edited."""

    def save(self, author: Any = None, commit: bool = True) -> Any:  # type: ignore[override]
        made = super().save(commit=False)
        if made.pk is None:
            made.author = author
        if commit:
            made.save()
            self.save_m2m()
        return made


class WindowForm(AuthoredForm, ScopeForm):
    """A recurring maintenance window: its scope from lists (region, concern, subject, a
    failure domain seen before), weekdays as boxes and a start, or a cron rule, in a time zone
    from the IANA list."""

    days = forms.TypedMultipleChoiceField(
        choices=WEEKDAYS,
        coerce=int,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Weekly: the weekdays an occurrence opens on, at the start below (local "
        "time in the window's zone). Leave empty for a cron rule.",
    )
    time_zone = forms.ChoiceField(choices=time_zone_choices, initial="UTC")
    cause_key = forms.ChoiceField(
        label="Failure domain",
        required=False,
        help_text="Subjects failing for this cause (a storage server, an AWS account-region, "
        "a host that stopped pushing) are held.",
    )
    field_order = [
        "name",
        "region",
        "concern",
        "subject",
        "cause_key",
        "days",
        "start",
        "cron",
        "minutes",
        "time_zone",
        "enabled",
        "comment",
    ]

    class Meta:
        model = MaintenanceWindow
        fields = [
            "name",
            "region",
            "concern",
            "cause_key",
            "days",
            "start",
            "cron",
            "minutes",
            "time_zone",
            "enabled",
            "comment",
        ]
        widgets = {
            "start": forms.TimeInput(attrs={"type": "time"}),
            "comment": forms.Textarea(attrs={"rows": 2}),
        }
        help_texts = {"minutes": "How long each occurrence lasts, in minutes (at most a week)."}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["cause_key"].choices = failure_domain_choices(self.instance.cause_key)


class DependencyForm(AuthoredForm):
    """A declared dependency: both ends chosen from the monitored subjects (with a search)."""

    subject = SubjectField(help_text="The subject whose failures the upstream's explain.")
    upstream = SubjectField(help_text="What it depends on (a cluster, a storage host, a site).")
    field_order = ["subject", "upstream", "comment"]

    class Meta:
        model = Dependency
        fields = ["comment"]
        widgets = {"comment": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, ct, pk in (
            ("subject", "content_type_id", "object_id"),
            ("upstream", "upstream_type_id", "upstream_id"),
        ):
            field = self.fields[name]
            field.follows = ()
            field.search_url = f"{reverse('alerts:subjects')}?field={name}"
            if getattr(self.instance, ct) and name not in self.initial:
                self.initial[name] = f"{getattr(self.instance, ct)}:{getattr(self.instance, pk)}"
            chosen = str(self[name].value() or "")
            found = scopes.find(keep=chosen)
            field.widget.choices = subject_options(found, CHOOSE_SUBJECT)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        for name, ct, pk in (
            ("subject", "content_type", "object_id"),
            ("upstream", "upstream_type", "upstream_id"),
        ):
            subject = data.get(name)
            if subject is not None:
                setattr(self.instance, ct, ContentType.objects.get_for_model(subject))
                setattr(self.instance, pk, subject.pk)
        dependency = self.instance
        if (
            data.get("subject") is not None
            and data.get("upstream") is not None
            and Dependency.objects.filter(
                content_type=dependency.content_type,
                object_id=dependency.object_id,
                upstream_type=dependency.upstream_type,
                upstream_id=dependency.upstream_id,
            )
            .exclude(pk=dependency.pk)
            .exists()
        ):
            raise forms.ValidationError("This dependency is already declared.")
        return data

    def _update_errors(self, errors: forms.ValidationError) -> None:
        # The model names its errors after its columns; the form shows them on its two lists.
        found = getattr(errors, "error_dict", {})
        for column, name in (("object_id", "subject"), ("upstream_id", "upstream")):
            if column in found:
                found.setdefault(name, []).extend(found.pop(column))
        super()._update_errors(errors)


class EscalationPolicyForm(forms.ModelForm):
    class Meta:
        model = EscalationPolicy
        fields = ["name"]
        help_texts = {"name": 'How rules and incidents name it, e.g. "Storage on call".'}


class EscalationLevelForm(forms.ModelForm):
    class Meta:
        model = EscalationLevel
        fields = ["delay_minutes", "channels"]
        widgets = {"channels": forms.CheckboxSelectMultiple}
        labels = {"delay_minutes": "After (minutes)"}

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("DELETE") and self.has_changed() and not data.get("channels"):
            self.add_error("channels", "Choose at least one channel: this level tells nobody.")
        return data


#: A policy's levels, edited on its page: three empty rows to add levels, each with a
#: "remove" box.
EscalationLevelFormSet = forms.inlineformset_factory(
    EscalationPolicy,
    EscalationLevel,
    form=EscalationLevelForm,
    extra=3,
    can_delete=True,
    min_num=1,
    validate_min=True,
)
