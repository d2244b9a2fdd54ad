"""The forms of routing rules, silences and channels. A rule's or a silence's scope is chosen
from lists with the labels the pages use (``apps.alerts.scopes``): a region, a concern, one
subject found by a search; a scope that could never match is refused as it is typed."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django import forms
from django.contrib.contenttypes.models import ContentType
from django.urls import reverse_lazy
from django.utils import timezone

from apps.regions import concerns
from apps.regions.models import Region, Subject

from . import scopes
from .models import RULE_FIELDS, Channel, Rule, Silence

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


def subject_options(found: list[scopes.Choice]) -> list[tuple[Any, Any]]:
    """``Select`` choices: "Any subject", then the subjects grouped by concern."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for c in found:
        groups.setdefault(c.concern, []).append((c.value, c.label))
    return [("", ANY_SUBJECT), *groups.items()]


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
