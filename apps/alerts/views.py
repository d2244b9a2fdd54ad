"""Incidents, a subject's history, channels, rules and silences."""

from __future__ import annotations

from django.contrib.contenttypes.models import ContentType
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from apps.regions.models import Region

from . import content, routing
from .forms import ChannelForm, RuleForm, SilenceForm
from .models import Channel, Incident, Rule, Silence, Transition


def incidents_by_region(now=None) -> list[tuple[object, list[tuple[Incident, str]]]]:
    """Open incidents grouped by region, each with its state: open, acknowledged or silenced."""
    now = now or timezone.now()
    groups: dict[int, tuple[object, list]] = {}
    shown = Incident.objects.filter(closed=None, region__in=Region.objects.shown())
    for incident in shown.select_related("region", "acknowledged_by"):
        if routing.active_silence(incident, now):
            state = "silenced"
        elif incident.acknowledged:
            state = "acknowledged"
        else:
            state = "open"
        groups.setdefault(incident.region_id, (incident.region, []))[1].append((incident, state))
    return sorted(groups.values(), key=lambda g: str(g[0]))


def incidents(request: HttpRequest) -> HttpResponse:
    template = "alerts/incidents.html#incidents" if request.htmx else "alerts/incidents.html"
    now = timezone.now()
    return render(
        request,
        template,
        {
            "groups": incidents_by_region(now),
            "transitions": Transition.objects.select_related("region")[:30],
            "silences": Silence.objects.filter(ends__gt=now)
            .select_related("region", "author")
            .order_by("starts"),
            "now": now,
        },
    )


@require_POST
def acknowledge(request: HttpRequest, pk: int) -> HttpResponse:
    Incident.objects.filter(pk=pk, closed=None, acknowledged=None).update(
        acknowledged=timezone.now(), acknowledged_by=request.user
    )
    return redirect("alerts:incidents")


def history(request: HttpRequest, content_type: int, object_id: int) -> HttpResponse:
    ct = get_object_or_404(ContentType, pk=content_type)
    transitions = Transition.objects.filter(content_type=ct, object_id=object_id)
    latest = transitions.first()
    return render(
        request,
        "alerts/history.html",
        {
            "transitions": transitions[:200],
            "label": latest.subject_label if latest else "?",
            "content_type": ct.pk,
            "object_id": object_id,
        },
    )


def channels(request: HttpRequest) -> HttpResponse:
    form = ChannelForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect("alerts:channels")
    rules = Rule.objects.prefetch_related("channels").select_related("region")
    return render(
        request,
        "alerts/channels.html",
        {"channels": Channel.objects.all(), "rules": rules, "form": form},
    )


def edit_channel(request: HttpRequest, pk: int) -> HttpResponse:
    channel = get_object_or_404(Channel, pk=pk)
    form = ChannelForm(request.POST or None, instance=channel)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect("alerts:channels")
    return render(request, "alerts/rule.html", {"form": form, "rule": channel})


def edit_rule(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    rule = get_object_or_404(Rule, pk=pk) if pk else None
    initial = {k: request.GET[k] for k in ("content_type", "object_id") if k in request.GET}
    form = RuleForm(request.POST or None, instance=rule, initial=initial)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect("alerts:channels")
    subject = _subject_label(form["content_type"].value(), form["object_id"].value())
    return render(request, "alerts/rule.html", {"form": form, "rule": rule, "subject": subject})


def new_silence(request: HttpRequest) -> HttpResponse:
    """``?content_type=&object_id=`` (the incident's and history page's links) picks a subject."""
    initial = {k: request.GET[k] for k in ("content_type", "object_id") if k in request.GET}
    form = SilenceForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        form.save(author=request.user)
        return redirect("alerts:incidents")
    subject = _subject_label(form["content_type"].value(), form["object_id"].value())
    return render(request, "alerts/silence.html", {"form": form, "subject": subject})


def _subject_label(content_type: object, object_id: object) -> str:
    if not content_type or not object_id:
        return ""
    latest = Transition.objects.filter(content_type=content_type, object_id=object_id).first()
    if latest is None:
        return f"subject {object_id}"
    return f"{content.concern_label(latest.concern)} {latest.subject_label}"


@require_POST
def expire_silence(request: HttpRequest, pk: int) -> HttpResponse:
    Silence.objects.filter(pk=pk, ends__gt=timezone.now()).update(ends=timezone.now())
    return redirect("alerts:incidents")
